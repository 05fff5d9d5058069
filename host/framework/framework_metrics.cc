// FrameworkMetrics: resolving series once and recording attempts, points and plugin calls.
#include "host/framework/framework_metrics.h"

#include <string_view>

#include "host/framework/plugin_instance.h"

namespace schedhost::framework {
namespace {

// Upstream's extension_point label values, by slot.
constexpr std::array<std::string_view, kNumMetricSlots> kPointLabels = {
    "PreEnqueue", "QueueSort", "PreFilter", "Filter", "PostFilter", "PreScore", "Score",
    "Reserve",    "Permit",    "PreBind",   "Bind",   "PostBind",   "Unreserve"};

constexpr std::array<std::string_view, 3> kResults = {"scheduled", "unschedulable", "error"};

size_t CodeIndex(int32_t raw) { return static_cast<size_t>(CodeFromAbi(raw)); }

// Resolve returns the histogram in `slot`, looking it up in `family` with the label values
// `labels()` makes the first time (so that later calls build no strings).
template <typename MakeLabels>
metrics::Histogram& Resolve(std::atomic<metrics::Histogram*>& slot,
                            metrics::HistogramFamily& family, const MakeLabels& labels) {
  metrics::Histogram* h = slot.load(std::memory_order_acquire);
  if (h == nullptr) {
    h = &family.With(labels());  // racing resolvers get the same child
    slot.store(h, std::memory_order_release);
  }
  return *h;
}

}  // namespace

FrameworkMetrics::FrameworkMetrics(const std::string& profile,
                                   const std::vector<std::unique_ptr<PluginInstance>>& plugins,
                                   bool shadow)
    : profile_(profile), shadow_(shadow) {
  const metrics::SchedulerMetrics& m = metrics::Metrics();
  for (size_t i = 0; i < kResults.size(); ++i) {
    attempts_[i] = &m.schedule_attempts.With({std::string(kResults[i]), profile});
    attempt_duration_[i] = &m.attempt_duration.With({std::string(kResults[i]), profile});
  }
  for (const auto& p : plugins) plugins_.emplace(p.get(), std::make_unique<Slots>());
}

FrameworkMetrics::~FrameworkMetrics() = default;

void FrameworkMetrics::BeginAttempt(CycleState& state) {
  state.attempt_start = std::chrono::steady_clock::now();
  state.record_plugin_metrics = metrics::SamplePluginMetrics();
}

void FrameworkMetrics::EndAttempt(const CycleState& state, const Status& status) {
  const size_t result = status.ok() ? 0 : status.IsRejected() ? 1 : 2;
  attempts_[result]->Inc();
  attempt_duration_[result]->Observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - state.attempt_start)
          .count());
}

void FrameworkMetrics::ObservePoint(size_t slot, Code code, const metrics::Stopwatch& since) {
  if (shadow_) return;
  const double seconds = since.Seconds();
  const size_t c = CodeIndex(static_cast<int32_t>(code));
  Resolve(points_[slot * kNumCodes + c], metrics::Metrics().extension_point_duration, [&] {
    return metrics::LabelValues{std::string(kPointLabels[slot]),
                                std::string(CodeName(static_cast<Code>(c))), profile_};
  }).Observe(seconds);
}

void FrameworkMetrics::ObservePluginSlow(double seconds, const PluginInstance& plugin, size_t slot,
                                         int32_t raw_code) {
  auto it = plugins_.find(&plugin);
  if (it == plugins_.end()) return;  // not one of this framework's plugins
  const size_t c = CodeIndex(raw_code);
  if (shadow_) {
    Resolve((*it->second)[slot * kNumCodes + c], metrics::Metrics().shadow_plugin_duration, [&] {
      return metrics::LabelValues{profile_, plugin.name, std::string(kPointLabels[slot]),
                                  std::string(CodeName(static_cast<Code>(c)))};
    }).Observe(seconds);
    return;
  }
  Resolve((*it->second)[slot * kNumCodes + c], metrics::Metrics().plugin_duration, [&] {
    return metrics::LabelValues{plugin.name, std::string(kPointLabels[slot]),
                                std::string(CodeName(static_cast<Code>(c)))};
  }).Observe(seconds);
}

}  // namespace schedhost::framework
