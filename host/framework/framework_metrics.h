// FrameworkMetrics: what one profile's framework records into the process-wide scheduler
// metrics (host/metrics): scheduling attempts by result and duration, each extension point's
// duration, and — on sampled cycles only — each plugin call's duration.
//
// Every series handle is resolved once: the attempt results when the framework is built, the
// (extension point, status) and (plugin, extension point, status) series on first use into
// atomic slots, so a recording is a relaxed load, a clock read and a few relaxed adds.
// Plugin calls are timed on kPluginMetricsSamplePercent (10%) of the cycles, as upstream does.
// Upstream then times every call of the cycle; here a sampled cycle times its first
// kMaxTimedPluginCalls calls (per-node Filter and Score included) and leaves the rest: with
// thousands of nodes the two clock reads and a histogram add per call made a sampled cycle
// twice as slow, and the first few hundred calls already give the distribution. Other cycles
// pay one branch per call.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "host/config/point.h"
#include "host/framework/cycle_state.h"
#include "host/framework/status.h"
#include "host/metrics/scheduler_metrics.h"

namespace schedhost::framework {

struct PluginInstance;

/// kUnreserveSlot is the extension_point slot of Unreserve (after the config points).
inline constexpr size_t kUnreserveSlot = config::kNumPoints;
/// kNumMetricSlots counts the extension_point label values: the config points and Unreserve.
inline constexpr size_t kNumMetricSlots = config::kNumPoints + 1;

/// SlotOf returns the extension_point slot of a config point.
constexpr size_t SlotOf(config::Point point) { return config::PointIndex(point); }

/// FrameworkMetrics records one framework's metrics; thread-safe.
class FrameworkMetrics {
 public:
  /// FrameworkMetrics labels its series with `profile` and knows `plugins` (not owned; they
  /// live as long as the framework that owns this). A `shadow` profile's plugin calls go to
  /// schedhost_shadow_plugin_duration_seconds and its extension points are not recorded, so a
  /// shadow never shows in the live profiles' series.
  FrameworkMetrics(const std::string& profile,
                   const std::vector<std::unique_ptr<PluginInstance>>& plugins,
                   bool shadow = false);
  ~FrameworkMetrics();
  FrameworkMetrics(const FrameworkMetrics&) = delete;
  FrameworkMetrics& operator=(const FrameworkMetrics&) = delete;

  /// BeginAttempt starts the attempt's clock in `state` and decides whether the cycle's plugin
  /// calls are timed (state.record_plugin_metrics).
  static void BeginAttempt(CycleState& state);
  /// EndAttempt records scheduler_schedule_attempts_total and the attempt's duration: Success
  /// is "scheduled", a rejection "unschedulable", anything else "error" (upstream's rule).
  void EndAttempt(const CycleState& state, const Status& status);

  /// ObservePoint records that the extension point `slot` ran from `since` with `code`.
  void ObservePoint(size_t slot, Code code, const metrics::Stopwatch& since);

  /// kMaxTimedPluginCalls is how many plugin calls a sampled cycle times.
  static constexpr uint32_t kMaxTimedPluginCalls = 512;
  /// PluginStart returns a started stopwatch when the cycle times its plugin calls, else none.
  static std::optional<metrics::Stopwatch> PluginStart(const CycleState& state) {
    if (!state.record_plugin_metrics) return std::nullopt;
    if (state.timed_plugin_calls.fetch_add(1, std::memory_order_relaxed) >= kMaxTimedPluginCalls) {
      return std::nullopt;
    }
    return metrics::Stopwatch{};
  }
  /// TimesPluginCalls tells whether this cycle still times its plugin calls: it was sampled and
  /// has not used up kMaxTimedPluginCalls. Batched Filter and Score take over once it has not.
  static bool TimesPluginCalls(const CycleState& state) {
    return state.record_plugin_metrics &&
           state.timed_plugin_calls.load(std::memory_order_relaxed) < kMaxTimedPluginCalls;
  }
  /// ObservePlugin records one call of `plugin` at `slot` that returned `raw_code` (a
  /// schedhost_code), when `since` is set (see PluginStart).
  void ObservePlugin(const std::optional<metrics::Stopwatch>& since, const PluginInstance& plugin,
                     size_t slot, int32_t raw_code) {
    if (since) ObservePluginSlow(since->Seconds(), plugin, slot, raw_code);
  }
  /// ObservePlugin records one call that ended with `code` (see above).
  void ObservePlugin(const std::optional<metrics::Stopwatch>& since, const PluginInstance& plugin,
                     size_t slot, Code code) {
    if (since) ObservePluginSlow(since->Seconds(), plugin, slot, static_cast<int32_t>(code));
  }

 private:
  static constexpr size_t kNumCodes = 7;
  using Slots = std::array<std::atomic<metrics::Histogram*>, kNumMetricSlots * kNumCodes>;
  void ObservePluginSlow(double seconds, const PluginInstance& plugin, size_t slot,
                         int32_t raw_code);

  std::string profile_;
  bool shadow_ = false;
  std::array<metrics::Counter*, 3> attempts_{};  // scheduled, unschedulable, error
  std::array<metrics::Histogram*, 3> attempt_duration_{};
  Slots points_{};
  std::unordered_map<const PluginInstance*, std::unique_ptr<Slots>> plugins_;
};

}  // namespace schedhost::framework
