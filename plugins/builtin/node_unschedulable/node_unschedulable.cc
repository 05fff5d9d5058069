#include "node_unschedulable.h"

#include <string>

namespace schedhost::plugins {
namespace {

constexpr schedhost_event_registration kEvents[] = {
    {{SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE_NODE_TAINT}, nullptr},
};

// Tolerates applies upstream's toleration rule to one taint: an empty effect matches every
// effect, an empty key matches every key, Exists ignores the value and Equal compares it. It is
// the same rule TaintToleration uses, kept here so this plugin's folder builds on its own.
bool Tolerates(const schedhost_toleration& t, Id key, Id value, int32_t effect) {
  if (t.effect != SCHEDHOST_EFFECT_NONE && t.effect != effect) return false;
  if (t.key != SCHEDHOST_ID_EMPTY && t.key != key) return false;
  switch (t.op) {
    case SCHEDHOST_TOLERATION_EQUAL:
      return t.value == value;
    case SCHEDHOST_TOLERATION_EXISTS:
      return true;
    default:
      return false;
  }
}

// RejectArguments refuses plugin_config for a plugin that takes none, so a misspelt or
// misplaced key is reported rather than silently ignored.
void RejectArguments(const Args& args, std::string_view plugin) {
  if (!args.present()) return;
  if (args.kind() != SCHEDHOST_CONFIG_TABLE) args.Fail("a table (it takes no arguments)");
  if (args.size() == 0) return;
  std::string_view key;
  Args first = args.At(0, &key);
  std::string loc = first.location();
  throw ArgsError((loc.empty() ? std::string() : loc + ": ") + "plugin_config." +
                  std::string(plugin) + "." + std::string(key) + ": " + std::string(plugin) +
                  " takes no arguments");
}

}  // namespace

NodeUnschedulable::NodeUnschedulable(const Host& host, const Args& args) : Plugin(host) {
  RejectArguments(args, kName);
}

Status NodeUnschedulable::Filter(const CycleState& /*state*/, const Pod& pod, const NodeInfo& ni) {
  if (ni.raw() == nullptr || ni.raw()->node == nullptr) {
    return Status::UnschedulableAndUnresolvable(std::string(kErrReasonUnknownCondition));
  }
  if (!ni.node().unschedulable()) return {};
  for (const schedhost_toleration& t : pod.tolerations()) {
    if (Tolerates(t, SCHEDHOST_ID_TAINT_UNSCHEDULABLE, SCHEDHOST_ID_EMPTY,
                  SCHEDHOST_EFFECT_NO_SCHEDULE)) {
      return {};
    }
  }
  return Status::UnschedulableAndUnresolvable(std::string(kErrReasonUnschedulable));
}

std::span<const schedhost_event_registration> NodeUnschedulable::EventsToRegister() {
  return kEvents;
}

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::NodeUnschedulable)
