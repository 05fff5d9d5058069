// Parallelizer: index loops in chunks over a few helper threads.
//
// Filter and Score run over thousands of nodes per pod; the helper threads are created once per
// host so a cycle pays no thread creation. The calling thread works too, so parallelism 1 is a
// plain loop. Upstream's parallelism counts goroutines, which cost nothing to park; here every
// helper is an OS thread whose wake-up costs microseconds, so there are never more threads than
// the machine has hardware threads (parallelism 16 on 2 cores runs on 2 threads), and a helper
// that finished a loop watches for the next one for a few tens of microseconds before it parks
// (a cycle's Filter and Score loops come that close together).
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

namespace schedhost::framework {

/// Parallelizer runs `fn(i)` for i in [0, n) on up to `parallelism` threads (at most the
/// hardware's thread count).
class Parallelizer {
 public:
  explicit Parallelizer(int parallelism);
  ~Parallelizer();
  Parallelizer(const Parallelizer&) = delete;
  Parallelizer& operator=(const Parallelizer&) = delete;

  /// Until runs fn(i) for every i < n and returns when all calls finished. `stop`, when it
  /// becomes true, makes workers skip the indices not yet started. Not re-entrant: one loop at
  /// a time per Parallelizer (calls from several threads are serialised).
  void Until(size_t n, const std::function<void(size_t)>& fn,
             const std::atomic<bool>* stop = nullptr);
  /// UntilChunks is Until for loops whose per-index work is tiny: fn(begin, end) handles a whole
  /// chunk of indices, and checks `stop` itself if it wants to end early.
  void UntilChunks(size_t n, const std::function<void(size_t, size_t)>& fn,
                   const std::atomic<bool>* stop = nullptr);
  /// Range is a part of a loop's indices, [begin, end), and the thread it belongs with (a
  /// Worker() number).
  struct Range {
    size_t begin = 0;
    size_t end = 0;
    int worker = 0;
  };
  /// UntilRanges runs fn(begin, end) once for each of `ranges` (disjoint) and returns when all
  /// calls finished. Each thread runs the ranges marked with its own Worker() number first, in
  /// order, and then takes what the others have not started: a loop whose data an earlier loop
  /// left in one core's cache runs there, and no thread waits for another (a pool of one
  /// thread runs them in order). `stop` as in UntilChunks (checked before each range).
  void UntilRanges(std::span<const Range> ranges, const std::function<void(size_t, size_t)>& fn,
                   const std::atomic<bool>* stop = nullptr);
  /// ChunkSize is the size of the chunks UntilChunks hands out for a loop of n indices (the last
  /// may be shorter): about sqrt(n), as upstream, and small enough that every thread gets work.
  size_t ChunkSize(size_t n) const;
  /// Worker numbers the calling thread within its pool: 0 for a thread that is not a helper (the
  /// one that calls Until), 1 .. threads() - 1 for the helpers.
  static int Worker();
  /// parallelism is the configured value; threads() how many threads actually run a loop.
  int parallelism() const { return parallelism_; }
  int threads() const { return threads_; }

 private:
  int parallelism_;
  int threads_;
  // Run is the pooled loop behind Until (fn) and UntilChunks (chunk_fn).
  void Run(size_t n, const std::function<void(size_t)>* fn,
           const std::function<void(size_t, size_t)>* chunk_fn, const std::atomic<bool>* stop);

  // Loop is one loop's shared state, Workers the helper threads (threads_ - 1; null when 1);
  // both in parallel.cc.
  struct Loop;
  struct Workers;
  std::unique_ptr<Workers> workers_;
  std::mutex run_mu_;  // serialises Until callers
};

}  // namespace schedhost::framework
