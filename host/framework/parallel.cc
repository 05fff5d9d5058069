#include "host/framework/parallel.h"

#include <algorithm>
#include <cmath>

#include "host/framework/log.h"

namespace schedhost::framework {

Parallelizer::Parallelizer(int parallelism) : parallelism_(std::max(1, parallelism)) {
  TouchLoggerBeforeThreads();
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

void Parallelizer::RunChunks(const Job& job) {
  for (;;) {
    size_t start = next_.fetch_add(job.chunk, std::memory_order_relaxed);
    if (start >= job.n) return;
    size_t end = std::min(job.n, start + job.chunk);
    for (size_t i = start; i < end; ++i) {
      if (job.stop != nullptr && job.stop->load(std::memory_order_relaxed)) return;
      (*job.fn)(i);
    }
  }
}

void Parallelizer::Worker() {
  uint64_t seen = 0;
  Job job;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return shutdown_ || job_ != seen; });
      if (shutdown_) return;
      seen = job_;
      // A worker that wakes after the caller finished the job must not touch it: the caller may
      // already be setting up the next one (with another size and function).
      if (finished_job_ == job_) continue;
      job = Job{n_, chunk_, fn_, stop_};
      ++active_;
    }
    RunChunks(job);
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
  Job job;
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
    job = Job{n_, chunk_, fn_, stop_};
  }
  cv_.notify_all();
  RunChunks(job);
  // Exhaust the indices (a stop may have left some unclaimed), wait for the workers still inside
  // the job, and mark it finished so that a worker waking up late leaves it alone.
  next_.store(n, std::memory_order_relaxed);
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return active_ == 0; });
  finished_job_ = job_;
  fn_ = nullptr;
}

}  // namespace schedhost::framework
