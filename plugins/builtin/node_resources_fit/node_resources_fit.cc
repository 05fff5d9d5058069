// NodeResourcesFit's extension points: PreFilter/Filter (does the pod fit), PreScore/Score (how
// allocated the node would be), and the cluster events with their queueing hints.
#include "node_resources_fit.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace schedhost::plugins {
namespace {

constexpr std::string_view kTooManyPods = "Too many pods";
constexpr std::string_view kInsufficientCpu = "Insufficient cpu";
constexpr std::string_view kInsufficientMemory = "Insufficient memory";
constexpr std::string_view kInsufficientEphemeral = "Insufficient ephemeral-storage";

// PreScoreState is the pod's request for each scored resource, index-aligned with resources_.
struct PreScoreState {
  std::vector<int64_t> requests;
};

// `reason` outlives `out`: a constant, or a Request kept in the cycle state or by the caller.
// `unresolvable`: the pod asks for more than the node has at all, so no preemption can help
// (upstream's InsufficientResource.Unresolvable); one such resource makes the whole status so.
void AddReason(Status& out, std::string_view reason, bool unresolvable) {
  const Code code = unresolvable ? Code::kUnschedulableAndUnresolvable : Code::kUnschedulable;
  if (out.ok()) {
    out = Status(code, Status::Static{reason});
  } else if (unresolvable && out.code() != code) {
    std::vector<std::string> reasons = out.reasons();
    reasons.emplace_back(reason);
    out = Status(code, std::move(reasons));
  } else {
    out.AddReason(std::string(reason));
  }
}

}  // namespace

// Request is the part of a pod's requests Filter checks: the native resources, and the scalar
// resources that are requested (> 0) and not ignored, each with its ready-made reason.
struct NodeResourcesFit::Request {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  int64_t ephemeral_storage = 0;
  struct Scalar {
    Id id;
    int64_t value;
    std::string reason;
  };
  std::vector<Scalar> scalars;
};

NodeResourcesFit::NodeResourcesFit(const Host& host, const Args& args)
    : Plugin(host),
      prefilter_key_(host.Intern(kPreFilterStateKey)),
      prescore_key_(host.Intern(kPreScoreStateKey)) {
  FitArgs parsed = ParseFitArgs(args);
  type_ = parsed.type;
  shape_ = std::move(parsed.shape);
  for (const auto& r : parsed.resources) {
    Kind kind = Kind::kUnscored;  // native names such as "pods" or "storage" score nothing
    if (r.name == "cpu") {
      kind = Kind::kCpu;
    } else if (r.name == "memory") {
      kind = Kind::kMemory;
    } else if (r.name == "ephemeral-storage") {
      kind = Kind::kEphemeralStorage;
    } else if (IsScalarResourceName(r.name)) {
      kind = Kind::kScalar;
    }
    resources_.push_back({host.Intern(r.name), r.weight, kind});
  }
  for (const auto& name : parsed.ignored_resources) ignored_resources_.push_back(host.Intern(name));
  std::sort(ignored_resources_.begin(), ignored_resources_.end());
  ignored_groups_ = std::move(parsed.ignored_resource_groups);
}

NodeResourcesFit::Request NodeResourcesFit::ComputeRequest(const Pod& pod) const {
  Request req;
  for (const schedhost_resource& r : pod.requests().items()) {
    switch (r.name) {
      case SCHEDHOST_ID_CPU:
        req.milli_cpu = r.value;
        continue;
      case SCHEDHOST_ID_MEMORY:
        req.memory = r.value;
        continue;
      case SCHEDHOST_ID_EPHEMERAL_STORAGE:
        req.ephemeral_storage = r.value;
        continue;
      case SCHEDHOST_ID_PODS:
        continue;
      default:
        break;
    }
    if (r.value == 0) continue;  // upstream checks only scalar resources actually requested
    const std::string_view name = host().IdString(r.name);
    if (!IsScalarResourceName(name)) continue;  // not tracked per node, as upstream
    if (IsExtendedResourceName(name)) {
      if (std::binary_search(ignored_resources_.begin(), ignored_resources_.end(), r.name))
        continue;
      if (!ignored_groups_.empty()) {
        const std::string_view group = name.substr(0, name.find('/'));
        if (std::find(ignored_groups_.begin(), ignored_groups_.end(), group) !=
            ignored_groups_.end()) {
          continue;
        }
      }
    }
    req.scalars.push_back({r.name, r.value, "Insufficient " + std::string(name)});
  }
  return req;
}

template <class Allocatable, class Requested>
void NodeResourcesFit::Insufficient(const Request& req, Allocatable allocatable,
                                    Requested requested, int64_t pods, Status& out) const {
  if (pods + 1 > allocatable(SCHEDHOST_ID_PODS)) AddReason(out, kTooManyPods, false);
  if (req.milli_cpu == 0 && req.memory == 0 && req.ephemeral_storage == 0 && req.scalars.empty()) {
    return;
  }
  // A resource the pod does not ask for is not looked up: ephemeral storage and scalars live
  // in the node's arrays, not in the summary's lines, and reading them costs a cache miss a node.
  auto check = [&](Id id, int64_t want, std::string_view reason) {
    if (want <= 0) return;
    const int64_t has = allocatable(id);
    if (want > has - requested(id)) AddReason(out, reason, want > has);
  };
  check(SCHEDHOST_ID_CPU, req.milli_cpu, kInsufficientCpu);
  check(SCHEDHOST_ID_MEMORY, req.memory, kInsufficientMemory);
  check(SCHEDHOST_ID_EPHEMERAL_STORAGE, req.ephemeral_storage, kInsufficientEphemeral);
  for (const auto& s : req.scalars) check(s.id, s.value, s.reason);
}

Status NodeResourcesFit::PreFilter(CycleState& state, const Pod& pod, PreFilterResult& /*result*/) {
  state.Write(prefilter_key_, std::make_unique<Request>(ComputeRequest(pod)));
  return {};
}

Status NodeResourcesFit::Filter(const CycleState& state, const Pod& /*pod*/, const NodeInfo& ni) {
  const auto* req = state.Read<Request>(prefilter_key_);
  if (req == nullptr) {
    return Status::Error(
        "reading \"" + std::string(kPreFilterStateKey) +
        "\" from cycle state: not found (is PreFilter of NodeResourcesFit enabled?)");
  }
  Status out;
  // Through NodeInfo's lookups, which read the summary's lines where it has the figure.
  Insufficient(
      *req, [&ni](Id id) { return ni.Allocatable(id); }, [&ni](Id id) { return ni.Requested(id); },
      static_cast<int64_t>(ni.pod_count()), out);
  return out;
}

int64_t NodeResourcesFit::PodRequestFor(const Pod& pod, const ScoredResource& r) const {
  switch (r.kind) {
    case Kind::kCpu:
      return pod.non_zero_milli_cpu();
    case Kind::kMemory:
      return pod.non_zero_memory();
    default:
      return pod.requests().Get(r.id);
  }
}

Status NodeResourcesFit::PreScore(CycleState& state, const Pod& pod,
                                  const NodeInfoList& /*nodes*/) {
  auto s = std::make_unique<PreScoreState>();
  s->requests.reserve(resources_.size());
  for (const auto& r : resources_) s->requests.push_back(PodRequestFor(pod, r));
  state.Write(prescore_key_, std::move(s));
  return {};
}

int64_t NodeResourcesFit::ShapeScore(int64_t utilization) const {
  // A broken line through the shape's points, flat before the first and after the last.
  for (size_t i = 0; i < shape_.size(); ++i) {
    if (utilization <= shape_[i].utilization) {
      if (i == 0) return shape_[0].score;
      const FitShapePoint& a = shape_[i - 1];
      const FitShapePoint& b = shape_[i];
      return a.score +
             (b.score - a.score) * (utilization - a.utilization) / (b.utilization - a.utilization);
    }
  }
  return shape_.back().score;
}

int64_t NodeResourcesFit::ResourceScore(int64_t requested, int64_t allocatable) const {
  constexpr int64_t kMax = SCHEDHOST_MAX_NODE_SCORE;
  switch (type_) {
    case FitScoringType::kLeastAllocated:
      if (requested > allocatable) return 0;
      return (allocatable - requested) * kMax / allocatable;
    case FitScoringType::kMostAllocated:
      // Pods without requests count with defaults, so requested may exceed allocatable.
      return std::min(requested, allocatable) * kMax / allocatable;
    case FitScoringType::kRequestedToCapacityRatio:
      if (requested > allocatable) return ShapeScore(kMax);
      return ShapeScore(requested * kMax / allocatable);
  }
  return 0;
}

Status NodeResourcesFit::Score(const CycleState& state, const Pod& pod, const NodeInfo& ni,
                               int64_t& score) {
  const auto* pre = state.Read<PreScoreState>(prescore_key_);
  int64_t sum = 0;
  int64_t weight_sum = 0;
  for (size_t i = 0; i < resources_.size(); ++i) {
    const ScoredResource& r = resources_[i];
    const int64_t pod_req = pre != nullptr ? pre->requests[i] : PodRequestFor(pod, r);
    int64_t alloc = 0;
    int64_t used = 0;
    switch (r.kind) {
      case Kind::kCpu:
        alloc = ni.Allocatable(r.id);
        used = ni.non_zero_requested_milli_cpu() + pod_req;
        break;
      case Kind::kMemory:
        alloc = ni.Allocatable(r.id);
        used = ni.non_zero_requested_memory() + pod_req;
        break;
      case Kind::kEphemeralStorage:
        alloc = ni.Allocatable(r.id);
        used = ni.Requested(r.id) + pod_req;
        break;
      case Kind::kScalar:
        // A scalar resource the pod does not ask for does not rank nodes.
        if (pod_req == 0) continue;
        alloc = ni.Allocatable(r.id);
        used = ni.Requested(r.id) + pod_req;
        break;
      case Kind::kUnscored:
        continue;
    }
    if (alloc <= 0) continue;  // the node does not have it: left out of the average
    const int64_t s = ResourceScore(used, alloc);
    // RequestedToCapacityRatio leaves zero-scoring resources out of the average, as upstream.
    if (type_ == FitScoringType::kRequestedToCapacityRatio && s <= 0) continue;
    sum += s * r.weight;
    weight_sum += r.weight;
  }
  if (weight_sum == 0) {
    score = 0;
  } else if (type_ == FitScoringType::kRequestedToCapacityRatio) {
    score = std::llround(static_cast<double>(sum) / static_cast<double>(weight_sum));
  } else {
    score = sum / weight_sum;
  }
  return {};
}

QueueingHint NodeResourcesFit::OnNodeChange(const Pod& pod, const schedhost_cluster_event& /*event*/,
                                           const EventObject& old_obj,
                                           const EventObject& new_obj) const {
  const std::optional<Node> now = new_obj.node();
  if (!now) return QueueingHint::kQueue;
  const Request req = ComputeRequest(pod);
  const Resources alloc = now->allocatable();
  Status fit;
  Insufficient(
      req, [&alloc](Id id) { return alloc.Get(id); }, [](Id) { return int64_t{0}; }, 0, fit);
  if (!fit.ok()) return QueueingHint::kSkip;  // would not fit even on the empty node
  const std::optional<Node> before = old_obj.node();
  if (!before) return QueueingHint::kQueue;  // a new node the pod fits on
  // An update helps only when something the pod needs grew.
  const Resources was = before->allocatable();
  auto grew = [&](Id id) { return alloc.Get(id) > was.Get(id); };
  if (grew(SCHEDHOST_ID_PODS)) return QueueingHint::kQueue;
  if ((req.milli_cpu > 0 && grew(SCHEDHOST_ID_CPU)) ||
      (req.memory > 0 && grew(SCHEDHOST_ID_MEMORY)) ||
      (req.ephemeral_storage > 0 && grew(SCHEDHOST_ID_EPHEMERAL_STORAGE))) {
    return QueueingHint::kQueue;
  }
  for (const auto& s : req.scalars) {
    if (grew(s.id)) return QueueingHint::kQueue;
  }
  return QueueingHint::kSkip;
}

QueueingHint NodeResourcesFit::OnPodDelete(const Pod& /*pod*/,
                                          const schedhost_cluster_event& /*event*/,
                                          const EventObject& old_obj,
                                          const EventObject& /*new_obj*/) const {
  // Deleting a pod frees resources only if it was bound to a node.
  const std::optional<Pod> gone = old_obj.pod();
  return gone && gone->node_name().empty() ? QueueingHint::kSkip : QueueingHint::kQueue;
}

std::span<const schedhost_event_registration> NodeResourcesFit::EventsToRegister() {
  static constexpr schedhost_event_registration kEvents[] = {
      OnEvent<&NodeResourcesFit::OnPodDelete>(SCHEDHOST_RESOURCE_POD, SCHEDHOST_ACTION_DELETE),
      OnEvent<&NodeResourcesFit::OnNodeChange>(
          SCHEDHOST_RESOURCE_NODE,
          SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE_NODE_ALLOCATABLE),
  };
  return kEvents;
}

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::NodeResourcesFit)
