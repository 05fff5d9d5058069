/* The ABI layout guard, compiled as C11 (by gcc in the build, by clang-14 in ctest): fails to
 * compile if any struct of plugin.h changes size, alignment or field offset, or if an enum or
 * fixed constant changes value. The list itself is abi_layout.inc. */
#include <schedhost/plugin.h>
#include <stdalign.h>
#include <stddef.h>

#if !defined(__LP64__)
#error "abi_layout.inc freezes the LP64 layout (x86_64, arm64)"
#endif

#define SCHEDHOST_CHECK_SIZE(T, size, align)                     \
  _Static_assert(sizeof(T) == (size), "sizeof(" #T ") changed"); \
  _Static_assert(alignof(T) == (align), "alignof(" #T ") changed")
#define SCHEDHOST_CHECK_FIELD(T, field, offset, size)                                     \
  _Static_assert(offsetof(T, field) == (offset), "offsetof(" #T ", " #field ") changed"); \
  _Static_assert(sizeof(((T*)0)->field) == (size), "sizeof(" #T "." #field ") changed")
#define SCHEDHOST_CHECK_VALUE(name, value) _Static_assert((name) == (value), #name " changed")

#include "abi_layout.inc"
