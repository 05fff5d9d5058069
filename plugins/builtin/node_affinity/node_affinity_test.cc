// NodeAffinity through the real framework over a real snapshot. Behaviour follows upstream's
// nodeaffinity plugin: nodeSelector and required terms (ORed terms, ANDed requirements) in
// Filter, added_affinity enforced with its own reason, PreFilter narrowing to metadata.name In
// sets (conflict when they are disjoint), preferred weights summed in Score and scaled by
// DefaultNormalizeScore (score * 100 / max).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/config/point.h"
#include "host/framework/plugin_instance.h"
#include "host/framework/testing/harness.h"

namespace schedhost::plugins {
namespace {

using framework::Code;
using framework::testing::Harness;
using ::testing::HasSubstr;

constexpr char kName[] = "NodeAffinity";

// ReadmeToml returns the ```toml example of this plugin's README.md.
std::string ReadmeToml(const std::string& folder) {
  const char* src = std::getenv("SCHEDHOST_SOURCE_DIR");
  if (src == nullptr)
    throw std::runtime_error("SCHEDHOST_SOURCE_DIR is not set (run through ctest)");
  std::ifstream in(std::string(src) + "/plugins/builtin/" + folder + "/README.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  const size_t begin = readme.find("```toml\n");
  if (begin == std::string::npos)
    throw std::runtime_error("README.md of " + folder + " has no toml example");
  const size_t end = readme.find("```", begin + 8);
  return readme.substr(begin + 8, end - begin - 8);
}
constexpr char kPodReason[] = "node(s) didn't match Pod's node affinity/selector";
constexpr char kEnforcedReason[] = "node(s) didn't match scheduler-enforced node affinity";
constexpr char kPreFilterReason[] = "node(s) didn't satisfy plugin(s) PreFilter result";

std::string NodeYaml(const std::string& name, const std::string& labels) {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name + ", labels: " + labels +
         "}\nstatus: {allocatable: {cpu: \"4\", memory: 4Gi, pods: \"10\"}}\n---\n";
}

// Three nodes: n1 zone a / ssd / gen 3, n2 zone b / hdd / gen 5, n3 without labels.
std::string ThreeNodes() {
  return NodeYaml("n1", R"({zone: a, disk: ssd, gen: "3"})") +
         NodeYaml("n2", R"({zone: b, disk: hdd, gen: "5"})") + NodeYaml("n3", "{}");
}

// PodYaml renders a pending pod; `spec` holds extra spec lines, already indented by two spaces.
std::string PodYaml(const std::string& name, const std::string& spec) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + "}\nspec:\n" + spec +
         "  containers:\n  - {name: c, image: busybox}\n";
}

// Required renders a required node affinity with `terms`, a flow sequence of terms.
std::string Required(const std::string& terms) {
  return "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
         "        nodeSelectorTerms: " +
         terms + "\n";
}

// Preferred renders preferred node affinity terms, a flow sequence of {weight, preference}.
std::string Preferred(const std::string& terms) {
  return "  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution: " +
         terms + "\n";
}

std::string Added(const std::string& body) {
  return "[profile.plugin_config.NodeAffinity]\n" + body + "\n";
}

// Verdict is one node's expected Filter outcome: "" passes, anything else is the one reason.
using Verdicts = std::map<std::string, std::string>;

Verdicts RunFilter(Harness& h, const std::string& pod) {
  Verdicts out;
  for (const auto& r : h.RunFilter(*h.MakePod(pod))) {
    if (r.status.ok()) {
      out[r.node] = "";
      continue;
    }
    EXPECT_EQ(r.status.code, Code::kUnschedulableAndUnresolvable)
        << r.node << ": " << r.status.Message();
    EXPECT_EQ(r.status.reasons.size(), 1u) << r.node;
    out[r.node] = r.status.Message();
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Filter and PreFilter
// ---------------------------------------------------------------------------------------------

struct FilterCase {
  std::string name;
  std::string spec;  // pod spec lines
  std::string args;  // plugin_config.NodeAffinity body
  Verdicts want;

  friend void PrintTo(const FilterCase& c, std::ostream* os) { *os << c.name; }
};

class NodeAffinityFilterTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(NodeAffinityFilterTest, MatchesRequiredAffinityAndSelector) {
  const FilterCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({kName}, c.args.empty() ? "" : Added(c.args));
  h.AddObjects(ThreeNodes());
  EXPECT_EQ(RunFilter(h, PodYaml("p", c.spec)), c.want);
}

const Verdicts kOnly1 = {{"n1", ""}, {"n2", kPodReason}, {"n3", kPodReason}};
const Verdicts kOnly2 = {{"n1", kPodReason}, {"n2", ""}, {"n3", kPodReason}};
const Verdicts kOnly3 = {{"n1", kPodReason}, {"n2", kPodReason}, {"n3", ""}};
const Verdicts kOnly12 = {{"n1", ""}, {"n2", ""}, {"n3", kPodReason}};
const Verdicts kNone = {{"n1", kPodReason}, {"n2", kPodReason}, {"n3", kPodReason}};
const Verdicts kAll = {{"n1", ""}, {"n2", ""}, {"n3", ""}};
constexpr char kAddedZoneA[] = R"(added_affinity = { )"
                               R"(required_during_scheduling_ignored_during_execution = { )"
                               R"(node_selector_terms = [{ match_expressions = [{ key = "zone", )"
                               R"(operator = "In", values = ["a"] }] }] } })";

INSTANTIATE_TEST_SUITE_P(
    Cases, NodeAffinityFilterTest,
    ::testing::Values(
        FilterCase{"NoConstraints", "", "", kAll},
        FilterCase{"NodeSelector", "  nodeSelector: {zone: a}\n", "", kOnly1},
        FilterCase{"NodeSelectorNeedsEveryLabel", "  nodeSelector: {zone: a, disk: hdd}\n", "",
                   kNone},
        FilterCase{"In",
                   Required("[{matchExpressions: [{key: zone, operator: In, values: [a, b]}]}]"),
                   "", kOnly12},
        FilterCase{"NotInMatchesMissingLabel",
                   Required("[{matchExpressions: [{key: zone, operator: NotIn, values: [a]}]}]"),
                   "",
                   {{"n1", kPodReason}, {"n2", ""}, {"n3", ""}}},
        FilterCase{"Exists", Required("[{matchExpressions: [{key: disk, operator: Exists}]}]"), "",
                   kOnly12},
        FilterCase{"DoesNotExist",
                   Required("[{matchExpressions: [{key: disk, operator: DoesNotExist}]}]"), "",
                   kOnly3},
        FilterCase{"Gt",
                   Required("[{matchExpressions: [{key: gen, operator: Gt, values: [\"4\"]}]}]"),
                   "", kOnly2},
        FilterCase{"Lt",
                   Required("[{matchExpressions: [{key: gen, operator: Lt, values: [\"4\"]}]}]"),
                   "", kOnly1},
        FilterCase{"TermsAreORed",
                   Required("[{matchExpressions: [{key: zone, operator: In, values: [a]}]}, "
                            "{matchExpressions: [{key: disk, operator: In, values: [hdd]}]}]"),
                   "", kOnly12},
        FilterCase{"RequirementsAreANDed",
                   Required("[{matchExpressions: [{key: zone, operator: In, values: [a, b]}, "
                            "{key: disk, operator: In, values: [ssd]}]}]"),
                   "", kOnly1},
        FilterCase{"SelectorAndAffinityBothApply",
                   "  nodeSelector: {disk: ssd}\n" +
                       Required("[{matchExpressions: [{key: zone, operator: In, values: [b]}]}]"),
                   "", kNone},
        FilterCase{
            "FieldNotInDoesNotNarrow",
            Required("[{matchFields: [{key: metadata.name, operator: NotIn, values: [n1]}]}]"),
            "",
            {{"n1", kPodReason}, {"n2", ""}, {"n3", ""}}},
        FilterCase{"FieldInNarrowsInPreFilter",
                   Required("[{matchFields: [{key: metadata.name, operator: In, values: [n2]}]}]"),
                   "",
                   {{"n1", kPreFilterReason}, {"n2", ""}, {"n3", kPreFilterReason}}},
        FilterCase{"NarrowedNodeStillFiltered",
                   Required("[{matchFields: [{key: metadata.name, operator: In, values: [n1]}], "
                            "matchExpressions: [{key: zone, operator: In, values: [b]}]}]"),
                   "",
                   {{"n1", kPodReason}, {"n2", kPreFilterReason}, {"n3", kPreFilterReason}}},
        FilterCase{"NarrowingIsTheUnionOverTerms",
                   Required("[{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}, "
                            "{matchFields: [{key: metadata.name, operator: In, values: [n3]}]}]"),
                   "",
                   {{"n1", ""}, {"n2", kPreFilterReason}, {"n3", ""}}},
        FilterCase{"ATermWithoutNameFieldAllowsEveryNode",
                   Required("[{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}, "
                            "{matchExpressions: [{key: zone, operator: In, values: [b]}]}]"),
                   "", kOnly12},
        FilterCase{"AddedAffinityIsEnforced",
                   "",
                   kAddedZoneA,
                   {{"n1", ""}, {"n2", kEnforcedReason}, {"n3", kEnforcedReason}}},
        FilterCase{"AddedAffinityFirstThenPod",
                   "  nodeSelector: {disk: hdd}\n",
                   kAddedZoneA,
                   {{"n1", kPodReason}, {"n2", kEnforcedReason}, {"n3", kEnforcedReason}}},
        FilterCase{"AddedAffinityByNodeName",
                   "",
                   R"(added_affinity = { )"
                   R"(required_during_scheduling_ignored_during_execution = { )"
                   R"(node_selector_terms = [{ match_fields = [{ key = "metadata.name", )"
                   R"(operator = "In", values = ["n3"] }] }] } })",
                   {{"n1", kEnforcedReason}, {"n2", kEnforcedReason}, {"n3", ""}}},
        FilterCase{"AddedPreferredOnlyDoesNotFilter", "",
                   R"(added_affinity = { )"
                   R"(preferred_during_scheduling_ignored_during_execution = [{ weight = 5, )"
                   R"(preference = { match_expressions = [{ key = "zone", operator = "In", )"
                   R"(values = ["a"] }] } }] })",
                   kAll}),
    [](const auto& info) { return info.param.name; });

TEST(NodeAffinityPreFilter, DisjointNameFieldsConflict) {
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(ThreeNodes());
  const std::string pod =
      PodYaml("p", Required("[{matchFields: [{key: metadata.name, operator: In, values: [n1]}, "
                            "{key: metadata.name, operator: In, values: [n2]}]}]"));
  for (const auto& r : h.RunFilter(*h.MakePod(pod))) {
    EXPECT_EQ(r.status.code, Code::kUnschedulableAndUnresolvable) << r.node;
    EXPECT_EQ(r.status.reasons, schedhost::framework::Reasons{"pod affinity terms conflict"})
        << r.node;
    EXPECT_EQ(r.status.plugin, kName);
  }
  std::string failure;
  EXPECT_EQ(h.Schedule(*h.MakePod(pod), &failure), "");
  EXPECT_EQ(failure, "0/3 nodes are available: pod affinity terms conflict.");
}

TEST(NodeAffinityFilter, ScheduleFailureMessage) {
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(ThreeNodes());
  std::string failure;
  EXPECT_EQ(h.Schedule(*h.MakePod(PodYaml("p", "  nodeSelector: {zone: c}\n")), &failure), "");
  EXPECT_EQ(failure,
            "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.");
  EXPECT_EQ(h.Schedule(*h.MakePod(PodYaml("q", "  nodeSelector: {zone: b}\n"))), "n2");
}

// ---------------------------------------------------------------------------------------------
// Score and NormalizeScore
// ---------------------------------------------------------------------------------------------

struct ScoreCase {
  std::string name;
  std::string spec;
  std::string args;
  std::map<std::string, int64_t> raw;         // Score
  std::map<std::string, int64_t> normalized;  // after NormalizeScore

  friend void PrintTo(const ScoreCase& c, std::ostream* os) { *os << c.name; }
};

class NodeAffinityScoreTest : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(NodeAffinityScoreTest, SumsWeightsAndNormalizes) {
  const ScoreCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({kName}, c.args.empty() ? "" : Added(c.args));
  h.AddObjects(ThreeNodes());
  auto pod = h.MakePod(PodYaml("p", c.spec));
  std::vector<framework::testing::ScoredNode> scores;
  ASSERT_TRUE(h.RunScoreDetailed(*pod, scores).ok());
  const auto names = h.framework().ScorePluginNames();
  const size_t col = std::find(names.begin(), names.end(), kName) - names.begin();
  ASSERT_LT(col, names.size());
  std::map<std::string, int64_t> raw, normalized;
  for (const auto& s : scores) {
    std::string node(s.node_info->node->name.data, s.node_info->node->name.len);
    raw[node] = s.raw[col];
    normalized[node] = s.weighted[col];  // OnlyPlugins enables it with weight 1
  }
  EXPECT_EQ(raw, c.raw);
  EXPECT_EQ(normalized, c.normalized);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, NodeAffinityScoreTest,
    ::testing::Values(
        // n1: 2 + 3, n2: 5 + 3, n3: 0; normalised by 8: 62, 100, 0.
        ScoreCase{
            "PodPreferredTerms",
            Preferred(
                "[{weight: 2, preference: {matchExpressions: [{key: zone, operator: In, values: "
                "[a]}]}}, "
                "{weight: 5, preference: {matchExpressions: [{key: disk, operator: In, values: "
                "[hdd]}]}}, "
                "{weight: 3, preference: {matchExpressions: [{key: disk, operator: Exists}]}}]"),
            "",
            {{"n1", 5}, {"n2", 8}, {"n3", 0}},
            {{"n1", 62}, {"n2", 100}, {"n3", 0}}},
        ScoreCase{"NoPreferredTermsSkipsScore",
                  "  nodeSelector: {}\n",
                  "",
                  {{"n1", 0}, {"n2", 0}, {"n3", 0}},
                  {{"n1", 0}, {"n2", 0}, {"n3", 0}}},
        ScoreCase{"NothingMatchesStaysZero",
                  Preferred("[{weight: 7, preference: {matchExpressions: [{key: zone, operator: "
                            "In, values: [z]}]}}]"),
                  "",
                  {{"n1", 0}, {"n2", 0}, {"n3", 0}},
                  {{"n1", 0}, {"n2", 0}, {"n3", 0}}},
        // Added 10 on zone b plus the pod's 2 on zone a: 2, 10, 0 -> 20, 100, 0.
        ScoreCase{
            "AddedPreferredTermsCount",
            Preferred("[{weight: 2, preference: {matchExpressions: [{key: zone, operator: In, "
                      "values: [a]}]}}]"),
            R"(added_affinity = { )"
            R"(preferred_during_scheduling_ignored_during_execution = [{ weight = )"
            R"(10, )"
            R"(preference = { match_expressions = [{ key = "zone", operator = "In", )"
            R"(values = ["b"] }] } }] })",
            {{"n1", 2}, {"n2", 10}, {"n3", 0}},
            {{"n1", 20}, {"n2", 100}, {"n3", 0}}},
        // Only added preferred terms: the pod has none, Score still runs. 3 on n3 by name.
        ScoreCase{"AddedPreferredAlone",
                  "",
                  R"(added_affinity = { )"
                  R"(preferred_during_scheduling_ignored_during_execution = [{ weight = 3, )"
                  R"(preference = { match_fields = [{ key = "metadata.name", operator = "In", )"
                  R"(values = ["n3"] }] } }] })",
                  {{"n1", 0}, {"n2", 0}, {"n3", 3}},
                  {{"n1", 0}, {"n2", 0}, {"n3", 100}}}),
    [](const auto& info) { return info.param.name; });

TEST(NodeAffinityScore, SchedulePrefersTheHeaviestMatch) {
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(ThreeNodes());
  const std::string pod = PodYaml(
      "p",
      Preferred(
          "[{weight: 1, preference: {matchExpressions: [{key: zone, operator: In, values: [a]}]}}, "
          "{weight: 9, preference: {matchExpressions: [{key: gen, operator: Gt, values: "
          "[\"4\"]}]}}]"));
  EXPECT_EQ(h.Schedule(*h.MakePod(pod)), "n2");
}

// ---------------------------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------------------------

struct ArgsCase {
  std::string name;
  std::string args;
  std::string error;

  friend void PrintTo(const ArgsCase& c, std::ostream* os) { *os << c.name; }
};

class NodeAffinityArgsTest : public ::testing::TestWithParam<ArgsCase> {};

TEST_P(NodeAffinityArgsTest, RefusesBadArguments) {
  const ArgsCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({kName}, Added(c.args));
  try {
    h.framework();
    FAIL() << "profile was accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr(c.error));
    EXPECT_THAT(e.what(), HasSubstr("test.toml:"));
  }
}

// Req wraps one requirement table into added_affinity's required block.
std::string Req(const std::string& requirement, const std::string& list = "match_expressions") {
  return "added_affinity = { required_during_scheduling_ignored_during_execution = { "
         "node_selector_terms = "
         "[{ " +
         list + " = [" + requirement + "] }] } }";
}
constexpr char kReqPath[] =
    "plugin_config.NodeAffinity.added_affinity.required_during_scheduling_ignored_during_execution."
    "node_selector_terms[0].";

INSTANTIATE_TEST_SUITE_P(
    Cases, NodeAffinityArgsTest,
    ::testing::Values(
        ArgsCase{"UnknownTopKey", "added_affinty = {}",
                 "plugin_config.NodeAffinity.added_affinty: unknown key"},
        ArgsCase{"UnknownAffinityKey", "added_affinity = { required = {} }",
                 "plugin_config.NodeAffinity.added_affinity.required: unknown key"},
        ArgsCase{
            "MissingTerms",
            "added_affinity = { required_during_scheduling_ignored_during_execution = {} }",
            "required_during_scheduling_ignored_during_execution.node_selector_terms: is required"},
        ArgsCase{"BadOperator", Req(R"({ key = "zone", operator = "Equals", values = ["a"] })"),
                 std::string(kReqPath) +
                     "match_expressions[0].operator: \"Equals\" is not a valid node "
                     "selector operator"},
        ArgsCase{"MissingOperator", Req(R"({ key = "zone", values = ["a"] })"),
                 std::string(kReqPath) + "match_expressions[0].operator: is required"},
        ArgsCase{
            "InWithoutValues", Req(R"({ key = "zone", operator = "In" })"),
            "match_expressions[0].values: for 'In', 'NotIn' operators, values set can't be empty"},
        ArgsCase{
            "ExistsWithValues", Req(R"({ key = "zone", operator = "Exists", values = ["a"] })"),
            "match_expressions[0].values: values set must be empty for exists and does not exist"},
        ArgsCase{
            "GtWithTwoValues", Req(R"({ key = "gen", operator = "Gt", values = ["1", "2"] })"),
            "match_expressions[0].values: for 'Gt', 'Lt' operators, exactly one value is required"},
        ArgsCase{
            "LtNotAnInteger", Req(R"({ key = "gen", operator = "Lt", values = ["x1"] })"),
            "match_expressions[0].values: for 'Gt', 'Lt' operators, the value must be an integer"},
        ArgsCase{"BadKey", Req(R"({ key = "bad key", operator = "Exists" })"),
                 "match_expressions[0].key: \"bad key\" is not a valid label key"},
        ArgsCase{"BadValue",
                 Req(R"({ key = "zone", operator = "In", values = ["ok", "bad value!"] })"),
                 "match_expressions[0].values[1]: \"bad value!\" is not a valid label value"},
        ArgsCase{"ValueNotAString", Req(R"({ key = "zone", operator = "In", values = [1] })"),
                 "match_expressions[0].values[0]: expected a string"},
        ArgsCase{
            "FieldOtherThanName",
            Req(R"({ key = "metadata.uid", operator = "In", values = ["x"] })", "match_fields"),
            "match_fields[0].key: \"metadata.uid\": the only supported field is metadata.name"},
        ArgsCase{"FieldWithExists",
                 Req(R"({ key = "metadata.name", operator = "Exists" })", "match_fields"),
                 "match_fields[0].operator: \"Exists\" is not a valid field selector operator (In, "
                 "NotIn)"},
        ArgsCase{"FieldWithTwoValues",
                 Req(R"({ key = "metadata.name", operator = "In", values = ["a", "b"] })",
                     "match_fields"),
                 "match_fields[0].values: must have one element"},
        ArgsCase{
            "PreferredWeightZero",
            R"(added_affinity = { )"
            R"(preferred_during_scheduling_ignored_during_execution = [{ weight = 0, )"
            R"(preference = {} }] })",
            "preferred_during_scheduling_ignored_during_execution[0].weight: must be in the range "
            "[1, 100], got 0"},
        ArgsCase{"PreferredWithoutPreference",
                 R"(added_affinity = { )"
                 R"(preferred_during_scheduling_ignored_during_execution = [{ weight = )"
                 R"(1 }] })",
                 "preferred_during_scheduling_ignored_during_execution[0].preference: is required"},
        ArgsCase{"TermNotATable",
                 R"(added_affinity = { )"
                 R"(required_during_scheduling_ignored_during_execution = { )"
                 R"(node_selector_terms = ["zone"] } })",
                 "node_selector_terms[0]: expected a table, not a string"}),
    [](const auto& info) { return info.param.name; });

TEST(NodeAffinityArgs, ReadmeExampleWorks) {
  Harness h;
  h.OnlyPlugins({kName}, ReadmeToml("node_affinity"));
  h.AddObjects(NodeYaml("batch-a", "{node-pool: batch, topology.kubernetes.io/zone: zone-a}") +
               NodeYaml("spot-b", "{node-pool: spot, topology.kubernetes.io/zone: zone-b}") +
               NodeYaml("web", "{node-pool: web}"));
  EXPECT_EQ(RunFilter(h, PodYaml("p", "")),
            (Verdicts{{"batch-a", ""}, {"spot-b", ""}, {"web", kEnforcedReason}}));
  EXPECT_EQ(h.Schedule(*h.MakePod(PodYaml("q", ""))), "batch-a");
}

// ---------------------------------------------------------------------------------------------
// Cluster events and queueing hint
// ---------------------------------------------------------------------------------------------

const schedhost_node_view* NodeView(Harness& h, const std::string& name) {
  for (const auto* v : h.snapshot().views()) {
    if (std::string(v->node->name.data, v->node->name.len) == name) return v->node;
  }
  throw std::runtime_error("no node " + name);
}

TEST(NodeAffinityEvents, RegistersNodeAddAndLabelUpdate) {
  Harness h;
  h.OnlyPlugins({kName});
  for (const auto& [plugin, regs] : h.framework().EventsToRegister()) {
    if (plugin != kName) continue;
    ASSERT_EQ(regs.size(), 1u);
    EXPECT_EQ(regs[0].event.resource, SCHEDHOST_RESOURCE_NODE);
    EXPECT_EQ(regs[0].event.actions, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE_NODE_LABEL);
    EXPECT_NE(regs[0].hint, nullptr);
    return;
  }
  FAIL() << "NodeAffinity registered no events";
}

struct HintCase {
  std::string name;
  std::string args;
  const char* before;  // node name or nullptr (an addition)
  const char* after;   // node name or nullptr (no node: always queue)
  int32_t want;

  friend void PrintTo(const HintCase& c, std::ostream* os) { *os << c.name; }
};

class NodeAffinityHintTest : public ::testing::TestWithParam<HintCase> {};

TEST_P(NodeAffinityHintTest, QueuesOnlyNodesThatNowMatch) {
  const HintCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({kName}, c.args.empty() ? "" : Added(c.args));
  h.AddObjects(NodeYaml("a1", "{zone: a}") + NodeYaml("a2", "{zone: a, disk: ssd}") +
               NodeYaml("b1", "{zone: b}"));
  const auto& inst = h.Plugin(kName);
  const schedhost_event_registration* regs = nullptr;
  size_t n = 0;
  ASSERT_EQ(inst.desc->events_to_register(inst.instance, &regs, &n), SCHEDHOST_SUCCESS);
  auto pod = h.MakePod(PodYaml("p", "  nodeSelector: {zone: a}\n"));
  schedhost_event_object old_obj{nullptr, c.before ? NodeView(h, c.before) : nullptr, nullptr};
  schedhost_event_object new_obj{nullptr, c.after ? NodeView(h, c.after) : nullptr, nullptr};
  EXPECT_EQ(regs[0].hint(inst.instance, pod->view(), &regs[0].event, &old_obj, &new_obj), c.want);
}

constexpr char kAddedDisk[] = R"(added_affinity = { )"
                              R"(required_during_scheduling_ignored_during_execution = { )"
                              R"(node_selector_terms = [{ match_expressions = [{ key = "disk", )"
                              R"(operator = "Exists" }] }] } })";

INSTANTIATE_TEST_SUITE_P(
    Cases, NodeAffinityHintTest,
    ::testing::Values(
        HintCase{"AddedNodeThatMatches", "", nullptr, "a1", SCHEDHOST_QUEUE},
        HintCase{"AddedNodeThatDoesNot", "", nullptr, "b1", SCHEDHOST_QUEUE_SKIP},
        HintCase{"UpdateStartsMatching", "", "b1", "a1", SCHEDHOST_QUEUE},
        HintCase{"UpdateStopsMatching", "", "a1", "b1", SCHEDHOST_QUEUE_SKIP},
        HintCase{"UpdateOfANodeThatAlreadyMatched", "", "a1", "a2", SCHEDHOST_QUEUE_SKIP},
        HintCase{"NoNodeInTheEvent", "", nullptr, nullptr, SCHEDHOST_QUEUE},
        HintCase{"AddedAffinityRefuses", kAddedDisk, nullptr, "a1", SCHEDHOST_QUEUE_SKIP},
        HintCase{"AddedAffinityAccepts", kAddedDisk, "a1", "a2", SCHEDHOST_QUEUE}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace schedhost::plugins
