// End to end through the loaded builtin plugins, the store, cache and queue: where pods land
// (resources, taints, node affinity and selectors, host ports, cordoned nodes, scheduling
// gates, priority order, nominated pods) and upstream's message for those that cannot land.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "host/framework/testing/fake_plugin.h"
#include "tests/integration/scheduler_fixture.h"

namespace schedhost::integration {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

class PlacementTest : public SchedulerTest {};

TEST_F(PlacementTest, FitsByResourcesAndReportsInsufficientCpu) {
  Build();
  Apply(NodeYaml("n1", "2") + NodeYaml("n2", "4") + PodYaml("a", "3") + PodYaml("b", "2") +
        PodYaml("c", "2") + PodYaml("huge", "8"));
  scheduler::RunResult r = Run();
  EXPECT_EQ(NodeOf("a"), "n2");
  // b and c fill what is left: one cpu on n2 is not enough for either, so one goes to n1
  // and the other finds nothing.
  EXPECT_EQ(NodeOf("b"), "n1");
  EXPECT_EQ(NodeOf("c"), "");
  // DefaultPreemption's message follows, as upstream.
  EXPECT_EQ(MessageOf("c"),
            "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 "
            "No preemption victims found for incoming pod.");
  EXPECT_EQ(NodeOf("huge"), "");
  // 8 cpu is more than either node has at all: NodeResourcesFit says so (unresolvable), and
  // preemption does not even look for victims.
  EXPECT_EQ(MessageOf("huge"),
            "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 "
            "Preemption is not helpful for scheduling.");
  EXPECT_EQ(MessageOf("a"), "");
  EXPECT_EQ(Where("huge"), queue::PodLocation::kUnschedulable);
  EXPECT_EQ(r.virtual_time, std::chrono::nanoseconds(0)) << "nothing needed a timer";
}

TEST_F(PlacementTest, APendingPodIsNeverDecodedOnTheWay) {
  // A made pod keeps its spec packed and decodes it only when asked (model::Pod::data());
  // creating, queueing, filtering, failing, preempting and requeueing a pod must not ask, or
  // every pending pod would carry its decoded copy too.
  Build();
  Apply(NodeYaml("n1", "2") + PodYaml("fits", "1") + PodYaml("huge", "8"));
  Run();
  EXPECT_EQ(NodeOf("fits"), "n1");
  store_.Delete<model::Pod>("default", "fits");  // frees cpu: it is tried again and fails
  Run();
  ASSERT_EQ(NodeOf("huge"), "");
  EXPECT_GE(sched_->Diagnostics(Pod("huge")->uid())->attempts, 2);
  EXPECT_FALSE(Pod("huge")->decoded());
}

TEST_F(PlacementTest, NoNodesAtAllIsAnErrorThatBacksOff) {
  Build();
  Apply(PodYaml("lonely"));
  scheduler::RunLimits limits;
  limits.max_virtual_time = std::chrono::seconds(30);
  scheduler::RunResult r = sched_->RunUntilIdle(limits);
  EXPECT_FALSE(r.idle);
  EXPECT_EQ(r.stopped_by, "the virtual time limit");
  EXPECT_EQ(MessageOf("lonely"), "no nodes available to schedule pods");
  EXPECT_GE(sched_->Diagnostics(Pod("lonely")->uid())->attempts, 3) << "retried after backoff";
  // A node arriving lets it in.
  Apply(NodeYaml("late"));
  Run();
  EXPECT_EQ(NodeOf("lonely"), "late");
}

TEST_F(PlacementTest, TaintsAndTolerations) {
  Build();
  Apply(NodeYaml("gpu", "8", "8Gi", "",
                 "spec:\n  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]\n") +
        NodeYaml("small", "1") +
        PodYaml("tolerant", "4",
                "  tolerations: [{key: dedicated, operator: Equal, value: gpu, "
                "effect: NoSchedule}]\n") +
        PodYaml("plain", "4"));
  Run();
  EXPECT_EQ(NodeOf("tolerant"), "gpu");
  EXPECT_EQ(NodeOf("plain"), "");
  EXPECT_EQ(MessageOf("plain"),
            "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). "
            "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.");
}

TEST_F(PlacementTest, NodeAffinityAndSelector) {
  Build();
  Apply(
      NodeYaml("a1", "4", "8Gi", "zone-a") + NodeYaml("b1", "4", "8Gi", "zone-b") +
      PodYaml("sel", "1", "  nodeSelector: {topology.kubernetes.io/zone: zone-b}\n") +
      PodYaml(
          "aff", "1",
          "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
          "        nodeSelectorTerms:\n        - matchExpressions:\n"
          "          - {key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}\n") +
      PodYaml("nowhere", "1", "  nodeSelector: {disk: ssd}\n"));
  Run();
  EXPECT_EQ(NodeOf("sel"), "b1");
  EXPECT_EQ(NodeOf("aff"), "a1");
  EXPECT_EQ(NodeOf("nowhere"), "");
  EXPECT_EQ(MessageOf("nowhere"),
            "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. "
            "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.");
}

// Pods that fail alike share one stored message; each still reads its own words, whatever the
// order of failures, and a bound pod's diagnostics name its node.
TEST_F(PlacementTest, PendingPodsKeepTheirOwnMessagesAndBoundPodsTheirNode) {
  Build();
  Apply(NodeYaml("n1", "2") + PodYaml("big1", "8") +
        PodYaml("lost", "1", "  nodeSelector: {disk: ssd}\n") + PodYaml("big2", "8") +
        PodYaml("fits", "1"));
  Run();
  const std::string cpu =
      "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 "
      "Preemption is not helpful for scheduling.";
  EXPECT_EQ(MessageOf("big1"), cpu);
  EXPECT_EQ(MessageOf("big2"), cpu);
  EXPECT_EQ(MessageOf("lost"),
            "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. "
            "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
  EXPECT_EQ(MessageOf("fits"), "");
  EXPECT_EQ(sched_->Diagnostics(Pod("fits")->uid())->node, "n1");
  EXPECT_EQ(sched_->Diagnostics(Pod("big1")->uid())->node, "");
  EXPECT_EQ(sched_->Diagnostics(Pod("big1")->uid())->nominated_node, "");
}

TEST_F(PlacementTest, HostPortsConflict) {
  Build();
  const std::string port =
      "  containers:\n  - name: c\n    image: nginx\n    ports: [{containerPort: 80, hostPort: "
      "8080}]\n";
  auto pod = [&](const std::string& name) {
    return "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name + "}\nspec:\n" + port;
  };
  Apply(NodeYaml("n1") + NodeYaml("n2") + pod("web-1") + pod("web-2") + pod("web-3"));
  Run();
  EXPECT_NE(NodeOf("web-1"), "");
  EXPECT_NE(NodeOf("web-2"), "");
  EXPECT_NE(NodeOf("web-1"), NodeOf("web-2")) << "one host port 8080 per node";
  EXPECT_EQ(NodeOf("web-3"), "");
  EXPECT_EQ(MessageOf("web-3"),
            "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod "
            "ports. preemption: 0/2 nodes are available: 2 No preemption victims found for "
            "incoming pod.");
}

TEST_F(PlacementTest, CordonedNodesAreSkippedAndUncordoningHelps) {
  Build();
  Apply(NodeYaml("cordoned", "4", "8Gi", "", "spec:\n  unschedulable: true\n") + PodYaml("p"));
  Run();
  EXPECT_EQ(NodeOf("p"), "");
  EXPECT_EQ(MessageOf("p"),
            "0/1 nodes are available: 1 node(s) were unschedulable. preemption: 0/1 nodes are "
            "available: 1 Preemption is not helpful for scheduling.");
  // Uncordoning is a node update that NodeUnschedulable's hint lets through.
  model::NodeData node = store_.Get<model::Node>("", "cordoned")->data();
  node.spec.unschedulable = false;
  store_.Update(node);
  Run();
  EXPECT_EQ(NodeOf("p"), "cordoned");
}

TEST_F(PlacementTest, GatedPodsWaitUntilTheirGatesAreRemoved) {
  Build();
  Apply(NodeYaml("n1") + PodYaml("gated", "1", "  schedulingGates: [{name: example.com/hold}]\n"));
  Run();
  EXPECT_EQ(NodeOf("gated"), "");
  EXPECT_EQ(MessageOf("gated"), "waiting for scheduling gates: [example.com/hold]");
  EXPECT_TRUE(sched_->Diagnostics(Pod("gated")->uid())->gated);
  EXPECT_EQ(Where("gated"), queue::PodLocation::kGated);
  model::PodData data = Pod("gated")->data();
  data.spec.scheduling_gates.clear();
  store_.Update(data);
  Run();
  EXPECT_EQ(NodeOf("gated"), "n1");
  EXPECT_EQ(MessageOf("gated"), "");
}

TEST_F(PlacementTest, HigherPriorityGoesFirst) {
  Build();
  Apply(R"(
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
)" + NodeYaml("only", "2") +
        PodYaml("early-low", "2") + PodYaml("late-high", "2", "  priorityClassName: high\n"));
  Run();
  EXPECT_EQ(NodeOf("late-high"), "only") << "popped first despite arriving later";
  EXPECT_EQ(NodeOf("early-low"), "");
}

TEST_F(PlacementTest, EqualPodsGoInCreationOrder) {
  Build();
  std::string yaml = NodeYaml("n1", "3");
  for (int i = 0; i < 6; ++i) yaml += PodYaml("p" + std::to_string(i), "1");
  Apply(yaml);
  Run();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(NodeOf("p" + std::to_string(i)), "n1") << i;
  for (int i = 3; i < 6; ++i) EXPECT_EQ(NodeOf("p" + std::to_string(i)), "") << i;
}

TEST_F(PlacementTest, BoundPodFreeingRoomWakesAPendingPod) {
  Build();
  Apply(NodeYaml("n1", "2") + PodYaml("first", "2") + PodYaml("second", "2"));
  Run();
  EXPECT_EQ(NodeOf("first"), "n1");
  EXPECT_EQ(NodeOf("second"), "");
  store_.Delete<model::Pod>("default", "first");
  scheduler::RunResult r = Run();
  EXPECT_EQ(NodeOf("second"), "n1");
  EXPECT_GE(r.virtual_time, std::chrono::seconds(1)) << "it waited out its backoff";
}

// InterPodAffinity keeps its PreFilter counts across cycles and recounts only nodes whose
// node info changed: every binding, deletion and relabelling must still move them.
TEST_F(PlacementTest, AntiAffinityCountsFollowBindingsDeletionsAndRelabels) {
  Build();
  const std::string anti =
      "  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
      "      - labelSelector: {matchLabels: {app: web}}\n"
      "        topologyKey: kubernetes.io/hostname\n";
  const std::string web = "  labels: {app: web}\n";
  Apply(NodeYaml("n1", "4") + NodeYaml("n2", "4") + NodeYaml("n3", "4"));
  for (const char* name : {"w1", "w2", "w3", "w4"}) Apply(PodYaml(name, "1", anti, web));
  Run();
  std::set<std::string> used;
  for (const char* name : {"w1", "w2", "w3"}) used.insert(NodeOf(name));
  EXPECT_EQ(used, (std::set<std::string>{"n1", "n2", "n3"})) << "one per node";
  EXPECT_EQ(NodeOf("w4"), "");
  EXPECT_THAT(MessageOf("w4"), HasSubstr("3 node(s) didn't match pod anti-affinity rules"));

  // A pod without the label is not repelled by the web pods.
  Apply(PodYaml("plain", "1"));
  Run();
  EXPECT_NE(NodeOf("plain"), "");

  // Deleting one web pod frees its node for w4 (and for nothing else).
  const std::string freed = NodeOf("w2");
  store_.Delete<model::Pod>("default", "w2");
  Run();
  EXPECT_EQ(NodeOf("w4"), freed);

  // A new node without the hostname label has no domain to repel from: w5 lands there.
  Apply(PodYaml("w5", "1", anti, web));
  Run();
  EXPECT_EQ(NodeOf("w5"), "");
  Apply(
      "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: bare\n"
      "status:\n  allocatable: {cpu: \"4\", memory: 4Gi, pods: \"110\"}\n");
  Run();
  EXPECT_EQ(NodeOf("w5"), "bare");
  // Giving bare its hostname label makes it a domain holding web pods: w6 fits nowhere.
  model::NodeData bare = store_.Get<model::Node>("", "bare")->data();
  bare.metadata.labels = {{"kubernetes.io/hostname", "bare"}};
  store_.Update(bare);
  Apply(PodYaml("w6", "1", anti, web));
  Run();
  EXPECT_EQ(NodeOf("w6"), "");
  EXPECT_THAT(MessageOf("w6"), HasSubstr("4 node(s) didn't match pod anti-affinity rules"));
}

TEST_F(PlacementTest, NominatedPodKeepsItsNodeFromLowerPriorityPods) {
  // A PostFilter standing in for preemption: it nominates n1 for the first pod that fails.
  framework::testing::FakePlugin& nominate = fakes_.Add("NominateN1");
  int post_filter_calls = 0;
  nominate.post_filter = [&](const schedhost_node_status_map*, std::string* node,
                             framework::testing::Reasons& r) {
    if (++post_filter_calls > 1) {
      r.push_back("preemption: not this time");
      return SCHEDHOST_UNSCHEDULABLE;
    }
    *node = "n1";
    return SCHEDHOST_SUCCESS;
  };
  Build(
      "[[profile]]\nname = \"default-scheduler\"\n[profile.plugins.post_filter]\n"
      "enabled = [{ name = \"NominateN1\" }]\ndisabled = [{ name = \"DefaultPreemption\" }]\n",
      {nominate.descriptor()});
  Apply(R"(
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
)" + NodeYaml("n1", "4") +
        NodeYaml("n2", "1") + PodYaml("resident", "2", "  nodeName: n1\n") +
        PodYaml("hi", "3", "  priorityClassName: high\n"));
  Run();
  EXPECT_EQ(NodeOf("hi"), "");
  EXPECT_EQ(MessageOf("hi"), "0/2 nodes are available: 2 Insufficient cpu.");
  EXPECT_EQ(Pod("hi")->data().status.nominated_node_name, "n1") << "written to the store";
  EXPECT_EQ(sched_->Diagnostics(Pod("hi")->uid())->nominated_node, "n1");
  EXPECT_EQ(sched_->queue().nominator().NominatedNodeFor(Pod("hi")->uid()), "n1");

  // n1 has 2 cpu free, but they are the nominated pod's: a lower-priority pod may not take them.
  Apply(PodYaml("lo", "2"));
  Run();
  EXPECT_EQ(NodeOf("lo"), "");
  EXPECT_EQ(MessageOf("lo"),
            "0/2 nodes are available: 2 Insufficient cpu. preemption: not this time")
      << "PostFilter's message is appended, as upstream";

  // A big node that neither tolerates brings both back. The nominated pod is tried on its node
  // first, fails there, and fails the full pass too: each node counts once in the message (the
  // status map keeps one entry per node, the later one).
  Apply(NodeYaml("n3", "8", "8Gi", "",
                 "spec:\n  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]\n"));
  Run();
  EXPECT_EQ(NodeOf("hi"), "");
  EXPECT_EQ(MessageOf("hi"),
            "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 "
            "Insufficient cpu. preemption: not this time");
  EXPECT_EQ(NodeOf("lo"), "") << "still kept off the nominated pod's cpu";

  // The resident leaves: the nominated pod is tried on its node first and lands there.
  store_.Delete<model::Pod>("default", "resident");
  Run();
  EXPECT_EQ(NodeOf("hi"), "n1");
  EXPECT_EQ(Pod("hi")->data().status.nominated_node_name, "") << "binding clears it";
  EXPECT_EQ(sched_->queue().nominator().Size(), 0u);
  EXPECT_EQ(NodeOf("lo"), "") << "1 cpu left on n1";
}

// A second embedded host inside one test (the fixture's members made reachable).
struct LocalHost : SchedulerTest {
  using SchedulerTest::Apply;
  using SchedulerTest::Build;
  using SchedulerTest::NodeOf;
  using SchedulerTest::Run;
  void TestBody() override {}
};

std::vector<std::string> PlaceWithSeed(uint64_t seed) {
  LocalHost host;
  host.Build("", {}, seed);
  std::string yaml;
  for (int i = 0; i < 8; ++i) yaml += NodeYaml("n" + std::to_string(i), "100");
  for (int i = 0; i < 8; ++i) yaml += PodYaml("p" + std::to_string(i), "1");
  host.Apply(yaml);
  host.Run();
  std::vector<std::string> nodes;
  for (int i = 0; i < 8; ++i) nodes.push_back(host.NodeOf("p" + std::to_string(i)));
  return nodes;
}

TEST(TieBreakTest, SameSeedSamePlacementsAndSeedsDiffer) {
  EXPECT_EQ(PlaceWithSeed(7), PlaceWithSeed(7));
  std::set<std::string> first_choice;
  for (uint64_t seed = 1; seed <= 8; ++seed) first_choice.insert(PlaceWithSeed(seed).front());
  EXPECT_GT(first_choice.size(), 1u)
      << "eight equal nodes: the first pod's node is drawn at random";
}

}  // namespace
}  // namespace schedhost::integration
