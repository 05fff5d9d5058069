// FilterLogic: the Filter body the dispatch micro-benchmark measures both ways — compiled into
// the BenchFilter plugin library (reached through the loader, the C ABI and the framework) and
// into schedhost-microbench itself (called directly) — so the two differ only in dispatch.
#pragma once

#include <schedhost/plugin.h>

#include <cstdint>

namespace schedhost::bench::micro {

/// BenchFilterFits is true when `ni`'s node has room for one more pod and enough free cpu for
/// `pod` (its allocatable pods and cpu against the pods and cpu already on it): small, but read
/// from the views on every call, so the compiler cannot drop it.
bool BenchFilterFits(const schedhost_pod_view* pod, const schedhost_node_info_view* ni);

}  // namespace schedhost::bench::micro

namespace schedhost::bench::micro {

/// FitRequest is what NodeResourcesFitFits needs of the pod, computed once per pod as the
/// plugin's PreFilter does.
struct FitRequest {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
};

/// NodeResourcesFitFits is NodeResourcesFit's Filter decision for cpu, memory and the pod count
/// written as a plain function over the views (no cycle state, no Status): what the plugin's
/// Filter would cost called directly.
bool NodeResourcesFitFits(const FitRequest& req, const schedhost_node_info_view* ni);

}  // namespace schedhost::bench::micro
