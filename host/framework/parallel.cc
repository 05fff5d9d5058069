#include "host/framework/parallel.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cmath>
#include <condition_variable>

#include "host/framework/log.h"

namespace schedhost::framework {
namespace {

// Loop is one Until call, shared by the caller and the helpers it posted to the pool. It lives on
// the caller's stack: Until returns only after every posted helper has left it.
struct Loop {
  size_t n = 0;
  size_t chunk = 1;
  const std::function<void(size_t)>* fn = nullptr;                // per index, or
  const std::function<void(size_t, size_t)>* chunk_fn = nullptr;  // per chunk
  const std::atomic<bool>* stop = nullptr;
  std::atomic<size_t> next{0};

  std::mutex mu;
  std::condition_variable done_cv;
  int helpers_left = 0;

  void RunChunks() {
    for (;;) {
      const size_t start = next.fetch_add(chunk, std::memory_order_relaxed);
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
};

}  // namespace

Parallelizer::Parallelizer(int parallelism) : parallelism_(std::max(1, parallelism)) {
  const auto hardware = static_cast<int>(std::thread::hardware_concurrency());
  threads_ = hardware > 0 ? std::min(parallelism_, hardware) : parallelism_;
  TouchLoggerBeforeThreads();
  if (threads_ > 1) {
    pool_ = std::make_unique<boost::asio::thread_pool>(static_cast<size_t>(threads_ - 1));
  }
}

Parallelizer::~Parallelizer() {
  if (pool_) pool_->join();
}

void Parallelizer::Until(size_t n, const std::function<void(size_t)>& fn,
                         const std::atomic<bool>* stop) {
  if (n == 0) return;
  if (!pool_ || n == 1) {
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
  if (!pool_) {
    // One thread: chunks of about sqrt(n) still let `stop` end the loop early.
    const auto chunk = std::max<size_t>(1, static_cast<size_t>(std::sqrt(static_cast<double>(n))));
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
  Loop loop;
  loop.n = n;
  // Chunks of about sqrt(n), as upstream, bounded so every thread gets work.
  const auto threads = static_cast<size_t>(threads_);
  const auto by_sqrt = static_cast<size_t>(std::sqrt(static_cast<double>(n)));
  loop.chunk = std::max<size_t>(1, std::min(by_sqrt, (n + threads - 1) / threads));
  loop.fn = fn;
  loop.chunk_fn = chunk_fn;
  loop.stop = stop;
  const size_t chunks = (n + loop.chunk - 1) / loop.chunk;
  loop.helpers_left = static_cast<int>(std::min(threads - 1, chunks - 1));
  for (int h = loop.helpers_left; h > 0; --h) {
    boost::asio::post(*pool_, [&loop] {
      loop.RunChunks();
      std::lock_guard<std::mutex> lock(loop.mu);
      if (--loop.helpers_left == 0) loop.done_cv.notify_one();
    });
  }
  loop.RunChunks();
  // A stop may leave indices unclaimed: claim them all so late helpers return at once.
  loop.next.store(n, std::memory_order_relaxed);
  std::unique_lock<std::mutex> lock(loop.mu);
  loop.done_cv.wait(lock, [&] { return loop.helpers_left == 0; });
}

}  // namespace schedhost::framework
