#include "tests/bench/host_memory.h"

#include <malloc.h>

#include "host/cache/snapshot.h"

// g++ says a sanitizer is on with __SANITIZE_*__, clang with __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SCHEDHOST_BENCH_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SCHEDHOST_BENCH_SANITIZED 1
#endif
#endif

#ifdef SCHEDHOST_BENCH_SANITIZED
// Under a sanitizer malloc is the sanitizer's, and mallinfo2() reports nothing; its allocator
// counts what is handed out instead (declared here: GCC ships no allocator_interface.h).
extern "C" size_t
__sanitizer_get_current_allocated_bytes();  // NOLINT(bugprone-reserved-identifier)
#endif

namespace schedhost::bench {

int64_t AllocatedBytes() {
#ifdef SCHEDHOST_BENCH_SANITIZED
  return static_cast<int64_t>(__sanitizer_get_current_allocated_bytes());
#else
  const struct mallinfo2 m = mallinfo2();
  return static_cast<int64_t>(m.uordblks + m.hblkhd);
#endif
}

int64_t SnapshotBytes(cache::Cache& cache) {
  const int64_t before = AllocatedBytes();
  cache::Snapshot snapshot;
  cache.UpdateSnapshot(snapshot);
  return AllocatedBytes() - before;
}

}  // namespace schedhost::bench
