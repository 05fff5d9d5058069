// RealClock's timer thread and VirtualClock's manual time.
#include "host/scheduler/clock.h"

#include <algorithm>

#include "host/framework/log.h"

namespace schedhost::scheduler {

// --- RealClock ---------------------------------------------------------------------------------

RealClock::RealClock() {
  framework::TouchLoggerBeforeThreads();
  thread_ = std::thread([this] { Loop(); });
}

RealClock::~RealClock() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

Clock::TimePoint RealClock::Now() const { return std::chrono::steady_clock::now(); }

Clock::TimerId RealClock::AfterFunc(std::chrono::nanoseconds delay, std::function<void()> fn) {
  const TimePoint at = Now() + std::max(delay, std::chrono::nanoseconds(0));
  TimerId id = 0;
  bool earliest = false;
  {
    std::lock_guard lock(mu_);
    id = next_id_++;
    timers_.emplace(id, std::make_pair(at, std::move(fn)));
    due_.emplace(at, id);
    earliest = due_.begin()->second == id;
  }
  if (earliest) cv_.notify_all();
  return id;
}

bool RealClock::Cancel(TimerId id) {
  std::lock_guard lock(mu_);
  auto it = timers_.find(id);
  if (it == timers_.end()) return false;
  due_.erase({it->second.first, id});
  timers_.erase(it);
  return true;
}

void RealClock::Loop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    if (due_.empty()) {
      cv_.wait(lock);
      continue;
    }
    const auto [at, id] = *due_.begin();
    if (Now() < at) {
      cv_.wait_until(lock, at);
      continue;
    }
    due_.erase(due_.begin());
    auto node = timers_.extract(id);
    lock.unlock();
    node.mapped().second();
    lock.lock();
  }
}

// --- VirtualClock ------------------------------------------------------------------------------

VirtualClock::VirtualClock(TimePoint start) : now_(start) {}

Clock::TimePoint VirtualClock::Now() const {
  std::lock_guard lock(mu_);
  return now_;
}

Clock::TimerId VirtualClock::AfterFunc(std::chrono::nanoseconds delay, std::function<void()> fn) {
  std::lock_guard lock(mu_);
  const TimePoint at = now_ + std::max(delay, std::chrono::nanoseconds(0));
  const TimerId id = next_id_++;
  timers_.emplace(id, std::make_pair(at, std::move(fn)));
  due_.emplace(at, id);
  return id;
}

bool VirtualClock::Cancel(TimerId id) {
  std::lock_guard lock(mu_);
  auto it = timers_.find(id);
  if (it == timers_.end()) return false;
  due_.erase({it->second.first, id});
  timers_.erase(it);
  return true;
}

std::optional<Clock::TimePoint> VirtualClock::NextTimer() const {
  std::lock_guard lock(mu_);
  if (due_.empty()) return std::nullopt;
  return due_.begin()->first;
}

bool VirtualClock::AdvanceToNextTimer() {
  std::optional<TimePoint> next = NextTimer();
  if (!next) return false;
  FireDueUntil(std::max(*next, Now()));
  return true;
}

void VirtualClock::Advance(std::chrono::nanoseconds d) {
  FireDueUntil(Now() + std::max(d, std::chrono::nanoseconds(0)));
}

size_t VirtualClock::armed() const {
  std::lock_guard lock(mu_);
  return timers_.size();
}

void VirtualClock::FireDueUntil(TimePoint until) {
  std::unique_lock lock(mu_);
  while (!due_.empty() && due_.begin()->first <= until) {
    const auto [at, id] = *due_.begin();
    due_.erase(due_.begin());
    auto node = timers_.extract(id);
    if (at > now_) now_ = at;
    lock.unlock();
    node.mapped().second();
    lock.lock();
  }
  if (until > now_) now_ = until;
}

}  // namespace schedhost::scheduler
