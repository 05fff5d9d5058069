// Parallelizer: a fixed pool of worker threads running index loops in chunks.
//
// Filter and Score run over thousands of nodes per pod; the pool is created once per host so a
// cycle pays no thread creation. The calling thread works too, so parallelism 1 is a plain loop.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace schedhost::framework {

/// Parallelizer runs `fn(i)` for i in [0, n) on up to `parallelism` threads.
class Parallelizer {
 public:
  explicit Parallelizer(int parallelism);
  ~Parallelizer();
  Parallelizer(const Parallelizer&) = delete;
  Parallelizer& operator=(const Parallelizer&) = delete;

  /// Until runs fn(i) for every i < n and returns when all calls finished. `stop`, when it
  /// becomes true, makes workers skip the indices not yet started. Not re-entrant: one loop at
  /// a time per Parallelizer (calls from several threads are serialised).
  void Until(size_t n, const std::function<void(size_t)>& fn, const std::atomic<bool>* stop = nullptr);
  int parallelism() const { return parallelism_; }

 private:
  // Job is one Until call's parameters, copied under mu_ by every thread that takes part.
  struct Job {
    size_t n = 0;
    size_t chunk = 1;
    const std::function<void(size_t)>* fn = nullptr;
    const std::atomic<bool>* stop = nullptr;
  };
  void Worker();
  void RunChunks(const Job& job);

  int parallelism_;
  std::vector<std::thread> threads_;
  std::mutex run_mu_;  // serialises Until callers
  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable done_cv_;
  bool shutdown_ = false;
  uint64_t job_ = 0;
  uint64_t finished_job_ = 0;  // the last job whose caller saw every worker leave it
  size_t n_ = 0;
  size_t chunk_ = 1;
  const std::function<void(size_t)>* fn_ = nullptr;
  const std::atomic<bool>* stop_ = nullptr;
  std::atomic<size_t> next_{0};
  int active_ = 0;
};

}  // namespace schedhost::framework
