// NodeResourcesFit: keeps a pod off nodes without room for its resource requests and ranks the
// rest by how allocated they would be, as upstream kube-scheduler's NodeResourcesFit does.
// PreFilter computes the pod's requests once per cycle; Filter reports every insufficient
// resource ("Too many pods", "Insufficient cpu", ...); PreScore/Score apply the configured
// strategy (LeastAllocated, MostAllocated or RequestedToCapacityRatio) over weighted resources.
//
//   [profile.plugin_config.NodeResourcesFit]
//   scoring_strategy = { type = "MostAllocated", resources = [{ name = "cpu", weight = 1 }] }
#pragma once

#include <cstdint>
#include <schedhost/plugin.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace schedhost::plugins {

/// FitScoringType is NodeResourcesFit's scoring strategy.
enum class FitScoringType { kLeastAllocated, kMostAllocated, kRequestedToCapacityRatio };

/// FitResourceSpec is one resource the score looks at, with its weight in [1, 100].
struct FitResourceSpec {
  std::string name;
  int64_t weight = 1;
};

/// FitShapePoint is one point of the RequestedToCapacityRatio shape; `score` is already scaled
/// from the configured 0..10 to the framework's 0..100.
struct FitShapePoint {
  int64_t utilization = 0;
  int64_t score = 0;
};

/// FitArgs are NodeResourcesFit's validated arguments, upstream's defaults applied.
struct FitArgs {
  std::vector<std::string> ignored_resources;
  std::vector<std::string> ignored_resource_groups;
  FitScoringType type = FitScoringType::kLeastAllocated;
  std::vector<FitResourceSpec> resources;  // defaults to cpu 1 and memory 1
  std::vector<FitShapePoint> shape;        // RequestedToCapacityRatio only
};

/// ParseFitArgs reads and validates plugin_config.NodeResourcesFit; throws ArgsError naming the
/// key, its location and what is wrong.
FitArgs ParseFitArgs(const Args& args);

/// IsQualifiedName tells whether `name` is a Kubernetes qualified name ([prefix/]name).
bool IsQualifiedName(std::string_view name);
/// IsExtendedResourceName tells whether `name` is an extended resource (domain-prefixed, not
/// kubernetes.io), the only kind ignored_resources and ignored_resource_groups apply to.
bool IsExtendedResourceName(std::string_view name);
/// IsScalarResourceName tells whether `name` is a scalar resource (extended, hugepages-*,
/// *kubernetes.io/*, attachable-volumes-*): those are checked and scored per name.
bool IsScalarResourceName(std::string_view name);

/// NodeResourcesFit checks and scores a pod's resource requests against nodes.
class NodeResourcesFit final : public Plugin,
                               public PreFilterPlugin,
                               public FilterPlugin,
                               public PreScorePlugin,
                               public ScorePlugin,
                               public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NodeResourcesFit";
  static constexpr std::string_view kVersion = "1.0.0";
  /// kPreFilterStateKey names the CycleState entry PreFilter writes for Filter.
  static constexpr std::string_view kPreFilterStateKey = "PreFilterNodeResourcesFit";
  /// kPreScoreStateKey names the CycleState entry PreScore writes for Score.
  static constexpr std::string_view kPreScoreStateKey = "PreScoreNodeResourcesFit";

  /// NodeResourcesFit validates its arguments (see ParseFitArgs) and interns what it needs.
  NodeResourcesFit(const Host& host, const Args& args);

  /// PreFilter stores the pod's effective requests (the ones Filter must check) in `state`.
  Status PreFilter(CycleState& state, const Pod& pod, PreFilterResult& result) override;

  /// Filter returns Unschedulable with one reason per insufficient resource, Error when
  /// PreFilter's state is missing, else Success.
  Status Filter(const CycleState& state, const Pod& pod, const NodeInfo& ni) override;

  /// PreScore stores the pod's request for each scored resource (non-zero cpu and memory).
  Status PreScore(CycleState& state, const Pod& pod, const NodeInfoList& nodes) override;

  /// Score rates `ni` in [0, 100] with the configured strategy; no NormalizeScore is needed.
  Status Score(const CycleState& state, const Pod& pod, const NodeInfo& ni,
               int64_t& score) override;

  /// EventsToRegister names pod deletions and node additions / allocatable updates, with
  /// queueing hints that skip events which cannot make the pod fit.
  std::span<const schedhost_event_registration> EventsToRegister() override;

 private:
  // Kind tells where a scored resource's numbers come from.
  enum class Kind { kCpu, kMemory, kEphemeralStorage, kScalar, kUnscored };
  struct ScoredResource {
    Id id;
    int64_t weight;
    Kind kind;
  };
  struct Request;

  Request ComputeRequest(const Pod& pod) const;
  // Insufficient adds one reason per resource `req` does not fit into (allocatable minus
  // requested, each looked up by resource id, with `pods` pods already there) to `out`.
  template <class Allocatable, class Requested>
  void Insufficient(const Request& req, Allocatable allocatable, Requested requested, int64_t pods,
                    Status& out) const;
  int64_t PodRequestFor(const Pod& pod, const ScoredResource& r) const;
  int64_t ShapeScore(int64_t utilization) const;
  int64_t ResourceScore(int64_t requested, int64_t allocatable) const;

  // The queueing hints (EventsToRegister): a node added or grown that the pod fits on, a bound
  // pod deleted.
  QueueingHint OnNodeChange(const Pod& pod, const schedhost_cluster_event& event,
                            const EventObject& old_obj, const EventObject& new_obj) const;
  QueueingHint OnPodDelete(const Pod& pod, const schedhost_cluster_event& event,
                           const EventObject& old_obj, const EventObject& new_obj) const;

  FitScoringType type_;
  std::vector<ScoredResource> resources_;
  std::vector<FitShapePoint> shape_;
  std::vector<Id> ignored_resources_;  // sorted ids
  std::vector<std::string> ignored_groups_;
  Id prefilter_key_;
  Id prescore_key_;
};

}  // namespace schedhost::plugins
