// CountIncoming: scheduler_queue_incoming_pods_total for a pod the queue just placed.
#pragma once

#include <string_view>

#include "host/metrics/scheduler_metrics.h"
#include "host/queue/queued_pod_info.h"

namespace schedhost::queue::internal {

// CountIncoming counts a pod placed in activeQ, backoffQ or the unschedulable pods because of
// `event` (a cluster event label, "PodAdd", "ScheduleAttemptFailure", ...). Gated pods are not
// counted, as upstream does not count pods PreEnqueue keeps out.
inline void CountIncoming(PodLocation where, std::string_view event) {
  switch (where) {
    case PodLocation::kActive:
      metrics::CountIncomingPod("active", event);
      break;
    case PodLocation::kBackoff:
      metrics::CountIncomingPod("backoff", event);
      break;
    case PodLocation::kUnschedulable:
      metrics::CountIncomingPod("unschedulable", event);
      break;
    default:
      break;
  }
}

}  // namespace schedhost::queue::internal
