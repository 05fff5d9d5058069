// Scheduler counters (attempts by result, bindings and their rate) and the lookup of the
// per-pod record of the last scheduling cycle (recorded in schedule_one.cc).
#include <algorithm>

#include "host/scheduler/scheduler.h"

namespace schedhost::scheduler {
namespace {

constexpr int64_t kNanosPerSecond = 1'000'000'000;

}  // namespace

void BindingRate::Add(int64_t now_ns) {
  const int64_t second = now_ns / kNanosPerSecond;
  const auto slot = static_cast<size_t>(second % static_cast<int64_t>(kSeconds));
  std::lock_guard lock(mu_);
  if (second_.at(slot) != second) {
    second_.at(slot) = second;
    count_.at(slot) = 0;
  }
  ++count_.at(slot);
}

double BindingRate::PerSecond(int64_t start_ns, int64_t now_ns) const {
  const int64_t now_second = now_ns / kNanosPerSecond;
  uint64_t total = 0;
  {
    std::lock_guard lock(mu_);
    for (size_t i = 0; i < kSeconds; ++i) {
      // A slot counts while its second lies within the last 60 (the current one included).
      if (count_.at(i) != 0 && now_second - second_.at(i) < static_cast<int64_t>(kSeconds)) {
        total += count_.at(i);
      }
    }
  }
  const double window_s = std::clamp(static_cast<double>(now_ns - start_ns) / kNanosPerSecond, 1.0,
                                     static_cast<double>(kSeconds));
  return static_cast<double>(total) / window_s;
}

SchedulerStats Scheduler::Stats() const {
  SchedulerStats s;
  s.queue = queue_->Counts();
  s.attempts_scheduled = attempts_scheduled_.load();
  s.attempts_unschedulable = attempts_unschedulable_.load();
  s.attempts_error = attempts_error_.load();
  // Upstream counts "scheduled" when the binding succeeds, so the two are the same count.
  s.bound_pods = s.attempts_scheduled;
  s.pods_per_second = binding_rate_.PerSecond(started_ns_, framework::Nanos(clock_->Now()));
  return s;
}

void Scheduler::CountFailedAttempt(const framework::Status& status) {
  // Upstream's handleSchedulingFailure: a rejection is "unschedulable", anything else "error".
  (status.IsRejected() ? attempts_unschedulable_ : attempts_error_).fetch_add(1);
}

void Scheduler::CountBinding() {
  attempts_scheduled_.fetch_add(1);
  binding_rate_.Add(framework::Nanos(clock_->Now()));
}

std::shared_ptr<const CycleExplanation> Scheduler::Explanation(std::string_view uid) const {
  std::shared_ptr<const RecordedCycle> record;
  {
    std::lock_guard lock(diag_mu_);
    auto it = diagnostics_.find(model::UidKey::Probe(uid));
    if (it == diagnostics_.end() || it->second.explanation == 0) return nullptr;
    record = explanations_[it->second.explanation].record;
  }
  return record->Expand();
}

}  // namespace schedhost::scheduler
