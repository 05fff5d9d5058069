#include "host/model/box.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>

#include "host/model/pod.h"

namespace schedhost::model {
namespace {

TEST(BoxTest, EmptyByDefaultAndFromNullopt) {
  Box<std::string> a;
  EXPECT_FALSE(a.has_value());
  EXPECT_FALSE(a);
  Box<std::string> b = std::nullopt;
  EXPECT_FALSE(b.has_value());
  Box<std::string> c = std::optional<std::string>();
  EXPECT_FALSE(c.has_value());
  EXPECT_THROW((void)a.value(), std::bad_optional_access);
}

TEST(BoxTest, CopiesAreDeepAndIndependent) {
  Box<std::string> a = std::string("zone-a");
  Box<std::string> b = a;
  ASSERT_TRUE(b.has_value());
  EXPECT_NE(&*a, &*b);
  *b = "zone-b";
  EXPECT_EQ(*a, "zone-a");
  EXPECT_EQ(*b, "zone-b");
  a = b;
  EXPECT_EQ(*a, "zone-b");
  EXPECT_NE(&*a, &*b);
  Box<std::string> empty;
  a = empty;
  EXPECT_FALSE(a.has_value());
  EXPECT_TRUE(b.has_value());
}

TEST(BoxTest, MovesTransferAndEmplaceResetReplace) {
  Box<std::string> a = std::optional<std::string>("x");
  const std::string* held = &*a;
  Box<std::string> b = std::move(a);
  EXPECT_EQ(&*b, held) << "a move takes the pointer, not a copy";
  b.emplace(3, 'y');
  EXPECT_EQ(b.value(), "yyy");
  EXPECT_EQ(b->size(), 3u);
  b = std::nullopt;
  EXPECT_FALSE(b);
  b.emplace("z");
  b.reset();
  EXPECT_FALSE(b.has_value());
}

// A pod without affinity pays one pointer for it; with it, copies of the data keep their own.
TEST(BoxTest, PodAffinityIsAPointerWideAndCopiesWithTheSpec) {
  EXPECT_EQ(sizeof(PodSpec::affinity), sizeof(void*));
  PodSpec spec;
  EXPECT_FALSE(spec.affinity.has_value());
  spec.affinity.emplace().pod_anti_affinity.emplace().required.emplace_back().topology_key =
      "kubernetes.io/hostname";
  PodSpec copy = spec;
  copy.affinity->pod_anti_affinity->required[0].topology_key = "topology.kubernetes.io/zone";
  EXPECT_EQ(spec.affinity->pod_anti_affinity->required[0].topology_key, "kubernetes.io/hostname");
}

}  // namespace
}  // namespace schedhost::model
