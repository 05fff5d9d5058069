// ClusterAccess: what the host function table needs beyond one profile's framework — cluster
// objects (PDBs, PriorityClasses), cluster actions (evict, nominate) and the preemption toolkit.
//
// The framework only declares it; host/preemption implements it over the store and the queue's
// nominator, and the scheduler installs one per framework (Framework::SetClusterAccess). Without
// one, the table's entries answer SCHEDHOST_E_NOT_AVAILABLE.
#pragma once

#include <schedhost/plugin.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "host/framework/status.h"
#include "host/model/pdb.h"
#include "host/model/priority_class.h"

namespace schedhost::framework {

class CycleState;
class Framework;

/// PdbState is a PDB with the number of disruptions it allows now (status.disruptionsAllowed
/// when the object carries it, else computed from its spec and the pods it selects).
struct PdbState {
  std::shared_ptr<const model::PodDisruptionBudget> pdb;
  int32_t disruptions_allowed = 0;
};

/// PreemptOutcome is what the toolkit's Preempt decided: the PostFilter status (reasons
/// included) and the node the preemptor is nominated to ("" for none).
struct PreemptOutcome {
  Status status;
  std::string nominated_node;
};

/// ClusterAccess is thread-safe; every method may be called from plugin code on any thread.
class ClusterAccess {
 public:
  virtual ~ClusterAccess() = default;

  /// ListPdbs returns every PDB with its allowed disruptions.
  virtual std::vector<PdbState> ListPdbs() const = 0;
  /// GetPriorityClass returns the PriorityClass `name`, or nullptr.
  virtual std::shared_ptr<const model::PriorityClass> GetPriorityClass(
      std::string_view name) const = 0;
  /// EvictPod deletes `victim` on behalf of `preemptor` (a victim waiting at Permit in any
  /// profile is rejected instead); fails when the victim is gone or changed.
  /// `plugin` names the caller (the rejecting plugin of a waiting victim).
  virtual Status EvictPod(std::string_view plugin, const schedhost_pod_view* victim,
                          const schedhost_pod_view* preemptor, std::string_view reason) = 0;
  /// SetNominatedNode writes status.nominatedNodeName of `pod` ("" clears it) to the cluster
  /// and to the nominator.
  virtual Status SetNominatedNode(const schedhost_pod_view* pod, std::string_view node) = 0;
  /// Preempt runs upstream's preemption for `pod` (PostFilter) with `callbacks` (may be NULL).
  virtual PreemptOutcome Preempt(std::string_view plugin, Framework& fw, CycleState& state,
                                 const schedhost_pod_view* pod, const NodeStatuses& statuses,
                                 const schedhost_preemption_callbacks* callbacks) = 0;
  /// FindCandidates runs the dry run only and calls `fn` per candidate until it returns non-zero.
  virtual Status FindCandidates(Framework& fw, CycleState& state, const schedhost_pod_view* pod,
                                const NodeStatuses& statuses,
                                const schedhost_preemption_callbacks* callbacks,
                                int32_t (*fn)(void* user, const schedhost_candidate* c),
                                void* user) = 0;
};

}  // namespace schedhost::framework
