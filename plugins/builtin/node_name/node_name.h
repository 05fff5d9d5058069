// NodeName: the Filter plugin that honours spec.nodeName. A pod naming a node fits only that
// node; a pod naming none fits every node. Follows upstream kube-scheduler's NodeName plugin.
// It takes no arguments.
#pragma once

#include <schedhost/plugin.hpp>
#include <span>
#include <string_view>

namespace schedhost::plugins {

/// NodeName rejects every node but the one a pod's spec.nodeName names.
class NodeName final : public Plugin, public FilterPlugin, public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NodeName";
  static constexpr std::string_view kVersion = "1.0.0";
  /// kErrReason is the reason of the rejection, upstream's text.
  static constexpr std::string_view kErrReason = "node(s) didn't match the requested node name";

  /// NodeName accepts no arguments; any plugin_config key throws ArgsError.
  NodeName(const Host& host, const Args& args);

  /// Filter returns Success when the pod names no node or names this one, else
  /// UnschedulableAndUnresolvable with kErrReason.
  Status Filter(const CycleState& state, const Pod& pod, const NodeInfo& ni) override;

  /// EventsToRegister names node additions and updates (the named node may appear later).
  std::span<const schedhost_event_registration> EventsToRegister() override;
};

}  // namespace schedhost::plugins
