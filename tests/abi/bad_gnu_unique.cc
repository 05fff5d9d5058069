// A library with a GNU_UNIQUE symbol, as g++ emits one without -fno-gnu-unique: the static of an
// inline function template with default visibility. Such a symbol pins the library in memory
// and shares its static across library versions, so the loader refuses it before dlopen.
#include <schedhost/plugin.h>

#include <cstdlib>

SCHEDHOST_C_MANIFEST(0, "plugin UniqueStatic 1.0.0\n");

namespace {
__attribute__((constructor)) void MarkLoaded() {
  setenv("SCHEDHOST_ABI_TEST_CONSTRUCTOR_RAN", "bad_gnu_unique", 1);
}
}  // namespace

template <class T>
inline int& CallCount() {
  static int count = 0;
  return count;
}

extern "C" SCHEDHOST_EXPORT int32_t
schedhost_plugin_library_v1(schedhost_library_negotiation* io) noexcept {
  (void)io;
  return ++CallCount<int>() > 0 ? 1 : 0;
}
