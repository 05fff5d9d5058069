// schedhost C++ plugin SDK: a header-only wrapper over the C ABI in plugin.h.
//
// A plugin is one class deriving from schedhost::Plugin and from the interface of each
// extension point it implements. The SCHEDHOST_PLUGIN_LIBRARY macro exports the library's
// entry symbol, writes its manifest, and turns every exception into an Error status, so no
// C++ type or exception ever crosses the ABI.
//
//   class Hello final : public schedhost::Plugin, public schedhost::FilterPlugin {
//    public:
//     static constexpr std::string_view kName = "Hello";
//     static constexpr std::string_view kVersion = "1.0.0";
//     Hello(const schedhost::Host& host, const schedhost::Args& args) : Plugin(host) {}
//     schedhost::Status Filter(const schedhost::CycleState&, const schedhost::Pod& pod,
//                              const schedhost::NodeInfo& ni) override {
//       if (ni.node().labels().Has(host().Intern("hello"))) return {};
//       return schedhost::Status::Unschedulable("node(s) did not say hello");
//     }
//   };
//   SCHEDHOST_PLUGIN_LIBRARY(Hello)
#pragma once

#include <schedhost/args.hpp>
#include <schedhost/plugin.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace schedhost {

// ---------------------------------------------------------------------------------------------
// Basics
// ---------------------------------------------------------------------------------------------

/// Id is an interned string id (see schedhost_id).
using Id = schedhost_id;

/// ToStr views a std::string_view as an ABI string (no copy).
inline schedhost_str ToStr(std::string_view s) noexcept { return {s.data(), s.size()}; }
/// ToView views an ABI string as a std::string_view (no copy).
inline std::string_view ToView(schedhost_str s) noexcept {
  return s.len == 0 ? std::string_view{} : std::string_view{s.data, s.len};
}

/// Code is the framework's status code.
enum class Code : int32_t {
  kSuccess = SCHEDHOST_SUCCESS,
  kError = SCHEDHOST_ERROR,
  kUnschedulable = SCHEDHOST_UNSCHEDULABLE,
  kUnschedulableAndUnresolvable = SCHEDHOST_UNSCHEDULABLE_AND_UNRESOLVABLE,
  kWait = SCHEDHOST_WAIT,
  kSkip = SCHEDHOST_SKIP,
  kPending = SCHEDHOST_PENDING,
};

/// Status is an extension point's result: a code and the reasons behind it. Success carries no
/// reasons and allocates nothing.
class Status {
 public:
  Status() = default;
  Status(Code code, std::vector<std::string> reasons) : code_(code), reasons_(std::move(reasons)) {}
  Status(Code code, std::string reason) : code_(code) { reasons_.push_back(std::move(reason)); }

  static Status Success() { return {}; }
  static Status Error(std::string msg) { return {Code::kError, std::move(msg)}; }
  static Status Unschedulable(std::string reason) { return {Code::kUnschedulable, std::move(reason)}; }
  static Status UnschedulableAndUnresolvable(std::string reason) {
    return {Code::kUnschedulableAndUnresolvable, std::move(reason)};
  }
  static Status Wait() { return Status(Code::kWait, std::vector<std::string>{}); }
  static Status Skip() { return Status(Code::kSkip, std::vector<std::string>{}); }
  static Status Pending(std::string reason) { return {Code::kPending, std::move(reason)}; }

  /// Static is a reason whose text outlives the Status (a literal, a constexpr string_view, a
  /// string the plugin instance keeps). A status made from one allocates nothing: worth it for
  /// a rejection given once per node.
  struct Static {
    std::string_view text;
  };
  Status(Code code, Static reason) noexcept : code_(code), static_reason_(reason.text) {}
  static Status Unschedulable(Static reason) noexcept { return {Code::kUnschedulable, reason}; }
  static Status UnschedulableAndUnresolvable(Static reason) noexcept {
    return {Code::kUnschedulableAndUnresolvable, reason};
  }

  Code code() const noexcept { return code_; }
  bool ok() const noexcept { return code_ == Code::kSuccess; }
  /// reasons lists the reasons in order. A static reason is copied into the list the first
  /// time it is asked for.
  const std::vector<std::string>& reasons() const {
    if (!static_reason_.empty()) {
      reasons_.insert(reasons_.begin(), std::string(static_reason_));
      static_reason_ = {};
    }
    return reasons_;
  }
  /// ForEachReason calls `f(std::string_view)` on each reason in order, copying none.
  template <class F>
  void ForEachReason(F&& f) const {
    if (!static_reason_.empty()) f(static_reason_);
    for (const auto& r : reasons_) f(std::string_view(r));
  }
  /// AddReason appends one more reason (e.g. "Insufficient memory" after "Insufficient cpu").
  Status& AddReason(std::string reason) {
    reasons();  // a static reason stays first
    reasons_.push_back(std::move(reason));
    return *this;
  }

 private:
  Code code_ = Code::kSuccess;
  // Made lazily from static_reason_ by reasons(); otherwise what the constructors and
  // AddReason gave. static_reason_ is empty once copied in.
  mutable std::vector<std::string> reasons_;
  mutable std::string_view static_reason_;
};

// ---------------------------------------------------------------------------------------------
// Views
// ---------------------------------------------------------------------------------------------

/// Labels is a sorted label set of interned (key, value) ids.
class Labels {
 public:
  Labels() = default;
  explicit Labels(schedhost_labels raw) noexcept : raw_(raw) {}
  std::span<const schedhost_label> items() const noexcept {
    return raw_.len == 0 ? std::span<const schedhost_label>{}
                         : std::span<const schedhost_label>{raw_.items, raw_.len};
  }
  size_t size() const noexcept { return raw_.len; }
  bool empty() const noexcept { return raw_.len == 0; }
  /// Get returns the value id under `key`, or nullopt.
  std::optional<Id> Get(Id key) const noexcept {
    auto s = items();
    auto it = std::lower_bound(s.begin(), s.end(), key,
                               [](const schedhost_label& l, Id k) { return l.key < k; });
    if (it == s.end() || it->key != key) return std::nullopt;
    return it->value;
  }
  bool Has(Id key) const noexcept { return Get(key).has_value(); }
  schedhost_labels raw() const noexcept { return raw_; }

 private:
  schedhost_labels raw_{};
};

/// Resources is a sorted resource list (cpu in millicores, memory in bytes).
class Resources {
 public:
  Resources() = default;
  explicit Resources(schedhost_resources raw) noexcept : raw_(raw) {}
  std::span<const schedhost_resource> items() const noexcept {
    return raw_.len == 0 ? std::span<const schedhost_resource>{}
                         : std::span<const schedhost_resource>{raw_.items, raw_.len};
  }
  /// Get returns the quantity of `name`, 0 when absent.
  int64_t Get(Id name) const noexcept {
    for (const auto& r : items()) {
      if (r.name == name) return r.value;
      if (r.name > name) break;
    }
    return 0;
  }
  bool Has(Id name) const noexcept {
    for (const auto& r : items())
      if (r.name == name) return true;
    return false;
  }

 private:
  schedhost_resources raw_{};
};

template <class T>
std::span<const T> MakeSpan(const T* p, size_t n) noexcept {
  return n == 0 ? std::span<const T>{} : std::span<const T>{p, n};
}

/// SelectorMatches tells whether `labels` satisfy a label selector (nil matches nothing).
inline bool SelectorMatches(const schedhost_label_selector* sel, const Labels& labels) noexcept {
  if (sel == nullptr) return false;
  for (const auto& req : MakeSpan(sel->requirements, sel->len)) {
    auto v = labels.Get(req.key);
    auto values = MakeSpan(req.values, req.values_len);
    bool in = v && std::find(values.begin(), values.end(), *v) != values.end();
    switch (req.op) {
      case SCHEDHOST_OP_IN:
        if (!in) return false;
        break;
      case SCHEDHOST_OP_NOT_IN:
        if (in) return false;
        break;
      case SCHEDHOST_OP_EXISTS:
        if (!v) return false;
        break;
      case SCHEDHOST_OP_DOES_NOT_EXIST:
        if (v) return false;
        break;
      default:
        return false;  // Gt/Lt are not valid in label selectors
    }
  }
  return true;
}

/// Tolerates applies Kubernetes' toleration rule to one taint: an empty toleration effect matches
/// every effect, an empty key (with Exists) every key; Exists ignores the value, Equal compares it.
inline bool Tolerates(const schedhost_toleration& toleration, const schedhost_taint& taint) noexcept {
  if (toleration.effect != SCHEDHOST_EFFECT_NONE && toleration.effect != taint.effect) return false;
  if (toleration.key != SCHEDHOST_ID_EMPTY && toleration.key != taint.key) return false;
  switch (toleration.op) {
    case SCHEDHOST_TOLERATION_EQUAL: return toleration.value == taint.value;
    case SCHEDHOST_TOLERATION_EXISTS: return true;
    default: return false;
  }
}

/// AnyTolerates tells whether one of `tolerations` tolerates `taint`.
inline bool AnyTolerates(std::span<const schedhost_toleration> tolerations, const schedhost_taint& taint) noexcept {
  for (const auto& t : tolerations) {
    if (Tolerates(t, taint)) return true;
  }
  return false;
}

/// Node is a read-only view of a node.
class Node {
 public:
  explicit Node(const schedhost_node_view* v) noexcept : v_(v) {}
  std::string_view name() const noexcept { return ToView(v_->name); }
  Id name_id() const noexcept { return v_->name_id; }
  bool unschedulable() const noexcept { return v_->unschedulable != 0; }
  Labels labels() const noexcept { return Labels(v_->labels); }
  std::span<const schedhost_taint> taints() const noexcept { return MakeSpan(v_->taints, v_->taints_len); }
  Resources allocatable() const noexcept { return Resources(v_->allocatable); }
  Resources capacity() const noexcept { return Resources(v_->capacity); }
  std::span<const schedhost_node_image> images() const noexcept {
    return MakeSpan(v_->images, v_->images_len);
  }
  const schedhost_node_view* raw() const noexcept { return v_; }

 private:
  const schedhost_node_view* v_;
};

/// Pod is a read-only view of a pod, valid for the cycle that handed it out.
class Pod {
 public:
  explicit Pod(const schedhost_pod_view* v) noexcept : v_(v) {}
  std::string_view name() const noexcept { return ToView(v_->name); }
  std::string_view namespace_name() const noexcept { return ToView(v_->namespace_name); }
  Id namespace_id() const noexcept { return v_->namespace_id; }
  std::string_view uid() const noexcept { return ToView(v_->uid); }
  int32_t priority() const noexcept { return v_->priority; }
  std::string_view scheduler_name() const noexcept { return ToView(v_->scheduler_name); }
  std::string_view node_name() const noexcept { return ToView(v_->node_name); }
  std::string_view nominated_node_name() const noexcept { return ToView(v_->nominated_node_name); }
  int64_t creation_timestamp_ns() const noexcept { return v_->creation_timestamp_ns; }
  Labels labels() const noexcept { return Labels(v_->labels); }
  Labels node_selector() const noexcept { return Labels(v_->node_selector); }
  const schedhost_affinity* affinity() const noexcept { return v_->affinity; }
  std::span<const schedhost_toleration> tolerations() const noexcept {
    return MakeSpan(v_->tolerations, v_->tolerations_len);
  }
  std::span<const schedhost_spread_constraint> spread_constraints() const noexcept {
    return MakeSpan(v_->spread_constraints, v_->spread_constraints_len);
  }
  Resources requests() const noexcept { return Resources(v_->requests); }
  int64_t non_zero_milli_cpu() const noexcept { return v_->non_zero_milli_cpu; }
  int64_t non_zero_memory() const noexcept { return v_->non_zero_memory; }
  std::span<const schedhost_host_port> host_ports() const noexcept {
    return MakeSpan(v_->host_ports, v_->host_ports_len);
  }
  std::span<const schedhost_str> images() const noexcept { return MakeSpan(v_->images, v_->images_len); }
  std::span<const schedhost_str> scheduling_gates() const noexcept {
    return MakeSpan(v_->scheduling_gates, v_->scheduling_gates_len);
  }
  std::span<const schedhost_owner_ref> owner_refs() const noexcept {
    return MakeSpan(v_->owner_refs, v_->owner_refs_len);
  }
  int32_t preemption_policy() const noexcept { return v_->preemption_policy; }
  /// volumes is the pod's volumes with a meaning for scheduling (claims, ephemeral volumes,
  /// in-tree disks; host abi 1.8), as the config tree Host::Volumes wraps; nullptr when the pod
  /// has none or the host is older.
  const schedhost_config* volumes() const noexcept {
    return SCHEDHOST_HAS_FIELD(v_, schedhost_pod_view, volumes) ? v_->volumes : nullptr;
  }
  const schedhost_pod_view* raw() const noexcept { return v_; }

 private:
  const schedhost_pod_view* v_;
};

/// PodList iterates an array of pod view pointers as Pods.
class PodList {
 public:
  PodList(const schedhost_pod_view* const* p, size_t n) noexcept : p_(p), n_(n) {}
  size_t size() const noexcept { return n_; }
  Pod operator[](size_t i) const noexcept { return Pod(p_[i]); }
  struct Iterator {
    const schedhost_pod_view* const* p;
    Pod operator*() const noexcept { return Pod(*p); }
    Iterator& operator++() noexcept { ++p; return *this; }
    bool operator!=(const Iterator& o) const noexcept { return p != o.p; }
  };
  Iterator begin() const noexcept { return {p_}; }
  Iterator end() const noexcept { return {p_ + n_}; }

 private:
  const schedhost_pod_view* const* p_;
  size_t n_;
};

/// NodeInfo is a read-only view of a node with its pods and what they use.
class NodeInfo {
 public:
  explicit NodeInfo(const schedhost_node_info_view* v) noexcept : v_(v) {}
  /// has_node says whether the view carries its node: false for a NodeInfo the host keeps for
  /// pods bound to a node it has not seen (or no longer has), as upstream's NodeInfo.Node() nil.
  /// node() must not be read then.
  bool has_node() const noexcept { return v_->node != nullptr; }
  Node node() const noexcept { return Node(v_->node); }
  PodList pods() const noexcept { return {v_->pods, v_->pods_len}; }
  PodList pods_with_affinity() const noexcept { return {v_->pods_with_affinity, v_->pods_with_affinity_len}; }
  PodList pods_with_required_anti_affinity() const noexcept {
    return {v_->pods_with_required_anti_affinity, v_->pods_with_required_anti_affinity_len};
  }
  Resources requested() const noexcept { return Resources(v_->requested); }
  /// The non-zero requests (from the summary when there is one, like Requested).
  int64_t non_zero_requested_milli_cpu() const noexcept {
    const schedhost_node_summary* s = summary();
    return s != nullptr ? s->non_zero_requested_milli_cpu : v_->non_zero_requested_milli_cpu;
  }
  int64_t non_zero_requested_memory() const noexcept {
    const schedhost_node_summary* s = summary();
    return s != nullptr ? s->non_zero_requested_memory : v_->non_zero_requested_memory;
  }
  std::span<const schedhost_used_port> used_ports() const noexcept {
    return MakeSpan(v_->used_ports, v_->used_ports_len);
  }
  std::span<const schedhost_image_state> image_states() const noexcept {
    return MakeSpan(v_->image_states, v_->image_states_len);
  }
  uint64_t generation() const noexcept { return v_->generation; }
  /// summary returns what Filter and Score read of nearly every node (allocatable and requested
  /// cpu and memory, pod count, flags, taint and image counts), copied into one or two cache
  /// lines (abi 1.3), or nullptr when the host is older or made the view without one: then read
  /// node(), requested() and the rest. A loop over many nodes that reads only the summary reads
  /// a fraction of the memory the view and its arrays take.
  const schedhost_node_summary* summary() const noexcept;
  /// Allocatable is the node's allocatable quantity of `name` and Requested what its pods
  /// request of it (0 when absent or without a node); pod_count is pods().size(). They read the
  /// summary where it has the figure (cpu, memory, pods) and the arrays otherwise, so a loop
  /// over many nodes that asks for those stays within the summary's lines.
  int64_t Allocatable(Id name) const noexcept;
  int64_t Requested(Id name) const noexcept;
  size_t pod_count() const noexcept;
  const schedhost_node_info_view* raw() const noexcept { return v_; }

 private:
  const schedhost_node_info_view* v_;
};

/// NodeInfoList iterates an array of node info view pointers (PreScore's feasible nodes).
class NodeInfoList {
 public:
  NodeInfoList(const schedhost_node_info_view* const* p, size_t n) noexcept : p_(p), n_(n) {}
  size_t size() const noexcept { return n_; }
  NodeInfo operator[](size_t i) const noexcept { return NodeInfo(p_[i]); }

 private:
  const schedhost_node_info_view* const* p_;
  size_t n_;
};

/// QueuedPod is a pod in the scheduling queue, as QueueSort sees it.
class QueuedPod {
 public:
  explicit QueuedPod(const schedhost_queued_pod* q) noexcept : q_(q) {}
  Pod pod() const noexcept { return Pod(q_->pod); }
  int64_t timestamp_ns() const noexcept { return q_->timestamp_ns; }
  int32_t attempts() const noexcept { return q_->attempts; }

 private:
  const schedhost_queued_pod* q_;
};

// ---------------------------------------------------------------------------------------------
// The host
// ---------------------------------------------------------------------------------------------

class CycleState;
class NodeStatusMap;

/// Kind declares an API kind a plugin reads (abi 1.5). A plugin lists its kinds in
///   static constexpr std::array<schedhost::Kind, 1> kKinds = {{
///       {"scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", true}}};
/// and names them by their index there in Host::GetObject and Host::ListObjects. A plugin that
/// evaluates parts of a pod the host does not (sdk 1.7: a volume source, DRA claims) lists them
///   static constexpr std::array<std::string_view, 1> kEvaluates = {
///       "spec.volumes.persistentVolumeClaim"};
/// and pods using those parts are scheduled only by profiles with such a plugin.
struct Kind {
  std::string_view group;     // "" for the core group
  std::string_view version;   // "v1alpha1"
  std::string_view resource;  // "podgroups"
  std::string_view kind;      // "PodGroup"
  bool namespaced = true;
};

/// Host is the framework handle of one plugin instance: interning, logging, the snapshot.
class Host {
 public:
  Host(const schedhost_host_api* api, schedhost_host* host) noexcept : api_(api), host_(host) {}

  const schedhost_host_api* api() const noexcept { return api_; }
  schedhost_host* handle() const noexcept { return host_; }

  Id Intern(std::string_view s) const noexcept { return api_->intern(host_, ToStr(s)); }
  Id LookupId(std::string_view s) const noexcept { return api_->lookup_id(host_, ToStr(s)); }
  std::string_view IdString(Id id) const noexcept { return ToView(api_->id_string(host_, id)); }

  void Log(int32_t level, std::string_view msg) const noexcept { api_->log(host_, level, ToStr(msg)); }

  size_t NodeCount() const noexcept { return api_->snapshot_node_count(host_); }
  std::optional<NodeInfo> NodeAt(size_t i) const noexcept {
    auto* v = api_->snapshot_node_at(host_, i);
    return v ? std::optional<NodeInfo>(NodeInfo(v)) : std::nullopt;
  }
  std::optional<NodeInfo> GetNode(std::string_view name) const noexcept {
    auto* v = api_->snapshot_get(host_, ToStr(name));
    return v ? std::optional<NodeInfo>(NodeInfo(v)) : std::nullopt;
  }
  /// NamespaceLabels returns the labels of the Namespace object `namespace_id` (valid for the
  /// cycle), or nullopt when there is no such object or the host predates abi 1.1.
  std::optional<Labels> NamespaceLabels(Id namespace_id) const noexcept {
    if (!SCHEDHOST_HAS_FIELD(api_, schedhost_host_api, namespace_labels) ||
        api_->namespace_labels == nullptr) {
      return std::nullopt;
    }
    schedhost_labels out{};
    if (api_->namespace_labels(host_, namespace_id, &out) != SCHEDHOST_OK) return std::nullopt;
    return Labels(out);
  }
  bool NodeSelectorTermMatches(const schedhost_node_selector_term& term, const Node& node) const noexcept {
    return api_->node_selector_term_matches(host_, &term, node.raw()) != 0;
  }
  /// BindPod asks the host to bind `pod` to `node` (what a Bind plugin does), from Bind with the
  /// CycleState that call got: the host's reasons for a failure go straight into that call's
  /// status, and the returned Status is then an Error carrying `context` (e.g. "binding pod
  /// ns/name to node n1").
  Status BindPod(const CycleState& state, const Pod& pod, std::string_view node,
                 std::string context = {}) const;
  /// BindPod without the call's CycleState (SDK 1.1): the host's reasons are lost, the returned
  /// Status carries only `context`.
  [[deprecated("pass the Bind call's CycleState: BindPod(state, pod, node, context)")]] Status
  BindPod(const Pod& pod, std::string_view node, std::string context = {}) const {
    return BindPodTo(nullptr, pod, node, std::move(context));
  }

  /// Preempt runs the host's preemption toolkit for `pod` — call it from PostFilter with the
  /// statuses PostFilter got. `callbacks` (may be NULL: upstream's rules) override victim
  /// eligibility, pod eligibility and candidate order, and bound the candidate search. The host
  /// evicts the chosen victims and nominates the node into this PostFilter's result itself; its
  /// reasons go straight into the call's status, so the returned Status carries only the code.
  Status Preempt(CycleState& state, const Pod& pod, const NodeStatusMap& statuses,
                 const schedhost_preemption_callbacks* callbacks = nullptr) const;

  /// FindCandidates runs the toolkit's dry run without acting and calls `fn` for every
  /// candidate (views valid during the call) until it returns false.
  template <class Fn>
  Status FindCandidates(CycleState& state, const Pod& pod, const NodeStatusMap& statuses,
                        const schedhost_preemption_callbacks* callbacks, Fn&& fn) const;

  /// GetObject reads object `namespace_name`/`name` of the declared kind `kind` (its index in
  /// kKinds) as of this cycle, as an Args tree (apiVersion, kind, metadata, spec, status):
  /// ArgsReader::Document(object) decodes it into a struct with the helpers plugin arguments use,
  /// and its errors name the object and the field ("PodGroup team-a/gang: spec.minMember: is
  /// required"). Valid until the cycle ends; copy what you keep. Absent (present() false) when
  /// there is no such object, and when the host cannot tell (*rc says which: SCHEDHOST_OK,
  /// SCHEDHOST_E_NOT_FOUND, SCHEDHOST_E_NOT_AVAILABLE — see KindAvailable — or another error;
  /// hosts older than abi 1.5 answer SCHEDHOST_E_NOT_AVAILABLE).
  Args GetObject(const CycleState& state, uint32_t kind, std::string_view namespace_name,
                 std::string_view name, int32_t* rc = nullptr) const noexcept;
  /// GetObject without a cycle (sdk 1.7, host abi 1.7): from PreEnqueue, QueueSort's Less and
  /// queueing hints, which have no CycleState, it reads the latest objects the host has, the
  /// same for every read until the host's call into the plugin returns (views valid until
  /// then). From PreBind, Bind and PostBind (host abi 1.8) it reads the latest objects at every
  /// call, to see a controller's progress (views valid until the host's call returns). An older
  /// host answers SCHEDHOST_E_NOT_AVAILABLE or SCHEDHOST_E_INVALID_ARGUMENT.
  Args GetObject(uint32_t kind, std::string_view namespace_name, std::string_view name,
                 int32_t* rc = nullptr) const noexcept {
    return ReadObject(nullptr, kind, namespace_name, name, rc);
  }
  /// ListObjects calls `fn(Args object)` for each object of the declared kind `kind` in
  /// `namespace_name` ("": every namespace), ordered by namespace and name, while fn returns
  /// true. Returns SCHEDHOST_OK or GetObject's errors.
  template <class Fn>
  int32_t ListObjects(const CycleState& state, uint32_t kind, std::string_view namespace_name,
                      Fn&& fn) const;
  /// ListObjects without a cycle (sdk 1.7), where GetObject without a cycle may be called.
  template <class Fn>
  int32_t ListObjects(uint32_t kind, std::string_view namespace_name, Fn&& fn) const {
    return ListObjectsIn(nullptr, kind, namespace_name, std::forward<Fn>(fn));
  }
  /// KindRevision returns the revision of the declared kind `kind` as GetObject reads it in
  /// this cycle (host abi 1.9): equal revisions mean the kind's objects are the same, so what
  /// a plugin derived from them may be kept across cycles. nullopt from an older host and when
  /// the kind cannot be read: derive afresh then.
  std::optional<uint64_t> KindRevision(const CycleState& state, uint32_t kind) const noexcept;
  /// Volumes returns `pod`'s volumes that have a meaning for scheduling (persistentVolumeClaim,
  /// ephemeral, the in-tree disks and sources the host does not know), in spec.volumes order,
  /// as an Args array of the entries as the API server serves them; absent when the pod has
  /// none, and from a host older than abi 1.8. Valid as long as the pod view.
  Args Volumes(const Pod& pod) const noexcept { return Args(api_, pod.volumes()); }
  /// KindAvailable is true when the host mirrors the declared kind `kind`; otherwise `why`
  /// (may be null) says why not (the API server does not serve it, RBAC forbids it, an older
  /// host), for an UnschedulableAndUnresolvable status that tells the user.
  bool KindAvailable(uint32_t kind, std::string* why = nullptr) const;
  /// WriteObject writes an object of the declared kind `kind` (abi 1.6): `op` is a
  /// schedhost_write_op, `body` the object or merge patch as JSON text. Returns SCHEDHOST_OK or
  /// the error (SCHEDHOST_E_CONFLICT, _NOT_FOUND, _ALREADY_EXISTS, _FORBIDDEN, _UNAVAILABLE,
  /// ...), with the host's reason in *message (may be null); an older host answers
  /// SCHEDHOST_E_NOT_AVAILABLE. Blocks for the round trip: PreBind, Bind, PostBind, Permit only.
  int32_t WriteObject(uint32_t kind, int32_t op, std::string_view namespace_name,
                      std::string_view name, std::string_view body,
                      std::string* message = nullptr) const noexcept;

 private:
  Status BindPodTo(schedhost_status* status, const Pod& pod, std::string_view node,
                   std::string context) const;
  // ReadObject and ListObjectsIn are GetObject and ListObjects with a cycle (a state) or
  // without one (NULL; abi 1.7).
  Args ReadObject(const schedhost_cycle_state* state, uint32_t kind,
                  std::string_view namespace_name, std::string_view name,
                  int32_t* rc) const noexcept;
  template <class Fn>
  int32_t ListObjectsIn(const schedhost_cycle_state* state, uint32_t kind,
                        std::string_view namespace_name, Fn&& fn) const;

  const schedhost_host_api* api_;
  schedhost_host* host_;
};

/// CycleState is the per-cycle storage shared by a profile's plugins, keyed by interned id.
class CycleState {
 public:
  /// The SDK makes one per extension-point call. `call_status` is the call's status sink and
  /// `post_filter_result` PostFilter's result, for the host calls that report into them
  /// (Host::BindPod, Host::Preempt); both NULL elsewhere. (Carried here rather than in a
  /// thread_local, so a plugin library has no TLS of its own to allocate per thread.)
  CycleState(const schedhost_host_api* api, const schedhost_cycle_state* s,
             schedhost_status* call_status = nullptr,
             schedhost_post_filter_result* post_filter_result = nullptr) noexcept
      : api_(api),
        s_(const_cast<schedhost_cycle_state*>(s)),
        call_status_(call_status),
        post_filter_result_(post_filter_result) {}

  /// Write stores `value` under `key`; copyable values are cloned for preemption simulation.
  template <class V>
  void Write(Id key, std::unique_ptr<V> value) {
    schedhost_state_clone_fn clone = nullptr;
    if constexpr (std::is_copy_constructible_v<V>) {
      clone = [](const void* p) noexcept -> void* {
        try {
          return new V(*static_cast<const V*>(p));
        } catch (...) {
          return nullptr;
        }
      };
    }
    int32_t rc = api_->cycle_state_write(
        s_, key, value.get(), [](void* p) noexcept { delete static_cast<V*>(p); }, clone);
    if (rc != SCHEDHOST_OK) throw std::runtime_error("cycle_state_write failed");
    value.release();
  }
  /// Unchanging marks a state the host does not change while this object lives (a batched
  /// Filter or Score call): Read answers a repeated key without calling into the host.
  struct Unchanging {};
  CycleState(const schedhost_host_api* api, const schedhost_cycle_state* s, Unchanging) noexcept
      : CycleState(api, s) {
    memo_on_ = true;
  }

  /// Read returns the value under `key`, or nullptr. The caller knows its type.
  template <class V>
  V* Read(Id key) const noexcept {
    if (memo_on_ && memo_set_ && memo_key_ == key) return static_cast<V*>(memo_value_);
    void* out = nullptr;
    if (api_->cycle_state_read(s_, key, &out) != SCHEDHOST_OK) out = nullptr;
    if (memo_on_) {
      memo_key_ = key;
      memo_value_ = out;
      memo_set_ = true;
    }
    return static_cast<V*>(out);
  }
  void Delete(Id key) noexcept { api_->cycle_state_delete(s_, key); }
  schedhost_cycle_state* raw() const noexcept { return s_; }
  schedhost_status* call_status() const noexcept { return call_status_; }
  schedhost_post_filter_result* post_filter_result() const noexcept { return post_filter_result_; }

 private:
  const schedhost_host_api* api_;
  schedhost_cycle_state* s_;
  schedhost_status* call_status_;
  schedhost_post_filter_result* post_filter_result_;
  // The last key Read looked up and its value (only with Unchanging: the plugins' Filter and
  // Score read one key each, once per node).
  bool memo_on_ = false;
  mutable bool memo_set_ = false;
  mutable Id memo_key_ = 0;
  mutable void* memo_value_ = nullptr;
};

// Args (the plugin_config tree) and ArgsReader (typed, declarative arguments): <schedhost/args.hpp>.

/// NodeStatusMap is PostFilter's view of the per-node Filter statuses.
class NodeStatusMap {
 public:
  NodeStatusMap(const schedhost_host_api* api, const schedhost_node_status_map* m) noexcept : api_(api), m_(m) {}
  size_t size() const noexcept { return api_->node_status_count(m_); }
  struct Entry {
    std::string_view node_name;
    Code code;
    std::string_view message;
  };
  Entry At(size_t i) const noexcept {
    schedhost_str n{}, msg{};
    int32_t code = SCHEDHOST_ERROR;
    api_->node_status_at(m_, i, &n, &code, &msg);
    return {ToView(n), static_cast<Code>(code), ToView(msg)};
  }
  const schedhost_node_status_map* raw() const noexcept { return m_; }

 private:
  const schedhost_host_api* api_;
  const schedhost_node_status_map* m_;
};

/// PreFilterResult restricts the nodes a pod's cycle considers (empty: all nodes).
class PreFilterResult {
 public:
  PreFilterResult(const schedhost_host_api* api, schedhost_pre_filter_result* r) noexcept : api_(api), r_(r) {}
  void SetNodes(std::span<const std::string_view> names) {
    std::vector<schedhost_str> v;
    v.reserve(names.size());
    for (auto n : names) v.push_back(ToStr(n));
    if (api_->pre_filter_result_set_nodes(r_, v.data(), v.size()) != SCHEDHOST_OK)
      throw std::runtime_error("pre_filter_result_set_nodes failed");
  }

 private:
  const schedhost_host_api* api_;
  schedhost_pre_filter_result* r_;
};

inline Args Host::GetObject(const CycleState& state, uint32_t kind,
                            std::string_view namespace_name, std::string_view name,
                            int32_t* rc) const noexcept {
  return ReadObject(state.raw(), kind, namespace_name, name, rc);
}

inline Args Host::ReadObject(const schedhost_cycle_state* state, uint32_t kind,
                             std::string_view namespace_name, std::string_view name,
                             int32_t* rc) const noexcept {
  const schedhost_config* out = nullptr;
  int32_t code = SCHEDHOST_E_NOT_AVAILABLE;
  if (SCHEDHOST_HAS_FIELD(api_, schedhost_host_api, object_get) && api_->object_get != nullptr &&
      (state != nullptr || api_->abi_minor >= 7)) {
    code = api_->object_get(host_, state, kind, ToStr(namespace_name), ToStr(name), &out);
  }
  if (rc != nullptr) *rc = code;
  return Args(api_, code == SCHEDHOST_OK ? out : nullptr);
}

inline std::optional<uint64_t> Host::KindRevision(const CycleState& state,
                                                  uint32_t kind) const noexcept {
  if (!SCHEDHOST_HAS_FIELD(api_, schedhost_host_api, object_kind_revision) ||
      api_->object_kind_revision == nullptr) {
    return std::nullopt;
  }
  uint64_t out = 0;
  if (api_->object_kind_revision(host_, state.raw(), kind, &out) != SCHEDHOST_OK || out == 0) {
    return std::nullopt;
  }
  return out;
}

template <class Fn>
int32_t Host::ListObjects(const CycleState& state, uint32_t kind, std::string_view namespace_name,
                          Fn&& fn) const {
  return ListObjectsIn(state.raw(), kind, namespace_name, std::forward<Fn>(fn));
}

template <class Fn>
int32_t Host::ListObjectsIn(const schedhost_cycle_state* state, uint32_t kind,
                            std::string_view namespace_name, Fn&& fn) const {
  if (!SCHEDHOST_HAS_FIELD(api_, schedhost_host_api, object_list) || api_->object_list == nullptr ||
      (state == nullptr && api_->abi_minor < 7)) {
    return SCHEDHOST_E_NOT_AVAILABLE;
  }
  struct Ctx {
    const schedhost_host_api* api;
    Fn* fn;
    std::exception_ptr error;
  } ctx{api_, &fn, nullptr};
  const int32_t rc = api_->object_list(
      host_, state, kind, ToStr(namespace_name),
      [](void* user, const schedhost_config* object) noexcept -> int32_t {
        auto* c = static_cast<Ctx*>(user);
        try {
          return (*c->fn)(Args(c->api, object)) ? 0 : 1;
        } catch (...) {
          c->error = std::current_exception();  // rethrown on this side of the host
          return 1;
        }
      },
      &ctx);
  if (ctx.error) std::rethrow_exception(ctx.error);
  return rc;
}

inline int32_t Host::WriteObject(uint32_t kind, int32_t op, std::string_view namespace_name,
                                 std::string_view name, std::string_view body,
                                 std::string* message) const noexcept {
  if (!SCHEDHOST_HAS_FIELD(api_, schedhost_host_api, object_write) ||
      api_->object_write == nullptr) {
    if (message != nullptr) {
      try {
        *message = "this host is older than abi 1.6 and cannot write objects";
      } catch (...) {
      }
    }
    return SCHEDHOST_E_NOT_AVAILABLE;
  }
  schedhost_str why{};
  const int32_t rc = api_->object_write(host_, kind, op, ToStr(namespace_name), ToStr(name),
                                        ToStr(body), &why);
  if (message != nullptr) {
    try {
      message->assign(why.data == nullptr ? "" : std::string_view(why.data, why.len));
    } catch (...) {
    }
  }
  return rc;
}

inline bool Host::KindAvailable(uint32_t kind, std::string* why) const {
  if (!SCHEDHOST_HAS_FIELD(api_, schedhost_host_api, object_kind_status) ||
      api_->object_kind_status == nullptr) {
    if (why != nullptr) *why = "the host speaks plugin ABI 1." + std::to_string(api_->abi_minor) +
                               " and mirrors no declared kinds (abi 1.5 does)";
    return false;
  }
  schedhost_str message{};
  const int32_t rc = api_->object_kind_status(host_, kind, &message);
  if (why != nullptr) {
    *why = rc == SCHEDHOST_E_OUT_OF_RANGE ? "no declared kind #" + std::to_string(kind)
                                          : std::string(ToView(message));
  }
  return rc == SCHEDHOST_OK;
}

inline Status Host::BindPod(const CycleState& state, const Pod& pod, std::string_view node,
                            std::string context) const {
  return BindPodTo(state.call_status(), pod, node, std::move(context));
}

inline Status Host::BindPodTo(schedhost_status* status, const Pod& pod, std::string_view node,
                              std::string context) const {
  int32_t rc = api_->bind_pod(host_, pod.raw(), ToStr(node), status);
  if (rc == SCHEDHOST_OK) return {};
  if (context.empty()) return Status(Code::kError, std::vector<std::string>{});
  return Status::Error(std::move(context));
}

inline Status Host::Preempt(CycleState& state, const Pod& pod, const NodeStatusMap& statuses,
                            const schedhost_preemption_callbacks* callbacks) const {
  int32_t rc = api_->preempt(host_, state.raw(), pod.raw(), statuses.raw(), callbacks,
                             state.post_filter_result(), state.call_status());
  if (rc < 0) rc = SCHEDHOST_ERROR;  // a host result (e.g. not available), not a status code
  return Status(static_cast<Code>(rc), std::vector<std::string>{});
}

template <class Fn>
Status Host::FindCandidates(CycleState& state, const Pod& pod, const NodeStatusMap& statuses,
                            const schedhost_preemption_callbacks* callbacks, Fn&& fn) const {
  auto trampoline = [](void* user, const schedhost_candidate* c) noexcept -> int32_t {
    try {
      return (*static_cast<std::remove_reference_t<Fn>*>(user))(*c) ? 0 : 1;
    } catch (...) {
      return 1;
    }
  };
  int32_t rc = api_->find_candidates(host_, state.raw(), pod.raw(), statuses.raw(), callbacks,
                                     trampoline, const_cast<void*>(static_cast<const void*>(&fn)));
  if (rc == SCHEDHOST_OK) return {};
  return Status::Error("find_candidates failed (" + std::to_string(rc) + ")");
}

// ---------------------------------------------------------------------------------------------
// Plugin base and extension-point interfaces
// ---------------------------------------------------------------------------------------------

/// Plugin is the base of every plugin class: it keeps the instance's Host.
class Plugin {
 public:
  explicit Plugin(const Host& host) noexcept : host_(host) {}
  virtual ~Plugin() = default;
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;
  const Host& host() const noexcept { return host_; }

 private:
  Host host_;
};

/// PreEnqueuePlugin gates pods out of activeQ until it admits them (Success).
class PreEnqueuePlugin {
 public:
  virtual ~PreEnqueuePlugin() = default;
  virtual Status PreEnqueue(const Pod& pod) = 0;
};

/// QueueSortPlugin orders activeQ.
class QueueSortPlugin {
 public:
  virtual ~QueueSortPlugin() = default;
  virtual bool Less(const QueuedPod& a, const QueuedPod& b) = 0;
};

/// EnqueueExtensions names the cluster events that may make a rejected pod schedulable.
class EnqueueExtensions {
 public:
  virtual ~EnqueueExtensions() = default;
  /// The span must stay valid while the instance lives.
  virtual std::span<const schedhost_event_registration> EventsToRegister() = 0;
};

/// QueueingHint is a queueing hint's answer: may the event make the rejected pod schedulable?
enum class QueueingHint : int32_t { kSkip = SCHEDHOST_QUEUE_SKIP, kQueue = SCHEDHOST_QUEUE };

/// EventObject is one side of a cluster event: the pod, the node or the object of a declared
/// kind it is about (none for an add's old side or a delete's new side). Valid during the hint
/// call only.
class EventObject {
 public:
  explicit EventObject(const schedhost_event_object* o) noexcept : o_(o) {}
  /// object is the object of a declared kind (SCHEDHOST_KIND_EVENT events, abi 1.6 hosts), read
  /// like Host::GetObject's; absent (Args::present() false) for any other event or side.
  Args object(const Host& host) const noexcept {
    const schedhost_host_api* api = host.api();
    if (o_ == nullptr || api == nullptr || api->abi_minor < 6) return Args(api, nullptr);
    return Args(api, o_->object);
  }
  std::optional<Pod> pod() const noexcept {
    return o_ != nullptr && o_->pod != nullptr ? std::optional<Pod>(Pod(o_->pod)) : std::nullopt;
  }
  std::optional<Node> node() const noexcept {
    return o_ != nullptr && o_->node != nullptr ? std::optional<Node>(Node(o_->node))
                                                : std::nullopt;
  }

 private:
  const schedhost_event_object* o_;
};

namespace detail {

template <class M>
struct HintMethod;
template <class T>
struct HintMethod<QueueingHint (T::*)(const Pod&, const schedhost_cluster_event&,
                                      const EventObject&, const EventObject&) const> {
  using Class = T;
};

}  // namespace detail

/// Hint turns a const member function of the plugin,
///
///   QueueingHint MyPlugin::OnNodeChange(const Pod& pod, const schedhost_cluster_event& event,
///                                       const EventObject& old_obj,
///                                       const EventObject& new_obj) const;
///
/// into the C callback a registration carries: the host's instance pointer becomes the plugin
/// object, and an exception becomes kQueue (a hint that fails must not strand a pod), as does a
/// missing pod. Hints run on the queue's thread while Filter and Score may run: read instance
/// state only.
template <auto Method>
constexpr schedhost_queueing_hint_fn Hint() noexcept {
  using T = typename detail::HintMethod<decltype(Method)>::Class;
  return [](void* instance, const schedhost_pod_view* pod, const schedhost_cluster_event* event,
            const schedhost_event_object* old_obj,
            const schedhost_event_object* new_obj) noexcept -> int32_t {
    if (instance == nullptr || pod == nullptr || event == nullptr) return SCHEDHOST_QUEUE;
    try {
      const T* self = static_cast<const T*>(instance);
      return static_cast<int32_t>((self->*Method)(Pod(pod), *event, EventObject(old_obj),
                                                  EventObject(new_obj)));
    } catch (...) {
      return SCHEDHOST_QUEUE;
    }
  };
}

/// OnEvent is a registration for `resource` / `actions` (schedhost_event_resource and
/// schedhost_event_action bits) answered by Method through Hint; without a Method, every such
/// event requeues the pod. Usable in a constexpr table:
///
///   static constexpr schedhost_event_registration kEvents[] = {
///       OnEvent<&MyPlugin::OnNodeChange>(SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ADD),
///       OnEvent(SCHEDHOST_RESOURCE_ASSIGNED_POD, SCHEDHOST_ACTION_DELETE)};
template <auto Method>
constexpr schedhost_event_registration OnEvent(int32_t resource, int32_t actions) noexcept {
  return {{resource, actions}, Hint<Method>()};
}
constexpr schedhost_event_registration OnEvent(int32_t resource, int32_t actions) noexcept {
  return {{resource, actions}, nullptr};
}

/// PreFilterPlugin runs once per cycle before Filter.
class PreFilterPlugin {
 public:
  virtual ~PreFilterPlugin() = default;
  virtual Status PreFilter(CycleState& state, const Pod& pod, PreFilterResult& result) = 0;
};

/// PreFilterExtensions updates PreFilter state when a pod is added to or removed from a node.
class PreFilterExtensions {
 public:
  virtual ~PreFilterExtensions() = default;
  virtual Status AddPod(CycleState& state, const Pod& pod, const Pod& to_add, const NodeInfo& ni) = 0;
  virtual Status RemovePod(CycleState& state, const Pod& pod, const Pod& to_remove, const NodeInfo& ni) = 0;
};

/// FilterPlugin decides whether a pod fits a node; runs concurrently across nodes.
class FilterPlugin {
 public:
  virtual ~FilterPlugin() = default;
  virtual Status Filter(const CycleState& state, const Pod& pod, const NodeInfo& ni) = 0;
};

/// PostFilterPlugin runs when no node fits; may nominate a node.
class PostFilterPlugin {
 public:
  virtual ~PostFilterPlugin() = default;
  virtual Status PostFilter(CycleState& state, const Pod& pod, const NodeStatusMap& statuses,
                            std::string& nominated_node) = 0;
};

/// PreScorePlugin runs once per cycle before Score with the feasible nodes.
class PreScorePlugin {
 public:
  virtual ~PreScorePlugin() = default;
  virtual Status PreScore(CycleState& state, const Pod& pod, const NodeInfoList& nodes) = 0;
};

/// ScorePlugin ranks a feasible node; runs concurrently across nodes.
class ScorePlugin {
 public:
  virtual ~ScorePlugin() = default;
  virtual Status Score(const CycleState& state, const Pod& pod, const NodeInfo& ni, int64_t& score) = 0;
};

/// ScoreExtensions normalises a Score plugin's scores into [0, 100].
class ScoreExtensions {
 public:
  virtual ~ScoreExtensions() = default;
  virtual Status NormalizeScore(const CycleState& state, const Pod& pod,
                                std::span<schedhost_node_score> scores) = 0;
};

/// ReservePlugin reserves per-node resources once a node is chosen; Unreserve undoes it.
class ReservePlugin {
 public:
  virtual ~ReservePlugin() = default;
  virtual Status Reserve(CycleState& state, const Pod& pod, std::string_view node) = 0;
  virtual void Unreserve(CycleState& state, const Pod& pod, std::string_view node) = 0;
};

/// PermitPlugin approves, rejects or delays (Wait with a timeout) the binding.
class PermitPlugin {
 public:
  virtual ~PermitPlugin() = default;
  virtual Status Permit(CycleState& state, const Pod& pod, std::string_view node,
                        std::chrono::nanoseconds& timeout) = 0;
};

/// PreBindPlugin runs before Bind.
class PreBindPlugin {
 public:
  virtual ~PreBindPlugin() = default;
  virtual Status PreBind(CycleState& state, const Pod& pod, std::string_view node) = 0;
};

/// BindPlugin binds the pod; Skip lets the next binder try.
class BindPlugin {
 public:
  virtual ~BindPlugin() = default;
  virtual Status Bind(CycleState& state, const Pod& pod, std::string_view node) = 0;
};

/// PostBindPlugin is told about a successful binding.
class PostBindPlugin {
 public:
  virtual ~PostBindPlugin() = default;
  virtual void PostBind(CycleState& state, const Pod& pod, std::string_view node) = 0;
};

// ---------------------------------------------------------------------------------------------
// Glue: descriptors, manifest, entry symbol
// ---------------------------------------------------------------------------------------------

namespace detail {

inline const schedhost_host_api*& LibraryApi() noexcept {
  static const schedhost_host_api* api = nullptr;
  return api;
}

}  // namespace detail

inline const schedhost_node_summary* NodeInfo::summary() const noexcept {
  const schedhost_host_api* api = detail::LibraryApi();
  // A host older than 1.3 hands out views that end before the summary: do not read it.
  if (v_ == nullptr || api == nullptr || api->abi_minor < 3) return nullptr;
  return (v_->summary.flags & SCHEDHOST_NODE_SUMMARY_VALID) != 0 ? &v_->summary : nullptr;
}

inline int64_t NodeInfo::Allocatable(Id name) const noexcept {
  if (const schedhost_node_summary* s = summary()) {
    if (name == SCHEDHOST_ID_CPU) return s->allocatable_milli_cpu;
    if (name == SCHEDHOST_ID_MEMORY) return s->allocatable_memory;
    if (name == SCHEDHOST_ID_PODS) return s->allocatable_pods;
  }
  return v_ != nullptr && v_->node != nullptr ? Node(v_->node).allocatable().Get(name) : 0;
}

inline int64_t NodeInfo::Requested(Id name) const noexcept {
  if (const schedhost_node_summary* s = summary()) {
    if (name == SCHEDHOST_ID_CPU) return s->requested_milli_cpu;
    if (name == SCHEDHOST_ID_MEMORY) return s->requested_memory;
  }
  return v_ != nullptr ? requested().Get(name) : 0;
}

inline size_t NodeInfo::pod_count() const noexcept {
  if (const schedhost_node_summary* s = summary()) return s->pods_len;
  return v_ != nullptr ? v_->pods_len : 0;
}

namespace detail {

inline int32_t Report(schedhost_status* st, const Status& s) noexcept {
  const auto* api = LibraryApi();
  if (api != nullptr && st != nullptr) {
    s.ForEachReason([&](std::string_view r) { api->status_add_reason(st, ToStr(r)); });
  }
  return static_cast<int32_t>(s.code());
}

inline int32_t ReportException(schedhost_status* st) noexcept {
  const auto* api = LibraryApi();
  try {
    throw;
  } catch (const std::exception& e) {
    if (api && st) api->status_add_reason(st, ToStr(e.what()));
  } catch (...) {
    if (api && st) api->status_add_reason(st, ToStr("unknown exception thrown by plugin"));
  }
  return SCHEDHOST_ERROR;
}

template <class T>
struct Instance {
  // Every trampoline casts the instance pointer back to T; qualified calls are not virtual.
  static T* Of(void* p) noexcept { return static_cast<T*>(p); }
};

template <class T>
int32_t Create(const schedhost_host_api* api, schedhost_host* host, const schedhost_config* args,
               void** out, schedhost_status* st) noexcept {
  try {
    *out = new T(Host(api, host), Args(api, args));
    return SCHEDHOST_SUCCESS;
  } catch (...) {
    return ReportException(st);
  }
}

template <class T>
void Destroy(void* p) noexcept {
  delete static_cast<T*>(p);
}

// KindTable holds the C declarations of T::kKinds and the array of pointers the descriptor
// hands the host (static, as the ABI requires).
template <class T>
struct KindTable {
  static constexpr std::array<schedhost_kind_decl, std::size(T::kKinds)> kDecls = [] {
    std::array<schedhost_kind_decl, std::size(T::kKinds)> out{};
    for (size_t i = 0; i < out.size(); ++i) {
      const Kind& k = T::kKinds[i];
      out[i].struct_size = sizeof(schedhost_kind_decl);
      out[i].group = {k.group.data(), k.group.size()};
      out[i].version = {k.version.data(), k.version.size()};
      out[i].resource = {k.resource.data(), k.resource.size()};
      out[i].kind = {k.kind.data(), k.kind.size()};
      out[i].scope = k.namespaced ? SCHEDHOST_KIND_NAMESPACED : SCHEDHOST_KIND_CLUSTER;
      out[i].label_selector = {"", 0};
      out[i].field_selector = {"", 0};
    }
    return out;
  }();
  static constexpr std::array<const schedhost_kind_decl*, std::size(T::kKinds)> kPointers = [] {
    std::array<const schedhost_kind_decl*, std::size(T::kKinds)> out{};
    for (size_t i = 0; i < out.size(); ++i) out[i] = &kDecls[i];
    return out;
  }();
};

// EvaluatesTable holds T::kEvaluates as the C strings the descriptor points at.
template <class T>
struct EvaluatesTable {
  static constexpr std::array<schedhost_str, std::size(T::kEvaluates)> kStrs = [] {
    std::array<schedhost_str, std::size(T::kEvaluates)> out{};
    for (size_t i = 0; i < out.size(); ++i) {
      out[i] = {T::kEvaluates[i].data(), T::kEvaluates[i].size()};
    }
    return out;
  }();
};

template <class T>
constexpr schedhost_plugin_descriptor MakeDescriptor() noexcept {
  schedhost_plugin_descriptor d{};
  d.struct_size = sizeof(schedhost_plugin_descriptor);
  d.name = {T::kName.data(), T::kName.size()};
  d.version = {T::kVersion.data(), T::kVersion.size()};
  d.create = &Create<T>;
  d.destroy = &Destroy<T>;
  if constexpr (requires { T::kKinds; }) {
    d.kinds = KindTable<T>::kPointers.data();
    d.kinds_len = KindTable<T>::kPointers.size();
  }
  if constexpr (requires { T::kEvaluates; }) {
    d.evaluates = EvaluatesTable<T>::kStrs.data();
    d.evaluates_len = EvaluatesTable<T>::kStrs.size();
  }
  if constexpr (std::is_base_of_v<PreEnqueuePlugin, T>) {
    d.pre_enqueue = [](void* i, const schedhost_pod_view* pod, schedhost_status* st) noexcept -> int32_t {
      try {
        return Report(st, Instance<T>::Of(i)->T::PreEnqueue(Pod(pod)));
      } catch (...) {
        return ReportException(st);
      }
    };
  }
  if constexpr (std::is_base_of_v<QueueSortPlugin, T>) {
    d.queue_sort_less = [](void* i, const schedhost_queued_pod* a, const schedhost_queued_pod* b) noexcept -> int32_t {
      try {
        return Instance<T>::Of(i)->T::Less(QueuedPod(a), QueuedPod(b)) ? 1 : 0;
      } catch (...) {
        return 0;
      }
    };
  }
  if constexpr (std::is_base_of_v<EnqueueExtensions, T>) {
    d.events_to_register = [](void* i, const schedhost_event_registration** out, size_t* n) noexcept -> int32_t {
      try {
        auto s = Instance<T>::Of(i)->T::EventsToRegister();
        *out = s.data();
        *n = s.size();
        return SCHEDHOST_SUCCESS;
      } catch (...) {
        *out = nullptr;
        *n = 0;
        return SCHEDHOST_ERROR;
      }
    };
  }
  if constexpr (std::is_base_of_v<PreFilterPlugin, T>) {
    d.pre_filter = [](void* i, schedhost_cycle_state* cs, const schedhost_pod_view* pod,
                      schedhost_pre_filter_result* r, schedhost_status* st) noexcept -> int32_t {
      try {
        CycleState state(LibraryApi(), cs);
        PreFilterResult result(LibraryApi(), r);
        return Report(st, Instance<T>::Of(i)->T::PreFilter(state, Pod(pod), result));
      } catch (...) {
        return ReportException(st);
      }
    };
  }
  if constexpr (std::is_base_of_v<PreFilterExtensions, T>) {
    d.pre_filter_add_pod = [](void* i, schedhost_cycle_state* cs, const schedhost_pod_view* pod,
                              const schedhost_pod_view* add, const schedhost_node_info_view* ni,
                              schedhost_status* st) noexcept -> int32_t {
      try {
        CycleState state(LibraryApi(), cs);
        return Report(st, Instance<T>::Of(i)->T::AddPod(state, Pod(pod), Pod(add), NodeInfo(ni)));
      } catch (...) {
        return ReportException(st);
      }
    };
    d.pre_filter_remove_pod = [](void* i, schedhost_cycle_state* cs, const schedhost_pod_view* pod,
                                 const schedhost_pod_view* rm, const schedhost_node_info_view* ni,
                                 schedhost_status* st) noexcept -> int32_t {
      try {
        CycleState state(LibraryApi(), cs);
        return Report(st, Instance<T>::Of(i)->T::RemovePod(state, Pod(pod), Pod(rm), NodeInfo(ni)));
      } catch (...) {
        return ReportException(st);
      }
    };
  }
  if constexpr (std::is_base_of_v<FilterPlugin, T>) {
    d.filter = [](void* i, const schedhost_cycle_state* cs, const schedhost_pod_view* pod,
                  const schedhost_node_info_view* ni, schedhost_status* st) noexcept -> int32_t {
      try {
        const CycleState state(LibraryApi(), cs);
        return Report(st, Instance<T>::Of(i)->T::Filter(state, Pod(pod), NodeInfo(ni)));
      } catch (...) {
        return ReportException(st);
      }
    };
    // The batched entry (abi 1.2) loops over T::Filter here, inside the library, so the host
    // pays one call per batch instead of one per node and the compiler may inline the body.
    d.filter_batch = [](void* i, const schedhost_cycle_state* cs, const schedhost_pod_view* pod,
                        const schedhost_node_info_view* const* nodes, size_t n, size_t* passed,
                        schedhost_status* st) noexcept -> int32_t {
      size_t k = 0;
      try {
        const CycleState state(LibraryApi(), cs, CycleState::Unchanging{});
        const Pod p(pod);
        T* self = Instance<T>::Of(i);
        for (; k < n; ++k) {
          Status s = self->T::Filter(state, p, NodeInfo(nodes[k]));
          if (!s.ok()) {
            *passed = k;
            return Report(st, s);
          }
        }
        *passed = n;
        return SCHEDHOST_SUCCESS;
      } catch (...) {
        *passed = k;
        return ReportException(st);
      }
    };
  }
  if constexpr (std::is_base_of_v<PostFilterPlugin, T>) {
    d.post_filter = [](void* i, schedhost_cycle_state* cs, const schedhost_pod_view* pod,
                       const schedhost_node_status_map* m, schedhost_post_filter_result* r,
                       schedhost_status* st) noexcept -> int32_t {
      try {
        CycleState state(LibraryApi(), cs, st, r);
        std::string nominated;
        Status s = Instance<T>::Of(i)->T::PostFilter(state, Pod(pod), NodeStatusMap(LibraryApi(), m), nominated);
        if (!nominated.empty()) LibraryApi()->post_filter_result_set_nominated_node(r, ToStr(nominated));
        return Report(st, s);
      } catch (...) {
        return ReportException(st);
      }
    };
  }
  if constexpr (std::is_base_of_v<PreScorePlugin, T>) {
    d.pre_score = [](void* i, schedhost_cycle_state* cs, const schedhost_pod_view* pod,
                     const schedhost_node_info_view* const* nodes, size_t n,
                     schedhost_status* st) noexcept -> int32_t {
      try {
        CycleState state(LibraryApi(), cs);
        return Report(st, Instance<T>::Of(i)->T::PreScore(state, Pod(pod), NodeInfoList(nodes, n)));
      } catch (...) {
        return ReportException(st);
      }
    };
  }
  if constexpr (std::is_base_of_v<ScorePlugin, T>) {
    d.score = [](void* i, const schedhost_cycle_state* cs, const schedhost_pod_view* pod,
                 const schedhost_node_info_view* ni, int64_t* score, schedhost_status* st) noexcept -> int32_t {
      try {
        const CycleState state(LibraryApi(), cs);
        return Report(st, Instance<T>::Of(i)->T::Score(state, Pod(pod), NodeInfo(ni), *score));
      } catch (...) {
        return ReportException(st);
      }
    };
    d.score_batch = [](void* i, const schedhost_cycle_state* cs, const schedhost_pod_view* pod,
                       const schedhost_node_info_view* const* nodes, size_t n, int64_t* scores,
                       schedhost_status* st) noexcept -> int32_t {
      try {
        const CycleState state(LibraryApi(), cs, CycleState::Unchanging{});
        const Pod p(pod);
        T* self = Instance<T>::Of(i);
        for (size_t k = 0; k < n; ++k) {
          Status s = self->T::Score(state, p, NodeInfo(nodes[k]), scores[k]);
          if (!s.ok()) return Report(st, s);
        }
        return SCHEDHOST_SUCCESS;
      } catch (...) {
        return ReportException(st);
      }
    };
  }
  if constexpr (std::is_base_of_v<ScoreExtensions, T>) {
    d.normalize_score = [](void* i, const schedhost_cycle_state* cs, const schedhost_pod_view* pod,
                           schedhost_node_score* scores, size_t n, schedhost_status* st) noexcept -> int32_t {
      try {
        const CycleState state(LibraryApi(), cs);
        std::span<schedhost_node_score> s = n == 0 ? std::span<schedhost_node_score>{}
                                                   : std::span<schedhost_node_score>{scores, n};
        return Report(st, Instance<T>::Of(i)->T::NormalizeScore(state, Pod(pod), s));
      } catch (...) {
        return ReportException(st);
      }
    };
  }
  if constexpr (std::is_base_of_v<ReservePlugin, T>) {
    d.reserve = [](void* i, schedhost_cycle_state* cs, const schedhost_pod_view* pod, schedhost_str node,
                   schedhost_status* st) noexcept -> int32_t {
      try {
        CycleState state(LibraryApi(), cs, st);
        return Report(st, Instance<T>::Of(i)->T::Reserve(state, Pod(pod), ToView(node)));
      } catch (...) {
        return ReportException(st);
      }
    };
    d.unreserve = [](void* i, schedhost_cycle_state* cs, const schedhost_pod_view* pod,
                     schedhost_str node) noexcept {
      try {
        CycleState state(LibraryApi(), cs);
        Instance<T>::Of(i)->T::Unreserve(state, Pod(pod), ToView(node));
      } catch (...) {
      }
    };
  }
  if constexpr (std::is_base_of_v<PermitPlugin, T>) {
    d.permit = [](void* i, schedhost_cycle_state* cs, const schedhost_pod_view* pod, schedhost_str node,
                  int64_t* timeout_ns, schedhost_status* st) noexcept -> int32_t {
      try {
        CycleState state(LibraryApi(), cs, st);
        std::chrono::nanoseconds timeout{0};
        Status s = Instance<T>::Of(i)->T::Permit(state, Pod(pod), ToView(node), timeout);
        *timeout_ns = timeout.count();
        return Report(st, s);
      } catch (...) {
        return ReportException(st);
      }
    };
  }
  if constexpr (std::is_base_of_v<PreBindPlugin, T>) {
    d.pre_bind = [](void* i, schedhost_cycle_state* cs, const schedhost_pod_view* pod, schedhost_str node,
                    schedhost_status* st) noexcept -> int32_t {
      try {
        CycleState state(LibraryApi(), cs, st);
        return Report(st, Instance<T>::Of(i)->T::PreBind(state, Pod(pod), ToView(node)));
      } catch (...) {
        return ReportException(st);
      }
    };
  }
  if constexpr (std::is_base_of_v<BindPlugin, T>) {
    d.bind = [](void* i, schedhost_cycle_state* cs, const schedhost_pod_view* pod, schedhost_str node,
                schedhost_status* st) noexcept -> int32_t {
      try {
        CycleState state(LibraryApi(), cs, st);
        return Report(st, Instance<T>::Of(i)->T::Bind(state, Pod(pod), ToView(node)));
      } catch (...) {
        return ReportException(st);
      }
    };
  }
  if constexpr (std::is_base_of_v<PostBindPlugin, T>) {
    d.post_bind = [](void* i, schedhost_cycle_state* cs, const schedhost_pod_view* pod,
                     schedhost_str node) noexcept {
      try {
        CycleState state(LibraryApi(), cs);
        Instance<T>::Of(i)->T::PostBind(state, Pod(pod), ToView(node));
      } catch (...) {
      }
    };
  }
  return d;
}

template <class... P>
consteval size_t ManifestSize(std::string_view header) {
  size_t n = header.size() + 1;  // trailing NUL
  ((n += std::string_view("plugin ").size() + P::kName.size() + 1 + P::kVersion.size() + 1), ...);
  return n;
}

template <size_t N, class... P>
consteval std::array<char, N> MakeManifest(std::string_view header) {
  std::array<char, N> out{};
  size_t pos = 0;
  auto put = [&](std::string_view s) {
    for (char c : s) out[pos++] = c;
  };
  put(header);
  ((put("plugin "), put(P::kName), put(" "), put(P::kVersion), put("\n")), ...);
  out[pos] = '\0';
  return out;
}

#ifndef SCHEDHOST_MIN_HOST_ABI_MINOR
#define SCHEDHOST_MIN_HOST_ABI_MINOR 0
#endif

inline constexpr std::string_view kSdkVersion = SCHEDHOST_SDK_VERSION;

template <class... P>
int32_t Negotiate(schedhost_library_negotiation* io) noexcept {
  static constexpr schedhost_plugin_descriptor kDescriptors[] = {MakeDescriptor<P>()...};
  static constexpr auto kTable = [] {
    std::array<const schedhost_plugin_descriptor*, sizeof...(P)> t{};
    for (size_t i = 0; i < t.size(); ++i) t[i] = &kDescriptors[i];
    return t;
  }();
  if (io == nullptr) return 1;
  const size_t need = offsetof(schedhost_library_negotiation, error) + sizeof(io->error);
  if (io->struct_size < need) return 1;
  io->plugin_abi_major = SCHEDHOST_ABI_MAJOR;
  io->plugin_abi_minor = SCHEDHOST_ABI_MINOR;
  io->min_host_abi_minor = SCHEDHOST_MIN_HOST_ABI_MINOR;
  io->sdk_version = ToStr(kSdkVersion);
  if (io->host_abi_major != SCHEDHOST_ABI_MAJOR) {
    io->error = ToStr("plugin library was built for another ABI major");
    return 1;
  }
  if (io->api == nullptr || io->api->struct_size < offsetof(schedhost_host_api, find_candidates)) {
    io->error = ToStr("host API table is missing or too small");
    return 1;
  }
  // A host negotiates again each time a reload loads the library anew, while other threads
  // read the table through LibraryApi(): write it only when it changes (the first time).
  if (LibraryApi() != io->api) LibraryApi() = io->api;
  io->plugins = kTable.data();
  io->plugins_len = sizeof...(P);
  return 0;
}

}  // namespace detail
}  // namespace schedhost

/// SCHEDHOST_PLUGIN_LIBRARY(A, B, ...) exports the library's entry symbol for plugin classes
/// A, B, ... and embeds its manifest. Use it once per library, at namespace scope.
#define SCHEDHOST_PLUGIN_LIBRARY(...)                                                            \
  namespace schedhost_library_ {                                                                 \
  inline constexpr std::string_view kHeader =                                                    \
      SCHEDHOST_MANIFEST_HEADER(SCHEDHOST_MIN_HOST_ABI_MINOR);                                   \
  __attribute__((section(SCHEDHOST_MANIFEST_SECTION), used)) constexpr auto kManifest =          \
      ::schedhost::detail::MakeManifest<::schedhost::detail::ManifestSize<__VA_ARGS__>(kHeader), \
                                        __VA_ARGS__>(kHeader);                                   \
  }                                                                                              \
  extern "C" SCHEDHOST_EXPORT int32_t schedhost_plugin_library_v1(                              \
      schedhost_library_negotiation* io) noexcept {                                              \
    return ::schedhost::detail::Negotiate<__VA_ARGS__>(io);                                      \
  }
