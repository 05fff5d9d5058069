// The fused reference against the host: its score equals the real NodeResourcesFit +
// NodeResourcesBalancedAllocation plugins' total through the framework, its loop binds what fits
// and spreads like LeastAllocated, and it refuses workloads it does not model.
#include "tests/bench/fused_reference.h"

#include <gtest/gtest.h>

#include <string>

#include "host/framework/testing/harness.h"

namespace schedhost::bench {
namespace {

std::string NodeYaml(const std::string& name, const std::string& cpu, const std::string& mem) {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
         "}\nstatus:\n  allocatable: " + "{cpu: \"" + cpu + "\", memory: " + mem +
         ", pods: \"110\"}\n---\n";
}

std::string BoundPodYaml(const std::string& name, const std::string& node, const std::string& cpu,
                         const std::string& mem) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + "}\nspec:\n  nodeName: " + node +
         "\n  containers:\n  - name: c\n    resources:\n      requests: {cpu: " + cpu +
         ", memory: " + mem + "}\n---\n";
}

constexpr std::string_view kPod = R"(apiVersion: v1
kind: Pod
metadata: {name: incoming}
spec:
  containers:
  - name: c
    ports: [{containerPort: 80}]
    resources:
      requests: {cpu: 100m, memory: 500Mi}
)";

TEST(FusedReferenceTest, ScoreEqualsTheRealPluginsThroughTheFramework) {
  framework::testing::Harness h;
  h.OnlyPlugins({"NodeResourcesFit", "NodeResourcesBalancedAllocation"});
  // Empty, balanced, cpu-heavy, memory-heavy and nearly full nodes of two sizes.
  struct Case {
    std::string node, alloc_cpu, alloc_mem, pod_cpu, pod_mem;
    int64_t cpu_m, mem_b, used_cpu_m, used_mem_b;
  };
  const int64_t gi = int64_t{1} << 30;
  const int64_t mi = int64_t{1} << 20;
  const std::vector<Case> cases = {
      {"empty", "4", "32Gi", "", "", 4000, 32 * gi, 0, 0},
      {"balanced", "4", "32Gi", "2", "16Gi", 4000, 32 * gi, 2000, 16 * gi},
      {"cpu-heavy", "4", "32Gi", "3500m", "1Gi", 4000, 32 * gi, 3500, gi},
      {"mem-heavy", "4", "32Gi", "100m", "30Gi", 4000, 32 * gi, 100, 30 * gi},
      {"odd", "7", "10Gi", "1234m", "3333Mi", 7000, 10 * gi, 1234, 3333 * mi},
  };
  std::string yaml;
  for (const Case& c : cases) {
    yaml += NodeYaml(c.node, c.alloc_cpu, c.alloc_mem);
    if (!c.pod_cpu.empty()) yaml += BoundPodYaml("on-" + c.node, c.node, c.pod_cpu, c.pod_mem);
  }
  h.AddObjects(yaml);
  const auto scores = h.RunScore(*h.MakePod(kPod));
  ASSERT_EQ(scores.size(), cases.size());
  for (const Case& c : cases) {
    int64_t want = -1;
    for (const auto& [node, total] : scores) {
      if (node == c.node) want = total;
    }
    EXPECT_EQ(FusedScore(c.cpu_m, c.mem_b, c.used_cpu_m, c.used_mem_b, 100, 500 * mi), want)
        << c.node;
  }
}

Op MakeOp(OpKind kind, size_t count, std::string text, bool measured) {
  Op op;
  op.kind = kind;
  op.count = count;
  op.template_text = std::move(text);
  op.template_name = "inline";
  op.measured = measured;
  return op;
}

Workload Small(const std::string& pod_spec_extra) {
  Workload w;
  w.name = "small";
  w.path = "small.toml";
  w.ops.push_back(MakeOp(OpKind::kCreateNodes, 3,
                         "apiVersion: v1\nkind: Node\nmetadata: {name: n-{{index}}}\nstatus:\n"
                         "  allocatable: {cpu: \"4\", memory: 32Gi, pods: \"110\"}\n",
                         false));
  w.ops.push_back(MakeOp(OpKind::kCreatePods, 3,
                         "apiVersion: v1\nkind: Pod\nmetadata: {name: a-{{index}}}\nspec:\n"
                         "  containers:\n  - name: c\n    resources:\n"
                         "      requests: {cpu: \"1\", memory: 1Gi}\n",
                         false));
  w.ops.push_back(MakeOp(OpKind::kBarrier, 0, "", false));
  w.ops.push_back(MakeOp(OpKind::kCreatePods, 20,
                         "apiVersion: v1\nkind: Pod\nmetadata: {name: m-{{index}}}\nspec:\n" +
                             pod_spec_extra +
                             "  containers:\n  - name: c\n    resources:\n"
                             "      requests: {cpu: \"1\", memory: 1Gi}\n",
                         true));
  return w;
}

TEST(FusedReferenceTest, BindsWhatFitsAndCountsTheRest) {
  // 3 nodes of 4 CPUs: the 3 initial pods spread one per node (LeastAllocated), leaving room
  // for 9 of the 20 measured 1-CPU pods.
  const FusedResult r = RunFused(Small(""), 0);
  EXPECT_EQ(r.nodes, 3U);
  EXPECT_EQ(r.unmeasured_pods, 3U);
  EXPECT_EQ(r.unmeasured_bound, 3U);
  EXPECT_EQ(r.measured_pods, 20U);
  EXPECT_EQ(r.measured_bound, 9U);
  EXPECT_GT(r.nodes_examined, 0U);
}

TEST(FusedReferenceTest, RefusesWhatItDoesNotModel) {
  EXPECT_THROW(RunFused(Small("  nodeSelector: {disk: ssd}\n"), 0), FusedShapeError);
  try {
    CheckFusedShape(Small("  tolerations: [{operator: Exists}]\n"));
    FAIL() << "a pod with tolerations was accepted";
  } catch (const FusedShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("ops[3]: pod m-0 has tolerations"), std::string::npos)
        << e.what();
  }
  Workload objects = Small("");
  objects.ops.push_back(MakeOp(OpKind::kCreateObjects, 1, "", false));
  EXPECT_THROW(CheckFusedShape(objects), FusedShapeError);
}

}  // namespace
}  // namespace schedhost::bench
