// Preemption toolkit (upstream's DefaultPreemption and framework/preemption Evaluator): which
// pods may preempt, which nodes might help, the dry run that picks victims per node, the bounded
// candidate search and the choice between candidates. Plugin callbacks
// (schedhost_preemption_callbacks) may replace the eligibility rules and the candidate order.
// Acting on the choice (evicting, nominating) is in toolkit.h.
//
//   Rules rules(callbacks);                      // NULL: upstream's defaults
//   auto found = FindCandidates(fw, state, pod, statuses, pdbs, rules, offset_fn);
//   const Candidate* best = SelectCandidate(found.candidates, rules);
#pragma once

#include <schedhost/plugin.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "host/cache/node_info.h"
#include "host/framework/cluster_access.h"
#include "host/framework/cycle_state.h"
#include "host/framework/framework.h"
#include "host/framework/status.h"
#include "host/model/pdb.h"
#include "host/model/pod.h"

namespace schedhost::preemption {

using PodPtr = std::shared_ptr<const model::Pod>;
using NodeStatuses = framework::NodeStatuses;

/// Upstream's defaults for the bounded candidate search.
inline constexpr int32_t kDefaultMinCandidateNodesPercentage = 10;
inline constexpr int32_t kDefaultMinCandidateNodesAbsolute = 100;

/// Candidate is a node where preemption would make the pod fit, with the victims to evict there
/// (most important first) and how many of them a PDB protects.
struct Candidate {
  std::string node;
  std::vector<PodPtr> victims;
  int32_t num_pdb_violations = 0;
};

/// Rules are the eligibility rules and candidate order, upstream's unless callbacks replace
/// them; they also carry the bounds of the candidate search.
class Rules {
 public:
  /// Rules copies the callbacks (NULL or a struct of any size: missing entries use defaults).
  explicit Rules(const schedhost_preemption_callbacks* callbacks = nullptr);

  /// PodEligible returns "" when `pod` may preempt, else why not (upstream's wording).
  std::string PodEligible(const schedhost_pod_view* pod) const;
  /// custom_eligibility is true when a plugin decides PodEligible (the host's terminating-victim
  /// check then stays out of its way).
  bool custom_eligibility() const { return cb_.pod_eligible != nullptr; }
  /// IsEligibleVictim tells whether `victim` may be evicted for `preemptor` (default: lower
  /// priority).
  bool IsEligibleVictim(const schedhost_pod_view* preemptor,
                        const schedhost_pod_view* victim) const;
  /// Less tells whether candidate `a` is better than `b` (default: DefaultCandidateLess).
  bool Less(const Candidate& a, const Candidate& b) const;
  /// NumCandidates is how many candidates to look for among `num_nodes` potential nodes.
  int32_t NumCandidates(int32_t num_nodes) const;

  int32_t min_candidate_nodes_percentage() const { return percentage_; }
  int32_t min_candidate_nodes_absolute() const { return absolute_; }

 private:
  schedhost_preemption_callbacks cb_{};
  int32_t percentage_ = kDefaultMinCandidateNodesPercentage;
  int32_t absolute_ = kDefaultMinCandidateNodesAbsolute;
};

/// NumCandidates is upstream's calculateNumCandidates: max(num_nodes * percentage / 100,
/// absolute), capped at num_nodes.
int32_t NumCandidates(int32_t num_nodes, int32_t percentage, int32_t absolute);

/// MoreImportantPod orders pods by priority, then by start time (earlier is more important).
/// Start time is the creation timestamp: schedhost does not model status.startTime.
bool MoreImportantPod(const model::Pod& a, const model::Pod& b);

/// PdbAllowsSelecting tells whether `pdb` counts `pod` (same namespace, non-empty selector
/// matching the pod's labels) — upstream's rule during preemption.
bool PdbSelects(const model::PodDisruptionBudget& pdb, const model::Pod& pod);

/// DisruptionsAllowed is status.disruptionsAllowed when the PDB carries it, else what the
/// disruption controller would compute: the bound pods the PDB selects minus the desired
/// healthy count from minAvailable / maxUnavailable (integers or percentages of the selected
/// pods, rounded up), never below 0. `pods` are all pods of the cluster.
int32_t DisruptionsAllowed(const model::PodDisruptionBudget& pdb, const std::vector<PodPtr>& pods);

/// SplitByPdbViolation splits `pods` (order kept) into those whose eviction would violate a
/// PDB and the others, consuming each PDB's allowance in order as upstream does.
std::pair<std::vector<PodPtr>, std::vector<PodPtr>> SplitByPdbViolation(
    const std::vector<PodPtr>& pods, const std::vector<framework::PdbState>& pdbs);

/// SelectVictimsOnNode is upstream's dry run on one node: on `ni` (a copy, modified), with its
/// own clone of `state` when a PreFilter extension is active, it removes every eligible victim,
/// checks that `pod` then fits
/// with the filter plugins and nominated pods, and reprieves PDB-violating victims first, then
/// the others, each most important first. Returns the candidate, or the status saying why the
/// node does not help.
std::pair<std::optional<Candidate>, framework::Status> SelectVictimsOnNode(
    framework::Framework& fw, const framework::CycleState& state, const schedhost_pod_view* pod,
    cache::NodeInfo& ni, const std::vector<framework::PdbState>& pdbs, const Rules& rules);

/// SearchResult is FindCandidates' outcome: candidates (non-violating first, then violating,
/// each in search order) and the status of every node that did not become one.
struct SearchResult {
  std::vector<Candidate> candidates;
  NodeStatuses node_statuses;
  framework::Status error;  // the first Error a dry run met
};

/// FindCandidates runs the dry runs on the nodes where preemption might help (nodes whose
/// Filter status is not UnschedulableAndUnresolvable), in parallel from `offset` (taken modulo
/// their number), until enough candidates were found (at least one non-violating); the answer
/// is that of a search in order, whatever the timing of the threads.
SearchResult FindCandidates(framework::Framework& fw, const framework::CycleState& state,
                            const schedhost_pod_view* pod, const NodeStatuses& statuses,
                            const std::vector<framework::PdbState>& pdbs, const Rules& rules,
                            const std::function<uint64_t(uint64_t n)>& random_offset);

/// DefaultCandidateLess is upstream's pickOneNodeForPreemption order: fewer PDB violations,
/// lower highest victim priority, lower sum of priorities, fewer victims, later start time of
/// the highest-priority victims.
bool DefaultCandidateLess(const Candidate& a, const Candidate& b);

/// SelectCandidate returns the best candidate by `rules` (the first among equals), or nullptr.
const Candidate* SelectCandidate(const std::vector<Candidate>& candidates, const Rules& rules);

/// CandidateView is an ABI view of a candidate; valid while it and the candidate live.
class CandidateView {
 public:
  explicit CandidateView(const Candidate& c);
  const schedhost_candidate* get() const { return &view_; }

 private:
  std::vector<const schedhost_pod_view*> victims_;
  schedhost_candidate view_{};
};

}  // namespace schedhost::preemption
