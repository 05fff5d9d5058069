// TaintToleration through the real framework (upstream
// pkg/scheduler/framework/plugins/tainttoleration behaviour): Filter rejects the first
// untolerated NoSchedule/NoExecute taint; Score counts untolerated PreferNoSchedule taints and
// NormalizeScore reverses them onto 0..100.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "host/framework/cycle_state.h"
#include "host/framework/testing/harness.h"

namespace schedhost::plugins {
namespace {

using framework::Code;
using framework::testing::Harness;

// NodeYaml renders a node with `taints` (a YAML flow sequence, "" for none).
std::string NodeYaml(const std::string& name, const std::string& taints) {
  std::string yaml = "apiVersion: v1\nkind: Node\nmetadata: {name: " + name + "}\n";
  if (!taints.empty()) yaml += "spec: {taints: " + taints + "}\n";
  yaml += "status: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}\n---\n";
  return yaml;
}

// PodYaml renders a pending pod with `tolerations` (a YAML flow sequence, "" for none).
std::string PodYaml(const std::string& tolerations) {
  std::string yaml =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
      "  containers: [{name: c, image: busybox}]\n";
  if (!tolerations.empty()) yaml += "  tolerations: " + tolerations + "\n";
  return yaml;
}

struct FilterCase {
  std::string name;
  std::string taints;
  std::string tolerations;
  std::string reason;  // "" when the node fits

  friend void PrintTo(const FilterCase& c, std::ostream* os) { *os << c.name; }
};

class TaintTolerationFilterTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(TaintTolerationFilterTest, RejectsFirstUntoleratedTaint) {
  const FilterCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({"TaintToleration"});
  h.AddObjects(NodeYaml("n1", c.taints));
  auto results = h.RunFilter(*h.MakePod(PodYaml(c.tolerations)));
  ASSERT_EQ(results.size(), 1u);
  const auto& s = results[0].status;
  if (c.reason.empty()) {
    EXPECT_EQ(s.code, Code::kSuccess) << s.Message();
  } else {
    EXPECT_EQ(s.code, Code::kUnschedulableAndUnresolvable);
    EXPECT_EQ(s.reasons, schedhost::framework::Reasons{schedhost::framework::Text(c.reason)});
    EXPECT_EQ(s.plugin, "TaintToleration");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TaintTolerationFilterTest,
    ::testing::Values(
        FilterCase{"no_taints_no_tolerations", "", "", ""},
        FilterCase{"untolerated_no_schedule",
                   "[{key: dedicated, value: user1, effect: NoSchedule}]", "",
                   "node(s) had untolerated taint(s)"},
        FilterCase{"tolerated_by_equal", "[{key: dedicated, value: user1, effect: NoSchedule}]",
                   "[{key: dedicated, operator: Equal, value: user1, effect: NoSchedule}]", ""},
        FilterCase{"equal_with_other_value", "[{key: dedicated, value: user1, effect: NoSchedule}]",
                   "[{key: dedicated, operator: Equal, value: user2, effect: NoSchedule}]",
                   "node(s) had untolerated taint(s)"},
        FilterCase{"exists_ignores_value", "[{key: foo, value: bar, effect: NoSchedule}]",
                   "[{key: foo, operator: Exists, effect: NoSchedule}]", ""},
        FilterCase{"all_taints_tolerated",
                   "[{key: dedicated, value: user2, effect: NoSchedule}, "
                   "{key: foo, value: bar, effect: NoSchedule}]",
                   "[{key: dedicated, operator: Equal, value: user2, effect: NoSchedule}, "
                   "{key: foo, operator: Exists, effect: NoSchedule}]",
                   ""},
        // PreferNoSchedule taints never block a node.
        FilterCase{"prefer_no_schedule_ignored",
                   "[{key: foo, value: bar, effect: PreferNoSchedule}]",
                   "[{key: foo, operator: Equal, value: blah, effect: PreferNoSchedule}]", ""},
        FilterCase{"untolerated_no_execute", "[{key: evict, value: now, effect: NoExecute}]", "",
                   "node(s) had untolerated taint(s)"},
        // A toleration's effect must match unless it is empty.
        FilterCase{"effect_mismatch", "[{key: evict, value: now, effect: NoExecute}]",
                   "[{key: evict, operator: Exists, effect: NoSchedule}]",
                   "node(s) had untolerated taint(s)"},
        FilterCase{"empty_effect_matches_all", "[{key: evict, value: now, effect: NoExecute}]",
                   "[{key: evict, operator: Exists}]", ""},
        FilterCase{"empty_key_exists_matches_all",
                   "[{key: a, value: \"1\", effect: NoSchedule}, {key: b, effect: NoExecute}]",
                   "[{operator: Exists}]", ""},
        // Whichever taint is untolerated, the reason names none (upstream since v1.33).
        FilterCase{"first_untolerated_reported_with_empty_value",
                   "[{key: a, value: \"1\", effect: NoSchedule}, {key: b, effect: NoExecute}, "
                   "{key: c, value: \"3\", effect: NoSchedule}]",
                   "[{key: a, operator: Exists}]", "node(s) had untolerated taint(s)"},
        // An empty operator means Equal: value "" does not match "bar".
        FilterCase{"default_operator_is_equal", "[{key: foo, value: bar, effect: NoSchedule}]",
                   "[{key: foo, effect: NoSchedule}]", "node(s) had untolerated taint(s)"}),
    [](const auto& info) { return info.param.name; });

struct ScoreCase {
  std::string name;
  std::string tolerations;
  std::vector<std::pair<std::string, std::string>> nodes;  // name, taints
  std::map<std::string, int64_t> raw;                      // untolerated PreferNoSchedule count
  std::map<std::string, int64_t> want;                     // normalised score

  friend void PrintTo(const ScoreCase& c, std::ostream* os) { *os << c.name; }
};

class TaintTolerationScoreTest : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(TaintTolerationScoreTest, ScoresAndNormalizes) {
  const ScoreCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({"TaintToleration"});
  std::string cluster;
  for (const auto& [name, taints] : c.nodes) cluster += NodeYaml(name, taints);
  h.AddObjects(cluster);
  auto pod = h.MakePod(PodYaml(c.tolerations));

  std::vector<framework::testing::ScoredNode> detailed;
  framework::Status s = h.RunScoreDetailed(*pod, detailed);
  ASSERT_TRUE(s.ok()) << s.Message();
  ASSERT_EQ(h.framework().ScorePluginNames(), std::vector<std::string>{"TaintToleration"});
  std::map<std::string, int64_t> raw;
  for (const auto& ns : detailed) {
    raw[std::string(ns.node_info->node->name.data, ns.node_info->node->name.len)] = ns.raw.at(0);
  }
  EXPECT_EQ(raw, c.raw);

  std::map<std::string, int64_t> got;
  for (const auto& [node, total] : h.RunScore(*pod)) got[node] = total;
  EXPECT_EQ(got, c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TaintTolerationScoreTest,
    ::testing::Values(
        ScoreCase{"tolerated_beats_untolerated",
                  "[{key: foo, operator: Equal, value: bar, effect: PreferNoSchedule}]",
                  {{"a", "[{key: foo, value: bar, effect: PreferNoSchedule}]"},
                   {"b", "[{key: foo, value: blah, effect: PreferNoSchedule}]"}},
                  {{"a", 0}, {"b", 1}},
                  {{"a", 100}, {"b", 0}}},
        // However many tolerated taints a node has, it scores like a node without taints.
        ScoreCase{"all_tolerated_score_alike",
                  "[{key: cpu-type, operator: Equal, value: arm64, effect: PreferNoSchedule}, "
                  "{key: disk-type, operator: Equal, value: ssd, effect: PreferNoSchedule}]",
                  {{"a", ""},
                   {"b", "[{key: cpu-type, value: arm64, effect: PreferNoSchedule}]"},
                   {"c",
                    "[{key: cpu-type, value: arm64, effect: PreferNoSchedule}, "
                    "{key: disk-type, value: ssd, effect: PreferNoSchedule}]"}},
                  {{"a", 0}, {"b", 0}, {"c", 0}},
                  {{"a", 100}, {"b", 100}, {"c", 100}}},
        ScoreCase{"more_untolerated_scores_lower",
                  "[{key: foo, operator: Equal, value: bar, effect: PreferNoSchedule}]",
                  {{"a", ""},
                   {"b", "[{key: cpu-type, value: arm64, effect: PreferNoSchedule}]"},
                   {"c",
                    "[{key: cpu-type, value: arm64, effect: PreferNoSchedule}, "
                    "{key: disk-type, value: ssd, effect: PreferNoSchedule}]"}},
                  {{"a", 0}, {"b", 1}, {"c", 2}},
                  {{"a", 100}, {"b", 50}, {"c", 0}}},
        // Only PreferNoSchedule taints count, and NoSchedule tolerations do not tolerate them.
        ScoreCase{"only_prefer_no_schedule_counts",
                  "[{key: cpu-type, operator: Equal, value: arm64, effect: NoSchedule}, "
                  "{key: disk-type, operator: Equal, value: ssd, effect: NoSchedule}]",
                  {{"a", ""},
                   {"b", "[{key: cpu-type, value: arm64, effect: NoSchedule}]"},
                   {"c",
                    "[{key: cpu-type, value: arm64, effect: PreferNoSchedule}, "
                    "{key: disk-type, value: ssd, effect: PreferNoSchedule}]"}},
                  {{"a", 0}, {"b", 0}, {"c", 2}},
                  {{"a", 100}, {"b", 100}, {"c", 0}}},
        // A toleration with an empty effect also tolerates PreferNoSchedule taints.
        ScoreCase{"empty_effect_toleration_counts",
                  "[{key: cpu-type, operator: Exists}]",
                  {{"a", "[{key: cpu-type, value: arm64, effect: PreferNoSchedule}]"},
                   {"b", "[{key: gpu, value: \"yes\", effect: PreferNoSchedule}]"}},
                  {{"a", 0}, {"b", 1}},
                  {{"a", 100}, {"b", 0}}},
        // Integer division as upstream: 100 - 100*1/3 = 67.
        ScoreCase{"integer_division",
                  "",
                  {{"a", ""},
                   {"b", "[{key: x, effect: PreferNoSchedule}]"},
                   {"c",
                    "[{key: x, effect: PreferNoSchedule}, {key: y, effect: PreferNoSchedule}, "
                    "{key: z, effect: PreferNoSchedule}]"}},
                  {{"a", 0}, {"b", 1}, {"c", 3}},
                  {{"a", 100}, {"b", 67}, {"c", 0}}},
        // Untolerable nodes are filtered out before scoring; every survivor has 0 -> 100.
        ScoreCase{"filtered_nodes_are_not_scored",
                  "",
                  {{"a", ""}, {"b", "[{key: x, effect: NoSchedule}]"}},
                  {{"a", 0}},
                  {{"a", 100}}}),
    [](const auto& info) { return info.param.name; });

TEST(TaintTolerationTest, ScheduleReportsUntoleratedTaints) {
  Harness h;
  h.OnlyPlugins({"TaintToleration"});
  h.AddObjects(NodeYaml("a", "[{key: dedicated, value: gpu, effect: NoSchedule}]") +
               NodeYaml("b", "[{key: dedicated, value: gpu, effect: NoSchedule}]") +
               NodeYaml("c", "[{key: maintenance, effect: NoExecute}]"));
  std::string failure;
  EXPECT_EQ(h.Schedule(*h.MakePod(PodYaml("")), &failure), "");
  EXPECT_EQ(failure, "0/3 nodes are available: 3 node(s) had untolerated taint(s).");
}

TEST(TaintTolerationTest, SchedulePrefersFewerUntoleratedPreferredTaints) {
  Harness h;
  h.OnlyPlugins({"TaintToleration"});
  h.AddObjects(
      NodeYaml("a", "[{key: x, effect: PreferNoSchedule}, {key: y, effect: PreferNoSchedule}]") +
      NodeYaml("b", "[{key: z, effect: PreferNoSchedule}]") +
      NodeYaml("c", "[{key: x, effect: PreferNoSchedule}, {key: z, effect: PreferNoSchedule}]"));
  // Untolerated counts a=2, b=1, c=2, then a=0, b=1, c=1 once x and y are tolerated.
  EXPECT_EQ(h.Schedule(*h.MakePod(PodYaml(""))), "b");
  EXPECT_EQ(
      h.Schedule(*h.MakePod(PodYaml("[{key: y, operator: Exists}, {key: x, operator: Exists}]"))),
      "a");
}

TEST(TaintTolerationTest, ScoreWithoutPreScoreStateIsAnError) {
  Harness h;
  h.OnlyPlugins({"TaintToleration"});
  h.AddObjects(NodeYaml("a", ""));
  auto& fw = h.framework();
  framework::CycleState empty;
  framework::ScoreTable out;
  auto pod = h.MakePod(PodYaml(""));
  framework::Status s = fw.RunScorePlugins(empty, pod->view(), {h.snapshot().views()[0]}, out);
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_NE(s.Message().find("reading \"PreScoreTaintToleration\" from cycle state: not found"),
            std::string::npos)
      << s.Message();
}

TEST(TaintTolerationTest, RegistersNodeAddAndUpdate) {
  Harness h;
  h.OnlyPlugins({"TaintToleration"});
  bool found = false;
  for (const auto& [plugin, events] : h.framework().EventsToRegister()) {
    if (plugin != "TaintToleration") continue;
    found = true;
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].event.resource, SCHEDHOST_RESOURCE_NODE);
    EXPECT_EQ(events[0].event.actions, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE);
  }
  EXPECT_TRUE(found);
}

TEST(TaintTolerationTest, RejectsArguments) {
  Harness h;
  h.OnlyPlugins({"TaintToleration"}, "[profile.plugin_config.TaintToleration]\nweight = 3\n");
  try {
    h.framework();
    FAIL() << "a profile with TaintToleration arguments was accepted";
  } catch (const std::exception& e) {
    // The error names the TOML location, the key and why it is refused.
    EXPECT_THAT(e.what(),
                ::testing::ContainsRegex(
                    R"(test\.toml:[0-9]+:[0-9]+: plugin_config\.TaintToleration\.weight: )"
                    R"(TaintToleration takes no arguments)"));
  }
}

}  // namespace
}  // namespace schedhost::plugins
