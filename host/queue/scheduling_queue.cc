// SchedulingQueue: construction, placement, Add / Update / Delete, Pop / Done and queries.
// Requeueing (failures, events, flushes) is in scheduling_queue_requeue.cc; the invariant check
// in scheduling_queue_check.cc.
#include "host/queue/scheduling_queue.h"

#include <algorithm>
#include <utility>

#include "host/queue/incoming.h"

namespace schedhost::queue {
namespace {

std::string Describe(const model::Pod& pod) {
  return "pod " + pod.Key() + " (uid " + std::string(pod.uid()) + ")";
}

QueueOptions Normalize(QueueOptions options) {
  using std::chrono::nanoseconds;
  if (options.pod_initial_backoff <= nanoseconds(0)) {
    throw QueueError("queue options: pod_initial_backoff must be positive, got " +
                     std::to_string(options.pod_initial_backoff.count()) + "ns");
  }
  if (options.pod_max_backoff < options.pod_initial_backoff) {
    throw QueueError("queue options: pod_max_backoff (" +
                     std::to_string(options.pod_max_backoff.count()) +
                     "ns) must not be below pod_initial_backoff (" +
                     std::to_string(options.pod_initial_backoff.count()) + "ns)");
  }
  if (options.pod_max_in_unschedulable <= nanoseconds(0)) {
    throw QueueError("queue options: pod_max_in_unschedulable must be positive, got " +
                     std::to_string(options.pod_max_in_unschedulable.count()) + "ns");
  }
  if (!options.clock) options.clock = [] { return std::chrono::steady_clock::now(); };
  return options;
}

}  // namespace

bool DefaultQueueSortLess(const QueuedPodInfo& a, const QueuedPodInfo& b) {
  const int32_t pa = a.pod->priority();
  const int32_t pb = b.pod->priority();
  return pa > pb || (pa == pb && a.timestamp < b.timestamp);
}

SchedulingQueue::SchedulingQueue(QueueCallbacks callbacks, QueueOptions options)
    : callbacks_(std::move(callbacks)),
      options_(Normalize(std::move(options))),
      active_([this](const internal::Entry& a, const internal::Entry& b) {
        return callbacks_.less(a.info, b.info);
      }),
      backoff_([this](const internal::Entry& a, const internal::Entry& b) {
        return BackoffExpiry(a.info) < BackoffExpiry(b.info);
      }) {
  if (!callbacks_.less) callbacks_.less = &DefaultQueueSortLess;
}

SchedulingQueue::~SchedulingQueue() { Close(); }

bool SchedulingQueue::BackingOff(const QueuedPodInfo& info, TimePoint now) const {
  return !info.gated && BackoffExpiry(info) > now;
}

TimePoint SchedulingQueue::BackoffExpiry(const QueuedPodInfo& info) const {
  return info.timestamp + BackoffDuration(options_, info.attempts);
}

PreEnqueueResult SchedulingQueue::RunPreEnqueue(const model::Pod& pod) const {
  if (!callbacks_.pre_enqueue) return {};
  return callbacks_.pre_enqueue(pod);
}

void SchedulingQueue::Validate(const std::shared_ptr<const model::Pod>& pod,
                               std::string_view what) const {
  if (!pod) throw QueueError(std::string(what) + ": the pod is null");
  if (pod->uid().empty())
    throw QueueError(std::string(what) + ": " + Describe(*pod) + " has no uid");
  if (!pod->node_name().empty()) {
    throw QueueError(std::string(what) + ": " + Describe(*pod) + " is bound to node " +
                     std::string(pod->node_name()) + "; only unbound pods are queued (use Delete)");
  }
}

// --- placement (mu_ held) ---------------------------------------------------------------------

PodLocation SchedulingQueue::LocationLocked(std::string_view uid) const {
  // A pod is in one container at most, each with its own uid index: asking them in turn costs a
  // few hash lookups, against a location index's node for every queued pod.
  if (in_flight_.contains(uid)) return PodLocation::kInFlight;
  if (auto it = unschedulable_.find(uid); it != unschedulable_.end()) {
    return (*it)->info.gated ? PodLocation::kGated : PodLocation::kUnschedulable;
  }
  if (active_.Get(uid) != nullptr) return PodLocation::kActive;
  if (backoff_.Get(uid) != nullptr) return PodLocation::kBackoff;
  return PodLocation::kNone;
}

internal::Entry* SchedulingQueue::FindLocked(std::string_view uid, PodLocation where) const {
  switch (where) {
    case PodLocation::kActive:
      return active_.Get(uid);
    case PodLocation::kBackoff:
      return backoff_.Get(uid);
    case PodLocation::kUnschedulable:
    case PodLocation::kGated: {
      auto it = unschedulable_.find(uid);
      return it == unschedulable_.end() ? nullptr : it->get();
    }
    case PodLocation::kInFlight: {
      auto it = in_flight_.find(uid);
      return it == in_flight_.end() ? nullptr : it->second.entry.get();
    }
    case PodLocation::kNone:
      break;
  }
  return nullptr;
}

std::unique_ptr<internal::Entry> SchedulingQueue::TakeLocked(std::string_view uid) {
  std::unique_ptr<internal::Entry> entry;
  switch (LocationLocked(uid)) {
    case PodLocation::kActive:
      entry = active_.Remove(uid);
      break;
    case PodLocation::kBackoff:
      entry = backoff_.Remove(uid);
      break;
    case PodLocation::kUnschedulable:
    case PodLocation::kGated: {
      auto it = unschedulable_.find(uid);
      if (it != unschedulable_.end()) {
        entry = std::move(unschedulable_.extract(it).value());
        if (entry->info.gated) --gated_;
        CountRejectorsLocked(entry->info, -1);
      }
      break;
    }
    case PodLocation::kInFlight:
    case PodLocation::kNone:
      return nullptr;  // In-flight pods leave through EndFlightLocked.
  }
  return entry;
}

void SchedulingQueue::ReplacePodLocked(internal::Entry& entry, PodLocation where,
                                       std::shared_ptr<const model::Pod> pod) {
  // The heaps and unschedulable_ read the uid from the entry itself. in_flight_'s key views
  // the pod's uid: it moves to the new pod's (equal) uid while the old pod, held here, is still
  // alive to compare against.
  const bool parked = where == PodLocation::kUnschedulable || where == PodLocation::kGated;
  if (parked) CountRejectorsLocked(entry.info, -1);  // the profile is the new pod's
  const std::shared_ptr<const model::Pod> old = std::exchange(entry.info.pod, std::move(pod));
  if (parked) CountRejectorsLocked(entry.info, +1);
  if (where == PodLocation::kInFlight) internal::Rekey(in_flight_, entry.uid());
}

bool SchedulingQueue::RejectorsLess::Less(const RejectorsView& a, const RejectorsView& b) {
  if (a.profile != b.profile) return a.profile < b.profile;
  if (!(a.unschedulable == b.unschedulable)) {
    return std::lexicographical_compare(a.unschedulable.begin(), a.unschedulable.end(),
                                        b.unschedulable.begin(), b.unschedulable.end());
  }
  return std::lexicographical_compare(a.pending.begin(), a.pending.end(), b.pending.begin(),
                                      b.pending.end());
}

void SchedulingQueue::CountRejectorsLocked(const QueuedPodInfo& info, int delta) {
  const RejectorsView key{info.pod->scheduler_name(), info.unschedulable_plugins,
                          info.pending_plugins};
  auto it = rejectors_.find(key);
  if (delta > 0) {
    if (it == rejectors_.end()) {
      it =
          rejectors_.emplace(Rejectors{std::string(key.profile), key.unschedulable, key.pending}, 0)
              .first;
    }
    ++it->second;
  } else if (it != rejectors_.end() && --it->second == 0) {
    rejectors_.erase(it);
  }
}

void SchedulingQueue::PutActiveLocked(std::unique_ptr<internal::Entry> entry) {
  QueuedPodInfo& info = entry->info;
  info.gated = false;
  if (!info.initial_attempt_set) {
    info.initial_attempt_timestamp = Now();
    info.initial_attempt_set = true;
  }
  entry->version = ++next_version_;
  active_.Push(std::move(entry));
  cv_.notify_one();
}

void SchedulingQueue::PutBackoffLocked(std::unique_ptr<internal::Entry> entry) {
  entry->info.gated = false;
  entry->version = ++next_version_;
  backoff_.Push(std::move(entry));
}

void SchedulingQueue::PutUnschedulableLocked(std::unique_ptr<internal::Entry> entry) {
  entry->version = ++next_version_;
  if (entry->info.gated) ++gated_;
  CountRejectorsLocked(entry->info, +1);
  unschedulable_.insert(std::move(entry));
}

PodLocation SchedulingQueue::PlaceAdmittedLocked(std::unique_ptr<internal::Entry> entry,
                                                 const PreEnqueueResult& verdict) {
  if (verdict.admitted) {
    PutActiveLocked(std::move(entry));
    return PodLocation::kActive;
  }
  // Gated pods wait beside the unschedulable ones, with the gating plugin as their rejector so
  // that its queueing hints can release them, as upstream does.
  QueuedPodInfo& info = entry->info;
  info.gated = true;
  info.unschedulable_plugins.clear();
  info.pending_plugins.clear();
  if (!verdict.plugin.empty()) info.unschedulable_plugins.insert(verdict.plugin);
  PutUnschedulableLocked(std::move(entry));
  return PodLocation::kGated;
}

// --- Add / Update / Delete --------------------------------------------------------------------

PodLocation SchedulingQueue::Add(std::shared_ptr<const model::Pod> pod) {
  Validate(pod, "Add");
  auto refuse_known = [&](PodLocation where) {
    if (where != PodLocation::kNone) {
      throw QueueError("Add: " + Describe(*pod) + " is already queued (" +
                       std::string(LocationName(where)) + "); use Update");
    }
  };
  {
    std::lock_guard lock(mu_);
    refuse_known(LocationLocked(pod->uid()));
  }
  const PreEnqueueResult verdict = RunPreEnqueue(*pod);  // Without the lock (ABI promise).
  std::lock_guard lock(mu_);
  refuse_known(LocationLocked(pod->uid()));
  auto entry = std::make_unique<internal::Entry>();
  entry->info.pod = pod;
  entry->info.timestamp = Now();
  const PodLocation where = PlaceAdmittedLocked(std::move(entry), verdict);
  internal::CountIncoming(where, "PodAdd");
  // Upstream records the nomination only of pods that reach activeQ.
  if (where == PodLocation::kActive) nominator_.Add(pod, "");
  return where;
}

PodLocation SchedulingQueue::Update(const std::shared_ptr<const model::Pod>& old_pod,
                                    const std::shared_ptr<const model::Pod>& new_pod) {
  Validate(new_pod, "Update");
  const std::string_view uid = new_pod->uid();
  if (old_pod && old_pod->uid() != uid) {
    throw QueueError("Update: old " + Describe(*old_pod) + " and new " + Describe(*new_pod) +
                     " are different pods");
  }
  std::unique_lock lock(mu_);
  // Retried only when another thread moved the pod while PreEnqueue ran without the lock.
  for (;;) {
    const PodLocation where = LocationLocked(uid);
    internal::Entry* entry = FindLocked(uid, where);
    const std::shared_ptr<const model::Pod> before = entry ? entry->info.pod : nullptr;
    const model::Pod& old_ref = old_pod ? *old_pod : (before ? *before : *new_pod);
    switch (where) {
      case PodLocation::kActive:
      case PodLocation::kBackoff:
        ReplacePodLocked(*entry, where, new_pod);
        entry->version = ++next_version_;
        (where == PodLocation::kActive ? active_ : backoff_).Fix(uid);
        nominator_.Update(old_ref, new_pod);
        return where;
      case PodLocation::kInFlight: {
        InFlight& flight = in_flight_.find(uid)->second;
        if (flight.deleted) return where;
        if (PodUpdateMayMakeSchedulable(old_ref, *new_pod)) flight.updated = true;
        ReplacePodLocked(*entry, where, new_pod);
        return where;
      }
      case PodLocation::kUnschedulable:
      case PodLocation::kGated: {
        if (!PodUpdateMayMakeSchedulable(old_ref, *new_pod)) {
          // Same version on purpose: a move evaluated meanwhile still applies.
          ReplacePodLocked(*entry, where, new_pod);
          nominator_.Update(old_ref, new_pod);
          return where;
        }
        if (BackingOff(entry->info, Now())) {
          auto taken = TakeLocked(uid);
          taken->info.pod = new_pod;
          PutBackoffLocked(std::move(taken));
          internal::CountIncoming(PodLocation::kBackoff, "PodUpdate");
          nominator_.Update(old_ref, new_pod);
          return PodLocation::kBackoff;
        }
        const uint64_t version = entry->version;
        lock.unlock();
        const PreEnqueueResult verdict = RunPreEnqueue(*new_pod);
        lock.lock();
        if (LocationLocked(uid) != where || FindLocked(uid, where)->version != version) continue;
        auto taken = TakeLocked(uid);
        const std::shared_ptr<const model::Pod> stored = taken->info.pod;
        taken->info.pod = new_pod;
        nominator_.Update(old_pod ? *old_pod : *stored, new_pod);
        const PodLocation placed = PlaceAdmittedLocked(std::move(taken), verdict);
        internal::CountIncoming(placed, "PodUpdate");
        return placed;
      }
      case PodLocation::kNone: {
        lock.unlock();
        const PreEnqueueResult verdict = RunPreEnqueue(*new_pod);
        lock.lock();
        if (LocationLocked(uid) != PodLocation::kNone) continue;
        auto fresh = std::make_unique<internal::Entry>();
        fresh->info.pod = new_pod;
        fresh->info.timestamp = Now();
        const PodLocation placed = PlaceAdmittedLocked(std::move(fresh), verdict);
        internal::CountIncoming(placed, "PodAdd");
        if (placed == PodLocation::kActive) nominator_.Add(new_pod, "");
        return placed;
      }
    }
  }
}

PodLocation SchedulingQueue::Delete(const model::Pod& pod) {
  std::lock_guard lock(mu_);
  nominator_.Delete(pod);
  const PodLocation where = LocationLocked(pod.uid());
  if (where == PodLocation::kInFlight) {
    in_flight_.find(pod.uid())->second.deleted = true;
  } else if (where != PodLocation::kNone) {
    TakeLocked(pod.uid());
  }
  return where;
}

// --- Pop / Done -------------------------------------------------------------------------------

QueuedPodInfo SchedulingQueue::PopLocked() {
  std::unique_ptr<internal::Entry> entry = active_.Pop();
  entry->info.attempts++;
  entry->version = ++next_version_;
  QueuedPodInfo out = entry->info;
  InFlight flight;
  flight.start_seq = ++next_seq_;
  flight_starts_.insert(flight.start_seq);
  flight.entry = std::move(entry);
  const std::string_view uid = flight.entry->uid();
  in_flight_.emplace(uid, std::move(flight));
  return out;
}

std::optional<QueuedPodInfo> SchedulingQueue::Pop() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return closed_ || !active_.empty(); });
  if (closed_) return std::nullopt;
  return PopLocked();
}

std::optional<QueuedPodInfo> SchedulingQueue::TryPop() {
  std::lock_guard lock(mu_);
  if (closed_ || active_.empty()) return std::nullopt;
  return PopLocked();
}

void SchedulingQueue::Done(std::string_view uid) {
  std::lock_guard lock(mu_);
  if (LocationLocked(uid) == PodLocation::kInFlight) EndFlightLocked(uid);
}

void SchedulingQueue::EndFlightLocked(std::string_view uid) {
  auto it = in_flight_.find(uid);
  if (it == in_flight_.end()) return;
  // `uid` may point into the entry, so it goes last.
  flight_starts_.erase(flight_starts_.find(it->second.start_seq));
  in_flight_.erase(it);
  // Events older than every remaining flight can never be replayed again.
  if (flight_starts_.empty()) {
    events_.clear();
  } else {
    const uint64_t oldest = *flight_starts_.begin();
    while (!events_.empty() && events_.front().seq < oldest) events_.pop_front();
  }
}

// --- control and queries ----------------------------------------------------------------------

void SchedulingQueue::Reorder(
    std::function<bool(const QueuedPodInfo& a, const QueuedPodInfo& b)> less) {
  std::lock_guard lock(mu_);
  callbacks_.less = less ? std::move(less) : &DefaultQueueSortLess;
  active_.SetLess([this](const internal::Entry& a, const internal::Entry& b) {
    return callbacks_.less(a.info, b.info);
  });
}

void SchedulingQueue::Close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

PodLocation SchedulingQueue::Where(std::string_view uid) const {
  std::lock_guard lock(mu_);
  return LocationLocked(uid);
}

QueueCounts SchedulingQueue::Counts() const {
  std::lock_guard lock(mu_);
  QueueCounts c;
  c.active = active_.size();
  c.backoff = backoff_.size();
  c.gated = gated_;
  c.unschedulable = unschedulable_.size() - gated_;
  c.in_flight = in_flight_.size();
  return c;
}

std::vector<PendingPod> SchedulingQueue::PendingPods() const {
  std::lock_guard lock(mu_);
  std::vector<PendingPod> out;
  out.reserve(active_.size() + backoff_.size() + unschedulable_.size() + in_flight_.size());
  const TimePoint now = Now();
  auto add = [&](const internal::Entry& e, PodLocation where) {
    std::chrono::nanoseconds left{0};
    if (where == PodLocation::kBackoff) {
      left = std::max(left, std::chrono::nanoseconds(BackoffExpiry(e.info) - now));
    }
    out.push_back({e.info.pod, where, e.info.attempts, e.info.unschedulable_plugins,
                   e.info.pending_plugins, left});
  };
  for (const auto& e : active_.entries()) add(*e, PodLocation::kActive);
  for (const auto& e : backoff_.entries()) add(*e, PodLocation::kBackoff);
  for (const auto& e : unschedulable_) {
    add(*e, e->info.gated ? PodLocation::kGated : PodLocation::kUnschedulable);
  }
  for (const auto& [uid, f] : in_flight_) add(*f.entry, PodLocation::kInFlight);
  return out;
}

}  // namespace schedhost::queue
