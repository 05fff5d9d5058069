#include "host/queue/cluster_event.h"

#include <utility>

#include "host/queue/object_compare.h"

namespace schedhost::queue {

bool EventMatches(const EventRegistration& registration, const ClusterEvent& ev) {
  if (ev.IsWildcard()) return true;
  const schedhost_cluster_event& registered = registration.event;
  if (!registration.kind.empty() || !ev.kind.empty()) {
    // Declared kinds: a registration for the same kind, or a wildcard one, hears them.
    const bool resource_matches = registered.resource == SCHEDHOST_RESOURCE_WILDCARD ||
                                  (!registration.kind.empty() && registration.kind == ev.kind);
    return resource_matches && (registered.actions & ev.actions) != 0;
  }
  if (registered.resource == SCHEDHOST_RESOURCE_WILDCARD &&
      (registered.actions & SCHEDHOST_ACTION_ALL) == SCHEDHOST_ACTION_ALL) {
    return true;
  }
  const bool resource_matches =
      registered.resource == SCHEDHOST_RESOURCE_WILDCARD || registered.resource == ev.resource ||
      // A registration for "Pod" covers pods whether bound or not, as upstream's does.
      (registered.resource == SCHEDHOST_RESOURCE_POD &&
       (ev.resource == SCHEDHOST_RESOURCE_ASSIGNED_POD ||
        ev.resource == SCHEDHOST_RESOURCE_UNSCHEDULED_POD));
  return resource_matches && (registered.actions & ev.actions) != 0;
}

bool PodUpdateMayMakeSchedulable(const model::Pod& old_pod, const model::Pod& new_pod) {
  // Compared without decoding either pod (the new one stays queued: a decoded copy would stay
  // with it). The resource version never makes a pod schedulable, nor does the status alone
  // (nominatedNodeName here).
  if (!old_pod.SameMetadataExceptVersion(new_pod)) return true;
  if (old_pod.SameSpecAndStatus(new_pod)) return false;
  // Something in the spec or status differs, or only a quantity's notation: look closer, on
  // copies that go when this returns.
  return !internal::SamePodSpec(old_pod.Decode().spec, new_pod.Decode().spec);
}

namespace {

// ScaledDown is true when some effective request of `new_pod` is below the old one (a resource
// dropped entirely counts): only then can the update free room for other pods.
bool ScaledDown(const model::Pod& old_pod, const model::Pod& new_pod) {
  const auto& olds = old_pod.requests();
  const auto& news = new_pod.requests();
  size_t j = 0;
  for (const schedhost_resource& r : olds) {
    while (j < news.size() && news[j].name < r.name) ++j;
    const int64_t now = (j < news.size() && news[j].name == r.name) ? news[j].value : 0;
    if (now < r.value) return true;
  }
  return false;
}

}  // namespace

int32_t PodUpdateActions(const model::Pod& old_pod, const model::Pod& new_pod) {
  int32_t actions = 0;
  if (!old_pod.SameLabels(new_pod)) {
    actions |= SCHEDHOST_ACTION_UPDATE_POD_LABEL;
  }
  if (ScaledDown(old_pod, new_pod)) actions |= SCHEDHOST_ACTION_UPDATE_POD_SCALE_DOWN;
  if (old_pod.view()->scheduling_gates_len != 0 && new_pod.view()->scheduling_gates_len == 0) {
    actions |= SCHEDHOST_ACTION_UPDATE_POD_SCHEDULING_GATES_ELIMINATED;
  }
  // Tolerations are compared on decoded copies (the view clamps their seconds), and only when
  // the spec changed at all.
  if (!old_pod.SameSpecAndStatus(new_pod) &&
      !internal::SameTolerations(old_pod.Decode().spec.tolerations,
                                 new_pod.Decode().spec.tolerations)) {
    actions |= SCHEDHOST_ACTION_UPDATE_POD_TOLERATIONS;
  }
  // Like upstream, an update none of the specific bits describes concerns every plugin that
  // registered for some pod update.
  return actions != 0 ? actions : static_cast<int32_t>(SCHEDHOST_ACTION_UPDATE);
}

int32_t NodeUpdateActions(const model::Node& old_node, const model::Node& new_node) {
  const model::NodeData& o = old_node.data();
  const model::NodeData& n = new_node.data();
  int32_t actions = 0;
  if (o.status.allocatable != n.status.allocatable) {
    actions |= SCHEDHOST_ACTION_UPDATE_NODE_ALLOCATABLE;
  }
  if (o.metadata.labels != n.metadata.labels) actions |= SCHEDHOST_ACTION_UPDATE_NODE_LABEL;
  // Upstream reports a change of spec.unschedulable as a taint update too.
  if (o.spec.unschedulable != n.spec.unschedulable ||
      !internal::SameTaints(o.spec.taints, n.spec.taints)) {
    actions |= SCHEDHOST_ACTION_UPDATE_NODE_TAINT;
  }
  if (!internal::SameConditions(o.status.conditions, n.status.conditions)) {
    actions |= SCHEDHOST_ACTION_UPDATE_NODE_CONDITION;
  }
  if (o.metadata.annotations != n.metadata.annotations) {
    actions |= SCHEDHOST_ACTION_UPDATE_NODE_ANNOTATION;
  }
  return actions;
}

ClusterEvent MakeAssignedPodAddEvent(std::shared_ptr<const model::Pod> pod) {
  ClusterEvent ev;
  ev.resource = SCHEDHOST_RESOURCE_ASSIGNED_POD;
  ev.actions = SCHEDHOST_ACTION_ADD;
  ev.new_obj.pod = std::move(pod);
  ev.label = "AssignedPodAdd";
  return ev;
}

ClusterEvent MakeAssignedPodUpdateEvent(std::shared_ptr<const model::Pod> old_pod,
                                        std::shared_ptr<const model::Pod> new_pod) {
  ClusterEvent ev;
  ev.resource = SCHEDHOST_RESOURCE_ASSIGNED_POD;
  ev.actions = (old_pod && new_pod) ? PodUpdateActions(*old_pod, *new_pod)
                                    : static_cast<int32_t>(SCHEDHOST_ACTION_UPDATE);
  ev.old_obj.pod = std::move(old_pod);
  ev.new_obj.pod = std::move(new_pod);
  ev.label = "AssignedPodUpdate";
  return ev;
}

ClusterEvent MakeAssignedPodDeleteEvent(std::shared_ptr<const model::Pod> pod) {
  ClusterEvent ev;
  ev.resource = SCHEDHOST_RESOURCE_ASSIGNED_POD;
  ev.actions = SCHEDHOST_ACTION_DELETE;
  ev.old_obj.pod = std::move(pod);
  ev.label = "AssignedPodDelete";
  return ev;
}

ClusterEvent MakeNodeAddEvent(std::shared_ptr<const model::Node> node) {
  ClusterEvent ev;
  ev.resource = SCHEDHOST_RESOURCE_NODE;
  ev.actions = SCHEDHOST_ACTION_ADD;
  ev.new_obj.node = std::move(node);
  ev.label = "NodeAdd";
  return ev;
}

std::optional<ClusterEvent> MakeNodeUpdateEvent(std::shared_ptr<const model::Node> old_node,
                                                std::shared_ptr<const model::Node> new_node) {
  if (!old_node || !new_node) return std::nullopt;
  const int32_t actions = NodeUpdateActions(*old_node, *new_node);
  if (actions == 0) return std::nullopt;
  ClusterEvent ev;
  ev.resource = SCHEDHOST_RESOURCE_NODE;
  ev.actions = actions;
  ev.old_obj.node = std::move(old_node);
  ev.new_obj.node = std::move(new_node);
  ev.label = "NodeUpdate";
  return ev;
}

ClusterEvent MakeNodeDeleteEvent(std::shared_ptr<const model::Node> node) {
  ClusterEvent ev;
  ev.resource = SCHEDHOST_RESOURCE_NODE;
  ev.actions = SCHEDHOST_ACTION_DELETE;
  ev.old_obj.node = std::move(node);
  ev.label = "NodeDelete";
  return ev;
}

ClusterEvent MakeObjectEvent(std::string kind, std::string_view kind_name,
                             std::shared_ptr<const model::ValueNode> old_obj,
                             std::shared_ptr<const model::ValueNode> new_obj) {
  ClusterEvent ev;
  ev.resource = SCHEDHOST_RESOURCE_DECLARED_KIND;
  ev.kind = std::move(kind);
  ev.actions = old_obj == nullptr   ? SCHEDHOST_ACTION_ADD
               : new_obj == nullptr ? SCHEDHOST_ACTION_DELETE
                                    : SCHEDHOST_ACTION_UPDATE;
  ev.label = std::string(kind_name) + (old_obj == nullptr   ? "Add"
                                       : new_obj == nullptr ? "Delete"
                                                            : "Update");
  ev.old_obj.object = std::move(old_obj);
  ev.new_obj.object = std::move(new_obj);
  return ev;
}

ClusterEvent MakeWildcardEvent(std::string label) {
  ClusterEvent ev;
  ev.resource = SCHEDHOST_RESOURCE_WILDCARD;
  ev.actions = SCHEDHOST_ACTION_ALL;
  ev.label = std::move(label);
  return ev;
}

}  // namespace schedhost::queue
