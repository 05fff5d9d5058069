// NodeResourcesFit's arguments: reading plugin_config.NodeResourcesFit, upstream's defaults and
// validation (ValidateNodeResourcesFitArgs), and the resource-name rules they rely on.
#include <schedhost/names.hpp>
#include <string>
#include <utility>

#include "node_resources_fit.h"

namespace schedhost::plugins {
namespace {

constexpr int64_t kMaxCustomScore = 10;  // shape scores are 0..10, scaled to 0..100

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// ReadScoringStrategy reads scoring_strategy: its type (required once the table is given, as
// upstream), the weighted resources and RequestedToCapacityRatio's shape.
void ReadScoringStrategy(ArgsReader& ss, FitArgs& out) {
  out.type = ss.RequiredOneOf<FitScoringType>(
      "type", {{"LeastAllocated", FitScoringType::kLeastAllocated},
               {"MostAllocated", FitScoringType::kMostAllocated},
               {"RequestedToCapacityRatio", FitScoringType::kRequestedToCapacityRatio}});
  ss.Tables("resources", [&](ArgsReader& item) {
    FitResourceSpec spec;
    spec.name = item.RequiredString("name");
    if (spec.name.empty()) item.Fail("name", "must not be empty");
    for (const auto& prev : out.resources) {
      if (prev.name == spec.name)
        item.Fail("name", "resource \"" + spec.name + "\" is listed twice");
    }
    // Upstream defaults a weight it cannot tell from 0 to 1; here an absent weight is 1 and an
    // explicit 0 is refused like any other value outside [1, 100].
    spec.weight = item.Int("weight", {.min = 1, .max = 100, .fallback = 1});
    out.resources.push_back(std::move(spec));
  });
  const bool ratio = ss.Table("requested_to_capacity_ratio", [&](ArgsReader& rtcr) {
    const size_t points = rtcr.RequiredTables("shape", [&](ArgsReader& pt) {
      const int64_t u = pt.RequiredInt("utilization", {.min = 0, .max = 100});
      const int64_t score = pt.RequiredInt("score", {.min = 0, .max = kMaxCustomScore});
      if (!out.shape.empty() && out.shape.back().utilization >= u) {
        pt.Fail("utilization", "utilization values must be sorted in increasing order (" +
                                   std::to_string(u) + " follows " +
                                   std::to_string(out.shape.back().utilization) + ")");
      }
      out.shape.push_back({u, score * (SCHEDHOST_MAX_NODE_SCORE / kMaxCustomScore)});
    });
    if (points == 0) rtcr.Fail("shape", "at least one point must be specified");
  });
  if (!ratio && out.type == FitScoringType::kRequestedToCapacityRatio) {
    ss.Fail("requested_to_capacity_ratio",
            "is required for type RequestedToCapacityRatio (a table with a shape array)");
  }
  if (out.type != FitScoringType::kRequestedToCapacityRatio) out.shape.clear();
}

}  // namespace

bool IsQualifiedName(std::string_view name) { return names::IsQualifiedName(name); }

bool IsExtendedResourceName(std::string_view name) {
  // Native resources have no domain or live under kubernetes.io; quota's "requests." prefix is
  // not a resource. What is left must still be a qualified name once "requests." is prepended.
  if (name.find('/') == std::string_view::npos) return false;
  if (name.find("kubernetes.io/") != std::string_view::npos) return false;
  if (StartsWith(name, "requests.")) return false;
  return IsQualifiedName("requests." + std::string(name));
}

bool IsScalarResourceName(std::string_view name) {
  return IsExtendedResourceName(name) || StartsWith(name, "hugepages-") ||
         name.find("kubernetes.io/") != std::string_view::npos ||
         StartsWith(name, "attachable-volumes-");
}

FitArgs ParseFitArgs(const Args& args) {
  FitArgs out;
  ArgsReader r(args, "NodeResourcesFit");
  const StringOptions qualified{
      .valid = names::IsQualifiedName,
      .what =
          "a qualified name (optional DNS subdomain prefix and '/', then at most 63 "
          "alphanumerics, '-', '_' or '.', starting and ending alphanumeric)"};
  out.ignored_resources = r.Strings("ignored_resources", qualified);
  out.ignored_resource_groups = r.Strings("ignored_resource_groups", qualified);
  for (size_t i = 0; i < out.ignored_resource_groups.size(); ++i) {
    const std::string& group = out.ignored_resource_groups[i];
    if (group.find('/') != std::string::npos) {
      r.Fail("ignored_resource_groups", i,
             "\"" + group + "\": resource group name can't contain '/'");
    }
  }
  r.Table("scoring_strategy", [&](ArgsReader& ss) { ReadScoringStrategy(ss, out); });
  r.Done();
  if (out.resources.empty()) out.resources = {{"cpu", 1}, {"memory", 1}};
  return out;
}

}  // namespace schedhost::plugins
