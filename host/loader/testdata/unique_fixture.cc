// A shared object with a GNU_UNIQUE symbol, as g++ emits one without -fno-gnu-unique: the
// static of an inline function template, with default visibility. Never loaded.
template <class T>
inline int& Counter() {
  static int count = 0;
  return count;
}

extern "C" __attribute__((visibility("default"))) int fixture_count() { return ++Counter<int>(); }
