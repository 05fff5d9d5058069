#include "node_unschedulable.h"

#include <string>

namespace schedhost::plugins {
namespace {

constexpr schedhost_event_registration kEvents[] = {
    {{SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE_NODE_TAINT}, nullptr},
};

}  // namespace

NodeUnschedulable::NodeUnschedulable(const Host& host, const Args& args) : Plugin(host) {
  args.ExpectNone(kName);
}

Status NodeUnschedulable::Filter(const CycleState& /*state*/, const Pod& pod, const NodeInfo& ni) {
  // The common case from the summary's line alone; anything else reads the node's view.
  if (const schedhost_node_summary* s = ni.summary();
      s != nullptr &&
      s->flags == (SCHEDHOST_NODE_SUMMARY_VALID | SCHEDHOST_NODE_SUMMARY_HAS_NODE)) {
    return {};
  }
  if (ni.raw() == nullptr || ni.raw()->node == nullptr) {
    return Status::UnschedulableAndUnresolvable(Status::Static{kErrReasonUnknownCondition});
  }
  if (!ni.node().unschedulable()) return {};
  // An unschedulable node behaves as if tainted node.kubernetes.io/unschedulable:NoSchedule.
  constexpr schedhost_taint kUnschedulableTaint{SCHEDHOST_ID_TAINT_UNSCHEDULABLE, SCHEDHOST_ID_EMPTY,
                                                SCHEDHOST_EFFECT_NO_SCHEDULE, 0};
  if (AnyTolerates(pod.tolerations(), kUnschedulableTaint)) return {};
  return Status::UnschedulableAndUnresolvable(Status::Static{kErrReasonUnschedulable});
}

std::span<const schedhost_event_registration> NodeUnschedulable::EventsToRegister() {
  return kEvents;
}

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::NodeUnschedulable)
