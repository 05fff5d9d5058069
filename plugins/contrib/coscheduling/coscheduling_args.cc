#include <string>

#include "coscheduling.h"

namespace schedhost::contrib {
namespace {

constexpr std::string_view kPrefix = "plugin_config.Coscheduling.";

[[noreturn]] void Fail(const Args& at, std::string_view field, const std::string& msg) {
  std::string loc = at.location();
  throw ArgsError((loc.empty() ? std::string() : loc + ": ") + std::string(kPrefix) +
                  std::string(field) + ": " + msg);
}

// Seconds reads a duration in seconds (integer or fraction), in [min, max].
std::chrono::nanoseconds Seconds(const Args& at, std::string_view field,
                                 std::chrono::nanoseconds fallback, double min, double max) {
  if (!at.present()) return fallback;
  if (at.kind() != SCHEDHOST_CONFIG_INT && at.kind() != SCHEDHOST_CONFIG_FLOAT) {
    Fail(at, field, "expected a number of seconds");
  }
  const double s = at.Float(0);
  if (!(s >= min && s <= max)) {
    Fail(at, field,
         "must be between " + std::to_string(min) + " and " + std::to_string(max) + " seconds");
  }
  return std::chrono::nanoseconds(static_cast<int64_t>(s * 1e9));
}

}  // namespace

CoschedulingArgs ParseCoschedulingArgs(const Args& args) {
  CoschedulingArgs out;
  if (!args.present()) return out;
  if (args.kind() != SCHEDHOST_CONFIG_TABLE) {
    std::string loc = args.location();
    throw ArgsError((loc.empty() ? std::string() : loc + ": ") +
                    "plugin_config.Coscheduling: expected a table");
  }
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view key;
    Args child = args.At(i, &key);
    if (key != "permit_waiting_time_seconds" && key != "denied_group_retry_seconds" &&
        key != "assembly_grace_seconds") {
      Fail(child, key,
           "unknown key (known keys: permit_waiting_time_seconds, denied_group_retry_seconds, "
           "assembly_grace_seconds)");
    }
  }
  // Permit's timeout is capped by the ABI at 15 minutes; a zero timeout would never let a gang
  // assemble.
  constexpr double kMaxPermit = static_cast<double>(SCHEDHOST_MAX_PERMIT_TIMEOUT_NS) / 1e9;
  out.permit_waiting_time =
      Seconds(args["permit_waiting_time_seconds"], "permit_waiting_time_seconds",
              out.permit_waiting_time, 0.001, kMaxPermit);
  out.denied_group_retry = Seconds(args["denied_group_retry_seconds"], "denied_group_retry_seconds",
                                   out.denied_group_retry, 0, 3600);
  out.assembly_grace = Seconds(args["assembly_grace_seconds"], "assembly_grace_seconds",
                               out.assembly_grace, 0, 3600);
  return out;
}

}  // namespace schedhost::contrib
