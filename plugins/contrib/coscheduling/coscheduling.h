// Coscheduling: gang scheduling after kubernetes-sigs/scheduler-plugins, built only on the SDK.
// A group is a PodGroup object (scheduling.x-k8s.io/v1alpha1, a kind the plugin declares, so
// the host mirrors it from the API server or takes it from `schedctl apply`); pods join it with
// the label scheduling.x-k8s.io/pod-group=<name> (same namespace). PreEnqueue holds a member
// whose PodGroup does not exist (or does not decode) until it does; QueueSort keeps a group's
// pods together; PreFilter rejects a member while fewer than spec.minMember members exist,
// while the group is denied, or while the cluster lacks spec.minResources; Permit holds members
// until minMember are assumed, then allows them all (waiting at most
// spec.scheduleTimeoutSeconds); PostFilter and Unreserve reject every waiting member when one
// cannot be placed, so a partial gang never holds resources; PostBind writes the PodGroup's
// status (phase Scheduling, then Scheduled; scheduled; scheduleStartTime).
//
//   [profile.plugin_config.Coscheduling]
//   permit_waiting_time_seconds = 60
//   denied_group_retry_seconds = 5
//   assembly_grace_seconds = 0
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <schedhost/plugin.hpp>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pod_group.h"

namespace schedhost::contrib {

/// CoschedulingArgs are Coscheduling's validated arguments.
struct CoschedulingArgs {
  /// permit_waiting_time is how long a member waits at Permit for its group when its PodGroup
  /// sets no scheduleTimeoutSeconds (upstream: 60 s).
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
                           public PermitPlugin,
                           public PostBindPlugin {
 public:
  static constexpr std::string_view kName = "Coscheduling";
  static constexpr std::string_view kVersion = "2.0.0";
  /// kKinds: the PodGroup kind, index 0.
  static constexpr std::array<Kind, 1> kKinds = {
      {{"scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", true}}};

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
  void PostBind(CycleState& state, const Pod& pod, std::string_view node) override;

  /// args returns the validated arguments.
  const CoschedulingArgs& args() const { return args_; }

 private:
  static int32_t Hint(void* instance, const schedhost_pod_view* pod,
                      const schedhost_cluster_event* event, const schedhost_event_object* old_obj,
                      const schedhost_event_object* new_obj) noexcept;
  // GroupOf returns the group key of `pod`, or nullopt when it has no group label.
  std::optional<GroupKey> GroupOf(const schedhost_pod_view* pod) const;
  // ReadGroup reads and decodes the PodGroup of `key` (in `state`'s cycle, or the latest
  // objects when `state` is null); on failure returns the status a member gets, saying why.
  std::variant<PodGroupSpec, Status> ReadGroup(const CycleState* state, const GroupKey& key,
                                               std::string_view namespace_name) const;
  // LacksResources explains what the cluster's free resources (leaving the group's own pods
  // out) lack of the group's minResources, or nullopt when they cover them.
  std::optional<std::string> LacksResources(const GroupKey& key, const PodGroupSpec& spec) const;
  // PermitTimeout is how long a member of a group with `spec` waits at Permit.
  std::chrono::nanoseconds PermitTimeout(const PodGroupSpec& spec) const;
  // Meet records `pod` as a member of `key`, creating the group with its PodGroup's creation
  // time (the pod's own when the PodGroup has none).
  void Meet(const GroupKey& key, const Pod& pod, const PodGroupSpec& spec);
  // OnNodes adds to `uids` the members of `key` the snapshot holds on a node (assumed or bound).
  void OnNodes(const GroupKey& key, std::set<std::string, std::less<>>& uids) const;
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
  Id pods_id_ = 0;       // the "pods" resource
  // Status writes of one group must not overtake each other (scheduled 4 then 3): PostBind
  // serialises them, off the scheduling thread.
  std::mutex status_mu_;
  // GroupStatus is what PostBind last wrote of a group's status (guarded by status_mu_).
  struct GroupStatus {
    std::string phase;
    int64_t scheduled = 0;
    bool operator==(const GroupStatus&) const = default;
  };
  std::map<GroupKey, GroupStatus> last_status_;
  std::vector<schedhost_event_registration> events_;
  std::unique_ptr<GroupRegistry> groups_;
};

}  // namespace schedhost::contrib
