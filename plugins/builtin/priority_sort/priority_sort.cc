#include "priority_sort.h"

#include <string>

namespace schedhost::plugins {
namespace {

}  // namespace

PrioritySort::PrioritySort(const Host& host, const Args& args) : Plugin(host) {
  args.ExpectNone(kName);
}

bool PrioritySort::Less(const QueuedPod& a, const QueuedPod& b) {
  const int32_t pa = a.pod().priority();
  const int32_t pb = b.pod().priority();
  return pa > pb || (pa == pb && a.timestamp_ns() < b.timestamp_ns());
}

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::PrioritySort)
