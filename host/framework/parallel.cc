#include "host/framework/parallel.h"

#include <algorithm>
#include <cmath>

namespace schedhost::framework {

Parallelizer::Parallelizer(int parallelism) : parallelism_(std::max(1, parallelism)) {
  for (int i = 1; i < parallelism_; ++i) threads_.emplace_back([this] { Worker(); });
}

Parallelizer::~Parallelizer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutdown_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void Parallelizer::RunChunks() {
  for (;;) {
    size_t start = next_.fetch_add(chunk_, std::memory_order_relaxed);
    if (start >= n_) return;
    size_t end = std::min(n_, start + chunk_);
    for (size_t i = start; i < end; ++i) {
      if (stop_ != nullptr && stop_->load(std::memory_order_relaxed)) return;
      (*fn_)(i);
    }
  }
}

void Parallelizer::Worker() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return shutdown_ || job_ != seen; });
      if (shutdown_) return;
      seen = job_;
      ++active_;
    }
    RunChunks();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--active_ == 0) done_cv_.notify_all();
    }
  }
}

void Parallelizer::Until(size_t n, const std::function<void(size_t)>& fn,
                         const std::atomic<bool>* stop) {
  if (n == 0) return;
  if (threads_.empty() || n == 1) {
    for (size_t i = 0; i < n; ++i) {
      if (stop != nullptr && stop->load(std::memory_order_relaxed)) return;
      fn(i);
    }
    return;
  }
  std::lock_guard<std::mutex> run_lock(run_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    n_ = n;
    // Chunks of about sqrt(n), as upstream, bounded so every worker gets work.
    size_t by_sqrt = static_cast<size_t>(std::sqrt(static_cast<double>(n)));
    size_t by_workers = (n + static_cast<size_t>(parallelism_) - 1) / static_cast<size_t>(parallelism_);
    chunk_ = std::max<size_t>(1, std::min(by_sqrt, by_workers));
    fn_ = &fn;
    stop_ = stop;
    next_.store(0, std::memory_order_relaxed);
    ++job_;
  }
  cv_.notify_all();
  RunChunks();
  // Exhaust the indices (a stop may have left some unclaimed) so that a worker waking up late
  // for this job finds nothing to do, then wait for the workers still inside it.
  next_.store(n, std::memory_order_relaxed);
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return active_ == 0; });
  fn_ = nullptr;
}

}  // namespace schedhost::framework
