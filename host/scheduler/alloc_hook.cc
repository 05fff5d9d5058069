// The malloc hook behind ThreadAllocLimit: glibc's documented way to replace malloc (the
// executable defines malloc, free, calloc, realloc and the aligned allocators, and glibc and
// every library call these), each forwarding to glibc's own (__libc_malloc, ...). A thread with
// no limit attached pays one thread-local load per call. Linked into an executable only, and
// never with a sanitizer, whose runtime replaces malloc itself.
#include <malloc.h>

#include <cerrno>
#include <cstddef>

#include "host/scheduler/alloc_limit.h"

// glibc's own allocator entries (exported for this use), which the reserved names are.
// NOLINTBEGIN(bugprone-reserved-identifier)
extern "C" {
void* __libc_malloc(size_t size);
void __libc_free(void* p);
void* __libc_calloc(size_t n, size_t size);
void* __libc_realloc(void* p, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void* __libc_valloc(size_t size);
void* __libc_pvalloc(size_t size);
}
// NOLINTEND(bugprone-reserved-identifier)

namespace {

using schedhost::scheduler::ThreadAllocLimit;
using schedhost::scheduler::internal::t_alloc_limit;

// Admit says whether the limited thread may allocate `size` more bytes.
bool Admit(ThreadAllocLimit* l, size_t size) {
  if (!l->enforce.load(std::memory_order_relaxed)) return true;
  if (l->used.load(std::memory_order_relaxed) + static_cast<int64_t>(size) <= l->limit) {
    return true;
  }
  l->exceeded.store(true, std::memory_order_relaxed);
  errno = ENOMEM;
  return false;
}

void* Counted(ThreadAllocLimit* l, void* p) {
  if (p != nullptr) {
    l->used.fetch_add(static_cast<int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
  }
  return p;
}

void Uncount(ThreadAllocLimit* l, void* p) {
  if (p != nullptr) {
    l->used.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
  }
}

[[maybe_unused]] const bool kLinked = [] {
  schedhost::scheduler::internal::g_alloc_hook_linked.store(true);
  return true;
}();

}  // namespace

extern "C" {

void* malloc(size_t size) {
  ThreadAllocLimit* l = t_alloc_limit;
  if (l == nullptr) return __libc_malloc(size);
  if (!Admit(l, size)) return nullptr;
  return Counted(l, __libc_malloc(size));
}

void free(void* p) {
  ThreadAllocLimit* l = t_alloc_limit;
  if (l != nullptr) Uncount(l, p);
  __libc_free(p);
}

void* calloc(size_t n, size_t size) {
  ThreadAllocLimit* l = t_alloc_limit;
  if (l == nullptr) return __libc_calloc(n, size);
  if (size != 0 && n > static_cast<size_t>(-1) / size) {
    errno = ENOMEM;
    return nullptr;
  }
  if (!Admit(l, n * size)) return nullptr;
  return Counted(l, __libc_calloc(n, size));
}

void* realloc(void* p, size_t size) {
  ThreadAllocLimit* l = t_alloc_limit;
  if (l == nullptr) return __libc_realloc(p, size);
  const size_t before = p != nullptr ? malloc_usable_size(p) : 0;
  if (size > before && !Admit(l, size - before)) return nullptr;
  void* q = __libc_realloc(p, size);
  if (q == nullptr && size != 0) return nullptr;  // p is untouched
  l->used.fetch_sub(static_cast<int64_t>(before), std::memory_order_relaxed);
  return Counted(l, q);
}

void* memalign(size_t alignment, size_t size) {
  ThreadAllocLimit* l = t_alloc_limit;
  if (l == nullptr) return __libc_memalign(alignment, size);
  if (!Admit(l, size)) return nullptr;
  return Counted(l, __libc_memalign(alignment, size));
}

void* aligned_alloc(size_t alignment, size_t size) { return memalign(alignment, size); }

int posix_memalign(void** out, size_t alignment, size_t size) {
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* p = memalign(alignment, size);
  if (p == nullptr && size != 0) return ENOMEM;
  *out = p;
  return 0;
}

void* valloc(size_t size) {
  ThreadAllocLimit* l = t_alloc_limit;
  if (l == nullptr) return __libc_valloc(size);
  if (!Admit(l, size)) return nullptr;
  return Counted(l, __libc_valloc(size));
}

void* pvalloc(size_t size) {
  ThreadAllocLimit* l = t_alloc_limit;
  if (l == nullptr) return __libc_pvalloc(size);
  if (!Admit(l, size)) return nullptr;
  return Counted(l, __libc_pvalloc(size));
}

}  // extern "C"
