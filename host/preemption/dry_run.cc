// The preemption dry run: victims per node on node-info copies with cloned cycle states, and
// the bounded, parallel candidate search from a random offset (upstream's DryRunPreemption).
#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_set>

#include "host/cache/snapshot.h"
#include "host/preemption/preemption.h"

namespace schedhost::preemption {

using framework::Code;
using framework::Status;

std::pair<std::optional<Candidate>, Status> SelectVictimsOnNode(
    framework::Framework& fw, const framework::CycleState& cycle_state,
    const schedhost_pod_view* pod, cache::NodeInfo& ni,
    const std::vector<framework::PdbState>& pdbs, const Rules& rules) {
  // The dry run's own state, when a PreFilter extension will change it; else the cycle's, read.
  std::unique_ptr<framework::CycleState> own =
      fw.PreFilterExtensionsActive(cycle_state) ? cycle_state.Clone() : nullptr;
  const framework::CycleState& state = own ? *own : cycle_state;
  auto remove = [&](const PodPtr& p) {
    ni.RemovePod(*p);
    return own ? fw.RunPreFilterExtensionRemovePod(*own, pod, p->view(), ni.view())
               : Status::Success();
  };
  auto add = [&](const PodPtr& p) {
    ni.AddPod(p);
    return own ? fw.RunPreFilterExtensionAddPod(*own, pod, p->view(), ni.view())
               : Status::Success();
  };
  // First remove every pod the preemptor may evict and check that the pod then fits.
  std::vector<PodPtr> potential;
  for (const PodPtr& p : ni.pods()) {
    if (rules.IsEligibleVictim(pod, p->view())) potential.push_back(p);
  }
  if (potential.empty()) {
    return {std::nullopt, Status::Make(Code::kUnschedulableAndUnresolvable,
                                       "No preemption victims found for incoming pod")};
  }
  if (own) {
    for (const PodPtr& p : potential) {
      if (Status s = remove(p); !s.ok()) return {std::nullopt, s};
    }
  } else {
    ni.RemovePods(potential);  // no extension to tell after each one: one recompute
  }
  if (Status s = fw.RunFilterPluginsWithNominatedPods(state, pod, ni.view()); !s.ok()) {
    // Upstream does not try to find out whether affinity to a victim is the cause.
    return {std::nullopt, s};
  }
  // Then add back as many as possible: PDB-protected victims first, most important first.
  std::stable_sort(potential.begin(), potential.end(),
                   [](const PodPtr& a, const PodPtr& b) { return MoreImportantPod(*a, *b); });
  auto [violating, non_violating] = SplitByPdbViolation(potential, pdbs);
  Candidate c;
  c.node = ni.node()->name();
  auto reprieve = [&](const PodPtr& p, bool* fits) {
    if (Status s = add(p); !s.ok()) return s;
    *fits = fw.RunFilterPluginsWithNominatedPods(state, pod, ni.view()).ok();
    if (*fits) return Status::Success();
    c.victims.push_back(p);
    return remove(p);
  };
  for (const PodPtr& p : violating) {
    bool fits = false;
    if (Status s = reprieve(p, &fits); !s.ok()) return {std::nullopt, s};
    if (!fits) ++c.num_pdb_violations;
  }
  for (const PodPtr& p : non_violating) {
    bool fits = false;
    if (Status s = reprieve(p, &fits); !s.ok()) return {std::nullopt, s};
  }
  // Victims are reported most important first (the two passes interleave priorities).
  if (!violating.empty() && !non_violating.empty()) {
    std::stable_sort(c.victims.begin(), c.victims.end(),
                     [](const PodPtr& a, const PodPtr& b) { return MoreImportantPod(*a, *b); });
  }
  if (c.victims.empty()) {
    return {std::nullopt, Status::Error("expected at least one victim pod on node " + c.node)};
  }
  return {std::move(c), Status::Success()};
}

SearchResult FindCandidates(framework::Framework& fw, const framework::CycleState& state,
                            const schedhost_pod_view* pod, const NodeStatuses& statuses,
                            const std::vector<framework::PdbState>& pdbs, const Rules& rules,
                            const std::function<uint64_t(uint64_t n)>& random_offset) {
  SearchResult out;
  const cache::Snapshot* snap = fw.snapshot();
  if (snap == nullptr) {
    out.error = Status::Error("preemption: no snapshot");
    return out;
  }
  // Nodes where preemption might help: every node whose Filter failure is resolvable. Only the
  // unresolvable ones need looking up (often none), so only they are hashed.
  std::unordered_set<std::string_view> unresolvable_names;
  for (const auto& [name, s] : statuses) {
    if (s.code == Code::kUnschedulableAndUnresolvable) unresolvable_names.insert(name);
  }
  std::vector<const cache::NodeInfo*> potential;
  potential.reserve(snap->size());
  NodeStatuses unresolvable;
  for (size_t i = 0; i < snap->size(); ++i) {
    const cache::NodeInfo& ni = snap->at(i);
    if (!unresolvable_names.empty() && unresolvable_names.count(ni.node()->name()) != 0) {
      unresolvable.emplace_back(ni.node()->name(),
                                Status::Make(Code::kUnschedulableAndUnresolvable,
                                             "Preemption is not helpful for scheduling"));
    } else {
      potential.push_back(&ni);
    }
  }
  if (potential.empty()) {
    out.node_statuses = std::move(unresolvable);
    return out;
  }
  const size_t n = potential.size();
  const size_t offset = random_offset ? static_cast<size_t>(random_offset(n) % n) : 0;
  const auto wanted = static_cast<size_t>(rules.NumCandidates(static_cast<int32_t>(n)));

  // Each dry run fills its own slot, so the workers share nothing but the stop flag.
  struct Slot {
    bool done = false;
    std::optional<Candidate> candidate;
    Status status;
  };
  std::vector<Slot> slots(n);
  auto dry_run = [&](size_t i) {
    cache::ScratchCopy copy(*potential[(offset + i) % n]);
    auto [cand, status] = SelectVictimsOnNode(fw, state, pod, *copy, pdbs, rules);
    slots[i].candidate = std::move(cand);
    slots[i].status = std::move(status);
    slots[i].done = true;
  };
  std::mutex mu;
  size_t found = 0;
  size_t found_non_violating = 0;
  std::atomic<bool> stop{false};
  fw.parallelizer().Until(
      n,
      [&](size_t i) {
        dry_run(i);
        if (!slots[i].candidate) return;
        std::lock_guard lock(mu);
        ++found;
        if (slots[i].candidate->num_pdb_violations == 0) ++found_non_violating;
        // Upstream stops once enough were found and at least one violates no PDB.
        if (found_non_violating > 0 && found >= wanted) stop.store(true);
      },
      &stop);
  // Which dry runs finished before the stop depends on thread timing. Keep the answer of a
  // search in order instead: walk the slots from the offset, run any a worker skipped, and end
  // where a sequential search would have stopped — the same input gives the same candidates.
  size_t nv = 0;
  size_t total = 0;
  size_t end = n;
  for (size_t i = 0; i < n; ++i) {
    if (!slots[i].done) dry_run(i);
    if (slots[i].candidate) {
      ++total;
      if (slots[i].candidate->num_pdb_violations == 0) ++nv;
      if (nv > 0 && total >= wanted) {
        end = i + 1;
        break;
      }
    }
  }
  std::vector<Candidate> violating;
  for (size_t i = 0; i < end; ++i) {
    Slot& slot = slots[i];
    if (slot.candidate) {
      if (slot.candidate->num_pdb_violations == 0) {
        out.candidates.push_back(std::move(*slot.candidate));
      } else {
        violating.push_back(std::move(*slot.candidate));
      }
      continue;
    }
    if (slot.status.code == Code::kError && out.error.ok()) out.error = slot.status;
    out.node_statuses.emplace_back(potential[(offset + i) % n]->node()->name(),
                                   std::move(slot.status));
  }
  // Non-violating candidates first, then violating ones, each in search order.
  for (Candidate& c : violating) out.candidates.push_back(std::move(c));
  for (auto& u : unresolvable) out.node_statuses.push_back(std::move(u));
  return out;
}

}  // namespace schedhost::preemption
