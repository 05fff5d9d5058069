// SchedulingQueue: how pods come back. Failed attempts (AddUnschedulableIfNotPresent, with the
// events recorded during the flight replayed), cluster events (queueing hints), the backoff
// flush and the unschedulable-leftover flush. Hints and PreEnqueue run without the lock; what
// they decided is applied only to pods that did not change meanwhile.
#include <algorithm>
#include <optional>
#include <utility>

#include "host/queue/incoming.h"
#include "host/queue/scheduling_queue.h"

namespace schedhost::queue {

struct SchedulingQueue::Candidate {
  std::string uid;
  uint64_t version = 0;
  PodLocation from = PodLocation::kNone;
  QueuedPodInfo info;  // A copy, read without the lock.
  Strategy strategy = Strategy::kSkip;
  bool to_backoff = false;
  std::optional<PreEnqueueResult> verdict;  // Set when the pod heads for activeQ.
  std::string_view event;                   // What moves it (scheduler_queue_incoming_pods_total).
};

SchedulingQueue::Strategy SchedulingQueue::Worth(const QueuedPodInfo& info,
                                                 const ClusterEvent& ev) const {
  // A failure no plugin explains (an error) is simply retried after backoff, as is every pod
  // on a wildcard event.
  if (info.unschedulable_plugins.empty() && info.pending_plugins.empty()) {
    return Strategy::kAfterBackoff;
  }
  if (ev.IsWildcard()) return Strategy::kAfterBackoff;
  auto queue = [&](std::string_view plugin) {
    return !callbacks_.hint || callbacks_.hint(plugin, *info.pod, ev);
  };
  // A Pending plugin's Queue skips backoff, so it is asked first: its answer decides alone.
  for (const PluginName plugin : info.pending_plugins) {
    if (queue(plugin)) return Strategy::kImmediately;
  }
  for (const PluginName plugin : info.unschedulable_plugins) {
    if (info.pending_plugins.count(plugin) == 0 && queue(plugin)) return Strategy::kAfterBackoff;
  }
  return Strategy::kSkip;
}

void SchedulingQueue::RecordEventLocked(const ClusterEvent& ev) {
  if (in_flight_.empty()) return;
  events_.push_back({++next_seq_, std::make_shared<const ClusterEvent>(ev)});
}

std::vector<std::shared_ptr<const ClusterEvent>> SchedulingQueue::EventsAfterLocked(
    uint64_t seq) const {
  auto first = std::upper_bound(events_.begin(), events_.end(), seq,
                                [](uint64_t s, const RecordedEvent& e) { return s < e.seq; });
  std::vector<std::shared_ptr<const ClusterEvent>> out;
  for (auto it = first; it != events_.end(); ++it) out.push_back(it->event);
  return out;
}

PodLocation SchedulingQueue::AddUnschedulableIfNotPresent(const QueuedPodInfo& info,
                                                          PluginSet rejector_plugins,
                                                          PluginSet pending_plugins,
                                                          schedhost_code code,
                                                          std::string_view nominated_node) {
  constexpr std::string_view kWhat = "AddUnschedulableIfNotPresent: ";
  if (!info.pod) throw QueueError(std::string(kWhat) + "the pod is null");
  switch (code) {
    case SCHEDHOST_ERROR:
      // An error is nobody's verdict on the pod: no plugin to wait for.
      rejector_plugins.clear();
      pending_plugins.clear();
      break;
    case SCHEDHOST_UNSCHEDULABLE:
    case SCHEDHOST_UNSCHEDULABLE_AND_UNRESOLVABLE:
      break;
    case SCHEDHOST_PENDING:
      if (pending_plugins.empty()) pending_plugins.swap(rejector_plugins);
      break;
    default:
      throw QueueError(std::string(kWhat) + "status code " + std::to_string(code) +
                       " is not a scheduling failure (want Error, Unschedulable, "
                       "UnschedulableAndUnresolvable or Pending)");
  }
  const std::string uid(info.pod->uid());
  const std::string who = "pod " + info.pod->Key();
  std::unique_lock lock(mu_);
  auto find_flight = [&]() -> InFlight* {
    auto it = in_flight_.find(uid);
    if (it != in_flight_.end()) return &it->second;
    const PodLocation where = LocationLocked(uid);
    if (where == PodLocation::kNone) {
      throw QueueError(std::string(kWhat) + who + " is not in flight (Pop it first, and " +
                       "requeue it before calling Done)");
    }
    throw QueueError(std::string(kWhat) + who + " is not in flight but already " +
                     std::string(LocationName(where)));
  };
  InFlight* flight = find_flight();

  QueuedPodInfo probe;  // What the hints see: the newest object and this failure's plugins.
  probe.unschedulable_plugins = rejector_plugins;
  probe.pending_plugins = pending_plugins;
  Strategy strategy = (rejector_plugins.empty() && pending_plugins.empty())
                          ? Strategy::kAfterBackoff
                          : Strategy::kSkip;
  auto settled = [&] {
    return strategy == Strategy::kImmediately ||
           (strategy == Strategy::kAfterBackoff && pending_plugins.empty());
  };
  uint64_t seen = flight->start_seq;
  std::optional<PreEnqueueResult> verdict;
  std::shared_ptr<const model::Pod> verdict_for;
  for (;;) {
    if (flight->deleted) {
      EndFlightLocked(uid);
      return PodLocation::kNone;
    }
    // An update during the flight counts like an update of an unschedulable pod.
    if (flight->updated) strategy = std::max(strategy, Strategy::kAfterBackoff);
    if (!settled()) {
      auto batch = EventsAfterLocked(seen);
      if (!batch.empty()) {
        seen = events_.back().seq;
        probe.pod = flight->entry->info.pod;
        lock.unlock();
        for (const auto& ev : batch) {
          strategy = std::max(strategy, Worth(probe, *ev));
          if (settled()) break;
        }
        lock.lock();
        flight = find_flight();
        continue;  // Events may have arrived while the hints ran.
      }
    }
    if (strategy == Strategy::kImmediately && verdict_for != flight->entry->info.pod) {
      verdict_for = flight->entry->info.pod;
      lock.unlock();
      verdict = RunPreEnqueue(*verdict_for);
      lock.lock();
      flight = find_flight();
      continue;
    }
    break;
  }

  std::unique_ptr<internal::Entry> entry = std::move(flight->entry);
  EndFlightLocked(uid);
  QueuedPodInfo& requeued = entry->info;
  requeued.timestamp = Now();
  requeued.unschedulable_plugins = std::move(rejector_plugins);
  requeued.pending_plugins = std::move(pending_plugins);
  const std::shared_ptr<const model::Pod> pod = requeued.pod;
  PodLocation placed = PodLocation::kUnschedulable;
  switch (strategy) {
    case Strategy::kSkip:
      PutUnschedulableLocked(std::move(entry));
      break;
    case Strategy::kAfterBackoff:
      // The failure just restarted the backoff clock, so the pod always waits it out.
      PutBackoffLocked(std::move(entry));
      placed = PodLocation::kBackoff;
      break;
    case Strategy::kImmediately:
      placed = PlaceAdmittedLocked(std::move(entry), *verdict);
      break;
  }
  internal::CountIncoming(placed, "ScheduleAttemptFailure");
  nominator_.Add(pod, nominated_node);
  return placed;
}

void SchedulingQueue::Evaluate(Candidate& c, const ClusterEvent& ev) const {
  c.strategy = Worth(c.info, ev);
  if (c.strategy == Strategy::kSkip) return;
  c.to_backoff = c.strategy == Strategy::kAfterBackoff && BackingOff(c.info, Now());
  if (!c.to_backoff) c.verdict = RunPreEnqueue(*c.info.pod);
}

void SchedulingQueue::CommitLocked(Candidate& c) {
  if (c.strategy == Strategy::kSkip) return;
  if (LocationLocked(c.uid) != c.from) return;
  const internal::Entry* entry = FindLocked(c.uid, c.from);
  if (entry == nullptr || entry->version != c.version) return;  // Moved or changed meanwhile.
  std::unique_ptr<internal::Entry> taken = TakeLocked(c.uid);
  if (c.to_backoff) {
    PutBackoffLocked(std::move(taken));
    internal::CountIncoming(PodLocation::kBackoff, c.event);
  } else {
    internal::CountIncoming(PlaceAdmittedLocked(std::move(taken), *c.verdict), c.event);
  }
}

bool EventInterest::MayMatter(const QueuedPodInfo& info) const {
  return MayMatter(info.pod->scheduler_name(), info.unschedulable_plugins, info.pending_plugins);
}

bool EventInterest::MayMatter(std::string_view profile, const PluginSet& unschedulable,
                              const PluginSet& pending) const {
  if (unschedulable.empty() && pending.empty()) return true;
  auto it =
      std::find_if(deaf.begin(), deaf.end(), [&](const auto& d) { return d.first == profile; });
  if (it == deaf.end()) return true;
  const auto is_deaf = [&](std::string_view plugin) {
    return std::find(it->second.begin(), it->second.end(), plugin) != it->second.end();
  };
  for (const PluginName p : pending) {
    if (!is_deaf(p)) return true;
  }
  for (const PluginName p : unschedulable) {
    if (!is_deaf(p)) return true;
  }
  return false;
}

void SchedulingQueue::MoveUnschedulable(const ClusterEvent& ev,
                                        const std::function<bool(const internal::Entry&)>& select,
                                        bool record_event) {
  std::vector<Candidate> candidates;
  // Asked once per event, before the lock: which plugins registered for nothing like it.
  std::optional<EventInterest> interest;
  if (callbacks_.interest && !ev.IsWildcard()) interest = callbacks_.interest(ev);
  {
    std::lock_guard lock(mu_);
    if (record_event) RecordEventLocked(ev);
    // MayMatter reads only a parked pod's group (profile and plugin sets): when it is false for
    // every group, no parked pod can move and none is visited.
    const bool none_may_matter =
        interest && std::none_of(rejectors_.begin(), rejectors_.end(), [&](const auto& group) {
          const Rejectors& r = group.first;
          return interest->MayMatter(r.profile, r.unschedulable, r.pending);
        });
    for (const auto& entry : unschedulable_) {
      if (none_may_matter) break;
      if (interest && !interest->MayMatter(entry->info)) continue;
      if (!select(*entry)) continue;
      Candidate c;
      c.uid = entry->uid();
      c.version = entry->version;
      c.from = entry->info.gated ? PodLocation::kGated : PodLocation::kUnschedulable;
      c.info = entry->info;
      c.event = ev.label;
      candidates.push_back(std::move(c));
    }
  }
  if (candidates.empty()) return;
  for (Candidate& c : candidates) Evaluate(c, ev);
  std::lock_guard lock(mu_);
  for (Candidate& c : candidates) CommitLocked(c);
}

void SchedulingQueue::MoveAllToActiveOrBackoffQueue(const ClusterEvent& ev) {
  MoveUnschedulable(
      ev, [](const internal::Entry&) { return true; }, /*record_event=*/true);
}

void SchedulingQueue::MoveAllToActiveOrBackoffQueue(
    const ClusterEvent& ev, const std::function<bool(const model::Pod&)>& pre_check) {
  MoveUnschedulable(
      ev, [&](const internal::Entry& e) { return !pre_check || pre_check(*e.info.pod); },
      /*record_event=*/true);
}

void SchedulingQueue::AssignedPodAdded(std::shared_ptr<const model::Pod> pod) {
  MoveAllToActiveOrBackoffQueue(MakeAssignedPodAddEvent(std::move(pod)));
}

void SchedulingQueue::AssignedPodUpdated(std::shared_ptr<const model::Pod> old_pod,
                                         std::shared_ptr<const model::Pod> new_pod) {
  MoveAllToActiveOrBackoffQueue(MakeAssignedPodUpdateEvent(std::move(old_pod), std::move(new_pod)));
}

void SchedulingQueue::AssignedPodDeleted(std::shared_ptr<const model::Pod> pod) {
  MoveAllToActiveOrBackoffQueue(MakeAssignedPodDeleteEvent(std::move(pod)));
}

void SchedulingQueue::FlushBackoffQCompleted() {
  std::vector<Candidate> candidates;
  {
    std::lock_guard lock(mu_);
    const TimePoint now = Now();
    for (const internal::Entry* entry : backoff_.CollectWhile(
             [&](const internal::Entry& e) { return BackoffExpiry(e.info) <= now; })) {
      Candidate c;
      c.uid = entry->uid();
      c.version = entry->version;
      c.from = PodLocation::kBackoff;
      c.info = entry->info;
      c.strategy = Strategy::kImmediately;
      c.event = "BackoffComplete";
      candidates.push_back(std::move(c));
    }
  }
  if (candidates.empty()) return;
  // PreEnqueue runs again on the way to activeQ, as upstream's addToActiveQ does.
  for (Candidate& c : candidates) c.verdict = RunPreEnqueue(*c.info.pod);
  std::lock_guard lock(mu_);
  for (Candidate& c : candidates) CommitLocked(c);
}

void SchedulingQueue::FlushUnschedulablePodsLeftover() {
  const TimePoint now = Now();
  // The timeout is not a cluster change, so unlike upstream it is not recorded for pods in
  // flight: they started an attempt recently and cannot be leftovers.
  MoveUnschedulable(
      MakeWildcardEvent(std::string(kUnschedulableTimeoutLabel)),
      [&](const internal::Entry& e) {
        return now - e.info.timestamp > options_.pod_max_in_unschedulable;
      },
      /*record_event=*/false);
}

}  // namespace schedhost::queue
