// Prefetching node infos ahead of a Filter or Score loop.
//
// A loop over thousands of nodes spends most of its time waiting for their memory. What Filter
// and Score read of nearly every node is in the view's summary (abi 1.3, one or two cache lines;
// the builtin plugins read the summary instead of the view and its arrays), so that is what the
// loops ask for ahead of time: fetching all seven or eight lines of a node's block kept the fill
// buffers full with lines no plugin read. Touching node i + distance while node i is evaluated
// lets the misses overlap. Reading a field not cached yet would stall, so the pointers are
// followed one level per call: the loop prefetches the summary of the node kPrefetchDistance
// ahead and what lies outside it (a tainted node's taints) half that distance ahead.
#pragma once

#include <schedhost/plugin.h>

#include <cstddef>
#include <vector>

namespace schedhost::framework {

/// kPrefetchDistance is how many nodes ahead of the one being evaluated loops prefetch.
inline constexpr size_t kPrefetchDistance = 8;

// A node's memory in two levels, the second reachable only once the first has arrived:
// PrefetchView asks for the lines of the view's summary; PrefetchArraysOf, reading the summary,
// for the taints of a node that has them (TaintToleration reads them; reaching them reads the
// view's first line and the node's view too).
inline void PrefetchView(const schedhost_node_info_view* v) {
  const auto* s = reinterpret_cast<const char*>(&v->summary);
  __builtin_prefetch(s);
  __builtin_prefetch(s + sizeof(schedhost_node_summary) - 1);
}
inline void PrefetchArraysOf(const schedhost_node_info_view* v) {
  if (v->summary.taints_len != 0 && v->node != nullptr) __builtin_prefetch(v->node->taints);
}

/// PrefetchAhead, called in a loop over nodes at index i, asks for the block of node
/// i + kPrefetchDistance and what lies outside the block of node i + kPrefetchDistance / 2,
/// when those indices exist (below `end`); `at` maps a loop index to an index of `views`.
template <class At>
inline void PrefetchAhead(const std::vector<const schedhost_node_info_view*>& views, size_t i,
                          size_t end, At at) {
  if (i + kPrefetchDistance < end) PrefetchView(views[at(i + kPrefetchDistance)]);
  if (i + kPrefetchDistance / 2 < end) PrefetchArraysOf(views[at(i + kPrefetchDistance / 2)]);
}

/// PrefetchRun asks for the memory of a run of nodes about to be evaluated together (a batched
/// Filter run), level by level: every block, then what lies outside each. The loads of one
/// level are independent of each other, so their misses overlap instead of each plugin waiting
/// for one node's chain of pointers after another's.
inline void PrefetchRun(const schedhost_node_info_view* const* run, size_t len) {
  for (size_t j = 0; j < len; ++j) PrefetchView(run[j]);
  for (size_t j = 0; j < len; ++j) PrefetchArraysOf(run[j]);
}

}  // namespace schedhost::framework
