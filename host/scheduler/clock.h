// The scheduler's clocks (framework::Clock): RealClock runs timers on a thread of its own over
// std::chrono::steady_clock; VirtualClock keeps timers in a heap and only moves time when its
// owner calls Advance / AdvanceToNextTimer, so `schedctl simulate` and timing tests run in
// milliseconds and give the same answer every time.
//
//   VirtualClock clock;
//   clock.AfterFunc(std::chrono::seconds(5), [] { ... });
//   clock.AdvanceToNextTimer();   // now is start + 5s, the callback ran
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "host/framework/clock.h"

namespace schedhost::scheduler {

using framework::Clock;

/// RealClock: steady_clock time, timers run by a Boost.Asio io_context on one thread of its own.
class RealClock : public Clock {
 public:
  RealClock();
  /// ~RealClock stops the timer thread; timers not yet fired never run.
  ~RealClock() override;
  RealClock(const RealClock&) = delete;
  RealClock& operator=(const RealClock&) = delete;

  TimePoint Now() const override;
  TimerId AfterFunc(std::chrono::nanoseconds delay, std::function<void()> fn) override;
  bool Cancel(TimerId id) override;

 private:
  struct Timer;
  void Fire(TimerId id);

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  mutable std::mutex mu_;
  std::map<TimerId, std::shared_ptr<Timer>> timers_;  // armed, not yet fired or cancelled
  TimerId next_id_ = 1;
  std::thread thread_;
};

/// VirtualClock: time stands still until the owner advances it; timers due at the same instant
/// fire in the order they were armed. Callbacks run on the advancing thread, without the lock.
class VirtualClock : public Clock {
 public:
  /// VirtualClock starts at `start` (an arbitrary non-zero instant by default).
  explicit VirtualClock(TimePoint start = TimePoint(std::chrono::hours(24)));

  TimePoint Now() const override;
  TimerId AfterFunc(std::chrono::nanoseconds delay, std::function<void()> fn) override;
  bool Cancel(TimerId id) override;

  /// NextTimer returns when the earliest armed timer is due, or nullopt when none is armed.
  std::optional<TimePoint> NextTimer() const;
  /// AdvanceToNextTimer moves time to the earliest timer (never backwards) and fires every timer
  /// due by then, including ones callbacks arm for that instant; false when none was armed.
  bool AdvanceToNextTimer();
  /// Advance moves time forward by `d`, firing every timer due on the way in time order (time
  /// stands at each timer's instant while it runs).
  void Advance(std::chrono::nanoseconds d);
  /// armed returns how many timers are armed.
  size_t armed() const;

 private:
  // FireDueUntil fires, in order, every timer due at or before `until`, moving time with them.
  void FireDueUntil(TimePoint until);

  mutable std::mutex mu_;
  TimePoint now_;
  std::set<std::pair<TimePoint, TimerId>> due_;
  std::map<TimerId, std::pair<TimePoint, std::function<void()>>> timers_;
  TimerId next_id_ = 1;
};

}  // namespace schedhost::scheduler
