// RealClock's timer thread and VirtualClock's manual time.
#include "host/scheduler/clock.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "host/framework/log.h"

namespace schedhost::scheduler {

// --- RealClock ---------------------------------------------------------------------------------

// Timer is one armed timer. Only the io_context's thread touches `timer`: arming and
// cancelling are posted to it, in the order the callers made them.
struct RealClock::Timer {
  explicit Timer(boost::asio::io_context& io) : timer(io) {}
  boost::asio::steady_timer timer;
  std::function<void()> fn;
};

RealClock::RealClock() : work_(boost::asio::make_work_guard(io_)) {
  framework::TouchLoggerBeforeThreads();
  thread_ = std::thread([this] { io_.run(); });
}

RealClock::~RealClock() {
  io_.stop();
  thread_.join();
  std::lock_guard lock(mu_);
  timers_.clear();
}

Clock::TimePoint RealClock::Now() const { return std::chrono::steady_clock::now(); }

Clock::TimerId RealClock::AfterFunc(std::chrono::nanoseconds delay, std::function<void()> fn) {
  const TimePoint at = Now() + std::max(delay, std::chrono::nanoseconds(0));
  auto timer = std::make_shared<Timer>(io_);
  timer->fn = std::move(fn);
  TimerId id = 0;
  {
    std::lock_guard lock(mu_);
    id = next_id_++;
    timers_.emplace(id, timer);
  }
  boost::asio::post(io_, [this, timer, id, at] {
    timer->timer.expires_at(at);
    timer->timer.async_wait([this, id](const boost::system::error_code& ec) {
      if (!ec) Fire(id);
    });
  });
  return id;
}

bool RealClock::Cancel(TimerId id) {
  std::shared_ptr<Timer> timer;
  {
    std::lock_guard lock(mu_);
    auto it = timers_.find(id);
    if (it == timers_.end()) return false;
    timer = std::move(it->second);
    timers_.erase(it);
  }
  // Forgetting the id already keeps the callback from running; cancelling frees the wait early.
  boost::asio::post(io_, [timer] { timer->timer.cancel(); });
  return true;
}

void RealClock::Fire(TimerId id) {
  std::shared_ptr<Timer> timer;
  {
    std::lock_guard lock(mu_);
    auto it = timers_.find(id);
    if (it == timers_.end()) return;  // cancelled after it expired
    timer = std::move(it->second);
    timers_.erase(it);
  }
  timer->fn();
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
