// NodePool: an example schedhost plugin, built out of tree against the installed SDK.
//
// Nodes belong to pools through one label (`example.com/pool` unless configured). A pod that
// carries the same label asks for its pool: Filter keeps it off every node of another pool or of
// none. A pod without the label is steered away from pool nodes by Score, so pools stay free for
// the pods that need them.
//
// With `max_pods` set, a pool holds at most that many pods that asked for it: a cross-node rule.
// A NodePool object (example.com/v1, cluster-scoped, named after the pool: an API kind of the
// plugin's own, which the host mirrors because the plugin declares it) sets its pool's limit in
// spec.maxPods instead; a change of it wakes the pods of its pool.
// PreFilter walks the snapshot once and counts them into CycleState, Filter reads the count, and
// AddPod/RemovePod keep it right when the host asks "what if this pod were there / were gone"
// (nominated pods of higher priority, preemption's victims).
//
//   [profile.plugins.multi_point]
//   enabled = [{ name = "NodePool", weight = 5 }]
//   [profile.plugin_config.NodePool]
//   label = "example.com/pool"
//   max_pods = 10          # optional; 0 or absent: no limit
#pragma once

#include <array>
#include <cstdint>
#include <schedhost/plugin.hpp>
#include <span>
#include <string>
#include <string_view>

namespace example {

/// NodePool filters pods into their node pool and scores pool-less pods away from pools.
class NodePool final : public schedhost::Plugin,
                       public schedhost::PreFilterPlugin,
                       public schedhost::PreFilterExtensions,
                       public schedhost::FilterPlugin,
                       public schedhost::ScorePlugin,
                       public schedhost::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NodePool";
  static constexpr std::string_view kVersion = "1.0.0";
  /// kDefaultLabel is the pool label when plugin_config.NodePool.label is not set.
  static constexpr std::string_view kDefaultLabel = "example.com/pool";
  /// kReasonPrefix starts the reason for a node outside the pod's pool ("... gpu").
  static constexpr std::string_view kReasonPrefix = "node(s) not in pool ";
  /// kFullPrefix starts the reason for a pool that holds max_pods pods already ("... gpu").
  static constexpr std::string_view kFullPrefix = "node pool is full: ";
  /// kStateKey names the CycleState entry PreFilter writes.
  static constexpr std::string_view kStateKey = "example.com/NodePool";
  /// kKinds declares the API kind NodePool reads: NodePool objects, one per pool, whose
  /// spec.maxPods overrides max_pods for that pool. Index 0 names it in GetObject.
  static constexpr std::array<schedhost::Kind, 1> kKinds = {
      {{"example.com", "v1", "nodepools", "NodePool", /*namespaced=*/false}}};

  /// NodePool reads `label` (a qualified label name) and `max_pods` (>= 0); any other key
  /// throws ArgsError.
  NodePool(const schedhost::Host& host, const schedhost::Args& args);

  /// PreFilter reads the pool's limit (its NodePool object's spec.maxPods, else max_pods) and,
  /// when there is one, counts the pods on that pool's nodes that asked for it too, and stores
  /// the count. A NodePool that does not decode, or a host that cannot see NodePools, leaves
  /// the pod pending saying why (UnschedulableAndUnresolvable): no limit is guessed. A pod without the label gets Skip
  /// (the host then skips this plugin's Filter, AddPod and RemovePod for it).
  schedhost::Status PreFilter(schedhost::CycleState& state, const schedhost::Pod& pod,
                              schedhost::PreFilterResult& result) override;
  /// AddPod and RemovePod adjust the count in the cycle's copy of the state when `to_add` /
  /// `to_remove` asked for the pod's pool and `ni` is one of its nodes.
  schedhost::Status AddPod(schedhost::CycleState& state, const schedhost::Pod& pod,
                           const schedhost::Pod& to_add, const schedhost::NodeInfo& ni) override;
  schedhost::Status RemovePod(schedhost::CycleState& state, const schedhost::Pod& pod,
                              const schedhost::Pod& to_remove,
                              const schedhost::NodeInfo& ni) override;

  /// Filter passes every node for a pod without the label, else only nodes whose label value
  /// equals the pod's (UnschedulableAndUnresolvable otherwise: preemption cannot help), and
  /// none while PreFilter's count says the pool is full (Unschedulable: evicting a pod of the
  /// pool can make room).
  schedhost::Status Filter(const schedhost::CycleState& state, const schedhost::Pod& pod,
                           const schedhost::NodeInfo& ni) override;

  /// Score gives a pod without the label 100 on nodes outside every pool and 0 on pool nodes;
  /// a pod with the label scores 100 everywhere (Filter already chose its pool).
  schedhost::Status Score(const schedhost::CycleState& state, const schedhost::Pod& pod,
                          const schedhost::NodeInfo& ni, int64_t& score) override;

  /// EventsToRegister: a pod rejected here may fit after a node of its pool is added or
  /// relabelled into it, after a pod of its pool is deleted, or after its pool's NodePool
  /// object changes; the queueing hints (OnNodeChange, OnPodDelete, OnNodePoolChange) tell
  /// those events from the others.
  std::span<const schedhost_event_registration> EventsToRegister() override;

  /// label is the configured pool label key.
  const std::string& label() const { return label_; }

 private:
  // PoolState is what PreFilter counted: copyable, so the host can clone it for AddPod/RemovePod.
  struct PoolState {
    schedhost::Id pool = SCHEDHOST_ID_EMPTY;  // the pod's pool label value
    int64_t limit = 0;                        // the pool's limit (> 0)
    int64_t pods = 0;                         // pods on the pool's nodes that asked for it
  };
  schedhost::QueueingHint OnNodeChange(const schedhost::Pod& pod,
                                       const schedhost_cluster_event& event,
                                       const schedhost::EventObject& old_obj,
                                       const schedhost::EventObject& new_obj) const;
  schedhost::QueueingHint OnPodDelete(const schedhost::Pod& pod,
                                      const schedhost_cluster_event& event,
                                      const schedhost::EventObject& old_obj,
                                      const schedhost::EventObject& new_obj) const;
  schedhost::QueueingHint OnNodePoolChange(const schedhost::Pod& pod,
                                           const schedhost_cluster_event& event,
                                           const schedhost::EventObject& old_obj,
                                           const schedhost::EventObject& new_obj) const;
  // InPool tells whether `pod` asked for `pool` and `ni` belongs to it.
  bool InPool(const schedhost::Pod& pod, const schedhost::NodeInfo& ni, schedhost::Id pool) const;

  std::string label_;
  int64_t max_pods_ = 0;  // 0: no limit
  schedhost::Id label_id_ = SCHEDHOST_ID_EMPTY;  // interned once; Filter and Score only read it
  schedhost::Id state_key_ = SCHEDHOST_ID_EMPTY;
};

}  // namespace example
