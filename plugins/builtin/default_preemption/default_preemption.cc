#include "default_preemption.h"

#include <string>

namespace schedhost::plugins {

PreemptionArgs ParsePreemptionArgs(const Args& args) {
  PreemptionArgs out;
  ArgsReader r(args, "DefaultPreemption");
  // upstream ValidateDefaultPreemptionArgs: percentage in [0, 100], absolute >= 0, not both 0.
  const int64_t p = r.Int("min_candidate_nodes_percentage",
                          {.min = 0, .max = 100, .fallback = out.min_candidate_nodes_percentage});
  const int64_t a = r.Int("min_candidate_nodes_absolute",
                          {.min = 0, .fallback = out.min_candidate_nodes_absolute});
  r.Done();
  if (a > INT32_MAX) {
    r.Fail("min_candidate_nodes_absolute", "must fit in 32 bits, got " + std::to_string(a));
  }
  if (p == 0 && a == 0) {  // absolute defaults to 100: both zero means both were given
    r.Fail("min_candidate_nodes_absolute",
           "cannot be zero at the same time as min_candidate_nodes_percentage");
  }
  out.min_candidate_nodes_percentage = static_cast<int32_t>(p);
  out.min_candidate_nodes_absolute = static_cast<int32_t>(a);
  return out;
}

DefaultPreemption::DefaultPreemption(const Host& host, const Args& args) : Plugin(host) {
  const PreemptionArgs parsed = ParsePreemptionArgs(args);
  // No callback: the toolkit's defaults are upstream's rules; only the search bounds are ours.
  callbacks_.struct_size = sizeof(callbacks_);
  callbacks_.min_candidate_nodes_percentage = parsed.min_candidate_nodes_percentage;
  callbacks_.min_candidate_nodes_absolute = parsed.min_candidate_nodes_absolute;
}

Status DefaultPreemption::PostFilter(CycleState& state, const Pod& pod,
                                     const NodeStatusMap& statuses, std::string& nominated_node) {
  // The host nominates the chosen node into this call's result and reports its reasons itself.
  (void)nominated_node;
  return host().Preempt(state, pod, statuses, &callbacks_);
}

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::DefaultPreemption)
