// NodeResourcesBalancedAllocation's extension points: PreScore (the pod's requests, once per
// cycle; Skip for a pod that requests nothing) and Score (how much the pod improves the node's
// balance, 1 - standard deviation of the resource fractions, scaled to 50..100).
#include "node_resources_balanced_allocation.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

namespace schedhost::plugins {
namespace {

// PreScoreState is the pod's request for each configured resource, index-aligned with
// resources_. Read-only once written, so Score may read it from every thread.
struct PreScoreState {
  std::vector<int64_t> requests;
};

// PodRequest is what the pod asks for of `id`: plain requests (max of init containers and the
// sum of containers, plus overhead), no non-zero defaults (upstream's useRequested, v1.26+).
int64_t PodRequest(const Pod& pod, Id id) { return pod.requests().Get(id); }

}  // namespace

NodeResourcesBalancedAllocation::NodeResourcesBalancedAllocation(const Host& host, const Args& args)
    : Plugin(host), prescore_key_(host.Intern(kPreScoreStateKey)) {
  const BalancedArgs parsed = ParseBalancedArgs(args);
  resources_.reserve(parsed.resources.size());
  for (const auto& name : parsed.resources) {
    Kind kind = Kind::kUnscored;  // native names such as "pods" or "storage" never take part
    if (name == "cpu") {
      kind = Kind::kCpu;
    } else if (name == "memory") {
      kind = Kind::kMemory;
    } else if (name == "ephemeral-storage") {
      kind = Kind::kEphemeralStorage;
    } else if (IsScalarResource(name)) {
      kind = Kind::kScalar;
    }
    resources_.push_back({host.Intern(name), kind});
  }
}

Status NodeResourcesBalancedAllocation::PreScore(CycleState& state, const Pod& pod,
                                                 const NodeInfoList& /*nodes*/) {
  auto s = std::make_unique<PreScoreState>();
  s->requests = Requests(pod);
  if (BestEffort(s->requests)) return Status::Skip();
  state.Write(prescore_key_, std::move(s));
  return {};
}

std::vector<int64_t> NodeResourcesBalancedAllocation::Requests(const Pod& pod) const {
  std::vector<int64_t> requests;
  requests.reserve(resources_.size());
  for (const auto& r : resources_) requests.push_back(PodRequest(pod, r.id));
  return requests;
}

bool NodeResourcesBalancedAllocation::BestEffort(const std::vector<int64_t>& requests) {
  // A pod that requests nothing would land wherever balance is best already, pod after pod on
  // one node: upstream leaves it to the other scores (kubernetes#129138).
  return std::all_of(requests.begin(), requests.end(), [](int64_t v) { return v == 0; });
}

double NodeResourcesBalancedAllocation::Fraction(const ScoredResource& r, int64_t pod_req,
                                                 int64_t add, const NodeInfo& ni) {
  // A scalar resource the pod does not ask for, and any resource the node has none of, are
  // left out (upstream returns allocatable 0 for both).
  if (r.kind == Kind::kUnscored || (r.kind == Kind::kScalar && pod_req == 0)) return -1;
  const int64_t allocatable = ni.Allocatable(r.id);
  if (allocatable == 0) return -1;
  const int64_t requested = ni.Requested(r.id) + add;
  const double f = static_cast<double>(requested) / static_cast<double>(allocatable);
  return f > 1 ? 1.0 : f;
}

int64_t NodeResourcesBalancedAllocation::Balance(const std::vector<int64_t>& requests,
                                                 bool with_pod, const NodeInfo& ni) const {
  // Two passes over the resources instead of a per-node array of fractions: the first gives
  // the count and the mean, the second the squared deviations. The arithmetic is upstream's,
  // so scores truncate exactly as kube-scheduler's do.
  auto fraction = [&](size_t i) {
    return Fraction(resources_[i], requests[i], with_pod ? requests[i] : 0, ni);
  };
  size_t count = 0;
  double total = 0;
  double first = 0;
  double second = 0;
  for (size_t i = 0; i < resources_.size(); ++i) {
    const double f = fraction(i);
    if (f < 0) continue;
    if (count == 0) first = f;
    if (count == 1) second = f;
    total += f;
    ++count;
  }
  double std_dev = 0;
  if (count == 2) {
    std_dev = std::abs((first - second) / 2);
  } else if (count > 2) {
    const double mean = total / static_cast<double>(count);
    double sum = 0;
    for (size_t i = 0; i < resources_.size(); ++i) {
      const double f = fraction(i);
      if (f < 0) continue;
      sum += (f - mean) * (f - mean);
    }
    std_dev = std::sqrt(sum / static_cast<double>(count));
  }
  return static_cast<int64_t>((1 - std_dev) * static_cast<double>(SCHEDHOST_MAX_NODE_SCORE));
}

Status NodeResourcesBalancedAllocation::Score(const CycleState& state, const Pod& pod,
                                              const NodeInfo& ni, int64_t& score) {
  const auto* pre = state.Read<PreScoreState>(prescore_key_);
  std::vector<int64_t> own;
  if (pre == nullptr) {
    // Without PreScore (Score called alone): the same requests, and the same best-effort rule.
    own = Requests(pod);
    if (BestEffort(own)) {
      score = 0;
      return {};
    }
  }
  const std::vector<int64_t>& requests = pre != nullptr ? pre->requests : own;
  // Upstream (v1.37) scores how much the pod improves the node's balance: both balances lie in
  // [50, 100], so 50 + (50 + with - without) / 2 stays in [50, 100], 75 meaning no change.
  constexpr int64_t kHalf = SCHEDHOST_MAX_NODE_SCORE / 2;
  const int64_t with_pod = Balance(requests, true, ni);
  const int64_t without_pod = Balance(requests, false, ni);
  score = kHalf + (kHalf + with_pod - without_pod) / 2;
  return {};
}

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::NodeResourcesBalancedAllocation)
