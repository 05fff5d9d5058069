#include "default_preemption.h"

#include <string>

namespace schedhost::plugins {
namespace {

constexpr std::string_view kPrefix = "plugin_config.DefaultPreemption.";

[[noreturn]] void Fail(const Args& at, std::string_view field, const std::string& msg) {
  std::string loc = at.location();
  throw ArgsError((loc.empty() ? std::string() : loc + ": ") + std::string(kPrefix) +
                  std::string(field) + ": " + msg);
}

int64_t ReadInt(const Args& at, std::string_view field, int64_t fallback) {
  if (!at.present()) return fallback;
  if (at.kind() != SCHEDHOST_CONFIG_INT) Fail(at, field, "expected an integer");
  return at.Int(fallback);
}

}  // namespace

PreemptionArgs ParsePreemptionArgs(const Args& args) {
  PreemptionArgs out;
  if (!args.present()) return out;
  if (args.kind() != SCHEDHOST_CONFIG_TABLE) {
    std::string loc = args.location();
    throw ArgsError((loc.empty() ? std::string() : loc + ": ") +
                    "plugin_config.DefaultPreemption: expected a table");
  }
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view key;
    Args child = args.At(i, &key);
    if (key != "min_candidate_nodes_percentage" && key != "min_candidate_nodes_absolute") {
      Fail(
          child, key,
          "unknown key (known keys: min_candidate_nodes_percentage, min_candidate_nodes_absolute)");
    }
  }
  const Args pct = args["min_candidate_nodes_percentage"];
  const Args abs = args["min_candidate_nodes_absolute"];
  const int64_t p =
      ReadInt(pct, "min_candidate_nodes_percentage", out.min_candidate_nodes_percentage);
  const int64_t a = ReadInt(abs, "min_candidate_nodes_absolute", out.min_candidate_nodes_absolute);
  // upstream ValidateDefaultPreemptionArgs: percentage in [0, 100], absolute >= 0, not both 0.
  if (p < 0 || p > 100) {
    Fail(pct, "min_candidate_nodes_percentage",
         "must be in the range [0, 100], got " + std::to_string(p));
  }
  if (a < 0 || a > INT32_MAX) {
    Fail(abs, "min_candidate_nodes_absolute",
         "must be non-negative (and fit in 32 bits), got " + std::to_string(a));
  }
  if (p == 0 && a == 0) {
    Fail(abs.present() ? abs : pct, "min_candidate_nodes_absolute",
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
