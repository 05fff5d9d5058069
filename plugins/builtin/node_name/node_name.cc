#include "node_name.h"

#include <string>

namespace schedhost::plugins {
namespace {

constexpr schedhost_event_registration kEvents[] = {
    {{SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE}, nullptr},
};

}  // namespace

NodeName::NodeName(const Host& host, const Args& args) : Plugin(host) {
  args.ExpectNone(kName);
}

Status NodeName::Filter(const CycleState& /*state*/, const Pod& pod, const NodeInfo& ni) {
  // Whether there is a node, from the summary's line when the host gives one (the view's first
  // line is not otherwise read for a pod without spec.nodeName).
  const schedhost_node_summary* s = ni.summary();
  const bool has_node = s != nullptr ? (s->flags & SCHEDHOST_NODE_SUMMARY_HAS_NODE) != 0
                                     : ni.raw() != nullptr && ni.raw()->node != nullptr;
  if (!has_node) return Status::Error("node not found");
  const std::string_view wanted = pod.node_name();
  if (wanted.empty() || wanted == ni.node().name()) return {};
  return Status::UnschedulableAndUnresolvable(Status::Static{kErrReason});
}

std::span<const schedhost_event_registration> NodeName::EventsToRegister() { return kEvents; }

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::NodeName)
