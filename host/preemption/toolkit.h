// Toolkit: the host's ClusterAccess — PDBs and PriorityClasses from the store, eviction and
// nomination through the store and the queue's nominator, and upstream's Preempt (eligibility,
// candidate search, choice, then evict the victims or reject them at Permit, clear the
// nominations of lower-priority pods on the chosen node and nominate the preemptor).
//
//   preemption::Toolkit toolkit(store, queue.nominator(), {.seed = 1, .reject_waiting = ...});
//   framework.SetClusterAccess(&toolkit);
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <random>
#include <string_view>

#include "host/framework/cluster_access.h"
#include "host/preemption/preemption.h"
#include "host/queue/nominator.h"
#include "host/store/cluster_writer.h"
#include "host/store/store.h"

namespace schedhost::preemption {

/// ToolkitOptions connect the toolkit to the rest of the host.
struct ToolkitOptions {
  /// seed seeds the random offset of the candidate search (reproducible simulations).
  uint64_t seed = 0;
  /// reject_waiting rejects the pod with `uid` if it waits at Permit in some profile; returns
  /// whether it did. Null: no pod is ever waiting.
  std::function<bool(std::string_view uid, std::string_view plugin, std::string_view message)>
      reject_waiting;
  /// on_evicted is told about every pod deleted by EvictPod, with its preemptor (may be null).
  std::function<void(const model::Pod& victim, const model::Pod* preemptor)> on_evicted;
  /// writer evicts and nominates (not owned; must outlive the toolkit). Null: the store itself.
  store::ClusterWriter* writer = nullptr;
  /// dry_run makes the toolkit decide without acting (a shadow profile's): Preempt finds and
  /// chooses the candidate and says where it would nominate the pod, while EvictPod and
  /// SetNominatedNode succeed without writing, rejecting or nominating anything, and no
  /// preemption metric counts it.
  bool dry_run = false;
};

/// Toolkit is thread-safe.
class Toolkit final : public framework::ClusterAccess {
 public:
  /// Toolkit reads and writes `store` and `nominator` (not owned; both must outlive it).
  Toolkit(store::Store& store, queue::Nominator& nominator, ToolkitOptions options);

  std::vector<framework::PdbState> ListPdbs() const override;
  std::shared_ptr<const model::PriorityClass> GetPriorityClass(
      std::string_view name) const override;
  framework::Status EvictPod(std::string_view plugin, const schedhost_pod_view* victim,
                             const schedhost_pod_view* preemptor, std::string_view reason) override;
  framework::Status SetNominatedNode(const schedhost_pod_view* pod, std::string_view node) override;
  framework::PreemptOutcome Preempt(std::string_view plugin, framework::Framework& fw,
                                    framework::CycleState& state, const schedhost_pod_view* pod,
                                    const NodeStatuses& statuses,
                                    const schedhost_preemption_callbacks* callbacks) override;
  framework::Status FindCandidates(framework::Framework& fw, framework::CycleState& state,
                                   const schedhost_pod_view* pod, const NodeStatuses& statuses,
                                   const schedhost_preemption_callbacks* callbacks,
                                   int32_t (*fn)(void* user, const schedhost_candidate* c),
                                   void* user) override;

 private:
  uint64_t RandomOffset(uint64_t n);
  // TerminatingVictimOnNominatedNode is upstream's last eligibility rule: a pod nominated to a
  // node where a lower-priority victim of preemption is still terminating waits for it instead
  // of preempting again; returns why not eligible, or "".
  static std::string TerminatingVictimOnNominatedNode(const framework::Framework& fw,
                                                      const schedhost_pod_view* pod,
                                                      const NodeStatuses& statuses,
                                                      const Rules& rules);

  store::Store& store_;
  queue::Nominator& nominator_;
  ToolkitOptions options_;
  store::StoreWriter store_writer_;
  store::ClusterWriter& writer_;
  std::mutex rng_mu_;
  std::mt19937_64 rng_;
};

}  // namespace schedhost::preemption
