// Parallelizer: index loops in chunks over a Boost.Asio thread pool.
//
// Filter and Score run over thousands of nodes per pod; the pool is created once per host so a
// cycle pays no thread creation. The calling thread works too, so parallelism 1 is a plain loop.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>

namespace boost::asio {
class thread_pool;
}  // namespace boost::asio

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
  int parallelism_;
  std::unique_ptr<boost::asio::thread_pool> pool_;  // parallelism - 1 workers; null when 1
  std::mutex run_mu_;                               // serialises Until callers
};

}  // namespace schedhost::framework
