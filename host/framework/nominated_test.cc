// RunFilterPluginsWithNominatedPods (reference/003): nominated pods of equal or higher priority
// count on their node in a first pass, a second pass without them must pass too, PreFilter
// AddPod runs on a cloned state, and the ABI entries reach the same code.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "host/framework/framework.h"
#include "host/framework/plugin_instance.h"
#include "host/framework/testing/fake_plugin.h"
#include "host/framework/testing/harness.h"
#include "host/queue/nominator.h"

namespace schedhost::framework {
namespace {

using testing::FakePlugins;
using testing::Harness;
using testing::Reasons;

constexpr char kNodes[] = R"(
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
)";

std::string PodYaml(const std::string& name, int priority, const std::string& cpu,
                    const std::string& label = "") {
  std::string y = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  uid: uid-" + name +
                  "\n";
  if (!label.empty()) y += "  labels: {role: " + label + "}\n";
  y += "spec:\n  priority: " + std::to_string(priority) +
       "\n  containers: [{name: c, image: busybox, resources: {requests: {cpu: \"" + cpu +
       "\"}}}]\n";
  return y;
}

class NominatedTest : public ::testing::Test {
 protected:
  NominatedTest() {
    // RoleGate passes a node only when a pod labelled role=leader is on it.
    auto& gate = fakes.Add("RoleGate");
    gate.filter = [](const schedhost_cycle_state*, const schedhost_pod_view*,
                     const schedhost_node_info_view* ni, Reasons& r) {
      for (size_t i = 0; i < ni->pods_len; ++i) {
        const schedhost_labels& l = ni->pods[i]->labels;
        if (l.len > 0) return SCHEDHOST_SUCCESS;
      }
      r.push_back("no leader here");
      return SCHEDHOST_UNSCHEDULABLE;
    };
    gate.pre_filter = [](schedhost_cycle_state*, const schedhost_pod_view*,
                         std::vector<std::string>*, bool*, Reasons&) { return SCHEDHOST_SUCCESS; };
    gate.add_pod = [this](const schedhost_pod_view* to_add, Reasons& r) {
      added.emplace_back(to_add->name.data, to_add->name.len);
      if (fail_add_pod) {
        r.push_back("cannot add");
        return SCHEDHOST_ERROR;
      }
      return SCHEDHOST_SUCCESS;
    };
    h.RegisterInProcess(gate.descriptor());
    h.AddObjects(kNodes);
  }

  Status Filter(const model::Pod& pod, const std::string& node) {
    Framework& fw = h.framework();
    fw.SetNominator(&nominator);
    CycleState state;
    auto [subset, pre] = fw.RunPreFilterPlugins(state, pod.view());
    EXPECT_TRUE(pre.ok()) << pre.Message();
    return fw.RunFilterPluginsWithNominatedPods(state, pod.view(),
                                                h.snapshot().Get(node)->view());
  }
  void Nominate(const std::string& yaml, const std::string& node) {
    nominator.Add(h.MakePod(yaml), node);
  }

  FakePlugins fakes;
  Harness h;
  queue::Nominator nominator;
  std::vector<std::string> added;
  bool fail_add_pod = false;
};

TEST_F(NominatedTest, HigherOrEqualPriorityNominatedPodsTakeTheirResources) {
  h.OnlyPlugins({"NodeResourcesFit"});
  auto pod = h.MakePod(PodYaml("p", 5, "2"));
  EXPECT_TRUE(Filter(*pod, "n1").ok()) << "no nominations: one pass";
  Nominate(PodYaml("hi", 10, "3"), "n1");
  Status s = Filter(*pod, "n1");
  EXPECT_EQ(s.code, Code::kUnschedulable);
  EXPECT_EQ(s.Message(), "Insufficient cpu");
  EXPECT_TRUE(Filter(*pod, "n2").ok());
  Nominate(PodYaml("same", 5, "3"), "n2");
  EXPECT_FALSE(Filter(*pod, "n2").ok()) << "equal priority counts too";
}

TEST_F(NominatedTest, LowerPriorityAndThePodItselfAreIgnored) {
  h.OnlyPlugins({"NodeResourcesFit"});
  auto pod = h.MakePod(PodYaml("p", 5, "2"));
  Nominate(PodYaml("lo", 1, "3"), "n1");
  EXPECT_TRUE(Filter(*pod, "n1").ok());
  Nominate(PodYaml("p", 5, "3"), "n2");  // the pod's own nomination
  EXPECT_TRUE(Filter(*pod, "n2").ok());
}

TEST_F(NominatedTest, BothPassesMustPass) {
  h.OnlyPlugins({"RoleGate"});
  auto pod = h.MakePod(PodYaml("p", 5, "1"));
  // Pass one sees the nominated leader and passes; pass two (no leader really there) fails:
  // the nominated pod may never arrive, so the node is not feasible.
  Nominate(PodYaml("leader", 10, "1", "leader"), "n1");
  Status s = Filter(*pod, "n1");
  EXPECT_EQ(s.code, Code::kUnschedulable);
  EXPECT_EQ(s.Message(), "no leader here");
  EXPECT_EQ(added, std::vector<std::string>{"leader"}) << "AddPod ran for the nominated pod";
}

TEST_F(NominatedTest, AddPodErrorIsAnError) {
  h.OnlyPlugins({"RoleGate"});
  fail_add_pod = true;
  Nominate(PodYaml("leader", 10, "1", "leader"), "n1");
  Status s = Filter(*h.MakePod(PodYaml("p", 5, "1")), "n1");
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_THAT(s.Message(), ::testing::HasSubstr("running AddPod on PreFilter plugin \"RoleGate\""));
}

TEST_F(NominatedTest, AbiEntriesAreLive) {
  h.OnlyPlugins({"NodeResourcesFit"});
  Framework& fw = h.framework();
  fw.SetNominator(&nominator);
  Nominate(PodYaml("hi", 10, "3"), "n1");
  const PluginInstance* inst = fw.FindPlugin("NodeResourcesFit");
  ASSERT_NE(inst, nullptr);
  schedhost_host* host = const_cast<schedhost_host*>(&inst->handle);
  const schedhost_host_api* api = HostApi();

  const schedhost_pod_view* const* pods = nullptr;
  size_t len = 99;
  ASSERT_EQ(api->nominated_pods_for_node(host, schedhost_str{"n1", 2}, &pods, &len), SCHEDHOST_OK);
  ASSERT_EQ(len, 1u);
  EXPECT_EQ(std::string(pods[0]->name.data, pods[0]->name.len), "hi");
  ASSERT_EQ(api->nominated_pods_for_node(host, schedhost_str{"n2", 2}, &pods, &len), SCHEDHOST_OK);
  EXPECT_EQ(len, 0u);

  auto pod = h.MakePod(PodYaml("p", 5, "2"));
  CycleState state;
  ASSERT_TRUE(fw.RunPreFilterPlugins(state, pod->view()).second.ok());
  StatusSink sink;
  EXPECT_EQ(api->run_filter_plugins_with_nominated_pods(host, state.abi(), pod->view(),
                                                        h.snapshot().Get("n1")->view(), sink.abi()),
            SCHEDHOST_UNSCHEDULABLE);
  EXPECT_EQ(sink.reasons, framework::Reasons{"Insufficient cpu"});
  StatusSink ok_sink;
  EXPECT_EQ(api->run_filter_plugins_with_nominated_pods(host, state.abi(), pod->view(),
                                                        h.snapshot().Get("n2")->view(),
                                                        ok_sink.abi()),
            SCHEDHOST_SUCCESS);
}

TEST(CycleScratchTest, ArraysLiveUntilNoCycleCanReadThem) {
  CycleScratch scratch;
  model::PodData d;
  d.metadata.name = "x";
  auto pod = model::Pod::Make(d);
  const uint64_t c1 = scratch.Begin();
  scratch.KeepPods({pod});
  scratch.Pin(c1);  // c1's binding cycle is still running
  const uint64_t c2 = scratch.Begin();
  scratch.KeepPods({pod});
  scratch.Begin();
  EXPECT_EQ(scratch.size(), 2u) << "the pinned cycle keeps its arrays and the later ones";
  scratch.Unpin(c1);
  scratch.Begin();
  EXPECT_EQ(scratch.size(), 0u);
  EXPECT_GT(c2, c1);
  EXPECT_EQ(scratch.KeepPods({}), nullptr);
}

}  // namespace
}  // namespace schedhost::framework
