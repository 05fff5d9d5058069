// The scheduler's metrics, with upstream kube-scheduler's names, labels and buckets
// (pkg/scheduler/metrics), plus schedhost's own, in one process-wide registry that schedhostd's
// /metrics endpoint renders.
//
// Metrics are process-wide as upstream's are: several schedulers in one process (tests) add to
// the same series. Scrape-time gauges (scheduler_pending_pods, schedhost_plugin_libraries_loaded)
// are registered by whoever owns the queue and the profiles (api::ServiceHost).
//
//   const SchedulerMetrics& m = Metrics();
//   m.preemption_attempts.Inc();
//   CountIncomingPod("active", "PodAdd");
#pragma once

#include <chrono>
#include <string_view>

#include "host/metrics/metrics.h"

namespace schedhost::metrics {

// DefaultRegistry returns the process-wide registry.
Registry& DefaultRegistry();

// SchedulerMetrics are the families the scheduling path records into.
struct SchedulerMetrics {
  // schedule_attempts is scheduler_schedule_attempts_total{result,profile}.
  CounterFamily& schedule_attempts;
  // attempt_duration is scheduler_scheduling_attempt_duration_seconds{result,profile}.
  HistogramFamily& attempt_duration;
  // extension_point_duration is scheduler_framework_extension_point_duration_seconds
  // {extension_point,status,profile}.
  HistogramFamily& extension_point_duration;
  // plugin_duration is scheduler_plugin_execution_duration_seconds{plugin,extension_point,status}.
  HistogramFamily& plugin_duration;
  // preemption_attempts is scheduler_preemption_attempts_total.
  Counter& preemption_attempts;
  // preemption_victims is scheduler_preemption_victims.
  Histogram& preemption_victims;
  // queue_incoming is scheduler_queue_incoming_pods_total{queue,event}.
  CounterFamily& queue_incoming;
  // config_reloads is schedhost_config_reloads_total{result}.
  CounterFamily& config_reloads;
  // Shadow profiles (every series labelled with the shadow's profile name):
  // shadow_pods is schedhost_shadow_pods_total{profile,result}, result "compared", "skipped"
  // (offered while over the CPU budget or busy) or "error" (the shadow cycle failed).
  CounterFamily& shadow_pods;
  // shadow_agreements is schedhost_shadow_agreements_total{profile,agreement}: compared pods
  // on which the shadow agreed with the live cycle, by "node", "feasibility", "best" and
  // "postfilter".
  CounterFamily& shadow_agreements;
  // shadow_disagreements is schedhost_shadow_disagreements_total{profile,point,plugin}: pods
  // the shadow would have placed elsewhere, by the plugin that turned it.
  CounterFamily& shadow_disagreements;
  // shadow_cycle_duration is schedhost_shadow_cycle_duration_seconds{profile}: one shadow
  // cycle, PreFilter to PostFilter's verdict.
  HistogramFamily& shadow_cycle_duration;
  // shadow_plugin_duration is schedhost_shadow_plugin_duration_seconds
  // {profile,plugin,extension_point,status}: every plugin call of the shadow's cycles.
  HistogramFamily& shadow_plugin_duration;
};

// Metrics returns the scheduler's families, registered in DefaultRegistry on first use.
const SchedulerMetrics& Metrics();

// kPluginMetricsSamplePercent is the share of scheduling cycles whose plugin calls are timed
// (upstream's pluginMetricsSamplePercent).
inline constexpr int kPluginMetricsSamplePercent = 10;

// SamplePluginMetrics decides whether this cycle times its plugin calls (true about
// kPluginMetricsSamplePercent percent of the time; a thread-local generator, no lock).
bool SamplePluginMetrics();

// CountIncomingPod adds one to scheduler_queue_incoming_pods_total{queue,event}. The usual event
// labels are resolved once and found by comparing a dozen short strings; others take a lock.
void CountIncomingPod(std::string_view queue, std::string_view event);

// CountConfigReload adds one to schedhost_config_reloads_total{result="success"|"failure"}
// (for the Admin Reload call and SIGHUP).
void CountConfigReload(bool success);

// Stopwatch is a steady-clock start time; Seconds() is the time since it.
struct Stopwatch {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  // Seconds returns the seconds elapsed since start.
  double Seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
};

}  // namespace schedhost::metrics
