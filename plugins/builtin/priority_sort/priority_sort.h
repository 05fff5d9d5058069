// PrioritySort: the default QueueSort plugin. activeQ pops the pod with the highest priority
// first and, among pods of equal priority, the one that entered the queue earliest, as
// upstream kube-scheduler's PrioritySort does. It takes no arguments.
#pragma once

#include <schedhost/plugin.hpp>
#include <string_view>

namespace schedhost::plugins {

/// PrioritySort orders activeQ by descending pod priority, then by ascending queue timestamp.
class PrioritySort final : public Plugin, public QueueSortPlugin {
 public:
  static constexpr std::string_view kName = "PrioritySort";
  static constexpr std::string_view kVersion = "1.0.0";

  /// PrioritySort accepts no arguments; any plugin_config key throws ArgsError.
  PrioritySort(const Host& host, const Args& args);

  /// Less is true when `a` has a higher priority than `b`, or the same priority and an earlier
  /// queue timestamp.
  bool Less(const QueuedPod& a, const QueuedPod& b) override;
};

}  // namespace schedhost::plugins
