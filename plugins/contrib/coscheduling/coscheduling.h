// Coscheduling: gang scheduling after kubernetes-sigs/scheduler-plugins, built only on the SDK.
// Pods labelled scheduling.x-k8s.io/pod-group=<name> form a group of at least
// scheduling.x-k8s.io/min-available members (annotation). QueueSort keeps a group's pods
// together; PreFilter rejects a pod while fewer than min-available members exist or while its
// group is denied; Permit holds members until min-available are assumed, then allows them all;
// PostFilter and Unreserve reject every waiting member when one cannot be placed, so a partial
// gang never holds resources.
//
//   [profile.plugin_config.Coscheduling]
//   permit_waiting_time_seconds = 60
//   denied_group_retry_seconds = 5
//   assembly_grace_seconds = 0
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <schedhost/plugin.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "pod_group.h"

namespace schedhost::contrib {

/// CoschedulingArgs are Coscheduling's validated arguments.
struct CoschedulingArgs {
  /// permit_waiting_time is how long a member waits at Permit for its group (upstream: 60 s).
  std::chrono::nanoseconds permit_waiting_time = std::chrono::seconds(60);
  /// denied_group_retry is how long a group rejected in PostFilter is not retried.
  std::chrono::nanoseconds denied_group_retry = std::chrono::seconds(5);
  /// assembly_grace is how long after the plugin met a group's first member PreFilter lets
  /// members of an incomplete group through to wait at Permit (0: reject them at once).
  std::chrono::nanoseconds assembly_grace{0};
};

/// ParseCoschedulingArgs reads plugin_config.Coscheduling; throws ArgsError naming the field.
CoschedulingArgs ParseCoschedulingArgs(const Args& args);

/// Coscheduling is the gang-scheduling plugin.
class Coscheduling final : public Plugin,
                           public PreEnqueuePlugin,
                           public QueueSortPlugin,
                           public EnqueueExtensions,
                           public PreFilterPlugin,
                           public PostFilterPlugin,
                           public ReservePlugin,
                           public PermitPlugin {
 public:
  static constexpr std::string_view kName = "Coscheduling";
  static constexpr std::string_view kVersion = "1.0.0";

  /// Coscheduling validates its arguments (see ParseCoschedulingArgs).
  Coscheduling(const Host& host, const Args& args);

  Status PreEnqueue(const Pod& pod) override;
  bool Less(const QueuedPod& a, const QueuedPod& b) override;
  std::span<const schedhost_event_registration> EventsToRegister() override;
  Status PreFilter(CycleState& state, const Pod& pod, PreFilterResult& result) override;
  Status PostFilter(CycleState& state, const Pod& pod, const NodeStatusMap& statuses,
                    std::string& nominated_node) override;
  Status Reserve(CycleState& state, const Pod& pod, std::string_view node) override;
  void Unreserve(CycleState& state, const Pod& pod, std::string_view node) override;
  Status Permit(CycleState& state, const Pod& pod, std::string_view node,
                std::chrono::nanoseconds& timeout) override;

  /// args returns the validated arguments.
  const CoschedulingArgs& args() const { return args_; }

 private:
  static int32_t Hint(void* instance, const schedhost_pod_view* pod,
                      const schedhost_cluster_event* event, const schedhost_event_object* old_obj,
                      const schedhost_event_object* new_obj) noexcept;
  // GroupOf returns the group key of `pod`, or nullopt when it has no group label.
  std::optional<GroupKey> GroupOf(const schedhost_pod_view* pod) const;
  // Placed counts distinct members of `key` that are assumed or bound (the snapshot) or waiting
  // at Permit, leaving `except_uid` out.
  size_t Placed(const GroupKey& key, std::string_view except_uid) const;
  // RejectWaiting rejects every waiting member of `key` with `message`; returns how many.
  size_t RejectWaiting(const GroupKey& key, std::string_view message) const;
  // AllowWaiting allows every waiting member of `key`.
  void AllowWaiting(const GroupKey& key) const;

  CoschedulingArgs args_;
  Id group_label_ = 0;
  Id rejected_key_ = 0;  // CycleState: this cycle's PreFilter rejected the pod
  std::vector<schedhost_event_registration> events_;
  std::unique_ptr<GroupRegistry> groups_;
};

}  // namespace schedhost::contrib
