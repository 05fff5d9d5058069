#include "node_name.h"

#include <string>

namespace schedhost::plugins {
namespace {

constexpr schedhost_event_registration kEvents[] = {
    {{SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE}, nullptr},
};

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

NodeName::NodeName(const Host& host, const Args& args) : Plugin(host) {
  RejectArguments(args, kName);
}

Status NodeName::Filter(const CycleState& /*state*/, const Pod& pod, const NodeInfo& ni) {
  if (ni.raw() == nullptr || ni.raw()->node == nullptr) return Status::Error("node not found");
  const std::string_view wanted = pod.node_name();
  if (wanted.empty() || wanted == ni.node().name()) return {};
  return Status::UnschedulableAndUnresolvable(std::string(kErrReason));
}

std::span<const schedhost_event_registration> NodeName::EventsToRegister() { return kEvents; }

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::NodeName)
