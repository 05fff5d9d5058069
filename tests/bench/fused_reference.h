// FusedReference: the hand-fused limit the framework is measured against (issue 6). One plain,
// single-threaded C++ loop over contiguous node arrays does what the default profile does for
// scheduling_basic-shaped pods — NodeResourcesFit (cpu, memory, pod count), NodePorts and
// NodeUnschedulable filtering, then NodeResourcesFit LeastAllocated + BalancedAllocation scoring
// (weight 1 each) with upstream's adaptive sampling and round-robin start index — picks the best
// node (ties: the first) and "binds" by updating the arrays. No store, cache, queue, threads or
// plugin calls: whatever the framework run costs beyond this loop is the host's overhead.
//
//   FusedResult f = RunFused(LoadWorkload(path, 1.0), /*percentage_of_nodes_to_score=*/0);
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "tests/bench/workload.h"

namespace schedhost::bench {

/// FusedShapeError reports a workload the fused loop cannot stand in for; what() names the
/// operation and the feature (e.g. a pod with affinity, a tainted node).
class FusedShapeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// FusedResult is what one fused run measured.
struct FusedResult {
  size_t nodes = 0;
  size_t unmeasured_pods = 0;
  size_t measured_pods = 0;
  /// measured_bound counts measured pods the loop found a node for.
  size_t measured_bound = 0;
  /// unmeasured_bound counts initial pods the loop found a node for.
  size_t unmeasured_bound = 0;
  /// seconds is the time spent scheduling the measured pods (the loop only, no decoding).
  double seconds = 0;
  double pods_per_second = 0;
  /// nodes_examined is how many node filter passes the measured pods took (sampling stops early).
  uint64_t nodes_examined = 0;
  /// nodes_scored is how many (pod, node) scores the measured pods took.
  uint64_t nodes_scored = 0;
};

/// FusedScore is the fused loop's score of a node: NodeResourcesFit LeastAllocated plus
/// NodeResourcesBalancedAllocation, weight 1 each, where `node_*` are the node's requested cpu
/// (millicores) and memory (bytes) and `pod_*` the pod's; requires 0 < node + pod <=
/// allocatable (the pod passed Filter).
int64_t FusedScore(int64_t alloc_cpu, int64_t alloc_mem, int64_t node_cpu, int64_t node_mem,
                   int64_t pod_cpu, int64_t pod_mem);

/// CheckFusedShape throws FusedShapeError unless every operation of `workload` is createNodes,
/// createPods or barrier, nodes carry no taints, and pods ask only for cpu and memory (both > 0,
/// so the non-zero defaults do not apply) with at most one host port, no node selector,
/// affinity, spread constraints, tolerations, priority class, gates or init containers. Checks
/// the template rendered for index 0 of each operation.
void CheckFusedShape(const Workload& workload);

/// RunFused runs `workload`'s operations through the fused loop: nodes appended to the arrays,
/// each pod scheduled at once (barriers are no-ops), measured pods timed. Templates are rendered
/// and decoded per operation before its pods are timed. `percentage_of_nodes_to_score` is the
/// host's setting (0: upstream's adaptive default). Throws FusedShapeError (CheckFusedShape
/// first, and again when any pod or node differs from its operation's first in a way the loop
/// does not model).
FusedResult RunFused(const Workload& workload, int32_t percentage_of_nodes_to_score);

}  // namespace schedhost::bench
