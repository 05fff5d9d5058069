// Coscheduling's arguments: three durations in seconds (integers or fractions), bounded.
#include <chrono>

#include "coscheduling.h"

namespace schedhost::contrib {
namespace {

std::chrono::nanoseconds Seconds(double s) {
  return std::chrono::nanoseconds(static_cast<int64_t>(s * 1e9));
}
double InSeconds(std::chrono::nanoseconds d) { return static_cast<double>(d.count()) / 1e9; }

}  // namespace

CoschedulingArgs ParseCoschedulingArgs(const Args& args) {
  CoschedulingArgs out;
  ArgsReader r(args, "Coscheduling");
  // Permit's timeout is capped by the ABI at 15 minutes; a zero timeout would never let a gang
  // assemble.
  constexpr double kMaxPermit = static_cast<double>(SCHEDHOST_MAX_PERMIT_TIMEOUT_NS) / 1e9;
  out.permit_waiting_time = Seconds(
      r.Float("permit_waiting_time_seconds",
              {.min = 0.001, .max = kMaxPermit, .fallback = InSeconds(out.permit_waiting_time)}));
  out.denied_group_retry =
      Seconds(r.Float("denied_group_retry_seconds",
                      {.min = 0, .max = 3600, .fallback = InSeconds(out.denied_group_retry)}));
  out.assembly_grace =
      Seconds(r.Float("assembly_grace_seconds",
                      {.min = 0, .max = 3600, .fallback = InSeconds(out.assembly_grace)}));
  r.Done();
  return out;
}

}  // namespace schedhost::contrib
