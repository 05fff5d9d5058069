// InterPodAffinity's arguments: hard_pod_affinity_weight (0..100, as upstream's validation)
// and ignore_preferred_terms_of_existing_pods; unknown keys are refused.
#include "inter_pod_affinity.h"

namespace schedhost::plugins {

InterPodAffinityArgs ParseInterPodAffinityArgs(const Args& args) {
  InterPodAffinityArgs out;
  ArgsReader r(args, "InterPodAffinity");
  out.hard_pod_affinity_weight =
      static_cast<int32_t>(r.Int("hard_pod_affinity_weight",
                                 {.min = 0, .max = 100, .fallback = out.hard_pod_affinity_weight}));
  out.ignore_preferred_terms_of_existing_pods = r.Bool("ignore_preferred_terms_of_existing_pods");
  r.Done();
  return out;
}

}  // namespace schedhost::plugins
