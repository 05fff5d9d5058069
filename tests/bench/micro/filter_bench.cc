// Filter dispatch: the same Filter called directly and through the path the scheduler uses per
// node (Framework::RunFilterPluginsWithNominatedPods: skip check, the plugin's C ABI entry, the
// SDK adapter, status conversion), with the plugin loaded from its .so by host/loader.
//
// BenchFilter (a plugin library built only for this) runs BenchFilterFits, which is also
// compiled into this binary: BM_FilterDirect vs BM_FilterAbiDescriptor (the bare descriptor
// call) vs BM_FilterFramework. For the real NodeResourcesFit, BM_NodeResourcesFitFramework is
// set against BM_NodeResourcesFitDirect, the same decision as a plain function.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/framework/framework.h"
#include "host/framework/plugin_instance.h"
#include "host/framework/testing/harness.h"
#include "host/queue/scheduling_queue.h"
#include "tests/bench/micro/filter_logic.h"
#include "tests/bench/micro/micro_fixtures.h"

namespace schedhost::bench::micro {
namespace {

constexpr std::string_view kLabelledNodeYaml = R"(apiVersion: v1
kind: Node
metadata:
  name: node-0
  labels: {kubernetes.io/hostname: node-0, topology.kubernetes.io/zone: zone-0}
status:
  allocatable: {cpu: "4", memory: 32Gi, pods: "110"}
)";

// FilterFixture is one node with a few pods on it, a profile whose only Filter is `plugin` (the
// default profile when `plugin` is empty), the scheduler's wiring (an empty Nominator) and a
// cycle state PreFilter has filled for a pod-default pod.
class FilterFixture {
 public:
  explicit FilterFixture(const std::string& plugin) : harness_(false), queue_({}, {}) {
    harness_.registry().LoadDirectory(BuiltinPluginDir(), framework::HostApi());
    harness_.registry().LoadLibrary(BenchPluginPath(), framework::HostApi());
    if (!plugin.empty()) harness_.OnlyPlugins({plugin});
    std::string yaml(kLabelledNodeYaml);
    for (int i = 0; i < 5; ++i) {
      yaml += "---\napiVersion: v1\nkind: Pod\nmetadata: {name: bound-" + std::to_string(i) +
              "}\nspec:\n  nodeName: node-0\n  containers:\n  - name: c\n    resources:\n"
              "      requests: {cpu: 100m, memory: 500Mi}\n";
    }
    harness_.AddObjects(yaml);
    fw_ = &harness_.framework();
    fw_->SetNominator(&queue_.nominator());
    ni_ = harness_.snapshot().views().at(0);
    pod_ = MakePod("incoming", "");
    auto [subset, status] = fw_->RunPreFilterPlugins(state_, pod_->view());
    if (!status.ok()) throw std::runtime_error("PreFilter: " + status.Message());
  }

  framework::Framework& fw() { return *fw_; }
  const framework::CycleState& state() const { return state_; }
  const schedhost_pod_view* pod() const { return pod_->view(); }
  const schedhost_node_info_view* ni() const { return ni_; }

 private:
  framework::testing::Harness harness_;
  queue::SchedulingQueue queue_;
  framework::Framework* fw_ = nullptr;
  const schedhost_node_info_view* ni_ = nullptr;
  std::shared_ptr<const model::Pod> pod_;
  framework::CycleState state_;
};

// Fixture returns the process's FilterFixture for `plugin`, made on first use: Google Benchmark
// calls a benchmark several times while it settles the iteration count, and loading every
// plugin library (with its checksum) costs far more than the calls. Never destroyed, so no
// plugin library is unloaded while static destructors run.
FilterFixture& Fixture(const std::string& plugin) {
  static auto* fixtures = new std::map<std::string, std::unique_ptr<FilterFixture>>();
  std::unique_ptr<FilterFixture>& f = (*fixtures)[plugin];
  if (!f) f = std::make_unique<FilterFixture>(plugin);
  return *f;
}

void BM_FilterDirect(benchmark::State& st) {
  FilterFixture& f = Fixture("BenchFilter");
  for (auto _ : st) benchmark::DoNotOptimize(BenchFilterFits(f.pod(), f.ni()));
}
BENCHMARK(BM_FilterDirect);

void BM_FilterAbiDescriptor(benchmark::State& st) {
  FilterFixture& f = Fixture("BenchFilter");
  const framework::PluginInstance* p = f.fw().FindPlugin("BenchFilter");
  if (p == nullptr || p->desc->filter == nullptr) {
    st.SkipWithError("BenchFilter has no Filter");
    return;
  }
  for (auto _ : st) {
    framework::StatusSink sink;
    benchmark::DoNotOptimize(
        p->desc->filter(p->instance, f.state().abi(), f.pod(), f.ni(), sink.abi()));
  }
}
BENCHMARK(BM_FilterAbiDescriptor);

// RunFramework measures the scheduler's per-node Filter call on `f`; fails the benchmark when
// the node does not pass (it must, for the fast path to be the one measured).
void RunFramework(benchmark::State& st, FilterFixture& f) {
  if (!f.fw().RunFilterPluginsWithNominatedPods(f.state(), f.pod(), f.ni()).ok()) {
    st.SkipWithError("the node does not pass Filter");
    return;
  }
  for (auto _ : st) {
    framework::Status s = f.fw().RunFilterPluginsWithNominatedPods(f.state(), f.pod(), f.ni());
    benchmark::DoNotOptimize(s.code);
  }
}

void BM_FilterFramework(benchmark::State& st) {
  FilterFixture& f = Fixture("BenchFilter");
  RunFramework(st, f);
}
BENCHMARK(BM_FilterFramework);

// The same comparison for a run of kRun nodes (the node kRun times): a plain loop over the
// function, the SDK's filter_batch entry (abi 1.2; one C ABI call, the loop inside the plugin),
// and Framework::RunFilterBatch, as the scheduler calls it when batching. `per_node` is the time
// per node.
constexpr size_t kRun = framework::FilterBatch::kMaxNodes;

void PerNode(benchmark::State& st) {
  st.counters["per_node"] = benchmark::Counter(
      kRun, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_FilterDirectRun(benchmark::State& st) {
  FilterFixture& f = Fixture("BenchFilter");
  const std::vector<const schedhost_node_info_view*> run(kRun, f.ni());
  for (auto _ : st) {
    for (const schedhost_node_info_view* ni : run) {
      benchmark::DoNotOptimize(BenchFilterFits(f.pod(), ni));
    }
  }
  PerNode(st);
}
BENCHMARK(BM_FilterDirectRun);

void BM_FilterAbiBatch(benchmark::State& st) {
  FilterFixture& f = Fixture("BenchFilter");
  const framework::PluginInstance* p = f.fw().FindPlugin("BenchFilter");
  if (p == nullptr || p->filter_batch == nullptr) {
    st.SkipWithError("BenchFilter has no filter_batch");
    return;
  }
  const std::vector<const schedhost_node_info_view*> run(kRun, f.ni());
  for (auto _ : st) {
    framework::StatusSink sink;
    size_t passed = 0;
    benchmark::DoNotOptimize(p->filter_batch(p->instance, f.state().abi(), f.pod(), run.data(),
                                             run.size(), &passed, sink.abi()));
    benchmark::DoNotOptimize(passed);
  }
  PerNode(st);
}
BENCHMARK(BM_FilterAbiBatch);

void BM_FilterFrameworkBatch(benchmark::State& st) {
  FilterFixture& f = Fixture("BenchFilter");
  const std::vector<const schedhost_node_info_view*> run(kRun, f.ni());
  framework::FilterBatch out;
  if (!f.fw().RunFilterBatch(f.state(), f.pod(), run.data(), run.size(), out).ok() ||
      !out.passed[kRun - 1]) {
    st.SkipWithError("the node does not pass Filter");
    return;
  }
  for (auto _ : st) {
    framework::Status s = f.fw().RunFilterBatch(f.state(), f.pod(), run.data(), run.size(), out);
    benchmark::DoNotOptimize(s.code);
  }
  PerNode(st);
}
BENCHMARK(BM_FilterFrameworkBatch);

void BM_NodeResourcesFitDirect(benchmark::State& st) {
  FilterFixture& f = Fixture("NodeResourcesFit");
  const FitRequest req{100, int64_t{500} * 1024 * 1024};
  if (!NodeResourcesFitFits(req, f.ni())) st.SkipWithError("the node does not fit");
  for (auto _ : st) benchmark::DoNotOptimize(NodeResourcesFitFits(req, f.ni()));
}
BENCHMARK(BM_NodeResourcesFitDirect);

void BM_NodeResourcesFitFramework(benchmark::State& st) {
  FilterFixture& f = Fixture("NodeResourcesFit");
  RunFramework(st, f);
}
BENCHMARK(BM_NodeResourcesFitFramework);

// The default profile's whole Filter set on one node, as the scheduler runs it per node for a
// scheduling_basic pod (PreFilter has marked the plugins with nothing to check as skipped).
void BM_DefaultProfileFilterFramework(benchmark::State& st) {
  FilterFixture& f = Fixture("");
  RunFramework(st, f);
}
BENCHMARK(BM_DefaultProfileFilterFramework);

}  // namespace
}  // namespace schedhost::bench::micro
