#include "tests/bench/host_memory.h"

#include <malloc.h>

#include "host/cache/snapshot.h"

namespace schedhost::bench {

int64_t AllocatedBytes() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<int64_t>(m.uordblks + m.hblkhd);
}

int64_t SnapshotBytes(cache::Cache& cache) {
  const int64_t before = AllocatedBytes();
  cache::Snapshot snapshot;
  cache.UpdateSnapshot(snapshot);
  return AllocatedBytes() - before;
}

}  // namespace schedhost::bench
