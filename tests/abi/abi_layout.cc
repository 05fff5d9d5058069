// The ABI layout guard, compiled as C++20 (by g++ in the build, by clang++-14 in ctest): the
// same list as abi_layout.c, plus: every ABI struct is trivial and standard-layout, so C and C++
// agree on it and it may be memcpy'd and zero-initialised.
#include <schedhost/plugin.h>

#include <cstddef>
#include <type_traits>

#if !defined(__LP64__)
#error "abi_layout.inc freezes the LP64 layout (x86_64, arm64)"
#endif

#define SCHEDHOST_CHECK_SIZE(T, size, align)                       \
  static_assert(sizeof(T) == (size), "sizeof(" #T ") changed");    \
  static_assert(alignof(T) == (align), "alignof(" #T ") changed"); \
  static_assert(std::is_standard_layout_v<T> && std::is_trivial_v<T>, #T " is not plain C data")
#define SCHEDHOST_CHECK_FIELD(T, field, offset, size)                                    \
  static_assert(offsetof(T, field) == (offset), "offsetof(" #T ", " #field ") changed"); \
  static_assert(sizeof(T::field) == (size), "sizeof(" #T "." #field ") changed")
#define SCHEDHOST_CHECK_VALUE(name, value) static_assert((name) == (value), #name " changed")

#include "abi_layout.inc"
