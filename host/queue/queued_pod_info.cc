#include "host/queue/queued_pod_info.h"

#include <algorithm>

namespace schedhost::queue {

std::string_view LocationName(PodLocation where) {
  switch (where) {
    case PodLocation::kNone:
      return "none";
    case PodLocation::kActive:
      return "active";
    case PodLocation::kBackoff:
      return "backoff";
    case PodLocation::kUnschedulable:
      return "unschedulable";
    case PodLocation::kGated:
      return "gated";
    case PodLocation::kInFlight:
      return "in_flight";
  }
  return "unknown";
}

std::chrono::nanoseconds BackoffDuration(const QueueOptions& options, int attempts) {
  // A pod that was never attempted has nothing to back off from.
  if (attempts <= 0) return std::chrono::nanoseconds(0);
  const std::chrono::nanoseconds max = options.pod_max_backoff;
  std::chrono::nanoseconds d = options.pod_initial_backoff;
  for (int i = 1; i < attempts; ++i) {
    if (d > max - d) return max;  // Doubling would pass the cap (or overflow).
    d += d;
  }
  return std::min(d, max);
}

}  // namespace schedhost::queue
