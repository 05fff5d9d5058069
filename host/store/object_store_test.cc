// ObjectStore: declarations and their agreement, objects by namespace and name, snapshots that
// stay as they were taken while writes go on, and the availability of a kind.
#include "host/store/object_store.h"

#include "host/model/decode.h"

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

TEST(ObjectStoreTest, WatchersSeeEveryChangeInOrderWithTheStateBefore) {
  ObjectStore store;
  store.Declare(kPodGroup);
  std::vector<std::string> seen;
  const uint64_t id = store.Watch([&](const ObjectEvent& e) {
    EXPECT_EQ(e.kind, "PodGroup");
    std::string line = std::string(ToString(e.type)) + " " + e.key + " " +
                       e.object->namespace_name + "/" + e.object->name + " " +
                       std::to_string(MinMember(e.object.get())) + " rv" +
                       std::to_string(e.resource_version);
    if (e.old_object) line += " was " + std::to_string(MinMember(e.old_object.get()));
    seen.push_back(line);
  });
  store.Apply(kPodGroup.Key(), "a", "g", Tree(2));
  store.Apply(kPodGroup.Key(), "a", "g", Tree(3));
  store.Delete(kPodGroup.Key(), "a", "g");
  store.Apply(kPodGroup.Key(), "a", "h", Tree(4));
  store.Apply(kPodGroup.Key(), "b", "h", Tree(5));
  store.Clear(kPodGroup.Key());
  EXPECT_THAT(seen, ::testing::ElementsAre(
                        "ADDED podgroups.scheduling.x-k8s.io a/g 2 rv1",
                        "MODIFIED podgroups.scheduling.x-k8s.io a/g 3 rv2 was 2",
                        "DELETED podgroups.scheduling.x-k8s.io a/g 3 rv3 was 3",
                        "ADDED podgroups.scheduling.x-k8s.io a/h 4 rv4",
                        "ADDED podgroups.scheduling.x-k8s.io b/h 5 rv5",
                        "DELETED podgroups.scheduling.x-k8s.io a/h 4 rv6 was 4",
                        "DELETED podgroups.scheduling.x-k8s.io b/h 5 rv7 was 5"));
  EXPECT_EQ(store.resource_version(), 7u);
  EXPECT_EQ(store.Snapshot()->Find(kPodGroup.Key())->items().size(), 0u);
  EXPECT_TRUE(store.Unwatch(id));
  EXPECT_FALSE(store.Unwatch(id));
  store.Apply(kPodGroup.Key(), "a", "g", Tree(6));
  EXPECT_EQ(seen.size(), 7u);
}

TEST(ObjectStoreTest, AWriteInsideACallbackIsDeliveredAfterIt) {
  ObjectStore store;
  store.Declare(kPodGroup);
  std::vector<std::string> order;
  store.Watch([&](const ObjectEvent& e) {
    order.push_back("first " + e.object->name);
    if (e.object->name == "g") store.Apply(kPodGroup.Key(), "a", "echo", Tree(1));
  });
  store.Watch([&](const ObjectEvent& e) { order.push_back("second " + e.object->name); });
  store.Apply(kPodGroup.Key(), "a", "g", Tree(1));
  EXPECT_THAT(order, ::testing::ElementsAre("first g", "second g", "first echo", "second echo"));
}

TEST(ObjectStoreTest, AStampedObjectKeepsItsUidAndDeletesCheckIt) {
  ObjectStore store;
  store.Declare(kPodGroup);
  const auto created = store.Apply(kPodGroup.Key(), "a", "g", Tree(1), ObjectWrite{.stamp = true});
  ASSERT_EQ(created->uid.size(), 36u);
  EXPECT_EQ(model::MetadataString(*created->tree, "uid"), created->uid);
  const auto updated = store.Apply(kPodGroup.Key(), "a", "g", Tree(2), ObjectWrite{.stamp = true});
  EXPECT_EQ(updated->uid, created->uid);
  EXPECT_THROW(store.Delete(kPodGroup.Key(), "a", "g", "another-uid"), StoreError);
  EXPECT_NE(store.Delete(kPodGroup.Key(), "a", "g", created->uid), nullptr);
}

TEST(ObjectStoreTest, AStampedCreateSetsItsOwnTimeUnlessToldToKeepTheGivenOne) {
  ObjectStore store;
  store.Declare(kPodGroup);
  auto given = std::make_shared<model::ValueNode>(*Tree(1));
  model::SetMetadataString(*given, "creationTimestamp", "2020-01-02T03:04:05Z");
  const auto stamped = store.Apply(kPodGroup.Key(), "a", "g", given, ObjectWrite{.stamp = true});
  EXPECT_NE(model::MetadataString(*stamped->tree, "creationTimestamp"), "2020-01-02T03:04:05Z");
  const auto kept = store.Apply(kPodGroup.Key(), "a", "h", given,
                                ObjectWrite{.stamp = true, .keep_creation_timestamp = true});
  EXPECT_EQ(model::MetadataString(*kept->tree, "creationTimestamp"), "2020-01-02T03:04:05Z");
  EXPECT_FALSE(model::MetadataString(*kept->tree, "resourceVersion").empty());
  // An update keeps the stored time, whatever the new tree says.
  auto later = std::make_shared<model::ValueNode>(*Tree(2));
  model::SetMetadataString(*later, "creationTimestamp", "2030-01-01T00:00:00Z");
  const auto updated = store.Apply(kPodGroup.Key(), "a", "h", later,
                                   ObjectWrite{.stamp = true, .keep_creation_timestamp = true});
  EXPECT_EQ(model::MetadataString(*updated->tree, "creationTimestamp"), "2020-01-02T03:04:05Z");
}

TEST(ObjectStoreTest, UndeclareForgetsTheKindAndItsObjects) {
  ObjectStore store;
  store.Declare(kPodGroup);
  store.Apply(kPodGroup.Key(), "a", "g", Tree(1));
  EXPECT_TRUE(store.Undeclare(kPodGroup.Key()));
  EXPECT_FALSE(store.Undeclare(kPodGroup.Key()));
  EXPECT_EQ(store.Snapshot()->Find(kPodGroup.Key()), nullptr);
  EXPECT_FALSE(store.FindKey(kPodGroup.Key()));
  store.Declare(kPodGroup);
  EXPECT_EQ(store.Snapshot()->Find(kPodGroup.Key())->items().size(), 0u);
}

}  // namespace
}  // namespace schedhost::store
