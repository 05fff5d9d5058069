// SchedulingGates: the PreEnqueue plugin that keeps a pod out of activeQ while its
// spec.schedulingGates is non-empty, as upstream kube-scheduler's SchedulingGates does. The pod
// is looked at again when an update removes its last gate. It takes no arguments.
#pragma once

#include <schedhost/plugin.hpp>
#include <span>
#include <string_view>

namespace schedhost::plugins {

/// SchedulingGates admits a pod to activeQ only once it carries no scheduling gates.
class SchedulingGates final : public Plugin, public PreEnqueuePlugin, public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "SchedulingGates";
  static constexpr std::string_view kVersion = "1.0.0";

  /// SchedulingGates accepts no arguments; any plugin_config key throws ArgsError.
  SchedulingGates(const Host& host, const Args& args);

  /// PreEnqueue returns Success for a pod without gates, else UnschedulableAndUnresolvable
  /// "waiting for scheduling gates: [g1 g2]" listing the gates in spec order.
  Status PreEnqueue(const Pod& pod) override;

  /// EventsToRegister names the pod update that eliminates the last scheduling gate.
  std::span<const schedhost_event_registration> EventsToRegister() override;
};

}  // namespace schedhost::plugins
