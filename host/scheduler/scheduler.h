// Scheduler: the scheduling loop over a Store. Store events reach the cache
// and the queue through the event router; the loop pops a pod, updates the snapshot
// incrementally, runs PreFilter, Filter on sampled nodes in parallel (nominated pods counted, two
// passes), PostFilter on failure, Score and a random tie-break; then assumes the pod, runs
// Reserve and Permit and hands the binding cycle (wait at Permit, PreBind, Bind, PostBind) to an
// executor. Any failure unreserves in reverse, forgets the assumed pod and requeues it.
//
//   Scheduler s(store, profile_set, options);           // real time: s.Start(); ... s.Stop();
//   Scheduler sim(store, profile_set, {.clock = std::make_shared<VirtualClock>()});
//   sim.RunUntilIdle();                                 // virtual time, deterministic
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "host/cache/cache.h"
#include "host/cache/snapshot.h"
#include "host/framework/clock.h"
#include "host/model/uid_key.h"
#include "host/preemption/toolkit.h"
#include "host/queue/scheduling_queue.h"
#include "host/scheduler/clock.h"
#include "host/scheduler/cycle_runner.h"
#include "host/scheduler/executor.h"
#include "host/scheduler/explain.h"
#include "host/scheduler/profile_runtime.h"
#include "host/scheduler/profile_set.h"
#include "host/scheduler/shadow.h"
#include "host/store/cluster_writer.h"
#include "host/store/store.h"

namespace schedhost::scheduler {

class EventRouter;
struct BindingContext;

/// SchedulerError reports a misuse of the scheduler (e.g. RunUntilIdle on a real clock).
class SchedulerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// SchedulerOptions tune one scheduler; the defaults are upstream's.
struct SchedulerOptions {
  /// clock drives the queue's time and every timer; null: a RealClock of the scheduler's own.
  /// A VirtualClock makes the scheduler run binding cycles only inside RunUntilIdle/DrainBindings.
  std::shared_ptr<Clock> clock;
  /// seed seeds the random tie-break between equally scored nodes.
  uint64_t seed = 0;
  /// binding_threads is how many binding cycles run at once on a real clock.
  int binding_threads = 4;
  /// max_explanations bounds how many pods' last-cycle explanations (Admin.Explain) are kept:
  /// the oldest recorded is dropped first. 0 turns the recording off.
  size_t max_explanations = 1000;
  /// max_explanation_bytes bounds the memory those explanations hold (a feasible node costs
  /// about 20 bytes plus 9 per Score plugin, a rejected one about 30); the oldest are dropped
  /// first. It is a fixed budget, not a cost per pod.
  size_t max_explanation_bytes = size_t{16} << 20;
  /// pod_initial_backoff / pod_max_backoff are the queue's backoff bounds.
  std::chrono::nanoseconds pod_initial_backoff = std::chrono::seconds(1);
  std::chrono::nanoseconds pod_max_backoff = std::chrono::seconds(10);
  /// backoff_flush_interval is how often backoffQ is flushed (upstream: 1s).
  std::chrono::nanoseconds backoff_flush_interval = std::chrono::seconds(1);
  /// unschedulable_flush_interval is how often long-unschedulable pods are flushed (upstream: 30s).
  std::chrono::nanoseconds unschedulable_flush_interval = std::chrono::seconds(30);
  /// on_evicted, when set, is told about every pod preemption deletes and its preemptor (null
  /// when a plugin evicted without naming one); runs on the thread that evicted.
  std::function<void(const model::Pod& victim, const model::Pod* preemptor)> on_evicted;
  /// writer makes every change to the cluster (bindings, nominations, evictions, reports).
  /// Null: the store the scheduler runs over (store::StoreWriter).
  std::shared_ptr<store::ClusterWriter> writer;
  /// bind false ends every pod's attempt after Reserve and Permit: its binding cycle runs no
  /// PreBind or Bind, only Unreserve (as for a failed binding), so nothing is written for it
  /// (`schedctl simulate --explain`, which explains scheduling cycles alone).
  bool bind = true;
};

/// PodDiagnostics is what the scheduler knows about one pod's attempts (simulate, explain).
struct PodDiagnostics {
  int attempts = 0;
  /// message is the last failure in upstream's words ("0/3 nodes are available: ..."), the
  /// PreEnqueue reason while gated, "" once bound.
  std::string message;
  /// gated is true while a PreEnqueue plugin keeps the pod out of activeQ.
  bool gated = false;
  /// nominated_node is the node PostFilter nominated the pod to ("" for none).
  std::string nominated_node;
  /// node is the node the pod was bound to ("" while pending).
  std::string node;
};

/// RunLimits bound RunUntilIdle so it always terminates.
struct RunLimits {
  std::chrono::nanoseconds max_virtual_time = std::chrono::hours(1);
  size_t max_cycles = 1'000'000;
  /// after_step, when set, runs after every cycle (with its binding) and every clock jump, on the
  /// calling thread (tests check invariants there).
  std::function<void()> after_step;
};

/// RunResult says how RunUntilIdle ended.
struct RunResult {
  bool idle = false;  // nothing left to try: activeQ, backoffQ and in flight are empty
  size_t cycles = 0;  // scheduling cycles run
  std::chrono::nanoseconds virtual_time{0};  // how far the clock moved
  std::string stopped_by;                    // "" when idle, else which limit ended the run
};

/// Scheduler owns the cache, the queue and the loop of one host; thread-safe.
class Scheduler {
 public:
  /// Scheduler wires itself to `store` (not owned; must outlive it): watches it from the start,
  /// so every object already stored is routed before the constructor returns.
  Scheduler(store::Store& store, std::shared_ptr<const ProfileSet> profiles,
            SchedulerOptions options = {});
  /// ~Scheduler stops the scheduler (see Stop).
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// Start runs the scheduling loop on a thread of its own (real clock only).
  void Start();
  /// Stop stops popping, rejects pods waiting at Permit (they requeue), lets every binding cycle
  /// finish, stops the timers and the store watch, and joins every thread. Idempotent.
  void Stop();

  /// ScheduleOne pops one pod without blocking and runs its scheduling cycle (the binding cycle
  /// goes to the executor); false when activeQ was empty.
  bool ScheduleOne();
  /// DrainBindings runs every queued binding cycle (virtual clock); returns how many ran.
  size_t DrainBindings();
  /// RunUntilIdle schedules until nothing can make progress: it runs every cycle activeQ offers,
  /// then jumps the virtual clock to the next timer (backoff flush, Permit timeouts), and stops
  /// when activeQ, backoffQ and in-flight pods are all empty or a limit is reached. Throws
  /// SchedulerError unless the clock is a VirtualClock.
  RunResult RunUntilIdle(const RunLimits& limits = {});

  /// CheckInvariants returns "" when every pending pod of a profile is in exactly one place of
  /// the queue (or in flight), no bound pod is queued, and the cache agrees with the store;
  /// else the first problem. Meaningful when no write is racing it (tests call it when idle).
  std::string CheckInvariants() const;
  /// Diagnostics returns what is known about the pod with `uid`.
  std::optional<PodDiagnostics> Diagnostics(std::string_view uid) const;
  /// Explanation returns the per-node results of the last scheduling cycle of the pod with
  /// `uid` (kept until the pod is deleted; a bound pod keeps the cycle that placed it), or null.
  std::shared_ptr<const CycleExplanation> Explanation(std::string_view uid) const;
  /// Stats returns the scheduler's counters and the queue's sizes; thread-safe.
  SchedulerStats Stats() const;

  /// queue returns the scheduling queue.
  queue::SchedulingQueue& queue() { return *queue_; }
  /// cache returns the scheduler cache.
  cache::Cache& cache() { return cache_; }
  /// clock returns the clock.
  Clock& clock() { return *clock_; }
  /// profiles returns the profiles the scheduler runs.
  std::shared_ptr<const ProfileRuntime> profiles() const;
  /// ReplaceProfiles swaps `set` in as the live profiles between two cycles and returns its
  /// generation. Cycles already under way (pods waiting at Permit included) keep the set they
  /// started with until their binding cycle ends; the next cycle takes the new one. activeQ is
  /// re-sorted with the new QueueSort, unschedulable and gated pods get another chance under the
  /// new policy, and pods parked for want of a profile that `set` has are queued again. Throws
  /// SchedulerError (stopped) or ProfileSetError (empty set) and then changes nothing.
  uint64_t ReplaceProfiles(std::shared_ptr<const ProfileSet> set);
  /// generation returns the live set's generation: 1 for the set the scheduler was built with,
  /// +1 per ReplaceProfiles.
  uint64_t generation() const;
  /// DrainingSets returns how many replaced sets cycles still hold (0 once they all ended).
  size_t DrainingSets() const;
  /// shadows returns the shadow profiles' runner: their status, start and stop.
  ShadowRunner& shadows() { return *shadow_; }
  /// bindings_in_flight returns how many binding cycles have not ended (waiting ones included).
  size_t bindings_in_flight() const { return bindings_in_flight_.load(); }

 private:
  friend class EventRouter;
  // Scheduling cycle (schedule_one.cc; the algorithm is CycleRunner's).
  void RunCycle(queue::QueuedPodInfo info);

  // Assume, Reserve, Permit and the binding cycle (binding_cycle.cc).
  void AssumeAndBind(std::shared_ptr<const ProfileRuntime> profiles, framework::Framework& fw,
                     queue::QueuedPodInfo info, std::unique_ptr<framework::CycleState> state,
                     const std::string& node, uint64_t scratch_cycle);
  void RunBindingCycle(const std::shared_ptr<BindingContext>& ctx, framework::Status permit);
  void FailBinding(const std::shared_ptr<BindingContext>& ctx, const framework::Status& status);
  void EndBinding(const std::shared_ptr<BindingContext>& ctx);
  // Failure handling shared by both cycles: record, requeue, nominate or clear the nomination.
  void HandleFailure(const queue::QueuedPodInfo& info, const framework::Status& status,
                     const std::string& message, queue::PluginSet rejectors,
                     queue::PluginSet pending, const std::string& nominated_node,
                     bool clear_nomination);

  // Hot swap (swap.cc): wiring a set's frameworks to this scheduler, every set still alive,
  // rejecting a waiting pod in whichever set holds it, and parking a pod without a profile.
  // DeclareKinds registers the set's declared kinds with the store's ObjectStore; throws
  // SchedulerError, declaring nothing, when one disagrees with a kind already mirrored.
  void DeclareKinds(const ProfileSet& set);
  void Wire(const ProfileSet& set);
  void Unwire(const ProfileSet& set);
  std::vector<std::shared_ptr<const ProfileRuntime>> LiveRuntimes() const;
  bool RejectWaiting(std::string_view uid, std::string_view plugin, std::string_view message);
  std::shared_ptr<const ProfileRuntime> RuntimeOf(const framework::Framework& fw) const;
  void ParkWithoutProfile(const queue::QueuedPodInfo& info);
  void QueueIfProfiled(const model::Pod& pod);

  // Timers and diagnostics (scheduler.cc).
  void ArmPeriodic(std::chrono::nanoseconds every, void (queue::SchedulingQueue::*flush)(),
                   size_t slot);
  void ArmPeriodicLocked(std::chrono::nanoseconds every, void (queue::SchedulingQueue::*flush)(),
                         size_t slot);  // timers_mu_ held
  struct PodEntry;
  void Record(const model::Pod& pod, const std::function<void(PodEntry&)>& edit);
  void ForgetDiagnostics(std::string_view uid);
  // Stats (stats.cc) and the record Explain reads (schedule_one.cc).
  void CountFailedAttempt(const framework::Status& status);
  void CountBinding();
  // RecordExplanation records the cycle's explanation for Explain and returns it; `needed`
  // makes the record even when none is kept (a shadow compares with it). Null when neither.
  std::shared_ptr<const RecordedCycle> RecordExplanation(const model::Pod& pod,
                                                         const framework::Framework& fw,
                                                         const framework::CycleState& state,
                                                         CycleAttempt& attempt, bool needed);
  using PodEntries = std::map<model::UidKey, PodEntry, std::less<>>;
  // DropExplanationLocked forgets the entry's explanation and its bytes, if any (diag_mu_ held).
  void DropExplanationLocked(PodEntry& entry);

  store::Store& store_;
  std::shared_ptr<store::ClusterWriter> writer_;
  // Pods whose Bind came back kSuperseded: their binding cycle ends without a retry.
  std::mutex superseded_mu_;
  std::set<std::string, std::less<>> superseded_;
  SchedulerOptions options_;
  std::shared_ptr<Clock> clock_;
  VirtualClock* virtual_clock_ = nullptr;  // set when clock_ is one
  mutable std::mutex profiles_mu_;
  std::shared_ptr<const ProfileRuntime> profiles_;
  uint64_t generation_ = 1;                                   // guarded by profiles_mu_
  std::vector<std::weak_ptr<const ProfileRuntime>> retired_;  // guarded by profiles_mu_
  std::mutex swap_mu_;                                        // one ReplaceProfiles at a time
  cache::Cache cache_;
  std::unique_ptr<queue::SchedulingQueue> queue_;
  std::unique_ptr<cache::Snapshot> snapshot_;
  std::unique_ptr<Executor> executor_;
  ManualExecutor* manual_executor_ = nullptr;  // set on a virtual clock
  std::unique_ptr<EventRouter> router_;
  std::unique_ptr<preemption::Toolkit> toolkit_;  // the frameworks' ClusterAccess
  std::unique_ptr<ShadowRunner> shadow_;          // the shadow profiles' thread and findings

  // Scheduling-thread state: the cycle's algorithm and its buffers.
  CycleRunner cycle_;

  std::atomic<size_t> bindings_in_flight_{0};
  std::mutex bindings_mu_;
  std::condition_variable bindings_cv_;

  std::mutex timers_mu_;
  std::condition_variable timers_cv_;
  int timer_callbacks_running_ = 0;
  bool timers_stopped_ = false;
  Clock::TimerId timer_ids_[2] = {0, 0};

  mutable std::mutex diag_mu_;
  // Per pod (by uid): what Diagnostics returns and, while kept, where its last cycle's
  // explanation is. The diagnostics are kept compact, since every pod has an entry: the uid as
  // its 16 bytes (UidKey), node names by their interned ids, a failure message shared with the
  // previous failure's when the words are the same (pods of one workload usually fail alike),
  // and the explanation (kept for up to 1,000 pods) in explanations_. Diagnostics() expands them.
  // An entry is 32 bytes, a 96-byte map node with its key.
  struct PodEntry {
    framework::Text message;
    int32_t attempts = 0;
    schedhost_id nominated_node = 0;  // 0: none
    schedhost_id node = 0;            // 0: not bound
    uint32_t explanation : 31 = 0;    // its slot in explanations_; 0: none kept
    uint32_t gated : 1 = 0;
  };
  static_assert(sizeof(void*) != 8 || sizeof(PodEntry) == 32);
  // A slot of explanations_: a pod's kept explanation, linked into the order the kept ones
  // were recorded in (by slot; 0 ends the list). Freed slots are reused, so there are never
  // many more slots than explanations kept, and a slot number fits PodEntry's 31 bits.
  struct KeptExplanation {
    PodEntries::iterator entry;
    std::shared_ptr<const RecordedCycle> record;
    uint32_t bytes = 0;
    uint32_t older = 0;
    uint32_t newer = 0;
  };
  static constexpr size_t kMaxKeptExplanations = (size_t{1} << 31) - 2;
  // SetMessageLocked stores `message` in `e`, sharing the last stored text when it is equal.
  void SetMessageLocked(PodEntry& e, std::string_view message);
  // KeepExplanationLocked gives the entry's pod `record` as its explanation, the newest
  // (diag_mu_ held).
  void KeepExplanationLocked(PodEntries::iterator entry,
                             std::shared_ptr<const RecordedCycle> record, uint32_t bytes);
  PodEntries diagnostics_;
  std::vector<KeptExplanation> explanations_;  // slot 0 unused
  std::vector<uint32_t> free_explanations_;    // slots to reuse
  uint32_t oldest_explanation_ = 0;            // the slot to drop first; 0: none kept
  uint32_t newest_explanation_ = 0;
  size_t explanation_count_ = 0;
  size_t explanation_bytes_ = 0;
  // The profile part of explanations, built once per framework (scheduling thread only). The
  // header is plain data; the runtime is watched, not held, so a replaced set is released as
  // soon as its last cycle ends: while the weak pointer is live, `explain_header_fw_` still
  // names that framework (no other can have its address); once it expires, the header is
  // rebuilt for whichever framework comes next.
  std::shared_ptr<const ExplainHeader> explain_header_;
  const framework::Framework* explain_header_fw_ = nullptr;
  std::weak_ptr<const ProfileRuntime> explain_header_profiles_;
  // The last explanation's rejection statuses, which the next shares when they are the same.
  std::shared_ptr<const std::vector<framework::Status>> last_explained_statuses_;
  // The last record stored, which the next shares when it is the same (scheduling thread only).
  std::shared_ptr<const RecordedCycle> last_explained_record_;
  framework::Text last_message_;  // the last failure message stored (diag_mu_ held)

  std::atomic<uint64_t> attempts_scheduled_{0};
  std::atomic<uint64_t> attempts_unschedulable_{0};
  std::atomic<uint64_t> attempts_error_{0};
  BindingRate binding_rate_;
  int64_t started_ns_ = 0;  // the clock's reading when the scheduler was built

  std::mutex run_mu_;  // Start / Stop
  std::thread loop_;
  std::atomic<bool> stopping_{false};
  bool stopped_ = false;
};

}  // namespace schedhost::scheduler
