// KindsOf: the API kinds a descriptor declares (abi 1.5), read only within its struct_size, and
// every malformed declaration refused with the plugin and the declaration named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "host/framework/framework.h"

namespace schedhost::framework {
namespace {

using ::testing::HasSubstr;

schedhost_str S(std::string_view s) { return {s.data(), s.size()}; }

schedhost_kind_decl Decl(std::string_view group, std::string_view version,
                         std::string_view resource, std::string_view kind, int32_t scope) {
  schedhost_kind_decl d{};
  d.struct_size = sizeof d;
  d.group = S(group);
  d.version = S(version);
  d.resource = S(resource);
  d.kind = S(kind);
  d.scope = scope;
  d.label_selector = S("");
  d.field_selector = S("");
  return d;
}

std::string Refusal(const schedhost_kind_decl& decl) {
  const schedhost_kind_decl* kinds[] = {&decl};
  schedhost_plugin_descriptor d{};
  d.struct_size = sizeof d;
  d.kinds = kinds;
  d.kinds_len = 1;
  try {
    KindsOf(d, "plugin \"P\"");
  } catch (const FrameworkError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(DeclaredKindsTest, ReadsTheDeclarations) {
  const schedhost_kind_decl pg =
      Decl("scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", SCHEDHOST_KIND_NAMESPACED);
  const schedhost_kind_decl pv = Decl("", "v1", "persistentvolumes", "PersistentVolume",
                                      SCHEDHOST_KIND_CLUSTER);
  const schedhost_kind_decl* kinds[] = {&pg, &pv};
  schedhost_plugin_descriptor d{};
  d.struct_size = sizeof d;
  d.kinds = kinds;
  d.kinds_len = 2;
  const std::vector<store::KindInfo> out = KindsOf(d, "plugin \"P\"");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].Key(), "podgroups.scheduling.x-k8s.io");
  EXPECT_EQ(out[0].ApiVersion(), "scheduling.x-k8s.io/v1alpha1");
  EXPECT_TRUE(out[0].namespaced);
  EXPECT_EQ(out[1].Key(), "persistentvolumes");
  EXPECT_EQ(out[1].ApiVersion(), "v1");
  EXPECT_FALSE(out[1].namespaced);
}

TEST(DeclaredKindsTest, ADescriptorBeforeAbi15DeclaresNothing) {
  schedhost_plugin_descriptor d{};
  d.struct_size = offsetof(schedhost_plugin_descriptor, kinds);
  d.kinds_len = 3;  // beyond struct_size: not part of the descriptor
  EXPECT_TRUE(KindsOf(d, "plugin \"Old\"").empty());
}

TEST(DeclaredKindsTest, RefusesMalformedDeclarations) {
  const int32_t ns = SCHEDHOST_KIND_NAMESPACED;
  EXPECT_THAT(Refusal(Decl("x.io", "", "things", "Thing", ns)),
              HasSubstr("plugin \"P\": declared kind #0 (x.io/ Thing): version, resource and "
                        "kind are required"));
  EXPECT_THAT(Refusal(Decl("x.io", "v1", "Things", "Thing", ns)),
              HasSubstr("resource \"Things\" is not a lower-case plural name"));
  EXPECT_THAT(Refusal(Decl("X_IO", "v1", "things", "Thing", ns)),
              HasSubstr("group \"X_IO\" is not a DNS subdomain"));
  EXPECT_THAT(Refusal(Decl("x.io", "v1", "things", "Thing", 7)),
              HasSubstr("scope 7 is neither"));
  schedhost_kind_decl selected = Decl("x.io", "v1", "things", "Thing", ns);
  selected.label_selector = S("team=a");
  EXPECT_THAT(Refusal(selected), HasSubstr("does not support label or field selectors"));
  EXPECT_THAT(Refusal(Decl("", "v1", "pods", "Pod", ns)), HasSubstr("are typed by the host"));
  schedhost_kind_decl small = Decl("x.io", "v1", "things", "Thing", ns);
  small.struct_size = offsetof(schedhost_kind_decl, label_selector);
  EXPECT_THAT(Refusal(small), HasSubstr("smaller than the abi 1.5 declaration"));

  schedhost_plugin_descriptor d{};
  d.struct_size = sizeof d;
  d.kinds_len = 1;
  EXPECT_THAT([&] { KindsOf(d, "plugin \"P\""); },
              ::testing::ThrowsMessage<FrameworkError>(HasSubstr("its kinds array is NULL")));
  const schedhost_kind_decl* none[] = {nullptr};
  d.kinds = none;
  EXPECT_THAT([&] { KindsOf(d, "plugin \"P\""); },
              ::testing::ThrowsMessage<FrameworkError>(HasSubstr("declared kind #0 is NULL")));
}

}  // namespace
}  // namespace schedhost::framework
