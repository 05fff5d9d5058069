// Cache: assume / confirm / forget, node removal with pods left, pod updates, and the
// incremental snapshot (only changed nodes copied, removed nodes dropped, zone order).
#include "host/cache/cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace schedhost::cache {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::shared_ptr<const model::Node> MakeNode(const std::string& name, const std::string& zone = "",
                                            const std::vector<std::string>& images = {}) {
  model::NodeData d;
  d.metadata.name = name;
  if (!zone.empty()) d.metadata.labels = {{"topology.kubernetes.io/zone", zone}};
  for (const auto& image : images) d.status.images.push_back({{image}, 1000});
  d.status.allocatable = {{"cpu", *model::Quantity::Parse("4")},
                          {"memory", *model::Quantity::Parse("8Gi")}};
  return model::Node::Make(std::move(d));
}

std::shared_ptr<const model::Pod> MakePod(const std::string& name, const std::string& node,
                                          const std::string& cpu = "500m", bool anti = false) {
  model::PodData d;
  d.metadata.name = name;
  d.metadata.namespace_name = "default";
  d.metadata.uid = "uid-" + name;
  d.spec.node_name = node;
  model::Container c;
  c.name = "app";
  c.image = "nginx";
  c.resources.requests = {{"cpu", *model::Quantity::Parse(cpu)}};
  d.spec.containers.push_back(c);
  if (anti) {
    model::Affinity affinity;
    model::PodAffinityTerm term;
    term.topology_key = "kubernetes.io/hostname";
    term.label_selector = model::LabelSelector{{{"app", "x"}}, {}};
    affinity.pod_anti_affinity.emplace();
    affinity.pod_anti_affinity->required.push_back(term);
    d.spec.affinity = affinity;
  }
  return model::Pod::Make(std::move(d));
}

std::shared_ptr<const model::Pod> WithNode(const std::shared_ptr<const model::Pod>& pod,
                                           const std::string& node) {
  model::PodData d = pod->data();
  d.spec.node_name = node;
  d.metadata.resource_version += 1;
  return model::Pod::Make(std::move(d));
}

int64_t Cpu(const Cache& cache, const std::string& node) {
  auto info = cache.NodeInfoCopy(node);
  return info ? info->Requested(SCHEDHOST_ID_CPU) : -1;
}

std::vector<std::string> Names(const Snapshot& snap) {
  std::vector<std::string> out;
  for (size_t i = 0; i < snap.size(); ++i) out.push_back(snap.at(i).node()->name());
  return out;
}

TEST(CacheTest, AssumeConfirmCountsRequestsOnce) {
  Cache cache;
  cache.AddNode(MakeNode("n1"));
  auto pod = MakePod("a", "n1");
  cache.AssumePod(pod);
  EXPECT_TRUE(cache.IsAssumed("uid-a"));
  EXPECT_EQ(Cpu(cache, "n1"), 500);
  EXPECT_TRUE(cache.FinishBinding("uid-a"));

  cache.AddPod(WithNode(pod, "n1"));  // the store reports it bound: confirmed, not added again
  EXPECT_FALSE(cache.IsAssumed("uid-a"));
  EXPECT_FALSE(cache.FinishBinding("uid-a"));
  EXPECT_EQ(Cpu(cache, "n1"), 500);
  EXPECT_EQ(cache.NodeInfoCopy("n1")->pods().size(), 1u);
  EXPECT_EQ(cache.GetPod("uid-a")->resource_version(), 1u);
  EXPECT_EQ(cache.PodCount(), 1u);
}

TEST(CacheTest, ConfirmOnAnotherNodeMovesThePod) {
  Cache cache;
  cache.AddNode(MakeNode("n1"));
  cache.AddNode(MakeNode("n2"));
  auto pod = MakePod("a", "n1");
  cache.AssumePod(pod);
  cache.AddPod(WithNode(pod, "n2"));
  EXPECT_EQ(Cpu(cache, "n1"), 0);
  EXPECT_EQ(Cpu(cache, "n2"), 500);
}

TEST(CacheTest, ForgetRemovesTheAssumedPod) {
  Cache cache;
  cache.AddNode(MakeNode("n1"));
  cache.AssumePod(MakePod("a", "n1"));
  cache.ForgetPod("uid-a");
  EXPECT_EQ(Cpu(cache, "n1"), 0);
  EXPECT_EQ(cache.PodCount(), 0u);
  EXPECT_FALSE(cache.IsAssumed("uid-a"));
}

TEST(CacheTest, RefusesCallsThatDoNotFitThePodState) {
  Cache cache;
  cache.AddNode(MakeNode("n1"));
  cache.AssumePod(MakePod("a", "n1"));
  cache.AddPod(MakePod("b", "n1"));
  struct Case {
    const char* name;
    std::function<void()> call;
    const char* message;
  };
  std::vector<Case> cases = {
      {"assume twice", [&] { cache.AssumePod(MakePod("a", "n1")); },
       "already in the cache (assumed"},
      {"assume a bound pod", [&] { cache.AssumePod(MakePod("b", "n1")); }, "(bound on n1)"},
      {"assume without node", [&] { cache.AssumePod(MakePod("c", "")); }, "has no spec.nodeName"},
      {"forget unknown", [&] { cache.ForgetPod("uid-zzz"); }, "cannot be forgotten"},
      {"forget bound", [&] { cache.ForgetPod("uid-b"); }, "use RemovePod"},
      {"add twice", [&] { cache.AddPod(MakePod("b", "n1")); }, "already added"},
      {"add unbound", [&] { cache.AddPod(MakePod("c", "")); }, "is not bound"},
      {"update unknown", [&] { cache.UpdatePod(MakePod("c", "n1")); }, "cannot be updated"},
      {"update assumed", [&] { cache.UpdatePod(MakePod("a", "n1")); }, "is assumed"},
      {"remove unknown", [&] { cache.RemovePod("uid-zzz"); }, "cannot be removed"},
      {"remove unknown node", [&] { cache.RemoveNode("n9"); }, "node n9 is not in the cache"},
  };
  for (const Case& c : cases) {
    try {
      c.call();
      ADD_FAILURE() << c.name << ": no error";
    } catch (const CacheError& e) {
      EXPECT_THAT(e.what(), HasSubstr(c.message)) << c.name;
    }
  }
  EXPECT_EQ(cache.PodCount(), 2u);
  EXPECT_EQ(Cpu(cache, "n1"), 1000);
}

TEST(CacheTest, UpdatePodMovesResources) {
  Cache cache;
  cache.AddNode(MakeNode("n1"));
  cache.AddNode(MakeNode("n2"));
  cache.AddPod(MakePod("a", "n1", "500m"));
  cache.UpdatePod(MakePod("a", "n1", "1500m"));  // resized in place
  EXPECT_EQ(Cpu(cache, "n1"), 1500);
  cache.UpdatePod(MakePod("a", "n2", "1"));  // reported on another node
  EXPECT_EQ(Cpu(cache, "n1"), 0);
  EXPECT_EQ(Cpu(cache, "n2"), 1000);
  cache.RemovePod("uid-a");
  EXPECT_EQ(Cpu(cache, "n2"), 0);
}

TEST(CacheTest, RemovedNodeKeepsItsPodsUntilTheyGo) {
  Cache cache;
  cache.AddNode(MakeNode("n1"));
  cache.AddNode(MakeNode("n2"));
  cache.AddPod(MakePod("a", "n1"));
  Snapshot snap;
  cache.UpdateSnapshot(snap);
  ASSERT_EQ(snap.size(), 2u);

  cache.RemoveNode("n1");
  EXPECT_EQ(cache.NodeCount(), 1u);
  auto info = cache.NodeInfoCopy("n1");
  ASSERT_NE(info, nullptr);  // node-less, still holding its pod
  EXPECT_EQ(info->node(), nullptr);
  EXPECT_EQ(info->Requested(SCHEDHOST_ID_CPU), 500);
  EXPECT_THROW(cache.RemoveNode("n1"), CacheError);
  ASSERT_EQ(cache.Dump().nodeless, std::vector<std::string>{"n1"});

  SnapshotUpdate r = cache.UpdateSnapshot(snap);
  EXPECT_EQ(r.removed, 1u);
  EXPECT_THAT(Names(snap), ElementsAre("n2"));
  EXPECT_EQ(snap.Get("n1"), nullptr);

  cache.RemovePod("uid-a");  // the last pod goes: so does the node-less info
  EXPECT_EQ(cache.NodeInfoCopy("n1"), nullptr);
  cache.AddPod(MakePod("b", "n3"));  // a pod may arrive before its node
  EXPECT_EQ(cache.NodeCount(), 1u);
  cache.AddNode(MakeNode("n3"));
  EXPECT_EQ(Cpu(cache, "n3"), 500);
  cache.UpdateSnapshot(snap);
  EXPECT_THAT(Names(snap), ElementsAre("n2", "n3"));
  EXPECT_EQ(snap.Get("n3")->view()->pods_len, 1u);
}

TEST(CacheSnapshotTest, CopiesOnlyChangedNodes) {
  Cache cache;
  for (int i = 0; i < 100; ++i) cache.AddNode(MakeNode("n" + std::to_string(i)));
  Snapshot snap;
  SnapshotUpdate first = cache.UpdateSnapshot(snap);
  EXPECT_EQ(first.copied, 100u);
  EXPECT_TRUE(first.lists_rebuilt);
  ASSERT_EQ(snap.size(), 100u);
  const schedhost_node_info_view* n7_view = snap.Get("n7")->view();

  SnapshotUpdate idle = cache.UpdateSnapshot(snap);
  EXPECT_EQ(idle.copied, 0u);
  EXPECT_FALSE(idle.lists_rebuilt);

  cache.AddPod(MakePod("a", "n7"));
  cache.AssumePod(MakePod("b", "n42"));
  cache.UpdateNode(MakeNode("n99"));
  SnapshotUpdate three = cache.UpdateSnapshot(snap);
  EXPECT_EQ(three.copied, 3u);
  EXPECT_EQ(three.removed, 0u);
  EXPECT_FALSE(three.lists_rebuilt);
  EXPECT_FALSE(three.images_rebuilt);
  EXPECT_EQ(snap.Get("n7")->view(), n7_view);  // updated in place: the view keeps its address
  EXPECT_EQ(n7_view->pods_len, 1u);
  EXPECT_EQ(snap.Get("n42")->Requested(SCHEDHOST_ID_CPU), 500);
  EXPECT_EQ(snap.Get("n7")->generation(), cache.NodeInfoCopy("n7")->generation());
  EXPECT_EQ(snap.generation(), cache.NodeInfoCopy("n99")->generation());

  cache.ForgetPod("uid-b");
  EXPECT_EQ(cache.UpdateSnapshot(snap).copied, 1u);
  EXPECT_EQ(snap.Get("n42")->Requested(SCHEDHOST_ID_CPU), 0);
}

TEST(CacheSnapshotTest, DeletedNodesLeaveTheSnapshot) {
  Cache cache;
  for (const char* n : {"a", "b", "c"}) cache.AddNode(MakeNode(n));
  Snapshot snap;
  cache.UpdateSnapshot(snap);
  cache.RemoveNode("b");
  SnapshotUpdate r = cache.UpdateSnapshot(snap);
  EXPECT_EQ(r.removed, 1u);
  EXPECT_EQ(r.copied, 0u);
  EXPECT_TRUE(r.lists_rebuilt);
  EXPECT_THAT(Names(snap), ElementsAre("a", "c"));
  EXPECT_EQ(snap.views().size(), 2u);
  EXPECT_EQ(snap.views()[1], snap.Get("c")->view());

  cache.RemoveNode("c");  // removed and another added between two updates: same count
  cache.AddNode(MakeNode("d"));
  r = cache.UpdateSnapshot(snap);
  EXPECT_EQ(r.copied, 1u);
  EXPECT_EQ(r.removed, 1u);
  EXPECT_THAT(Names(snap), ElementsAre("a", "d"));
  EXPECT_EQ(snap.Get("c"), nullptr);
}

TEST(CacheSnapshotTest, AffinityListsFollowTheirPods) {
  Cache cache;
  cache.AddNode(MakeNode("n1"));
  cache.AddNode(MakeNode("n2"));
  Snapshot snap;
  cache.UpdateSnapshot(snap);
  EXPECT_TRUE(snap.have_pods_with_required_anti_affinity().empty());
  cache.AddPod(MakePod("a", "n2", "100m", /*anti=*/true));
  cache.UpdateSnapshot(snap);
  ASSERT_EQ(snap.have_pods_with_required_anti_affinity().size(), 1u);
  EXPECT_EQ(snap.have_pods_with_required_anti_affinity()[0], snap.Get("n2")->view());
  EXPECT_EQ(snap.have_pods_with_affinity().size(), 1u);
  cache.RemovePod("uid-a");
  cache.UpdateSnapshot(snap);
  EXPECT_TRUE(snap.have_pods_with_required_anti_affinity().empty());
  EXPECT_TRUE(snap.have_pods_with_affinity().empty());
}

TEST(CacheSnapshotTest, NodesInterleaveAcrossZones) {
  Cache cache;
  cache.AddNode(MakeNode("a1", "zone-a"));
  cache.AddNode(MakeNode("a2", "zone-a"));
  cache.AddNode(MakeNode("a3", "zone-a"));
  cache.AddNode(MakeNode("b1", "zone-b"));
  cache.AddNode(MakeNode("plain"));
  Snapshot snap;
  cache.UpdateSnapshot(snap);
  EXPECT_THAT(Names(snap), ElementsAre("a1", "b1", "plain", "a2", "a3"));
  cache.UpdateNode(MakeNode("a1", "zone-b"));  // relabelled into another zone
  EXPECT_TRUE(cache.UpdateSnapshot(snap).copied == 1u);
  // Order follows the tree only when lists are rebuilt; a new node triggers that.
  cache.AddNode(MakeNode("c1", "zone-c"));
  cache.UpdateSnapshot(snap);
  EXPECT_THAT(Names(snap), ElementsAre("a2", "b1", "plain", "c1", "a3", "a1"));
}

TEST(CacheSnapshotTest, ImageSummariesFollowNodeChanges) {
  Cache cache;
  cache.AddNode(MakeNode("n1", "", {"nginx:1.25"}));
  cache.AddNode(MakeNode("n2", "", {"nginx:1.25", "redis"}));
  Snapshot snap;
  cache.UpdateSnapshot(snap);
  auto states = [&](const std::string& node) {
    const schedhost_node_info_view* v = snap.Get(node)->view();
    std::vector<std::string> out;
    for (size_t i = 0; i < v->image_states_len; ++i) {
      out.push_back(std::string(v->image_states[i].name.data, v->image_states[i].name.len) + "*" +
                    std::to_string(v->image_states[i].num_nodes));
    }
    return out;
  };
  EXPECT_THAT(states("n1"), ElementsAre("nginx:1.25*2"));
  cache.AddPod(MakePod("a", "n1"));  // pods do not touch images: states survive the copy
  EXPECT_FALSE(cache.UpdateSnapshot(snap).images_rebuilt);
  EXPECT_THAT(states("n1"), ElementsAre("nginx:1.25*2"));
  cache.UpdateNode(MakeNode("n1", "", {"redis"}));
  EXPECT_TRUE(cache.UpdateSnapshot(snap).images_rebuilt);
  EXPECT_THAT(states("n1"), ElementsAre("redis*2"));
  EXPECT_THAT(states("n2"), ElementsAre("nginx:1.25*1", "redis*2"));
}

TEST(CacheSnapshotTest, ASnapshotFromElsewhereIsRebuiltWhole) {
  Cache cache;
  cache.AddNode(MakeNode("n1"));
  cache.AddNode(MakeNode("n2"));
  auto snap = Snapshot::Build({MakeNode("n1"), MakeNode("x")}, {});
  SnapshotUpdate r = cache.UpdateSnapshot(*snap);
  EXPECT_THAT(Names(*snap), ElementsAre("n1", "n2"));
  EXPECT_EQ(r.removed, 1u);
  Cache other;
  other.AddNode(MakeNode("z"));
  other.UpdateSnapshot(*snap);  // generations from another cache: copies all it has
  EXPECT_THAT(Names(*snap), ElementsAre("z"));
}

// Writers mutate the cache while one thread updates a snapshot between "cycles" and reads it;
// every copied node info must be internally consistent (each pod requests 500m).
TEST(CacheConcurrentTest, WritersAndSnapshotUpdates) {
  Cache cache;
  constexpr int kNodes = 20;
  constexpr int kThreads = 3;
  constexpr int kPods = 300;
  for (int i = 0; i < kNodes; ++i) cache.AddNode(MakeNode("n" + std::to_string(i)));
  std::atomic<int> finished{0};
  std::vector<std::thread> writers;
  writers.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kPods; ++i) {
        auto pod = MakePod("p" + std::to_string(t) + "-" + std::to_string(i),
                           "n" + std::to_string((i * 7 + t) % kNodes));
        cache.AssumePod(pod);
        if (i % 3 == 0) {
          cache.ForgetPod(pod->uid());
        } else {
          cache.AddPod(pod);
        }
      }
      finished.fetch_add(1);
    });
  }
  Snapshot snap;
  auto check = [&] {
    int64_t total = 0;
    for (const auto* v : snap.views()) {
      const NodeInfo* info = NodeInfo::FromView(v);
      EXPECT_EQ(info->Requested(SCHEDHOST_ID_CPU), 500 * static_cast<int64_t>(v->pods_len));
      total += static_cast<int64_t>(v->pods_len);
    }
    return total;
  };
  int rounds = 0;
  while (finished.load() < kThreads) {
    cache.UpdateSnapshot(snap);
    check();
    ++rounds;
  }
  for (auto& w : writers) w.join();
  cache.UpdateSnapshot(snap);
  EXPECT_EQ(check(), kThreads * kPods * 2 / 3);
  EXPECT_EQ(cache.PodCount(), static_cast<size_t>(kThreads * kPods * 2 / 3));
  EXPECT_GT(rounds, 0);
}

}  // namespace
}  // namespace schedhost::cache

namespace schedhost::cache {
namespace {

std::shared_ptr<const model::Namespace> MakeNamespace(const std::string& name,
                                                      const std::string& team) {
  model::NamespaceData d;
  d.metadata.name = name;
  d.metadata.labels = {{"team", team}};
  return model::Namespace::Make(std::move(d));
}

TEST(CacheNamespaceTest, SnapshotsSeeNamespacesAfterUpdate) {
  Cache cache;
  Snapshot snap;
  auto a = MakeNamespace("ns-a", "x");
  cache.SetNamespace(a);
  EXPECT_EQ(snap.GetNamespace(a->name_id()), nullptr) << "not before UpdateSnapshot";
  cache.UpdateSnapshot(snap);
  EXPECT_EQ(snap.GetNamespace(a->name_id()), a.get());

  // A replaced object reaches the next snapshot; the one a cycle holds stays valid meanwhile.
  auto a2 = MakeNamespace("ns-a", "y");
  cache.SetNamespace(a2);
  EXPECT_EQ(snap.GetNamespace(a->name_id()), a.get());
  cache.UpdateSnapshot(snap);
  EXPECT_EQ(snap.GetNamespace(a->name_id()), a2.get());

  cache.RemoveNamespace("ns-a");
  cache.RemoveNamespace("never-seen");
  cache.UpdateSnapshot(snap);
  EXPECT_EQ(snap.GetNamespace(a->name_id()), nullptr);
}

}  // namespace
}  // namespace schedhost::cache
