// CompareCycles: how two profiles' answers for one pod differ, and which plugin turned it. Shadow
// profiles compare each live cycle with the shadow's; `schedctl simulate --compare` compares
// two configs pod by pod.
//
//   CycleDiff d = CompareCycles(*live, "node-a", *shadow, "node-b");
//   if (!d.same_node) std::cout << d.point << " " << d.plugin << ": " << d.detail << "\n";
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "host/scheduler/explain.h"

namespace schedhost::scheduler {

/// CycleDiff is where two cycles for one pod part. The three agreements go from strict to
/// loose: the same best nodes implies `b` could have chosen `a`'s node.
struct CycleDiff {
  /// same_feasibility: both found the pod schedulable or both did not, and every node both
  /// evaluated is feasible in both or in neither.
  bool same_feasibility = true;
  /// same_best: the same set of best nodes (the highest total; the one feasible node when a
  /// cycle did not score; none when it found none).
  bool same_best = true;
  /// same_node: `b` could have chosen the node `a` chose (it is among `b`'s best), or neither
  /// found a node.
  bool same_node = true;
  /// point and plugin name what turned it ("Filter", "PreFilter" or "Score"; "" when the two
  /// agree on the node): the plugin whose rejection or whose weighted score moved the most.
  std::string point;
  std::string plugin;
  /// detail says it in a sentence for people ("" when they agree).
  std::string detail;
};

/// BestNodes returns the best nodes of `e`: the feasible ones with the highest total, or the one
/// feasible node of a cycle that did not score; sorted by name.
std::vector<std::string> BestNodes(const CycleExplanation& e);

/// CompareCycles compares cycle `a`, which chose `a_node` ("" for none), with cycle `b`, which
/// chose `b_node`, for the same pod on the same cluster. Sides are named "a" and "b" in
/// `detail` unless `a_name` and `b_name` say otherwise ("live", "shadow").
CycleDiff CompareCycles(const CycleExplanation& a, std::string_view a_node,
                        const CycleExplanation& b, std::string_view b_node,
                        std::string_view a_name = "a", std::string_view b_name = "b");

}  // namespace schedhost::scheduler
