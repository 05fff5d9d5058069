#include "host/cache/node_info.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "host/cache/snapshot.h"
#include "host/model/decode.h"

namespace schedhost::cache {
namespace {

template <class T>
std::shared_ptr<const T> One(std::string_view yaml) {
  for (auto& o : model::DecodeManifests(yaml, "test")) {
    if (auto* p = std::get_if<std::shared_ptr<const T>>(&o)) return *p;
  }
  throw std::runtime_error("no object");
}

std::shared_ptr<const model::Node> NodeNamed(const std::string& name,
                                             const std::string& images = "") {
  return One<model::Node>("apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
                          "}\nstatus:\n  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"10\"}\n" +
                          images);
}

std::shared_ptr<const model::Pod> PodOn(const std::string& name, const std::string& node,
                                        const std::string& extra = "") {
  return One<model::Pod>("apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", uid: uid-" +
                         name + "}\nspec:\n  nodeName: " + node +
                         "\n  containers:\n  - name: c\n    image: nginx\n    resources: "
                         "{requests: {cpu: 500m, memory: 1Gi}}\n"
                         "    ports: [{containerPort: 80, hostPort: 8080}]\n" +
                         extra);
}

int64_t AllocatableOf(const schedhost_node_view* v, schedhost_id id) {
  for (size_t i = 0; i < v->allocatable.len; ++i) {
    if (v->allocatable.items[i].name == id) return v->allocatable.items[i].value;
  }
  return 0;
}

TEST(NodeInfoTest, AddAndRemovePodsKeepAggregatesAndView) {
  NodeInfo ni(NodeNamed("n1"));
  uint64_t g0 = ni.generation();
  ni.AddPod(PodOn("a", "n1"));
  ni.AddPod(PodOn(
      "b", "n1",
      "  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
      "      - labelSelector: {matchLabels: {app: x}}\n        topologyKey: "
      "kubernetes.io/hostname\n"));
  EXPECT_GT(ni.generation(), g0);
  EXPECT_EQ(ni.Requested(SCHEDHOST_ID_CPU), 1000);
  EXPECT_EQ(ni.Requested(SCHEDHOST_ID_MEMORY), 2LL << 30);
  const schedhost_node_info_view* v = ni.view();
  EXPECT_EQ(v->pods_len, 2u);
  EXPECT_EQ(v->used_ports_len, 2u);
  EXPECT_EQ(v->used_ports[0].port, 8080);
  EXPECT_EQ(v->pods_with_affinity_len, 1u);
  EXPECT_EQ(v->pods_with_required_anti_affinity_len, 1u);
  EXPECT_EQ(v->non_zero_requested_milli_cpu, 1000);
  EXPECT_EQ(NodeInfo::FromView(v), &ni);

  uint64_t g1 = ni.generation();
  EXPECT_TRUE(ni.RemovePod("uid-b"));
  EXPECT_FALSE(ni.RemovePod("uid-b"));
  EXPECT_GT(ni.generation(), g1);
  EXPECT_EQ(ni.Requested(SCHEDHOST_ID_CPU), 500);
  EXPECT_EQ(ni.view()->pods_len, 1u);
  EXPECT_EQ(ni.view()->pods_with_affinity_len, 0u);
  EXPECT_EQ(ni.view()->used_ports_len, 1u);
}

TEST(NodeInfoTest, RemovePodsTakesSeveralByAddressOrUidAndRecomputesOnce) {
  NodeInfo ni(NodeNamed("n1"));
  auto a = PodOn("a", "n1");
  auto b = PodOn("b", "n1");
  auto c = PodOn("c", "n1");
  ni.AddPod(a);
  ni.AddPod(b);
  ni.AddPod(c);
  const uint64_t g = ni.generation();
  // b by address; a second decoding of c (another object, same uid) by uid; one not here.
  const std::vector<std::shared_ptr<const model::Pod>> gone = {b, PodOn("c", "n1"),
                                                               PodOn("z", "n1")};
  EXPECT_EQ(ni.RemovePods(gone), 2u);
  EXPECT_GT(ni.generation(), g);
  ASSERT_EQ(ni.pods().size(), 1u);
  EXPECT_EQ(ni.pods()[0], a);
  EXPECT_EQ(ni.Requested(SCHEDHOST_ID_CPU), 500);
  EXPECT_EQ(ni.view()->pods_len, 1u);
  EXPECT_EQ(ni.view()->used_ports_len, 1u);
  const uint64_t g2 = ni.generation();
  EXPECT_EQ(ni.RemovePods(gone), 0u);
  EXPECT_EQ(ni.generation(), g2) << "nothing removed, nothing changed";
  EXPECT_TRUE(ni.RemovePod(*a));
  EXPECT_EQ(ni.view()->pods_len, 0u);
}

TEST(NodeInfoTest, ScratchCopiesAreIndependentAndClearedAfterUse) {
  NodeInfo ni(NodeNamed("n1"));
  auto a = PodOn("a", "n1");
  ni.AddPod(a);
  std::weak_ptr<const model::Pod> extra_seen;
  {
    ScratchCopy outer(ni);
    EXPECT_NE(&*outer, &ni);
    EXPECT_EQ(outer->view()->pods_len, 1u);
    auto extra = PodOn("x", "n1");
    extra_seen = extra;
    outer->AddPod(std::move(extra));
    {
      ScratchCopy inner(*outer);  // nested: another buffer
      EXPECT_NE(&*inner, &*outer);
      EXPECT_EQ(inner->view()->pods_len, 2u);
      EXPECT_TRUE(inner->RemovePod(*a));
      EXPECT_EQ(inner->view()->pods_len, 1u);
    }
    EXPECT_EQ(outer->view()->pods_len, 2u) << "the inner copy did not touch the outer one";
    EXPECT_EQ(NodeInfo::FromView(outer->view()), &*outer);
  }
  EXPECT_EQ(ni.view()->pods_len, 1u) << "the source is untouched";
  EXPECT_TRUE(extra_seen.expired()) << "a finished scratch copy keeps no pod alive";
  // More nested copies than the thread keeps buffers for still work.
  std::vector<std::unique_ptr<ScratchCopy>> many;
  for (int i = 0; i < 6; ++i) many.push_back(std::make_unique<ScratchCopy>(ni));
  for (const auto& c : many) EXPECT_EQ((*c)->view()->pods_len, 1u);
}

TEST(NodeInfoTest, CopyHasItsOwnView) {
  auto copy = std::make_unique<NodeInfo>(NodeNamed("n1"));
  copy->AddPod(PodOn("a", "n1"));
  NodeInfo other(*copy);
  copy.reset();  // the copy's view must not point into the original
  EXPECT_EQ(other.view()->pods_len, 1u);
  EXPECT_EQ(other.view()->requested.items[0].value,
            other.Requested(other.view()->requested.items[0].name));
  EXPECT_EQ(NodeInfo::FromView(other.view()), &other);
}

// The view's node is a copy kept inside the NodeInfo, next to its view, with the allocatable
// resources beside it; it says what the node's own view says, converts back to the node, and
// follows the node when it is replaced and the NodeInfo when it is copied.
TEST(NodeInfoTest, TheNodeViewAndItsAllocatableLiveInTheNodeInfosBlock) {
  const auto node = NodeNamed("n1");
  NodeInfo ni(node);
  ni.AddPod(PodOn("a", "n1"));
  const auto* block = reinterpret_cast<const char*>(ni.view());
  const auto in_block = [&](const void* p, size_t bytes) {
    const auto* c = static_cast<const char*>(p);
    return c >= block && c + bytes <= block + NodeInfo::ViewPrefetchBytes();
  };
  const schedhost_node_view* v = ni.view()->node;
  ASSERT_NE(v, nullptr);
  EXPECT_NE(v, node->view());
  EXPECT_TRUE(in_block(v, sizeof *v));
  ASSERT_EQ(v->allocatable.len, 3u);  // cpu, memory, pods
  EXPECT_TRUE(in_block(v->allocatable.items, 3 * sizeof(schedhost_resource)));
  const auto own = node->allocatable();
  EXPECT_TRUE(std::equal(own.begin(), own.end(), v->allocatable.items,
                         [](const schedhost_resource& a, const schedhost_resource& b) {
                           return a.name == b.name && a.value == b.value;
                         }));
  EXPECT_EQ(v->name_id, node->name_id());
  EXPECT_EQ(v->labels.items, node->view()->labels.items);  // the rest stays in the node
  EXPECT_EQ(model::Node::FromView(v), node.get());

  // A new node object (its allocatable changed) shows through the same NodeInfo.
  const auto bigger = One<model::Node>(
      "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: {cpu: \"8\", "
      "memory: 8Gi, pods: \"10\", example.com/gpu: \"2\"}\n");
  ni.SetNode(bigger);
  v = ni.view()->node;
  EXPECT_TRUE(in_block(v, sizeof *v));
  EXPECT_EQ(model::Node::FromView(v), bigger.get());
  EXPECT_EQ(v->allocatable.len, 4u);
  EXPECT_EQ(AllocatableOf(v, SCHEDHOST_ID_CPU), 8000);

  // A copy's node view is its own, and outlives the original.
  auto copy = std::make_unique<NodeInfo>(ni);
  EXPECT_NE(copy->view()->node, v);
  ni.SetNode(node);
  EXPECT_EQ(model::Node::FromView(copy->view()->node), bigger.get());
  EXPECT_EQ(AllocatableOf(copy->view()->node, SCHEDHOST_ID_CPU), 8000);
  EXPECT_EQ(AllocatableOf(ni.view()->node, SCHEDHOST_ID_CPU), 4000);
  copy.reset();
  EXPECT_EQ(model::Node::FromView(ni.view()->node), node.get());

  NodeInfo empty;
  EXPECT_EQ(empty.view()->node, nullptr);
}

TEST(NodeInfoTest, FewRequestedResourcesLiveRightAfterTheView) {
  NodeInfo ni(NodeNamed("n1"));
  ni.AddPod(PodOn("a", "n1"));  // cpu, memory (and the pod count)
  const auto* view = reinterpret_cast<const char*>(ni.view());
  const auto* items = reinterpret_cast<const char*>(ni.view()->requested.items);
  const size_t bytes = ni.view()->requested.len * sizeof(schedhost_resource);
  ASSERT_LE(ni.view()->requested.len, NodeInfo::kInlineResources);
  // What a Filter loop prefetches from the view on covers the requested array.
  EXPECT_GE(items, view + sizeof(schedhost_node_info_view));
  EXPECT_LE(items + bytes, view + NodeInfo::ViewPrefetchBytes());

  // More resources than fit inline move to the heap and stay correct.
  NodeInfo big(NodeNamed("n2"));
  big.AddPod(PodOn("b", "n2",
                   "  overhead: {example.com/a: \"1\", example.com/b: \"2\", example.com/c: \"3\", "
                   "example.com/d: \"4\"}\n"));
  EXPECT_GT(big.view()->requested.len, NodeInfo::kInlineResources);
  EXPECT_EQ(big.Requested(SCHEDHOST_ID_CPU), 500);
  NodeInfo copy(big);
  EXPECT_EQ(copy.view()->requested.len, big.view()->requested.len);
  EXPECT_NE(copy.view()->requested.items, big.view()->requested.items);
  EXPECT_EQ(copy.Requested(SCHEDHOST_ID_CPU), 500);
}

// ExpectSummaryMatches checks a view's summary (abi 1.3) against the view, the node's view and
// their arrays, the data it copies.
void ExpectSummaryMatches(const NodeInfo& ni) {
  const schedhost_node_info_view* v = ni.view();
  const schedhost_node_summary& s = v->summary;
  ASSERT_NE(s.flags & SCHEDHOST_NODE_SUMMARY_VALID, 0u);
  EXPECT_EQ(s.requested_milli_cpu, ni.Requested(SCHEDHOST_ID_CPU));
  EXPECT_EQ(s.requested_memory, ni.Requested(SCHEDHOST_ID_MEMORY));
  EXPECT_EQ(s.non_zero_requested_milli_cpu, v->non_zero_requested_milli_cpu);
  EXPECT_EQ(s.non_zero_requested_memory, v->non_zero_requested_memory);
  EXPECT_EQ(s.pods_len, v->pods_len);
  EXPECT_EQ(s.image_states_len, v->image_states_len);
  const schedhost_node_view* n = v->node;
  EXPECT_EQ((s.flags & SCHEDHOST_NODE_SUMMARY_HAS_NODE) != 0, n != nullptr);
  if (n == nullptr) {
    EXPECT_EQ(s.flags, static_cast<uint32_t>(SCHEDHOST_NODE_SUMMARY_VALID));
    EXPECT_EQ(s.name_id, SCHEDHOST_ID_EMPTY);
    EXPECT_EQ(s.allocatable_milli_cpu, 0);
    return;
  }
  EXPECT_EQ((s.flags & SCHEDHOST_NODE_SUMMARY_UNSCHEDULABLE) != 0, n->unschedulable != 0);
  EXPECT_EQ(s.name_id, n->name_id);
  EXPECT_EQ(s.taints_len, n->taints_len);
  EXPECT_EQ(s.allocatable_milli_cpu, AllocatableOf(n, SCHEDHOST_ID_CPU));
  EXPECT_EQ(s.allocatable_memory, AllocatableOf(n, SCHEDHOST_ID_MEMORY));
  EXPECT_EQ(s.allocatable_pods, AllocatableOf(n, SCHEDHOST_ID_PODS));
  EXPECT_EQ(s.reserved0, 0u);
}

// The summary follows every change of the NodeInfo: pods added and removed, a new node object
// (cordoned, tainted, other allocatable), copies, Clear, image states, and no node at all.
TEST(NodeInfoTest, TheSummaryFollowsTheViewThroughEveryChange) {
  NodeInfo ni(NodeNamed("n1"));
  ExpectSummaryMatches(ni);
  EXPECT_EQ(ni.view()->summary.allocatable_milli_cpu, 4000);
  EXPECT_EQ(ni.view()->summary.allocatable_pods, 10);
  EXPECT_EQ(ni.view()->summary.flags,
            static_cast<uint32_t>(SCHEDHOST_NODE_SUMMARY_VALID | SCHEDHOST_NODE_SUMMARY_HAS_NODE));

  ni.AddPod(PodOn("a", "n1"));
  ni.AddPod(PodOn("b", "n1", "  overhead: {example.com/gpu: \"1\"}\n"));
  ExpectSummaryMatches(ni);
  EXPECT_EQ(ni.view()->summary.requested_milli_cpu, 1000);
  EXPECT_EQ(ni.view()->summary.requested_memory, 2LL << 30);
  EXPECT_EQ(ni.view()->summary.pods_len, 2u);

  EXPECT_TRUE(ni.RemovePod("uid-a"));
  ExpectSummaryMatches(ni);
  EXPECT_EQ(ni.view()->summary.requested_milli_cpu, 500);

  ni.SetNode(One<model::Node>(
      "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec:\n  unschedulable: true\n"
      "  taints: [{key: a, value: b, effect: NoSchedule}, {key: c, effect: PreferNoSchedule}]\n"
      "status:\n  allocatable: {cpu: \"8\", memory: 16Gi}\n"));
  ExpectSummaryMatches(ni);
  EXPECT_NE(ni.view()->summary.flags & SCHEDHOST_NODE_SUMMARY_UNSCHEDULABLE, 0u);
  EXPECT_EQ(ni.view()->summary.taints_len, 2u);
  EXPECT_EQ(ni.view()->summary.allocatable_pods, 0);  // absent: 0, as the array reads
  EXPECT_EQ(ni.view()->summary.pods_len, 1u);

  ni.SetImageStates({schedhost_image_state{{"x:1", 3}, 100, 1, 0}});
  ExpectSummaryMatches(ni);
  EXPECT_EQ(ni.view()->summary.image_states_len, 1u);

  NodeInfo copy(ni);
  ExpectSummaryMatches(copy);
  EXPECT_EQ(copy.view()->summary.requested_milli_cpu, 500);
  NodeInfo assigned(NodeNamed("n2"));
  assigned = ni;
  ExpectSummaryMatches(assigned);
  EXPECT_EQ(assigned.view()->summary.taints_len, 2u);

  ni.Clear();
  ExpectSummaryMatches(ni);
  NodeInfo empty;
  ExpectSummaryMatches(empty);
}

TEST(SnapshotTest, BuildsIndexesAndImageSummaries) {
  std::string img =
      "  images:\n  - names: [\"nginx:1.25\", \"docker.io/library/nginx@sha256:abc\"]\n    "
      "sizeBytes: 100000000\n"
      "  - names: [redis]\n    sizeBytes: 50000000\n";
  auto snap = Snapshot::Build(
      {NodeNamed("n1", img),
       NodeNamed("n2", "  images:\n  - names: [\"nginx:1.25\"]\n    sizeBytes: 100000000\n"),
       NodeNamed("n3")},
      {PodOn("a", "n1"), PodOn("b", "n3"), PodOn("orphan", "gone")});
  ASSERT_EQ(snap->size(), 3u);
  EXPECT_EQ(snap->ignored_pods(), 1u);
  ASSERT_NE(snap->Get("n3"), nullptr);
  EXPECT_EQ(snap->Get("n3")->view()->pods_len, 1u);
  EXPECT_EQ(snap->Get("nope"), nullptr);
  const auto* v1 = snap->Get("n1")->view();
  ASSERT_EQ(v1->image_states_len, 3u);  // sorted: digest ref, nginx:1.25, redis (as reported)
  EXPECT_EQ(std::string(v1->image_states[1].name.data, v1->image_states[1].name.len), "nginx:1.25");
  EXPECT_EQ(v1->image_states[1].num_nodes, 2);
  EXPECT_EQ(std::string(v1->image_states[2].name.data, v1->image_states[2].name.len), "redis");
  EXPECT_EQ(v1->image_states[2].num_nodes, 1);
  EXPECT_EQ(snap->views()[0], v1);
}

}  // namespace
}  // namespace schedhost::cache
