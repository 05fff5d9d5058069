// ShadowRunner: shadow profiles on live traffic. For a pod whose profile has shadows, the
// scheduling loop offers the cycle to the shadow thread: if it is free and within its CPU
// budget, a snapshot of its own is brought to the live cycle's state (same cache generation)
// before the live cycle runs, and once the live cycle has chosen, the shadow thread runs each
// shadow's cycle (PreFilter, Filter from the same start node, Score, PostFilter's verdict
// through a dry-run preemption toolkit) on that snapshot and compares the two (CompareCycles).
// A shadow never binds, nominates, evicts, writes an object or an event, or touches the cache or
// the queue. A shadow cycle that fails (an Error status, a thrown exception), passes its
// deadline or allocates past its memory limit stops that shadow and is reported; the live
// cycles never wait for it unless [shadow] every_pod asks them to.
//
//   ShadowRunner shadows(store, nominator, seed);
//   auto ticket = shadows.Offer(runtime, fw, snapshot, start);   // scheduling thread
//   cache.UpdateSnapshots(snapshot, ticket.snapshot);
//   ... the live cycle ...
//   shadows.Submit(std::move(ticket), pod, node, record, nominated);
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "host/cache/cache.h"
#include "host/cache/snapshot.h"
#include "host/model/pod.h"
#include "host/queue/nominator.h"
#include "host/scheduler/explain.h"
#include "host/scheduler/profile_runtime.h"
#include "host/store/store.h"

namespace schedhost::scheduler {

/// ShadowDisagreement is one pod a shadow would have placed differently from the live profile.
struct ShadowDisagreement {
  std::string namespace_name;
  std::string name;
  std::string uid;
  int64_t unix_seconds = 0;
  /// live_node / shadow_node are the nodes each chose ("" for none); shadow_best are the
  /// shadow's best nodes (it picks one of them at random).
  std::string live_node;
  std::string shadow_node;
  std::vector<std::string> shadow_best;
  /// live_nominated / shadow_nominated are PostFilter's verdicts ("" for none).
  std::string live_nominated;
  std::string shadow_nominated;
  /// point, plugin and detail say what turned it (CycleDiff).
  std::string point;
  std::string plugin;
  std::string detail;
  /// The two cycles, in their compact form (RecordedCycle::Expand gives them node by node): a
  /// big cluster's cycle takes a few kilobytes so, and a megabyte expanded.
  std::shared_ptr<const RecordedCycle> live;
  std::shared_ptr<const RecordedCycle> shadow;
};

/// ShadowLatency is one plugin's mean call time at one extension point in the shadow, against
/// the same plugin's in the live profiles (scheduler_plugin_execution_duration_seconds, sampled).
struct ShadowLatency {
  std::string point;
  std::string plugin;
  uint64_t shadow_calls = 0;
  double shadow_mean_seconds = 0;
  uint64_t live_calls = 0;  // 0: the live profiles have no timed call of it
  double live_mean_seconds = 0;
};

/// ShadowStatus is what a shadow has done since its profile set went live.
struct ShadowStatus {
  std::string profile;
  std::string shadow_of;
  /// state is "running", "stopped" (by the operator) or "failed" (`reason` says why).
  std::string state;
  std::string reason;
  uint64_t generation = 0;  // the profile set's
  uint64_t compared = 0;
  uint64_t skipped = 0;  // offered while over the CPU budget, busy, or the cluster moved
  uint64_t errors = 0;
  uint64_t agree_node = 0;
  uint64_t agree_feasibility = 0;
  uint64_t agree_best = 0;
  uint64_t agree_postfilter = 0;
  uint64_t disagreements = 0;
  double cpu_seconds = 0;  // the shadow thread's CPU time on this shadow's cycles
  /// memory_limit_enforced is false in a binary without schedhost's malloc hook (a sanitizer
  /// build): [shadow] memory_limit_mib is then not enforced.
  bool memory_limit_enforced = false;
  /// recent holds the newest disagreements first, up to [shadow] max_disagreements.
  std::vector<ShadowDisagreement> recent;
  std::vector<ShadowLatency> latency;
};

/// ShadowError is a shadow command that cannot be carried out (no such shadow, ...).
class ShadowError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// ShadowTicket is an offer the shadow thread took: it holds the thread for this cycle.
struct ShadowTicket {
  std::shared_ptr<const ProfileRuntime> runtime;
  std::vector<size_t> shadows;  // indexes into runtime->set().shadows()
  size_t start_index = 0;
  /// snapshot is the shadow thread's, for the caller to update with the live one
  /// (Cache::UpdateSnapshots) before the live cycle runs.
  cache::Snapshot* snapshot = nullptr;
  explicit operator bool() const { return runtime != nullptr; }
};

/// ShadowRunner is thread-safe: Offer and Submit come from the scheduling loop, the rest from
/// any thread.
class ShadowRunner {
 public:
  /// ShadowRunner reads `store`, `nominator` and `cache` (all must outlive it, but see
  /// Shutdown); its dry-run preemption is seeded with `seed`.
  ShadowRunner(store::Store& store, queue::Nominator& nominator, cache::Cache& cache,
               uint64_t seed);
  /// ~ShadowRunner shuts down (see Shutdown).
  ~ShadowRunner();
  ShadowRunner(const ShadowRunner&) = delete;
  ShadowRunner& operator=(const ShadowRunner&) = delete;

  /// Adopt makes `runtime`'s shadows the ones that run from now on; their counters start at
  /// zero under `generation`. A shadow the operator stopped stays stopped; a failed one runs
  /// again (a new set has new plugin instances).
  void Adopt(const std::shared_ptr<const ProfileRuntime>& runtime, uint64_t generation);

  /// Offer is called at the start of a live cycle of `fw` (of `runtime`), before `snapshot`, the
  /// live one, is updated: when a running shadow follows `fw`'s profile and the shadow thread is
  /// free and within budget (with every_pod: once it is free), it takes the cycle; the caller
  /// then updates the ticket's snapshot with the live one (Cache::UpdateSnapshots). An empty
  /// ticket otherwise (the pod is counted skipped).
  ShadowTicket Offer(const std::shared_ptr<const ProfileRuntime>& runtime,
                     const framework::Framework& fw, const cache::Snapshot& snapshot,
                     size_t start_index);
  /// Submit hands the live cycle's outcome for the ticket's pod to the shadow thread: the node
  /// it chose ("" for none), its record and PostFilter's nominated node ("" for none).
  void Submit(ShadowTicket ticket, std::shared_ptr<const model::Pod> pod, std::string live_node,
              std::shared_ptr<const RecordedCycle> live, std::string live_nominated);
  /// Release gives back a ticket the live cycle ended without using.
  void Release(const ShadowTicket& ticket);
  /// CountLive adds one live cycle's time to what the CPU budget is a share of.
  void CountLive(std::chrono::nanoseconds spent) {
    live_ns_.fetch_add(spent.count(), std::memory_order_relaxed);
  }
  /// active is true while some adopted shadow is running (the loop skips its bookkeeping else).
  bool active() const { return active_.load(std::memory_order_relaxed); }

  /// Start and Stop resume or pause the shadow named `profile` ("" for every one); Start also
  /// clears a failure. Throw ShadowError naming the shadows there are when none is named so.
  void Start(std::string_view profile);
  void Stop(std::string_view profile);
  /// Status returns every adopted shadow's status, in file order.
  std::vector<ShadowStatus> Status();
  /// WaitIdle blocks until no shadow cycle is queued or running (tests, simulations).
  void WaitIdle();
  /// Shutdown stops the shadow thread: joins it, or leaves it behind when a plugin holds it
  /// past its deadline (it then touches nothing of the host when it returns). Idempotent.
  void Shutdown();

 private:
  struct Worker;
  struct Book;
  struct Job;
  // CheckDeadline fails the shadow a cycle has been running past its deadline, and abandons
  // the worker to the plugin that holds it.
  void CheckDeadline();
  std::shared_ptr<Worker> EnsureWorker();  // mu_ held
  // SetRunning starts (`run`) or stops the shadow named `profile` ("" for every one).
  void SetRunning(std::string_view profile, bool run);
  // AdoptLocked records `runtime`'s shadows under book_'s lock; true when there are any.
  bool AdoptLocked(const std::shared_ptr<const ProfileRuntime>& runtime, uint64_t generation);

  store::Store& store_;
  queue::Nominator& nominator_;
  cache::Cache& cache_;
  uint64_t seed_;
  std::shared_ptr<Book> book_;  // shared with the workers: an abandoned one may outlive this
  std::mutex mu_;
  std::shared_ptr<Worker> worker_;  // guarded by mu_
  std::atomic<bool> active_{false};
  std::atomic<int64_t> live_ns_{0};
};

}  // namespace schedhost::scheduler
