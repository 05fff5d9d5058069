// Runner: runs one workload against the real host in-process — a store::Store, the profiles
// built from the host config with the builtin plugin libraries, and a scheduler::Scheduler on
// the real clock with its own threads (the scheduling loop, binding cycles on the executor,
// bindings written to the store) — and measures it.
//
//   RunResult r = RunWorkload(LoadWorkload(path, 1.0), {.plugin_dir = dir});
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "tests/bench/workload.h"

namespace schedhost::bench {

/// BenchError reports a run that could not complete (a barrier timed out, a write was refused).
class BenchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// RunOptions configure every run.
struct RunOptions {
  /// plugin_dir is the builtin plugin directory (used when the config leaves plugin_dirs alone).
  std::filesystem::path plugin_dir;
  /// config_path is a host config file; empty: the built-in defaults (the default profile).
  std::filesystem::path config_path;
  /// barrier_timeout bounds every barrier.
  std::chrono::seconds barrier_timeout{600};
  /// progress prints a progress line on stderr while running.
  bool progress = true;
  /// max_explanations is SchedulerOptions::max_explanations (how many pods' last-cycle
  /// explanations the scheduler keeps); unset: the scheduler's default, as schedhostd runs.
  std::optional<size_t> max_explanations;
  /// swap_every, when positive, makes a control thread rebuild the profile set from the same
  /// config and swap it in (Scheduler::ReplaceProfiles, as a reload does) at this interval
  /// while the measured pods are scheduled: the swap-pause benchmark.
  std::chrono::milliseconds swap_every{0};
};

/// RunResult is what one run of a workload measured.
struct RunResult {
  size_t nodes = 0;
  size_t unmeasured_pods = 0;
  size_t measured_pods = 0;
  /// measured_bound counts the measured pods that were bound by the end of the run.
  size_t measured_bound = 0;
  /// seconds is from the first measured pod's creation to the last measured pod's binding.
  double seconds = 0;
  double pods_per_second = 0;
  /// p50_ms, p90_ms, p99_ms are measured pods' latencies from creation (enqueue) to binding.
  double p50_ms = 0;
  double p90_ms = 0;
  double p99_ms = 0;
  /// max_gap_ms is the longest time between two consecutive bindings of measured pods: the
  /// longest the scheduler stalled while pods were waiting.
  double max_gap_ms = 0;
  /// first_binding_ms is from the process's start (/proc/self/stat, at the kernel's 10 ms
  /// tick) to the first binding of any pod: what a fresh process pays before it schedules,
  /// plugin loading and profile building included.
  double first_binding_ms = 0;
  /// measured_nominated counts the measured pods nominated to a node (status.nominatedNodeName
  /// written by preemption) before they were bound. When it is not 0,
  /// nominated_or_bound_per_second is how many measured pods were nominated or bound, whichever
  /// came first, per second from the first measured pod's creation to the last such event
  /// (upstream's "nominated or bound" figure for PreemptionBasic).
  size_t measured_nominated = 0;
  double nominated_or_bound_per_second = 0;
  /// With RunOptions::swap_every: how many swaps ran while measuring, how long building each
  /// new set took (off the loop) and how long ReplaceProfiles took (the swap itself: the
  /// pointer, the activeQ re-sort, requeueing, one pass over the store's pods), median and max.
  size_t swaps = 0;
  double swap_build_ms_median = 0;
  double swap_build_ms_max = 0;
  double swap_ms_median = 0;
  double swap_ms_max = 0;
  /// With shadow profiles in the config: the pods the shadows compared and skipped over the
  /// whole run (every shadow summed), and what they disagreed on.
  bool shadowed = false;
  uint64_t shadow_compared = 0;
  uint64_t shadow_skipped = 0;
  uint64_t shadow_disagreements = 0;
  double shadow_cpu_seconds = 0;
  /// attempts counts scheduling attempts (Scheduler::Stats, every result) while measuring;
  /// attempts_total over the whole run.
  uint64_t attempts = 0;
  uint64_t attempts_total = 0;
  /// peak_rss_kib is the process's peak resident set (getrusage ru_maxrss) after the run.
  int64_t peak_rss_kib = 0;
  /// node_bytes is what the first createNodes operation left allocated in the process (glibc
  /// malloc statistics: store objects, cache node infos, queue events, interned strings), per
  /// node, before the scheduler's snapshot has them; snapshot_node_bytes is what one snapshot
  /// of the cache takes per node then. 0 without a createNodes operation.
  double node_bytes = 0;
  double snapshot_node_bytes = 0;
  /// pending_pod_bytes is what an unmeasured createPods operation whose pods all stayed pending
  /// left allocated at the next barrier (store objects, queue entries, the scheduler's kept
  /// explanations of their failed attempts), per pod, less the scheduler's snapshot filling up
  /// in that span (node memory, in snapshot_node_bytes); pending_pods is how many (0: none).
  /// pending_pod_object_bytes is, of that, the pod object itself: what decoding one took.
  double pending_pod_bytes = 0;
  double pending_pod_object_bytes = 0;
  size_t pending_pods = 0;
  /// cycle_seconds is the sum of scheduler_scheduling_attempt_duration_seconds while measuring;
  /// point_seconds the sums of scheduler_framework_extension_point_duration_seconds per
  /// extension point over the same span.
  double cycle_seconds = 0;
  std::map<std::string, double> point_seconds;
};

/// RunWorkload runs `workload` once on a fresh store and scheduler; throws BenchError,
/// WorkloadError, or the host's errors (config, plugin loading).
RunResult RunWorkload(const Workload& workload, const RunOptions& options);

}  // namespace schedhost::bench
