#include "node_ports.h"

#include <memory>
#include <string>
#include <vector>

namespace schedhost::plugins {
namespace {

constexpr schedhost_event_registration kEvents[] = {
    {{SCHEDHOST_RESOURCE_POD, SCHEDHOST_ACTION_DELETE}, nullptr},
    {{SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE}, nullptr},
};

constexpr std::string_view kBindAll = "0.0.0.0";

// WantedPort is one host port of the pod, normalised: protocol defaults to TCP and the
// wildcard address is stored as "".
struct WantedPort {
  Id protocol;
  int32_t port;
  std::string ip;
};

// PreFilterState is what PreFilter leaves for Filter: the pod's wanted host ports.
struct PreFilterState {
  std::vector<WantedPort> ports;
};

Id NormalProtocol(Id protocol) {
  return protocol == SCHEDHOST_ID_EMPTY ? SCHEDHOST_ID_PROTOCOL_TCP : protocol;
}

bool IsWildcard(std::string_view ip) { return ip.empty() || ip == kBindAll; }

// Conflicts tells whether a port in use on the node blocks a wanted one.
bool Conflicts(const WantedPort& want, const schedhost_used_port& used) {
  if (want.port != used.port || want.protocol != NormalProtocol(used.protocol)) return false;
  const std::string_view used_ip = ToView(used.host_ip);
  return want.ip.empty() || IsWildcard(used_ip) || want.ip == used_ip;
}

}  // namespace

NodePorts::NodePorts(const Host& host, const Args& args)
    : Plugin(host), state_key_(host.Intern(kStateKey)) {
  args.ExpectNone(kName);
}

Status NodePorts::PreFilter(CycleState& state, const Pod& pod, PreFilterResult& /*result*/) {
  auto ports = pod.host_ports();
  if (ports.empty()) return Status::Skip();
  auto s = std::make_unique<PreFilterState>();
  s->ports.reserve(ports.size());
  for (const schedhost_host_port& p : ports) {
    if (p.port <= 0) continue;  // no host port asked for: nothing to conflict with
    const std::string_view ip = ToView(p.host_ip);
    s->ports.push_back(WantedPort{NormalProtocol(p.protocol), p.port,
                                  IsWildcard(ip) ? std::string() : std::string(ip)});
  }
  if (s->ports.empty()) return Status::Skip();
  state.Write(state_key_, std::move(s));
  return {};
}

Status NodePorts::Filter(const CycleState& state, const Pod& /*pod*/, const NodeInfo& ni) {
  const auto* s = state.Read<PreFilterState>(state_key_);
  if (s == nullptr) {
    return Status::Error("reading \"" + std::string(kStateKey) + "\" from cycle state: not found");
  }
  const auto used = ni.used_ports();
  for (const WantedPort& want : s->ports) {
    for (const schedhost_used_port& u : used) {
      if (Conflicts(want, u)) return Status::Unschedulable(Status::Static{kErrReason});
    }
  }
  return {};
}

std::span<const schedhost_event_registration> NodePorts::EventsToRegister() { return kEvents; }

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::NodePorts)
