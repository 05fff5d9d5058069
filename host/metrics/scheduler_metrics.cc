// The scheduler's metric families and the helpers that keep their hot paths lock-free.
#include "host/metrics/scheduler_metrics.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <random>

namespace schedhost::metrics {
namespace {

// Queue and event labels resolved once (upstream's queue names and cluster event labels).
constexpr std::array<std::string_view, 4> kQueues = {"active", "backoff", "unschedulable", "gated"};
constexpr std::array<std::string_view, 13> kEvents = {
    "PodAdd",          "PodUpdate",         "ScheduleAttemptFailure",
    "BackoffComplete", "ForceActivate",     "UnschedulableTimeout",
    "AssignedPodAdd",  "AssignedPodUpdate", "AssignedPodDelete",
    "NodeAdd",         "NodeUpdate",        "NodeDelete",
    "PodDelete"};

SchedulerMetrics Make(Registry& r) {
  return SchedulerMetrics{
      r.AddCounter("scheduler_schedule_attempts_total",
                   "Number of attempts to schedule pods, by the result. 'unschedulable' means a "
                   "pod could not be scheduled, while 'error' means an internal scheduler problem.",
                   {"result", "profile"}),
      r.AddHistogram("scheduler_scheduling_attempt_duration_seconds",
                     "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
                     {"result", "profile"}, ExponentialBuckets(0.001, 2, 15)),
      r.AddHistogram("scheduler_framework_extension_point_duration_seconds",
                     "Latency for running all plugins of a specific extension point.",
                     {"extension_point", "status", "profile"}, ExponentialBuckets(0.0001, 2, 12)),
      r.AddHistogram("scheduler_plugin_execution_duration_seconds",
                     "Duration for running a plugin at a specific extension point (sampled: "
                     "10% of scheduling cycles).",
                     {"plugin", "extension_point", "status"}, ExponentialBuckets(0.00001, 1.5, 20)),
      r.AddCounter("scheduler_preemption_attempts_total",
                   "Total preemption attempts in the cluster till now", {})
          .With({}),
      r.AddHistogram("scheduler_preemption_victims", "Number of selected preemption victims", {},
                     ExponentialBuckets(1, 2, 7))
          .With({}),
      r.AddCounter("scheduler_queue_incoming_pods_total",
                   "Number of pods added to scheduling queues by event and queue type.",
                   {"queue", "event"}),
      r.AddCounter("schedhost_config_reloads_total",
                   "Number of configuration reloads, by result (success or failure).", {"result"}),
      r.AddCounter("schedhost_shadow_pods_total",
                   "Pods offered to a shadow profile, by result: compared, skipped (over the "
                   "CPU budget or busy) or error.",
                   {"profile", "result"}),
      r.AddCounter("schedhost_shadow_agreements_total",
                   "Compared pods on which a shadow profile agreed with the live one, by "
                   "agreement: node, feasibility, best (set of best nodes) and postfilter.",
                   {"profile", "agreement"}),
      r.AddCounter("schedhost_shadow_disagreements_total",
                   "Compared pods a shadow profile would have placed elsewhere, by the "
                   "extension point and plugin that turned it.",
                   {"profile", "point", "plugin"}),
      r.AddHistogram("schedhost_shadow_cycle_duration_seconds",
                     "Duration of a shadow profile's scheduling cycle.", {"profile"},
                     ExponentialBuckets(0.00001, 2, 20)),
      r.AddHistogram("schedhost_shadow_plugin_duration_seconds",
                     "Duration of a shadow profile's plugin calls (every call).",
                     {"profile", "plugin", "extension_point", "status"},
                     ExponentialBuckets(0.00001, 1.5, 20)),
  };
}

// Counters of the known (queue, event) pairs, resolved on first use so that only series that
// happened are rendered, as upstream does.
std::array<std::array<std::atomic<Counter*>, kEvents.size()>, kQueues.size()> incoming{};

template <size_t N>
size_t IndexOf(const std::array<std::string_view, N>& names, std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == name) return i;
  }
  return N;
}

}  // namespace

Registry& DefaultRegistry() {
  static Registry* registry = new Registry();  // never destroyed: used until exit
  return *registry;
}

const SchedulerMetrics& Metrics() {
  static const SchedulerMetrics metrics = Make(DefaultRegistry());
  return metrics;
}

bool SamplePluginMetrics() {
  thread_local std::minstd_rand rng(static_cast<uint32_t>(ShardIndex() * 7919 + 1));
  return rng() % 100 < static_cast<uint32_t>(kPluginMetricsSamplePercent);
}

void CountIncomingPod(std::string_view queue, std::string_view event) {
  const size_t q = IndexOf(kQueues, queue);
  const size_t e = IndexOf(kEvents, event);
  if (q < kQueues.size() && e < kEvents.size()) {
    std::atomic<Counter*>& slot = incoming[q][e];
    Counter* c = slot.load(std::memory_order_acquire);
    if (c == nullptr) {
      c = &Metrics().queue_incoming.With({std::string(queue), std::string(event)});
      slot.store(c, std::memory_order_release);
    }
    c->Inc();
    return;
  }
  Metrics().queue_incoming.With({std::string(queue), std::string(event)}).Inc();
}

void CountConfigReload(bool success) {
  static Counter& ok = Metrics().config_reloads.With({"success"});
  static Counter& failed = Metrics().config_reloads.With({"failure"});
  (success ? ok : failed).Inc();
}

}  // namespace schedhost::metrics
