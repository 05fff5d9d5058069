// ThreadAllocLimit's thread-local pointer and the hook's presence flag; the hook itself is
// alloc_hook.cc, linked only into binaries that own their malloc.
#include "host/scheduler/alloc_limit.h"

namespace schedhost::scheduler {
namespace internal {

constinit thread_local ThreadAllocLimit* t_alloc_limit = nullptr;
std::atomic<bool> g_alloc_hook_linked{false};

}  // namespace internal

bool AllocLimitsEnforced() { return internal::g_alloc_hook_linked.load(); }

void AttachAllocLimit(ThreadAllocLimit* limit) { internal::t_alloc_limit = limit; }

}  // namespace schedhost::scheduler
