// Cluster events: what changed in the cluster (a resource kind, action bits from plugin.h, the
// old and new object) as the queue sees it when deciding whether an unschedulable pod may now
// fit. Factories build the events the event router sends, computing upstream's fine-grained
// update bits (a node's labels, taints, allocatable...; a pod's labels, scale-down...).
//
//   if (auto ev = MakeNodeUpdateEvent(old_node, new_node))
//   queue.MoveAllToActiveOrBackoffQueue(*ev);
#pragma once

#include <schedhost/plugin.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "host/model/node.h"
#include "host/model/pod.h"

namespace schedhost::queue {

/// EventObject is the object an event is about: at most one of pod / node is set.
struct EventObject {
  std::shared_ptr<const model::Pod> pod;
  std::shared_ptr<const model::Node> node;
};

/// ClusterEvent is one change in the cluster, with the objects before and after it.
struct ClusterEvent {
  schedhost_event_resource resource = SCHEDHOST_RESOURCE_WILDCARD;
  int32_t actions = SCHEDHOST_ACTION_ALL;  // schedhost_event_action bits.
  EventObject old_obj;                     // Empty for additions.
  EventObject new_obj;                     // Empty for deletions.
  std::string label;                       // For metrics and logs, e.g. "NodeAdd".

  /// IsWildcard is true for events that concern every pod regardless of plugin registrations
  /// (the unschedulable-timeout flush, a forced move).
  bool IsWildcard() const { return resource == SCHEDHOST_RESOURCE_WILDCARD; }
};

/// EventMatches is true when a plugin that registered for `registered` cares about `ev`:
/// a wildcard registration or wildcard event matches everything, resource Pod matches assigned
/// and unscheduled pods too, and the action bits must intersect.
bool EventMatches(const schedhost_cluster_event& registered, const ClusterEvent& ev);

/// PodUpdateMayMakeSchedulable is upstream's "pod updated" test for pending pods: true when
/// anything but status and resourceVersion differs (a status-only update never helps).
bool PodUpdateMayMakeSchedulable(const model::Pod& old_pod, const model::Pod& new_pod);

/// PodUpdateActions returns the update bits that describe old -> new (labels, scale-down of
/// requests, tolerations, scheduling gates all removed); every update bit when none applies.
int32_t PodUpdateActions(const model::Pod& old_pod, const model::Pod& new_pod);

/// NodeUpdateActions returns the update bits that describe old -> new (allocatable, labels,
/// taints or spec.unschedulable, conditions, annotations); 0 when nothing scheduling-relevant
/// changed, in which case upstream moves no pod.
int32_t NodeUpdateActions(const model::Node& old_node, const model::Node& new_node);

/// MakeAssignedPodAddEvent describes a pod that became bound (or was added bound).
ClusterEvent MakeAssignedPodAddEvent(std::shared_ptr<const model::Pod> pod);
/// MakeAssignedPodUpdateEvent describes an update of a bound pod, with PodUpdateActions bits.
ClusterEvent MakeAssignedPodUpdateEvent(std::shared_ptr<const model::Pod> old_pod,
                                        std::shared_ptr<const model::Pod> new_pod);
/// MakeAssignedPodDeleteEvent describes a bound pod that went away (freeing its resources).
ClusterEvent MakeAssignedPodDeleteEvent(std::shared_ptr<const model::Pod> pod);
/// MakeNodeAddEvent describes a new node.
ClusterEvent MakeNodeAddEvent(std::shared_ptr<const model::Node> node);
/// MakeNodeUpdateEvent describes a node update; nullopt when NodeUpdateActions is 0.
std::optional<ClusterEvent> MakeNodeUpdateEvent(std::shared_ptr<const model::Node> old_node,
                                                std::shared_ptr<const model::Node> new_node);
/// MakeNodeDeleteEvent describes a node that went away.
ClusterEvent MakeNodeDeleteEvent(std::shared_ptr<const model::Node> node);
/// MakeWildcardEvent is an event every pod reacts to, labelled `label`.
ClusterEvent MakeWildcardEvent(std::string label);

/// kUnschedulableTimeoutLabel labels the wildcard event of the leftover flush.
inline constexpr std::string_view kUnschedulableTimeoutLabel = "UnschedulableTimeout";

}  // namespace schedhost::queue
