// The host function table: what plugins may ask of the host (plugin.h, schedhost_host_api).
// Every function is noexcept and NULL-safe; none takes a host lock while calling plugin code.
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <string_view>

#include "host/cache/node_info.h"
#include "host/framework/cycle_state.h"
#include "host/framework/framework.h"
#include "host/framework/plugin_instance.h"
#include "host/framework/selectors.h"
#include "host/model/interner.h"

namespace schedhost::framework {
namespace {

constexpr schedhost_str Lit(std::string_view s) { return schedhost_str{s.data(), s.size()}; }

void StatusAddReason(schedhost_status* status, schedhost_str reason) noexcept {
  if (status == nullptr) return;
  try {
    StatusSink::From(status)->reasons.push_back(Text::Intern(View(reason)));
  } catch (...) {
  }
}

void Log(schedhost_host* host, int32_t level, schedhost_str message) noexcept {
  try {
    std::string_view plugin = (host && host->plugin) ? std::string_view(host->plugin->name) : "?";
    auto lvl = spdlog::level::info;
    switch (level) {
      case SCHEDHOST_LOG_TRACE: lvl = spdlog::level::trace; break;
      case SCHEDHOST_LOG_DEBUG: lvl = spdlog::level::debug; break;
      case SCHEDHOST_LOG_INFO: lvl = spdlog::level::info; break;
      case SCHEDHOST_LOG_WARN: lvl = spdlog::level::warn; break;
      default: lvl = spdlog::level::err; break;
    }
    spdlog::log(lvl, "[plugin {}] {}", plugin, View(message));
  } catch (...) {
  }
}

void* Alloc(size_t size) noexcept {
  size_t rounded = (size + 15) / 16 * 16;
  return std::aligned_alloc(16, rounded == 0 ? 16 : rounded);
}

void Free(void* p) noexcept { std::free(p); }

schedhost_id Intern(schedhost_host*, schedhost_str s) noexcept {
  try {
    return model::Interner::Global().Intern(View(s));
  } catch (...) {
    return 0;
  }
}

schedhost_id LookupId(schedhost_host*, schedhost_str s) noexcept {
  return model::Interner::Global().Lookup(View(s));
}

schedhost_str IdString(schedhost_host*, schedhost_id id) noexcept {
  std::string_view s = model::Interner::Global().Str(id);
  return schedhost_str{s.data(), s.size()};
}

int32_t CycleStateWrite(schedhost_cycle_state* state, schedhost_id key, void* data,
                        schedhost_state_destroy_fn destroy, schedhost_state_clone_fn clone) noexcept {
  if (state == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  try {
    CycleState::From(state)->Write(key, data, destroy, clone);
    return SCHEDHOST_OK;
  } catch (...) {
    return SCHEDHOST_E_INTERNAL;
  }
}

int32_t CycleStateRead(const schedhost_cycle_state* state, schedhost_id key, void** out) noexcept {
  if (state == nullptr || out == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  return CycleState::From(state)->Read(key, out) ? SCHEDHOST_OK : SCHEDHOST_E_NOT_FOUND;
}

int32_t CycleStateDelete(schedhost_cycle_state* state, schedhost_id key) noexcept {
  if (state == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  CycleState::From(state)->Delete(key);
  return SCHEDHOST_OK;
}

const cache::Snapshot* SnapshotOf(schedhost_host* host) {
  return (host && host->framework) ? host->framework->snapshot() : nullptr;
}

size_t SnapshotNodeCount(schedhost_host* host) noexcept {
  const auto* s = SnapshotOf(host);
  return s ? s->size() : 0;
}

const schedhost_node_info_view* SnapshotNodeAt(schedhost_host* host, size_t index) noexcept {
  const auto* s = SnapshotOf(host);
  return (s && index < s->size()) ? s->views()[index] : nullptr;
}

const schedhost_node_info_view* SnapshotGet(schedhost_host* host, schedhost_str name) noexcept {
  const auto* s = SnapshotOf(host);
  if (s == nullptr) return nullptr;
  const cache::NodeInfo* ni = s->Get(View(name));
  return ni ? ni->view() : nullptr;
}

int32_t SnapshotWithAffinity(schedhost_host* host, const schedhost_node_info_view* const** out,
                             size_t* len) noexcept {
  const auto* s = SnapshotOf(host);
  if (out == nullptr || len == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  if (s == nullptr) {
    *out = nullptr;
    *len = 0;
    return SCHEDHOST_OK;
  }
  *out = s->have_pods_with_affinity().data();
  *len = s->have_pods_with_affinity().size();
  return SCHEDHOST_OK;
}

int32_t SnapshotWithAntiAffinity(schedhost_host* host, const schedhost_node_info_view* const** out,
                                 size_t* len) noexcept {
  const auto* s = SnapshotOf(host);
  if (out == nullptr || len == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  if (s == nullptr) {
    *out = nullptr;
    *len = 0;
    return SCHEDHOST_OK;
  }
  *out = s->have_pods_with_required_anti_affinity().data();
  *len = s->have_pods_with_required_anti_affinity().size();
  return SCHEDHOST_OK;
}

int32_t PreFilterSetNodes(schedhost_pre_filter_result* result, const schedhost_str* names,
                          size_t len) noexcept {
  if (result == nullptr || (names == nullptr && len > 0)) return SCHEDHOST_E_INVALID_ARGUMENT;
  try {
    auto* sink = reinterpret_cast<PreFilterResultSink*>(result);
    sink->set = true;
    sink->nodes.clear();
    for (size_t i = 0; i < len; ++i) sink->nodes.emplace_back(View(names[i]));
    return SCHEDHOST_OK;
  } catch (...) {
    return SCHEDHOST_E_INTERNAL;
  }
}

int32_t PostFilterSetNominated(schedhost_post_filter_result* result, schedhost_str node) noexcept {
  if (result == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  try {
    reinterpret_cast<PostFilterResultSink*>(result)->nominated_node.assign(View(node));
    return SCHEDHOST_OK;
  } catch (...) {
    return SCHEDHOST_E_INTERNAL;
  }
}

size_t NodeStatusCount(const schedhost_node_status_map* map) noexcept {
  if (map == nullptr) return 0;
  const auto* m = reinterpret_cast<const NodeStatusMapView*>(map);
  return m->statuses ? m->statuses->size() : 0;
}

int32_t NodeStatusAt(const schedhost_node_status_map* map, size_t index, schedhost_str* node,
                     int32_t* code, schedhost_str* message) noexcept {
  if (map == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  const auto* m = reinterpret_cast<const NodeStatusMapView*>(map);
  if (m->statuses == nullptr || index >= m->statuses->size()) return SCHEDHOST_E_OUT_OF_RANGE;
  const auto& [name, status] = (*m->statuses)[index];
  if (node) *node = schedhost_str{name.data(), name.size()};
  if (code) *code = static_cast<int32_t>(status.code);
  if (message) {
    const std::string& msg = m->Message(index);
    *message = schedhost_str{msg.data(), msg.size()};
  }
  return SCHEDHOST_OK;
}

int32_t LabelSelectorMatchesFn(schedhost_host*, const schedhost_label_selector* sel,
                               schedhost_labels labels) noexcept {
  return LabelSelectorMatches(sel, labels) ? 1 : 0;
}

int32_t NodeSelectorTermMatchesFn(schedhost_host*, const schedhost_node_selector_term* term,
                                  const schedhost_node_view* node) noexcept {
  return (term && node && NodeSelectorTermMatches(*term, *node)) ? 1 : 0;
}

// --- Nominator and waiting pods. ---

int32_t NominatedPodsForNode(schedhost_host* host, schedhost_str node,
                             const schedhost_pod_view* const** out, size_t* len) noexcept {
  if (out == nullptr || len == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  *out = nullptr;
  *len = 0;
  if (host == nullptr || host->framework == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  try {
    auto pods = host->framework->NominatedPodsForNode(View(node));
    const size_t n = pods.size();
    *out = host->framework->scratch().KeepPods(std::move(pods));
    *len = n;
    return SCHEDHOST_OK;
  } catch (...) {
    return SCHEDHOST_E_INTERNAL;
  }
}

int32_t WaitingPodsIterate(schedhost_host* host, int32_t (*fn)(void*, schedhost_waiting_pod*),
                           void* user) noexcept {
  if (host == nullptr || host->framework == nullptr || fn == nullptr) {
    return SCHEDHOST_E_INVALID_ARGUMENT;
  }
  try {
    host->framework->waiting_pods().Iterate(
        [&](WaitingPod& wp) { return fn(user, wp.handle()) == 0; });
    return SCHEDHOST_OK;
  } catch (...) {
    return SCHEDHOST_E_INTERNAL;
  }
}

schedhost_waiting_pod* WaitingPodGet(schedhost_host* host, schedhost_str uid) noexcept {
  if (host == nullptr || host->framework == nullptr) return nullptr;
  try {
    auto wp = host->framework->waiting_pods().Get(View(uid));
    return wp ? wp->handle() : nullptr;
  } catch (...) {
    return nullptr;
  }
}

const schedhost_pod_view* WaitingPodPod(schedhost_waiting_pod* handle) noexcept {
  try {
    // The pod outlives the wait: the binding cycle that owns it keeps it until it ends.
    auto wp = WaitingPods::FromHandle(handle);
    return wp ? wp->pod()->view() : nullptr;
  } catch (...) {
    return nullptr;
  }
}

int32_t WaitingPodAllow(schedhost_waiting_pod* handle, schedhost_str plugin) noexcept {
  try {
    auto wp = WaitingPods::FromHandle(handle);
    if (!wp) return SCHEDHOST_E_NOT_FOUND;
    return wp->Allow(View(plugin)) ? SCHEDHOST_OK : SCHEDHOST_E_NOT_FOUND;
  } catch (...) {
    return SCHEDHOST_E_INTERNAL;
  }
}

int32_t WaitingPodReject(schedhost_waiting_pod* handle, schedhost_str plugin,
                         schedhost_str message) noexcept {
  try {
    auto wp = WaitingPods::FromHandle(handle);
    if (!wp) return SCHEDHOST_E_NOT_FOUND;
    return wp->Reject(View(plugin), View(message)) ? SCHEDHOST_OK : SCHEDHOST_E_NOT_FOUND;
  } catch (...) {
    return SCHEDHOST_E_INTERNAL;
  }
}

int32_t RunFilterWithNominated(schedhost_host* host, schedhost_cycle_state* state,
                               const schedhost_pod_view* pod, const schedhost_node_info_view* ni,
                               schedhost_status* status) noexcept {
  if (host == nullptr || host->framework == nullptr || state == nullptr || pod == nullptr ||
      ni == nullptr) {
    StatusAddReason(status, Lit("run_filter_plugins_with_nominated_pods: a required argument is "
                                "NULL"));
    return SCHEDHOST_ERROR;
  }
  try {
    Status s = host->framework->RunFilterPluginsWithNominatedPods(*CycleState::From(state), pod, ni);
    for (const auto& r : s.reasons) StatusAddReason(status, schedhost_str{r.data(), r.size()});
    return static_cast<int32_t>(s.code);
  } catch (const std::exception& e) {
    StatusAddReason(status, schedhost_str{e.what(), std::strlen(e.what())});
    return SCHEDHOST_ERROR;
  }
}

// --- Simulation on node-info copies. ---

}  // namespace
}  // namespace schedhost::framework

/// schedhost_node_info_copy is a NodeInfo a plugin owns (node_info_copy / _destroy).
struct schedhost_node_info_copy {
  schedhost::cache::NodeInfo info;
};

namespace schedhost::framework {
namespace {

schedhost_node_info_copy* NodeInfoCopy(schedhost_host*,
                                       const schedhost_node_info_view* ni) noexcept {
  const cache::NodeInfo* source = cache::NodeInfo::FromView(ni);
  if (source == nullptr) return nullptr;  // NULL, or not a node info the host made
  try {
    auto* copy = new schedhost_node_info_copy{cache::NodeInfo(*source)};
    return copy;
  } catch (...) {
    return nullptr;
  }
}

const schedhost_node_info_view* NodeInfoCopyView(schedhost_node_info_copy* copy) noexcept {
  return copy == nullptr ? nullptr : copy->info.view();
}

int32_t NodeInfoCopyAddPod(schedhost_node_info_copy* copy, const schedhost_pod_view* pod) noexcept {
  if (copy == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  const model::Pod* p = model::Pod::FromView(pod);
  if (p == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;  // NULL, or not a pod the host made
  try {
    // Non-owning: plugin.h promises pod views for the whole cycle, and a copy must not outlive
    // the cycle its pods came from.
    copy->info.AddPod(std::shared_ptr<const model::Pod>(std::shared_ptr<const model::Pod>(), p));
    return SCHEDHOST_OK;
  } catch (...) {
    return SCHEDHOST_E_INTERNAL;
  }
}

int32_t NodeInfoCopyRemovePod(schedhost_node_info_copy* copy,
                              const schedhost_pod_view* pod) noexcept {
  if (copy == nullptr || pod == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  try {
    return copy->info.RemovePod(View(pod->uid)) ? SCHEDHOST_OK : SCHEDHOST_E_NOT_FOUND;
  } catch (...) {
    return SCHEDHOST_E_INTERNAL;
  }
}

void NodeInfoCopyDestroy(schedhost_node_info_copy* copy) noexcept { delete copy; }

schedhost_cycle_state* CycleStateClone(const schedhost_cycle_state* state) noexcept {
  if (state == nullptr) return nullptr;
  try {
    return CycleState::From(state)->Clone().release()->abi();
  } catch (...) {
    return nullptr;
  }
}
void CycleStateDestroy(schedhost_cycle_state* state) noexcept {
  delete CycleState::From(state);
}

// --- Cluster objects and actions, through the ClusterAccess the host installed. ---

ClusterAccess* AccessOf(schedhost_host* host) {
  return (host && host->framework) ? host->framework->cluster_access() : nullptr;
}

void AddReasons(schedhost_status* status, const Status& s) {
  for (const auto& r : s.reasons) StatusAddReason(status, schedhost_str{r.data(), r.size()});
}

int32_t ListPdbs(schedhost_host* host, const schedhost_pdb_view* const** out,
                 size_t* len) noexcept {
  if (out == nullptr || len == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  *out = nullptr;
  *len = 0;
  if (host == nullptr || host->framework == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  ClusterAccess* access = AccessOf(host);
  if (access == nullptr) return SCHEDHOST_E_NOT_AVAILABLE;
  try {
    std::vector<PdbState> pdbs = access->ListPdbs();
    *out = host->framework->scratch().KeepPdbs(pdbs);
    *len = pdbs.size();
    return SCHEDHOST_OK;
  } catch (...) {
    return SCHEDHOST_E_INTERNAL;
  }
}

int32_t GetPriorityClass(schedhost_host* host, schedhost_str name,
                         const schedhost_priority_class_view** out) noexcept {
  if (out == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  *out = nullptr;
  if (host == nullptr || host->framework == nullptr || name.len == 0) {
    return SCHEDHOST_E_INVALID_ARGUMENT;
  }
  ClusterAccess* access = AccessOf(host);
  if (access == nullptr) return SCHEDHOST_E_NOT_AVAILABLE;
  try {
    auto pc = access->GetPriorityClass(View(name));
    if (!pc) return SCHEDHOST_E_NOT_FOUND;
    // PriorityClass objects are immutable and kept alive by the store until replaced; the view
    // of a replaced one is kept alive by the scratch of this cycle.
    *out = pc->view();
    host->framework->scratch().KeepObject(std::move(pc));
    return SCHEDHOST_OK;
  } catch (...) {
    return SCHEDHOST_E_INTERNAL;
  }
}

int32_t EvictPod(schedhost_host* host, const schedhost_pod_view* victim,
                 const schedhost_pod_view* preemptor, schedhost_str reason) noexcept {
  if (host == nullptr || host->framework == nullptr || victim == nullptr) {
    return SCHEDHOST_E_INVALID_ARGUMENT;
  }
  ClusterAccess* access = AccessOf(host);
  if (access == nullptr) return SCHEDHOST_E_NOT_AVAILABLE;
  try {
    Status s = access->EvictPod(host->plugin ? std::string_view(host->plugin->name) : "", victim,
                                preemptor, View(reason));
    if (s.ok()) return SCHEDHOST_OK;
    spdlog::warn("[plugin {}] evict_pod: {}", host->plugin ? host->plugin->name : "?", s.Message());
    return SCHEDHOST_E_NOT_FOUND;
  } catch (...) {
    return SCHEDHOST_E_INTERNAL;
  }
}

int32_t SetNominatedNode(schedhost_host* host, const schedhost_pod_view* pod,
                         schedhost_str node) noexcept {
  if (host == nullptr || host->framework == nullptr || pod == nullptr) {
    return SCHEDHOST_E_INVALID_ARGUMENT;
  }
  ClusterAccess* access = AccessOf(host);
  if (access == nullptr) return SCHEDHOST_E_NOT_AVAILABLE;
  try {
    Status s = access->SetNominatedNode(pod, View(node));
    if (s.ok()) return SCHEDHOST_OK;
    spdlog::warn("[plugin {}] set_nominated_node: {}", host->plugin ? host->plugin->name : "?",
                 s.Message());
    return SCHEDHOST_E_NOT_FOUND;
  } catch (...) {
    return SCHEDHOST_E_INTERNAL;
  }
}

int32_t BindPod(schedhost_host* host, const schedhost_pod_view* pod, schedhost_str node,
                schedhost_status* status) noexcept {
  if (host == nullptr || host->framework == nullptr || pod == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  const auto& bind = host->framework->binder();
  if (!bind) {
    StatusAddReason(status, Lit("bind_pod: this host has no cluster state to bind to"));
    return SCHEDHOST_E_NOT_AVAILABLE;
  }
  try {
    Status s = bind(pod, View(node));
    if (s.ok()) return SCHEDHOST_OK;
    for (const auto& r : s.reasons) StatusAddReason(status, schedhost_str{r.data(), r.size()});
    return SCHEDHOST_E_INTERNAL;
  } catch (const std::exception& e) {
    StatusAddReason(status, schedhost_str{e.what(), std::strlen(e.what())});
    return SCHEDHOST_E_INTERNAL;
  }
}
// Statuses reads the node status map PostFilter was given back into host statuses.
const NodeStatuses* StatusesOf(const schedhost_node_status_map* m) {
  return m == nullptr ? nullptr : reinterpret_cast<const NodeStatusMapView*>(m)->statuses;
}

int32_t Preempt(schedhost_host* host, schedhost_cycle_state* state, const schedhost_pod_view* pod,
                const schedhost_node_status_map* statuses,
                const schedhost_preemption_callbacks* callbacks,
                schedhost_post_filter_result* result, schedhost_status* status) noexcept {
  if (host == nullptr || host->framework == nullptr || state == nullptr || pod == nullptr ||
      StatusesOf(statuses) == nullptr) {
    StatusAddReason(status, Lit("preempt: host, state, pod and statuses must not be NULL"));
    return SCHEDHOST_ERROR;
  }
  ClusterAccess* access = AccessOf(host);
  if (access == nullptr) {
    StatusAddReason(status, Lit("preempt is not available in this host (no cluster state)"));
    return SCHEDHOST_ERROR;
  }
  try {
    PreemptOutcome o =
        access->Preempt(host->plugin ? std::string_view(host->plugin->name) : "", *host->framework,
                        *CycleState::From(state), pod, *StatusesOf(statuses), callbacks);
    if (result != nullptr && !o.nominated_node.empty()) {
      reinterpret_cast<PostFilterResultSink*>(result)->nominated_node = o.nominated_node;
    }
    AddReasons(status, o.status);
    return static_cast<int32_t>(o.status.code);
  } catch (const std::exception& e) {
    StatusAddReason(status, schedhost_str{e.what(), std::strlen(e.what())});
    return SCHEDHOST_ERROR;
  }
}

int32_t FindCandidates(schedhost_host* host, schedhost_cycle_state* state,
                       const schedhost_pod_view* pod, const schedhost_node_status_map* statuses,
                       const schedhost_preemption_callbacks* callbacks,
                       int32_t (*fn)(void*, const schedhost_candidate*), void* user) noexcept {
  if (host == nullptr || host->framework == nullptr || state == nullptr || pod == nullptr ||
      StatusesOf(statuses) == nullptr || fn == nullptr) {
    return SCHEDHOST_E_INVALID_ARGUMENT;
  }
  ClusterAccess* access = AccessOf(host);
  if (access == nullptr) return SCHEDHOST_E_NOT_AVAILABLE;
  try {
    Status s = access->FindCandidates(*host->framework, *CycleState::From(state), pod,
                                      *StatusesOf(statuses), callbacks, fn, user);
    return s.ok() ? SCHEDHOST_OK : SCHEDHOST_E_INTERNAL;
  } catch (...) {
    return SCHEDHOST_E_INTERNAL;
  }
}

// --- Appended in abi 1.1. ---

int32_t NamespaceLabels(schedhost_host* host, schedhost_id namespace_id,
                        schedhost_labels* out) noexcept {
  if (out == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  *out = schedhost_labels{nullptr, 0};
  const auto* s = SnapshotOf(host);
  const model::Namespace* ns = s ? s->GetNamespace(namespace_id) : nullptr;
  if (ns == nullptr) return SCHEDHOST_E_NOT_FOUND;
  *out = ns->labels();
  return SCHEDHOST_OK;
}

schedhost_host_api MakeApi() {
  schedhost_host_api a{};
  a.struct_size = sizeof(schedhost_host_api);
  a.abi_major = SCHEDHOST_ABI_MAJOR;
  a.abi_minor = SCHEDHOST_ABI_MINOR;
  a.status_add_reason = &StatusAddReason;
  a.log = &Log;
  a.alloc = &Alloc;
  a.free = &Free;
  a.intern = &Intern;
  a.lookup_id = &LookupId;
  a.id_string = &IdString;
  a.cycle_state_write = &CycleStateWrite;
  a.cycle_state_read = &CycleStateRead;
  a.cycle_state_delete = &CycleStateDelete;
  a.config_kind = &config::ConfigKind;
  a.config_get = &config::ConfigGet;
  a.config_len = &config::ConfigLen;
  a.config_at = &config::ConfigAt;
  a.config_string = &config::ConfigString;
  a.config_int = &config::ConfigInt;
  a.config_float = &config::ConfigFloat;
  a.config_bool = &config::ConfigBool;
  a.config_location = &config::ConfigLocation;
  a.snapshot_node_count = &SnapshotNodeCount;
  a.snapshot_node_at = &SnapshotNodeAt;
  a.snapshot_get = &SnapshotGet;
  a.snapshot_have_pods_with_affinity = &SnapshotWithAffinity;
  a.snapshot_have_pods_with_required_anti_affinity = &SnapshotWithAntiAffinity;
  a.pre_filter_result_set_nodes = &PreFilterSetNodes;
  a.post_filter_result_set_nominated_node = &PostFilterSetNominated;
  a.node_status_count = &NodeStatusCount;
  a.node_status_at = &NodeStatusAt;
  a.label_selector_matches = &LabelSelectorMatchesFn;
  a.node_selector_term_matches = &NodeSelectorTermMatchesFn;
  a.nominated_pods_for_node = &NominatedPodsForNode;
  a.waiting_pods_iterate = &WaitingPodsIterate;
  a.waiting_pod_get = &WaitingPodGet;
  a.waiting_pod_pod = &WaitingPodPod;
  a.waiting_pod_allow = &WaitingPodAllow;
  a.waiting_pod_reject = &WaitingPodReject;
  a.node_info_copy = &NodeInfoCopy;
  a.node_info_copy_view = &NodeInfoCopyView;
  a.node_info_copy_add_pod = &NodeInfoCopyAddPod;
  a.node_info_copy_remove_pod = &NodeInfoCopyRemovePod;
  a.node_info_copy_destroy = &NodeInfoCopyDestroy;
  a.run_filter_plugins_with_nominated_pods = &RunFilterWithNominated;
  a.cycle_state_clone = &CycleStateClone;
  a.cycle_state_destroy = &CycleStateDestroy;
  a.list_pdbs = &ListPdbs;
  a.get_priority_class = &GetPriorityClass;
  a.evict_pod = &EvictPod;
  a.set_nominated_node = &SetNominatedNode;
  a.bind_pod = &BindPod;
  a.preempt = &Preempt;
  a.find_candidates = &FindCandidates;
  a.namespace_labels = &NamespaceLabels;
  a.config_key_location = &config::ConfigKeyLocation;
  FillObjectEntries(&a);
  return a;
}

}  // namespace

const std::string& NodeStatusMapView::Message(size_t index) const {
  std::call_once(joined_, [this] {
    messages_.reserve(statuses->size());
    for (const auto& entry : *statuses) messages_.push_back(entry.second.Message());
  });
  return messages_[index];
}

const schedhost_host_api* HostApi() {
  static const schedhost_host_api api = MakeApi();
  return &api;
}

}  // namespace schedhost::framework
