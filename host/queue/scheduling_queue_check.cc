// SchedulingQueue::CheckInvariants: every tracked pod is in exactly one sub-queue, the location
// index and the counts agree with the containers, the heaps are ordered, and the in-flight
// bookkeeping (start sequence numbers, recorded events) is consistent.
#include <mutex>

#include "host/queue/scheduling_queue.h"

namespace schedhost::queue {
namespace {

std::string Mismatch(std::string_view uid, PodLocation held, PodLocation indexed) {
  return "pod " + std::string(uid) + " is held in " + std::string(LocationName(held)) +
         " but the location index says " + std::string(LocationName(indexed));
}

}  // namespace

std::string SchedulingQueue::CheckInvariants() const {
  std::lock_guard lock(mu_);
  auto indexed = [&](std::string_view uid) { return LocationLocked(uid); };

  if (std::string err = active_.Check("activeQ"); !err.empty()) return err;
  if (std::string err = backoff_.Check("backoffQ"); !err.empty()) return err;

  for (const auto& e : active_.entries()) {
    if (!e->info.pod) return "activeQ holds an entry without a pod";
    if (indexed(e->uid()) != PodLocation::kActive) {
      return Mismatch(e->uid(), PodLocation::kActive, indexed(e->uid()));
    }
    if (e->info.gated) return "pod " + e->uid() + " is gated but in activeQ";
    if (!e->info.initial_attempt_timestamp) {
      return "pod " + e->uid() + " is in activeQ without an initial attempt timestamp";
    }
  }
  for (const auto& e : backoff_.entries()) {
    if (!e->info.pod) return "backoffQ holds an entry without a pod";
    if (indexed(e->uid()) != PodLocation::kBackoff) {
      return Mismatch(e->uid(), PodLocation::kBackoff, indexed(e->uid()));
    }
    if (e->info.gated) return "pod " + e->uid() + " is gated but in backoffQ";
    if (e->info.attempts < 1) return "pod " + e->uid() + " is in backoffQ but was never tried";
  }
  size_t gated = 0;
  for (const auto& [uid, e] : unschedulable_) {
    if (!e || !e->info.pod) return "the unschedulable pods hold an entry without a pod";
    if (uid.data() != e->uid().data()) {
      return "unschedulable pod " + e->uid() + " is filed under another pod's uid";
    }
    const PodLocation held = e->info.gated ? PodLocation::kGated : PodLocation::kUnschedulable;
    if (indexed(uid) != held) return Mismatch(uid, held, indexed(uid));
    if (e->info.gated) ++gated;
  }
  if (gated != gated_) {
    return "gated count is " + std::to_string(gated_) + " but " + std::to_string(gated) +
           " pods are gated";
  }
  std::multiset<uint64_t> starts;
  for (const auto& [uid, f] : in_flight_) {
    if (!f.entry || !f.entry->info.pod)
      return "in-flight pod " + std::string(uid) + " has no entry";
    if (uid.data() != f.entry->uid().data()) {
      return "in-flight pod " + f.entry->uid() + " is filed under another pod's uid";
    }
    if (indexed(uid) != PodLocation::kInFlight) {
      return Mismatch(uid, PodLocation::kInFlight, indexed(uid));
    }
    if (f.entry->info.attempts < 1) {
      return "in-flight pod " + std::string(uid) + " has no attempt counted";
    }
    starts.insert(f.start_seq);
  }
  if (starts != flight_starts_) return "in-flight start sequence numbers disagree with the pods";

  // Each container's pods are indexed to that container, so equal totals mean that no pod is
  // held twice and that the index lists nothing else.
  const size_t held = active_.size() + backoff_.size() + unschedulable_.size() + in_flight_.size();
  if (held != where_.size()) {
    return "the sub-queues hold " + std::to_string(held) + " pods but " +
           std::to_string(where_.size()) + " are indexed (a pod is in two places or lost)";
  }

  // The location index's keys view the uid of the pod in the entry they locate.
  for (const auto& [uid, where] : where_) {
    const internal::Entry* e = FindLocked(uid, where);
    if (e == nullptr) return "pod " + std::string(uid) + " is indexed but held nowhere";
    if (e->uid().data() != uid.data()) {
      return "pod " + std::string(uid) + " is indexed under another pod's uid";
    }
  }

  if (in_flight_.empty() && !events_.empty()) {
    return std::to_string(events_.size()) + " events kept although no pod is in flight";
  }
  uint64_t last = 0;
  for (const RecordedEvent& e : events_) {
    if (e.seq <= last) return "recorded events are out of order";
    last = e.seq;
    if (!flight_starts_.empty() && e.seq < *flight_starts_.begin()) {
      return "an event older than every in-flight pod is still kept";
    }
  }
  return nominator_.CheckInvariants();
}

}  // namespace schedhost::queue
