// Consistency between the scheduler cache and the store: the differences a debug command
// prints and tests assert on. A healthy host, with every store event delivered, has none;
// assumed pods whose binding is still in flight are not differences.
//
//   for (const std::string& d : cache::CompareWithStore(cache, store)) std::cerr << d << "\n";
#pragma once

#include <string>
#include <vector>

#include "host/cache/cache.h"
#include "host/store/store.h"

namespace schedhost::cache {

/// CompareWithStore lists, sorted, every difference between `cache` and `store`: nodes missing
/// or extra or at another resource version; pods bound in the store but missing from the cache
/// or cached on another node; cached pods that are not assumed yet absent from the store,
/// unbound there, or at another resource version. Empty when they agree.
std::vector<std::string> CompareWithStore(const Cache& cache, const store::Store& store);

}  // namespace schedhost::cache
