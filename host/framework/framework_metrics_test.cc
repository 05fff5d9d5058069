// FrameworkMetrics: extension points are always timed, plugin calls only on sampled cycles, and
// attempts are counted by upstream's result rule, each under the framework's profile.
#include "host/framework/framework_metrics.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "host/framework/framework.h"
#include "host/framework/testing/fake_plugin.h"
#include "host/framework/testing/harness.h"

namespace schedhost::framework {
namespace {

using testing::FakePlugin;
using testing::FakePlugins;
using testing::Harness;
using testing::Reasons;

constexpr const char* kNodes = R"(apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
)";

constexpr const char* kPod =
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n"
    "spec:\n  containers: [{name: c, image: busybox}]\n";

// UseProfile gives `h` a profile named `profile` with only `plugin` (the fake under test, set
// up by the caller) and the Sort and Binder fakes every profile needs, made here.
void UseProfile(Harness& h, FakePlugins& fakes, FakePlugin& plugin, const std::string& profile) {
  FakePlugin& sort = fakes.Add("Sort");
  sort.queue_sort_less = [](auto a, auto b) { return a->timestamp_ns < b->timestamp_ns; };
  FakePlugin& binder = fakes.Add("Binder");
  binder.bind = [](std::string_view, Reasons&) { return SCHEDHOST_SUCCESS; };
  for (FakePlugin* p : {&sort, &binder, &plugin}) h.RegisterInProcess(p->descriptor());
  h.SetConfig("[[profile]]\nname = \"" + profile +
              "\"\n[profile.plugins.multi_point]\nenabled = [{ name = \"Sort\" }, { name = "
              "\"Binder\" }, { name = \"" +
              plugin.name + "\" }]\ndisabled = [{ name = \"*\" }]\n");
}

// NumberedNodes is `count` nodes named node-0, node-1, ... that fit a kPod pod.
std::string NumberedNodes(int count) {
  std::string nodes;
  for (int i = 0; i < count; ++i) {
    nodes += "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-" + std::to_string(i) +
             "}\nstatus: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}\n";
  }
  return nodes;
}

uint64_t PluginCount(const std::string& plugin, const std::string& point,
                     const std::string& status) {
  return metrics::Metrics().plugin_duration.With({plugin, point, status}).Snapshot().count();
}

uint64_t PointCount(const std::string& point, const std::string& status) {
  return metrics::Metrics()
      .extension_point_duration.With({point, status, "metrics-profile"})
      .Snapshot()
      .count();
}

uint64_t Attempts(const std::string& result) {
  return metrics::Metrics().schedule_attempts.With({result, "metrics-profile"}).Value();
}

TEST(FrameworkMetricsTest, PointsAlwaysPluginsWhenSampledAttemptsByResult) {
  FakePlugins fakes;
  FakePlugin& picky = fakes.Add("MetricsPicky");
  picky.filter = [](auto, auto, const schedhost_node_info_view* ni, Reasons& r) {
    if (std::string(ni->node->name.data, ni->node->name.len) == "n1") return SCHEDHOST_SUCCESS;
    r.push_back("not n1");
    return SCHEDHOST_UNSCHEDULABLE;
  };
  picky.reserve = [](std::string_view, Reasons&) { return SCHEDHOST_SUCCESS; };
  Harness h(false);
  UseProfile(h, fakes, picky, "metrics-profile");
  h.AddObjects(kNodes);
  Framework& fw = h.framework();
  const cache::Snapshot& snap = h.snapshot();
  auto pod = h.MakePod(kPod);

  // An unsampled cycle: no plugin call is timed, the Reserve point is.
  CycleState plain;
  for (const auto* ni : snap.views()) (void)fw.RunFilterPlugins(plain, pod->view(), ni);
  ASSERT_TRUE(fw.RunReservePluginsReserve(plain, pod->view(), "n1").ok());
  EXPECT_EQ(PluginCount("MetricsPicky", "Filter", "Success"), 0u);
  EXPECT_EQ(PluginCount("MetricsPicky", "Reserve", "Success"), 0u);
  EXPECT_EQ(PointCount("Reserve", "Success"), 1u);

  // A sampled cycle times every call, per node for Filter, under the status it returned.
  CycleState sampled;
  sampled.record_plugin_metrics = true;
  for (const auto* ni : snap.views()) (void)fw.RunFilterPlugins(sampled, pod->view(), ni);
  ASSERT_TRUE(fw.RunReservePluginsReserve(sampled, pod->view(), "n1").ok());
  fw.RunReservePluginsUnreserve(sampled, pod->view(), "n1");
  EXPECT_EQ(PluginCount("MetricsPicky", "Filter", "Success"), 1u);
  EXPECT_EQ(PluginCount("MetricsPicky", "Filter", "Unschedulable"), 1u);
  EXPECT_EQ(PluginCount("MetricsPicky", "Reserve", "Success"), 1u);
  EXPECT_EQ(PointCount("Reserve", "Success"), 2u);
  EXPECT_EQ(PointCount("Unreserve", "Success"), 1u);

  // Attempts: Success is scheduled, a rejection unschedulable, anything else an error.
  FrameworkMetrics::BeginAttempt(sampled);
  fw.metrics().EndAttempt(sampled, Status::Success());
  fw.metrics().EndAttempt(sampled, Status::Make(Code::kUnschedulableAndUnresolvable, "no"));
  fw.metrics().EndAttempt(sampled, Status::Make(Code::kPending, "later"));
  fw.metrics().EndAttempt(sampled, Status::Error("boom"));
  EXPECT_EQ(Attempts("scheduled"), 1u);
  EXPECT_EQ(Attempts("unschedulable"), 2u);
  EXPECT_EQ(Attempts("error"), 1u);
  EXPECT_EQ(metrics::Metrics()
                .attempt_duration.With({"unschedulable", "metrics-profile"})
                .Snapshot()
                .count(),
            2u);
}

TEST(FrameworkMetricsTest, ASampledCycleTimesAtMostItsBudgetOfPluginCalls) {
  FakePlugins fakes;
  FakePlugin& every = fakes.Add("BudgetFilter");
  every.filter = [](auto, auto, auto, Reasons&) { return SCHEDHOST_SUCCESS; };
  Harness h(false);
  UseProfile(h, fakes, every, "budget-profile");
  h.AddObjects(kNodes);
  Framework& fw = h.framework();
  const schedhost_node_info_view* ni = h.snapshot().views()[0];
  auto pod = h.MakePod(kPod);
  const uint64_t before = PluginCount("BudgetFilter", "Filter", "Success");
  CycleState sampled;
  sampled.record_plugin_metrics = true;
  const uint32_t calls = FrameworkMetrics::kMaxTimedPluginCalls + 100;
  for (uint32_t i = 0; i < calls; ++i)
    ASSERT_TRUE(fw.RunFilterPlugins(sampled, pod->view(), ni).ok());
  EXPECT_EQ(PluginCount("BudgetFilter", "Filter", "Success") - before,
            FrameworkMetrics::kMaxTimedPluginCalls);
  // A new sampled cycle starts with a fresh budget.
  CycleState next;
  next.record_plugin_metrics = true;
  ASSERT_TRUE(fw.RunFilterPlugins(next, pod->view(), ni).ok());
  EXPECT_EQ(PluginCount("BudgetFilter", "Filter", "Success") - before,
            FrameworkMetrics::kMaxTimedPluginCalls + 1);
}

// A sampled cycle scores its first runs node by node, each call timed, and batches the rest once
// its budget is used: the budget of timed calls is exact and every node gets the same score
// either way.
TEST(FrameworkMetricsTest, ASampledCycleBatchesScoreOnceItsBudgetIsUsed) {
  FakePlugins fakes;
  FakePlugin& scorer = fakes.Add("BudgetScore");
  std::atomic<int> one_calls{0};
  std::atomic<int> batch_calls{0};
  const auto score_of = [](const schedhost_node_info_view* ni) {
    return static_cast<int64_t>(ni->node->name.len % 7) * 10;
  };
  scorer.score = [&](const schedhost_node_info_view* ni, int64_t* out, Reasons&) {
    ++one_calls;
    *out = score_of(ni);
    return SCHEDHOST_SUCCESS;
  };
  scorer.score_batch = [&](const schedhost_node_info_view* const* nodes, size_t n, int64_t* out,
                           Reasons&) {
    ++batch_calls;
    for (size_t k = 0; k < n; ++k) out[k] = score_of(nodes[k]);
    return SCHEDHOST_SUCCESS;
  };
  Harness h(false);
  UseProfile(h, fakes, scorer, "budget-score");
  h.AddObjects(NumberedNodes(700));
  Framework& fw = h.framework();
  const std::vector<const schedhost_node_info_view*> views(h.snapshot().views().begin(),
                                                           h.snapshot().views().end());
  ASSERT_EQ(views.size(), 700u);
  auto pod = h.MakePod(kPod);
  const uint64_t timed_before = PluginCount("BudgetScore", "Score", "Success");
  CycleState sampled;
  sampled.record_plugin_metrics = true;
  ScoreTable table;
  ASSERT_TRUE(fw.RunScorePlugins(sampled, pod->view(), views, table).ok());
  EXPECT_EQ(PluginCount("BudgetScore", "Score", "Success") - timed_before,
            FrameworkMetrics::kMaxTimedPluginCalls);
  // Node by node until the budget is used (a run begun under it finishes node by node), then
  // in runs: 700 nodes cannot all have gone one at a time.
  EXPECT_GE(one_calls.load(), static_cast<int>(FrameworkMetrics::kMaxTimedPluginCalls));
  EXPECT_LT(one_calls.load(), 700);
  EXPECT_GT(batch_calls.load(), 0);
  ASSERT_EQ(table.nodes.size(), views.size());
  for (size_t i = 0; i < views.size(); ++i) {
    ASSERT_EQ(table.Raw(i, 0), score_of(views[i])) << "node " << i;
  }
}

// The same for Filter through RunFilterBatch: node by node while the budget lasts, then in
// batches, and every node gets the verdict one call per node gives.
TEST(FrameworkMetricsTest, ASampledCycleBatchesFilterOnceItsBudgetIsUsed) {
  FakePlugins fakes;
  FakePlugin& filter = fakes.Add("BudgetBatchFilter");
  std::atomic<int> one_calls{0};
  std::atomic<int> batch_calls{0};
  const auto passes = [](const schedhost_node_info_view* ni) {
    return ni->node->name.data[ni->node->name.len - 1] != '3';  // node-3, node-13, ... fail
  };
  filter.filter = [&](auto, auto, const schedhost_node_info_view* ni, Reasons& r) {
    ++one_calls;
    if (passes(ni)) return SCHEDHOST_SUCCESS;
    r.push_back("no");
    return SCHEDHOST_UNSCHEDULABLE;
  };
  filter.filter_batch = [&](const schedhost_node_info_view* const* nodes, size_t n, size_t* passed,
                            Reasons& r) {
    ++batch_calls;
    for (size_t k = 0; k < n; ++k) {
      if (!passes(nodes[k])) {
        *passed = k;
        r.push_back("no");
        return SCHEDHOST_UNSCHEDULABLE;
      }
    }
    *passed = n;
    return SCHEDHOST_SUCCESS;
  };
  Harness h(false);
  UseProfile(h, fakes, filter, "budget-filter");
  h.AddObjects(NumberedNodes(700));
  Framework& fw = h.framework();
  const auto& views = h.snapshot().views();
  ASSERT_EQ(views.size(), 700u);
  auto pod = h.MakePod(kPod);
  const uint64_t timed_before = PluginCount("BudgetBatchFilter", "Filter", "Success") +
                                PluginCount("BudgetBatchFilter", "Filter", "Unschedulable");
  CycleState sampled;
  sampled.record_plugin_metrics = true;
  ASSERT_TRUE(fw.RunPreFilterPlugins(sampled, pod->view()).second.ok());
  ASSERT_TRUE(fw.CanBatchFilter(sampled));
  FilterBatch batch;
  for (size_t b = 0; b < views.size(); b += FilterBatch::kMaxNodes) {
    const size_t len = std::min(FilterBatch::kMaxNodes, views.size() - b);
    ASSERT_TRUE(fw.RunFilterBatch(sampled, pod->view(), views.data() + b, len, batch).ok());
    for (size_t j = 0; j < len; ++j) {
      ASSERT_EQ(batch.passed[j] != 0, passes(views[b + j])) << "node " << b + j;
      if (!batch.passed[j]) {
        ASSERT_EQ(batch.statuses[j].Message(), "no") << "node " << b + j;
      }
    }
  }
  EXPECT_EQ(PluginCount("BudgetBatchFilter", "Filter", "Success") +
                PluginCount("BudgetBatchFilter", "Filter", "Unschedulable") - timed_before,
            FrameworkMetrics::kMaxTimedPluginCalls);
  EXPECT_GE(one_calls.load(), static_cast<int>(FrameworkMetrics::kMaxTimedPluginCalls));
  EXPECT_LT(one_calls.load(), 700);
  EXPECT_GT(batch_calls.load(), 0);
}

}  // namespace
}  // namespace schedhost::framework
