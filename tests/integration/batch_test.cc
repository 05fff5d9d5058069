// The batched Filter and Score entries (abi 1.2) through the scheduling loop: with
// `[host] batch_plugin_calls` on, plugins that have them get runs of nodes in one call, and every
// placement, node verdict, reason and score is what one call per node gives; a plugin that
// answers a batch inconsistently fails the attempt with a message naming it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "tests/integration/scheduler_fixture.h"

namespace schedhost::integration {
namespace {

using framework::testing::Reasons;

std::string_view NodeName(const schedhost_node_info_view* ni) {
  return {ni->node->name.data, ni->node->name.len};
}

// Counted is an in-process plugin with both kinds of entry: Filter rejects nodes whose name ends
// in 3, Score is the name's length times 7. The batched entries loop over the single ones, as
// the SDK's do, and count their calls.
struct Counted {
  std::atomic<int> filter_calls{0}, filter_batch_calls{0}, score_calls{0}, score_batch_calls{0};

  static int32_t FilterOne(const schedhost_node_info_view* ni, Reasons& r) {
    if (NodeName(ni).ends_with('3')) {
      r.push_back("Counted rejects " + std::string(NodeName(ni)));
      return SCHEDHOST_UNSCHEDULABLE;
    }
    return SCHEDHOST_SUCCESS;
  }
  static int64_t ScoreOne(const schedhost_node_info_view* ni) {
    return static_cast<int64_t>(NodeName(ni).size()) * 7;
  }

  void Install(framework::testing::FakePlugin& f) {
    f.filter = [this](const schedhost_cycle_state*, const schedhost_pod_view*,
                      const schedhost_node_info_view* ni, Reasons& r) -> int32_t {
      ++filter_calls;
      return FilterOne(ni, r);
    };
    f.filter_batch = [this](const schedhost_node_info_view* const* nodes, size_t n, size_t* passed,
                            Reasons& r) -> int32_t {
      ++filter_batch_calls;
      for (size_t k = 0; k < n; ++k) {
        if (const int32_t rc = FilterOne(nodes[k], r); rc != SCHEDHOST_SUCCESS) {
          *passed = k;
          return rc;
        }
      }
      *passed = n;
      return SCHEDHOST_SUCCESS;
    };
    f.score = [this](const schedhost_node_info_view* ni, int64_t* s, Reasons&) -> int32_t {
      ++score_calls;
      *s = ScoreOne(ni);
      return SCHEDHOST_SUCCESS;
    };
    f.score_batch = [this](const schedhost_node_info_view* const* nodes, size_t n, int64_t* s,
                           Reasons&) -> int32_t {
      ++score_batch_calls;
      for (size_t k = 0; k < n; ++k) s[k] = ScoreOne(nodes[k]);
      return SCHEDHOST_SUCCESS;
    };
  }
};

constexpr const char* kProfile =
    "[[profile]]\nname = \"default-scheduler\"\n[profile.plugins.multi_point]\n"
    "enabled = [{ name = \"Counted\" }]\n";

// Cluster is 60 nodes that the builtin Filter plugins tell apart (too small, unschedulable,
// tainted, by zone) and 41 pods, one of which fits nowhere.
std::string Cluster() {
  std::string y;
  for (int i = 0; i < 60; ++i) {
    std::string extra;
    if (i % 7 == 0 || i % 11 == 0) extra += "spec:\n";
    if (i % 7 == 0) extra += "  unschedulable: true\n";
    if (i % 11 == 0) extra += "  taints:\n  - {key: dedicated, value: batch, effect: NoSchedule}\n";
    y += NodeYaml("node-" + std::to_string(i), i % 5 == 0 ? "1" : "4", "8Gi",
                  std::string("z") + static_cast<char>('a' + i % 3), extra);
  }
  for (int i = 0; i < 40; ++i) {
    std::string spec;
    if (i % 4 == 1) spec += "  nodeSelector:\n    topology.kubernetes.io/zone: zb\n";
    if (i % 6 == 2) {
      spec +=
          "  tolerations:\n  - {key: dedicated, operator: Equal, value: batch, effect: "
          "NoSchedule}\n";
    }
    y += PodYaml("pod-" + std::to_string(i), i % 3 == 0 ? "2" : "1", spec);
  }
  return y + PodYaml("too-big", "64");
}

// Scenario schedules Cluster() with batching on or off and describes, per pod, where it went,
// its last message and its last cycle's explanation node by node.
class Scenario : public SchedulerTest {
 public:
  void TestBody() override {}

  std::string Describe(bool batch, Counted& counted) {
    framework::testing::FakePlugin& f = fakes_.Add("Counted");
    counted.Install(f);
    Build(std::string("batch_plugin_calls = ") + (batch ? "true" : "false") + "\n" + kProfile,
          {f.descriptor()}, 7);
    Apply(Cluster());
    Run();
    std::string out;
    std::vector<std::string> pods{"too-big"};
    for (int i = 0; i < 40; ++i) pods.push_back("pod-" + std::to_string(i));
    for (const std::string& name : pods) {
      out += name + " -> " + NodeOf(name) + " | " + MessageOf(name) + "\n";
      const auto pod = Pod(name);
      const auto e = pod ? sched_->Explanation(pod->uid()) : nullptr;
      if (e == nullptr) continue;
      for (const scheduler::NodeVerdict& v : e->nodes) {
        out += "  " + v.node + " " + std::to_string(static_cast<int>(v.outcome)) + " " +
               v.status.Message() + " total=" + std::to_string(v.total) + " raw=";
        for (int64_t r : v.raw) out += std::to_string(r) + ",";
        out += "\n";
      }
    }
    return out;
  }
};

TEST(BatchedPluginCallsTest, PlaceExplainAndScoreAsOneCallPerNodeDoes) {
  Counted per_node_calls, batched_calls;
  const std::string per_node = Scenario().Describe(false, per_node_calls);
  const std::string batched = Scenario().Describe(true, batched_calls);
  EXPECT_EQ(batched, per_node);

  // The scenario is not trivial: pods were placed, Filter plugins rejected nodes, one pod fits
  // nowhere and the counted plugin's own reason appears.
  EXPECT_THAT(per_node, ::testing::HasSubstr("pod-0 -> node-"));
  EXPECT_THAT(per_node, ::testing::HasSubstr("too-big ->  | 0/60 nodes are available"));
  EXPECT_THAT(per_node, ::testing::HasSubstr("Counted rejects node-13"));
  EXPECT_THAT(per_node, ::testing::HasSubstr("node(s) were unschedulable"));
  EXPECT_THAT(per_node, ::testing::HasSubstr("untolerated taint"));
  EXPECT_THAT(per_node, ::testing::HasSubstr("Insufficient cpu"));

  // Off: one call per node. On: the batched entries carry the work (cycles that time plugin
  // calls still make one call per node).
  EXPECT_EQ(per_node_calls.filter_batch_calls.load(), 0);
  EXPECT_EQ(per_node_calls.score_batch_calls.load(), 0);
  EXPECT_GT(per_node_calls.filter_calls.load(), 0);
  EXPECT_GT(batched_calls.filter_batch_calls.load(), 0);
  EXPECT_GT(batched_calls.score_batch_calls.load(), 0);
  EXPECT_LT(batched_calls.filter_calls.load(), per_node_calls.filter_calls.load());
}

}  // namespace
}  // namespace schedhost::integration
