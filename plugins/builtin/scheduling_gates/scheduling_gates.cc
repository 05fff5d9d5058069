#include "scheduling_gates.h"

#include <string>

namespace schedhost::plugins {
namespace {

// Only removing the gates can let a gated pod in; no other cluster event matters to it.
constexpr schedhost_event_registration kEvents[] = {
    {{SCHEDHOST_RESOURCE_POD, SCHEDHOST_ACTION_UPDATE_POD_SCHEDULING_GATES_ELIMINATED}, nullptr},
};

}  // namespace

SchedulingGates::SchedulingGates(const Host& host, const Args& args) : Plugin(host) {
  args.ExpectNone(kName);
}

Status SchedulingGates::PreEnqueue(const Pod& pod) {
  auto gates = pod.scheduling_gates();
  if (gates.empty()) return {};
  // Upstream prints the gate names as a Go slice: "[a b c]".
  std::string msg = "waiting for scheduling gates: [";
  for (size_t i = 0; i < gates.size(); ++i) {
    if (i > 0) msg += ' ';
    msg += ToView(gates[i]);
  }
  msg += ']';
  return Status::UnschedulableAndUnresolvable(std::move(msg));
}

std::span<const schedhost_event_registration> SchedulingGates::EventsToRegister() {
  return kEvents;
}

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::SchedulingGates)
