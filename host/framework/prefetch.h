// Prefetching node infos ahead of a Filter or Score loop.
//
// A node info is a handful of separate allocations (the view with the requested resources, the
// node's view, the allocatable array, used ports); a loop over thousands of nodes spends most of
// its time waiting for them to arrive from memory, one after the other. Touching node i + distance
// while node i is evaluated lets those misses overlap. Reading a field of a view that is not cached
// yet would stall, so the pointers are followed one level per call: the loop prefetches the view
// of the node kPrefetchDistance ahead and the pointees of the node half that distance ahead.
#pragma once

#include <schedhost/plugin.h>

#include <cstddef>
#include <vector>

#include "host/cache/node_info.h"

namespace schedhost::framework {

/// kPrefetchDistance is how many nodes ahead of the one being evaluated loops prefetch.
inline constexpr size_t kPrefetchDistance = 8;

/// PrefetchLines asks for every cache line of the `bytes` bytes at `p`.
inline void PrefetchLines(const void* p, size_t bytes) {
  const auto* c = static_cast<const char*>(p);
  for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(c + off);
}

// A node's memory in three levels, each reachable only once the one before has arrived:
// PrefetchView asks for the view and, right after it, the node's requested resources
// (cache::NodeInfo); PrefetchNodeOf, reading the view, for the node view (which holds the
// allocatable resources beside it), a spilled requested array and the used ports;
// PrefetchArraysOf, reading the node view, for its allocatable and taint arrays.
inline void PrefetchView(const schedhost_node_info_view* v) {
  PrefetchLines(v, cache::NodeInfo::ViewPrefetchBytes());
}
inline void PrefetchNodeOf(const schedhost_node_info_view* v) {
  PrefetchLines(v->node, sizeof(schedhost_node_view));
  __builtin_prefetch(v->requested.items);
  if (v->used_ports_len != 0) __builtin_prefetch(v->used_ports);
}
inline void PrefetchArraysOf(const schedhost_node_info_view* v) {
  const schedhost_node_view* n = v->node;
  if (n == nullptr) return;
  __builtin_prefetch(n->allocatable.items);
  if (n->taints_len != 0) __builtin_prefetch(n->taints);
}

/// PrefetchAhead, called in a loop over nodes at index i, asks for the view of node
/// i + kPrefetchDistance, what the view of node i + kPrefetchDistance / 2 points to, and the
/// arrays of node i + kPrefetchDistance / 4, when those indices exist (below `end`); `at` maps a
/// loop index to an index of `views`.
template <class At>
inline void PrefetchAhead(const std::vector<const schedhost_node_info_view*>& views, size_t i,
                          size_t end, At at) {
  if (i + kPrefetchDistance < end) PrefetchView(views[at(i + kPrefetchDistance)]);
  if (i + kPrefetchDistance / 2 < end) PrefetchNodeOf(views[at(i + kPrefetchDistance / 2)]);
  if (i + kPrefetchDistance / 4 < end) PrefetchArraysOf(views[at(i + kPrefetchDistance / 4)]);
}

/// PrefetchRun asks for the memory of a run of nodes about to be evaluated together (a batched
/// Filter run), level by level: every view, then every node view, then every node's arrays. The
/// loads of one level are independent of each other, so their misses overlap instead of each
/// plugin waiting for one node's chain of pointers after another's.
inline void PrefetchRun(const schedhost_node_info_view* const* run, size_t len) {
  for (size_t j = 0; j < len; ++j) PrefetchView(run[j]);
  for (size_t j = 0; j < len; ++j) PrefetchNodeOf(run[j]);
  for (size_t j = 0; j < len; ++j) PrefetchArraysOf(run[j]);
}

}  // namespace schedhost::framework
