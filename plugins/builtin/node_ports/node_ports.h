// NodePorts: the PreFilter + Filter plugin that keeps a pod off nodes where a host port it asks
// for is already taken, as upstream kube-scheduler's NodePorts does. PreFilter records the pod's
// (protocol, hostIP, hostPort) triples once per cycle and skips the Filter for pods with none.
// Two triples conflict when protocol and port match and the IPs are equal or either one is the
// wildcard (0.0.0.0 or empty). It takes no arguments.
#pragma once

#include <schedhost/plugin.hpp>
#include <span>
#include <string_view>

namespace schedhost::plugins {

/// NodePorts rejects nodes whose used host ports conflict with the pod's.
class NodePorts final : public Plugin,
                        public PreFilterPlugin,
                        public FilterPlugin,
                        public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NodePorts";
  static constexpr std::string_view kVersion = "1.0.0";
  /// kErrReason is the reason of the rejection, upstream's text.
  static constexpr std::string_view kErrReason =
      "node(s) didn't have free ports for the requested pod ports";
  /// kStateKey names this plugin's CycleState entry.
  static constexpr std::string_view kStateKey = "PreFilterNodePorts";

  /// NodePorts accepts no arguments; any plugin_config key throws ArgsError.
  NodePorts(const Host& host, const Args& args);

  /// PreFilter stores the pod's host ports in `state`; returns Skip when the pod has none.
  Status PreFilter(CycleState& state, const Pod& pod, PreFilterResult& result) override;

  /// Filter returns Unschedulable with kErrReason when a wanted port conflicts with one in use
  /// on the node, Error when PreFilter's state is missing, else Success.
  Status Filter(const CycleState& state, const Pod& pod, const NodeInfo& ni) override;

  /// EventsToRegister names pod deletions (ports freed) and node additions and updates.
  std::span<const schedhost_event_registration> EventsToRegister() override;

 private:
  Id state_key_;
};

}  // namespace schedhost::plugins
