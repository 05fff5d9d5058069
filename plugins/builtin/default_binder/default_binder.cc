#include "default_binder.h"

#include <string>

namespace schedhost::plugins {
namespace {

}  // namespace

DefaultBinder::DefaultBinder(const Host& host, const Args& args) : Plugin(host) {
  args.ExpectNone(kName);
}

Status DefaultBinder::Bind(CycleState& state, const Pod& pod, std::string_view node) {
  const schedhost_host_api* api = host().api();
  std::string what = "binding pod " + std::string(pod.namespace_name()) + "/" +
                     std::string(pod.name()) + " to node " + std::string(node);
  if (!SCHEDHOST_HAS_FIELD(api, schedhost_host_api, bind_pod) || api->bind_pod == nullptr) {
    return Status::Error(what + ": this host does not provide bind_pod");
  }
  // The host's reasons for a failure go into this call's status; `what` adds the context.
  return host().BindPod(state, pod, node, std::move(what));
}

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::DefaultBinder)
