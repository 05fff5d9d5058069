// DefaultBinder: the default Bind plugin. It binds the pod to the chosen node through the host's
// bind_pod, as upstream kube-scheduler's DefaultBinder posts a Binding to the API server. Any
// refusal by the host comes back as Error, so the pod is unreserved and retried. It takes no
// arguments.
#pragma once

#include <schedhost/plugin.hpp>
#include <string_view>

namespace schedhost::plugins {

/// DefaultBinder writes the binding of a pod to its chosen node through the host.
class DefaultBinder final : public Plugin, public BindPlugin {
 public:
  static constexpr std::string_view kName = "DefaultBinder";
  static constexpr std::string_view kVersion = "1.0.0";

  /// DefaultBinder accepts no arguments; any plugin_config key throws ArgsError.
  DefaultBinder(const Host& host, const Args& args);

  /// Bind asks the host to bind `pod` to `node`: Success when it did, else Error naming the pod,
  /// the node and the host's result.
  Status Bind(CycleState& state, const Pod& pod, std::string_view node) override;
};

}  // namespace schedhost::plugins
