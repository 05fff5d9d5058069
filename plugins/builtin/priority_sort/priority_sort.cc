#include "priority_sort.h"

#include <string>

namespace schedhost::plugins {
namespace {

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

PrioritySort::PrioritySort(const Host& host, const Args& args) : Plugin(host) {
  RejectArguments(args, kName);
}

bool PrioritySort::Less(const QueuedPod& a, const QueuedPod& b) {
  const int32_t pa = a.pod().priority();
  const int32_t pb = b.pod().priority();
  return pa > pb || (pa == pb && a.timestamp_ns() < b.timestamp_ns());
}

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::PrioritySort)
