// Clock: the one source of time and timers for the scheduling machinery. The queue reads Now()
// for backoff and flushes; WaitingPods arms its per-plugin Permit timeouts with AfterFunc. The
// scheduler provides a real implementation (a timer thread) and a virtual one whose time only
// moves when its owner says so, which makes simulations and timing tests deterministic.
//
//   TimerId id = clock.AfterFunc(std::chrono::seconds(5), [] { ... });
//   clock.Cancel(id);
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

namespace schedhost::framework {

/// Clock is thread-safe. Callbacks run on the clock's own thread (real) or on the thread that
/// advances it (virtual), never with the clock's lock held, so they may arm or cancel timers.
class Clock {
 public:
  /// TimePoint is a monotonic reading, the same type the scheduling queue uses.
  using TimePoint = std::chrono::steady_clock::time_point;
  /// TimerId identifies an armed timer; 0 is never a valid id.
  using TimerId = uint64_t;

  virtual ~Clock() = default;
  /// Now returns the current time.
  virtual TimePoint Now() const = 0;
  /// AfterFunc arms a one-shot timer that runs `fn` once `delay` has passed (a zero or negative
  /// delay: as soon as possible) and returns its id.
  virtual TimerId AfterFunc(std::chrono::nanoseconds delay, std::function<void()> fn) = 0;
  /// Cancel disarms a timer; true when it had not fired yet. A callback already running is not
  /// waited for (so a callback may cancel timers, including its own).
  virtual bool Cancel(TimerId id) = 0;
};

/// Nanos is a reading in nanoseconds since the clock's epoch, as the ABI and the stats carry it.
inline int64_t Nanos(Clock::TimePoint t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

}  // namespace schedhost::framework
