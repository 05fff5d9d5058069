// Documents of kinds the model does not type, kept as value trees when the caller asks for them:
// JSON's types from YAML scalars, Lists, the object named in every node, and the errors that
// still apply (no name, malformed maps); without the option they are refused as before.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "host/model/decode.h"

namespace schedhost::model {
namespace {

using ::testing::HasSubstr;

const ValueNode* At(const ValueNode& root, std::initializer_list<std::string_view> path) {
  const ValueNode* n = &root;
  for (std::string_view key : path) {
    n = n->Find(key);
    if (n == nullptr) return nullptr;
  }
  return n;
}

TEST(DecodeGenericTest, KeepsUntypedKindsAsTreesWithJsonTypes) {
  std::vector<GenericObject> generic;
  const auto typed = DecodeManifests(R"(apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: gang, namespace: team-a}
spec:
  minMember: 3
  scheduleTimeoutSeconds: 10
  ratio: 0.5
  quoted: "3"
  enabled: true
  nothing: null
  minResources: {cpu: "2"}
  list: [a, 1, ~]
---
apiVersion: v1
kind: List
items:
- apiVersion: x.io/v1
  kind: Thing
  metadata: {name: cluster-wide}
)",
                                     "t.yaml", {}, &generic);
  ASSERT_EQ(typed.size(), 1u);
  ASSERT_EQ(generic.size(), 2u);
  const GenericObject& pg = generic[0];
  EXPECT_EQ(pg.api_version, "scheduling.x-k8s.io/v1alpha1");
  EXPECT_EQ(pg.kind, "PodGroup");
  EXPECT_EQ(pg.namespace_name, "team-a");
  EXPECT_EQ(pg.name, "gang");
  EXPECT_EQ(pg.source, "t.yaml");
  EXPECT_EQ(pg.document, 2);
  EXPECT_EQ(pg.Describe(), "PodGroup team-a/gang");
  const ValueNode& root = *pg.tree;
  EXPECT_EQ(At(root, {"spec", "minMember"})->kind, SCHEDHOST_CONFIG_INT);
  EXPECT_EQ(At(root, {"spec", "minMember"})->int_value, 3);
  EXPECT_EQ(At(root, {"spec", "ratio"})->kind, SCHEDHOST_CONFIG_FLOAT);
  EXPECT_DOUBLE_EQ(At(root, {"spec", "ratio"})->float_value, 0.5);
  EXPECT_EQ(At(root, {"spec", "quoted"})->kind, SCHEDHOST_CONFIG_STRING);
  EXPECT_EQ(At(root, {"spec", "enabled"})->kind, SCHEDHOST_CONFIG_BOOL);
  EXPECT_EQ(At(root, {"spec", "nothing"}), nullptr) << "null is no value";
  EXPECT_EQ(At(root, {"spec", "minResources", "cpu"})->string_value, "2");
  const ValueNode* list = At(root, {"spec", "list"});
  ASSERT_EQ(list->children.size(), 3u) << "arrays keep their indexes";
  EXPECT_EQ(list->children[1].kind, SCHEDHOST_CONFIG_INT);
  EXPECT_EQ(list->children[2].kind, SCHEDHOST_CONFIG_NONE);
  EXPECT_EQ(At(root, {"spec", "minMember"})->location, "PodGroup team-a/gang");
  EXPECT_EQ(generic[1].Describe(), "Thing cluster-wide");
  EXPECT_EQ(generic[1].document, 3);
}

TEST(DecodeGenericTest, StillRefusesWhatCannotBeAnObject) {
  std::vector<GenericObject> generic;
  EXPECT_THAT([&] { DecodeManifests("apiVersion: x.io/v1\nkind: Thing\nmetadata: {}\n", "t.yaml", {}, &generic); },
              ::testing::ThrowsMessage<DecodeError>(HasSubstr("metadata.name: required")));
  EXPECT_THAT([&] { DecodeManifests("kind: Thing\nmetadata: {name: a}\n", "t.yaml", {}, &generic); },
              ::testing::ThrowsMessage<DecodeError>(
                  HasSubstr("apiVersion: required (kind \"Thing\" is not built in")));
  EXPECT_THAT([&] { DecodeManifests("apiVersion: x.io/v1\nkind: Thing\nmetadata: {name: a}\nspec: {a: 1, a: 2}\n", "t.yaml", {}, &generic); },
              ::testing::ThrowsMessage<DecodeError>(HasSubstr("spec")));
  EXPECT_TRUE(generic.empty());
  // Without the option, an untyped kind is refused as before.
  EXPECT_THAT([] { DecodeManifests("apiVersion: x.io/v1\nkind: Thing\nmetadata: {name: a}\n", "t.yaml"); },
              ::testing::ThrowsMessage<DecodeError>(HasSubstr("unsupported kind \"Thing\"")));
}

// The storage kinds volume scheduling reads are checked as the API server checks them, naming
// the object and the field, and a StorageClass gets the API server's default binding mode.
TEST(DecodeGenericTest, StorageObjectsAreCheckedAndDefaultedAsTheApiServerDoes) {
  const auto refused = [](const std::string& yaml) {
    std::vector<GenericObject> generic;
    try {
      DecodeManifests(yaml, "s.yaml", {}, &generic);
    } catch (const DecodeError& e) {
      EXPECT_TRUE(generic.empty());
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(refused("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, "
                      "namespace: team}\nspec: {resources: {requests: {storage: lots}}}\n"),
              HasSubstr("(PersistentVolumeClaim team/data): spec.resources.requests.storage: "
                        "invalid quantity \"lots\""));
  EXPECT_THAT(refused("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\n"
                      "spec: {accessModes: [ReadWriteSometimes]}\n"),
              HasSubstr("spec.accessModes[0]: unsupported value \"ReadWriteSometimes\""));
  EXPECT_THAT(refused("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv}\nspec:\n"
                      "  capacity: {storage: 1Gi}\n  nodeAffinity: {required: {nodeSelectorTerms: "
                      "[{matchExpressions: [{key: zone, operator: Near, values: [a]}]}]}}\n"),
              HasSubstr("(PersistentVolume pv): spec.nodeAffinity.required.nodeSelectorTerms[0]."
                        "matchExpressions[0].operator: unsupported value \"Near\""));
  EXPECT_THAT(refused("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv}\nspec:\n"
                      "  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: "
                      "[{key: zone, operator: In}]}]}}\n"),
              HasSubstr("values: must be specified when `operator` is 'In' or 'NotIn'"));
  EXPECT_THAT(refused("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: sc}\n"
                      "provisioner: x\nvolumeBindingMode: Eventually\n"),
              HasSubstr("(StorageClass sc): volumeBindingMode: unsupported value \"Eventually\""));
  EXPECT_THAT(refused("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: sc}\n"),
              HasSubstr("(StorageClass sc): provisioner: Required value"));
  // Another group's kind of the same name is not the host's to check.
  EXPECT_EQ(refused("apiVersion: example.com/v1\nkind: StorageClass\nmetadata: {name: sc}\n"),
            "accepted");

  std::vector<GenericObject> generic;
  DecodeManifests("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: sc}\n"
                  "provisioner: x\n",
                  "s.yaml", {}, &generic);
  ASSERT_EQ(generic.size(), 1u);
  const ValueNode* mode = generic[0].tree->Find("volumeBindingMode");
  ASSERT_NE(mode, nullptr);
  EXPECT_EQ(mode->string_value, "Immediate");
  EXPECT_EQ(mode->location, "StorageClass sc");
}

TEST(DecodeGenericTest, ConvertsApiServerJson) {
  const ValueNode root = ValueTreeFromJson(
      R"({"metadata":{"name":"gang","namespace":"team-a","uid":null},"spec":{"minMember":3,"ratio":1.5,"big":18446744073709551615,"tags":["a",null]}})",
      "PodGroup team-a/gang");
  EXPECT_EQ(At(root, {"metadata", "uid"}), nullptr);
  EXPECT_EQ(At(root, {"spec", "minMember"})->int_value, 3);
  EXPECT_EQ(At(root, {"spec", "ratio"})->kind, SCHEDHOST_CONFIG_FLOAT);
  EXPECT_EQ(At(root, {"spec", "big"})->kind, SCHEDHOST_CONFIG_FLOAT);
  EXPECT_EQ(At(root, {"spec", "tags"})->children.size(), 2u);
  EXPECT_EQ(At(root, {"spec"})->location, "PodGroup team-a/gang");
}

}  // namespace
}  // namespace schedhost::model
