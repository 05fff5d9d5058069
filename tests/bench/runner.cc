#include "tests/bench/runner.h"

#include <sys/resource.h>
#include <unistd.h>

#include <time.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <vector>

#include "host/config/host_config.h"
#include "host/metrics/scheduler_metrics.h"
#include "host/scheduler/profile_set.h"
#include "host/scheduler/scheduler.h"
#include "host/store/store.h"
#include "tests/bench/host_memory.h"

namespace schedhost::bench {
namespace {

using Clock = std::chrono::steady_clock;

// BootTimeNs is CLOCK_BOOTTIME, the clock /proc/self/stat's start time counts on.
int64_t BootTimeNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_BOOTTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// ProcessStartBootNs is when this process started, on CLOCK_BOOTTIME: /proc/self/stat's field
// 22, in clock ticks (USER_HZ: 100 on Linux); -1 when it cannot be read.
int64_t ProcessStartBootNs() {
  std::ifstream in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return -1;
  std::istringstream fields(stat.substr(paren + 2));
  std::string field;
  for (int i = 3; i <= 22 && (fields >> field); ++i) {
    if (i == 22) return std::stoll(field) * (1'000'000'000 / 100);
  }
  return -1;
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

// Tracker follows every measured pod the workload creates: its creation time (taken right
// before the store write, which enqueues it) and its binding time (taken in the store watch that
// sees the binding). Unmeasured pods are only counted, so that creating them allocates nothing
// in the bench (the bytes per pending pod are sampled around such an operation). Watch
// callbacks run on whichever thread wrote (the binding threads), so a mutex.
class Tracker {
 public:
  // Created records that measured pod `name` is about to be created now.
  void Created(std::string_view name) {
    const int64_t now = NowNs();
    std::lock_guard lock(mu_);
    slots_.emplace(name, pods_.size());
    pods_.push_back({now, 0});
  }
  // CreatedUnmeasured counts an unmeasured pod about to be created.
  void CreatedUnmeasured() {
    std::lock_guard lock(mu_);
    ++unmeasured_;
  }
  // OnEvent records bindings and deletions of pending pods.
  void OnEvent(const store::Event& e) {
    if (e.kind != store::Kind::kPod || e.resync) return;
    const auto& pod = std::get<std::shared_ptr<const model::Pod>>(e.object);
    const bool was_bound =
        e.old_object &&
        !std::get<std::shared_ptr<const model::Pod>>(*e.old_object)->node_name().empty();
    if (e.type == store::EventType::kModified && !was_bound && !pod->node_name().empty()) {
      const int64_t now = NowNs();
      std::lock_guard lock(mu_);
      if (bound_ == 0) first_bound_boot_ns_ = BootTimeNs();
      ++bound_;  // every pod in the store is the bench's
      auto it = slots_.find(pod->name());
      if (it != slots_.end()) pods_[it->second].bound_ns = now;
    } else if (e.type == store::EventType::kModified && pod->node_name().empty() &&
               !pod->nominated_node_name().empty()) {
      // A nomination (preemption's outcome): the first one counts.
      const int64_t now = NowNs();
      std::lock_guard lock(mu_);
      auto it = slots_.find(pod->name());
      if (it != slots_.end() && pods_[it->second].nominated_ns == 0) {
        pods_[it->second].nominated_ns = now;
      }
    } else if (e.type == store::EventType::kDeleted && pod->node_name().empty()) {
      std::lock_guard lock(mu_);
      ++deleted_pending_;
    }
  }
  // Counts returns {created, bound or deleted while pending}.
  std::pair<size_t, size_t> Counts() const {
    std::lock_guard lock(mu_);
    return {pods_.size() + unmeasured_, bound_ + deleted_pending_};
  }
  size_t Bound() const {
    std::lock_guard lock(mu_);
    return bound_;
  }
  // Fill sets the measured figures of `r` from the pods recorded.
  void Fill(RunResult& r) const {
    std::lock_guard lock(mu_);
    if (const int64_t start = ProcessStartBootNs(); start >= 0 && bound_ > 0) {
      r.first_binding_ms = static_cast<double>(first_bound_boot_ns_ - start) / 1e6;
    }
    int64_t first = 0;
    int64_t last = 0;
    std::vector<int64_t> latencies;
    latencies.reserve(pods_.size());
    for (const Pod& p : pods_) {
      if (first == 0 || p.created_ns < first) first = p.created_ns;
      if (p.bound_ns == 0) continue;
      last = std::max(last, p.bound_ns);
      latencies.push_back(p.bound_ns - p.created_ns);
    }
    r.measured_bound = latencies.size();
    if (latencies.empty()) return;
    r.seconds = static_cast<double>(last - first) / 1e9;
    r.pods_per_second = r.seconds > 0 ? static_cast<double>(latencies.size()) / r.seconds : 0;
    std::sort(latencies.begin(), latencies.end());
    auto pct = [&](double q) {
      const auto i = static_cast<size_t>(q * static_cast<double>(latencies.size() - 1));
      return static_cast<double>(latencies[i]) / 1e6;
    };
    r.p50_ms = pct(0.50);
    r.p90_ms = pct(0.90);
    r.p99_ms = pct(0.99);
    std::vector<int64_t> bindings;
    bindings.reserve(latencies.size());
    for (const Pod& p : pods_) {
      if (p.bound_ns != 0) bindings.push_back(p.bound_ns);
    }
    std::sort(bindings.begin(), bindings.end());
    int64_t gap = 0;
    for (size_t i = 1; i < bindings.size(); ++i) gap = std::max(gap, bindings[i] - bindings[i - 1]);
    r.max_gap_ms = static_cast<double>(gap) / 1e6;
    // Nominated or bound: a pod counts from whichever came first. Only reported when some
    // measured pod was nominated before its binding (a workload that preempts).
    int64_t last_settled = 0;
    size_t settled = 0;
    for (const Pod& p : pods_) {
      if (p.nominated_ns != 0 && (p.bound_ns == 0 || p.nominated_ns < p.bound_ns)) {
        ++r.measured_nominated;
      }
      int64_t t = p.bound_ns;
      if (p.nominated_ns != 0 && (t == 0 || p.nominated_ns < t)) t = p.nominated_ns;
      if (t == 0) continue;
      ++settled;
      last_settled = std::max(last_settled, t);
    }
    if (r.measured_nominated > 0 && last_settled > first) {
      r.nominated_or_bound_per_second =
          static_cast<double>(settled) / (static_cast<double>(last_settled - first) / 1e9);
    }
  }

 private:
  struct Pod {
    int64_t created_ns = 0;
    int64_t bound_ns = 0;
    int64_t nominated_ns = 0;
  };
  mutable std::mutex mu_;
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, size_t, NameHash, std::equal_to<>> slots_;
  std::vector<Pod> pods_;
  size_t unmeasured_ = 0;
  size_t bound_ = 0;
  int64_t first_bound_boot_ns_ = 0;
  size_t deleted_pending_ = 0;
};

// MetricSums are the process-wide histogram sums the bench reports shares from.
struct MetricSums {
  double cycle = 0;
  std::map<std::string, double> points;
};

MetricSums ReadMetricSums() {
  constexpr std::string_view kCycle = "scheduler_scheduling_attempt_duration_seconds_sum";
  constexpr std::string_view kPoint = "scheduler_framework_extension_point_duration_seconds_sum{";
  constexpr std::string_view kLabel = "extension_point=\"";
  MetricSums sums;
  std::istringstream in(metrics::DefaultRegistry().Render());
  std::string line;
  while (std::getline(in, line)) {
    const bool cycle = line.starts_with(kCycle);
    if (!cycle && !line.starts_with(kPoint)) continue;
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    const double value = std::strtod(line.c_str() + space + 1, nullptr);
    if (cycle) {
      sums.cycle += value;
      continue;
    }
    const size_t at = line.find(kLabel);
    if (at == std::string::npos) continue;
    const size_t from = at + kLabel.size();
    sums.points[line.substr(from, line.find('"', from) - from)] += value;
  }
  return sums;
}

uint64_t Attempts(const scheduler::SchedulerStats& s) {
  return s.attempts_scheduled + s.attempts_unschedulable + s.attempts_error;
}

// Progress prints one line on stderr at most once a second (rewritten in place on a terminal).
class Progress {
 public:
  Progress(bool enabled, std::string workload)
      : enabled_(enabled), tty_(isatty(STDERR_FILENO) != 0), workload_(std::move(workload)) {}
  ~Progress() {
    if (enabled_ && printed_ && tty_) std::fputc('\n', stderr);
  }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void Print(size_t op, size_t ops, const std::string& what, const Tracker& tracker) {
    if (!enabled_) return;
    const auto now = Clock::now();
    if (printed_ && now - last_ < std::chrono::seconds(1)) return;
    const size_t bound = tracker.Bound();
    const double rate = printed_ ? static_cast<double>(bound - last_bound_) /
                                       std::chrono::duration<double>(now - last_).count()
                                 : 0;
    std::fprintf(stderr, "%s%s: op %zu/%zu %s, %zu pods bound, %.0f pods/s%s", tty_ ? "\r" : "",
                 workload_.c_str(), op + 1, ops, what.c_str(), bound, rate, tty_ ? "\033[K" : "\n");
    std::fflush(stderr);
    printed_ = true;
    last_ = now;
    last_bound_ = bound;
  }

 private:
  bool enabled_;
  bool tty_;
  std::string workload_;
  bool printed_ = false;
  Clock::time_point last_;
  size_t last_bound_ = 0;
};

// Barrier waits until every pod created so far is bound (or deleted), or the scheduler is quiet
// (nothing active, backing off or in flight) and the rest are parked as unschedulable.
void Barrier(const scheduler::Scheduler& sched, const Tracker& tracker, const RunOptions& options,
             Progress& progress, size_t op, size_t ops) {
  const auto deadline = Clock::now() + options.barrier_timeout;
  while (true) {
    const auto [created, resolved] = tracker.Counts();
    if (resolved >= created) return;
    const scheduler::SchedulerStats s = sched.Stats();
    const bool quiet = s.queue.active == 0 && s.queue.backoff == 0 && s.queue.in_flight == 0 &&
                       sched.bindings_in_flight() == 0;
    if (quiet && resolved + s.queue.unschedulable + s.queue.gated >= created) return;
    if (Clock::now() > deadline) {
      throw BenchError("barrier (ops[" + std::to_string(op) + "]) timed out after " +
                       std::to_string(options.barrier_timeout.count()) +
                       "s: " + std::to_string(resolved) + " of " + std::to_string(created) +
                       " pods bound; queue: " + std::to_string(s.queue.active) + " active, " +
                       std::to_string(s.queue.backoff) + " backing off, " +
                       std::to_string(s.queue.unschedulable) + " unschedulable");
    }
    progress.Print(op, ops, "barrier", tracker);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// Swapper rebuilds the profile set from the host config and swaps it in at an interval, on its
// own thread, the way schedhostd's reload does (build off the loop, then ReplaceProfiles).
class Swapper {
 public:
  Swapper(const config::HostConfig& cfg, const RunOptions& options, scheduler::Scheduler& sched)
      : cfg_(cfg), options_(options), sched_(sched) {}
  ~Swapper() { Stop(); }
  Swapper(const Swapper&) = delete;
  Swapper& operator=(const Swapper&) = delete;

  void Start() {
    if (options_.swap_every.count() <= 0 || thread_.joinable()) return;
    thread_ = std::thread([this] { Run(); });
  }
  void Stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    if (error_) std::rethrow_exception(error_);
  }
  // Fill sets the swap figures of `r`.
  void Fill(RunResult& r) const {
    auto median_max = [](std::vector<double> v, double& median, double& max) {
      if (v.empty()) return;
      std::sort(v.begin(), v.end());
      median = v[v.size() / 2];
      max = v.back();
    };
    r.swaps = swap_ms_.size();
    median_max(build_ms_, r.swap_build_ms_median, r.swap_build_ms_max);
    median_max(swap_ms_, r.swap_ms_median, r.swap_ms_max);
  }

 private:
  void Run() {
    try {
      std::unique_lock lock(mu_);
      while (!cv_.wait_for(lock, options_.swap_every, [this] { return stop_; })) {
        lock.unlock();
        const auto t0 = Clock::now();
        std::shared_ptr<const scheduler::ProfileSet> set =
            scheduler::ProfileSet::Build(cfg_, options_.plugin_dir);
        const auto t1 = Clock::now();
        sched_.ReplaceProfiles(std::move(set));
        const auto t2 = Clock::now();
        build_ms_.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        swap_ms_.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
        lock.lock();
      }
    } catch (...) {
      error_ = std::current_exception();
    }
  }

  const config::HostConfig& cfg_;
  const RunOptions& options_;
  scheduler::Scheduler& sched_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
  std::exception_ptr error_;
  std::vector<double> build_ms_;  // written by the thread, read after the join
  std::vector<double> swap_ms_;
};

}  // namespace

RunResult RunWorkload(const Workload& workload, const RunOptions& options) {
  const config::HostConfig cfg = options.config_path.empty()
                                     ? config::ParseConfig("", "(built-in defaults)", {})
                                     : config::LoadConfigFile(options.config_path);
  std::shared_ptr<const scheduler::ProfileSet> profiles =
      scheduler::ProfileSet::Build(cfg, options.plugin_dir);

  RunResult r;
  Tracker tracker;
  Progress progress(options.progress, workload.name);
  store::Store store;
  const uint64_t watch = store.Watch(store.resource_version(),
                                     [&tracker](const store::Event& e) { tracker.OnEvent(e); });
  scheduler::SchedulerOptions so;
  so.seed = 1;
  so.pod_initial_backoff = cfg.pod_initial_backoff;
  so.pod_max_backoff = cfg.pod_max_backoff;
  if (options.max_explanations) so.max_explanations = *options.max_explanations;
  scheduler::Scheduler sched(store, profiles, so);
  sched.Start();
  Swapper swapper(cfg, options, sched);

  bool measuring = false;
  MetricSums before;
  uint64_t attempts_before = 0;
  // An unmeasured createPods operation whose pods are all still pending at the next barrier
  // gives the bytes per pending pod: allocated bytes then, less before its objects were decoded.
  struct PendingProbe {
    bool active = false;
    int64_t before = 0;
    size_t count = 0;
    size_t bound_before = 0;
    bool snapshot_empty = false;  // no cycle yet: the scheduler's snapshot fills in the span
    int64_t object_bytes = 0;     // what the decoded objects took
  } pending;
  const size_t ops = workload.ops.size();
  try {
    for (size_t i = 0; i < ops; ++i) {
      const Op& op = workload.ops[i];
      if (op.kind == OpKind::kBarrier) {
        Barrier(sched, tracker, options, progress, i, ops);
        if (pending.active && tracker.Bound() == pending.bound_before) {  // the last such
          // The scheduler's snapshot filling up with the nodes is node memory, counted in
          // snapshot_node_bytes already: not charged to the pods as well.
          const double snapshot =
              pending.snapshot_empty ? r.snapshot_node_bytes * static_cast<double>(r.nodes) : 0;
          const auto count = static_cast<double>(pending.count);
          r.pending_pod_bytes =
              (static_cast<double>(AllocatedBytes() - pending.before) - snapshot) / count;
          r.pending_pod_object_bytes = static_cast<double>(pending.object_bytes) / count;
          r.pending_pods = pending.count;
        }
        pending.active = false;
        continue;
      }
      // Sampled before decoding: the objects the store keeps are the ones decoded here.
      const int64_t bytes_before = AllocatedBytes();
      const bool first_nodes = op.kind == OpKind::kCreateNodes && r.nodes == 0;
      pending = {op.kind == OpKind::kCreatePods && !op.measured, bytes_before, op.count,
                 tracker.Bound(), Attempts(sched.Stats()) == 0};
      // Decode the whole operation first so template rendering and YAML decoding stay out of
      // the measured time; the decoded objects are released when the operation ends.
      std::vector<model::Object> objects;
      objects.reserve(op.count);
      std::vector<model::GenericObject> generic;  // objects of kinds plugins declare
      for (size_t k = 0; k < op.count; ++k) {
        if (op.kind != OpKind::kCreateObjects) {
          objects.push_back(DecodeOne(op, k));
          continue;
        }
        std::variant<model::Object, model::GenericObject> any = DecodeAny(op, k);
        if (auto* typed = std::get_if<model::Object>(&any)) {
          objects.push_back(std::move(*typed));
        } else {
          generic.push_back(std::get<model::GenericObject>(std::move(any)));
        }
      }
      for (const model::GenericObject& g : generic) {
        if (!store.objects().ApplyDocument(g, store::ObjectWrite{.stamp = true})) {
          throw BenchError("ops[" + std::to_string(i) + "]: " + g.Describe() +
                           ": no loaded plugin declares " + g.api_version + " " + g.kind +
                           " (load one with --config)");
        }
      }
      pending.object_bytes = AllocatedBytes() - bytes_before -
                             static_cast<int64_t>(objects.capacity() * sizeof(model::Object));
      if (op.measured && !measuring) {
        measuring = true;
        before = ReadMetricSums();
        attempts_before = Attempts(sched.Stats());
        swapper.Start();
      }
      const std::string what = op.kind == OpKind::kCreateNodes  ? "creating nodes"
                               : op.kind == OpKind::kCreatePods ? "creating pods"
                                                                : "creating objects";
      for (size_t k = 0; k < objects.size(); ++k) {
        const store::Kind kind = store::KindOf(objects[k]);
        if (kind == store::Kind::kPod) {
          if (op.measured) {
            tracker.Created(store::NameOf(objects[k]));
          } else {
            tracker.CreatedUnmeasured();
          }
          ++(op.measured ? r.measured_pods : r.unmeasured_pods);
        } else if (kind == store::Kind::kNode) {
          ++r.nodes;
        }
        try {
          store.CreateObject(objects[k]);
        } catch (const store::StoreError& e) {
          throw BenchError("ops[" + std::to_string(i) + "]: " + store::Describe(objects[k]) +
                           " was refused: " + e.what());
        }
        if ((k & 255) == 0) progress.Print(i, ops, what, tracker);
      }
      std::vector<model::Object>().swap(objects);  // the bench's references, before sampling
      if (first_nodes) {
        const auto count = static_cast<double>(op.count);
        r.node_bytes = static_cast<double>(AllocatedBytes() - bytes_before) / count;
        r.snapshot_node_bytes = static_cast<double>(SnapshotBytes(sched.cache())) / count;
      }
    }
    swapper.Stop();  // rethrows what failed a swap
  } catch (...) {
    try {
      swapper.Stop();
    } catch (...) {  // the first error is the one reported
    }
    sched.Stop();
    store.Unwatch(watch);
    throw;
  }
  const MetricSums after = ReadMetricSums();
  for (const scheduler::ShadowStatus& shadow : sched.shadows().Status()) {
    r.shadowed = true;
    r.shadow_compared += shadow.compared;
    r.shadow_skipped += shadow.skipped;
    r.shadow_disagreements += shadow.disagreements;
    r.shadow_cpu_seconds += shadow.cpu_seconds;
  }
  sched.Stop();
  // After Stop, which waits for every binding cycle: the last pod's binding reaches the store
  // (and the tracker) before its cycle counts it.
  const scheduler::SchedulerStats stats = sched.Stats();
  store.Unwatch(watch);

  tracker.Fill(r);
  swapper.Fill(r);
  r.attempts_total = Attempts(stats);
  r.attempts = measuring ? r.attempts_total - attempts_before : 0;
  if (measuring) {
    r.cycle_seconds = after.cycle - before.cycle;
    for (const auto& [point, seconds] : after.points) {
      auto it = before.points.find(point);
      r.point_seconds[point] = seconds - (it == before.points.end() ? 0 : it->second);
    }
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  r.peak_rss_kib = usage.ru_maxrss;
  return r;
}

}  // namespace schedhost::bench
