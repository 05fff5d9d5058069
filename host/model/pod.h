// Pods: PodData mirrors the scheduling-relevant fields of core/v1 Pod; Pod is the immutable
// "made" object that owns the data, the interned arrays and a ready schedhost_pod_view.
// Pod::Make applies the API server's defaults (namespace, scheduler name, requests from limits,
// uid) and computes effective requests the way upstream's pod resource helpers do. A made Pod
// never changes, so it may be read from any number of threads; to change a pod, Decode() it,
// edit the copy and Make a new one. A made Pod keeps its spec packed (see Pod below).
//
//   std::shared_ptr<const Pod> pod = Pod::Make(std::move(data));
//   plugin->filter(instance, state, pod->view(), node_info, status);
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "host/model/affinity.h"
#include "host/model/box.h"
#include "host/model/enums.h"
#include "host/model/meta.h"
#include "host/model/quantity.h"
#include "host/model/view_arena.h"
#include "schedhost/plugin.h"

namespace schedhost::model {

// The scheduler name a pod gets when its manifest names none.
inline constexpr std::string_view kDefaultSchedulerName = "default-scheduler";
// Upstream's non-zero defaults: what a container that requests no cpu / memory counts as.
inline constexpr int64_t kDefaultMilliCpuRequest = 100;
inline constexpr int64_t kDefaultMemoryRequest = int64_t{200} * 1024 * 1024;

// ContainerPort mirrors core/v1 ContainerPort.
struct ContainerPort {
  std::string name;
  int32_t container_port = 0;
  int32_t host_port = 0;  // 0: no host port.
  Protocol protocol = Protocol::kTCP;
  std::string host_ip;

  friend bool operator==(const ContainerPort&, const ContainerPort&) = default;
};

// ResourceRequirements mirrors core/v1 ResourceRequirements (requests and limits).
struct ResourceRequirements {
  ResourceList requests;
  ResourceList limits;

  friend bool operator==(const ResourceRequirements&, const ResourceRequirements&) = default;
};

// Container mirrors the scheduling-relevant fields of core/v1 Container.
struct Container {
  std::string name;
  std::string image;
  ResourceRequirements resources;
  std::vector<ContainerPort> ports;
  // Init containers only: "Always" makes a sidecar whose requests persist beside the app.
  std::string restart_policy;

  friend bool operator==(const Container&, const Container&) = default;
};

// TopologySpreadConstraint mirrors core/v1 TopologySpreadConstraint.
struct TopologySpreadConstraint {
  int32_t max_skew = 0;
  std::string topology_key;
  WhenUnsatisfiable when_unsatisfiable = WhenUnsatisfiable::kDoNotSchedule;
  std::optional<LabelSelector> label_selector;
  std::optional<int32_t> min_domains;
  std::optional<NodeInclusionPolicy> node_affinity_policy;
  std::optional<NodeInclusionPolicy> node_taints_policy;
  std::vector<std::string> match_label_keys;

  friend bool operator==(const TopologySpreadConstraint&,
                         const TopologySpreadConstraint&) = default;
};

// PodSpec mirrors the scheduling-relevant fields of core/v1 PodSpec.
// PodNeed is a part of a pod's spec whose scheduling meaning the host does not evaluate itself
// (a PersistentVolumeClaim, a DRA claim, a volume source it does not know): the pod is
// scheduled only by a profile with a plugin that evaluates `part` (plugin.h, `evaluates`).
struct PodNeed {
  std::string part;  // what a plugin declares: "spec.volumes.persistentVolumeClaim"
  std::string path;  // where in this pod: "spec.volumes[0].persistentVolumeClaim"
  std::string what;  // for messages: "volume \"data\" (claim \"data-0\")"
  // source is the whole entry the need comes from as JSON (a spec.volumes or spec.resourceClaims
  // entry), on the first need of each entry ("" on the others): what plugins read as the pod
  // view's `volumes`, and what the pod's JSON carries back. For a node feature, what requires
  // it: the restart rule or volume mount entry, or {"hostNetwork":true,"hostUsers":false}.
  std::string source;

  friend bool operator==(const PodNeed&, const PodNeed&) = default;
};

// VolumeSourceNeedsAPlugin tells whether a volume source (the key beside a volume's name) has a
// meaning for scheduling that a plugin must evaluate: false for the sources upstream's
// scheduler ignores (emptyDir, hostPath, configMap, secret, projected, csi, nfs, ...), true
// for claims, in-tree disks and any source the host does not know.
bool VolumeSourceNeedsAPlugin(std::string_view source);

struct PodSpec {
  std::string scheduler_name;  // Defaulted to kDefaultSchedulerName.
  std::string node_name;
  std::optional<int32_t> priority;
  std::string priority_class_name;
  std::optional<PreemptionPolicy> preemption_policy;
  StringMap node_selector;
  Box<Affinity> affinity;  // on the heap: most pods have none
  std::vector<Toleration> tolerations;
  std::vector<TopologySpreadConstraint> topology_spread_constraints;
  std::vector<Container> containers;
  std::vector<Container> init_containers;
  ResourceList overhead;
  std::vector<std::string> scheduling_gates;  // Gate names.
  // needs: volumes and claims a plugin must evaluate (decoded from spec.volumes and
  // spec.resourceClaims; the rest of those is not kept).
  std::vector<PodNeed> needs;

  friend bool operator==(const PodSpec&, const PodSpec&) = default;
};

// PodStatus mirrors the scheduling-relevant fields of core/v1 PodStatus.
struct PodStatus {
  std::string nominated_node_name;
  // terminating_by_preemption: the pod is being deleted (metadata.deletionTimestamp set) and
  // carries DisruptionTarget=True with reason PreemptionByScheduler, i.e. a preemption victim
  // still terminating (Kubernetes mode, where deletion takes the grace period). Upstream's
  // preemption does not preempt again for a pod nominated where such a victim is.
  bool terminating_by_preemption = false;

  friend bool operator==(const PodStatus&, const PodStatus&) = default;
};

// PodData is a whole pod as plain data.
struct PodData {
  ObjectMeta metadata;  // namespace defaults to "default".
  PodSpec spec;
  PodStatus status;

  friend bool operator==(const PodData&, const PodData&) = default;
};

// ApplyPodDefaults fills what the API server would: namespace "default", the default scheduler
// name, requests copied from limits where a container sets only a limit, and a generated uid;
// idempotent.
void ApplyPodDefaults(PodData& pod);

// PodResources are a pod's effective requests as the scheduler counts them.
struct PodResources {
  std::vector<schedhost_resource> requests;  // Sorted by name id; cpu in millicores.
  int64_t non_zero_milli_cpu = 0;
  int64_t non_zero_memory = 0;
};

// ComputePodRequests sums, per resource, the containers' requests, takes the max with each init
// container (sidecars accumulate) and adds overhead, like upstream's PodRequests;
// `non_missing_defaults` fills in resources a container does not mention (nullptr: none).
ResourceList ComputePodRequests(const PodSpec& spec,
                                const ResourceList* non_missing_defaults = nullptr);

// ComputePodResources returns the effective requests plus the non-zero cpu and memory totals.
PodResources ComputePodResources(const PodSpec& spec);

// Pod is an immutable pod shared as shared_ptr<const Pod>; its view lives as long as it does.
// It keeps itself only as the view and a packed copy of what the view leaves out (pod_pack.h):
// the strings the view needs are copied into the pod's block once (name, uid, annotations,
// owners, container images, scheduling gates) or interned (namespace, labels, scheduler,
// priority class and node names), and the rest of the spec and status is packed, a fraction of
// its decoded size (a pending pod's PodSpec is mostly empty containers). data() decodes the
// whole pod the first time it is called and keeps it, so the paths every pending pod takes read
// the accessors below and the view instead.
class Pod : private internal::ViewBase<schedhost_pod_view> {
  struct MakeKey {  // private: only Make can construct
    explicit MakeKey() = default;
  };

 public:
  // Make applies the defaults, interns strings, computes requests and builds the view.
  static std::shared_ptr<const Pod> Make(PodData data);
  // For Make only (MakeKey is private): the object and its shared_ptr's count share one
  // allocation.
  Pod(MakeKey key, PodData data);
  ~Pod();

  Pod(const Pod&) = delete;
  Pod& operator=(const Pod&) = delete;

  // data returns the (defaulted) plain data, decoding it on the first call (thread-safe); the
  // decoded copy then lives as long as the pod. Prefer the accessors on hot paths.
  const PodData& data() const;
  // Decode returns a fresh decoded copy, leaving the pod as it was: for paths that look once.
  PodData Decode() const;
  // DecodeMetadata returns a fresh copy of the (defaulted) metadata, decoding nothing else.
  ObjectMeta DecodeMetadata() const;
  // SameSpecAndStatus is true when `other`'s spec and status are the same as this pod's,
  // compared without decoding (the packed bytes and the names kept in the view). It is stricter
  // than ==: a quantity rewritten in another notation ("1073741824" for "1Gi") is a change, and
  // so is an owner reference's apiVersion (packed with the spec).
  bool SameSpecAndStatus(const Pod& other) const;
  // SameMetadataExceptVersion is true when `other`'s metadata is this pod's but for the
  // resource version, compared without decoding.
  bool SameMetadataExceptVersion(const Pod& other) const;
  // SameLabels is true when `other` has exactly this pod's labels.
  bool SameLabels(const Pod& other) const;
  // decoded reports whether data() has been called (for tests of the paths that must not).
  bool decoded() const { return decoded_.load(std::memory_order_acquire) != nullptr; }
  // view returns the ABI view, fully filled, with struct_size == sizeof(schedhost_pod_view).
  const schedhost_pod_view* view() const { return &base_view; }
  // FromView returns the pod whose view() is `v`; nullptr for null (and, via a tag
  // stored beside the view, for most views it did not make: pass only views the host made).
  static const Pod* FromView(const schedhost_pod_view* v);

  // name returns metadata.name.
  std::string_view name() const { return View(base_view.name); }
  // namespace_name returns metadata.namespace (defaulted).
  std::string_view namespace_name() const { return View(base_view.namespace_name); }
  // uid returns metadata.uid (generated when the data had none).
  std::string_view uid() const { return View(base_view.uid); }
  // Key returns "namespace/name", how messages name a pod.
  std::string Key() const;
  // resource_version returns metadata.resourceVersion (0 when unknown).
  uint64_t resource_version() const { return base_view.resource_version; }
  // creation_timestamp_ns returns metadata.creationTimestamp in Unix ns (0 when unknown).
  int64_t creation_timestamp_ns() const { return base_view.creation_timestamp_ns; }
  // labels returns metadata.labels as plain data (copies of the interned strings).
  Labels labels() const;
  // priority returns spec.priority, or 0 when unset.
  int32_t priority() const { return base_view.priority; }
  // node_name returns spec.nodeName ("" while unbound).
  std::string_view node_name() const { return View(base_view.node_name); }
  // scheduler_name returns spec.schedulerName (defaulted).
  std::string_view scheduler_name() const { return View(base_view.scheduler_name); }
  // priority_class_name returns spec.priorityClassName ("" when none).
  std::string_view priority_class_name() const { return View(base_view.priority_class_name); }
  // nominated_node_name returns status.nominatedNodeName ("" when none).
  std::string_view nominated_node_name() const { return View(base_view.nominated_node_name); }
  // requests returns the effective requests, sorted by name id (cpu in millicores).
  std::span<const schedhost_resource> requests() const {
    return {base_view.requests.items, base_view.requests.len};
  }
  // non_zero_milli_cpu returns the cpu request with the 100m per-container default.
  int64_t non_zero_milli_cpu() const { return base_view.non_zero_milli_cpu; }
  // non_zero_memory returns the memory request with the 200Mi per-container default.
  int64_t non_zero_memory() const { return base_view.non_zero_memory; }
  // HasNeeds tells whether the pod has parts a plugin must evaluate (spec.needs), without
  // decoding it; most pods have none.
  bool HasNeeds() const;

 private:
  static std::string_view View(schedhost_str s) { return {s.data, s.len}; }
  // MetadataFromView is the metadata but for the owners' apiVersions (packed).
  ObjectMeta MetadataFromView() const;
  // BuildView fills the view and packs the spec, the status and the owners' apiVersions
  // (clearing the strings it keeps only in the view first).
  void BuildView(const ObjectMeta& meta, PodSpec& spec, PodStatus& status,
                 const PodResources& resources);

  // The packed state's 32-bit length keeps HasNeeds in its top bit (BuildView).
  static constexpr uint32_t kHasNeedsBit = 0x80000000u;
  static constexpr uint32_t kPackedLengthMask = 0x7fffffffu;
  // packed returns the spec, status and owner apiVersions (pod_pack.h): the first thing in the
  // first block, after their 32-bit length (BuildView), so no member points at them.
  std::string_view packed() const;
  mutable std::atomic<const PodData*> decoded_{nullptr};
  // Pending pods are kept by the thousand and their arrays are small: exact blocks, one for
  // the usual arrays, the strings the view needs and the packed state (see BuildView). The
  // view is in the base class, which is how FromView finds the pod without a pointer to it.
  internal::ExactViewBlocks blocks_;
};

}  // namespace schedhost::model
