#include "host/framework/testing/fake_plugin.h"

#include <map>
#include <mutex>
#include <string_view>

#include "host/framework/plugin_instance.h"

namespace schedhost::framework::testing {
namespace {

// The instance pointer of every fake is the FakePlugin itself. The ABI's create receives no
// descriptor pointer, so create finds its FakePlugin through the host handle's descriptor.
FakePlugin* Self(void* instance) { return static_cast<FakePlugin*>(instance); }

std::mutex g_mu;
std::map<const schedhost_plugin_descriptor*, FakePlugin*>& Owners() {
  static std::map<const schedhost_plugin_descriptor*, FakePlugin*> owners;
  return owners;
}

FakePlugin* OwnerOf(const schedhost_plugin_descriptor* d) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = Owners().find(d);
  return it == Owners().end() ? nullptr : it->second;
}

int32_t Report(int32_t code, const Reasons& reasons, schedhost_status* status) {
  for (const auto& r : reasons) HostApi()->status_add_reason(status, schedhost_str{r.data(), r.size()});
  return code;
}

}  // namespace

const schedhost_plugin_descriptor* FakePlugin::descriptor() {
  desc_ = schedhost_plugin_descriptor{};
  desc_.struct_size = sizeof(schedhost_plugin_descriptor);
  desc_.name = schedhost_str{name.data(), name.size()};
  evaluates_strs_.clear();
  for (const std::string& part : evaluates) evaluates_strs_.push_back({part.data(), part.size()});
  desc_.evaluates = evaluates_strs_.empty() ? nullptr : evaluates_strs_.data();
  desc_.evaluates_len = evaluates_strs_.size();
  desc_.version = schedhost_str{"0.0.1-test", 10};
  // create: the instance is this FakePlugin. The host handle's PluginInstance carries the
  // descriptor, whose address is inside this object.
  desc_.create = [](const schedhost_host_api*, schedhost_host* host, const schedhost_config*, void** out,
                    schedhost_status* status) noexcept -> int32_t {
    FakePlugin* self = OwnerOf(host->plugin->desc);
    if (self == nullptr) return SCHEDHOST_ERROR;
    *out = self;
    if (!self->create) return SCHEDHOST_SUCCESS;
    Reasons r;
    return Report(self->create(r), r, status);
  };
  desc_.destroy = [](void* i) noexcept { Self(i)->destroyed++; };
  if (pre_enqueue) {
    desc_.pre_enqueue = [](void* i, const schedhost_pod_view* pod, schedhost_status* st) noexcept -> int32_t {
      Reasons r;
      return Report(Self(i)->pre_enqueue(pod, r), r, st);
    };
  }
  if (queue_sort_less) {
    desc_.queue_sort_less = [](void* i, const schedhost_queued_pod* a, const schedhost_queued_pod* b) noexcept -> int32_t {
      return Self(i)->queue_sort_less(a, b) ? 1 : 0;
    };
  }
  if (pre_filter) {
    desc_.pre_filter = [](void* i, schedhost_cycle_state* cs, const schedhost_pod_view* pod,
                          schedhost_pre_filter_result* res, schedhost_status* st) noexcept -> int32_t {
      Reasons r;
      std::vector<std::string> nodes;
      bool set = false;
      int32_t code = Self(i)->pre_filter(cs, pod, &nodes, &set, r);
      if (set) {
        std::vector<schedhost_str> v;
        v.reserve(nodes.size());
        for (const auto& n : nodes) v.push_back(schedhost_str{n.data(), n.size()});
        HostApi()->pre_filter_result_set_nodes(res, v.data(), v.size());
      }
      return Report(code, r, st);
    };
  }
  if (add_pod) {
    desc_.pre_filter_add_pod = [](void* i, schedhost_cycle_state*, const schedhost_pod_view*,
                                  const schedhost_pod_view* add, const schedhost_node_info_view*,
                                  schedhost_status* st) noexcept -> int32_t {
      Reasons r;
      return Report(Self(i)->add_pod(add, r), r, st);
    };
  }
  if (filter) {
    desc_.filter = [](void* i, const schedhost_cycle_state* cs, const schedhost_pod_view* pod,
                      const schedhost_node_info_view* ni, schedhost_status* st) noexcept -> int32_t {
      Reasons r;
      return Report(Self(i)->filter(cs, pod, ni, r), r, st);
    };
  }
  if (filter_batch) {
    desc_.filter_batch = [](void* i, const schedhost_cycle_state*, const schedhost_pod_view*,
                            const schedhost_node_info_view* const* nodes, size_t n, size_t* passed,
                            schedhost_status* st) noexcept -> int32_t {
      Reasons r;
      return Report(Self(i)->filter_batch(nodes, n, passed, r), r, st);
    };
  }
  if (score_batch) {
    desc_.score_batch = [](void* i, const schedhost_cycle_state*, const schedhost_pod_view*,
                           const schedhost_node_info_view* const* nodes, size_t n, int64_t* scores,
                           schedhost_status* st) noexcept -> int32_t {
      Reasons r;
      return Report(Self(i)->score_batch(nodes, n, scores, r), r, st);
    };
  }
  if (post_filter) {
    desc_.post_filter = [](void* i, schedhost_cycle_state*, const schedhost_pod_view*,
                           const schedhost_node_status_map* m, schedhost_post_filter_result* res,
                           schedhost_status* st) noexcept -> int32_t {
      Reasons r;
      std::string nominated;
      int32_t code = Self(i)->post_filter(m, &nominated, r);
      if (!nominated.empty()) {
        HostApi()->post_filter_result_set_nominated_node(res, schedhost_str{nominated.data(), nominated.size()});
      }
      return Report(code, r, st);
    };
  }
  if (pre_score) {
    desc_.pre_score = [](void* i, schedhost_cycle_state* cs, const schedhost_pod_view*,
                         const schedhost_node_info_view* const*, size_t n, schedhost_status* st) noexcept -> int32_t {
      Reasons r;
      return Report(Self(i)->pre_score(cs, n, r), r, st);
    };
  }
  if (score) {
    desc_.score = [](void* i, const schedhost_cycle_state*, const schedhost_pod_view*,
                     const schedhost_node_info_view* ni, int64_t* s, schedhost_status* st) noexcept -> int32_t {
      Reasons r;
      return Report(Self(i)->score(ni, s, r), r, st);
    };
  }
  if (normalize_score) {
    desc_.normalize_score = [](void* i, const schedhost_cycle_state*, const schedhost_pod_view*,
                               schedhost_node_score* s, size_t n, schedhost_status* st) noexcept -> int32_t {
      Reasons r;
      return Report(Self(i)->normalize_score(s, n, r), r, st);
    };
  }
  if (reserve) {
    desc_.reserve = [](void* i, schedhost_cycle_state*, const schedhost_pod_view*, schedhost_str node,
                       schedhost_status* st) noexcept -> int32_t {
      Reasons r;
      return Report(Self(i)->reserve(View(node), r), r, st);
    };
    desc_.unreserve = [](void* i, schedhost_cycle_state*, const schedhost_pod_view*, schedhost_str node) noexcept {
      if (Self(i)->unreserve) Self(i)->unreserve(View(node));
    };
  }
  if (permit) {
    desc_.permit = [](void* i, schedhost_cycle_state*, const schedhost_pod_view*, schedhost_str node,
                      int64_t* timeout, schedhost_status* st) noexcept -> int32_t {
      Reasons r;
      return Report(Self(i)->permit(View(node), timeout, r), r, st);
    };
  }
  if (pre_bind) {
    desc_.pre_bind = [](void* i, schedhost_cycle_state*, const schedhost_pod_view*, schedhost_str node,
                        schedhost_status* st) noexcept -> int32_t {
      Reasons r;
      return Report(Self(i)->pre_bind(View(node), r), r, st);
    };
  }
  if (bind) {
    desc_.bind = [](void* i, schedhost_cycle_state*, const schedhost_pod_view*, schedhost_str node,
                    schedhost_status* st) noexcept -> int32_t {
      Reasons r;
      return Report(Self(i)->bind(View(node), r), r, st);
    };
  }
  if (post_bind) {
    desc_.post_bind = [](void* i, schedhost_cycle_state*, const schedhost_pod_view*, schedhost_str node) noexcept {
      Self(i)->post_bind(View(node));
    };
  }
  {
    std::lock_guard<std::mutex> lock(g_mu);
    Owners()[&desc_] = this;
  }
  return &desc_;
}

}  // namespace schedhost::framework::testing
