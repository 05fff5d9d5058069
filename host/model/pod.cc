#include "host/model/pod.h"

#include <utility>

#include "host/model/pod_pack.h"
#include "host/model/view_convert.h"

namespace schedhost::model {
namespace {

constexpr uint64_t kPodViewMagic = 0x73636864706f6431ULL;  // "schdpod1"

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

std::shared_ptr<const Pod> Pod::Make(PodData data) {
  return std::make_shared<const Pod>(Key{}, std::move(data));
}

Pod::Pod(Key /*key*/, PodData data) {
  ApplyPodDefaults(data);
  metadata_ = std::move(data.metadata);
  holder_.magic = kPodViewMagic;
  holder_.owner = this;
  BuildView(data.spec, data.status, ComputePodResources(data.spec));
}

Pod::~Pod() { delete decoded_.load(std::memory_order_acquire); }

PodData Pod::Decode() const {
  PodData out;
  out.metadata = metadata_;
  internal::UnpackPodState(packed_, out.spec, out.status);
  // What BuildView keeps only in the view.
  out.spec.scheduler_name = scheduler_name();
  out.spec.node_name = node_name();
  out.spec.priority_class_name = priority_class_name();
  out.status.nominated_node_name = nominated_node_name();
  return out;
}

bool Pod::SameSpecAndStatus(const Pod& other) const {
  return packed_ == other.packed_ && node_name() == other.node_name() &&
         scheduler_name() == other.scheduler_name() &&
         nominated_node_name() == other.nominated_node_name() &&
         priority_class_name() == other.priority_class_name();
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
  return internal::OwnerFromView<Pod>(v, kPodViewMagic);
}

}  // namespace schedhost::model
