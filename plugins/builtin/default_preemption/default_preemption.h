// DefaultPreemption: upstream kube-scheduler's PostFilter. When no node fits a pod, it asks the
// host's preemption toolkit to find nodes where evicting lower-priority pods would make room,
// pick the best one in upstream's order, evict its victims and nominate the pod there. Built
// only on the SDK: everything it does goes through Host::Preempt with upstream's rules.
//
//   [profile.plugin_config.DefaultPreemption]
//   min_candidate_nodes_percentage = 10
//   min_candidate_nodes_absolute = 100
#pragma once

#include <cstdint>
#include <schedhost/plugin.hpp>
#include <string>
#include <string_view>

namespace schedhost::plugins {

/// PreemptionArgs are DefaultPreemption's validated arguments (upstream's defaults).
struct PreemptionArgs {
  int32_t min_candidate_nodes_percentage = 10;
  int32_t min_candidate_nodes_absolute = 100;
};

/// ParsePreemptionArgs reads and validates plugin_config.DefaultPreemption as upstream's
/// ValidateDefaultPreemptionArgs; throws ArgsError naming the field and its location.
PreemptionArgs ParsePreemptionArgs(const Args& args);

/// DefaultPreemption is the PostFilter plugin.
class DefaultPreemption final : public Plugin, public PostFilterPlugin {
 public:
  static constexpr std::string_view kName = "DefaultPreemption";
  static constexpr std::string_view kVersion = "1.0.0";

  /// DefaultPreemption validates its arguments (see ParsePreemptionArgs).
  DefaultPreemption(const Host& host, const Args& args);

  Status PostFilter(CycleState& state, const Pod& pod, const NodeStatusMap& statuses,
                    std::string& nominated_node) override;

 private:
  schedhost_preemption_callbacks callbacks_{};
};

}  // namespace schedhost::plugins
