// HostMemory: the bench's view of the host's heap, for bytes per node and per pending pod.
// It reads glibc's malloc statistics (mallinfo2), which count the bytes handed out by malloc and
// not yet freed across every arena — steadier than RSS, which moves in pages and never shrinks.
//
//   const int64_t before = AllocatedBytes();
//   ... create 5,000 nodes ...
//   const double per_node = double(AllocatedBytes() - before) / 5000;
#pragma once

#include <cstdint>

#include "host/cache/cache.h"

namespace schedhost::bench {

/// AllocatedBytes returns the bytes malloc has handed out and not had back, process-wide:
/// mallinfo2()'s uordblks (chunks in use in every arena) plus hblkhd (mmapped chunks); under
/// ASan or TSan, their allocator's count of bytes in use.
int64_t AllocatedBytes();

/// SnapshotBytes returns how many bytes one snapshot of `cache` takes: the growth of
/// AllocatedBytes while Cache::UpdateSnapshot fills a fresh Snapshot (dropped again). The
/// scheduler keeps one such snapshot; the cache fills it only at the next scheduling cycle.
int64_t SnapshotBytes(cache::Cache& cache);

}  // namespace schedhost::bench
