// The node summary (abi 1.3) through the loaded builtin plugins: NodeUnschedulable,
// TaintToleration, NodeResourcesFit, NodeResourcesBalancedAllocation and ImageLocality read
// what they can from a node info view's summary and the rest from the view and its arrays. With
// the summaries hidden (as an older host's views or hand-made ones would be) every verdict,
// reason and score must come out the same, on nodes that exercise each field: cordoned,
// tainted, full, short of cpu or memory, with extended resources, images, and pods that ask for
// ephemeral storage or a scalar resource (which the summary does not carry).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "host/framework/testing/harness.h"

namespace schedhost::integration {
namespace {

using framework::Code;
using framework::testing::Harness;
using framework::testing::ScoredNode;

std::string Node(const std::string& name, const std::string& allocatable,
                 const std::string& spec = "", const std::string& extra_status = "") {
  std::string y = "apiVersion: v1\nkind: Node\nmetadata: {name: " + name + "}\n";
  if (!spec.empty()) y += "spec: " + spec + "\n";
  y += "status:\n  allocatable: " + allocatable + "\n" + extra_status;
  return y + "---\n";
}

std::string Pod(const std::string& name, const std::string& node, const std::string& requests,
                const std::string& extra_spec = "", const std::string& image = "busybox") {
  std::string y =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", uid: uid-" + name + "}\nspec:\n";
  if (!node.empty()) y += "  nodeName: " + node + "\n";
  y += extra_spec;
  y += "  containers:\n  - name: c\n    image: " + image + "\n";
  if (!requests.empty()) y += "    resources: {requests: " + requests + "}\n";
  return y + "---\n";
}

std::string Cluster() {
  const std::string std_alloc = R"({cpu: "4", memory: 8Gi, pods: "110", ephemeral-storage: 10Gi})";
  return Node("open", std_alloc, "",
              "  images:\n  - names: [\"nginx:1.25\"]\n    sizeBytes: 300000000\n") +
         Node("cordoned", std_alloc, "{unschedulable: true}") +
         Node("tainted", std_alloc,
              "{taints: [{key: dedicated, value: infra, effect: NoSchedule}, "
              "{key: spot, effect: PreferNoSchedule}]}") +
         Node("preferred-off", std_alloc, "{taints: [{key: spot, effect: PreferNoSchedule}]}") +
         Node("two-pods", R"({cpu: "4", memory: 8Gi, pods: "2"})") +
         Node("busy", R"({cpu: "2", memory: 4Gi, pods: "110"})") +
         Node("gpu", R"({cpu: "8", memory: 32Gi, pods: "110", example.com/gpu: "2"})") +
         Node("no-memory", R"({cpu: "4", pods: "110"})") +
         Pod("a", "two-pods", R"({cpu: 100m, memory: 100Mi})") +
         Pod("b", "two-pods", R"({cpu: 100m, memory: 100Mi})") +
         Pod("c", "busy", R"({cpu: 1500m, memory: 3Gi})") +
         Pod("d", "gpu", R"({cpu: "1", memory: 1Gi, example.com/gpu: "1"})") +
         Pod("e", "open", R"({cpu: 300m, memory: 1Gi, ephemeral-storage: 1Gi})");
}

std::vector<std::string> IncomingPods() {
  const std::string tolerate =
      "  tolerations: [{key: dedicated, operator: Equal, value: infra, effect: NoSchedule}, "
      "{key: node.kubernetes.io/unschedulable, operator: Exists, effect: NoSchedule}]\n";
  return {
      Pod("plain", "", R"({cpu: 100m, memory: 500Mi})"),
      Pod("no-requests", "", ""),
      Pod("big-cpu", "", R"({cpu: "3"})"),
      Pod("big-memory", "", R"({memory: 6Gi})"),
      Pod("ephemeral", "", R"({cpu: 100m, ephemeral-storage: 9500Mi})"),
      Pod("gpu", "", R"({cpu: 100m, example.com/gpu: "1"})"),
      Pod("tolerant", "", R"({cpu: 100m, memory: 500Mi})", tolerate),
      Pod("nginx", "", R"({cpu: 200m, memory: 1Gi})", "", "nginx:1.25"),
  };
}

struct Verdict {
  Code code;
  std::vector<std::string> reasons;
  bool operator==(const Verdict&) const = default;
};

std::map<std::string, Verdict> Filter(Harness& h, const model::Pod& pod) {
  std::map<std::string, Verdict> out;
  for (const auto& r : h.RunFilter(pod)) {
    Verdict& v = out[r.node];
    v.code = r.status.code;
    for (const auto& reason : r.status.reasons) v.reasons.emplace_back(reason);
  }
  return out;
}

std::map<std::string, std::pair<std::vector<int64_t>, std::vector<int64_t>>> Score(
    Harness& h, const model::Pod& pod) {
  std::vector<ScoredNode> rows;
  const framework::Status s = h.RunScoreDetailed(pod, rows);
  EXPECT_TRUE(s.ok()) << s.Message();
  std::map<std::string, std::pair<std::vector<int64_t>, std::vector<int64_t>>> out;
  for (const ScoredNode& r : rows) {
    out[std::string(r.node_info->node->name.data, r.node_info->node->name.len)] = {r.raw,
                                                                                   r.weighted};
  }
  return out;
}

class NodeSummaryTest : public ::testing::TestWithParam<std::string> {};

TEST_P(NodeSummaryTest, PluginsAnswerTheSameWithAndWithoutIt) {
  Harness h;
  h.OnlyPlugins({"NodeUnschedulable", "TaintToleration", "NodeResourcesFit",
                 "NodeResourcesBalancedAllocation", "ImageLocality"},
                GetParam());
  h.AddObjects(Cluster());
  for (const std::string& yaml : IncomingPods()) {
    const auto pod = h.MakePod(yaml);
    SCOPED_TRACE(pod->name());
    h.HideSummaries(false);
    const auto filtered = Filter(h, *pod);
    const auto scored = Score(h, *pod);
    h.HideSummaries(true);
    EXPECT_EQ(Filter(h, *pod), filtered);
    EXPECT_EQ(Score(h, *pod), scored);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Configs, NodeSummaryTest,
    ::testing::Values(
        "",
        "[profile.plugin_config.NodeResourcesFit]\n"
        R"(scoring_strategy = { type = "MostAllocated", resources = [{ name = "cpu", weight = 1 }, )"
        R"({ name = "memory", weight = 2 }, { name = "example.com/gpu", weight = 3 }, )"
        R"({ name = "ephemeral-storage", weight = 1 }] })"
        "\n[profile.plugin_config.NodeResourcesBalancedAllocation]\n"
        R"(resources = [{ name = "cpu" }, { name = "memory" }, { name = "example.com/gpu" }, )"
        R"({ name = "ephemeral-storage" }])"
        "\n"));

// The cases above reach the verdicts they compare: a sanity check that the cluster exercises
// what the summary carries (without it, equal answers could be equally empty).
TEST(NodeSummaryCoverageTest, TheClusterRejectsForEveryReasonTheSummaryDecides) {
  Harness h;
  h.OnlyPlugins({"NodeUnschedulable", "TaintToleration", "NodeResourcesFit"});
  h.AddObjects(Cluster());
  const auto plain = Filter(h, *h.MakePod(IncomingPods()[0]));
  EXPECT_EQ(plain.at("open").code, Code::kSuccess);
  EXPECT_EQ(plain.at("preferred-off").code, Code::kSuccess);
  EXPECT_THAT(plain.at("cordoned").reasons, ::testing::ElementsAre("node(s) were unschedulable"));
  EXPECT_THAT(plain.at("tainted").reasons,
              ::testing::ElementsAre("node(s) had untolerated taint(s)"));
  EXPECT_THAT(plain.at("two-pods").reasons, ::testing::ElementsAre("Too many pods"));
  EXPECT_THAT(plain.at("no-memory").reasons, ::testing::ElementsAre("Insufficient memory"));
  const auto big_cpu = Filter(h, *h.MakePod(IncomingPods()[2]));
  EXPECT_THAT(big_cpu.at("busy").reasons, ::testing::ElementsAre("Insufficient cpu"));
  EXPECT_EQ(big_cpu.at("gpu").code, Code::kSuccess);
  const auto tolerant = Filter(h, *h.MakePod(IncomingPods()[6]));
  EXPECT_EQ(tolerant.at("cordoned").code, Code::kSuccess);
  EXPECT_EQ(tolerant.at("tainted").code, Code::kSuccess);
}

}  // namespace
}  // namespace schedhost::integration
