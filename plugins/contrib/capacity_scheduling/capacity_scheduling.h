// CapacityScheduling: elastic quotas per namespace after kubernetes-sigs/scheduler-plugins,
// built only on the SDK. A namespace's quota is its ElasticQuota object
// (scheduling.x-k8s.io/v1alpha1, a kind the plugin declares): a guaranteed `spec.min` and a
// ceiling `spec.max` per resource. PreFilter (and Filter, for preemption's dry runs) refuses a
// pod that would take its namespace over max, or beyond its min while the cluster's total min
// is used up. PostFilter preempts through the host's toolkit: a namespace within its min
// reclaims from namespaces that borrow beyond theirs; otherwise a pod only preempts
// lower-priority pods of its own namespace. A changed ElasticQuota applies from the next
// cycle; the plugin takes no arguments.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <schedhost/plugin.hpp>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "quota.h"

namespace schedhost::contrib {

/// ParseCapacitySchedulingArgs checks plugin_config.CapacityScheduling: it takes no
/// arguments, and the inline quotas and quota file of earlier releases are refused saying
/// where quotas come from now; throws ArgsError naming the key.
void ParseCapacitySchedulingArgs(const Args& args);

/// DecodeElasticQuota reads `object`, an ElasticQuota as Host::ListObjects returns it, as the
/// quota of `namespace_name`; throws ArgsError naming the object and the field ("ElasticQuota
/// team-a/quota: spec.max.cpu: \"lots\" is not a quantity"). A min above max is refused.
capacity::QuotaSpec DecodeElasticQuota(const Args& object, std::string_view namespace_name);

/// CapacityScheduling is the elastic-quota plugin.
class CapacityScheduling final : public Plugin,
                                 public PreFilterPlugin,
                                 public PreFilterExtensions,
                                 public FilterPlugin,
                                 public PostFilterPlugin,
                                 public ReservePlugin,
                                 public PostBindPlugin {
 public:
  static constexpr std::string_view kName = "CapacityScheduling";
  static constexpr std::string_view kVersion = "2.0.0";
  /// kKinds: the ElasticQuota kind, index 0.
  static constexpr std::array<Kind, 1> kKinds = {
      {{"scheduling.x-k8s.io", "v1alpha1", "elasticquotas", "ElasticQuota", true}}};

  /// CapacityScheduling validates its arguments (see ParseCapacitySchedulingArgs).
  CapacityScheduling(const Host& host, const Args& args);

  Status PreFilter(CycleState& state, const Pod& pod, PreFilterResult& result) override;
  Status AddPod(CycleState& state, const Pod& pod, const Pod& to_add, const NodeInfo& ni) override;
  Status RemovePod(CycleState& state, const Pod& pod, const Pod& to_remove,
                   const NodeInfo& ni) override;
  Status Filter(const CycleState& state, const Pod& pod, const NodeInfo& ni) override;
  Status PostFilter(CycleState& state, const Pod& pod, const NodeStatusMap& statuses,
                    std::string& nominated_node) override;
  Status Reserve(CycleState& state, const Pod& pod, std::string_view node) override;
  void Unreserve(CycleState& state, const Pod& pod, std::string_view node) override;
  void PostBind(CycleState& state, const Pod& pod, std::string_view node) override;

  /// Quotas is the ElasticQuotas of one moment, resolved over the host's interned names.
  struct Quotas {
    std::shared_ptr<const capacity::QuotaTable> table;
    /// invalid holds, by namespace, why its ElasticQuota cannot be used (it does not decode, or
    /// the namespace has more than one): the namespace's pods wait, saying so.
    std::map<std::string, std::string, std::less<>> invalid;
    /// unavailable says why the host cannot show ElasticQuotas at all ("" when it can): then
    /// every pod waits, since any namespace may have a quota the plugin cannot see.
    std::string unavailable;
  };
  /// QuotasOf returns the quotas of `state`'s cycle, decoded again only when an ElasticQuota
  /// changed since the last cycle.
  std::shared_ptr<const Quotas> QuotasOf(const CycleState& state);

  /// QuotaState is one cycle's view of the quotas (cloned into each preemption dry run, where
  /// AddPod/RemovePod keep `used` in step with the pods added to or removed from the node).
  struct QuotaState {
    // The table the cycle started with: a changed ElasticQuota makes a new table, never
    // changes this one, so `quota` and `used` keep meaning the same quotas for the whole cycle.
    std::shared_ptr<const capacity::QuotaTable> table;
    int64_t quota = -1;  // the pod's quota, -1: its namespace has none
    capacity::Amounts request;
    capacity::Usage used;
  };

 private:
  // Snapshot computes the usage of every quota: pods of the snapshot (bound and assumed) plus
  // pods reserved but not in it yet, and the pod's own quota and request.
  QuotaState Snapshot(const Pod& pod, std::shared_ptr<const capacity::QuotaTable> table);
  // Update adds (sign 1) or removes (sign -1) `other`'s requests in `state`, if it has a quota.
  void Update(CycleState& state, const Pod& other, int sign) const;
  static int32_t EligibleVictim(void* user, const schedhost_pod_view* preemptor,
                                const schedhost_pod_view* victim) noexcept;

  // NodeUsage is what one node's pods use per quota, as of a node-info generation.
  struct NodeUsage {
    uint64_t generation = 0;
    uint64_t seen_in = 0;  // the Snapshot call that last saw the node
    capacity::Usage used;
    std::unordered_set<std::string> uids;  // pods of quota namespaces
  };

  Id state_key_ = 0;
  // The quotas last decoded, and the ElasticQuotas they were decoded from ("ns/name@version"
  // each, in list order): a cycle that lists the same reuses them.
  std::mutex quotas_mu_;
  std::shared_ptr<const Quotas> quotas_;
  std::vector<std::string> quotas_from_;
  // Per-node usage cached by generation (the host bumps it on every change of a node info), so
  // a cycle re-sums only the nodes that changed since the last one.
  std::mutex nodes_mu_;
  std::map<std::string, NodeUsage, std::less<>> nodes_;
  std::shared_ptr<const capacity::QuotaTable> nodes_table_;  // the table nodes_ was summed for
  uint64_t snapshots_ = 0;
  capacity::ReservedPods reserved_;   // between Reserve and PostBind/Unreserve
  capacity::ReservedPods nominated_;  // nominated by this plugin's preemption, not reserved yet
};

}  // namespace schedhost::contrib
