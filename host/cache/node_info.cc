#include "host/cache/node_info.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <limits>

namespace schedhost::cache {

namespace {

std::atomic<uint64_t> g_generation{0};

// AddResources adds `add` (sorted by id) into `into` (sorted by id), keeping it sorted.
template <class Vector>
void AddResources(Vector& into, schedhost_resources add) {
  for (size_t i = 0; i < add.len; ++i) {
    const auto& r = add.items[i];
    auto it =
        std::lower_bound(into.begin(), into.end(), r.name,
                         [](const schedhost_resource& a, schedhost_id n) { return a.name < n; });
    if (it != into.end() && it->name == r.name) {
      it->value += r.value;
    } else {
      schedhost_resource nr{};
      nr.name = r.name;
      nr.value = r.value;
      into.insert(it, nr);
    }
  }
}

// Quantity is `name`'s value in a resource list, 0 when absent.
int64_t Quantity(std::span<const schedhost_resource> resources, schedhost_id name) {
  for (const schedhost_resource& r : resources) {
    if (r.name == name) return r.value;
  }
  return 0;
}

}  // namespace

uint64_t NextGeneration() { return g_generation.fetch_add(1, std::memory_order_relaxed) + 1; }

bool HasAffinity(const schedhost_pod_view& pod) {
  const schedhost_affinity* a = pod.affinity;
  if (a == nullptr) return false;
  return a->pod_affinity.required_len > 0 || a->pod_affinity.preferred_len > 0 ||
         a->pod_anti_affinity.required_len > 0 || a->pod_anti_affinity.preferred_len > 0;
}

bool HasRequiredAntiAffinity(const schedhost_pod_view& pod) {
  return pod.affinity != nullptr && pod.affinity->pod_anti_affinity.required_len > 0;
}

NodeInfo::NodeInfo() {
  generation_ = NextGeneration();
  RefreshView();
}

NodeInfo::NodeInfo(std::shared_ptr<const model::Node> node) : node_(std::move(node)) {
  generation_ = NextGeneration();
  TakeNodeView();
  RefreshView();
}

NodeInfo::NodeInfo(const NodeInfo& other)
    : node_(other.node_),
      pods_(other.pods_),
      pod_views_(other.pod_views_),
      affinity_views_(other.affinity_views_),
      anti_affinity_views_(other.anti_affinity_views_),
      non_zero_cpu_(other.non_zero_cpu_),
      non_zero_memory_(other.non_zero_memory_),
      used_ports_(other.used_ports_),
      image_states_(other.image_states_),
      generation_(other.generation_),
      requested_(other.requested_) {
  TakeNodeView();
  RefreshView();
}

NodeInfo& NodeInfo::operator=(const NodeInfo& other) {
  if (this == &other) return *this;
  node_ = other.node_;
  pods_ = other.pods_;
  pod_views_ = other.pod_views_;
  affinity_views_ = other.affinity_views_;
  anti_affinity_views_ = other.anti_affinity_views_;
  requested_ = other.requested_;
  non_zero_cpu_ = other.non_zero_cpu_;
  non_zero_memory_ = other.non_zero_memory_;
  used_ports_ = other.used_ports_;
  image_states_ = other.image_states_;
  generation_ = other.generation_;
  TakeNodeView();
  RefreshView();
  return *this;
}

void NodeInfo::SetNode(std::shared_ptr<const model::Node> node) {
  node_ = std::move(node);
  generation_ = NextGeneration();
  TakeNodeView();
  RefreshView();
}

void NodeInfo::AddPod(std::shared_ptr<const model::Pod> pod) {
  Accumulate(pod->view());
  pods_.push_back(std::move(pod));
  generation_ = NextGeneration();
  RefreshView();
}

bool NodeInfo::RemovePod(std::string_view uid) {
  auto it =
      std::find_if(pods_.begin(), pods_.end(), [&](const auto& p) { return p->uid() == uid; });
  if (it == pods_.end()) return false;
  return Erase(it);
}

NodeInfo::PodList::iterator NodeInfo::Find(const model::Pod& pod) {
  auto it =
      std::find_if(pods_.begin(), pods_.end(), [&](const auto& p) { return p.get() == &pod; });
  if (it != pods_.end()) return it;
  return std::find_if(pods_.begin(), pods_.end(),
                      [&](const auto& p) { return p->uid() == pod.uid(); });
}

bool NodeInfo::RemovePod(const model::Pod& pod) {
  auto it = Find(pod);
  if (it == pods_.end()) return false;
  return Erase(it);
}

size_t NodeInfo::RemovePods(std::span<const std::shared_ptr<const model::Pod>> pods) {
  size_t removed = 0;
  for (const auto& pod : pods) {
    auto it = Find(*pod);
    if (it == pods_.end()) continue;
    pods_.erase(it);
    ++removed;
  }
  if (removed != 0) PodsChanged();
  return removed;
}

bool NodeInfo::Erase(PodList::iterator it) {
  pods_.erase(it);
  PodsChanged();
  return true;
}

void NodeInfo::Clear() {
  node_.reset();
  TakeNodeView();
  pods_.clear();
  image_states_.clear();
  PodsChanged();  // recomputing over no pods empties the rest
}

void NodeInfo::PodsChanged() {
  Recompute();
  generation_ = NextGeneration();
  RefreshView();
}

void NodeInfo::SetImageStates(std::vector<schedhost_image_state> states) {
  image_states_ = std::move(states);
  RefreshView();
}

int64_t NodeInfo::Requested(schedhost_id resource) const { return Quantity(requested(), resource); }

void NodeInfo::Recompute() {
  pod_views_.clear();
  affinity_views_.clear();
  anti_affinity_views_.clear();
  requested_.clear();
  used_ports_.clear();
  non_zero_cpu_ = 0;
  non_zero_memory_ = 0;
  for (const auto& pod : pods_) Accumulate(pod->view());
}

void NodeInfo::Accumulate(const schedhost_pod_view* v) {
  pod_views_.push_back(v);
  if (HasAffinity(*v)) affinity_views_.push_back(v);
  if (HasRequiredAntiAffinity(*v)) anti_affinity_views_.push_back(v);
  AddResources(requested_, v->requests);
  non_zero_cpu_ += v->non_zero_milli_cpu;
  non_zero_memory_ += v->non_zero_memory;
  for (size_t i = 0; i < v->host_ports_len; ++i) {
    const auto& hp = v->host_ports[i];
    used_ports_.push_back(schedhost_used_port{hp.protocol, hp.port, hp.host_ip});
  }
}

void NodeInfo::TakeNodeView() {
  if (node_ == nullptr) {
    node_holder_ = {};
    allocatable_.clear();
    return;
  }
  node_holder_ = node_->view_holder();
  const auto alloc = node_->allocatable();
  allocatable_.assign(alloc.begin(), alloc.end());
  node_holder_.view.allocatable = schedhost_resources{allocatable_.data(), allocatable_.size()};
}

void NodeInfo::RefreshView() {
  schedhost_node_info_view& v = holder_.view;
  v = schedhost_node_info_view{};
  v.struct_size = sizeof(schedhost_node_info_view);
  v.node = node_ != nullptr ? &node_holder_.view : nullptr;
  v.pods = pod_views_.data();
  v.pods_len = pod_views_.size();
  v.pods_with_affinity = affinity_views_.data();
  v.pods_with_affinity_len = affinity_views_.size();
  v.pods_with_required_anti_affinity = anti_affinity_views_.data();
  v.pods_with_required_anti_affinity_len = anti_affinity_views_.size();
  v.requested = schedhost_resources{requested_.data(), requested_.size()};
  v.non_zero_requested_milli_cpu = non_zero_cpu_;
  v.non_zero_requested_memory = non_zero_memory_;
  v.used_ports = used_ports_.data();
  v.used_ports_len = used_ports_.size();
  v.image_states = image_states_.data();
  v.image_states_len = image_states_.size();
  v.generation = generation_;
  holder_.owner = this;
  FillSummary();
}

namespace {

uint32_t Saturated(size_t n) {
  return static_cast<uint32_t>(std::min<size_t>(n, std::numeric_limits<uint32_t>::max()));
}

}  // namespace

void NodeInfo::FillSummary() {
  schedhost_node_info_view& v = holder_.view;
  schedhost_node_summary& s = v.summary;
  s = schedhost_node_summary{};
  s.flags = SCHEDHOST_NODE_SUMMARY_VALID;
  s.requested_milli_cpu = Requested(SCHEDHOST_ID_CPU);
  s.requested_memory = Requested(SCHEDHOST_ID_MEMORY);
  s.non_zero_requested_milli_cpu = v.non_zero_requested_milli_cpu;
  s.non_zero_requested_memory = v.non_zero_requested_memory;
  s.pods_len = Saturated(v.pods_len);
  s.image_states_len = Saturated(v.image_states_len);
  if (v.node == nullptr) {
    s.name_id = SCHEDHOST_ID_EMPTY;
    return;
  }
  const schedhost_node_view& n = *v.node;
  const std::span<const schedhost_resource> allocatable(allocatable_.data(), allocatable_.size());
  s.allocatable_milli_cpu = Quantity(allocatable, SCHEDHOST_ID_CPU);
  s.allocatable_memory = Quantity(allocatable, SCHEDHOST_ID_MEMORY);
  s.allocatable_pods = Quantity(allocatable, SCHEDHOST_ID_PODS);
  s.name_id = n.name_id;
  s.flags |= SCHEDHOST_NODE_SUMMARY_HAS_NODE;
  if (n.unschedulable != 0) s.flags |= SCHEDHOST_NODE_SUMMARY_UNSCHEDULABLE;
  s.taints_len = Saturated(n.taints_len);
}

const NodeInfo* NodeInfo::FromView(const schedhost_node_info_view* v) {
  static_assert(offsetof(Holder, view) == 0);
  return v == nullptr ? nullptr : reinterpret_cast<const Holder*>(v)->owner;
}

namespace {

struct ScratchSlots {
  static constexpr int kSlots = 4;
  std::array<std::unique_ptr<NodeInfo>, kSlots> nodes;
  std::array<bool, kSlots> busy{};
};
thread_local ScratchSlots t_scratch;

}  // namespace

ScratchCopy::ScratchCopy(const NodeInfo& source) {
  for (int i = 0; i < ScratchSlots::kSlots; ++i) {
    if (t_scratch.busy[i]) continue;
    t_scratch.busy[i] = true;
    slot_ = i;
    if (!t_scratch.nodes[i]) t_scratch.nodes[i] = std::make_unique<NodeInfo>();
    node_ = t_scratch.nodes[i].get();
    *node_ = source;
    return;
  }
  own_ = std::make_unique<NodeInfo>(source);
  node_ = own_.get();
}

ScratchCopy::~ScratchCopy() {
  if (slot_ < 0) return;
  node_->Clear();
  t_scratch.busy[slot_] = false;
}

}  // namespace schedhost::cache
