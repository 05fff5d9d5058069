// SchedulingQueue::CheckInvariants: every tracked pod is in exactly one sub-queue, its uid
// index and the counts agree with the containers, the heaps are ordered, and the in-flight
// bookkeeping (start sequence numbers, recorded events) is consistent.
#include <algorithm>
#include <map>
#include <mutex>

#include "host/queue/scheduling_queue.h"

namespace schedhost::queue {
namespace {

std::string Mismatch(std::string_view uid, PodLocation held, PodLocation indexed) {
  return "pod " + std::string(uid) + " is held in " + std::string(LocationName(held)) +
         " but is located in " + std::string(LocationName(indexed));
}

}  // namespace

std::string SchedulingQueue::CheckInvariants() const {
  std::lock_guard lock(mu_);
  // LocationLocked asks the containers in turn, so a pod held twice could hide behind the first
  // answer: every held pod must be found in exactly one.
  auto holders = [&](std::string_view uid) {
    return static_cast<int>(active_.Get(uid) != nullptr) +
           static_cast<int>(backoff_.Get(uid) != nullptr) +
           static_cast<int>(unschedulable_.contains(uid)) +
           static_cast<int>(in_flight_.contains(uid));
  };
  auto misplaced = [&](std::string_view uid, PodLocation held) -> std::string {
    if (const int n = holders(uid); n != 1) {
      return "pod " + std::string(uid) + " is held in " + std::to_string(n) + " sub-queues";
    }
    const PodLocation located = LocationLocked(uid);
    return located == held ? std::string() : Mismatch(uid, held, located);
  };

  if (std::string err = active_.Check("activeQ"); !err.empty()) return err;
  if (std::string err = backoff_.Check("backoffQ"); !err.empty()) return err;

  for (const auto& e : active_.entries()) {
    if (!e->info.pod) return "activeQ holds an entry without a pod";
    if (std::string err = misplaced(e->uid(), PodLocation::kActive); !err.empty()) return err;
    if (e->info.gated) return "pod " + std::string(e->uid()) + " is gated but in activeQ";
    if (!e->info.initial_attempt_set) {
      return "pod " + std::string(e->uid()) + " is in activeQ without an initial attempt timestamp";
    }
  }
  for (const auto& e : backoff_.entries()) {
    if (!e->info.pod) return "backoffQ holds an entry without a pod";
    if (std::string err = misplaced(e->uid(), PodLocation::kBackoff); !err.empty()) return err;
    if (e->info.gated) return "pod " + std::string(e->uid()) + " is gated but in backoffQ";
    if (e->info.attempts < 1)
      return "pod " + std::string(e->uid()) + " is in backoffQ but was never tried";
  }
  size_t gated = 0;
  std::map<Rejectors, size_t, RejectorsLess> rejectors;
  for (const auto& e : unschedulable_) {
    if (!e || !e->info.pod) return "the unschedulable pods hold an entry without a pod";
    const PodLocation held = e->info.gated ? PodLocation::kGated : PodLocation::kUnschedulable;
    if (std::string err = misplaced(e->uid(), held); !err.empty()) return err;
    if (e->info.gated) ++gated;
    ++rejectors[Rejectors{std::string(e->info.pod->scheduler_name()), e->info.unschedulable_plugins,
                          e->info.pending_plugins}];
  }
  if (gated != gated_) {
    return "gated count is " + std::to_string(gated_) + " but " + std::to_string(gated) +
           " pods are gated";
  }
  const auto same_group_and_count = [](const auto& a, const auto& b) {
    const RejectorsView x = RejectorsLess::View(a.first);
    const RejectorsView y = RejectorsLess::View(b.first);
    return !RejectorsLess::Less(x, y) && !RejectorsLess::Less(y, x) && a.second == b.second;
  };
  if (!std::equal(rejectors.begin(), rejectors.end(), rejectors_.begin(), rejectors_.end(),
                  same_group_and_count)) {
    return "the unschedulable pods' count by rejecting plugins (" +
           std::to_string(rejectors_.size()) + " groups) disagrees with the pods (" +
           std::to_string(rejectors.size()) + " groups)";
  }
  std::multiset<uint64_t> starts;
  for (const auto& [uid, f] : in_flight_) {
    if (!f.entry || !f.entry->info.pod)
      return "in-flight pod " + std::string(uid) + " has no entry";
    if (uid.data() != f.entry->uid().data()) {
      return "in-flight pod " + std::string(f.entry->uid()) + " is filed under another pod's uid";
    }
    if (std::string err = misplaced(uid, PodLocation::kInFlight); !err.empty()) return err;
    if (f.entry->info.attempts < 1) {
      return "in-flight pod " + std::string(uid) + " has no attempt counted";
    }
    starts.insert(f.start_seq);
  }
  if (starts != flight_starts_) return "in-flight start sequence numbers disagree with the pods";

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
