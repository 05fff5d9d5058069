#include "tests/integration/test_plugins.h"

#include <string>
#include <string_view>

namespace schedhost::integration {
namespace {

constexpr std::string_view kGang = "Gang";

struct Gang {
  const schedhost_host_api* api = nullptr;
  schedhost_host* host = nullptr;
  int64_t quorum = 2;
  int64_t timeout_ms = 5000;
};

schedhost_str Str(std::string_view s) { return schedhost_str{s.data(), s.size()}; }

int64_t IntArg(const schedhost_host_api* api, const schedhost_config* args, std::string_view key,
               int64_t fallback) {
  int64_t v = fallback;
  if (const schedhost_config* c = api->config_get(args, Str(key))) api->config_int(c, &v);
  return v;
}

int32_t Create(const schedhost_host_api* api, schedhost_host* host, const schedhost_config* args,
               void** out, schedhost_status*) noexcept {
  auto* g =
      new Gang{api, host, IntArg(api, args, "quorum", 2), IntArg(api, args, "timeout_ms", 5000)};
  *out = g;
  return SCHEDHOST_SUCCESS;
}

void Destroy(void* instance) noexcept { delete static_cast<Gang*>(instance); }

int32_t Permit(void* instance, schedhost_cycle_state*, const schedhost_pod_view* pod, schedhost_str,
               int64_t* timeout_ns, schedhost_status* status) noexcept {
  auto* g = static_cast<Gang*>(instance);
  const std::string_view name(pod->name.data, pod->name.len);
  if (name.substr(0, 5) == "abort") {
    g->api->waiting_pods_iterate(
        g->host,
        [](void* user, schedhost_waiting_pod* wp) noexcept -> int32_t {
          auto* gang = static_cast<Gang*>(user);
          gang->api->waiting_pod_reject(wp, Str(kGang), Str("gang aborted"));
          return 0;
        },
        g);
    g->api->status_add_reason(status, Str("gang aborted"));
    return SCHEDHOST_UNSCHEDULABLE;
  }
  if (name.substr(0, 1) != "g") return SCHEDHOST_SUCCESS;  // not a gang member
  int64_t waiting = 0;
  g->api->waiting_pods_iterate(
      g->host,
      [](void* user, schedhost_waiting_pod*) noexcept -> int32_t {
        ++*static_cast<int64_t*>(user);
        return 0;
      },
      &waiting);
  if (waiting + 1 < g->quorum) {
    *timeout_ns = g->timeout_ms * 1000 * 1000;
    return SCHEDHOST_WAIT;
  }
  g->api->waiting_pods_iterate(
      g->host,
      [](void* user, schedhost_waiting_pod* wp) noexcept -> int32_t {
        static_cast<Gang*>(user)->api->waiting_pod_allow(wp, Str(kGang));
        return 0;
      },
      g);
  return SCHEDHOST_SUCCESS;
}

int32_t Events(void*, const schedhost_event_registration** out, size_t* len) noexcept {
  static const schedhost_event_registration kEvents[] = {
      {{SCHEDHOST_RESOURCE_POD, SCHEDHOST_ACTION_ADD}, nullptr}};
  *out = kEvents;
  *len = 1;
  return SCHEDHOST_SUCCESS;
}

schedhost_plugin_descriptor MakeGang() {
  schedhost_plugin_descriptor d{};
  d.struct_size = sizeof(d);
  d.name = Str(kGang);
  d.version = Str("0.0.1-test");
  d.create = &Create;
  d.destroy = &Destroy;
  d.permit = &Permit;
  d.events_to_register = &Events;
  return d;
}

}  // namespace

const schedhost_plugin_descriptor* GangDescriptor() {
  static const schedhost_plugin_descriptor d = MakeGang();
  return &d;
}

}  // namespace schedhost::integration
