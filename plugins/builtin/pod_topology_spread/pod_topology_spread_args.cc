// PodTopologySpread's arguments: default_constraints and defaulting_type from
// plugin_config.PodTopologySpread, validated as upstream's ValidatePodTopologySpreadArgs.
#include <schedhost/names.hpp>
#include <string>
#include <utility>

#include "pod_topology_spread.h"

namespace schedhost::plugins {
namespace {

DefaultConstraint ReadConstraint(const Host& host, ArgsReader& item) {
  DefaultConstraint c;
  const int64_t max_skew = item.RequiredInt("max_skew", {.min = 1});
  if (max_skew > INT32_MAX) {
    item.Fail("max_skew", "must fit in 32 bits, got " + std::to_string(max_skew));
  }
  c.max_skew = static_cast<int32_t>(max_skew);
  const std::string key = item.RequiredString("topology_key");
  if (key.empty()) item.Fail("topology_key", "can not be empty");
  if (!names::IsQualifiedName(key)) {
    item.Fail(
        "topology_key",
        "\"" + key +
            "\" is not a valid label key (optional DNS subdomain prefix and '/', then at most "
            "63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric)");
  }
  c.topology_key = host.Intern(key);
  c.when_unsatisfiable = item.RequiredOneOf<int32_t>(
      "when_unsatisfiable", {{"DoNotSchedule", SCHEDHOST_DO_NOT_SCHEDULE},
                             {"ScheduleAnyway", SCHEDHOST_SCHEDULE_ANYWAY}});
  return c;
}

// SystemDefaults are upstream's system default constraints: soft spreading by host (maxSkew 3)
// and by zone (maxSkew 5).
std::vector<DefaultConstraint> SystemDefaults() {
  return {{3, SCHEDHOST_ID_LABEL_HOSTNAME, SCHEDHOST_SCHEDULE_ANYWAY},
          {5, SCHEDHOST_ID_LABEL_ZONE, SCHEDHOST_SCHEDULE_ANYWAY}};
}

}  // namespace

PodTopologySpreadArgs ParsePodTopologySpreadArgs(const Host& host, const Args& args) {
  PodTopologySpreadArgs out;
  out.default_constraints = SystemDefaults();
  ArgsReader r(args, "PodTopologySpread");
  const bool system =  // upstream's default
      r.OneOf<bool>("defaulting_type", {{"System", true}, {"List", false}}, true);
  std::vector<DefaultConstraint> list;
  r.Tables("default_constraints", [&](ArgsReader& item) {
    const DefaultConstraint c = ReadConstraint(host, item);
    for (const DefaultConstraint& prev : list) {
      if (prev.topology_key == c.topology_key && prev.when_unsatisfiable == c.when_unsatisfiable) {
        item.Fail("", "duplicate constraint for topology_key \"" +
                          std::string(host.IdString(c.topology_key)) + "\" and when_unsatisfiable");
      }
    }
    list.push_back(c);
  });
  r.Done();
  if (system) {
    if (!list.empty()) {
      r.Fail("default_constraints",
             "must be empty when defaulting_type is \"System\" (use defaulting_type = \"List\")");
    }
    return out;
  }
  out.system_defaulted = false;
  out.default_constraints = std::move(list);
  return out;
}

}  // namespace schedhost::plugins
