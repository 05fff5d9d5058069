// PodTopologySpread's arguments: default_constraints and defaulting_type from
// plugin_config.PodTopologySpread, validated as upstream's ValidatePodTopologySpreadArgs.
#include <algorithm>
#include <initializer_list>
#include <string>

#include <schedhost/names.hpp>

#include "pod_topology_spread.h"

namespace schedhost::plugins {
namespace {

constexpr std::string_view kPrefix = "plugin_config.PodTopologySpread.";

[[noreturn]] void Fail(const Args& at, const std::string& path, std::string_view msg) {
  std::string loc = at.location();
  throw ArgsError((loc.empty() ? std::string() : loc + ": ") + std::string(kPrefix) + path + ": " +
                  std::string(msg));
}

void CheckKeys(const Args& table, const std::string& path,
               std::initializer_list<std::string_view> known) {
  for (size_t i = 0; i < table.size(); ++i) {
    std::string_view key;
    Args child = table.At(i, &key);
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      std::string p = path.empty() ? std::string(key) : path + "." + std::string(key);
      Fail(child, p, "unknown key (known keys: " + list + ")");
    }
  }
}

std::string ReadString(const Args& at, const std::string& path) {
  if (at.kind() != SCHEDHOST_CONFIG_STRING) Fail(at, path, "expected a string");
  return at.String("");
}

DefaultConstraint ReadConstraint(const Host& host, const Args& at, const std::string& path) {
  if (at.kind() != SCHEDHOST_CONFIG_TABLE) {
    Fail(at, path, "expected a { max_skew, topology_key, when_unsatisfiable } table");
  }
  CheckKeys(at, path, {"max_skew", "topology_key", "when_unsatisfiable"});
  DefaultConstraint c;
  for (std::string_view key : {"max_skew", "topology_key", "when_unsatisfiable"}) {
    if (!at[key].present()) Fail(at, path + "." + std::string(key), "is required");
  }
  const Args skew = at["max_skew"];
  if (skew.kind() != SCHEDHOST_CONFIG_INT) Fail(skew, path + ".max_skew", "expected an integer");
  const int64_t max_skew = skew.Int(0);
  if (max_skew <= 0 || max_skew > INT32_MAX) {
    Fail(skew, path + ".max_skew", std::to_string(max_skew) + ": must be greater than zero");
  }
  c.max_skew = static_cast<int32_t>(max_skew);

  const std::string key = ReadString(at["topology_key"], path + ".topology_key");
  if (key.empty()) Fail(at["topology_key"], path + ".topology_key", "can not be empty");
  if (!names::IsQualifiedName(key)) {
    Fail(at["topology_key"], path + ".topology_key",
         "\"" + key + "\" is not a valid label key (optional DNS subdomain prefix and '/', then "
                      "at most 63 alphanumerics, '-', '_' or '.', starting and ending "
                      "alphanumeric)");
  }
  c.topology_key = host.Intern(key);

  const std::string action = ReadString(at["when_unsatisfiable"], path + ".when_unsatisfiable");
  if (action == "DoNotSchedule") {
    c.when_unsatisfiable = SCHEDHOST_DO_NOT_SCHEDULE;
  } else if (action == "ScheduleAnyway") {
    c.when_unsatisfiable = SCHEDHOST_SCHEDULE_ANYWAY;
  } else {
    Fail(at["when_unsatisfiable"], path + ".when_unsatisfiable",
         "unsupported value \"" + action + "\": supported values: \"DoNotSchedule\", "
                                           "\"ScheduleAnyway\"");
  }
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
  if (!args.present()) return out;
  if (args.kind() != SCHEDHOST_CONFIG_TABLE) Fail(args, "", "expected a table");
  CheckKeys(args, "", {"default_constraints", "defaulting_type"});

  const Args type = args["defaulting_type"];
  std::string defaulting = "System";  // upstream's default
  if (type.present()) {
    defaulting = ReadString(type, "defaulting_type");
    if (defaulting != "System" && defaulting != "List") {
      Fail(type, "defaulting_type",
           "unsupported value \"" + defaulting + "\": supported values: \"System\", \"List\"");
    }
  }

  std::vector<DefaultConstraint> list;
  const Args constraints = args["default_constraints"];
  if (constraints.present()) {
    if (constraints.kind() != SCHEDHOST_CONFIG_ARRAY) {
      Fail(constraints, "default_constraints", "expected an array of constraint tables");
    }
    for (size_t i = 0; i < constraints.size(); ++i) {
      const std::string path = "default_constraints[" + std::to_string(i) + "]";
      DefaultConstraint c = ReadConstraint(host, constraints.At(i), path);
      for (const DefaultConstraint& prev : list) {
        if (prev.topology_key == c.topology_key &&
            prev.when_unsatisfiable == c.when_unsatisfiable) {
          Fail(constraints.At(i), path,
               "duplicate constraint for topology_key \"" +
                   std::string(host.IdString(c.topology_key)) + "\" and when_unsatisfiable");
        }
      }
      list.push_back(c);
    }
  }

  if (defaulting == "System") {
    if (!list.empty()) {
      Fail(constraints, "default_constraints",
           "must be empty when defaulting_type is \"System\" (use defaulting_type = \"List\")");
    }
    return out;
  }
  out.system_defaulted = false;
  out.default_constraints = std::move(list);
  return out;
}

}  // namespace schedhost::plugins
