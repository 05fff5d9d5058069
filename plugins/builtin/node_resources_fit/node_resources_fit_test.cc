// NodeResourcesFit through the real framework over a real snapshot. Behaviour follows upstream's
// noderesources.Fit: Filter lists every insufficiency (pods first, then cpu, memory,
// ephemeral-storage, scalar resources), extended resources may be ignored by name or group;
// Score uses non-zero cpu/memory requests and LeastAllocated, MostAllocated or
// RequestedToCapacityRatio (shape scores x10, rounded weighted average without zero scores).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

constexpr char kName[] = "NodeResourcesFit";

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

// NodeYaml renders a node with `allocatable`, a flow map such as {cpu: "4", pods: "10"}.
std::string NodeYaml(const std::string& name, const std::string& allocatable) {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
         "}\nstatus: {allocatable: " + allocatable + "}\n---\n";
}

// PodYaml renders a pod (bound to `node` unless empty) whose container requests `requests` and
// whose init container (when `init` is not empty) requests `init`.
std::string PodYaml(const std::string& name, const std::string& node, const std::string& requests,
                    const std::string& init = "") {
  std::string y =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", uid: " + name + "}\nspec:\n";
  if (!node.empty()) y += "  nodeName: " + node + "\n";
  if (!init.empty()) {
    y += "  initContainers:\n  - {name: init, image: busybox, resources: {requests: " + init +
         "}}\n";
  }
  y += "  containers:\n  - name: c\n    image: busybox\n";
  if (!requests.empty()) y += "    resources: {requests: " + requests + "}\n";
  return y + "---\n";
}

std::string PluginConfig(const std::string& body) {
  return body.empty() ? "" : "[profile.plugin_config.NodeResourcesFit]\n" + body + "\n";
}

// ---------------------------------------------------------------------------------------------
// Filter
// ---------------------------------------------------------------------------------------------

constexpr char kFilterNode[] = R"({cpu: "10", memory: "20", pods: "32", ephemeral-storage: "20", )"
                               R"(example.com/aaa: "5", hugepages-2Mi: "4"})";

struct FilterCase {
  std::string name;
  std::string existing;              // requests of a pod already on n1; "-" for no pod
  std::string incoming;              // requests of the pod being scheduled ("" for none)
  std::string init;                  // requests of the incoming pod's init container
  std::string args;                  // plugin_config body
  std::vector<std::string> reasons;  // empty: fits
  std::string node = kFilterNode;
  // The pod asks for more of some resource than the node has at all: no preemption can help,
  // so the status is UnschedulableAndUnresolvable (upstream's InsufficientResource.Unresolvable).
  bool unresolvable = false;

  friend void PrintTo(const FilterCase& c, std::ostream* os) { *os << c.name; }
};

class NodeResourcesFitFilterTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(NodeResourcesFitFilterTest, ReportsEveryInsufficientResource) {
  const FilterCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({kName}, PluginConfig(c.args));
  h.AddObjects(NodeYaml("n1", c.node));
  if (c.existing != "-") h.AddObjects(PodYaml("existing", "n1", c.existing));
  auto results = h.RunFilter(*h.MakePod(PodYaml("incoming", "", c.incoming, c.init)));
  ASSERT_EQ(results.size(), 1u);
  const auto& s = results[0].status;
  if (c.reasons.empty()) {
    EXPECT_EQ(s.code, Code::kSuccess) << s.Message();
  } else {
    EXPECT_EQ(s.code, c.unresolvable ? Code::kUnschedulableAndUnresolvable : Code::kUnschedulable)
        << s.Message();
    EXPECT_EQ(std::vector<std::string>(s.reasons.begin(), s.reasons.end()), c.reasons);
    EXPECT_EQ(s.plugin, kName);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, NodeResourcesFitFilterTest,
    ::testing::Values(
        FilterCase{"NoRequestsFitAFullNode", R"({cpu: "10", memory: "20"})", "", "", "", {}},
        FilterCase{
            "ExactFit", R"({cpu: "5", memory: "5"})", R"({cpu: "5", memory: "15"})", "", "", {}},
        FilterCase{"CpuAndMemoryShort",
                   R"({cpu: "10", memory: "20"})",
                   R"({cpu: "1", memory: "1"})",
                   "",
                   "",
                   {"Insufficient cpu", "Insufficient memory"}},
        FilterCase{"OnlyCpuShort",
                   R"({cpu: "9", memory: "5"})",
                   R"({cpu: "2", memory: "1"})",
                   "",
                   "",
                   {"Insufficient cpu"}},
        FilterCase{"OnlyMemoryShort",
                   R"({cpu: "5", memory: "19"})",
                   R"({cpu: "1", memory: "2"})",
                   "",
                   "",
                   {"Insufficient memory"}},
        FilterCase{"InitContainerLargerThanContainers",
                   R"({cpu: "8"})",
                   R"({cpu: "1"})",
                   R"({cpu: "3"})",
                   "",
                   {"Insufficient cpu"}},
        FilterCase{"InitContainerSmallerThanContainers",
                   R"({cpu: "8"})",
                   R"({cpu: "2"})",
                   R"({cpu: "1"})",
                   "",
                   {}},
        FilterCase{"EphemeralStorageShort",
                   R"({ephemeral-storage: "15"})",
                   R"({ephemeral-storage: "6"})",
                   "",
                   "",
                   {"Insufficient ephemeral-storage"}},
        FilterCase{"ExtendedResourceShort",
                   R"({example.com/aaa: "3"})",
                   R"({example.com/aaa: "3"})",
                   "",
                   "",
                   {"Insufficient example.com/aaa"}},
        FilterCase{"ExtendedResourceTheNodeLacks",
                   "-",
                   R"({example.com/bbb: "1"})",
                   "",
                   "",
                   {"Insufficient example.com/bbb"},
                   kFilterNode,
                   true},
        FilterCase{
            "ZeroRequestOfAbsentExtendedResource", "-", R"({example.com/bbb: "0"})", "", "", {}},
        FilterCase{"IgnoredResource",
                   "-",
                   R"({example.com/bbb: "1"})",
                   "",
                   R"(ignored_resources = ["example.com/bbb"])",
                   {}},
        FilterCase{"IgnoredResourceOnlyThatOne",
                   "-",
                   R"({example.com/bbb: "1", example.com/ccc: "1"})",
                   "",
                   R"(ignored_resources = ["example.com/bbb"])",
                   {"Insufficient example.com/ccc"},
                   kFilterNode,
                   true},
        FilterCase{"IgnoredResourceGroup",
                   "-",
                   R"({example.com/bbb: "1", example.com/aaa: "10"})",
                   "",
                   R"(ignored_resource_groups = ["example.com"])",
                   {}},
        FilterCase{"IgnoredGroupLeavesOtherDomains",
                   "-",
                   R"({other.io/x: "1"})",
                   "",
                   R"(ignored_resource_groups = ["example.com"])",
                   {"Insufficient other.io/x"},
                   kFilterNode,
                   true},
        FilterCase{"HugepagesAreNotExtendedAndCannotBeIgnored",
                   "-",
                   R"({memory: "2", hugepages-2Mi: "5"})",
                   "",
                   R"(ignored_resources = ["hugepages-2Mi"])",
                   {"Insufficient hugepages-2Mi"},
                   kFilterNode,
                   true},
        FilterCase{"EveryReasonInOrder",
                   "{}",
                   R"({cpu: "11", memory: "21", ephemeral-storage: "21", example.com/aaa: "6"})",
                   "",
                   "",
                   {"Too many pods", "Insufficient cpu", "Insufficient memory",
                    "Insufficient ephemeral-storage", "Insufficient example.com/aaa"},
                   R"({cpu: "10", memory: "20", pods: "1", ephemeral-storage: "20", )"
                   R"(example.com/aaa: "5"})",
                   true},
        FilterCase{"TooManyPodsForAPodRequestingNothing",
                   "{}",
                   "",
                   "",
                   "",
                   {"Too many pods"},
                   R"({cpu: "10", memory: "20", pods: "1"})"},
        FilterCase{
            "NoPodsAllocatableMeansNoRoom", "-", "", "", "", {"Too many pods"}, R"({cpu: "10"})"}),
    [](const auto& info) { return info.param.name; });

TEST(NodeResourcesFitFilter, ScheduleFailureMessageCountsReasons) {
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(NodeYaml("n1", R"({cpu: "1", memory: 1Gi, pods: "10"})") +
               NodeYaml("n2", R"({cpu: "1", memory: 1Gi, pods: "10"})") +
               NodeYaml("n3", R"({cpu: "4", memory: "100", pods: "10"})"));
  std::string failure;
  EXPECT_EQ(h.Schedule(*h.MakePod(PodYaml("p", "", R"({cpu: "2", memory: "200"})")), &failure), "");
  EXPECT_EQ(failure, "0/3 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.");
}

TEST(NodeResourcesFitFilter, MissingPreFilterStateIsAnError) {
  Harness h;
  h.OnlyPlugins({kName},
                "[profile.plugins.pre_filter]\ndisabled = [{ name = \"NodeResourcesFit\" }]\n");
  h.AddObjects(NodeYaml("n1", R"({cpu: "1", pods: "10"})"));
  auto results = h.RunFilter(*h.MakePod(PodYaml("p", "", "")));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status.code, Code::kError);
  EXPECT_THAT(results[0].status.Message(), HasSubstr("\"PreFilterNodeResourcesFit\""));
}

// ---------------------------------------------------------------------------------------------
// Score
// ---------------------------------------------------------------------------------------------

std::map<std::string, int64_t> Scores(Harness& h, const std::string& pod) {
  std::map<std::string, int64_t> out;
  for (const auto& [node, total] : h.RunScore(*h.MakePod(pod))) out[node] = total;
  return out;
}

// Two nodes: n1 (4 cpu, 10Gi, a pod using 1 cpu and 1Gi) and n2 (6 cpu, 10Gi, empty); the pod
// asks for 1 cpu and 2Gi. Utilisation after placing it: n1 cpu 50% mem 30%, n2 cpu 16% mem 20%.
std::string TwoNodes() {
  return NodeYaml("n1", R"({cpu: "4", memory: 10Gi, pods: "110"})") +
         NodeYaml("n2", R"({cpu: "6", memory: 10Gi, pods: "110"})") +
         PodYaml("existing", "n1", R"({cpu: "1", memory: 1Gi})");
}
const std::string kIncoming = PodYaml("incoming", "", R"({cpu: "1", memory: 2Gi})");

struct ScoreCase {
  std::string name;
  std::string args;
  std::string cluster;
  std::string pod;
  std::map<std::string, int64_t> want;

  friend void PrintTo(const ScoreCase& c, std::ostream* os) { *os << c.name; }
};

class NodeResourcesFitScoreTest : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(NodeResourcesFitScoreTest, ScoresExactly) {
  const ScoreCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({kName}, PluginConfig(c.args));
  h.AddObjects(c.cluster);
  EXPECT_EQ(Scores(h, c.pod), c.want);
}

const std::string kGpuCluster =
    NodeYaml("n1", R"({cpu: "4", memory: 10Gi, pods: "110", example.com/gpu: "4"})") +
    NodeYaml("n2", R"({cpu: "4", memory: 10Gi, pods: "110"})") +
    PodYaml("existing", "n1", R"({cpu: "1", memory: 1Gi, example.com/gpu: "1"})");
constexpr char kGpuArgs[] =
    R"(scoring_strategy = { type = "MostAllocated", resources = [{ name = "cpu", )"
    R"(weight = 1 }, { name = "memory", weight = 1 }, { name = "example.com/gpu", )"
    R"(weight = 2 }] })";

INSTANTIATE_TEST_SUITE_P(
    Cases, NodeResourcesFitScoreTest,
    ::testing::Values(
        // (4000-2000)*100/4000=50, (10-3)*100/10=70 -> 60; 5000*100/6000=83, 80 -> 81.
        ScoreCase{
            "LeastAllocatedIsTheDefault", "", TwoNodes(), kIncoming, {{"n1", 60}, {"n2", 81}}},
        ScoreCase{"LeastAllocatedExplicit",
                  R"(scoring_strategy = { type = "LeastAllocated" })",
                  TwoNodes(),
                  kIncoming,
                  {{"n1", 60}, {"n2", 81}}},
        // 50, 30 -> 40; 16, 20 -> 18.
        ScoreCase{"MostAllocated",
                  R"(scoring_strategy = { type = "MostAllocated" })",
                  TwoNodes(),
                  kIncoming,
                  {{"n1", 40}, {"n2", 18}}},
        // (50*3 + 30)/4 = 45; (16*3 + 20)/4 = 17.
        ScoreCase{"MostAllocatedWeighted",
                  R"(scoring_strategy = { type = "MostAllocated", resources = [{ name = "cpu", )"
                  R"(weight = 3 }, { name = "memory" }] })",
                  TwoNodes(),
                  kIncoming,
                  {{"n1", 45}, {"n2", 17}}},
        // Shape 0%->10, 100%->0: cpu 100-50=50, mem 70 -> 60; cpu 100-16=84, mem 80 -> 82.
        ScoreCase{"RequestedToCapacityRatioFalling",
                  R"(scoring_strategy = { type = "RequestedToCapacityRatio", )"
                  R"(requested_to_capacity_ratio = { shape = [{ utilization = 0, score = 10 }, )"
                  R"({ utilization = 100, score = 0 }] } })",
                  TwoNodes(),
                  kIncoming,
                  {{"n1", 60}, {"n2", 82}}},
        // Weights cpu 1, memory 2: (50 + 60)/3 = 36.7 -> 37; (16 + 40)/3 = 18.7 -> 19 (rounded).
        ScoreCase{"RequestedToCapacityRatioRoundsTheAverage",
                  R"(scoring_strategy = { type = "RequestedToCapacityRatio", )"
                  R"(resources = [{ name = "cpu", weight = 1 }, { name = "memory", weight = 2 }], )"
                  R"(requested_to_capacity_ratio = { shape = [{ utilization = 0, score = 0 }, )"
                  R"({ utilization = 100, score = 10 }] } })",
                  TwoNodes(),
                  kIncoming,
                  {{"n1", 37}, {"n2", 19}}},
        // Shape flat 0 up to 40%: n1 cpu 0+100*(50-40)/60=16, memory 0 is left out -> 16; n2 all 0.
        ScoreCase{"RequestedToCapacityRatioLeavesZeroScoresOut",
                  R"(scoring_strategy = { type = "RequestedToCapacityRatio", )"
                  R"(requested_to_capacity_ratio = { shape = [{ utilization = 0, score = 0 }, )"
                  R"({ utilization = 40, score = 0 }, { utilization = 100, score = 10 }] } })",
                  TwoNodes(),
                  kIncoming,
                  {{"n1", 16}, {"n2", 0}}},
        // No requests: 100m and 200Mi count for the pod and for the pod already on n1.
        ScoreCase{"NonZeroDefaultsForPodAndNode",
                  "",
                  NodeYaml("n1", R"({cpu: "1", memory: 1000Mi, pods: "110"})") +
                      NodeYaml("n2", R"({cpu: "1", memory: 1000Mi, pods: "110"})") +
                      PodYaml("existing", "n1", ""),
                  PodYaml("incoming", "", ""),
                  {{"n1", 70}, {"n2", 85}}},
        // 100m > 50m allocatable: LeastAllocated gives cpu 0, memory (1024-200)*100/1024=80 -> 40.
        ScoreCase{"LeastAllocatedOverCapacityIsZero",
                  "",
                  NodeYaml("n1", R"({cpu: 50m, memory: 1Gi, pods: "110"})"),
                  PodYaml("incoming", "", ""),
                  {{"n1", 40}}},
        // MostAllocated caps requested at allocatable: cpu 100, memory 19 -> 59.
        ScoreCase{"MostAllocatedOverCapacityIsCapped",
                  R"(scoring_strategy = { type = "MostAllocated" })",
                  NodeYaml("n1", R"({cpu: 50m, memory: 1Gi, pods: "110"})"),
                  PodYaml("incoming", "", ""),
                  {{"n1", 59}}},
        // gpu 2/4 -> 50: (50 + 30 + 2*50)/4 = 45; n2 has no gpu and fails Filter.
        ScoreCase{"ExtendedResourceRequested",
                  kGpuArgs,
                  kGpuCluster,
                  PodYaml("incoming", "", R"({cpu: "1", memory: 2Gi, example.com/gpu: "1"})"),
                  {{"n1", 45}}},
        // Not requested: the gpu is left out: (50+30)/2 = 40; (25+20)/2 = 22.
        ScoreCase{"ExtendedResourceNotRequestedIsLeftOut",
                  kGpuArgs,
                  kGpuCluster,
                  kIncoming,
                  {{"n1", 40}, {"n2", 22}}},
        // Ignored by Filter, n2 is feasible and, lacking the gpu, is scored on cpu and memory.
        ScoreCase{"ExtendedResourceMissingOnNodeIsLeftOut",
                  std::string(kGpuArgs) + "\nignored_resources = [\"example.com/gpu\"]",
                  kGpuCluster,
                  PodYaml("incoming", "", R"({cpu: "1", memory: 2Gi, example.com/gpu: "1"})"),
                  {{"n1", 45}, {"n2", 22}}},
        // Ephemeral storage counts even when the pod asks for none; no allocatable -> 0.
        ScoreCase{"EphemeralStorage",
                  R"(scoring_strategy = { type = "LeastAllocated", )"
                  R"(resources = [{ name = "ephemeral-storage" }] })",
                  NodeYaml("n1", R"({ephemeral-storage: "100", pods: "110"})") +
                      NodeYaml("n2", R"({cpu: "1", pods: "110"})") +
                      PodYaml("existing", "n1", R"({ephemeral-storage: "20"})"),
                  PodYaml("incoming", "", ""),
                  {{"n1", 80}, {"n2", 0}}}),
    [](const auto& info) { return info.param.name; });

TEST(NodeResourcesFitScore, ScoreWithoutPreScoreComputesTheSame) {
  Harness h;
  h.OnlyPlugins({kName},
                "[profile.plugins.pre_score]\ndisabled = [{ name = \"NodeResourcesFit\" }]\n");
  h.AddObjects(TwoNodes());
  EXPECT_EQ(Scores(h, kIncoming), (std::map<std::string, int64_t>{{"n1", 60}, {"n2", 81}}));
}

TEST(NodeResourcesFitScore, SchedulePicksTheLeastAllocatedNode) {
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(TwoNodes());
  EXPECT_EQ(h.Schedule(*h.MakePod(kIncoming)), "n2");
  EXPECT_EQ(h.bindings(), std::vector<std::string>{"default/incoming -> n2"});
}

// ---------------------------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------------------------

struct ArgsCase {
  std::string name;
  std::string args;
  std::string error;  // expected substring of the profile error

  friend void PrintTo(const ArgsCase& c, std::ostream* os) { *os << c.name; }
};

class NodeResourcesFitArgsTest : public ::testing::TestWithParam<ArgsCase> {};

TEST_P(NodeResourcesFitArgsTest, RefusesBadArguments) {
  const ArgsCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({kName}, PluginConfig(c.args));
  try {
    h.framework();
    FAIL() << "profile was accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr(c.error));
    EXPECT_THAT(e.what(), HasSubstr("test.toml:"));  // the location of the bad value
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, NodeResourcesFitArgsTest,
    ::testing::Values(
        ArgsCase{"UnknownKey", R"(scoring_stratgy = {})",
                 "plugin_config.NodeResourcesFit.scoring_stratgy: unknown key"},
        ArgsCase{"IgnoredResourcesNotAnArray", R"(ignored_resources = "example.com/a")",
                 "plugin_config.NodeResourcesFit.ignored_resources: expected an array of strings"},
        ArgsCase{"IgnoredResourceNotAQualifiedName", R"(ignored_resources = ["bad name!"])",
                 "plugin_config.NodeResourcesFit.ignored_resources[0]: \"bad name!\" is not a "
                 "qualified name"},
        ArgsCase{"IgnoredGroupWithSlash", R"(ignored_resource_groups = ["example.com/a"])",
                 "plugin_config.NodeResourcesFit.ignored_resource_groups[0]: \"example.com/a\": "
                 "resource "
                 "group name can't contain '/'"},
        ArgsCase{"UnsupportedType", R"(scoring_strategy = { type = "Balanced" })",
                 "plugin_config.NodeResourcesFit.scoring_strategy.type: unsupported value "
                 "\"Balanced\"; supported values: \"LeastAllocated\", \"MostAllocated\", "
                 "\"RequestedToCapacityRatio\""},
        ArgsCase{"MissingType", R"(scoring_strategy = { resources = [{ name = "cpu" }] })",
                 "plugin_config.NodeResourcesFit.scoring_strategy.type: is required"},
        ArgsCase{"ZeroWeight",
                 R"(scoring_strategy = { type = "MostAllocated", resources = [{ name = "cpu", )"
                 R"(weight = 0 }] })",
                 "scoring_strategy.resources[0].weight: must be in the range [1, 100], got 0"},
        ArgsCase{"WeightTooHigh",
                 R"(scoring_strategy = { type = "MostAllocated", resources = [{ name = "memory", )"
                 R"(weight = 101 }] })",
                 "scoring_strategy.resources[0].weight: must be in the range [1, 100], got 101"},
        ArgsCase{"WeightNotAnInteger",
                 R"(scoring_strategy = { type = "MostAllocated", resources = [{ name = "cpu", )"
                 R"(weight = "1" }] })",
                 "scoring_strategy.resources[0].weight: expected an integer"},
        ArgsCase{"ResourceWithoutName",
                 R"(scoring_strategy = { type = "MostAllocated", resources = [{ weight = 1 }] })",
                 "scoring_strategy.resources[0].name: is required"},
        ArgsCase{"ResourceListedTwice",
                 R"(scoring_strategy = { type = "MostAllocated", resources = [{ name = "cpu" }, )"
                 R"({ name = "cpu" }] })",
                 "scoring_strategy.resources[1].name: resource \"cpu\" is listed twice"},
        ArgsCase{"RatioWithoutShape", R"(scoring_strategy = { type = "RequestedToCapacityRatio" })",
                 "scoring_strategy.requested_to_capacity_ratio: is required for type "
                 "RequestedToCapacityRatio"},
        ArgsCase{"EmptyShape",
                 R"(scoring_strategy = { type = "RequestedToCapacityRatio", )"
                 R"(requested_to_capacity_ratio = { shape = [] } })",
                 "requested_to_capacity_ratio.shape: at least one point must be specified"},
        ArgsCase{
            "ShapeNotIncreasing",
            R"(scoring_strategy = { type = "RequestedToCapacityRatio", )"
            R"(requested_to_capacity_ratio = { shape = [{ utilization = 50, score = 1 }, )"
            R"({ utilization = 50, score = 2 }] } })",
            "requested_to_capacity_ratio.shape[1].utilization: utilization values must be sorted "
            "in "
            "increasing order"},
        ArgsCase{
            "UtilizationOutOfRange",
            R"(scoring_strategy = { type = "RequestedToCapacityRatio", )"
            R"(requested_to_capacity_ratio = { shape = [{ utilization = 101, score = 1 }] } })",
            "requested_to_capacity_ratio.shape[0].utilization: must be in the range [0, 100], "
            "got 101"},
        ArgsCase{
            "ShapeScoreOutOfRange",
            R"(scoring_strategy = { type = "RequestedToCapacityRatio", )"
            R"(requested_to_capacity_ratio = { shape = [{ utilization = 10, score = 11 }] } })",
            "requested_to_capacity_ratio.shape[0].score: must be in the range [0, 10], got 11"},
        ArgsCase{"ShapePointWithoutScore",
                 R"(scoring_strategy = { type = "RequestedToCapacityRatio", )"
                 R"(requested_to_capacity_ratio = { shape = [{ utilization = 10 }] } })",
                 "requested_to_capacity_ratio.shape[0].score: is required"}),
    [](const auto& info) { return info.param.name; });

TEST(NodeResourcesFitArgs, ReadmeExampleWorks) {
  Harness h;
  h.OnlyPlugins({kName}, ReadmeToml("node_resources_fit"));
  h.AddObjects(NodeYaml("n1", R"({cpu: "4", memory: 4Gi, pods: "10", nvidia.com/gpu: "2"})"));
  // example.com is an ignored group; the gpu request is checked and scored.
  auto pod =
      PodYaml("p", "", R"({cpu: "2", memory: 2Gi, nvidia.com/gpu: "1", example.com/x: "1"})");
  auto results = h.RunFilter(*h.MakePod(pod));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].status.ok()) << results[0].status.Message();
  // Shape 0->0, 100->10: cpu 50, memory 50, gpu 50 (weight 3) -> 50.
  EXPECT_EQ(Scores(h, pod), (std::map<std::string, int64_t>{{"n1", 50}}));
}

// ---------------------------------------------------------------------------------------------
// Cluster events and queueing hints
// ---------------------------------------------------------------------------------------------

const schedhost_node_view* NodeView(Harness& h, const std::string& name) {
  for (const auto* v : h.snapshot().views()) {
    if (std::string(v->node->name.data, v->node->name.len) == name) return v->node;
  }
  throw std::runtime_error("no node " + name);
}

TEST(NodeResourcesFitEvents, RegistersPodDeleteAndNodeAddOrAllocatableUpdate) {
  Harness h;
  h.OnlyPlugins({kName});
  for (const auto& [plugin, regs] : h.framework().EventsToRegister()) {
    if (plugin != kName) continue;
    ASSERT_EQ(regs.size(), 2u);
    EXPECT_EQ(regs[0].event.resource, SCHEDHOST_RESOURCE_POD);
    EXPECT_EQ(regs[0].event.actions, SCHEDHOST_ACTION_DELETE);
    EXPECT_EQ(regs[1].event.resource, SCHEDHOST_RESOURCE_NODE);
    EXPECT_EQ(regs[1].event.actions,
              SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE_NODE_ALLOCATABLE);
    EXPECT_NE(regs[0].hint, nullptr);
    EXPECT_NE(regs[1].hint, nullptr);
    return;
  }
  FAIL() << "NodeResourcesFit registered no events";
}

TEST(NodeResourcesFitEvents, NodeHintQueuesOnlyWhenThePodCouldNowFit) {
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(NodeYaml("small", R"({cpu: "1", memory: 4Gi, pods: "10"})") +
               NodeYaml("big", R"({cpu: "4", memory: 4Gi, pods: "10"})") +
               NodeYaml("big-labelled", R"({cpu: "4", memory: 4Gi, pods: "10"})") +
               NodeYaml("no-pods", R"({cpu: "4", memory: 4Gi})"));
  const auto& inst = h.Plugin(kName);
  const schedhost_event_registration* regs = nullptr;
  size_t n = 0;
  ASSERT_EQ(inst.desc->events_to_register(inst.instance, &regs, &n), SCHEDHOST_SUCCESS);
  auto pod = h.MakePod(PodYaml("p", "", R"({cpu: "2", memory: 1Gi})"));
  auto hint = [&](const char* before, const char* after) {
    schedhost_event_object old_obj{nullptr, before ? NodeView(h, before) : nullptr, nullptr};
    schedhost_event_object new_obj{nullptr, after ? NodeView(h, after) : nullptr, nullptr};
    return regs[1].hint(inst.instance, pod->view(), &regs[1].event, &old_obj, &new_obj);
  };
  EXPECT_EQ(hint(nullptr, "small"), SCHEDHOST_QUEUE_SKIP);       // added, still too small
  EXPECT_EQ(hint(nullptr, "no-pods"), SCHEDHOST_QUEUE_SKIP);     // added, takes no pods
  EXPECT_EQ(hint(nullptr, "big"), SCHEDHOST_QUEUE);              // added, fits
  EXPECT_EQ(hint("small", "big"), SCHEDHOST_QUEUE);              // cpu grew enough
  EXPECT_EQ(hint("big", "small"), SCHEDHOST_QUEUE_SKIP);         // shrank
  EXPECT_EQ(hint("big", "big-labelled"), SCHEDHOST_QUEUE_SKIP);  // fits, but nothing grew
  EXPECT_EQ(hint("no-pods", "big"), SCHEDHOST_QUEUE);            // pods allocatable grew
}

TEST(NodeResourcesFitEvents, PodHintSkipsDeletedUnboundPods) {
  Harness h;
  h.OnlyPlugins({kName});
  const auto& inst = h.Plugin(kName);
  const schedhost_event_registration* regs = nullptr;
  size_t n = 0;
  ASSERT_EQ(inst.desc->events_to_register(inst.instance, &regs, &n), SCHEDHOST_SUCCESS);
  auto pod = h.MakePod(PodYaml("p", "", R"({cpu: "2"})"));
  auto bound = h.MakePod(PodYaml("bound", "n1", R"({cpu: "1"})"));
  auto pending = h.MakePod(PodYaml("pending", "", R"({cpu: "1"})"));
  schedhost_event_object was_bound{bound->view(), nullptr, nullptr};
  schedhost_event_object was_pending{pending->view(), nullptr, nullptr};
  EXPECT_EQ(regs[0].hint(inst.instance, pod->view(), &regs[0].event, &was_bound, nullptr),
            SCHEDHOST_QUEUE);
  EXPECT_EQ(regs[0].hint(inst.instance, pod->view(), &regs[0].event, &was_pending, nullptr),
            SCHEDHOST_QUEUE_SKIP);
}

}  // namespace
}  // namespace schedhost::plugins
