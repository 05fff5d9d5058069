#include "host/framework/parallel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <thread>
#include <vector>

#include "host/framework/log.h"

// ThreadSanitizer's annotations, declared weak: they resolve to its runtime when the process has
// one and are null otherwise. A helper's end of a loop reaches the caller through `active`, an
// atomic TSan sees only in code built with it; libschedhost-testing.so ships without it, so a
// plugin's test built with -fsanitize=thread would see its plugin's work on a helper and the
// caller's next step (freeing the CycleState at the end of a Cycle) as unordered; so with the
// Loop's own end, which the last of its shared owners brings. Release and acquire on the Loop
// state both edges to the runtime, whichever way this code was built.
// NOLINTBEGIN(bugprone-reserved-identifier, readability-identifier-naming): TSan's names
extern "C" {
__attribute__((weak)) void __tsan_acquire(void* addr);
__attribute__((weak)) void __tsan_release(void* addr);
}
// NOLINTEND(bugprone-reserved-identifier, readability-identifier-naming)

namespace schedhost::framework {
namespace {

inline void TsanRelease(void* addr) {
  if (__tsan_release != nullptr) __tsan_release(addr);
}
inline void TsanAcquire(void* addr) {
  if (__tsan_acquire != nullptr) __tsan_acquire(addr);
}

// CpuRelax is one step of a spin-wait: the pause instruction where there is one, so the core
// does not flood the memory system while it watches a flag.
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// The calling thread's Parallelizer::Worker() number: helpers set theirs when they start.
thread_local int tls_worker = 0;

}  // namespace

// Loop is one Until call, shared by the caller and the helpers that join it (Workers below). The
// caller returns once every index is claimed and no helper is inside a chunk; a helper that
// comes later finds nothing left to claim and leaves without touching the caller's functions, so
// the caller never waits for a thread to be woken only to find the loop done (on a VM that
// wake-up can take longer than the whole loop). Helpers keep the Loop alive through their
// shared_ptr.
struct Parallelizer::Loop {
  size_t n = 0;
  size_t chunk = 1;
  const std::function<void(size_t)>* fn = nullptr;                // per index, or
  const std::function<void(size_t, size_t)>* chunk_fn = nullptr;  // per chunk
  const std::atomic<bool>* stop = nullptr;
  std::atomic<size_t> next{0};
  // An UntilRanges loop: its ranges (a copy, since a helper may look at them after the caller
  // returned) and which have been claimed.
  std::vector<Range> ranges;
  std::unique_ptr<std::atomic<bool>[]> claimed;
  std::atomic<int> active{0};  // helpers between entering and leaving RunChunks

  std::mutex mu;
  std::condition_variable done_cv;
  bool caller_waiting = false;  // guarded by mu

  // The last reference, the caller's or a helper's, destroys the Loop after every thread that
  // held one has let it go (an atomic count TSan does not see either): each releases before it
  // drops its reference (Help, Finish), this acquires.
  ~Loop() { TsanAcquire(this); }

  // RunChunks claims chunks until none is left. fn, chunk_fn and stop are read only after a
  // successful claim, which happens before the caller's last claim fails, so the caller is
  // still in Run (waiting for `active` to drop) whenever they are used.
  void RunChunks() {
    if (!ranges.empty()) return RunRanges();
    for (;;) {
      const size_t start = next.fetch_add(chunk);
      if (start >= n) return;
      const size_t end = std::min(n, start + chunk);
      if (chunk_fn != nullptr) {
        if (stop != nullptr && stop->load(std::memory_order_relaxed)) return;
        (*chunk_fn)(start, end);
        continue;
      }
      for (size_t i = start; i < end; ++i) {
        if (stop != nullptr && stop->load(std::memory_order_relaxed)) return;
        (*fn)(i);
      }
    }
  }

  // RunRanges is RunChunks for UntilRanges: this thread's own ranges first, then the others'.
  void RunRanges() {
    const int me = tls_worker;
    for (const bool own : {true, false}) {
      for (size_t k = 0; k < ranges.size(); ++k) {
        if ((ranges[k].worker == me) != own) continue;
        if (claimed[k].load(std::memory_order_relaxed) || claimed[k].exchange(true)) continue;
        if (stop != nullptr && stop->load(std::memory_order_relaxed)) return;
        (*chunk_fn)(ranges[k].begin, ranges[k].end);
      }
    }
  }

  // Help is a helper thread's part: registered in `active` before its first claim (both
  // sequentially consistent), so a caller that has seen its own claim fail and then reads
  // `active` == 0 knows no helper can still run a chunk.
  void Help() {
    active.fetch_add(1);
    RunChunks();
    TsanRelease(this);
    if (active.fetch_sub(1) == 1) {
      std::lock_guard<std::mutex> lock(mu);
      if (caller_waiting) done_cv.notify_one();
    }
    TsanRelease(this);  // for ~Loop, which may run on the caller
  }

  // Finish is the caller's part after its own RunChunks: claim what a stop left unclaimed, then
  // wait for the helpers inside a chunk (briefly spinning: a chunk is short).
  void Finish() {
    next.store(n);
    for (size_t k = 0; k < ranges.size(); ++k) claimed[k].store(true);
    for (int spin = 0; spin < 4096; ++spin) {
      if (active.load() == 0) {
        TsanAcquire(this);
        TsanRelease(this);  // for ~Loop, which may run on a helper
        return;
      }
      CpuRelax();
    }
    std::unique_lock<std::mutex> lock(mu);
    caller_waiting = true;
    done_cv.wait(lock, [&] { return active.load() == 0; });
    TsanAcquire(this);
    lock.unlock();
    TsanRelease(this);  // for ~Loop, which may run on a helper
  }
};

// Workers are the helper threads. The caller publishes each loop in one slot with a sequence
// number, and every worker joins every loop it sees (Loop::Help). After helping, a worker
// watches the slot for kWatch before it parks: a scheduling cycle runs its Filter and Score
// loops a few microseconds apart, and a watching worker joins the second without the caller
// paying a futex wake for it (~6 % of the scheduling thread each, on a VM whose other vCPU has
// gone idle).
struct Parallelizer::Workers {
  static constexpr std::chrono::microseconds kWatch{60};

  explicit Workers(size_t n) {
    threads_.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      threads_.emplace_back([this, i] {
        tls_worker = static_cast<int>(i) + 1;
        Work();
      });
    }
  }
  ~Workers() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  void Publish(std::shared_ptr<Loop> l) {
    bool wake = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      loop_ = std::move(l);
      ++seq_;
      published_.store(seq_, std::memory_order_release);
      wake = parked_ > 0;
    }
    if (wake) cv_.notify_all();
  }

 private:
  void Work() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (stopping_) return;
      if (seq_ == seen) {
        ++parked_;
        cv_.wait(lock);
        --parked_;
        continue;
      }
      seen = seq_;
      std::shared_ptr<Loop> l = loop_;
      lock.unlock();
      l->Help();
      l.reset();
      Watch(seen);
      lock.lock();
    }
  }

  // Watch returns when a loop after `seen` is published or kWatch has passed.
  void Watch(uint64_t seen) const {
    const auto deadline = std::chrono::steady_clock::now() + kWatch;
    for (;;) {
      for (int i = 0; i < 32; ++i) {
        if (published_.load(std::memory_order_acquire) != seen) return;
        CpuRelax();
      }
      if (std::chrono::steady_clock::now() >= deadline) return;
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<Loop> loop_;          // the latest loop; guarded by mu_
  uint64_t seq_ = 0;                    // guarded by mu_
  std::atomic<uint64_t> published_{0};  // seq_, read without the lock while watching
  int parked_ = 0;                      // guarded by mu_
  bool stopping_ = false;               // guarded by mu_
  std::vector<std::thread> threads_;
};

Parallelizer::Parallelizer(int parallelism) : parallelism_(std::max(1, parallelism)) {
  const auto hardware = static_cast<int>(std::thread::hardware_concurrency());
  threads_ = hardware > 0 ? std::min(parallelism_, hardware) : parallelism_;
  TouchLoggerBeforeThreads();
  if (threads_ > 1) workers_ = std::make_unique<Workers>(static_cast<size_t>(threads_ - 1));
}

Parallelizer::~Parallelizer() = default;

void Parallelizer::Until(size_t n, const std::function<void(size_t)>& fn,
                         const std::atomic<bool>* stop) {
  if (n == 0) return;
  if (!workers_ || n == 1) {
    for (size_t i = 0; i < n; ++i) {
      if (stop != nullptr && stop->load(std::memory_order_relaxed)) return;
      fn(i);
    }
    return;
  }
  Run(n, &fn, nullptr, stop);
}

void Parallelizer::UntilChunks(size_t n, const std::function<void(size_t, size_t)>& fn,
                               const std::atomic<bool>* stop) {
  if (n == 0) return;
  if (!workers_) {
    // One thread: chunks of about sqrt(n) still let `stop` end the loop early.
    const size_t chunk = ChunkSize(n);
    for (size_t start = 0; start < n; start += chunk) {
      if (stop != nullptr && stop->load(std::memory_order_relaxed)) return;
      fn(start, std::min(n, start + chunk));
    }
    return;
  }
  Run(n, nullptr, &fn, stop);
}

void Parallelizer::Run(size_t n, const std::function<void(size_t)>* fn,
                       const std::function<void(size_t, size_t)>* chunk_fn,
                       const std::atomic<bool>* stop) {
  std::lock_guard<std::mutex> run_lock(run_mu_);
  auto loop = std::make_shared<Loop>();
  loop->n = n;
  loop->chunk = ChunkSize(n);
  loop->fn = fn;
  loop->chunk_fn = chunk_fn;
  loop->stop = stop;
  if (n > loop->chunk) workers_->Publish(loop);  // more than one chunk: worth a helper
  loop->RunChunks();
  loop->Finish();
}

void Parallelizer::UntilRanges(std::span<const Range> ranges,
                               const std::function<void(size_t, size_t)>& fn,
                               const std::atomic<bool>* stop) {
  if (!workers_ || ranges.size() <= 1) {
    for (const Range& r : ranges) {
      if (stop != nullptr && stop->load(std::memory_order_relaxed)) return;
      fn(r.begin, r.end);
    }
    return;
  }
  std::lock_guard<std::mutex> run_lock(run_mu_);
  auto loop = std::make_shared<Loop>();
  loop->ranges.assign(ranges.begin(), ranges.end());
  loop->claimed = std::make_unique<std::atomic<bool>[]>(ranges.size());
  loop->chunk_fn = &fn;
  loop->stop = stop;
  workers_->Publish(loop);
  loop->RunChunks();
  loop->Finish();
}

size_t Parallelizer::ChunkSize(size_t n) const {
  const auto by_sqrt = std::max<size_t>(1, static_cast<size_t>(std::sqrt(static_cast<double>(n))));
  if (!workers_) return by_sqrt;
  const auto threads = static_cast<size_t>(threads_);
  return std::max<size_t>(1, std::min(by_sqrt, (n + threads - 1) / threads));
}

int Parallelizer::Worker() { return tls_worker; }

}  // namespace schedhost::framework
