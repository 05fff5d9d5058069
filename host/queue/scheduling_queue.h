// SchedulingQueue: the pending pods of every profile, upstream's PriorityQueue. A pod is always
// in exactly one of activeQ (a heap in QueueSort order), backoffQ (a heap by backoff expiry),
// the unschedulable pods (beside them the pods PreEnqueue gates) or in flight (popped, not yet
// bound or requeued). Failed pods come back when a cluster event one of their rejecting plugins
// cares about arrives (queueing hints), when they are updated, or after five minutes; events
// seen while a pod is in flight are replayed when it fails, so no wake-up is lost.
//
// The queue sits below the framework: plugins reach it only through the injected callbacks.
// PreEnqueue and queueing hints run without the queue's lock (the ABI promises plugins the host
// holds no lock around them); QueueSort's `less` necessarily runs under it and must not call
// back into the queue. Callbacks must not throw and must be thread-safe, like the clock.
//
//   SchedulingQueue q({.less = ..., .pre_enqueue = ..., .hint = ...}, options);
//   q.Add(pod);
//   auto info = q.Pop();                        // blocks; nullopt once closed
//   q.AddUnschedulableIfNotPresent(*info, {"NodeResourcesFit"}, {}, SCHEDHOST_UNSCHEDULABLE);
//   q.MoveAllToActiveOrBackoffQueue(MakeNodeAddEvent(node));
#pragma once

#include <schedhost/plugin.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "host/model/pod.h"
#include "host/queue/cluster_event.h"
#include "host/queue/nominator.h"
#include "host/queue/pod_heap.h"
#include "host/queue/queued_pod_info.h"

namespace schedhost::queue {

/// EventInterest is, for one cluster event, which plugins of each profile registered for no event
/// matching it (upstream's podMatchesEvent): their hint would answer Skip without running, so a
/// parked pod that only they rejected is left where it is without copying it out of the queue.
struct EventInterest {
  /// deaf lists, per profile (schedulerName), those plugins.
  std::vector<std::pair<std::string, std::vector<std::string>>> deaf;

  /// MayMatter is false only when every plugin that rejected `info` (or left it Pending) is
  /// deaf to the event in the pod's profile.
  bool MayMatter(const QueuedPodInfo& info) const;
  /// MayMatter is the same for a pod of `profile` with those plugin sets.
  bool MayMatter(std::string_view profile, const PluginSet& unschedulable,
                 const PluginSet& pending) const;
};

/// QueueCallbacks are what the scheduler injects so the queue never calls plugins itself.
struct QueueCallbacks {
  /// less is QueueSort: true when `a` should pop before `b`. Empty: DefaultQueueSortLess.
  std::function<bool(const QueuedPodInfo& a, const QueuedPodInfo& b)> less;
  /// pre_enqueue runs the PreEnqueue plugins. Empty: every pod is admitted.
  std::function<PreEnqueueResult(const model::Pod& pod)> pre_enqueue;
  /// hint answers, for a pod `plugin` rejected, whether `ev` may make it schedulable (Queue:
  /// true, Skip: false) from the plugin's registrations and queueing hint; an unknown plugin
  /// answers true. Empty: always true.
  std::function<bool(std::string_view plugin, const model::Pod& pod, const ClusterEvent& ev)> hint;
  /// interest answers which plugins cannot care about `ev` (a shortcut before hint; it must
  /// agree with it). Empty: every pod is asked through hint.
  std::function<EventInterest(const ClusterEvent& ev)> interest;
};

/// DefaultQueueSortLess is PrioritySort's order: higher priority first, then earlier timestamp.
bool DefaultQueueSortLess(const QueuedPodInfo& a, const QueuedPodInfo& b);

/// QueueCounts are the sizes of the sub-queues (scheduler_pending_pods by queue).
struct QueueCounts {
  size_t active = 0;
  size_t backoff = 0;
  size_t unschedulable = 0;  // Without the gated pods.
  size_t gated = 0;
  size_t in_flight = 0;
};

/// PendingPod is one pod of PendingPods() with where it is.
struct PendingPod {
  std::shared_ptr<const model::Pod> pod;
  PodLocation where = PodLocation::kNone;
  int attempts = 0;
  /// The plugins that rejected its last attempt (or gate it), and those that answered Pending.
  PluginSet unschedulable_plugins;
  PluginSet pending_plugins;
  /// backoff_left is how long a pod in backoffQ still waits (0 elsewhere).
  std::chrono::nanoseconds backoff_left{0};
};

/// SchedulingQueue is thread-safe; see the file comment for the model.
class SchedulingQueue {
 public:
  /// SchedulingQueue validates `options` (throws QueueError naming the bad one).
  explicit SchedulingQueue(QueueCallbacks callbacks, QueueOptions options = {});
  /// ~SchedulingQueue closes the queue; no thread may still be inside it.
  ~SchedulingQueue();
  SchedulingQueue(const SchedulingQueue&) = delete;
  SchedulingQueue& operator=(const SchedulingQueue&) = delete;

  /// Add queues a new unbound pod: activeQ when PreEnqueue admits it (and its nomination, if
  /// any, is recorded), else gated. Throws QueueError for a null, bound or already queued pod.
  PodLocation Add(std::shared_ptr<const model::Pod> pod);
  /// Update replaces a pod's object (`old_pod` may be null: the stored one is used). In activeQ
  /// or backoffQ it is updated in place; an unschedulable or gated pod whose spec or metadata
  /// changed moves on (backoffQ while backing off, else activeQ through PreEnqueue); an in-flight
  /// pod keeps the new object for its requeue; an unknown pod is added. Returns where it is now.
  PodLocation Update(const std::shared_ptr<const model::Pod>& old_pod,
                     const std::shared_ptr<const model::Pod>& new_pod);
  /// Delete forgets the pod and its nomination; an in-flight pod is only marked, so its cycle
  /// ends normally and it is not requeued. Returns where it was.
  PodLocation Delete(const model::Pod& pod);

  /// Pop blocks until activeQ has a pod, then moves the first one in flight with attempts
  /// incremented and returns a copy of its info; nullopt once Close() was called.
  std::optional<QueuedPodInfo> Pop();
  /// TryPop is Pop without blocking: nullopt when activeQ is empty or the queue is closed.
  std::optional<QueuedPodInfo> TryPop();
  /// Done ends the pod's flight (bound, or finished some other way) and drops the events kept
  /// only for it; a no-op for a pod not in flight.
  void Done(std::string_view uid);

  /// AddUnschedulableIfNotPresent requeues an in-flight pod after a failed attempt: with code
  /// Error or no rejecting plugin to backoffQ; otherwise, when an event recorded during its
  /// flight (or an update) may have resolved the failure per the hints, to backoffQ (activeQ
  /// when a Pending plugin's hint said Queue), else to the unschedulable pods. The pod is then
  /// nominated to `nominated_node` ("": its status' nominatedNodeName) and its flight ends.
  /// Returns where it went (kNone when it was deleted meanwhile). Throws QueueError when the pod
  /// is not in flight or `code` is not a failure.
  PodLocation AddUnschedulableIfNotPresent(const QueuedPodInfo& info, PluginSet rejector_plugins,
                                           PluginSet pending_plugins, schedhost_code code,
                                           std::string_view nominated_node = "");

  /// MoveAllToActiveOrBackoffQueue moves every unschedulable or gated pod that `ev` may make
  /// schedulable per its rejecting plugins' hints (backoffQ while backing off, else activeQ
  /// through PreEnqueue), and records `ev` for the pods in flight.
  void MoveAllToActiveOrBackoffQueue(const ClusterEvent& ev);
  /// MoveAllToActiveOrBackoffQueue, considering only the pods `pre_check` accepts (upstream's
  /// preCheck, e.g. to leave out the pod whose failed binding caused the event); `pre_check` runs
  /// under the queue's lock and must not call the queue.
  void MoveAllToActiveOrBackoffQueue(const ClusterEvent& ev,
                                     const std::function<bool(const model::Pod&)>& pre_check);
  /// AssignedPodAdded reports a pod bound to a node (MakeAssignedPodAddEvent).
  void AssignedPodAdded(std::shared_ptr<const model::Pod> pod);
  /// AssignedPodUpdated reports an update of a bound pod (MakeAssignedPodUpdateEvent).
  void AssignedPodUpdated(std::shared_ptr<const model::Pod> old_pod,
                          std::shared_ptr<const model::Pod> new_pod);
  /// AssignedPodDeleted reports that a bound pod went away (MakeAssignedPodDeleteEvent).
  void AssignedPodDeleted(std::shared_ptr<const model::Pod> pod);

  /// FlushBackoffQCompleted moves every pod whose backoff expired to activeQ (through
  /// PreEnqueue); the scheduler calls it every second.
  void FlushBackoffQCompleted();
  /// FlushUnschedulablePodsLeftover moves pods unschedulable for longer than
  /// pod_max_in_unschedulable back (an UnschedulableTimeout wildcard event); every 30 seconds.
  void FlushUnschedulablePodsLeftover();

  /// Reorder switches QueueSort to `less` (empty: the default) and re-heapifies activeQ.
  void Reorder(std::function<bool(const QueuedPodInfo& a, const QueuedPodInfo& b)> less);
  /// Close wakes every blocked Pop, which then returns nullopt; later Pops return at once.
  void Close();

  /// Where returns where the pod with `uid` is.
  PodLocation Where(std::string_view uid) const;
  /// Counts returns the sub-queue sizes.
  QueueCounts Counts() const;
  /// PendingPods lists every tracked pod with where it is, in no particular order.
  std::vector<PendingPod> PendingPods() const;
  /// CheckInvariants returns "" when every pod is in exactly one place and every index, heap
  /// and count agrees; else a description of the first problem.
  std::string CheckInvariants() const;
  /// nominator returns the queue's nominator (shared with the framework).
  Nominator& nominator() { return nominator_; }
  /// options returns the options the queue runs with.
  const QueueOptions& options() const { return options_; }

 private:
  enum class Strategy { kSkip, kAfterBackoff, kImmediately };
  struct InFlight {
    std::unique_ptr<internal::Entry> entry;  // As popped; entry->info.pod is the newest object.
    uint64_t start_seq = 0;                  // Events after this one were seen in flight.
    bool updated = false;  // An update that may make it schedulable arrived in flight.
    bool deleted = false;  // Deleted in flight: not to be requeued.
  };
  struct RecordedEvent {
    uint64_t seq = 0;
    std::shared_ptr<const ClusterEvent> event;
  };
  struct Candidate;  // A pod considered for a move, evaluated without the lock.
  // Rejectors is what EventInterest::MayMatter reads of a parked pod (its profile and plugin
  // sets), so the parked pods can be counted by it: an event no such group may matter to moves
  // nothing, and is answered without visiting every parked pod (a cluster may park thousands,
  // and every binding is an event).
  struct Rejectors {
    std::string profile;
    PluginSet unschedulable;
    PluginSet pending;
  };
  struct RejectorsView {
    std::string_view profile;
    const PluginSet& unschedulable;
    const PluginSet& pending;
  };
  struct RejectorsLess {
    using is_transparent = void;
    static RejectorsView View(const Rejectors& r) {
      return {r.profile, r.unschedulable, r.pending};
    }
    static const RejectorsView& View(const RejectorsView& r) { return r; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return Less(View(a), View(b));
    }
    static bool Less(const RejectorsView& a, const RejectorsView& b);
  };
  // CountRejectorsLocked adds `delta` to the count of `info`'s group (unschedulable_ changed).
  void CountRejectorsLocked(const QueuedPodInfo& info, int delta);

  TimePoint Now() const { return options_.clock(); }
  bool BackingOff(const QueuedPodInfo& info, TimePoint now) const;
  TimePoint BackoffExpiry(const QueuedPodInfo& info) const;
  PreEnqueueResult RunPreEnqueue(const model::Pod& pod) const;
  Strategy Worth(const QueuedPodInfo& info, const ClusterEvent& ev) const;
  void Validate(const std::shared_ptr<const model::Pod>& pod, std::string_view what) const;

  // Placement; all need mu_ held.
  PodLocation LocationLocked(std::string_view uid) const;
  internal::Entry* FindLocked(std::string_view uid, PodLocation where) const;
  std::unique_ptr<internal::Entry> TakeLocked(std::string_view uid);
  // ReplacePodLocked gives an entry that stays where it is its pod's newer object.
  void ReplacePodLocked(internal::Entry& entry, PodLocation where,
                        std::shared_ptr<const model::Pod> pod);
  void PutActiveLocked(std::unique_ptr<internal::Entry> entry);
  void PutBackoffLocked(std::unique_ptr<internal::Entry> entry);
  void PutUnschedulableLocked(std::unique_ptr<internal::Entry> entry);
  PodLocation PlaceAdmittedLocked(std::unique_ptr<internal::Entry> entry,
                                  const PreEnqueueResult& verdict);
  QueuedPodInfo PopLocked();
  void RecordEventLocked(const ClusterEvent& ev);
  std::vector<std::shared_ptr<const ClusterEvent>> EventsAfterLocked(uint64_t seq) const;
  void EndFlightLocked(std::string_view uid);

  // Moves out of the unschedulable pods and backoffQ, in three steps: collect candidates under
  // the lock, evaluate hints and PreEnqueue without it, commit the ones still unchanged.
  void MoveUnschedulable(const ClusterEvent& ev,
                         const std::function<bool(const internal::Entry&)>& select,
                         bool record_event);
  void Evaluate(Candidate& c, const ClusterEvent& ev) const;
  void CommitLocked(Candidate& c);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  QueueCallbacks callbacks_;
  const QueueOptions options_;
  internal::PodHeap active_;
  internal::PodHeap backoff_;
  internal::EntrySet<std::unique_ptr<internal::Entry>> unschedulable_;  // Gated ones too.
  std::map<Rejectors, size_t, RejectorsLess> rejectors_;                // unschedulable_ by group
  internal::UidMap<InFlight> in_flight_;
  std::deque<RecordedEvent> events_;  // Recorded while pods are in flight, by seq.
  std::multiset<uint64_t> flight_starts_;
  uint64_t next_seq_ = 0;
  uint64_t next_version_ = 0;
  size_t gated_ = 0;
  bool closed_ = false;
  Nominator nominator_;
};

}  // namespace schedhost::queue
