// Eligibility rules, PDB accounting and the candidate order of the preemption toolkit.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "host/framework/selectors.h"
#include "host/preemption/preemption.h"

namespace schedhost::preemption {

Rules::Rules(const schedhost_preemption_callbacks* callbacks) {
  if (callbacks == nullptr) return;
  // ABI rule 5: copy what both sides know, zero the rest.
  const size_t n = std::min(callbacks->struct_size, sizeof(cb_));
  std::memcpy(&cb_, callbacks, n);
  cb_.struct_size = sizeof(cb_);
  if (n < sizeof(cb_)) {
    std::memset(reinterpret_cast<char*>(&cb_) + n, 0, sizeof(cb_) - n);
  }
  if (cb_.min_candidate_nodes_percentage != 0 || cb_.min_candidate_nodes_absolute != 0) {
    percentage_ = std::clamp(cb_.min_candidate_nodes_percentage, 0, 100);
    absolute_ = std::max(cb_.min_candidate_nodes_absolute, 0);
  }
}

std::string Rules::PodEligible(const schedhost_pod_view* pod) const {
  if (cb_.pod_eligible != nullptr) {
    return cb_.pod_eligible(cb_.user, pod) != 0 ? "" : "not eligible to preempt other pods.";
  }
  if (pod->preemption_policy == SCHEDHOST_PREEMPT_NEVER) {
    return "not eligible due to preemptionPolicy=Never.";
  }
  // Upstream also refuses a pod nominated to a node where a lower-priority victim is still
  // terminating; that needs the snapshot (Toolkit::Preempt, TerminatingVictimOnNominatedNode).
  return "";
}

bool Rules::IsEligibleVictim(const schedhost_pod_view* preemptor,
                             const schedhost_pod_view* victim) const {
  if (cb_.is_eligible_victim != nullptr)
    return cb_.is_eligible_victim(cb_.user, preemptor, victim) != 0;
  return victim->priority < preemptor->priority;
}

bool Rules::Less(const Candidate& a, const Candidate& b) const {
  if (cb_.candidate_less != nullptr) {
    CandidateView va(a);
    CandidateView vb(b);
    return cb_.candidate_less(cb_.user, va.get(), vb.get()) != 0;
  }
  return DefaultCandidateLess(a, b);
}

int32_t Rules::NumCandidates(int32_t num_nodes) const {
  return preemption::NumCandidates(num_nodes, percentage_, absolute_);
}

int32_t NumCandidates(int32_t num_nodes, int32_t percentage, int32_t absolute) {
  int64_t n = static_cast<int64_t>(num_nodes) * percentage / 100;
  n = std::max<int64_t>(n, absolute);
  return static_cast<int32_t>(std::min<int64_t>(n, num_nodes));
}

bool MoreImportantPod(const model::Pod& a, const model::Pod& b) {
  if (a.priority() != b.priority()) return a.priority() > b.priority();
  return a.creation_timestamp_ns() < b.creation_timestamp_ns();
}

bool PdbSelects(const model::PodDisruptionBudget& pdb, const model::Pod& pod) {
  if (pdb.namespace_name() != pod.namespace_name()) return false;
  const schedhost_label_selector* sel = pdb.view()->selector;
  // Upstream: a PDB with a nil or empty selector matches nothing during preemption.
  if (sel == nullptr || sel->len == 0) return false;
  return framework::LabelSelectorMatches(sel, pod.view()->labels);
}

namespace {

// Scaled resolves an int-or-percent against `total`, rounding percentages up (upstream's
// GetScaledValueFromIntOrPercent with roundUp). Validation has checked the format.
int64_t Scaled(const model::IntOrString& v, int64_t total) {
  if (!v.is_string) return v.int_value;
  std::string s = v.string_value;
  if (!s.empty() && s.back() == '%') s.pop_back();
  int64_t percent = 0;
  try {
    percent = std::stoll(s);
  } catch (...) {
    percent = 0;
  }
  return (percent * total + 99) / 100;
}

}  // namespace

int32_t DisruptionsAllowed(const model::PodDisruptionBudget& pdb, const std::vector<PodPtr>& pods) {
  const auto& d = pdb.data();
  if (d.status.has_disruptions_allowed) return d.status.disruptions_allowed;
  // Without controllers to ask for a scale, the expected count is the pods the PDB selects
  // and the healthy ones are those bound to a node (schedhost has no readiness).
  int64_t selected = 0;
  int64_t healthy = 0;
  for (const PodPtr& p : pods) {
    if (!PdbSelects(pdb, *p)) continue;
    ++selected;
    if (!p->node_name().empty()) ++healthy;
  }
  int64_t desired = 0;
  if (d.spec.max_unavailable) {
    desired = std::max<int64_t>(0, selected - Scaled(*d.spec.max_unavailable, selected));
  } else if (d.spec.min_available) {
    desired = Scaled(*d.spec.min_available, selected);
  }
  const int64_t allowed = std::max<int64_t>(0, healthy - desired);
  return static_cast<int32_t>(std::min<int64_t>(allowed, std::numeric_limits<int32_t>::max()));
}

std::pair<std::vector<PodPtr>, std::vector<PodPtr>> SplitByPdbViolation(
    const std::vector<PodPtr>& pods, const std::vector<framework::PdbState>& pdbs) {
  std::vector<int64_t> allowed;
  allowed.reserve(pdbs.size());
  for (const auto& p : pdbs) allowed.push_back(p.disruptions_allowed);
  std::pair<std::vector<PodPtr>, std::vector<PodPtr>> out;
  for (const PodPtr& pod : pods) {
    bool violated = false;
    if (pod->view()->labels.len != 0) {
      for (size_t i = 0; i < pdbs.size(); ++i) {
        if (!PdbSelects(*pdbs[i].pdb, *pod)) continue;
        if (--allowed[i] < 0) violated = true;
      }
    }
    (violated ? out.first : out.second).push_back(pod);
  }
  return out;
}

namespace {

// PrioritySum is upstream's: every victim counts MaxInt32 + priority + 1, so that negative
// priorities still add up to more with more victims.
int64_t PrioritySum(const Candidate& c) {
  int64_t sum = 0;
  for (const PodPtr& p : c.victims) {
    sum += static_cast<int64_t>(std::numeric_limits<int32_t>::max()) + p->priority() + 1;
  }
  return sum;
}

// EarliestStartOfHighest is the earliest start time among the victims of the highest priority.
int64_t EarliestStartOfHighest(const Candidate& c) {
  if (c.victims.empty()) return std::numeric_limits<int64_t>::max();
  int32_t highest = std::numeric_limits<int32_t>::min();
  for (const PodPtr& p : c.victims) highest = std::max(highest, p->priority());
  int64_t earliest = std::numeric_limits<int64_t>::max();
  for (const PodPtr& p : c.victims) {
    if (p->priority() == highest) {
      earliest = std::min(earliest, p->creation_timestamp_ns());
    }
  }
  return earliest;
}

int32_t HighestPriority(const Candidate& c) {
  int32_t highest = std::numeric_limits<int32_t>::min();
  for (const PodPtr& p : c.victims) highest = std::max(highest, p->priority());
  return highest;
}

}  // namespace

bool DefaultCandidateLess(const Candidate& a, const Candidate& b) {
  if (a.num_pdb_violations != b.num_pdb_violations) {
    return a.num_pdb_violations < b.num_pdb_violations;
  }
  if (const int32_t ha = HighestPriority(a), hb = HighestPriority(b); ha != hb) return ha < hb;
  if (const int64_t sa = PrioritySum(a), sb = PrioritySum(b); sa != sb) return sa < sb;
  if (a.victims.size() != b.victims.size()) return a.victims.size() < b.victims.size();
  return EarliestStartOfHighest(a) > EarliestStartOfHighest(b);
}

const Candidate* SelectCandidate(const std::vector<Candidate>& candidates, const Rules& rules) {
  const Candidate* best = nullptr;
  for (const Candidate& c : candidates) {
    if (best == nullptr || rules.Less(c, *best)) best = &c;
  }
  return best;
}

CandidateView::CandidateView(const Candidate& c) {
  victims_.reserve(c.victims.size());
  for (const PodPtr& p : c.victims) victims_.push_back(p->view());
  view_.struct_size = sizeof(view_);
  view_.node_name = schedhost_str{c.node.data(), c.node.size()};
  view_.victims = victims_.data();
  view_.victims_len = victims_.size();
  view_.num_pdb_violations = c.num_pdb_violations;
}

}  // namespace schedhost::preemption
