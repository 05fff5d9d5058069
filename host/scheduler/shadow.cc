// ShadowRunner: the shadow thread, its snapshot and dry-run toolkit (a Worker), and what the
// shadows have found (the Book). A worker a plugin holds past the deadline is abandoned: the
// runner forgets it, unwires the frameworks it was running, and starts a fresh worker for the
// next offer; the abandoned thread keeps only shared state alive and records nothing.
#include "host/scheduler/shadow.h"

#include <pthread.h>
#include <sched.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <ctime>
#include <optional>

#include "host/framework/framework_metrics.h"
#include "host/metrics/scheduler_metrics.h"
#include "host/model/interner.h"
#include "host/preemption/toolkit.h"
#include "host/scheduler/alloc_limit.h"
#include "host/scheduler/cycle_diff.h"
#include "host/scheduler/cycle_runner.h"

namespace schedhost::scheduler {
namespace {

using framework::Code;
using framework::Status;

// kMaxOfferCatchUp bounds the cluster changes an offer copies into the shadow's snapshot on
// the scheduling thread (each change is at most one node to copy).
constexpr uint64_t kMaxOfferCatchUp = 64;
// kIdleCatchUp is how long the shadow thread waits without an offer before it catches up with
// the cluster on its own (a quiet host, or the nodes of a new cluster arriving).
constexpr std::chrono::milliseconds kIdleCatchUp{100};

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

int64_t UnixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// SetPriority runs the calling thread only when a core would otherwise idle (SCHED_IDLE, which
// any thread may take for itself; `idle`), or back at the normal policy, which a thread that
// lowered itself may take back: shadow cycles then take no CPU from the live ones.
void SetPriority(bool idle) {
  sched_param param{};
  if (int err = pthread_setschedparam(pthread_self(), idle ? SCHED_IDLE : SCHED_OTHER, &param);
      err != 0) {
    static std::once_flag warned;
    std::call_once(warned, [err] {
      spdlog::warn("shadow: cannot change the shadow thread's priority (error {}); it runs at "
                   "the normal one, within its CPU budget",
                   err);
    });
  }
}

// BestIds returns the name ids of `r`'s best nodes, sorted: the feasible ones with the highest
// weighted total (all of them when the cycle did not score).
std::vector<schedhost_id> BestIds(const RecordedCycle& r) {
  std::vector<schedhost_id> best;
  const size_t columns = r.header != nullptr ? r.header->score_weights.size() : 0;
  if (!r.scored || columns == 0) {
    best.assign(r.feasible.begin(), r.feasible.end());
  } else {
    int64_t top = 0;
    for (size_t i = 0; i < r.feasible.size(); ++i) {
      int64_t total = 0;
      for (size_t c = 0; c < columns; ++c) {
        total += int64_t{r.normalized[i * columns + c]} * r.header->score_weights[c];
      }
      if (best.empty() || total > top) {
        top = total;
        best.clear();
      }
      if (total == top) best.push_back(r.feasible[i]);
    }
  }
  std::sort(best.begin(), best.end());
  return best;
}

// AgreeOnEverything is CompareCycles' verdict of full agreement, read from the two records:
// the same feasible nodes, the same best nodes, and the live node among them (or none on
// both sides). False sends the caller to CompareCycles for the details.
bool AgreeOnEverything(const RecordedCycle& live, std::string_view live_node,
                       const RecordedCycle& shadow) {
  std::vector<schedhost_id> a(live.feasible.begin(), live.feasible.end());
  std::vector<schedhost_id> b(shadow.feasible.begin(), shadow.feasible.end());
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  if (a != b) return false;
  const std::vector<schedhost_id> best = BestIds(shadow);
  if (BestIds(live) != best) return false;
  if (live_node.empty()) return best.empty();
  const schedhost_id id = model::Interner::Global().Lookup(live_node);
  return std::binary_search(best.begin(), best.end(), id);
}

// Unwire leaves `fw` pointing at nothing of the host (an abandoned shadow cycle may return).
void Unwire(framework::Framework& fw) {
  fw.SetNominator(nullptr);
  fw.SetClusterAccess(nullptr);
  fw.SetObjects(nullptr);
}

}  // namespace

// The Book: per adopted shadow (index-aligned with the runtime's shadows), its status and
// counters; shared with workers, guarded by mu.
struct ShadowRunner::Book {
  struct Entry {
    ShadowStatus status;  // recent and latency are filled by Status()
    std::deque<ShadowDisagreement> recent;
    bool stopped = false;  // by the operator
    bool failed = false;
    int64_t cpu_ns = 0;
    // The shadow's series, resolved once (a skip, on the scheduling thread, is one add).
    metrics::Counter* skipped_metric = nullptr;
    metrics::Counter* compared_metric = nullptr;
    metrics::Counter* error_metric = nullptr;
    std::array<metrics::Counter*, 4> agreement_metrics{};  // node, feasibility, best, postfilter
  };
  static constexpr std::array<const char*, 4> kAgreements = {"node", "feasibility", "best",
                                                             "postfilter"};
  std::mutex mu;
  std::shared_ptr<const ProfileRuntime> runtime;  // the adopted set
  uint64_t generation = 0;
  config::ShadowConfig config;
  std::vector<Entry> entries;
  std::atomic<int64_t> shadow_cpu_ns{0};  // every shadow's, since the set was adopted
  std::atomic<int64_t> last_offer_ns{0};  // when a live cycle last offered a pod (any outcome)

  // Fail marks shadow `index` of `generation` failed for `reason` (mu held).
  void FailLocked(size_t index, uint64_t of_generation, const std::string& reason) {
    if (of_generation != generation || index >= entries.size()) return;
    Entry& e = entries[index];
    e.failed = true;
    e.status.state = "failed";
    e.status.reason = reason;
    ++e.status.errors;
    e.error_metric->Inc();
    spdlog::error("shadow {}: stopped: {}", e.status.profile, reason);
  }
  bool RunningLocked(size_t index, uint64_t of_generation) const {
    return of_generation == generation && index < entries.size() && !entries[index].stopped &&
           !entries[index].failed;
  }
};

// A Job is one live cycle for the worker to compare.
struct ShadowRunner::Job {
  ShadowTicket ticket;
  uint64_t generation = 0;
  std::shared_ptr<const model::Pod> pod;
  std::string live_node;
  std::shared_ptr<const RecordedCycle> live;
  std::string live_nominated;
};

struct ShadowRunner::Worker {
  Worker(store::Store& store, cache::Cache& cache_in, uint64_t seed,
         std::shared_ptr<Book> book_in)
      : cache(cache_in),
        toolkit(store, nominated, {.seed = seed, .dry_run = true}),
        runner(seed),
        book(std::move(book_in)) {}

  // Run is the thread's body; `self` keeps the worker alive for as long as the thread runs.
  static void Run(const std::shared_ptr<Worker>& self) {
    SetPriority(true);
    AttachAllocLimit(&self->alloc);
    // The whole cluster is copied here, not on the scheduling thread.
    self->CatchUp();
    std::unique_lock lock(self->mu);
    self->running = false;
    self->cv.notify_all();
    for (;;) {
      const bool woken = self->cv.wait_for(lock, kIdleCatchUp, [&] {
        return self->shutdown || self->job.has_value() || self->catch_up;
      });
      if (self->shutdown && !self->job) return;
      if (!woken) {
        // No offer for a while (no live cycle, or none of a shadowed profile): keep up with the
        // cluster now, so that the first offers after a quiet spell copy little.
        if (NowNs() - self->book->last_offer_ns.load(std::memory_order_relaxed) <
            std::chrono::nanoseconds(kIdleCatchUp).count()) {
          continue;
        }
        self->catch_up = true;
      }
      if (!self->job) {
        // An offer found the snapshot far behind the cluster: catch up here, not there.
        self->running = true;
        self->catch_up = false;
        lock.unlock();
        self->CatchUp();
        lock.lock();
        self->running = false;
        self->cv.notify_all();
        continue;
      }
      Job j = std::move(*self->job);
      self->job.reset();
      self->running = true;
      lock.unlock();
      self->RunJob(j);
      if (self->abandoned.load()) return;  // the runner has a worker of its own by now
      // Catch up with the cluster while idle, so that the next offer copies on the scheduling
      // thread only what changed since.
      self->CatchUp();
      lock.lock();
      self->running = false;
      self->reserved = false;
      self->cv.notify_all();
    }
  }

  // CatchUp brings the snapshot to the cache's state. It holds the cache's lock, which the
  // scheduling loop needs too: it runs at normal priority, never preempted for good at idle
  // priority with the lock held. Its CPU is not the budget's: one catch-up goes with each
  // compared pod (after it, or before it when an offer found the snapshot far behind).
  void CatchUp() {
    SetPriority(false);
    cache.UpdateSnapshot(snapshot);
    SetPriority(true);
  }

  void RunJob(const Job& j) {
    for (size_t index : j.ticket.shadows) {
      {
        std::lock_guard lock(book->mu);
        if (!book->RunningLocked(index, j.generation)) continue;
      }
      if (abandoned.load()) return;
      RunShadow(j, index);
    }
  }

  void RunShadow(const Job& j, size_t index) {
    const ShadowProfile& shadow = j.ticket.runtime->set().shadows()[index];
    framework::Framework& fw = *shadow.framework;
    fw.SetSnapshot(&snapshot);
    fw.SetNominator(&nominated);
    fw.SetClusterAccess(&toolkit);
    {
      std::lock_guard lock(mu);
      busy_index = index;
      busy_generation = j.generation;
      busy_pod = j.pod->Key();
      busy_runtime = j.ticket.runtime;
    }
    int64_t memory_limit = 0;
    {
      std::lock_guard lock(book->mu);
      memory_limit = book->config.memory_limit_bytes;
    }
    // Counted from when the set went live: a plugin that leaks from call to call reaches the
    // limit as surely as one that allocates without bound within a call.
    if (j.generation != alloc_generation) {
      alloc_generation = j.generation;
      alloc_baseline = alloc.used.load();
    }
    alloc.limit = alloc_baseline + memory_limit;
    alloc.exceeded.store(false);
    busy_since_ns.store(NowNs());
    const int64_t cpu_start = ThreadCpuNs();
    const metrics::Stopwatch watch;
    std::string error;
    std::optional<ShadowDisagreement> disagreement;
    CycleDiff diff;
    bool postfilter_agrees = true;
    try {
      const model::Pod& pod = *j.pod;
      fw.scratch().Begin();
      framework::CycleState state;
      // Plugin calls are timed on the live cycles' share of cycles (one in ten), the first of
      // them included: the two latencies compare like with like, and timing every call made a
      // shadow cycle dearer.
      state.record_plugin_metrics =
          timed_cycles++ % (100 / metrics::kPluginMetricsSamplePercent) == 0;
      runner.set_next_start_node_index(j.ticket.start_index);
      // Plugins run from here to PostFilter's verdict: within the memory limit.
      alloc.enforce.store(true);
      CycleAttempt a = runner.SchedulePod(fw, snapshot, state, pod);
      std::string nominated;
      if (!a.status.ok() && a.fit_error) {
        a.TakeKept();
        auto [node, post] = fw.RunPostFilterPlugins(state, pod.view(), a.node_statuses);
        if (post.code == Code::kError) error = "PostFilter: " + post.Message();
        nominated = std::move(node);
      } else if (!a.status.ok() && a.status.code == Code::kError) {
        error = a.status.Message();
      }
      alloc.enforce.store(false);
      if (alloc.exceeded.load()) {
        error = "it allocated past its memory limit of " + std::to_string(memory_limit >> 20) +
                " MiB ([shadow] memory_limit_mib); the plugin saw: " +
                (error.empty() ? std::string("nothing failed") : error);
      }
      if (error.empty()) {
        if (header == nullptr || header_fw != &fw || header_runtime.expired()) {
          header = MakeExplainHeader(fw);
          header_fw = &fw;
          header_runtime = j.ticket.runtime;
        }
        std::shared_ptr<const RecordedCycle> shadow_record =
            runner.Record(pod, fw, state, a, header, nullptr);
        const std::string shadow_node = a.status.ok() ? a.node : std::string();
        postfilter_agrees = nominated == j.live_nominated;
        // Most pods agree: the records say so without expanding either cycle node by node.
        const bool agree = j.live != nullptr && postfilter_agrees &&
                           AgreeOnEverything(*j.live, j.live_node, *shadow_record);
        std::shared_ptr<const CycleExplanation> shadow_cycle;
        std::shared_ptr<const CycleExplanation> live_cycle;
        if (!agree) {
          shadow_cycle = shadow_record->Expand();
          live_cycle =
              j.live != nullptr ? j.live->Expand() : std::make_shared<const CycleExplanation>();
          diff = CompareCycles(*live_cycle, j.live_node, *shadow_cycle, shadow_node, "live",
                               "shadow");
        }
        if (!diff.same_node || !postfilter_agrees) {
          ShadowDisagreement d;
          d.namespace_name = pod.namespace_name();
          d.name = pod.name();
          d.uid = pod.uid();
          d.unix_seconds = UnixSeconds();
          d.live_node = j.live_node;
          d.shadow_node = shadow_node;
          d.shadow_best = BestNodes(*shadow_cycle);  // expanded: they disagree
          d.live_nominated = j.live_nominated;
          d.shadow_nominated = nominated;
          d.point = diff.point;
          d.plugin = diff.plugin;
          d.detail = diff.same_node ? "PostFilter nominates " +
                                          (nominated.empty() ? "no node" : nominated) +
                                          " in the shadow, " +
                                          (j.live_nominated.empty() ? "no node"
                                                                    : j.live_nominated) +
                                          " live"
                                    : diff.detail;
          if (diff.same_node) d.point = "PostFilter";
          d.live = j.live;
          d.shadow = std::move(shadow_record);
          disagreement = std::move(d);
        }
      }
    } catch (const std::exception& e) {
      error = std::string("the cycle threw: ") + e.what();
    } catch (...) {
      error = "the cycle threw an unknown exception";
    }
    alloc.enforce.store(false);
    if (alloc.exceeded.load() && error.find("memory limit") == std::string::npos) {
      error = "it allocated past its memory limit of " + std::to_string(memory_limit >> 20) +
              " MiB ([shadow] memory_limit_mib): " + error;
    }
    const int64_t cpu = ThreadCpuNs() - cpu_start;
    {
      // Under mu, as CheckDeadline decides: a cycle is either abandoned or done, never both.
      std::lock_guard lock(mu);
      busy_since_ns.store(0);
      busy_runtime.reset();  // the job holds the set until it ends; the worker does not
      if (abandoned.load()) return;  // past its deadline: the runner has reported it
    }
    const std::string& profile = shadow.profile.name;
    metrics::Metrics().shadow_cycle_duration.With({profile}).Observe(watch.Seconds());
    book->shadow_cpu_ns.fetch_add(cpu, std::memory_order_relaxed);
    std::lock_guard lock(book->mu);
    if (j.generation != book->generation || index >= book->entries.size()) return;
    Book::Entry& e = book->entries[index];
    e.cpu_ns += cpu;
    if (!error.empty()) {
      book->FailLocked(index, j.generation,
                       "pod " + j.pod->Key() + ": " + error + " (live: " +
                           (j.live_node.empty() ? "no node" : j.live_node) + ")");
      return;
    }
    ShadowStatus& s = e.status;
    ++s.compared;
    e.compared_metric->Inc();
    auto agree = [&](bool yes, uint64_t& count, size_t which) {
      if (!yes) return;
      ++count;
      e.agreement_metrics[which]->Inc();
    };
    agree(diff.same_node, s.agree_node, 0);
    agree(diff.same_feasibility, s.agree_feasibility, 1);
    agree(diff.same_best, s.agree_best, 2);
    agree(postfilter_agrees, s.agree_postfilter, 3);
    if (disagreement) {
      ++s.disagreements;
      metrics::Metrics()
          .shadow_disagreements.With({profile, disagreement->point, disagreement->plugin})
          .Inc();
      e.recent.push_front(std::move(*disagreement));
      while (e.recent.size() > static_cast<size_t>(book->config.max_disagreements)) {
        e.recent.pop_back();
      }
    }
  }

  cache::Cache& cache;
  cache::Snapshot snapshot;  // brought to the live cycle's state by Offer, read by RunJob
  queue::Nominator nominated;  // the nominations the live cycle saw, copied by Offer
  ThreadAllocLimit alloc;    // the worker thread's allocations
  uint64_t timed_cycles = 0;  // shadow cycles run, for the one-in-ten plugin timing
  uint64_t alloc_generation = 0;  // the set the baseline was taken for
  int64_t alloc_baseline = 0;     // what the thread held when that set's first cycle began
  preemption::Toolkit toolkit;
  CycleRunner runner;
  std::shared_ptr<Book> book;
  std::shared_ptr<const ExplainHeader> header;
  const framework::Framework* header_fw = nullptr;
  // Watched, not held (a replaced set is released once its cycles end): while it is live,
  // header_fw names that framework and no other.
  std::weak_ptr<const ProfileRuntime> header_runtime;

  std::mutex mu;
  std::condition_variable cv;
  bool reserved = false;  // a ticket is out, or its job queued or running
  bool running = true;    // a job or a catch-up of the snapshot is under way
  bool catch_up = false;  // an offer asks for a catch-up of the snapshot
  bool shutdown = false;
  std::optional<Job> job;
  // What is running (mu), for the deadline: since when (0: nothing), which shadow, which pod.
  std::atomic<int64_t> busy_since_ns{0};
  size_t busy_index = 0;
  uint64_t busy_generation = 0;
  std::string busy_pod;
  std::shared_ptr<const ProfileRuntime> busy_runtime;
  std::atomic<bool> abandoned{false};
  std::thread thread;
};

ShadowRunner::ShadowRunner(store::Store& store, queue::Nominator& nominator, cache::Cache& cache,
                           uint64_t seed)
    : store_(store),
      nominator_(nominator),
      cache_(cache),
      seed_(seed),
      book_(std::make_shared<Book>()) {}

ShadowRunner::~ShadowRunner() { Shutdown(); }

void ShadowRunner::Adopt(const std::shared_ptr<const ProfileRuntime>& runtime,
                         uint64_t generation) {
  if (!AdoptLocked(runtime, generation)) return;
  // Started now, the worker copies the cluster before the first offer.
  std::lock_guard runner_lock(mu_);
  EnsureWorker();
}

bool ShadowRunner::AdoptLocked(const std::shared_ptr<const ProfileRuntime>& runtime,
                               uint64_t generation) {
  std::lock_guard lock(book_->mu);
  std::vector<Book::Entry> entries;
  for (const ShadowProfile& shadow : runtime->set().shadows()) {
    Book::Entry e;
    e.status.profile = shadow.profile.name;
    e.status.shadow_of = shadow.profile.shadow_of;
    e.status.generation = generation;
    e.status.state = "running";
    const metrics::SchedulerMetrics& m = metrics::Metrics();
    e.skipped_metric = &m.shadow_pods.With({e.status.profile, "skipped"});
    e.compared_metric = &m.shadow_pods.With({e.status.profile, "compared"});
    e.error_metric = &m.shadow_pods.With({e.status.profile, "error"});
    for (size_t i = 0; i < Book::kAgreements.size(); ++i) {
      e.agreement_metrics[i] = &m.shadow_agreements.With({e.status.profile, Book::kAgreements[i]});
    }
    // The operator's stop carries over a reload; a failure does not (new plugin instances).
    for (const Book::Entry& old : book_->entries) {
      if (old.status.profile == e.status.profile && old.stopped) {
        e.stopped = true;
        e.status.state = "stopped";
        e.status.reason = old.status.reason;
      }
    }
    entries.push_back(std::move(e));
  }
  book_->entries = std::move(entries);
  book_->runtime = runtime->set().shadows().empty() ? nullptr : runtime;
  book_->generation = generation;
  book_->config = runtime->set().shadow_config();
  book_->shadow_cpu_ns.store(0);
  live_ns_.store(0);
  active_.store(std::any_of(book_->entries.begin(), book_->entries.end(),
                            [](const Book::Entry& e) { return !e.stopped; }));
  return !book_->entries.empty();
}

std::shared_ptr<ShadowRunner::Worker> ShadowRunner::EnsureWorker() {
  if (worker_ == nullptr) {
    worker_ = std::make_shared<Worker>(store_, cache_, seed_, book_);
    worker_->thread = std::thread(&Worker::Run, worker_);
  }
  return worker_;
}

ShadowTicket ShadowRunner::Offer(const std::shared_ptr<const ProfileRuntime>& runtime,
                                 const framework::Framework& fw, const cache::Snapshot& snapshot,
                                 size_t start_index) {
  book_->last_offer_ns.store(NowNs(), std::memory_order_relaxed);
  ShadowTicket ticket;
  uint64_t generation = 0;
  bool every_pod = false;
  std::chrono::nanoseconds deadline{0};
  {
    // One lock, no allocation and no string built while the shadows are over their budget:
    // most offers on a busy host end here.
    std::lock_guard lock(book_->mu);
    if (book_->runtime != runtime) return ticket;  // a set not adopted yet, or one replaced
    generation = book_->generation;
    every_pod = book_->config.every_pod;
    deadline = book_->config.deadline;
    const bool over_budget =
        !every_pod && book_->shadow_cpu_ns.load(std::memory_order_relaxed) * 100 >
                          int64_t{book_->config.cpu_budget_percent} *
                              live_ns_.load(std::memory_order_relaxed);
    const auto& shadows = runtime->set().shadows();
    for (size_t i = 0; i < shadows.size(); ++i) {
      if (shadows[i].profile.shadow_of != fw.profile_name() ||
          !book_->RunningLocked(i, generation)) {
        continue;
      }
      if (over_budget) {
        ++book_->entries[i].status.skipped;
        book_->entries[i].skipped_metric->Inc();
      } else {
        ticket.shadows.push_back(i);
      }
    }
  }
  if (ticket.shadows.empty()) return ticket;
  CheckDeadline();
  const auto skip = [&](ShadowTicket& t) {
    std::lock_guard lock(book_->mu);
    for (size_t i : t.shadows) {
      if (generation != book_->generation || i >= book_->entries.size()) continue;
      ++book_->entries[i].status.skipped;
      book_->entries[i].skipped_metric->Inc();
    }
    return ShadowTicket{};
  };
  std::shared_ptr<Worker> w;
  {
    std::lock_guard lock(mu_);
    w = EnsureWorker();
  }
  {
    std::unique_lock lock(w->mu);
    if (every_pod) {
      // Wait for the previous pod's comparison, checking its deadline meanwhile.
      while ((w->reserved || w->running) && !w->abandoned.load()) {
        w->cv.wait_for(lock, std::min<std::chrono::nanoseconds>(deadline,
                                                                std::chrono::milliseconds(100)));
        if (!w->reserved && !w->running) break;
        lock.unlock();
        CheckDeadline();
        lock.lock();
      }
      if (w->abandoned.load()) {
        lock.unlock();
        std::lock_guard runner_lock(mu_);
        w = EnsureWorker();
        lock = std::unique_lock(w->mu);
      }
    }
    if (w->reserved || w->running) return skip(ticket);
    // Far behind (the shadows were over budget for a while): the worker catches up at idle
    // priority and this pod is skipped, rather than the scheduling thread copying many nodes.
    if (!every_pod && snapshot.generation() > w->snapshot.generation() + kMaxOfferCatchUp) {
      w->catch_up = true;
      w->cv.notify_all();
      return skip(ticket);
    }
    w->reserved = true;
  }
  // The worker is idle and reserved: its snapshot is the caller's to update, with the live one
  // under one lock of the cache (Cache::UpdateSnapshots), and its nominations are copied as
  // they are now (the live cycle's PostFilter may change them).
  w->nominated.CopyFrom(nominator_);
  ticket.snapshot = &w->snapshot;
  ticket.runtime = runtime;
  ticket.start_index = start_index;
  return ticket;
}

void ShadowRunner::Submit(ShadowTicket ticket, std::shared_ptr<const model::Pod> pod,
                          std::string live_node, std::shared_ptr<const RecordedCycle> live,
                          std::string live_nominated) {
  if (!ticket) return;
  std::shared_ptr<Worker> w;
  {
    std::lock_guard lock(mu_);
    w = worker_;
  }
  uint64_t generation = 0;
  {
    std::lock_guard lock(book_->mu);
    generation = book_->generation;
  }
  if (w == nullptr) return;  // abandoned meanwhile
  std::lock_guard lock(w->mu);
  w->job = Job{std::move(ticket), generation, std::move(pod), std::move(live_node),
               std::move(live), std::move(live_nominated)};
  w->cv.notify_all();
}

void ShadowRunner::Release(const ShadowTicket& /*ticket*/) {
  std::shared_ptr<Worker> w;
  {
    std::lock_guard lock(mu_);
    w = worker_;
  }
  if (w == nullptr) return;
  std::lock_guard lock(w->mu);
  if (!w->job && !w->running) w->reserved = false;
  w->cv.notify_all();
}

void ShadowRunner::CheckDeadline() {
  std::lock_guard lock(mu_);
  if (worker_ == nullptr || worker_->busy_since_ns.load() == 0) return;
  std::chrono::nanoseconds deadline{0};
  {
    std::lock_guard book_lock(book_->mu);
    deadline = book_->config.deadline;
  }
  std::shared_ptr<Worker> w = worker_;
  std::unique_lock worker_lock(w->mu);
  // Decided under the worker's lock, where the worker ends a cycle: it is past its deadline
  // now, or it has ended.
  const int64_t since = w->busy_since_ns.load();
  if (since == 0 || NowNs() - since <= deadline.count()) return;
  // A plugin holds the shadow thread past the deadline: report it, cut the frameworks it runs
  // off the host, and leave the thread to it; the next offer starts a fresh worker.
  worker_.reset();
  w->abandoned.store(true);
  if (w->busy_runtime != nullptr && w->busy_index < w->busy_runtime->set().shadows().size()) {
    Unwire(*w->busy_runtime->set().shadows()[w->busy_index].framework);
  }
  {
    std::lock_guard book_lock(book_->mu);
    book_->FailLocked(w->busy_index, w->busy_generation,
                      "pod " + w->busy_pod + ": the cycle passed its deadline of " +
                          std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                             deadline)
                                             .count()) +
                          " ms (a plugin has not returned; its thread is left to it)");
  }
  w->thread.detach();
  w->cv.notify_all();
}

void ShadowRunner::Start(std::string_view profile) { SetRunning(profile, true); }

void ShadowRunner::Stop(std::string_view profile) { SetRunning(profile, false); }

void ShadowRunner::SetRunning(std::string_view profile, bool run) {
  std::lock_guard lock(book_->mu);
  bool found = false;
  for (Book::Entry& e : book_->entries) {
    if (!profile.empty() && e.status.profile != profile) continue;
    found = true;
    e.stopped = !run;
    if (run) e.failed = false;
    e.status.state = run ? "running" : "stopped";
    e.status.reason = run ? "" : "stopped by the operator";
  }
  if (!found) {
    std::string names;
    for (const Book::Entry& e : book_->entries) {
      names += (names.empty() ? "" : ", ") + e.status.profile;
    }
    throw ShadowError(profile.empty()
                          ? "no shadow profile is loaded: add one with shadow_of to the config "
                            "and reload"
                          : "no shadow profile named \"" + std::string(profile) +
                                "\" (shadows: " + (names.empty() ? "none" : names) + ")");
  }
  active_.store(std::any_of(book_->entries.begin(), book_->entries.end(),
                            [](const Book::Entry& e) { return !e.stopped && !e.failed; }));
}

std::vector<ShadowStatus> ShadowRunner::Status() {
  CheckDeadline();
  std::vector<ShadowStatus> out;
  {
    std::lock_guard lock(book_->mu);
    for (const Book::Entry& e : book_->entries) {
      ShadowStatus s = e.status;
      s.cpu_seconds = static_cast<double>(e.cpu_ns) / 1e9;
      s.memory_limit_enforced = AllocLimitsEnforced();
      s.recent.assign(e.recent.begin(), e.recent.end());
      out.push_back(std::move(s));
    }
  }
  // Plugin latency, from the histograms (folded over status): the shadow's by its profile, the
  // live profiles' by plugin name.
  const metrics::SchedulerMetrics& m = metrics::Metrics();
  std::map<std::pair<std::string, std::string>, std::pair<uint64_t, double>> live;
  m.plugin_duration.ForEach([&](const metrics::LabelValues& l, const metrics::Histogram& h) {
    const metrics::HistogramSnapshot snap = h.Snapshot();
    auto& sum = live[{l.at(1), l.at(0)}];
    sum.first += snap.count();
    sum.second += snap.sum;
  });
  for (ShadowStatus& s : out) {
    std::map<std::pair<std::string, std::string>, std::pair<uint64_t, double>> mine;
    m.shadow_plugin_duration.ForEach(
        [&](const metrics::LabelValues& l, const metrics::Histogram& h) {
          if (l.at(0) != s.profile) return;
          const metrics::HistogramSnapshot snap = h.Snapshot();
          auto& sum = mine[{l.at(2), l.at(1)}];
          sum.first += snap.count();
          sum.second += snap.sum;
        });
    for (const auto& [key, sum] : mine) {
      ShadowLatency row;
      row.point = key.first;
      row.plugin = key.second;
      row.shadow_calls = sum.first;
      row.shadow_mean_seconds = sum.first != 0 ? sum.second / static_cast<double>(sum.first) : 0;
      if (auto it = live.find(key); it != live.end() && it->second.first != 0) {
        row.live_calls = it->second.first;
        row.live_mean_seconds = it->second.second / static_cast<double>(it->second.first);
      }
      s.latency.push_back(std::move(row));
    }
  }
  return out;
}

void ShadowRunner::WaitIdle() {
  std::shared_ptr<Worker> w;
  {
    std::lock_guard lock(mu_);
    w = worker_;
  }
  if (w == nullptr) return;
  std::unique_lock lock(w->mu);
  while ((w->reserved || w->running) && !w->abandoned.load()) {
    w->cv.wait_for(lock, std::chrono::milliseconds(50));
    lock.unlock();
    CheckDeadline();
    lock.lock();
  }
}

void ShadowRunner::Shutdown() {
  std::shared_ptr<Worker> w;
  {
    std::lock_guard lock(mu_);
    w = std::move(worker_);
  }
  if (w == nullptr) return;
  std::chrono::nanoseconds deadline{0};
  {
    std::lock_guard lock(book_->mu);
    deadline = book_->config.deadline;
  }
  std::unique_lock lock(w->mu);
  w->shutdown = true;
  w->job.reset();
  w->cv.notify_all();
  // Host work (a snapshot catch-up) is waited for; a plugin call, for its deadline, after which
  // the thread is left to the plugin.
  bool ended = false;
  for (;;) {
    if (w->cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return !w->running; })) {
      ended = true;
      break;
    }
    const int64_t since = w->busy_since_ns.load();
    if (since != 0 && NowNs() - since > deadline.count()) break;
  }
  lock.unlock();
  if (ended) {
    w->thread.join();
  } else {
    w->abandoned.store(true);
    {
      std::lock_guard worker_lock(w->mu);
      if (w->busy_runtime != nullptr &&
          w->busy_index < w->busy_runtime->set().shadows().size()) {
        Unwire(*w->busy_runtime->set().shadows()[w->busy_index].framework);
      }
    }
    w->thread.detach();
  }
}

}  // namespace schedhost::scheduler
