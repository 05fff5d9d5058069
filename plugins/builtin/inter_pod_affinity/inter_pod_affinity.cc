// InterPodAffinity: construction, cluster events and the library's entry symbol. Filter lives
// in filtering.cc, Score in scoring.cc, term matching in terms.cc.
#include "inter_pod_affinity.h"

namespace schedhost::plugins {

InterPodAffinity::InterPodAffinity(const Host& host, const Args& args)
    : Plugin(host),
      args_(ParseInterPodAffinityArgs(args)),
      prefilter_key_(host.Intern("PreFilterInterPodAffinity")),
      prescore_key_(host.Intern("PreScoreInterPodAffinity")) {}

std::span<const schedhost_event_registration> InterPodAffinity::EventsToRegister() {
  // upstream: any pod event (an added pod may satisfy affinity, a deleted or relabelled one
  // may lift anti-affinity), new nodes and node label changes (topology domains).
  static constexpr schedhost_event_registration kEvents[] = {
      {{SCHEDHOST_RESOURCE_POD, SCHEDHOST_ACTION_ALL}, nullptr},
      {{SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE_NODE_LABEL},
       nullptr},
  };
  return kEvents;
}

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::InterPodAffinity)
