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
#include "host/model/value_node.h"

namespace schedhost::queue {

/// EventObject is the object an event is about: at most one of pod / node / object is set.
struct EventObject {
  std::shared_ptr<const model::Pod> pod;
  std::shared_ptr<const model::Node> node;
  std::shared_ptr<const model::ValueNode> object;  // an object of a declared kind
};

/// ClusterEvent is one change in the cluster, with the objects before and after it.
struct ClusterEvent {
  // For an object of a declared kind, SCHEDHOST_RESOURCE_DECLARED_KIND with `kind` set.
  int32_t resource = SCHEDHOST_RESOURCE_WILDCARD;
  int32_t actions = SCHEDHOST_ACTION_ALL;  // schedhost_event_action bits.
  std::string kind;                        // a declared kind's key ("podgroups.scheduling.x-k8s.io")
  EventObject old_obj;                     // Empty for additions.
  EventObject new_obj;                     // Empty for deletions.
  std::string label;                       // For metrics and logs, e.g. "NodeAdd".

  /// IsWildcard is true for events that concern every pod regardless of plugin registrations
  /// (the unschedulable-timeout flush, a forced move).
  bool IsWildcard() const { return resource == SCHEDHOST_RESOURCE_WILDCARD; }
};

/// EventRegistration is one event a plugin registered for (EventsToRegister), as the host reads
/// it: a registration for one of the plugin's declared kinds (resource
/// SCHEDHOST_RESOURCE_DECLARED_KIND + i) names the kind by key.
struct EventRegistration {
  schedhost_cluster_event event{};  // as the plugin wrote it
  schedhost_queueing_hint_fn hint = nullptr;
  std::string kind;  // the declared kind's key; "" for the built-in resources
};

/// EventMatches is true when a plugin that registered `registered` cares about `ev`:
/// a wildcard registration or wildcard event matches everything, resource Pod matches assigned
/// and unscheduled pods too, a declared kind matches events of that kind only, and the action
/// bits must intersect.
bool EventMatches(const EventRegistration& registered, const ClusterEvent& ev);

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
/// MakeObjectEvent describes an add (old null), update or delete (new null) of an object of the
/// declared kind keyed `kind` (`kind_name` labels it, e.g. "PodGroupUpdate"). An update carries
/// every update bit.
ClusterEvent MakeObjectEvent(std::string kind, std::string_view kind_name,
                             std::shared_ptr<const model::ValueNode> old_obj,
                             std::shared_ptr<const model::ValueNode> new_obj);
/// MakeWildcardEvent is an event every pod reacts to, labelled `label`.
ClusterEvent MakeWildcardEvent(std::string label);

/// kUnschedulableTimeoutLabel labels the wildcard event of the leftover flush.
inline constexpr std::string_view kUnschedulableTimeoutLabel = "UnschedulableTimeout";

}  // namespace schedhost::queue
