// NodeUnschedulable: the Filter plugin that keeps pods off cordoned nodes
// (spec.unschedulable), unless the pod tolerates the taint
// {node.kubernetes.io/unschedulable, NoSchedule}, as upstream kube-scheduler's
// NodeUnschedulable does. It takes no arguments.
#pragma once

#include <schedhost/plugin.hpp>
#include <span>
#include <string_view>

namespace schedhost::plugins {

/// NodeUnschedulable rejects unschedulable nodes for pods that do not tolerate that state.
class NodeUnschedulable final : public Plugin, public FilterPlugin, public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NodeUnschedulable";
  static constexpr std::string_view kVersion = "1.0.0";
  /// kErrReasonUnschedulable is the reason for a cordoned node, upstream's text.
  static constexpr std::string_view kErrReasonUnschedulable = "node(s) were unschedulable";
  /// kErrReasonUnknownCondition is the reason when the node info carries no node.
  static constexpr std::string_view kErrReasonUnknownCondition = "node(s) had unknown conditions";

  /// NodeUnschedulable accepts no arguments; any plugin_config key throws ArgsError.
  NodeUnschedulable(const Host& host, const Args& args);

  /// Filter returns Success for a schedulable node or a pod tolerating
  /// {node.kubernetes.io/unschedulable, NoSchedule}; else UnschedulableAndUnresolvable with
  /// kErrReasonUnschedulable.
  Status Filter(const CycleState& state, const Pod& pod, const NodeInfo& ni) override;

  /// EventsToRegister names node additions and node taint updates (uncordoning is one).
  std::span<const schedhost_event_registration> EventsToRegister() override;
};

}  // namespace schedhost::plugins
