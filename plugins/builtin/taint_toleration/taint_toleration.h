// TaintToleration: node taints against pod tolerations, as upstream kube-scheduler's
// TaintToleration plugin. Filter rejects a node with a NoSchedule or NoExecute taint the pod
// does not tolerate; Score counts the PreferNoSchedule taints the pod does not tolerate and
// NormalizeScore turns fewer such taints into a higher score. It takes no arguments.
#pragma once

#include <schedhost/plugin.hpp>
#include <span>
#include <string_view>

namespace schedhost::plugins {

/// TaintToleration filters and scores nodes by the taints a pod does not tolerate.
class TaintToleration final : public Plugin,
                              public FilterPlugin,
                              public PreScorePlugin,
                              public ScorePlugin,
                              public ScoreExtensions,
                              public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "TaintToleration";
  static constexpr std::string_view kVersion = "1.0.0";
  /// kStateKey names this plugin's CycleState entry (written in PreScore).
  static constexpr std::string_view kStateKey = "PreScoreTaintToleration";

  /// TaintToleration accepts no arguments; any plugin_config key throws ArgsError.
  TaintToleration(const Host& host, const Args& args);

  /// Filter returns UnschedulableAndUnresolvable "node(s) had untolerated taint {key: value}"
  /// for the node's first NoSchedule/NoExecute taint no toleration of the pod matches.
  Status Filter(const CycleState& state, const Pod& pod, const NodeInfo& ni) override;

  /// PreScore keeps the pod's tolerations that can tolerate PreferNoSchedule taints (effect
  /// empty or PreferNoSchedule) in `state`.
  Status PreScore(CycleState& state, const Pod& pod, const NodeInfoList& nodes) override;

  /// Score is the number of the node's PreferNoSchedule taints those tolerations do not
  /// tolerate; Error when PreScore's state is missing.
  Status Score(const CycleState& state, const Pod& pod, const NodeInfo& ni,
               int64_t& score) override;

  /// NormalizeScore maps s to 100 - s*100/max (integer division); every node gets 100 when
  /// max is 0.
  Status NormalizeScore(const CycleState& state, const Pod& pod,
                        std::span<schedhost_node_score> scores) override;

  /// EventsToRegister names node additions and updates (taints change with them).
  std::span<const schedhost_event_registration> EventsToRegister() override;

 private:
  Id state_key_;
};

}  // namespace schedhost::plugins
