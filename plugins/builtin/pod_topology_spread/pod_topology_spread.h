// PodTopologySpread: spreads pods across topology domains (zones, hosts, any node label) as
// upstream kube-scheduler's podtopologyspread plugin does. DoNotSchedule constraints are a Filter
// on the skew (matches in the node's domain + self - global minimum <= maxSkew); ScheduleAnyway
// constraints rank nodes, fewer matching pods in the node's domains scoring higher. Pods without
// constraints of their own get the profile's default constraints (plugin_config).
//
//   [profile.plugin_config.PodTopologySpread]
//   defaulting_type = "List"
//   default_constraints = [{ max_skew = 1, topology_key = "topology.kubernetes.io/zone",
//                            when_unsatisfiable = "ScheduleAnyway" }]
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <schedhost/plugin.hpp>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace schedhost::plugins {

/// SpreadSelector picks the pods a constraint counts: a label selector (with the values of
/// matchLabelKeys ANDed in), Kubernetes' nil selector (matches nothing), or, for default
/// constraints, the pods sharing the incoming pod's controller (kind and name).
struct SpreadSelector {
  enum class Kind { kNothing, kLabels, kController };
  /// Requirement is one owned label requirement (matchLabels become In with one value).
  struct Requirement {
    Id key = 0;
    int32_t op = SCHEDHOST_OP_IN;
    std::vector<Id> values;
  };

  Kind kind = Kind::kNothing;
  std::vector<Requirement> requirements;  // kLabels
  std::string controller_kind;            // kController
  std::string controller_name;            // kController

  /// Empty is upstream's labels.Selector.Empty(): a label selector without requirements. Such a
  /// selector matches every pod but counts none on nodes (upstream's countPodsMatchSelector).
  bool Empty() const { return kind == Kind::kLabels && requirements.empty(); }
  /// Matches tells whether `pod` is selected (labels or controller; namespace not checked).
  bool Matches(const Pod& pod) const;
};

/// SpreadConstraint is one constraint of the pod (or a default one) with upstream's defaults
/// applied: minDomains 1, nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore.
struct SpreadConstraint {
  int32_t max_skew = 1;
  Id topology_key = 0;
  int32_t min_domains = 1;
  bool honor_node_affinity = true;
  bool honor_node_taints = false;
  SpreadSelector selector;
};

using Constraints = std::vector<SpreadConstraint>;

/// DefaultConstraint is one entry of default_constraints.
struct DefaultConstraint {
  int32_t max_skew = 1;
  Id topology_key = 0;
  int32_t when_unsatisfiable = SCHEDHOST_DO_NOT_SCHEDULE;
};

/// PodTopologySpreadArgs are the validated plugin arguments.
struct PodTopologySpreadArgs {
  /// system_defaulted is true for defaulting_type "System" (upstream's default).
  bool system_defaulted = true;
  /// default_constraints apply to pods without constraints of their own.
  std::vector<DefaultConstraint> default_constraints;
};

/// ParsePodTopologySpreadArgs reads and validates plugin_config.PodTopologySpread, interning
/// through `host`; throws ArgsError naming the location, the key path and what is wrong.
PodTopologySpreadArgs ParsePodTopologySpreadArgs(const Host& host, const Args& args);

/// DomainCount is a topology value and the number of matching pods in that domain.
struct DomainCount {
  Id value = 0;
  int64_t count = 0;
};

/// DomainCounts holds one constraint's counts sorted by value id (binary-searched in the hot
/// path; cheap to copy when the state is cloned).
class DomainCounts {
 public:
  /// Find returns the entry of `value`, or nullptr.
  const DomainCount* Find(Id value) const;
  DomainCount* Find(Id value);
  /// Insert adds `value` with count 0 if absent and returns its entry.
  DomainCount& Insert(Id value);
  /// Append adds `count` pods in domain `value`; call Build before any lookup. Domains recur
  /// in node order (zones cycle), so a value among the last few entries is added to in place:
  /// 5,000 nodes in 3 zones leave 3 entries to sort, not 5,000.
  void Append(Id value, int64_t count) {
    constexpr size_t kRecent = 4;
    const size_t n = items_.size();
    for (size_t k = n; k > 0 && k + kRecent > n; --k) {
      if (items_[k - 1].value == value) {
        items_[k - 1].count += count;
        return;
      }
    }
    items_.push_back({value, count});
  }
  /// Build sorts by value and merges entries of the same value, summing their counts.
  void Build();
  size_t size() const { return items_.size(); }
  std::span<const DomainCount> items() const { return items_; }

 private:
  std::vector<DomainCount> items_;
};

/// CriticalPaths keeps two domains of a constraint, [0] always holding the global minimum count
/// ([1] is >= [0] but not necessarily the second minimum), updated in O(1) as pods come and go.
struct CriticalPaths {
  static constexpr Id kNoValue = ~Id{0};
  DomainCount paths[2] = {{kNoValue, INT64_MAX}, {kNoValue, INT64_MAX}};
  /// Update records that domain `value` now holds `count` matching pods.
  void Update(Id value, int64_t count);
};

/// PreFilterState is written by PreFilter and read by Filter; AddPod/RemovePod update a clone.
struct PreFilterState {
  std::shared_ptr<const Constraints> constraints;  // DoNotSchedule ones; immutable
  std::vector<DomainCounts> counts;                // per constraint
  std::vector<CriticalPaths> critical;             // per constraint
  std::vector<uint8_t> self_match;                 // per constraint: the pod matches itself
};

/// PreScoreState is written by PreScore and read by Score and NormalizeScore.
struct PreScoreState {
  std::shared_ptr<const Constraints> constraints;  // ScheduleAnyway ones
  std::vector<DomainCounts> counts;                // per constraint; empty for hostname
  std::vector<double> weights;                     // per constraint: log(domains + 2)
  std::vector<Id> ignored_nodes;                   // sorted node name ids scored 0
};

/// PodTopologySpread implements the plugin's extension points.
class PodTopologySpread final : public Plugin,
                                public PreFilterPlugin,
                                public PreFilterExtensions,
                                public FilterPlugin,
                                public PreScorePlugin,
                                public ScorePlugin,
                                public ScoreExtensions,
                                public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "PodTopologySpread";
  static constexpr std::string_view kVersion = "1.0.0";
  /// kErrReasonConstraintsNotMatch rejects a node where placing the pod exceeds maxSkew.
  static constexpr std::string_view kErrReasonConstraintsNotMatch =
      "node(s) didn't match pod topology spread constraints";
  /// kErrReasonNodeLabelNotMatch rejects a node without a constraint's topology key.
  static constexpr std::string_view kErrReasonNodeLabelNotMatch =
      "node(s) didn't match pod topology spread constraints (missing required label)";

  /// PodTopologySpread validates its arguments (see ParsePodTopologySpreadArgs).
  PodTopologySpread(const Host& host, const Args& args);

  /// PreFilter counts matching pods per domain of every DoNotSchedule constraint over the nodes
  /// that pass the constraint's inclusion policies; Skip when there is no such constraint.
  Status PreFilter(CycleState& state, const Pod& pod, PreFilterResult& result) override;
  /// AddPod counts `to_add` on `ni` (nominated pods, preemption simulation).
  Status AddPod(CycleState& state, const Pod& pod, const Pod& to_add, const NodeInfo& ni) override;
  /// RemovePod stops counting `to_remove` on `ni`.
  Status RemovePod(CycleState& state, const Pod& pod, const Pod& to_remove,
                   const NodeInfo& ni) override;
  /// Filter: UnschedulableAndUnresolvable when `ni` lacks a topology key, Unschedulable when the
  /// skew would exceed maxSkew.
  Status Filter(const CycleState& state, const Pod& pod, const NodeInfo& ni) override;

  /// PreScore counts matching pods per domain of every ScheduleAnyway constraint (the pod's own
  /// or the defaults); Skip when there is none.
  Status PreScore(CycleState& state, const Pod& pod, const NodeInfoList& nodes) override;
  /// Score sums count * log(domains + 2) + maxSkew - 1 over the constraints (lower is better).
  Status Score(const CycleState& state, const Pod& pod, const NodeInfo& ni,
               int64_t& score) override;
  /// NormalizeScore maps s to 100 * (max + min - s) / max; ignored nodes get 0.
  Status NormalizeScore(const CycleState& state, const Pod& pod,
                        std::span<schedhost_node_score> scores) override;

  /// EventsToRegister: assigned pods added, relabelled or deleted; nodes added, relabelled,
  /// retainted or deleted; hints skip events that cannot change this plugin's verdict.
  std::span<const schedhost_event_registration> EventsToRegister() override;

  /// BuildConstraints returns the pod's constraints with `action` (or, when the pod has none,
  /// the default constraints with `action`, selecting pods of the same controller).
  Constraints BuildConstraints(const Pod& pod, int32_t action) const;

 private:
  // NodeVerdicts caches, for one node, whether it matches the pod's required node affinity and
  // whether the pod tolerates its NoSchedule/NoExecute taints (-1: not evaluated yet).
  struct NodeVerdicts {
    int8_t affinity = -1;
    int8_t taints = -1;
  };
  // NodeIncluded applies `c`'s nodeAffinityPolicy / nodeTaintsPolicy to `node` for `pod`.
  bool NodeIncluded(const SpreadConstraint& c, const Pod& pod, const Node& node,
                    NodeVerdicts& cache) const;
  bool RequiredAffinityMatches(const Pod& pod, const Node& node) const;
  Status UpdateWithPod(CycleState& state, const Pod& pod, const Pod& changed, const NodeInfo& ni,
                       int64_t delta) const;

  static int32_t PodChangeHint(void* instance, const schedhost_pod_view* pod,
                               const schedhost_cluster_event* event,
                               const schedhost_event_object* old_obj,
                               const schedhost_event_object* new_obj) noexcept;
  static int32_t NodeChangeHint(void* instance, const schedhost_pod_view* pod,
                                const schedhost_cluster_event* event,
                                const schedhost_event_object* old_obj,
                                const schedhost_event_object* new_obj) noexcept;

  // MatchCounts remembers, for one (selector, namespace), each snapshot node's CountMatching
  // together with the node info generation it was counted at. Generations are unique across
  // the host (every change to a node or its pods takes a new one), so an entry whose
  // generation equals the node's is still right: PreFilter recounts only the nodes that
  // changed since the last pod with the same selector, instead of every pod of every node.
  //
  // For a pod whose inclusion policies do not depend on the pod (no nodeSelector, no required
  // node affinity, no tolerations where taints are honoured), an entry also remembers the
  // node's place in the constraint: its domain and whether the policies include it. PreFilter
  // then reads, per unchanged node, one entry per constraint instead of the node's labels,
  // taints and affinity (those reads were 35 % of topology_spreading's scheduling thread).
  enum class Place : uint8_t { kMissingKey, kExcluded, kIncluded };
  struct CountAt {
    uint64_t generation = 0;
    int64_t count = 0;
    Id value = 0;  // the node's value of the topology key (placed entries)
    Place place = Place::kMissingKey;
  };
  using MatchCounts = std::vector<CountAt>;  // by snapshot index; checked by generation
  // CachedCount is CountMatching through `counts` (grown to cover `index`).
  static int64_t CachedCount(MatchCounts& counts, size_t index, const NodeInfo& ni,
                             const SpreadSelector& selector, Id ns);
  // CachedPlace is the entry of `index` in `counts` kept by (selector, ns, constraint): counted
  // and placed again when the node's generation moved. `pod` only matters as the policies'
  // subject, which the caller has checked they do not depend on.
  const CountAt& CachedPlace(MatchCounts& counts, size_t index, const NodeInfo& ni,
                             const SpreadConstraint& c, const Pod& pod, Id ns) const;
  // CountsFor returns the cache of (selector, ns) or, with `placed`, of (selector, ns, the
  // constraint's topology key and policies) whose entries are placed; the caller holds
  // count_mu_.
  MatchCounts& CountsFor(const SpreadSelector& selector, Id ns,
                         const SpreadConstraint* placed = nullptr) const;
  // PolicyFree tells whether `cs`' inclusion policies give the same answer for `pod` as for
  // any pod without node selection or tolerations.
  static bool PolicyFree(const Pod& pod, const Constraints& cs);

  PodTopologySpreadArgs args_;
  Id pre_filter_key_;
  Id pre_score_key_;
  mutable std::mutex count_mu_;  // PreFilter runs on one thread, but nothing promises it
  mutable std::map<std::string, MatchCounts> match_counts_;
};

/// HasAllKeys tells whether `labels` hold every constraint's topology key.
bool HasAllKeys(const Labels& labels, const Constraints& constraints);
/// CountMatching counts the pods of `ni` in namespace `ns` that `selector` selects (0 for an
/// empty selector, as upstream).
int64_t CountMatching(const NodeInfo& ni, const SpreadSelector& selector, Id ns);

}  // namespace schedhost::plugins
