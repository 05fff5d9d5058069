// Namespace objects: decoding from manifests, the kubernetes.io/metadata.name label the API
// server adds, interned labels for plugins, and validation of the name.
#include "host/model/namespace.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/model/decode.h"
#include "host/model/interner.h"

namespace schedhost::model {
namespace {

std::shared_ptr<const Namespace> DecodeOne(const std::string& yaml) {
  auto objects = DecodeManifests(yaml, "test");
  if (objects.size() != 1) return nullptr;
  auto* ns = std::get_if<std::shared_ptr<const Namespace>>(&objects[0]);
  return ns == nullptr ? nullptr : *ns;
}

std::string LabelValue(const Namespace& ns, std::string_view key) {
  const schedhost_id id = Interner::Global().Lookup(key);
  for (size_t i = 0; i < ns.labels().len; ++i) {
    if (ns.labels().items[i].key == id) {
      return std::string(Interner::Global().Str(ns.labels().items[i].value));
    }
  }
  return "<absent>";
}

TEST(NamespaceTest, DecodesNameAndLabels) {
  auto ns = DecodeOne(
      "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a, labels: {team: a, tier: "
      "gold}}\nspec: {finalizers: [kubernetes]}\n");
  ASSERT_NE(ns, nullptr);
  EXPECT_EQ(ns->name(), "team-a");
  EXPECT_EQ(ns->name_id(), Interner::Global().Lookup("team-a"));
  EXPECT_EQ(LabelValue(*ns, "team"), "a");
  EXPECT_EQ(LabelValue(*ns, "tier"), "gold");
  // upstream: the API server labels every namespace with its name.
  EXPECT_EQ(LabelValue(*ns, kNamespaceNameLabel), "team-a");
  EXPECT_EQ(ns->labels().len, 3u);
  for (size_t i = 1; i < ns->labels().len; ++i) {
    EXPECT_LT(ns->labels().items[i - 1].key, ns->labels().items[i].key) << "sorted by key id";
  }
}

TEST(NamespaceTest, NameLabelCannotBeFaked) {
  auto ns = DecodeOne(
      "apiVersion: v1\nkind: Namespace\nmetadata: {name: real, labels: "
      "{kubernetes.io/metadata.name: fake}}\n");
  ASSERT_NE(ns, nullptr);
  EXPECT_EQ(LabelValue(*ns, kNamespaceNameLabel), "real");
  EXPECT_EQ(ns->labels().len, 1u);
}

TEST(NamespaceTest, InsideAList) {
  auto objects = DecodeManifests(
      "apiVersion: v1\nkind: NamespaceList\nitems:\n- {apiVersion: v1, kind: Namespace, "
      "metadata: {name: a}}\n- {apiVersion: v1, kind: Namespace, metadata: {name: b}}\n",
      "test");
  ASSERT_EQ(objects.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<std::shared_ptr<const Namespace>>(objects[1]));
}

TEST(NamespaceTest, RefusesInvalidNames) {
  // upstream: namespace names are RFC 1123 labels (no dots, at most 63 characters).
  for (const std::string& name : std::vector<std::string>{"Team", "a.b", std::string(64, 'a')}) {
    try {
      DecodeOne("apiVersion: v1\nkind: Namespace\nmetadata: {name: \"" + name + "\"}\n");
      ADD_FAILURE() << name << " was accepted";
    } catch (const DecodeError& e) {
      EXPECT_NE(std::string(e.what()).find("metadata.name"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(DecodeOne("apiVersion: v1\nkind: Namespace\nmetadata: {labels: {a: b}}\n"),
               DecodeError);
  EXPECT_THROW(DecodeOne("apiVersion: v1\nkind: Namespace\nmetadata: {name: a, labels: {\"b "
                         "c\": d}}\n"),
               DecodeError);
}

}  // namespace
}  // namespace schedhost::model
