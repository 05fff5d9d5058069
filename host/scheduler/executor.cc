// ThreadPoolExecutor and ManualExecutor.
#include "host/scheduler/executor.h"

#include <algorithm>
#include <boost/asio/post.hpp>

#include "host/framework/log.h"

namespace schedhost::scheduler {

namespace {
size_t AtLeastOne(int threads) { return static_cast<size_t>(std::max(1, threads)); }
}  // namespace

ThreadPoolExecutor::ThreadPoolExecutor(int threads)
    : pool_((framework::TouchLoggerBeforeThreads(), AtLeastOne(threads))) {}

// join() waits for the outstanding work, including tasks those tasks post.
ThreadPoolExecutor::~ThreadPoolExecutor() { pool_.join(); }

void ThreadPoolExecutor::Post(std::function<void()> task) {
  boost::asio::post(pool_, std::move(task));
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
