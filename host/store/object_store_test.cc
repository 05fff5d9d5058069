// ObjectStore: declarations and their agreement, objects by namespace and name, snapshots that
// stay as they were taken while writes go on, and the availability of a kind.
#include "host/store/object_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace schedhost::store {
namespace {

using ::testing::HasSubstr;

const KindInfo kPodGroup{"scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", true};
const KindInfo kClass{"storage.k8s.io", "v1", "storageclasses", "StorageClass", false};

std::shared_ptr<const model::ValueNode> Tree(int64_t min_member) {
  auto root = std::make_shared<model::ValueNode>();
  root->kind = SCHEDHOST_CONFIG_TABLE;
  model::ValueNode n;
  n.kind = SCHEDHOST_CONFIG_INT;
  n.key = "minMember";
  n.int_value = min_member;
  root->children.push_back(n);
  return root;
}

int64_t MinMember(const StoredObject* o) { return o->tree->Find("minMember")->int_value; }

TEST(ObjectStoreTest, DeclarationsOfOneResourceMustAgree) {
  ObjectStore store;
  store.Declare(kPodGroup);
  store.Declare(kPodGroup);  // again: nothing changes
  EXPECT_EQ(store.Kinds().size(), 1u);
  KindInfo other = kPodGroup;
  other.version = "v1beta1";
  try {
    store.Declare(other);
    FAIL() << "a second version of one resource was accepted";
  } catch (const StoreError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalid);
    EXPECT_THAT(e.what(), HasSubstr("scheduling.x-k8s.io/v1beta1 PodGroup"));
    EXPECT_THAT(e.what(), HasSubstr("scheduling.x-k8s.io/v1alpha1 PodGroup"));
  }
  EXPECT_EQ(store.FindKind("scheduling.x-k8s.io/v1alpha1", "PodGroup")->Key(),
            "podgroups.scheduling.x-k8s.io");
  EXPECT_FALSE(store.FindKind("scheduling.x-k8s.io/v1beta1", "PodGroup"));
  EXPECT_THROW(store.Declare(KindInfo{"x.io", "", "things", "Thing", true}), StoreError);
}

TEST(ObjectStoreTest, AListOfDeclarationsIsTakenWholeOrNotAtAll) {
  ObjectStore store;
  store.Declare(kPodGroup);
  KindInfo other = kPodGroup;
  other.version = "v1beta1";
  EXPECT_THAT([&] { store.Declare(std::vector<KindInfo>{kClass, other}); },
              ::testing::ThrowsMessage<StoreError>(HasSubstr("scheduling.x-k8s.io/v1beta1")));
  KindInfo scope = kClass;
  scope.namespaced = true;  // disagrees with kClass, earlier in the same list
  EXPECT_THAT([&] { store.Declare(std::vector<KindInfo>{kClass, scope}); },
              ::testing::ThrowsMessage<StoreError>(HasSubstr("cluster-scoped")));
  EXPECT_FALSE(store.FindKey(kClass.Key())) << "a refused list declared one of its kinds";
  store.Declare(std::vector<KindInfo>{kClass, kPodGroup});
  EXPECT_EQ(store.Kinds().size(), 2u);
}

TEST(ObjectStoreTest, ObjectsAreKeptByNamespaceAndNameInOrder) {
  ObjectStore store;
  store.Declare(kPodGroup);
  const std::string key = kPodGroup.Key();
  auto a = store.Apply(key, "team-b", "gang", Tree(2));
  auto b = store.Apply(key, "team-a", "gang", Tree(3));
  auto c = store.Apply(key, "", "solo", Tree(1));  // namespaced: "" reads as "default"
  EXPECT_LT(a->resource_version, b->resource_version);
  EXPECT_EQ(c->namespace_name, "default");
  auto snapshot = store.Snapshot();
  const KindObjects* table = snapshot->Find(key);
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(MinMember(table->Get("team-a", "gang")), 3);
  EXPECT_EQ(MinMember(table->Get("team-b", "gang")), 2);
  EXPECT_EQ(table->Get("team-c", "gang"), nullptr);
  auto [first, last] = table->InNamespace("team-a");
  ASSERT_EQ(last - first, 1);
  EXPECT_EQ((*first)->namespace_name, "team-a");
  auto [all_first, all_last] = table->InNamespace("");
  std::vector<std::string> order;
  for (auto it = all_first; it != all_last; ++it) order.push_back((*it)->namespace_name);
  EXPECT_EQ(order, (std::vector<std::string>{"default", "team-a", "team-b"}));
}

TEST(ObjectStoreTest, ASnapshotStaysAsItWasTaken) {
  ObjectStore store;
  store.Declare(kPodGroup);
  const std::string key = kPodGroup.Key();
  store.Apply(key, "team-a", "gang", Tree(3));
  auto before = store.Snapshot();
  EXPECT_EQ(store.Snapshot(), before) << "no write: the same snapshot";
  store.Apply(key, "team-a", "gang", Tree(5));
  ASSERT_NE(store.Delete(key, "team-a", "gang"), nullptr);
  EXPECT_EQ(store.Delete(key, "team-a", "gang"), nullptr);
  // The reader that took `before` still sees the object as it was.
  EXPECT_EQ(MinMember(before->Find(key)->Get("team-a", "gang")), 3);
  EXPECT_EQ(store.Snapshot()->Find(key)->Get("team-a", "gang"), nullptr);
}

TEST(ObjectStoreTest, RefusesUndeclaredKindsAndMisplacedNamespaces) {
  ObjectStore store;
  store.Declare(kClass);
  try {
    store.Apply("podgroups.scheduling.x-k8s.io", "a", "b", Tree(1));
    FAIL();
  } catch (const StoreError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_THAT(e.what(), HasSubstr("no loaded plugin declares the kind podgroups.scheduling.x-k8s.io"));
  }
  EXPECT_THAT([&] { store.Apply(kClass.Key(), "team-a", "fast", Tree(1)); },
              ::testing::ThrowsMessage<StoreError>(HasSubstr("cluster-scoped")));
  EXPECT_THAT([&] { store.Apply(kClass.Key(), "", "", Tree(1)); },
              ::testing::ThrowsMessage<StoreError>(HasSubstr("metadata.name is required")));
  EXPECT_EQ(store.Apply(kClass.Key(), "", "fast", Tree(1))->namespace_name, "");
}

TEST(ObjectStoreTest, AKindCanBeMarkedUnavailableWithTheReason) {
  ObjectStore store;
  store.Declare(kPodGroup);
  std::string why;
  EXPECT_TRUE(store.Available(kPodGroup.Key(), &why));
  EXPECT_EQ(why, "");
  store.SetUnavailable(kPodGroup.Key(), "the API server does not serve it");
  EXPECT_FALSE(store.Available(kPodGroup.Key(), &why));
  EXPECT_EQ(why, "the API server does not serve it");
  EXPECT_FALSE(store.Available("elasticquotas.scheduling.x-k8s.io", &why));
  EXPECT_THAT(why, HasSubstr("no loaded plugin declares"));
}

}  // namespace
}  // namespace schedhost::store
