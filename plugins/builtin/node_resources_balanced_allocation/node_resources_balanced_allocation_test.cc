// NodeResourcesBalancedAllocation through the real framework over a real snapshot. Behaviour
// follows upstream's noderesources.BalancedAllocation (v1.26-v1.28): fraction = (node's
// requested + pod's request) / allocatable capped at 1 per configured resource; resources the
// node lacks, scalar resources the pod does not request, and native names other than cpu,
// memory and ephemeral-storage are left out; score = (1 - std) * 100 truncated, with
// std = |f1 - f2| / 2 for two fractions. Plain requests (no non-zero defaults) on both sides.
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

#include "host/framework/testing/harness.h"

namespace schedhost::plugins {
namespace {

using framework::testing::Harness;
using ::testing::HasSubstr;

constexpr char kName[] = "NodeResourcesBalancedAllocation";

// ReadmeToml returns the ```toml example of this plugin's README.md.
std::string ReadmeToml() {
  const char* src = std::getenv("SCHEDHOST_SOURCE_DIR");
  if (src == nullptr)
    throw std::runtime_error("SCHEDHOST_SOURCE_DIR is not set (run through ctest)");
  std::ifstream in(std::string(src) +
                   "/plugins/builtin/node_resources_balanced_allocation/README.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  const size_t begin = readme.find("```toml\n");
  if (begin == std::string::npos) throw std::runtime_error("README.md has no toml example");
  const size_t end = readme.find("```", begin + 8);
  return readme.substr(begin + 8, end - begin - 8);
}

// NodeYaml renders a node with `allocatable`, a flow map such as {cpu: "4", pods: "10"}.
std::string NodeYaml(const std::string& name, const std::string& allocatable) {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
         "}\nstatus: {allocatable: " + allocatable + "}\n---\n";
}

// PodYaml renders a pod (bound to `node` unless empty) whose container requests `requests`
// (none when empty) and whose init container, when `init` is not empty, requests `init`.
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
  return body.empty() ? ""
                      : "[profile.plugin_config.NodeResourcesBalancedAllocation]\n" + body + "\n";
}

std::map<std::string, int64_t> Scores(Harness& h, const std::string& pod) {
  std::map<std::string, int64_t> out;
  for (const auto& [node, total] : h.RunScore(*h.MakePod(pod))) out[node] = total;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Score
// ---------------------------------------------------------------------------------------------

struct ScoreCase {
  std::string name;
  std::string args;
  std::string cluster;
  std::string pod;
  std::map<std::string, int64_t> want;

  friend void PrintTo(const ScoreCase& c, std::ostream* os) { *os << c.name; }
};

class BalancedAllocationScoreTest : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(BalancedAllocationScoreTest, ScoresExactly) {
  const ScoreCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({kName}, PluginConfig(c.args));
  h.AddObjects(c.cluster);
  EXPECT_EQ(Scores(h, c.pod), c.want);
}

constexpr char kGpuArgs[] =
    R"(resources = [{ name = "cpu" }, { name = "memory" }, { name = "example.com/gpu" }])";

INSTANTIATE_TEST_SUITE_P(
    Cases, BalancedAllocationScoreTest,
    ::testing::Values(
        // The score is 50 + (50 + balance with the pod - balance without it) / 2, a balance
        // being (1 - std of the fractions) x 100, truncated.
        // Half the cpu and half the memory of an empty node: balanced before and after -> 75.
        ScoreCase{"EqualFractionsScore75",
                  "",
                  NodeYaml("n1", R"({cpu: "4", memory: 8Gi})"),
                  PodYaml("p", "", R"({cpu: "2", memory: 4Gi})"),
                  {{"n1", 75}}},
        // n1: with the pod cpu (1+1)/4 = 0.5, memory (1+2)/10 = 0.3 -> 90; without 0.25, 0.1
        // -> 92 -> 74. n2: cpu 1/6, memory 2/10 -> 98; empty -> 100 -> 74.
        ScoreCase{"TwoResourcesHalfTheDifference",
                  "",
                  NodeYaml("n1", R"({cpu: "4", memory: 10Gi})") +
                      NodeYaml("n2", R"({cpu: "6", memory: 10Gi})") +
                      PodYaml("existing", "n1", R"({cpu: "1", memory: 1Gi})"),
                  PodYaml("p", "", R"({cpu: "1", memory: 2Gi})"),
                  {{"n1", 74}, {"n2", 74}}},
        // cpu 3/1 is capped at 1; memory 0.5 -> 75; without the pod 1 and 0 -> 50 -> 87.
        ScoreCase{"FractionAboveOneIsCapped",
                  "",
                  NodeYaml("n1", R"({cpu: "1", memory: 10Gi})") +
                      PodYaml("existing", "n1", R"({cpu: "2"})"),
                  PodYaml("p", "", R"({cpu: "1", memory: 5Gi})"),
                  {{"n1", 87}}},
        // upstream (useRequested, no non-zero defaults): a pod without requests is best effort,
        // and PreScore skips the plugin for it, so it scores 0 everywhere.
        ScoreCase{"BestEffortPodIsSkipped",
                  "",
                  NodeYaml("n1", R"({cpu: "1", memory: 1Gi})"),
                  PodYaml("p", "", ""),
                  {{"n1", 0}}},
        // The node's pods count with their plain requests too: 0 and 0 before, 0.5 and 0.5
        // after -> 75 (non-zero defaults would make the node unbalanced before).
        ScoreCase{"ExistingPodsWithoutRequestsCountAsZero",
                  "",
                  NodeYaml("n1", R"({cpu: "1", memory: 1Gi})") + PodYaml("existing", "n1", ""),
                  PodYaml("p", "", R"({cpu: 500m, memory: 512Mi})"),
                  {{"n1", 75}}},
        // Three fractions: n1 0.5, 0.25, 0.25 -> std sqrt(1/72) -> 88, empty 100 -> 69; n2 has
        // no gpu, so only cpu and memory count: 0.5, 0.25 -> 87 -> 68.
        ScoreCase{"ResourceMissingOnNodeIsLeftOut",
                  kGpuArgs,
                  NodeYaml("n1", R"({cpu: "4", memory: 4Gi, example.com/gpu: "4"})") +
                      NodeYaml("n2", R"({cpu: "4", memory: 4Gi})"),
                  PodYaml("p", "", R"({cpu: "2", memory: 1Gi, example.com/gpu: "1"})"),
                  {{"n1", 69}, {"n2", 68}}},
        // The pod asks for no gpu: the gpu half used by another pod does not count (0.5, 0.25
        // -> 87 against 100 -> 68).
        ScoreCase{"ScalarResourceNotRequestedIsLeftOut",
                  kGpuArgs,
                  NodeYaml("n1", R"({cpu: "4", memory: 4Gi, example.com/gpu: "4"})") +
                      PodYaml("existing", "n1", R"({example.com/gpu: "2"})"),
                  PodYaml("p", "", R"({cpu: "2", memory: 1Gi})"),
                  {{"n1", 68}}},
        // ephemeral-storage counts even when the pod does not request it: 0.5, 0.5, 1 -> 76;
        // before 0, 0, 1 -> 52; the pod evens the node out -> 87.
        ScoreCase{"EphemeralStorageCountsWithoutPodRequest",
                  R"(resources = [{ name = "cpu" }, { name = "memory" }, )"
                  R"({ name = "ephemeral-storage" }])",
                  NodeYaml("n1", R"({cpu: "2", memory: 2Gi, ephemeral-storage: 10Gi})") +
                      PodYaml("existing", "n1", R"({ephemeral-storage: 10Gi})"),
                  PodYaml("p", "", R"({cpu: "1", memory: 1Gi})"),
                  {{"n1", 87}}},
        // "pods" is not a scored resource (0/10 would make the node less balanced with the pod).
        ScoreCase{"NativeResourceOtherThanCpuMemoryStorageIsLeftOut",
                  R"(resources = [{ name = "cpu" }, { name = "memory" }, { name = "pods" }])",
                  NodeYaml("n1", R"({cpu: "4", memory: 8Gi, pods: "10"})"),
                  PodYaml("p", "", R"({cpu: "2", memory: 4Gi})"),
                  {{"n1", 75}}},
        // One fraction has no deviation, before or after.
        ScoreCase{"SingleResourceAlways75",
                  R"(resources = [{ name = "cpu" }])",
                  NodeYaml("n1", R"({cpu: "4", memory: 8Gi})"),
                  PodYaml("p", "", R"({cpu: "3", memory: 1Gi})"),
                  {{"n1", 75}}},
        // No configured resource on the node: no fraction, no deviation.
        ScoreCase{"NodeWithoutTheResources",
                  "",
                  NodeYaml("n1", R"({pods: "10"})"),
                  PodYaml("p", "", R"({cpu: "1", memory: 1Gi})"),
                  {{"n1", 75}}},
        // Effective requests: max(init 3 cpu, containers 1 cpu) -> 0.75 vs 0.25 -> 75 against
        // an empty node's 100 -> 62.
        ScoreCase{"InitContainersCountAsUpstreamEffectiveRequests",
                  "",
                  NodeYaml("n1", R"({cpu: "4", memory: 4Gi})"),
                  PodYaml("p", "", R"({cpu: "1", memory: 1Gi})", R"({cpu: "3", memory: 1Gi})"),
                  {{"n1", 62}}},
        // Order and explicit weights of 1 change nothing: same as TwoResourcesHalfTheDifference.
        ScoreCase{"ExplicitResourcesInAnyOrder",
                  R"(resources = [{ name = "memory", weight = 1 }, { name = "cpu", weight = 1 }])",
                  NodeYaml("n1", R"({cpu: "4", memory: 10Gi})") +
                      PodYaml("existing", "n1", R"({cpu: "1", memory: 1Gi})"),
                  PodYaml("p", "", R"({cpu: "1", memory: 2Gi})"),
                  {{"n1", 74}}},
        // An empty list takes upstream's default (cpu and memory).
        ScoreCase{"EmptyResourceListMeansCpuAndMemory",
                  "resources = []",
                  NodeYaml("n1", R"({cpu: "4", memory: 10Gi})") +
                      PodYaml("existing", "n1", R"({cpu: "1", memory: 1Gi})"),
                  PodYaml("p", "", R"({cpu: "1", memory: 2Gi})"),
                  {{"n1", 74}}}),
    [](const auto& info) { return info.param.name; });

TEST(BalancedAllocationScore, ScoreWithoutPreScoreComputesTheSame) {
  Harness h;
  h.OnlyPlugins({kName}, "[profile.plugins.pre_score]\ndisabled = [{ name = \"" +
                             std::string(kName) + "\" }]\n");
  h.AddObjects(NodeYaml("n1", R"({cpu: "4", memory: 10Gi})") +
               NodeYaml("n2", R"({cpu: "6", memory: 10Gi})") +
               PodYaml("existing", "n1", R"({cpu: "1", memory: 1Gi})"));
  EXPECT_EQ(Scores(h, PodYaml("p", "", R"({cpu: "1", memory: 2Gi})")),
            (std::map<std::string, int64_t>{{"n1", 74}, {"n2", 74}}));
}

// A memory-heavy pod (1 cpu, 3Gi). With NodeResourcesFit (LeastAllocated) alone, `even` (cpu
// 30%, memory 50% after placing it: 70+50 -> 60) beats `uneven` (50%, 35%: 50+65 -> 57).
// Balanced allocation scores what the pod does to each node's balance: on `uneven` (cpu-heavy)
// it evens things out (82 -> 92: 80), on `even` it unbalances it (100 -> 90: 70), which turns
// the choice around.
TEST(BalancedAllocationScore, ScheduleTurnsTowardsTheNodeThePodBalances) {
  const std::string cluster = NodeYaml("uneven", R"({cpu: "10", memory: 10Gi, pods: "10"})") +
                              NodeYaml("even", R"({cpu: "10", memory: 10Gi, pods: "10"})") +
                              PodYaml("a", "uneven", R"({cpu: "4", memory: 512Mi})") +
                              PodYaml("b", "even", R"({cpu: "2", memory: 2Gi})");
  const std::string pod = PodYaml("p", "", R"({cpu: "1", memory: 3Gi})");
  {
    Harness h;
    h.OnlyPlugins({"NodeResourcesFit"});
    h.AddObjects(cluster);
    EXPECT_EQ(h.Schedule(*h.MakePod(pod)), "even");
  }
  Harness h;
  h.OnlyPlugins({"NodeResourcesFit", kName});
  h.AddObjects(cluster);
  EXPECT_EQ(Scores(h, pod),
            (std::map<std::string, int64_t>{{"uneven", 57 + 80}, {"even", 60 + 70}}));
  EXPECT_EQ(h.Schedule(*h.MakePod(pod)), "uneven");
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

class BalancedAllocationArgsTest : public ::testing::TestWithParam<ArgsCase> {};

TEST_P(BalancedAllocationArgsTest, RefusesBadArguments) {
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
    Cases, BalancedAllocationArgsTest,
    ::testing::Values(
        ArgsCase{"UnknownKey", R"(resource = [])",
                 "plugin_config.NodeResourcesBalancedAllocation.resource: unknown key; did you "
                 "mean \"resources\"?"},
        ArgsCase{"ResourcesNotAnArray", R"(resources = "cpu")",
                 "plugin_config.NodeResourcesBalancedAllocation.resources: expected an array of "
                 "tables, not a string"},
        ArgsCase{"ResourceNotATable", R"(resources = ["cpu"])",
                 "resources[0]: expected a table, not a string"},
        ArgsCase{"UnknownResourceKey", R"(resources = [{ name = "cpu", wieght = 1 }])",
                 "resources[0].wieght: unknown key; did you mean \"weight\"?"},
        ArgsCase{"NameMissing", R"(resources = [{ weight = 1 }])",
                 "resources[0].name: is required"},
        ArgsCase{"NameEmpty", R"(resources = [{ name = "cpu" }, { name = "" }])",
                 "resources[1].name: must not be empty"},
        ArgsCase{"NameNotAString", R"(resources = [{ name = 1 }])",
                 "resources[0].name: expected a string"},
        ArgsCase{"DuplicateName", R"(resources = [{ name = "memory" }, { name = "memory" }])",
                 "resources[1].name: resource \"memory\" is listed twice"},
        // upstream: ValidateNodeResourcesBalancedAllocationArgs refuses every weight but 1.
        ArgsCase{"WeightOtherThanOne", R"(resources = [{ name = "cpu", weight = 2 }])",
                 "resources[0].weight: must be 1 (balanced allocation does not weight "
                 "resources; got 2)"},
        ArgsCase{"WeightZero", R"(resources = [{ name = "cpu", weight = 0 }])",
                 "resources[0].weight: must be 1"},
        ArgsCase{"WeightNotAnInteger", R"(resources = [{ name = "cpu", weight = "1" }])",
                 "resources[0].weight: expected an integer"}),
    [](const auto& info) { return info.param.name; });

TEST(BalancedAllocationArgs, ReadmeExampleWorks) {
  Harness h;
  h.OnlyPlugins({kName}, ReadmeToml());
  h.AddObjects(NodeYaml("n1", R"({cpu: "4", memory: 4Gi, nvidia.com/gpu: "4"})"));
  // cpu 0.5, memory 0.25, gpu 0.25 -> std sqrt(1/72) -> 88, against the empty node's 100 -> 69.
  EXPECT_EQ(Scores(h, PodYaml("p", "", R"({cpu: "2", memory: 1Gi, nvidia.com/gpu: "1"})")),
            (std::map<std::string, int64_t>{{"n1", 69}}));
}

TEST(BalancedAllocationArgs, ImplementsPreScoreAndScoreOnly) {
  Harness h;
  h.OnlyPlugins({kName});
  for (const auto& [plugin, regs] : h.framework().EventsToRegister()) {
    EXPECT_NE(plugin, kName) << "upstream's BalancedAllocation registers no cluster events";
  }
}

}  // namespace
}  // namespace schedhost::plugins
