// ThreadPoolExecutor and ManualExecutor.
#include "host/scheduler/executor.h"

#include <algorithm>

#include "host/framework/log.h"

namespace schedhost::scheduler {

ThreadPoolExecutor::ThreadPoolExecutor(int threads) {
  framework::TouchLoggerBeforeThreads();
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { Worker(); });
}

ThreadPoolExecutor::~ThreadPoolExecutor() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadPoolExecutor::Post(std::function<void()> task) {
  {
    std::lock_guard lock(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void ThreadPoolExecutor::Worker() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stopping, and nothing left to run
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    task();
    lock.lock();
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
