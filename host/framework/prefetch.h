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

/// PrefetchAhead asks for the memory behind `views[i + kPrefetchDistance]` (the view) and
/// `views[i + kPrefetchDistance / 2]` (what its view points to) when those indices exist; `at`
/// maps a loop index to an index of `views`.
/// PrefetchLines asks for every cache line of the `bytes` bytes at `p`.
inline void PrefetchLines(const void* p, size_t bytes) {
  const auto* c = static_cast<const char*>(p);
  for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(c + off);
}

template <class At>
inline void PrefetchAhead(const std::vector<const schedhost_node_info_view*>& views, size_t i,
                          size_t end, At at) {
  if (i + kPrefetchDistance < end) {
    // The view and, right after it, the node's requested resources (cache::NodeInfo).
    PrefetchLines(views[at(i + kPrefetchDistance)], cache::NodeInfo::ViewPrefetchBytes());
  }
  if (i + kPrefetchDistance / 2 < end) {
    const schedhost_node_info_view* v = views[at(i + kPrefetchDistance / 2)];
    PrefetchLines(v->node, sizeof(schedhost_node_view));
    __builtin_prefetch(v->requested.items);
    if (v->used_ports_len != 0) __builtin_prefetch(v->used_ports);
    // The node view shares its allocation with the model object and is usually cached already
    // by the time the loop reaches this node; its arrays are the next level.
  }
  if (i + kPrefetchDistance / 4 < end) {
    const schedhost_node_view* n = views[at(i + kPrefetchDistance / 4)]->node;
    if (n != nullptr) {
      __builtin_prefetch(n->allocatable.items);
      if (n->taints_len != 0) __builtin_prefetch(n->taints);
    }
  }
}

/// PrefetchRun asks for the memory of a run of nodes about to be evaluated together (a batched
/// Filter or Score run), level by level: first every view (with the inline requested
/// resources), then, reading each view's pointers, the node views, then their allocatable and
/// taint arrays. The loads of one level are independent of each other, so their misses overlap
/// instead of each plugin waiting for one node's chain of pointers after another's.
inline void PrefetchRun(const schedhost_node_info_view* const* run, size_t len) {
  for (size_t j = 0; j < len; ++j) PrefetchLines(run[j], cache::NodeInfo::ViewPrefetchBytes());
  for (size_t j = 0; j < len; ++j) {
    const schedhost_node_info_view* v = run[j];
    PrefetchLines(v->node, sizeof(schedhost_node_view));
    if (v->used_ports_len != 0) __builtin_prefetch(v->used_ports);
  }
  for (size_t j = 0; j < len; ++j) {
    const schedhost_node_view* n = run[j]->node;
    if (n == nullptr) continue;
    __builtin_prefetch(n->allocatable.items);
    if (n->taints_len != 0) __builtin_prefetch(n->taints);
  }
}

}  // namespace schedhost::framework
