// Store basics: create / update / delete / get / list, resource versions, optimistic
// concurrency, validation errors and sized limits.
#include "host/store/store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/store/store_test_util.h"

namespace schedhost::store {
namespace {

using testing::Bare;
using testing::ClassData;
using testing::ErrorOf;
using ::testing::HasSubstr;
using testing::NodeData;
using testing::PdbData;
using testing::PodData;

TEST(StoreTest, CreateGetListDelete) {
  Store store(Bare());
  auto n1 = store.Create(NodeData("n1"));
  auto pod = store.Create(PodData("web", ""));  // namespace defaults to "default"
  store.Create(PodData("api", "prod"));
  store.Create(PdbData("budget"));

  EXPECT_EQ(pod->namespace_name(), "default");
  EXPECT_FALSE(pod->uid().empty());
  EXPECT_GT(pod->creation_timestamp_ns(), 0);
  EXPECT_EQ(store.Get<model::Pod>("default", "web"), pod);
  EXPECT_EQ(store.Get<model::Pod>("", "web"), pod);
  EXPECT_EQ(store.Get<model::Pod>("prod", "web"), nullptr);
  EXPECT_EQ(store.Get<model::Node>("ignored", "n1"), n1);
  EXPECT_EQ(store.Count(Kind::kPod), 2u);
  EXPECT_EQ(store.Count(Kind::kPodDisruptionBudget), 1u);

  auto pods = store.List<model::Pod>();
  ASSERT_EQ(pods.size(), 2u);  // sorted by key: default/web < prod/api
  EXPECT_EQ(pods[0]->name(), "web");
  EXPECT_EQ(pods[1]->name(), "api");
  auto prod =
      store.List<model::Pod>([](const model::Pod& p) { return p.namespace_name() == "prod"; });
  ASSERT_EQ(prod.size(), 1u);
  EXPECT_EQ(prod[0]->name(), "api");

  auto gone = store.Delete<model::Pod>("default", "web");
  EXPECT_EQ(gone, pod);
  EXPECT_EQ(store.Get<model::Pod>("default", "web"), nullptr);
  StoreError again = ErrorOf([&] { store.Delete<model::Pod>("default", "web"); });
  EXPECT_EQ(again.code(), ErrorCode::kNotFound);
  EXPECT_STREQ(again.what(), "Pod default/web not found");
}

TEST(StoreTest, ListsByNamespaceThenNameAndFindsReplacedObjects) {
  // The tables order by (namespace, name), as kubectl lists do: "a" comes before "a-b" although
  // the key text "a-b/x" sorts before "a/x".
  Store store(Bare());
  store.Create(PodData("x", "a-b"));
  store.Create(PodData("y", "a"));
  store.Create(PodData("x", "a"));
  store.Create(NodeData("n2"));
  store.Create(NodeData("n1"));
  std::vector<std::string> keys;
  for (const auto& p : store.List<model::Pod>()) keys.push_back(KeyOf(p));
  EXPECT_EQ(keys, (std::vector<std::string>{"a/x", "a/y", "a-b/x"}));
  auto nodes = store.List<model::Node>();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0]->name(), "n1");

  // An object replaced in place (update, bind) is the one found and listed afterwards.
  model::PodData changed = store.Get<model::Pod>("a", "y")->data();
  changed.metadata.labels = {{"v", "2"}};
  auto updated = store.Update(std::move(changed));
  auto bound = store.Bind("a", "x", "", 0, "n1");
  EXPECT_EQ(store.Get<model::Pod>("a", "y"), updated);
  EXPECT_EQ(store.Get<model::Pod>("a", "x"), bound);
  EXPECT_EQ(store.Get<model::Pod>("a-b", "x")->node_name(), "");
  auto pods = store.List<model::Pod>();
  ASSERT_EQ(pods.size(), 3u);
  EXPECT_EQ(pods[0], bound);
  EXPECT_EQ(pods[1], updated);
  EXPECT_EQ(store.Count(Kind::kPod), 3u);
  StoreError twice = ErrorOf([&] { store.Create(PodData("x", "a")); });
  EXPECT_EQ(twice.code(), ErrorCode::kAlreadyExists);
}

TEST(StoreTest, KeepsAGivenUidAndRefusesDuplicates) {
  Store store(Bare());
  model::PodData d = PodData("web");
  d.metadata.uid = "uid-web";
  EXPECT_EQ(store.Create(d)->uid(), "uid-web");
  StoreError e = ErrorOf([&] { store.Create(d); });
  EXPECT_EQ(e.code(), ErrorCode::kAlreadyExists);
  EXPECT_STREQ(e.what(), "Pod default/web already exists");
  EXPECT_EQ(store.resource_version(), 1u);  // the refused create used no version
}

TEST(StoreTest, ResourceVersionsAreStoreWideAndIncreasing) {
  Store store(Bare());
  std::vector<uint64_t> rvs;
  rvs.push_back(store.Create(NodeData("n1"))->resource_version());
  rvs.push_back(store.Create(PodData("a"))->resource_version());
  rvs.push_back(store.Create(ClassData("high", 100))->resource_version());
  rvs.push_back(store.Update(NodeData("n1"))->resource_version());
  store.Delete<model::Pod>("default", "a");
  rvs.push_back(store.Create(PdbData("b"))->resource_version());
  EXPECT_EQ(rvs, (std::vector<uint64_t>{1, 2, 3, 4, 6}));  // the delete took 5
  EXPECT_EQ(store.resource_version(), 6u);
}

TEST(StoreTest, SeedsTheSystemPriorityClasses) {
  Store store;
  auto node_critical = store.Get<model::PriorityClass>("", "system-node-critical");
  auto cluster_critical = store.Get<model::PriorityClass>("", "system-cluster-critical");
  ASSERT_NE(node_critical, nullptr);
  ASSERT_NE(cluster_critical, nullptr);
  EXPECT_EQ(node_critical->value(), 2'000'001'000);
  EXPECT_EQ(cluster_critical->value(), 2'000'000'000);
  EXPECT_EQ(store.resource_version(), 2u);
}

TEST(StoreTest, UpdateChecksTheVersionItRead) {
  Store store(Bare());
  auto v1 = store.Create(NodeData("n1"));
  model::NodeData d = v1->data();
  d.spec.unschedulable = true;
  auto v2 = store.Update(d);  // carries v1's resource version: accepted
  EXPECT_TRUE(v2->data().spec.unschedulable);
  EXPECT_EQ(v2->uid(), v1->uid());
  EXPECT_EQ(v2->creation_timestamp_ns(), v1->creation_timestamp_ns());
  EXPECT_GT(v2->resource_version(), v1->resource_version());

  d.spec.unschedulable = false;  // still v1's version: stale now
  StoreError e = ErrorOf([&] { store.Update(d); });
  EXPECT_EQ(e.code(), ErrorCode::kConflict);
  EXPECT_THAT(e.what(), HasSubstr("Node n1: resource version 1 is stale (current 2)"));
  EXPECT_TRUE(store.Get<model::Node>("", "n1")->data().spec.unschedulable);

  d.metadata.resource_version = 0;  // unconditional
  EXPECT_FALSE(store.Update(d)->data().spec.unschedulable);
}

TEST(StoreTest, UpdateRefusesAnotherUidAndMissingObjects) {
  Store store(Bare());
  store.Create(NodeData("n1"));
  model::NodeData d = NodeData("n1");
  d.metadata.uid = "other";
  EXPECT_EQ(ErrorOf([&] { store.Update(d); }).code(), ErrorCode::kConflict);
  EXPECT_EQ(ErrorOf([&] { store.Update(NodeData("n2")); }).code(), ErrorCode::kNotFound);
}

TEST(StoreTest, DeletePreconditions) {
  Store store(Bare());
  auto pod = store.Create(PodData("web"));
  StoreError wrong_uid = ErrorOf([&] { store.Delete<model::Pod>("default", "web", {"nope", 0}); });
  EXPECT_EQ(wrong_uid.code(), ErrorCode::kConflict);
  EXPECT_THAT(wrong_uid.what(), HasSubstr("uid is " + std::string(pod->uid())));
  EXPECT_EQ(ErrorOf([&] {
              store.Delete<model::Pod>("default", "web", {"", 99});
            }).code(),
            ErrorCode::kConflict);
  EXPECT_NE(store.Get<model::Pod>("default", "web"), nullptr);
  store.Delete<model::Pod>("default", "web", {std::string(pod->uid()), pod->resource_version()});
  EXPECT_EQ(store.Count(Kind::kPod), 0u);
}

TEST(StoreTest, InvalidObjectsAreRefusedWithTheFieldAndChangeNothing) {
  Store store(Bare());
  model::PodData no_containers = PodData("web");
  no_containers.spec.containers.clear();
  model::NodeData bad_name = NodeData("Bad_Name");
  model::PodData bad_ns = PodData("web", "Prod!");

  struct Case {
    const char* name;
    std::function<void()> write;
    const char* message;
  };
  std::vector<Case> cases = {
      {"no containers", [&] { store.Create(no_containers); }, "Pod default/web: spec.containers"},
      {"node name", [&] { store.Create(bad_name); }, "Node Bad_Name: metadata.name"},
      {"namespace", [&] { store.Create(bad_ns); }, "Pod Prod!/web: metadata.namespace"},
      {"no name", [&] { store.Create(NodeData("")); }, "metadata.name: required"},
  };
  for (const Case& c : cases) {
    StoreError e = ErrorOf(c.write);
    EXPECT_EQ(e.code(), ErrorCode::kInvalid) << c.name;
    EXPECT_THAT(e.what(), HasSubstr(c.message)) << c.name;
  }
  EXPECT_EQ(store.resource_version(), 0u);
}

TEST(StoreTest, ObjectLimitPerKind) {
  Store::Limits limits = Bare();
  limits.max_objects_per_kind = 2;
  Store store(limits);
  store.Create(NodeData("n1"));
  store.Create(NodeData("n2"));
  store.Create(PodData("p1"));  // another kind has its own count
  StoreError e = ErrorOf([&] { store.Create(NodeData("n3")); });
  EXPECT_EQ(e.code(), ErrorCode::kLimitExceeded);
  EXPECT_THAT(e.what(), HasSubstr("maximum of 2 Node objects"));
  store.Delete<model::Node>("", "n1");
  EXPECT_NO_THROW(store.Create(NodeData("n3")));
}

TEST(StoreTest, ZeroLimitsAreRefused) {
  Store::Limits limits;
  limits.event_log_length = 0;
  EXPECT_EQ(ErrorOf([&] { Store store(limits); }).code(), ErrorCode::kInvalid);
}

TEST(StoreTest, ObjectEntryPointsDispatchOnTheKind) {
  Store store(Bare());
  model::Object node = model::Node::Make(NodeData("n1"));
  model::Object stored = store.CreateObject(node);
  EXPECT_EQ(KindOf(stored), Kind::kNode);
  EXPECT_EQ(Describe(stored), "Node n1");
  EXPECT_EQ(VersionOf(stored), 1u);
  EXPECT_EQ(VersionOf(store.UpdateObject(stored)), 2u);
  model::Object deleted = store.DeleteObject(Kind::kNode, "", "n1");
  EXPECT_EQ(KeyOf(deleted), "n1");
  EXPECT_EQ(store.Count(Kind::kNode), 0u);
  EXPECT_EQ(ObjectKey(Kind::kPodDisruptionBudget, "", "b"), "default/b");
  EXPECT_EQ(ToString(ErrorCode::kConflict), "Conflict");
}

}  // namespace
}  // namespace schedhost::store

namespace schedhost::store {
namespace {

using testing::Bare;
using testing::ErrorOf;

model::NamespaceData NamespaceData(const std::string& name, model::Labels labels = {}) {
  model::NamespaceData d;
  d.metadata.name = name;
  d.metadata.labels = std::move(labels);
  return d;
}

TEST(StoreNamespaceTest, CrudAndWatch) {
  Store store(Bare());
  std::vector<std::string> seen;
  store.Watch(0, [&](const Event& e) {
    seen.push_back(std::string(ToString(e.type)) + " " + Describe(e.object));
  });
  auto ns = store.Create(NamespaceData("team-a", {{"team", "a"}}));
  EXPECT_EQ(ns->name(), "team-a");
  EXPECT_EQ(ns->namespace_name(), "") << "cluster-scoped";
  EXPECT_NE(model::FindLabel(ns->metadata().labels, model::kNamespaceNameLabel), nullptr);
  EXPECT_EQ(store.Get<model::Namespace>("ignored", "team-a"), ns);
  EXPECT_EQ(store.Count(Kind::kNamespace), 1u);
  EXPECT_EQ(ErrorOf([&] { store.Create(NamespaceData("team-a")); }).code(),
            ErrorCode::kAlreadyExists);

  auto updated = store.Update(NamespaceData("team-a", {{"team", "b"}}));
  EXPECT_EQ(updated->uid(), ns->uid());
  EXPECT_EQ(*model::FindLabel(updated->metadata().labels, "team"), "b");
  EXPECT_EQ(store.List<model::Namespace>().size(), 1u);

  // Pods need no Namespace object (the host keeps no namespace lifecycle).
  store.Create(testing::PodData("web", "elsewhere"));

  EXPECT_EQ(store.DeleteObject(Kind::kNamespace, "", "team-a"), model::Object(updated));
  EXPECT_EQ(store.Get<model::Namespace>("", "team-a"), nullptr);
  EXPECT_EQ(seen, (std::vector<std::string>{"ADDED Namespace team-a", "MODIFIED Namespace team-a",
                                            "ADDED Pod elsewhere/web",
                                            "DELETED Namespace team-a"}));
}

TEST(StoreNamespaceTest, RefusesInvalidNames) {
  Store store(Bare());
  StoreError e = ErrorOf([&] { store.Create(NamespaceData("Not.A.Label")); });
  EXPECT_EQ(e.code(), ErrorCode::kInvalid);
  EXPECT_NE(std::string(e.what()).find("Namespace Not.A.Label: metadata.name"), std::string::npos)
      << e.what();
  EXPECT_EQ(store.Count(Kind::kNamespace), 0u);
}

}  // namespace
}  // namespace schedhost::store

namespace schedhost::store {
namespace {

using testing::Bare;
using testing::ErrorOf;
using testing::PodData;

// Mirror writes keep the API's uid, skip admission, and report a re-created object (another
// uid under the same key) as DELETED then ADDED.
TEST(StoreMirrorTest, KeepsTheUidAndReportsReCreation) {
  Store store(Bare());
  std::vector<std::pair<EventType, std::string>> seen;
  store.Watch(store.resource_version(), [&](const Event& e) {
    seen.emplace_back(e.type, std::string(UidOf(e.object)));
  });
  model::PodData pod = PodData("web");
  pod.metadata.uid = "api-uid-1";
  pod.spec.priority = 7;  // as admitted by the API server; no PriorityClass needed here
  auto stored = store.MirrorApply(pod);
  EXPECT_EQ(stored->uid(), "api-uid-1");
  EXPECT_EQ(stored->priority(), 7);
  pod.metadata.labels.emplace_back("v", "2");
  store.MirrorApply(pod);
  pod.metadata.uid = "api-uid-2";
  store.MirrorApply(pod);
  EXPECT_TRUE(store.MirrorDelete(Kind::kPod, "default", "web"));
  EXPECT_FALSE(store.MirrorDelete(Kind::kPod, "default", "web"));
  const std::vector<std::pair<EventType, std::string>> want = {
      {EventType::kAdded, "api-uid-1"},    {EventType::kModified, "api-uid-1"},
      {EventType::kDeleted, "api-uid-1"},  {EventType::kAdded, "api-uid-2"},
      {EventType::kDeleted, "api-uid-2"}};
  EXPECT_EQ(seen, want);
  model::PodData anonymous = PodData("x");
  anonymous.metadata.uid.clear();
  EXPECT_EQ(ErrorOf([&] { store.MirrorApply(anonymous); }).code(), ErrorCode::kInvalid);
}

}  // namespace
}  // namespace schedhost::store
