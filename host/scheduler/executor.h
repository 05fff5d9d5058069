// Executors for the binding cycles: the scheduling loop hands each pod's binding cycle to one
// and moves on (optimistic binding, reference/002). ThreadPoolExecutor runs them on worker
// threads; ManualExecutor queues them until its owner runs them, which is what a simulation on a
// virtual clock uses to stay deterministic.
//
//   ThreadPoolExecutor pool(4);
//   pool.Post([] { ...binding cycle... });
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace schedhost::scheduler {

/// Executor runs posted tasks; Post is thread-safe and never runs the task inline.
class Executor {
 public:
  virtual ~Executor() = default;
  /// Post schedules `task` to run once.
  virtual void Post(std::function<void()> task) = 0;
};

/// ThreadPoolExecutor runs tasks on its own worker threads, in posting order per free thread.
///
/// Waking a parked thread costs the poster a futex call and, on a VM whose other vCPU has gone
/// idle, a reschedule interrupt: ~8 % of the scheduling thread in scheduling_basic, which posts a
/// binding cycle every ~100 µs. So a worker that ran out of tasks, if it had one within
/// `linger`, parks with a timeout of `poll` instead of indefinitely, and while one worker waits
/// that way Post wakes nobody: the poller takes what was posted when its timeout ends (at most
/// `poll` later). Post wakes a worker when none polls, or when more than kMaxQueued tasks wait
/// (a poller may be stuck behind a slow task, or the burst is worth a second thread). An idle
/// pool stops polling after `linger` and costs nothing. Boost.Asio's thread_pool, used before,
/// wakes a thread on every post and has no such mode.
class ThreadPoolExecutor : public Executor {
 public:
  /// kMaxQueued is how many tasks may wait for a polling worker before Post wakes another.
  static constexpr size_t kMaxQueued = 16;

  /// ThreadPoolExecutor starts `threads` workers (at least one). `poll` zero: never poll (every
  /// Post to an idle pool wakes a worker).
  explicit ThreadPoolExecutor(int threads,
                              std::chrono::microseconds poll = std::chrono::microseconds(500),
                              std::chrono::microseconds linger = std::chrono::milliseconds(20));
  /// ~ThreadPoolExecutor runs every task already posted (and those they post), then joins the
  /// workers.
  ~ThreadPoolExecutor() override;
  ThreadPoolExecutor(const ThreadPoolExecutor&) = delete;
  ThreadPoolExecutor& operator=(const ThreadPoolExecutor&) = delete;

  void Post(std::function<void()> task) override;
  /// wakeups counts the workers Post has woken; polling how many workers park with a timeout
  /// now (both for tests).
  uint64_t wakeups() const;
  int polling() const;

 private:
  void Work();

  const std::chrono::microseconds poll_;
  const std::chrono::microseconds linger_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;  // guarded by mu_
  int polling_ = 0;                          // workers parked with a timeout; guarded by mu_
  int waiting_ = 0;                          // all parked workers; guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  uint64_t wakeups_ = 0;                     // guarded by mu_
  std::vector<std::thread> workers_;
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
