// NodeResourcesBalancedAllocation: ranks nodes by how evenly the pod would use their resources,
// as upstream kube-scheduler's NodeResourcesBalancedAllocation does (v1.26-v1.28 semantics).
// For each configured resource the fraction (node's requested + pod's request) / allocatable,
// capped at 1, is taken; the score is (1 - standard deviation of the fractions) * 100. Plain
// requests are used on both sides (upstream's useRequested), not the non-zero defaults.
//
//   [profile.plugin_config.NodeResourcesBalancedAllocation]
//   resources = [{ name = "cpu", weight = 1 }, { name = "memory", weight = 1 }]
#pragma once

#include <cstdint>
#include <schedhost/plugin.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace schedhost::plugins {

/// BalancedArgs are NodeResourcesBalancedAllocation's validated arguments, upstream's default
/// (cpu and memory) applied when no resource is listed.
struct BalancedArgs {
  std::vector<std::string> resources;
};

/// ParseBalancedArgs reads and validates plugin_config.NodeResourcesBalancedAllocation; throws
/// ArgsError naming the key, its location and what is wrong.
BalancedArgs ParseBalancedArgs(const Args& args);

/// IsScalarResource tells whether `name` is a scalar resource (extended, hugepages-*,
/// *kubernetes.io/*, attachable-volumes-*): scored only when the pod requests it.
bool IsScalarResource(std::string_view name);

/// NodeResourcesBalancedAllocation favours nodes with balanced resource usage.
class NodeResourcesBalancedAllocation final : public Plugin,
                                              public PreScorePlugin,
                                              public ScorePlugin {
 public:
  static constexpr std::string_view kName = "NodeResourcesBalancedAllocation";
  static constexpr std::string_view kVersion = "1.0.0";
  /// kPreScoreStateKey names the CycleState entry PreScore writes for Score.
  static constexpr std::string_view kPreScoreStateKey = "PreScoreNodeResourcesBalancedAllocation";

  /// NodeResourcesBalancedAllocation validates its arguments (see ParseBalancedArgs).
  NodeResourcesBalancedAllocation(const Host& host, const Args& args);

  /// PreScore stores the pod's request for each configured resource, in argument order.
  Status PreScore(CycleState& state, const Pod& pod, const NodeInfoList& nodes) override;

  /// Score rates `ni` in [0, 100]: 100 when every fraction is equal (or none applies). Without
  /// PreScore's state it computes the pod's requests itself, as upstream.
  Status Score(const CycleState& state, const Pod& pod, const NodeInfo& ni,
               int64_t& score) override;

 private:
  // Kind tells where a resource's numbers come from.
  enum class Kind { kCpu, kMemory, kEphemeralStorage, kScalar, kUnscored };
  struct ScoredResource {
    Id id;
    Kind kind;
  };

  // Requests is the pod's request of each configured resource, index-aligned with resources_;
  // BestEffort is true when it requests none of them.
  std::vector<int64_t> Requests(const Pod& pod) const;
  static bool BestEffort(const std::vector<int64_t>& requests);
  // Balances is the node's balance with the pod's `requests` added and without them: (1 - the
  // standard deviation of the resource fractions) x 100, truncated, each. One pass reads each
  // resource's figures once for both.
  struct Balances {
    int64_t with_pod;
    int64_t without_pod;
  };
  Balances Balance(const std::vector<int64_t>& requests, const NodeInfo& ni) const;

  std::vector<ScoredResource> resources_;
  Id prescore_key_;
};

}  // namespace schedhost::plugins
