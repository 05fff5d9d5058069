// NodeResourcesBalancedAllocation's extension points: PreScore (the pod's requests, once per
// cycle; Skip for a pod that requests nothing) and Score (how much the pod improves the node's
// balance, 1 - standard deviation of the resource fractions, scaled to 50..100).
#include "node_resources_balanced_allocation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <span>
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

namespace {

// BalanceOf is (1 - the standard deviation of `fractions`) x 100, truncated as upstream's
// arithmetic truncates.
int64_t BalanceOf(std::span<const double> fractions) {
  double std_dev = 0;
  if (fractions.size() == 2) {
    std_dev = std::abs((fractions[0] - fractions[1]) / 2);
  } else if (fractions.size() > 2) {
    double total = 0;
    for (double f : fractions) total += f;
    const double mean = total / static_cast<double>(fractions.size());
    double sum = 0;
    for (double f : fractions) sum += (f - mean) * (f - mean);
    std_dev = std::sqrt(sum / static_cast<double>(fractions.size()));
  }
  return static_cast<int64_t>((1 - std_dev) * static_cast<double>(SCHEDHOST_MAX_NODE_SCORE));
}

// kInline is how many resources Balance keeps on the stack (upstream's default lists two).
constexpr size_t kInline = 8;

}  // namespace

NodeResourcesBalancedAllocation::Balances NodeResourcesBalancedAllocation::Balance(
    const std::vector<int64_t>& requests, const NodeInfo& ni) const {
  std::array<double, 2 * kInline> inline_fractions{};
  std::vector<double> heap_fractions;
  std::span<double> fractions(inline_fractions);
  if (resources_.size() > kInline) {
    heap_fractions.resize(2 * resources_.size());
    fractions = heap_fractions;
  }
  const std::span<double> with = fractions.first(fractions.size() / 2);
  const std::span<double> without = fractions.last(fractions.size() / 2);
  size_t count = 0;
  for (size_t i = 0; i < resources_.size(); ++i) {
    const ScoredResource& r = resources_[i];
    // A scalar resource the pod does not ask for, and any resource the node has none of, are
    // left out (upstream returns allocatable 0 for both).
    if (r.kind == Kind::kUnscored || (r.kind == Kind::kScalar && requests[i] == 0)) continue;
    const int64_t allocatable = ni.Allocatable(r.id);
    if (allocatable == 0) continue;
    const int64_t requested = ni.Requested(r.id);
    const auto alloc = static_cast<double>(allocatable);
    with[count] = std::min(static_cast<double>(requested + requests[i]) / alloc, 1.0);
    without[count] = std::min(static_cast<double>(requested) / alloc, 1.0);
    ++count;
  }
  return {BalanceOf(with.first(count)), BalanceOf(without.first(count))};
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
  const Balances b = Balance(requests, ni);
  score = kHalf + (kHalf + b.with_pod - b.without_pod) / 2;
  return {};
}

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::NodeResourcesBalancedAllocation)
