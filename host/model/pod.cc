#include "host/model/pod.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "host/model/interner.h"
#include "host/model/value_node.h"
#include "host/model/pod_pack.h"
#include "host/model/view_convert.h"

namespace schedhost::model {
namespace {

constexpr uint64_t kPodViewMagic = 0x73636864706f6431ULL;  // "schdpod1"

// With make_shared's count, 376 bytes: a 384-byte heap block. A byte more costs 16.
static_assert(sizeof(void*) != 8 || sizeof(Pod) == 368, "Pod grew: see the note above");
// A field added to ObjectMeta must be kept in the view or packed (BuildView), read back
// (MetadataFromView) and compared (SameMetadataExceptVersion).
static_assert(sizeof(void*) != 8 || sizeof(ObjectMeta) == 184, "ObjectMeta changed: see above");

void DefaultRequestsFromLimits(std::vector<Container>& containers) {
  for (Container& c : containers) {
    for (const auto& [name, limit] : c.resources.limits) {
      c.resources.requests.try_emplace(name, limit);
    }
  }
}

void AddInto(ResourceList& total, const ResourceList& add) {
  for (const auto& [name, q] : add) total[name] += q;
}

void MaxInto(ResourceList& total, const ResourceList& other) {
  for (const auto& [name, q] : other) {
    auto [it, inserted] = total.try_emplace(name, q);
    if (!inserted && it->second < q) it->second = q;
  }
}

ResourceList WithDefaults(const ResourceList& requests, const ResourceList* defaults) {
  ResourceList out = requests;
  if (defaults != nullptr) {
    for (const auto& [name, q] : *defaults) out.try_emplace(name, q);
  }
  return out;
}

}  // namespace

void ApplyPodDefaults(PodData& pod) {
  if (pod.metadata.namespace_name.empty()) pod.metadata.namespace_name = "default";
  if (pod.spec.scheduler_name.empty()) pod.spec.scheduler_name = kDefaultSchedulerName;
  DefaultRequestsFromLimits(pod.spec.containers);
  DefaultRequestsFromLimits(pod.spec.init_containers);
  DefaultMeta(pod.metadata);
}

ResourceList ComputePodRequests(const PodSpec& spec, const ResourceList* non_missing_defaults) {
  ResourceList total;
  for (const Container& c : spec.containers) {
    AddInto(total, WithDefaults(c.resources.requests, non_missing_defaults));
  }
  // Init containers run one at a time, but sidecars (restartPolicy Always) keep running: an
  // init container needs its own requests plus every sidecar started before it, and sidecars
  // also run beside the app containers.
  ResourceList sidecars;
  ResourceList init_peak;
  for (const Container& c : spec.init_containers) {
    ResourceList requests = WithDefaults(c.resources.requests, non_missing_defaults);
    if (c.restart_policy == "Always") {
      AddInto(total, requests);
      AddInto(sidecars, requests);
      MaxInto(init_peak, sidecars);
    } else {
      AddInto(requests, sidecars);
      MaxInto(init_peak, requests);
    }
  }
  MaxInto(total, init_peak);
  AddInto(total, spec.overhead);
  return total;
}

PodResources ComputePodResources(const PodSpec& spec) {
  PodResources out;
  out.requests = internal::ToResources(ComputePodRequests(spec));
  static const ResourceList kNonZeroDefaults = {
      {"cpu", Quantity::FromMilli(kDefaultMilliCpuRequest)},
      {"memory", Quantity::FromUnits(kDefaultMemoryRequest)},
  };
  ResourceList non_zero = ComputePodRequests(spec, &kNonZeroDefaults);
  out.non_zero_milli_cpu = non_zero["cpu"].MilliValue();
  out.non_zero_memory = non_zero["memory"].Value();
  return out;
}

bool VolumeSourceNeedsAPlugin(std::string_view source) {
  // Upstream's scheduler reads none of these (v1.37: VolumeBinding, VolumeZone,
  // VolumeRestrictions and NodeVolumeLimits look at claims, ephemeral volumes and the in-tree
  // disks; an inline csi volume counts against no limit).
  static constexpr std::string_view kNoMeaning[] = {
      "azureFile", "cephfs",   "configMap", "csi",    "downwardAPI", "emptyDir",
      "fc",        "flexVolume", "flocker", "gitRepo", "glusterfs",  "hostPath",
      "image",     "nfs",      "photonPersistentDisk", "projected", "quobyte", "scaleIO",
      "secret",    "storageos"};
  return std::find(std::begin(kNoMeaning), std::end(kNoMeaning), source) == std::end(kNoMeaning);
}

std::shared_ptr<const Pod> Pod::Make(PodData data) {
  return std::make_shared<const Pod>(MakeKey{}, std::move(data));
}

Pod::Pod(MakeKey /*key*/, PodData data) : internal::ViewBase<schedhost_pod_view>{} {
  ApplyPodDefaults(data);
  base_magic = kPodViewMagic;
  BuildView(data.metadata, data.spec, data.status, ComputePodResources(data.spec));
}

Pod::~Pod() {
  delete decoded_.load(std::memory_order_acquire);
  delete reinterpret_cast<const ValueNode*>(base_view.volumes);
}

std::string_view Pod::packed() const {
  const std::byte* first = blocks_.first();
  uint32_t length = 0;
  std::memcpy(&length, first, sizeof(length));
  return {reinterpret_cast<const char*>(first + sizeof(length)), length & kPackedLengthMask};
}

bool Pod::HasNeeds() const {
  uint32_t length = 0;
  std::memcpy(&length, blocks_.first(), sizeof(length));
  return (length & kHasNeedsBit) != 0;
}

std::string Pod::Key() const {
  std::string out(namespace_name());
  out += '/';
  out += name();
  return out;
}

Labels Pod::labels() const {
  const Interner& interner = Interner::Global();
  const schedhost_labels& in = base_view.labels;
  Labels out;
  out.reserve(in.len);
  for (size_t i = 0; i < in.len; ++i) {
    out.emplace_back(interner.Str(in.items[i].key), interner.Str(in.items[i].value));
  }
  // The view orders them by key id; the plain data by key.
  std::sort(out.begin(), out.end());
  return out;
}

ObjectMeta Pod::MetadataFromView() const {
  const schedhost_pod_view& v = base_view;
  ObjectMeta out;
  out.name = name();
  out.namespace_name = namespace_name();
  out.uid = uid();
  out.labels = labels();
  out.annotations.reserve(v.annotations_len);
  for (size_t i = 0; i < v.annotations_len; ++i) {
    out.annotations.emplace_back(View(v.annotations[i].key), View(v.annotations[i].value));
  }
  out.owner_references.resize(v.owner_refs_len);
  for (size_t i = 0; i < v.owner_refs_len; ++i) {
    const schedhost_owner_ref& ref = v.owner_refs[i];
    OwnerReference& owner = out.owner_references[i];
    owner.kind = View(ref.kind);
    owner.name = View(ref.name);
    owner.uid = View(ref.uid);
    owner.controller = ref.controller != 0;
  }
  out.creation_timestamp_ns = v.creation_timestamp_ns;
  out.resource_version = v.resource_version;
  return out;
}

ObjectMeta Pod::DecodeMetadata() const {
  ObjectMeta out = MetadataFromView();
  PodSpec spec;
  PodStatus status;
  internal::UnpackPodState(packed(), spec, status, out.owner_references);  // the apiVersions
  return out;
}

PodData Pod::Decode() const {
  PodData out;
  out.metadata = MetadataFromView();
  internal::UnpackPodState(packed(), out.spec, out.status, out.metadata.owner_references);
  // What BuildView keeps only in the view.
  out.spec.scheduler_name = scheduler_name();
  out.spec.node_name = node_name();
  out.spec.priority_class_name = priority_class_name();
  out.status.nominated_node_name = nominated_node_name();
  const schedhost_pod_view& v = base_view;
  size_t next_image = 0;
  for (auto* list : {&out.spec.init_containers, &out.spec.containers}) {
    for (Container& c : *list) c.image = View(v.images[next_image++]);
  }
  out.spec.scheduling_gates.reserve(v.scheduling_gates_len);
  for (size_t i = 0; i < v.scheduling_gates_len; ++i) {
    out.spec.scheduling_gates.emplace_back(View(v.scheduling_gates[i]));
  }
  return out;
}

bool Pod::SameSpecAndStatus(const Pod& other) const {
  const schedhost_pod_view& a = base_view;
  const schedhost_pod_view& b = other.base_view;
  const auto same_text = [](schedhost_str x, schedhost_str y) { return View(x) == View(y); };
  return packed() == other.packed() && node_name() == other.node_name() &&
         scheduler_name() == other.scheduler_name() &&
         nominated_node_name() == other.nominated_node_name() &&
         priority_class_name() == other.priority_class_name() &&
         std::equal(a.images, a.images + a.images_len, b.images, b.images + b.images_len,
                    same_text) &&
         std::equal(a.scheduling_gates, a.scheduling_gates + a.scheduling_gates_len,
                    b.scheduling_gates, b.scheduling_gates + b.scheduling_gates_len, same_text);
}

bool Pod::SameLabels(const Pod& other) const {
  const schedhost_labels& a = base_view.labels;
  const schedhost_labels& b = other.base_view.labels;
  return std::equal(a.items, a.items + a.len, b.items, b.items + b.len,
                    [](const schedhost_label& x, const schedhost_label& y) {
                      return x.key == y.key && x.value == y.value;
                    });
}

bool Pod::SameMetadataExceptVersion(const Pod& other) const {
  const schedhost_pod_view& a = base_view;
  const schedhost_pod_view& b = other.base_view;
  const auto same_annotation = [](const schedhost_annotation& x, const schedhost_annotation& y) {
    return View(x.key) == View(y.key) && View(x.value) == View(y.value);
  };
  const auto same_owner = [](const schedhost_owner_ref& x, const schedhost_owner_ref& y) {
    return View(x.kind) == View(y.kind) && View(x.name) == View(y.name) &&
           View(x.uid) == View(y.uid) && x.controller == y.controller;
  };
  return name() == other.name() && namespace_name() == other.namespace_name() &&
         uid() == other.uid() && a.creation_timestamp_ns == b.creation_timestamp_ns &&
         SameLabels(other) &&
         std::equal(a.annotations, a.annotations + a.annotations_len, b.annotations,
                    b.annotations + b.annotations_len, same_annotation) &&
         std::equal(a.owner_refs, a.owner_refs + a.owner_refs_len, b.owner_refs,
                    b.owner_refs + b.owner_refs_len, same_owner) &&
         internal::PackedOwnerPart(packed()) == internal::PackedOwnerPart(other.packed());
}

const PodData& Pod::data() const {
  if (const PodData* d = decoded_.load(std::memory_order_acquire)) return *d;
  auto fresh = std::make_unique<PodData>(Decode());
  const PodData* expected = nullptr;
  if (decoded_.compare_exchange_strong(expected, fresh.get(), std::memory_order_acq_rel)) {
    return *fresh.release();
  }
  return *expected;  // another thread decoded it first; ours goes
}

const Pod* Pod::FromView(const schedhost_pod_view* v) {
  const auto* base = internal::BaseFromView(v, kPodViewMagic);
  return base == nullptr ? nullptr : static_cast<const Pod*>(base);
}

}  // namespace schedhost::model
