// Prefetching node infos ahead of a Filter or Score loop.
//
// A node info is one block of consecutive cache lines (its view, the requested resources, a copy
// of the node's view with the allocatable resources) and, for some nodes, arrays elsewhere (used
// ports, taints); a loop over thousands of nodes spends most of its time waiting for them to
// arrive from memory. Touching node i + distance while node i is evaluated lets those misses
// overlap. Reading a field of a block not cached yet would stall, so the pointers are followed
// one level per call: the loop prefetches the block of the node kPrefetchDistance ahead and what
// lies outside the block of the node half that distance ahead.
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

// A node's memory in two levels, the second reachable only once the first has arrived:
// PrefetchView asks for the NodeInfo's block (cache::NodeInfo::ViewPrefetchBytes: the view, the
// inline requested resources, the copy of the node's view and its inline allocatable
// resources); PrefetchArraysOf, reading that block, for what lies outside it when a node has it
// (spilled resource arrays, used ports, taints).
inline void PrefetchView(const schedhost_node_info_view* v) {
  PrefetchLines(v, cache::NodeInfo::ViewPrefetchBytes());
}
inline void PrefetchArraysOf(const schedhost_node_info_view* v) {
  if (v->requested.len > cache::NodeInfo::kInlineResources) __builtin_prefetch(v->requested.items);
  if (v->used_ports_len != 0) __builtin_prefetch(v->used_ports);
  const schedhost_node_view* n = v->node;
  if (n == nullptr) return;
  if (n->allocatable.len > cache::NodeInfo::kInlineResources)
    __builtin_prefetch(n->allocatable.items);
  if (n->taints_len != 0) __builtin_prefetch(n->taints);
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
