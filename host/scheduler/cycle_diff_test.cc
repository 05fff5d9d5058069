// CompareCycles: the three agreements and the plugin named for a disagreement.
#include "host/scheduler/cycle_diff.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace schedhost::scheduler {
namespace {

using framework::Code;
using framework::Status;

// Explanation builds a cycle over Score plugins {Fit, Affinity} with `weights`; `nodes` gives
// each feasible node's normalised scores per plugin, `rejected` the nodes Filter plugin
// `NodePorts` rejected.
CycleExplanation Explanation(std::vector<int64_t> weights,
                             const std::vector<std::pair<std::string, std::vector<int64_t>>>& nodes,
                             const std::vector<std::string>& rejected = {}) {
  CycleExplanation e;
  e.profile = "p";
  e.filter_plugins = {"NodePorts"};
  e.score_plugins = {"Fit", "Affinity"};
  e.score_weights = weights;
  for (const auto& [name, raw] : nodes) {
    NodeVerdict v;
    v.node = name;
    v.raw = raw;
    for (size_t i = 0; i < raw.size(); ++i) {
      v.weighted.push_back(raw[i] * weights[i]);
      v.total += raw[i] * weights[i];
    }
    e.nodes.push_back(std::move(v));
  }
  for (const std::string& name : rejected) {
    NodeVerdict v;
    v.node = name;
    v.outcome = NodeOutcome::kFiltered;
    v.status = Status::Make(Code::kUnschedulable, "node(s) didn't have free ports",
                            framework::Text("NodePorts"));
    e.nodes.push_back(std::move(v));
  }
  return e;
}

TEST(CycleDiffTest, TheSameCycleAgreesOnEverything) {
  const CycleExplanation e = Explanation({1, 1}, {{"a", {50, 10}}, {"b", {50, 10}}, {"c", {0, 0}}});
  EXPECT_EQ(BestNodes(e), (std::vector<std::string>{"a", "b"}));
  const CycleDiff d = CompareCycles(e, "b", e, "a");
  EXPECT_TRUE(d.same_feasibility);
  EXPECT_TRUE(d.same_best);
  EXPECT_TRUE(d.same_node);  // b is among the other's best: it could have chosen it
  EXPECT_EQ(d.plugin, "");
}

TEST(CycleDiffTest, AWeightChangeNamesThePluginItMoved) {
  // Fit prefers a, Affinity prefers b; Affinity's weight going 1 -> 3 flips the choice.
  const CycleExplanation live = Explanation({1, 1}, {{"a", {80, 0}}, {"b", {20, 40}}});
  const CycleExplanation shadow = Explanation({1, 3}, {{"a", {80, 0}}, {"b", {20, 40}}});
  const CycleDiff d = CompareCycles(live, "a", shadow, "b", "live", "shadow");
  EXPECT_TRUE(d.same_feasibility);
  EXPECT_FALSE(d.same_best);
  EXPECT_FALSE(d.same_node);
  EXPECT_EQ(d.point, "Score");
  EXPECT_EQ(d.plugin, "Affinity");
  EXPECT_NE(d.detail.find("weight 3"), std::string::npos) << d.detail;
  EXPECT_NE(d.detail.find("weight 1"), std::string::npos) << d.detail;
}

TEST(CycleDiffTest, AFilterRejectionOfTheOtherSidesNodeIsNamed) {
  const CycleExplanation live = Explanation({1, 1}, {{"a", {80, 0}}, {"b", {20, 0}}});
  const CycleExplanation shadow = Explanation({1, 1}, {{"b", {20, 0}}}, {"a"});
  const CycleDiff d = CompareCycles(live, "a", shadow, "b", "live", "shadow");
  EXPECT_FALSE(d.same_feasibility);
  EXPECT_FALSE(d.same_node);
  EXPECT_EQ(d.point, "Filter");
  EXPECT_EQ(d.plugin, "NodePorts");
  EXPECT_NE(d.detail.find("shadow's Filter NodePorts rejects a"), std::string::npos) << d.detail;
}

TEST(CycleDiffTest, OneSideFindingNoNodeNamesTheRejectionOfTheOthersNode) {
  const CycleExplanation live = Explanation({1, 1}, {}, {"a", "b"});
  const CycleExplanation shadow = Explanation({1, 1}, {{"b", {0, 0}}}, {"a"});
  const CycleDiff d = CompareCycles(live, "", shadow, "b", "live", "shadow");
  EXPECT_FALSE(d.same_feasibility);
  EXPECT_FALSE(d.same_node);
  EXPECT_EQ(d.plugin, "NodePorts");
  EXPECT_TRUE(CompareCycles(live, "", live, "").same_node);
}

TEST(CycleDiffTest, ANodeChosenWithoutScoringNamesNoPlugin) {
  // b beats a on both sides, yet the live side chose a (as a nominated node is, unscored): no
  // plugin moved the choice.
  const CycleExplanation live = Explanation({1, 1}, {{"a", {10, 0}}, {"b", {20, 0}}});
  const CycleDiff d = CompareCycles(live, "a", live, "b");
  EXPECT_FALSE(d.same_node);
  EXPECT_EQ(d.point, "Score");
  EXPECT_EQ(d.plugin, "");
}

}  // namespace
}  // namespace schedhost::scheduler
