// ThreadPoolExecutor and ManualExecutor.
#include "host/scheduler/executor.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>

#include "host/framework/log.h"

namespace schedhost::scheduler {

ThreadPoolExecutor::ThreadPoolExecutor(int threads, std::chrono::microseconds poll,
                                       std::chrono::microseconds linger)
    : poll_(std::max(std::chrono::microseconds(0), poll)),
      linger_(std::max(std::chrono::microseconds(0), linger)) {
  framework::TouchLoggerBeforeThreads();
  const int n = std::max(1, threads);
  workers_.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) workers_.emplace_back([this] { Work(); });
}

ThreadPoolExecutor::~ThreadPoolExecutor() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPoolExecutor::Post(std::function<void()> task) {
  // The notify happens under the lock: once the task is visible a worker may run it, and the
  // task may be the last thing the owner waits for before destroying this executor, so Post
  // must not touch a member after the lock is released.
  std::lock_guard lock(mu_);
  tasks_.push_back(std::move(task));
  if (waiting_ > 0 && (polling_ == 0 || tasks_.size() > kMaxQueued)) {
    ++wakeups_;
    cv_.notify_one();
  }
}

uint64_t ThreadPoolExecutor::wakeups() const {
  std::lock_guard lock(mu_);
  return wakeups_;
}

int ThreadPoolExecutor::polling() const {
  std::lock_guard lock(mu_);
  return polling_;
}

void ThreadPoolExecutor::Work() {
  using Clock = std::chrono::steady_clock;
  std::unique_lock lock(mu_);
  Clock::time_point last_task{};
  for (;;) {
    if (!tasks_.empty()) {
      std::function<void()> task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      try {
        task();
      } catch (const std::exception& e) {
        spdlog::error("executor: a task failed: {}", e.what());
      } catch (...) {
        spdlog::error("executor: a task failed with an unknown exception");
      }
      task = nullptr;  // destroyed outside the lock
      last_task = Clock::now();
      lock.lock();
      continue;
    }
    if (stopping_) return;
    ++waiting_;
    if (poll_.count() > 0 && polling_ == 0 && Clock::now() - last_task < linger_) {
      ++polling_;
      cv_.wait_for(lock, poll_);
      --polling_;
    } else {
      cv_.wait(lock);
    }
    --waiting_;
  }
}

void ManualExecutor::Post(std::function<void()> task) {
  std::lock_guard lock(mu_);
  tasks_.push_back(std::move(task));
}

size_t ManualExecutor::RunAll() {
  size_t ran = 0;
  for (;;) {
    std::function<void()> task;
    {
      std::lock_guard lock(mu_);
      if (tasks_.empty()) return ran;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
    ++ran;
  }
}

size_t ManualExecutor::pending() const {
  std::lock_guard lock(mu_);
  return tasks_.size();
}

}  // namespace schedhost::scheduler
