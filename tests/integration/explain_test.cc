// Scheduler::Stats and Scheduler::Explanation on a virtual clock through the builtin plugins:
// attempts by result, the binding rate, and what the last cycle recorded per node (filtered,
// left out by PreFilter, not evaluated after percentageOfNodesToScore, scored), dropped with
// the pod.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <numeric>

#include "tests/integration/scheduler_fixture.h"

namespace schedhost::integration {
namespace {

using scheduler::NodeOutcome;
using scheduler::NodeVerdict;

class SchedulerExplainTest : public SchedulerTest {
 protected:
  std::shared_ptr<const scheduler::CycleExplanation> Explain(const std::string& pod) {
    auto p = Pod(pod);
    return p ? sched_->Explanation(p->uid()) : nullptr;
  }
};

const NodeVerdict* Find(const scheduler::CycleExplanation& e, const std::string& node) {
  for (const NodeVerdict& v : e.nodes) {
    if (v.node == node) return &v;
  }
  return nullptr;
}

TEST_F(SchedulerExplainTest, StatsCountAttemptsByResultAndTheRateOverTheLastMinute) {
  Build();
  Apply(NodeYaml("n1", "2") + NodeYaml("n2", "4") + PodYaml("a", "1") + PodYaml("b", "1") +
        PodYaml("c", "1") + PodYaml("huge", "8"));
  Run();
  scheduler::SchedulerStats s = sched_->Stats();
  EXPECT_EQ(s.attempts_scheduled, 3u);
  EXPECT_EQ(s.bound_pods, 3u);
  EXPECT_EQ(s.attempts_unschedulable, 1u);
  EXPECT_EQ(s.attempts_error, 0u);
  EXPECT_EQ(s.queue.unschedulable, 1u);
  EXPECT_EQ(s.queue.active + s.queue.backoff + s.queue.in_flight, 0u);
  // No virtual time passed: the window is its one-second floor.
  EXPECT_DOUBLE_EQ(s.pods_per_second, 3.0);
  clock_->Advance(std::chrono::seconds(30));
  EXPECT_DOUBLE_EQ(sched_->Stats().pods_per_second, 3.0 / 30);
  clock_->Advance(std::chrono::seconds(61));
  EXPECT_DOUBLE_EQ(sched_->Stats().pods_per_second, 0.0);
}

TEST_F(SchedulerExplainTest, KeepsOnlyTheMostRecentExplanations) {
  max_explanations_ = 2;
  Build();
  Apply(NodeYaml("n1", "4") + PodYaml("a", "1") + PodYaml("b", "1") + PodYaml("c", "1") +
        PodYaml("huge", "8"));
  Run();
  // a, b, c and huge were recorded in that order (priority ties go by creation): two remain.
  EXPECT_EQ(Explain("a"), nullptr);
  EXPECT_EQ(Explain("b"), nullptr);
  EXPECT_NE(Explain("c"), nullptr);
  ASSERT_NE(Explain("huge"), nullptr);
  // A new attempt for huge (a node it fits joins) replaces its entry instead of adding one.
  Apply(NodeYaml("n2", "16"));
  Run();
  ASSERT_EQ(NodeOf("huge"), "n2");
  EXPECT_NE(Explain("c"), nullptr);
  auto huge = Explain("huge");
  ASSERT_NE(huge, nullptr);
  ASSERT_NE(Find(*huge, "n2"), nullptr);
  EXPECT_EQ(Find(*huge, "n2")->outcome, NodeOutcome::kFeasible);
}

TEST_F(SchedulerExplainTest, ADeletedPodsExplanationFreesItsPlaceAndTheOldestGoesFirst) {
  max_explanations_ = 3;
  Build();
  Apply(NodeYaml("n1", "1") + PodYaml("a", "8") + PodYaml("b", "8") + PodYaml("c", "8"));
  Run();
  for (const char* pod : {"a", "b", "c"}) ASSERT_NE(Explain(pod), nullptr) << pod;
  // b goes with its pod; d takes its place and a, the oldest, is still kept.
  const std::string b_uid(Pod("b")->uid());
  store_.Delete<model::Pod>("default", "b");
  Run();
  EXPECT_EQ(sched_->Explanation(b_uid), nullptr);
  Apply(PodYaml("d", "8"));
  Run();
  for (const char* pod : {"a", "c", "d"}) EXPECT_NE(Explain(pod), nullptr) << pod;
  // Two more: a and then c, the oldest, go; d, e and f stay.
  Apply(PodYaml("e", "8") + PodYaml("f", "8"));
  Run();
  EXPECT_EQ(Explain("a"), nullptr);
  EXPECT_EQ(Explain("c"), nullptr);
  for (const char* pod : {"d", "e", "f"}) EXPECT_NE(Explain(pod), nullptr) << pod;
}

TEST_F(SchedulerExplainTest, KeepsExplanationsWithinTheByteBudget) {
  // Room for about one explanation of this cluster: the newest is kept, older ones go.
  max_explanation_bytes_ = 1;
  Build();
  std::string nodes;
  for (int i = 0; i < 50; ++i) nodes += NodeYaml("n" + std::to_string(i), "4");
  Apply(nodes + PodYaml("a", "1"));
  Run();
  ASSERT_NE(Explain("a"), nullptr);
  EXPECT_EQ(Explain("a")->nodes.size(), 50u);
  Apply(PodYaml("b", "1"));
  Run();
  EXPECT_EQ(Explain("a"), nullptr);
  ASSERT_NE(Explain("b"), nullptr);
}

TEST_F(SchedulerExplainTest, RejectedNodesSharingAReasonAreEachListed) {
  Build();
  std::string nodes;
  for (int i = 0; i < 20; ++i) nodes += NodeYaml("small" + std::to_string(i), "1");
  Apply(nodes + NodeYaml("big", "16") + PodYaml("huge", "32"));
  Run();
  ASSERT_EQ(NodeOf("huge"), "");
  auto e = Explain("huge");
  ASSERT_NE(e, nullptr);
  ASSERT_EQ(e->nodes.size(), 21u);
  for (const NodeVerdict& v : e->nodes) {
    EXPECT_EQ(v.outcome, NodeOutcome::kFiltered) << v.node;
    EXPECT_EQ(v.status.plugin, "NodeResourcesFit") << v.node;
    EXPECT_EQ(v.status.Message(), "Insufficient cpu") << v.node;
  }
  EXPECT_NE(Find(*e, "small7"), nullptr);
  EXPECT_NE(Find(*e, "big"), nullptr);
}

TEST_F(SchedulerExplainTest, PodsFailingAlikeEachKeepTheirOwnExplanation) {
  // huge-1 and huge-2 fail alike (they may hold one record); picky fails for another reason in
  // between and after, and deleting huge-1 leaves huge-2's explanation whole.
  Build();
  Apply(NodeYaml("n1", "2") + NodeYaml("n2", "4") + PodYaml("huge-1", "32") +
        PodYaml("picky", "1", "  nodeSelector: {disk: ssd}\n") + PodYaml("huge-2", "32"));
  Run();
  auto verdicts = [&](const std::string& pod) {
    std::vector<std::string> out;
    auto e = Explain(pod);
    if (e == nullptr) return out;
    for (const NodeVerdict& v : e->nodes) {
      out.push_back(v.node + " " + v.status.plugin.str() + ": " + v.status.Message());
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  const std::vector<std::string> cpu = {"n1 NodeResourcesFit: Insufficient cpu",
                                        "n2 NodeResourcesFit: Insufficient cpu"};
  EXPECT_EQ(verdicts("huge-1"), cpu);
  EXPECT_EQ(verdicts("huge-2"), cpu);
  const std::vector<std::string> picky = verdicts("picky");
  ASSERT_EQ(picky.size(), 2u);
  EXPECT_THAT(picky[0], ::testing::StartsWith("n1 NodeAffinity: "));
  const std::string uid(Pod("huge-1")->uid());
  store_.Delete<model::Pod>("default", "huge-1");
  Run();
  EXPECT_EQ(sched_->Explanation(uid), nullptr);
  EXPECT_EQ(verdicts("huge-2"), cpu);
  EXPECT_EQ(verdicts("picky"), picky);
}

TEST_F(SchedulerExplainTest, InterleavedReasonsComeBackNodeByNode) {
  // Every third node is cordoned, the others too small: the record groups nodes by reason, and
  // each must still come back with its own.
  Build();
  std::string nodes;
  for (int i = 0; i < 60; ++i) {
    const std::string name = "m" + std::to_string(i);
    nodes += i % 3 == 0 ? NodeYaml(name, "16", "8Gi", "", "spec:\n  unschedulable: true\n")
                        : NodeYaml(name, "1");
  }
  Apply(nodes + PodYaml("huge", "8"));
  Run();
  ASSERT_EQ(NodeOf("huge"), "");
  auto e = Explain("huge");
  ASSERT_NE(e, nullptr);
  ASSERT_EQ(e->nodes.size(), 60u);
  for (int i = 0; i < 60; ++i) {
    const NodeVerdict* v = Find(*e, "m" + std::to_string(i));
    ASSERT_NE(v, nullptr) << i;
    EXPECT_EQ(v->outcome, NodeOutcome::kFiltered) << i;
    EXPECT_EQ(v->status.plugin, i % 3 == 0 ? "NodeUnschedulable" : "NodeResourcesFit") << i;
  }
  // Listed by name, each once.
  EXPECT_TRUE(
      std::is_sorted(e->nodes.begin(), e->nodes.end(),
                     [](const NodeVerdict& a, const NodeVerdict& b) { return a.node < b.node; }));
}

TEST_F(SchedulerExplainTest, RecordsNothingWhenOff) {
  max_explanations_ = 0;
  Build();
  Apply(NodeYaml("n1", "4") + PodYaml("a", "1"));
  Run();
  EXPECT_EQ(NodeOf("a"), "n1");
  EXPECT_EQ(Explain("a"), nullptr);
}

TEST_F(SchedulerExplainTest, RecordsScoresOfTheCycleThatPlacedThePod) {
  Build();
  Apply(NodeYaml("n1", "2") + NodeYaml("n2", "4") + PodYaml("web", "500m"));
  Run();
  ASSERT_EQ(NodeOf("web"), "n2");
  auto e = Explain("web");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->profile, "default-scheduler");
  EXPECT_EQ(e->num_all_nodes, 2u);
  ASSERT_EQ(e->nodes.size(), 2u);
  ASSERT_EQ(e->score_plugins.size(), e->score_weights.size());
  for (const NodeVerdict& v : e->nodes) {
    EXPECT_EQ(v.outcome, NodeOutcome::kFeasible) << v.node;
    ASSERT_EQ(v.raw.size(), e->score_plugins.size());
    ASSERT_EQ(v.weighted.size(), e->score_plugins.size());
    EXPECT_EQ(v.total, std::accumulate(v.weighted.begin(), v.weighted.end(), int64_t{0}));
    for (size_t k = 0; k < v.weighted.size(); ++k) {
      EXPECT_EQ(v.weighted[k] % e->score_weights[k], 0) << e->score_plugins[k];
    }
  }
  EXPECT_GT(Find(*e, "n2")->total, Find(*e, "n1")->total);
}

// A record keeps raw scores only for the plugins with NormalizeScore; the others' raw scores
// are their normalised ones. TaintToleration counts the intolerable PreferNoSchedule taints
// (raw 0, 1, 2) and normalises them in reverse (100, 50, 0); the explanation must show both.
TEST_F(SchedulerExplainTest, KeepsTheRawScoresOfPluginsThatNormalize) {
  Build();
  const auto taints = [](int count) {
    std::string y = "spec:\n  taints:\n";
    for (int i = 0; i < count; ++i) {
      y += "  - {key: t" + std::to_string(i) + ", value: x, effect: PreferNoSchedule}\n";
    }
    return y;
  };
  Apply(NodeYaml("n0", "4") + NodeYaml("n1", "4", "8Gi", "", taints(1)) +
        NodeYaml("n2", "4", "8Gi", "", taints(2)) + PodYaml("web", "500m"));
  Run();
  ASSERT_EQ(NodeOf("web"), "n0");
  auto e = Explain("web");
  ASSERT_NE(e, nullptr);
  const auto column = [&](const std::string& plugin) {
    const auto it = std::find(e->score_plugins.begin(), e->score_plugins.end(), plugin);
    EXPECT_NE(it, e->score_plugins.end()) << plugin;
    return static_cast<size_t>(it - e->score_plugins.begin());
  };
  const size_t tt = column("TaintToleration");
  const size_t fit = column("NodeResourcesFit");
  ASSERT_EQ(e->nodes.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const NodeVerdict* v = Find(*e, "n" + std::to_string(i));
    ASSERT_NE(v, nullptr) << i;
    ASSERT_EQ(v->raw.size(), e->score_plugins.size());
    EXPECT_EQ(v->raw[tt], i) << "n" << i;
    EXPECT_EQ(v->weighted[tt], (100 - 50 * i) * e->score_weights[tt]) << "n" << i;
    // Without NormalizeScore the raw score is the one weighted.
    EXPECT_EQ(v->raw[fit] * e->score_weights[fit], v->weighted[fit]) << "n" << i;
    EXPECT_GT(v->raw[fit], 0) << "n" << i;
  }
}

TEST_F(SchedulerExplainTest, RecordsTheRejectingPluginAndNodesPreFilterLeftOut) {
  Build();
  const std::string affinity =
      "  affinity:\n"
      "    nodeAffinity:\n"
      "      requiredDuringSchedulingIgnoredDuringExecution:\n"
      "        nodeSelectorTerms:\n"
      "        - matchFields: [{key: metadata.name, operator: In, values: [n1]}]\n";
  Apply(NodeYaml("n1", "2") + NodeYaml("n2", "4") + PodYaml("pinned", "3", affinity));
  Run();
  ASSERT_EQ(NodeOf("pinned"), "");
  auto e = Explain("pinned");
  ASSERT_NE(e, nullptr);
  ASSERT_EQ(e->nodes.size(), 2u);
  const NodeVerdict* n1 = Find(*e, "n1");
  ASSERT_NE(n1, nullptr);
  EXPECT_EQ(n1->outcome, NodeOutcome::kFiltered);
  EXPECT_EQ(n1->status.plugin, "NodeResourcesFit");
  EXPECT_EQ(n1->status.Message(), "Insufficient cpu");
  EXPECT_TRUE(n1->raw.empty());
  const NodeVerdict* n2 = Find(*e, "n2");
  ASSERT_NE(n2, nullptr);
  EXPECT_EQ(n2->outcome, NodeOutcome::kExcluded);
  EXPECT_EQ(n2->status.Message(), "node(s) didn't satisfy plugin(s) [NodeAffinity]");

  // Deleting the pod drops what was recorded about it.
  const std::string uid(Pod("pinned")->uid());
  store_.Delete<model::Pod>("default", "pinned");
  Run();
  EXPECT_EQ(sched_->Explanation(uid), nullptr);
  EXPECT_FALSE(sched_->Diagnostics(uid).has_value());
}

TEST_F(SchedulerExplainTest, NodesNotEvaluatedAfterEnoughFeasibleOnesAreLeftOut) {
  Build();
  std::string nodes;
  for (int i = 0; i < 120; ++i) nodes += NodeYaml("n" + std::to_string(i), "4");
  Apply(nodes + PodYaml("web", "1"));
  Run();
  auto e = Explain("web");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->num_all_nodes, 120u);
  // Upstream looks for at least 100 feasible nodes and stops there.
  EXPECT_EQ(e->nodes.size(), 100u);
  EXPECT_TRUE(std::all_of(e->nodes.begin(), e->nodes.end(), [](const NodeVerdict& v) {
    return v.outcome == NodeOutcome::kFeasible && !v.weighted.empty();
  }));
}

// Feasible nodes are counted per run of nodes; the run that crosses the limit keeps only the
// feasible nodes under it and what was rejected before them.
TEST_F(SchedulerExplainTest, EnoughFeasibleNodesAmongRejectedOnesStopsAtTheLimit) {
  Build();
  std::string nodes;
  // 250 nodes, every other one too small: 125 would fit, upstream looks for 120 (48 %).
  for (int i = 0; i < 250; ++i) nodes += NodeYaml("n" + std::to_string(i), i % 2 ? "4" : "1");
  Apply(nodes + PodYaml("web", "2"));
  Run();
  auto e = Explain("web");
  ASSERT_NE(e, nullptr);
  const auto feasible = std::count_if(e->nodes.begin(), e->nodes.end(), [](const NodeVerdict& v) {
    return v.outcome == NodeOutcome::kFeasible;
  });
  EXPECT_EQ(feasible, 120);
  // Before the 120th feasible node came 120 small ones (more if the other thread looked past).
  EXPECT_GE(e->nodes.size() - static_cast<size_t>(feasible), 120u);
  EXPECT_LE(e->nodes.size(), 250u);
}

}  // namespace
}  // namespace schedhost::integration
