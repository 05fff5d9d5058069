#include "default_binder.h"

#include <string>

namespace schedhost::plugins {
namespace {

std::string_view ResultName(int32_t rc) {
  switch (rc) {
    case SCHEDHOST_E_NOT_AVAILABLE:
      return "not available";
    case SCHEDHOST_E_INVALID_ARGUMENT:
      return "invalid argument";
    case SCHEDHOST_E_NOT_FOUND:
      return "not found";
    case SCHEDHOST_E_WRONG_TYPE:
      return "wrong type";
    case SCHEDHOST_E_OUT_OF_RANGE:
      return "out of range";
    case SCHEDHOST_E_INTERNAL:
      return "refused";
    default:
      return "unknown error";
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

DefaultBinder::DefaultBinder(const Host& host, const Args& args) : Plugin(host) {
  RejectArguments(args, kName);
}

Status DefaultBinder::Bind(CycleState& /*state*/, const Pod& pod, std::string_view node) {
  const schedhost_host_api* api = host().api();
  std::string what = "binding pod " + std::string(pod.namespace_name()) + "/" +
                     std::string(pod.name()) + " to node " + std::string(node);
  if (!SCHEDHOST_HAS_FIELD(api, schedhost_host_api, bind_pod) || api->bind_pod == nullptr) {
    return Status::Error(what + ": this host does not provide bind_pod");
  }
  // The C++ wrapper does not hand Bind the call's status sink, so the host's own reasons cannot
  // be forwarded here; the host accepts a NULL status and the result code says what failed.
  const int32_t rc = api->bind_pod(host().handle(), pod.raw(), ToStr(node), nullptr);
  if (rc == SCHEDHOST_OK) return {};
  return Status::Error(what + ": " + std::string(ResultName(rc)) + " (host result " +
                       std::to_string(rc) + ")");
}

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::DefaultBinder)
