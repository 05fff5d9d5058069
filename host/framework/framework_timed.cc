// The public extension-point runners: each runs its untimed runner (framework_run.cc) and
// records scheduler_framework_extension_point_duration_seconds{extension_point,status,profile}
// for the points upstream times (not PreEnqueue, QueueSort or the per-node Filter).
#include "host/framework/framework.h"
#include "host/framework/framework_metrics.h"

namespace schedhost::framework {

using config::Point;

std::pair<NodeNameSet, Status> Framework::RunPreFilterPlugins(CycleState& state,
                                                              const schedhost_pod_view* pod) {
  const metrics::Stopwatch since;
  auto result = UntimedPreFilter(state, pod);
  metrics_->ObservePoint(SlotOf(Point::kPreFilter), result.second.code, since);
  return result;
}

std::pair<std::string, Status> Framework::RunPostFilterPlugins(CycleState& state,
                                                               const schedhost_pod_view* pod,
                                                               const NodeStatuses& node_statuses) {
  const metrics::Stopwatch since;
  auto result = UntimedPostFilter(state, pod, node_statuses);
  metrics_->ObservePoint(SlotOf(Point::kPostFilter), result.second.code, since);
  return result;
}

Status Framework::RunPreScorePlugins(CycleState& state, const schedhost_pod_view* pod,
                                     const std::vector<const schedhost_node_info_view*>& nodes) {
  const metrics::Stopwatch since;
  Status s = UntimedPreScore(state, pod, nodes);
  metrics_->ObservePoint(SlotOf(Point::kPreScore), s.code, since);
  return s;
}

Status Framework::RunScorePlugins(const CycleState& state, const schedhost_pod_view* pod,
                                  const std::vector<const schedhost_node_info_view*>& nodes,
                                  ScoreTable& out, std::span<const Parallelizer::Range> ranges) {
  const metrics::Stopwatch since;
  Status s = UntimedScore(state, pod, nodes, out, ranges);
  metrics_->ObservePoint(SlotOf(Point::kScore), s.code, since);
  return s;
}

Status Framework::RunReservePluginsReserve(CycleState& state, const schedhost_pod_view* pod,
                                           std::string_view node) {
  const metrics::Stopwatch since;
  Status s = UntimedReserve(state, pod, node);
  metrics_->ObservePoint(SlotOf(Point::kReserve), s.code, since);
  return s;
}

void Framework::RunReservePluginsUnreserve(CycleState& state, const schedhost_pod_view* pod,
                                           std::string_view node) {
  const metrics::Stopwatch since;
  UntimedUnreserve(state, pod, node);
  metrics_->ObservePoint(kUnreserveSlot, Code::kSuccess, since);
}

PermitResult Framework::RunPermitPlugins(CycleState& state, const schedhost_pod_view* pod,
                                         std::string_view node) {
  const metrics::Stopwatch since;
  PermitResult result = UntimedPermit(state, pod, node);
  metrics_->ObservePoint(SlotOf(Point::kPermit), result.status.code, since);
  return result;
}

Status Framework::RunPreBindPlugins(CycleState& state, const schedhost_pod_view* pod,
                                    std::string_view node) {
  const LatestReads reads;  // a NULL state reads the latest objects (abi 1.8)
  const metrics::Stopwatch since;
  Status s = UntimedPreBind(state, pod, node);
  metrics_->ObservePoint(SlotOf(Point::kPreBind), s.code, since);
  return s;
}

Status Framework::RunBindPlugins(CycleState& state, const schedhost_pod_view* pod,
                                 std::string_view node) {
  const LatestReads reads;  // a NULL state reads the latest objects (abi 1.8)
  const metrics::Stopwatch since;
  Status s = UntimedBind(state, pod, node);
  metrics_->ObservePoint(SlotOf(Point::kBind), s.code, since);
  return s;
}

void Framework::RunPostBindPlugins(CycleState& state, const schedhost_pod_view* pod,
                                   std::string_view node) {
  const LatestReads reads;  // a NULL state reads the latest objects (abi 1.8)
  const metrics::Stopwatch since;
  UntimedPostBind(state, pod, node);
  metrics_->ObservePoint(SlotOf(Point::kPostBind), Code::kSuccess, since);
}

}  // namespace schedhost::framework
