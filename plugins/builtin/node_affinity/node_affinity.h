// NodeAffinity: keeps a pod on nodes that match its nodeSelector and required node affinity, and
// ranks nodes by the weights of the preferred terms they match, as upstream kube-scheduler's
// NodeAffinity does. The added_affinity argument is enforced on every pod of the profile on top
// of the pod's own. PreFilter narrows the nodes to those named by metadata.name field terms.
//
//   [profile.plugin_config.NodeAffinity.added_affinity]
//   required_during_scheduling_ignored_during_execution = { node_selector_terms = [
//     { match_expressions = [{ key = "pool", operator = "In", values = ["batch"] }] }] }
#pragma once

#include <cstdint>
#include <memory>
#include <schedhost/plugin.hpp>
#include <span>
#include <string_view>
#include <vector>

namespace schedhost::plugins {

/// NodeSelectorTerms owns node selector terms read from plugin arguments and exposes them in
/// their ABI form, so the host's term matcher can evaluate them like a pod's own.
class NodeSelectorTerms {
 public:
  /// OwnedRequirement is one requirement with its own value ids.
  struct OwnedRequirement {
    Id key = 0;
    int32_t op = SCHEDHOST_OP_IN;
    std::vector<Id> values;
  };
  /// OwnedTerm is one term: label requirements and metadata.name field requirements, ANDed.
  struct OwnedTerm {
    std::vector<OwnedRequirement> match_expressions;
    std::vector<OwnedRequirement> match_fields;
    int32_t weight = 0;  // preferred terms only
  };

  NodeSelectorTerms() = default;
  /// NodeSelectorTerms takes the parsed terms and builds their ABI form.
  explicit NodeSelectorTerms(std::vector<OwnedTerm> terms);
  NodeSelectorTerms(const NodeSelectorTerms&) = delete;
  NodeSelectorTerms& operator=(const NodeSelectorTerms&) = delete;
  NodeSelectorTerms(NodeSelectorTerms&&) = default;
  NodeSelectorTerms& operator=(NodeSelectorTerms&&) = default;

  /// terms returns the ABI form, valid while this object lives.
  std::span<const schedhost_node_selector_term> terms() const { return abi_terms_; }
  /// weights returns each term's weight, index-aligned with terms().
  std::span<const int32_t> weights() const { return weights_; }
  bool empty() const { return abi_terms_.empty(); }

 private:
  std::vector<OwnedTerm> owned_;
  std::vector<std::vector<schedhost_requirement>> abi_exprs_;
  std::vector<std::vector<schedhost_requirement>> abi_fields_;
  std::vector<schedhost_node_selector_term> abi_terms_;
  std::vector<int32_t> weights_;
};

/// NodeAffinityArgs are NodeAffinity's validated arguments.
struct NodeAffinityArgs {
  /// has_required tells whether added_affinity has a required block (an empty term list in it
  /// matches no node, as upstream).
  bool has_required = false;
  NodeSelectorTerms required;
  NodeSelectorTerms preferred;
};

/// ParseNodeAffinityArgs reads and validates plugin_config.NodeAffinity, interning through
/// `host`; throws ArgsError naming the key, its location and what is wrong.
NodeAffinityArgs ParseNodeAffinityArgs(const Host& host, const Args& args);

/// NodeAffinity filters and scores nodes by the pod's node affinity and nodeSelector.
class NodeAffinity final : public Plugin,
                           public PreFilterPlugin,
                           public FilterPlugin,
                           public PreScorePlugin,
                           public ScorePlugin,
                           public ScoreExtensions,
                           public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NodeAffinity";
  static constexpr std::string_view kVersion = "1.0.0";
  /// kErrReasonPod rejects a node that fails the pod's nodeSelector or required affinity.
  static constexpr std::string_view kErrReasonPod =
      "node(s) didn't match Pod's node affinity/selector";
  /// kErrReasonEnforced rejects a node that fails added_affinity's required terms.
  static constexpr std::string_view kErrReasonEnforced =
      "node(s) didn't match scheduler-enforced node affinity";
  /// kErrReasonConflict is PreFilter's answer when every required term names disjoint nodes.
  static constexpr std::string_view kErrReasonConflict = "pod affinity terms conflict";

  /// NodeAffinity validates its arguments (see ParseNodeAffinityArgs).
  NodeAffinity(const Host& host, const Args& args);

  /// PreFilter returns Skip when neither the pod nor added_affinity requires anything; when
  /// every required term names nodes through metadata.name In, restricts the cycle to them.
  Status PreFilter(CycleState& state, const Pod& pod, PreFilterResult& result) override;

  /// Filter returns UnschedulableAndUnresolvable when `ni` fails added_affinity's required terms,
  /// the pod's nodeSelector or its required node affinity; Success otherwise.
  Status Filter(const CycleState& state, const Pod& pod, const NodeInfo& ni) override;

  /// PreScore returns Skip when neither the pod nor added_affinity has preferred terms.
  Status PreScore(CycleState& state, const Pod& pod, const NodeInfoList& nodes) override;

  /// Score is the sum of the weights of the preferred terms (pod's and added) `ni` matches.
  Status Score(const CycleState& state, const Pod& pod, const NodeInfo& ni,
               int64_t& score) override;

  /// NormalizeScore scales scores to score * 100 / max (all stay 0 when max is 0).
  Status NormalizeScore(const CycleState& state, const Pod& pod,
                        std::span<schedhost_node_score> scores) override;

  /// EventsToRegister names node additions and label updates, with a queueing hint that skips
  /// nodes the pod still cannot use or could already use before.
  std::span<const schedhost_event_registration> EventsToRegister() override;

 private:
  bool AnyTermMatches(std::span<const schedhost_node_selector_term> terms, const Node& node) const;
  // RequiredMatch tells whether `node` passes added_affinity, the nodeSelector and the required
  // terms of `pod`; `enforced_failed` says which part failed.
  bool RequiredMatch(const Pod& pod, const Node& node, bool* enforced_failed) const;

  static int32_t NodeChangeHint(void* instance, const schedhost_pod_view* pod,
                                const schedhost_cluster_event* event,
                                const schedhost_event_object* old_obj,
                                const schedhost_event_object* new_obj) noexcept;

  NodeAffinityArgs args_;
};

}  // namespace schedhost::plugins
