// Executors for the binding cycles: the scheduling loop hands each pod's binding cycle to one
// and moves on (optimistic binding, reference/002). ThreadPoolExecutor runs them on worker
// threads; ManualExecutor queues them until its owner runs them, which is what a simulation on a
// virtual clock uses to stay deterministic.
//
//   ThreadPoolExecutor pool(4);
//   pool.Post([] { ...binding cycle... });
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>

namespace schedhost::scheduler {

/// Executor runs posted tasks; Post is thread-safe and never runs the task inline.
class Executor {
 public:
  virtual ~Executor() = default;
  /// Post schedules `task` to run once.
  virtual void Post(std::function<void()> task) = 0;
};

/// ThreadPoolExecutor runs tasks on a Boost.Asio thread pool, in posting order per free thread.
class ThreadPoolExecutor : public Executor {
 public:
  /// ThreadPoolExecutor starts `threads` workers (at least one).
  explicit ThreadPoolExecutor(int threads);
  /// ~ThreadPoolExecutor runs every task already posted, then joins the workers.
  ~ThreadPoolExecutor() override;
  ThreadPoolExecutor(const ThreadPoolExecutor&) = delete;
  ThreadPoolExecutor& operator=(const ThreadPoolExecutor&) = delete;

  void Post(std::function<void()> task) override;

 private:
  boost::asio::thread_pool pool_;
};

/// ManualExecutor keeps tasks until RunAll is called; thread-safe.
class ManualExecutor : public Executor {
 public:
  void Post(std::function<void()> task) override;
  /// RunAll runs tasks in posting order, including those posted meanwhile, until none is left;
  /// returns how many ran.
  size_t RunAll();
  /// pending returns how many tasks wait.
  size_t pending() const;

 private:
  mutable std::mutex mu_;
  std::deque<std::function<void()>> tasks_;
};

}  // namespace schedhost::scheduler
