// The host's per-cycle machinery at scale: PodTopologySpread's PreFilter over a 5,000-node
// snapshot, the cache's snapshot update after one node changed (5,000 and 50,000 nodes), and
// the scheduling queue's add + pop. Snapshots are built the scheduler's way: a cache::Cache
// fed nodes and bound pods, then Cache::UpdateSnapshot.
#include <benchmark/benchmark.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "host/cache/cache.h"
#include "host/framework/framework.h"
#include "host/framework/plugin_instance.h"
#include "host/framework/testing/harness.h"
#include "host/queue/scheduling_queue.h"
#include "tests/bench/micro/micro_fixtures.h"

namespace schedhost::bench::micro {
namespace {

// FillCache adds `nodes` upstream-shaped nodes over three zones and `pods` bound pods spread
// round-robin over them, labelled color=`color`.
void FillCache(cache::Cache& cache, size_t nodes, size_t pods, const std::string& color) {
  for (size_t i = 0; i < nodes; ++i) cache.AddNode(MakeNode(i));
  for (size_t k = 0; k < pods; ++k) {
    cache.AddPod(MakePod("bound-" + std::to_string(k), "node-" + std::to_string(k % nodes), color));
  }
}

// BM_PodTopologySpreadPreFilter: PreFilter of a pod with a zone spread constraint (maxSkew 5,
// DoNotSchedule, selector color=blue) over range(0) nodes carrying range(1) matching pods,
// through the framework with the plugin loaded from its library, a fresh cycle state each time.
void BM_PodTopologySpreadPreFilter(benchmark::State& st) {
  const auto nodes = static_cast<size_t>(st.range(0));
  const auto pods = static_cast<size_t>(st.range(1));
  framework::testing::Harness harness(false);
  harness.registry().LoadDirectory(BuiltinPluginDir(), framework::HostApi());
  harness.OnlyPlugins({"PodTopologySpread"});
  cache::Cache cache;
  FillCache(cache, nodes, pods, "blue");
  cache::Snapshot snapshot;
  cache.UpdateSnapshot(snapshot);
  framework::Framework& fw = harness.framework();
  fw.SetSnapshot(&snapshot);
  const std::shared_ptr<const model::Pod> pod = MakeSpreadPod("incoming");
  for (auto _ : st) {
    framework::CycleState state;
    auto [subset, status] = fw.RunPreFilterPlugins(state, pod->view());
    if (!status.ok()) {
      st.SkipWithError(("PreFilter: " + status.Message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(subset);
  }
  st.counters["nodes"] = static_cast<double>(snapshot.size());
}
BENCHMARK(BM_PodTopologySpreadPreFilter)->Args({5000, 5000})->Unit(benchmark::kMicrosecond);

// SnapshotFixture is a cache of range(0) nodes with one bound pod per five nodes, a snapshot
// brought up to date, and pods to assume onto nodes spread over the whole list.
struct SnapshotFixture {
  explicit SnapshotFixture(size_t nodes) {
    FillCache(cache, nodes, nodes / 5, "");
    cache.UpdateSnapshot(snapshot);
    for (size_t k = 0; k < 256; ++k) {
      to_assume.push_back(
          MakePod("assumed-" + std::to_string(k), "node-" + std::to_string((k * 7919) % nodes)));
    }
  }
  // Change changes one node: iteration i assumes a pod onto it (even i) or forgets it again (odd
  // i), as a scheduling cycle's assume and a failed binding's forget do.
  void Change(size_t i) {
    const auto& pod = to_assume[(i / 2) % to_assume.size()];
    if (i % 2 == 0) {
      cache.AssumePod(pod);
    } else {
      cache.ForgetPod(pod->uid());
    }
  }
  cache::Cache cache;
  cache::Snapshot snapshot;
  std::vector<std::shared_ptr<const model::Pod>> to_assume;
};

// SharedSnapshotFixture builds one SnapshotFixture per size for the whole process: Google
// Benchmark calls a benchmark several times while it settles the iteration count, and a
// 50,000-node cache takes far longer to build than to measure. Runs leave nothing assumed.
// Never destroyed (nothing to gain from tearing 50,000 nodes down at exit).
SnapshotFixture& SharedSnapshotFixture(size_t nodes) {
  static auto* fixtures = new std::map<size_t, std::unique_ptr<SnapshotFixture>>();
  std::unique_ptr<SnapshotFixture>& f = (*fixtures)[nodes];
  if (!f) f = std::make_unique<SnapshotFixture>(nodes);
  return *f;
}

// BM_SnapshotUpdateOneNode: one node changed in the cache (an assume or a forget, untimed), then
// Cache::UpdateSnapshot, timed alone with the steady clock (manual time; the two clock reads,
// some 40 ns, are included). Counters: node infos copied and list rebuilds per update.
void BM_SnapshotUpdateOneNode(benchmark::State& st) {
  SnapshotFixture& f = SharedSnapshotFixture(static_cast<size_t>(st.range(0)));
  size_t i = 0;
  size_t copied = 0;
  size_t rebuilt = 0;
  for (auto _ : st) {
    f.Change(i++);
    const auto t0 = std::chrono::steady_clock::now();
    const cache::SnapshotUpdate u = f.cache.UpdateSnapshot(f.snapshot);
    st.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    copied += u.copied;
    rebuilt += u.lists_rebuilt ? 1 : 0;
  }
  if (i % 2 == 1) f.Change(i);  // leave nothing assumed
  st.counters["copied"] =
      benchmark::Counter(static_cast<double>(copied), benchmark::Counter::kAvgIterations);
  st.counters["rebuilt"] =
      benchmark::Counter(static_cast<double>(rebuilt), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_SnapshotUpdateOneNode)->Arg(5000)->Arg(50000)->UseManualTime();

// BM_QueueAddPop: add one pod to the scheduling queue, pop the next and mark it done, with
// range(0) pods already waiting in activeQ (PrioritySort's order: the oldest pops first, so the
// popped pod is added back at the end next time).
void BM_QueueAddPop(benchmark::State& st) {
  const auto backlog = static_cast<size_t>(st.range(0));
  queue::SchedulingQueue q({}, {});
  std::vector<std::shared_ptr<const model::Pod>> pods;
  pods.reserve(backlog + 1);
  for (size_t k = 0; k <= backlog; ++k) pods.push_back(MakePod("queued-" + std::to_string(k), ""));
  for (size_t k = 0; k < backlog; ++k) q.Add(pods[k]);
  std::shared_ptr<const model::Pod> next = pods[backlog];
  for (auto _ : st) {
    q.Add(next);
    std::optional<queue::QueuedPodInfo> info = q.Pop();
    if (!info) {
      st.SkipWithError("Pop returned nothing");
      break;
    }
    q.Done(info->pod->uid());
    next = info->pod;
  }
}
BENCHMARK(BM_QueueAddPop)->Arg(0)->Arg(10000);

}  // namespace
}  // namespace schedhost::bench::micro
