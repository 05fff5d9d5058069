// ThreadAllocLimit: a cap on what one thread holds allocated, for shadow profiles' plugins. A
// binary that links schedhost's malloc hook (schedhostd does, unless built with a sanitizer,
// which owns malloc itself) counts every allocation and free of a thread attached to a limit,
// and while `enforce` is set refuses (returns NULL, so operator new throws std::bad_alloc) an
// allocation that would take the thread past it. Plugins see an ordinary out-of-memory; the
// shadow runner sees `exceeded` and stops the shadow.
//
//   ThreadAllocLimit limit{.limit = 256 << 20};
//   AttachAllocLimit(&limit);             // on the thread to count
//   limit.enforce.store(true); ... limit.enforce.store(false);
#pragma once

#include <atomic>
#include <cstdint>

namespace schedhost::scheduler {

/// ThreadAllocLimit is written by its thread's allocations and read by any thread.
struct ThreadAllocLimit {
  /// limit is the most the thread may hold while enforced, in bytes.
  int64_t limit = 0;
  /// used is what the thread allocated minus what it freed since it was attached (usable sizes;
  /// memory another thread frees is not subtracted).
  std::atomic<int64_t> used{0};
  std::atomic<bool> enforce{false};
  /// exceeded is set when an allocation was refused.
  std::atomic<bool> exceeded{false};
};

/// AllocLimitsEnforced is true when this binary's malloc is schedhost's counting hook.
bool AllocLimitsEnforced();

/// AttachAllocLimit makes the calling thread's allocations count against `limit` (null: none).
void AttachAllocLimit(ThreadAllocLimit* limit);

namespace internal {
/// The calling thread's limit, read by the malloc hook (in the executable's static TLS).
extern thread_local ThreadAllocLimit* t_alloc_limit;
/// Set by the malloc hook when it is linked in.
extern std::atomic<bool> g_alloc_hook_linked;
}  // namespace internal

}  // namespace schedhost::scheduler
