#include "filter_logic.h"

#include <cstdint>

namespace schedhost::bench::micro {
namespace {

int64_t Get(const schedhost_resources& list, schedhost_id id) {
  for (size_t i = 0; i < list.len; ++i) {
    if (list.items[i].name == id) return list.items[i].value;
  }
  return 0;
}

}  // namespace

bool BenchFilterFits(const schedhost_pod_view* pod, const schedhost_node_info_view* ni) {
  if (pod == nullptr || ni == nullptr || ni->node == nullptr) return false;
  const schedhost_resources& alloc = ni->node->allocatable;
  return static_cast<int64_t>(ni->pods_len) < Get(alloc, SCHEDHOST_ID_PODS) &&
         Get(pod->requests, SCHEDHOST_ID_CPU) <=
             Get(alloc, SCHEDHOST_ID_CPU) - Get(ni->requested, SCHEDHOST_ID_CPU);
}

}  // namespace schedhost::bench::micro

namespace schedhost::bench::micro {

bool NodeResourcesFitFits(const FitRequest& req, const schedhost_node_info_view* ni) {
  if (ni == nullptr || ni->node == nullptr) return false;
  const schedhost_resources& alloc = ni->node->allocatable;
  if (static_cast<int64_t>(ni->pods_len) + 1 > Get(alloc, SCHEDHOST_ID_PODS)) return false;
  if (req.milli_cpu > 0 &&
      req.milli_cpu > Get(alloc, SCHEDHOST_ID_CPU) - Get(ni->requested, SCHEDHOST_ID_CPU)) {
    return false;
  }
  return !(req.memory > 0 &&
           req.memory > Get(alloc, SCHEDHOST_ID_MEMORY) - Get(ni->requested, SCHEDHOST_ID_MEMORY));
}

}  // namespace schedhost::bench::micro
