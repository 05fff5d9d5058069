// NodeResourcesFit's arguments: reading plugin_config.NodeResourcesFit, upstream's defaults and
// validation (ValidateNodeResourcesFitArgs), and the resource-name rules they rely on.
#include <algorithm>
#include <initializer_list>
#include <string>

#include <schedhost/names.hpp>

#include "node_resources_fit.h"

namespace schedhost::plugins {
namespace {

constexpr std::string_view kPrefix = "plugin_config.NodeResourcesFit.";
constexpr int64_t kMaxWeight = 100;
constexpr int64_t kMaxUtilization = 100;
constexpr int64_t kMaxCustomScore = 10;  // shape scores are 0..10, scaled to 0..100

[[noreturn]] void Fail(const Args& at, const std::string& path, std::string_view msg) {
  std::string loc = at.location();
  throw ArgsError((loc.empty() ? std::string() : loc + ": ") + std::string(kPrefix) + path + ": " +
                  std::string(msg));
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

void CheckKeys(const Args& table, const std::string& path,
               std::initializer_list<std::string_view> known) {
  for (size_t i = 0; i < table.size(); ++i) {
    std::string_view key;
    Args child = table.At(i, &key);
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      Fail(child, path + std::string(key), "unknown key (known keys: " + list + ")");
    }
  }
}

void ExpectKind(const Args& at, const std::string& path, int32_t kind, std::string_view what) {
  if (at.kind() != kind) Fail(at, path, "expected " + std::string(what));
}

std::string ReadString(const Args& at, const std::string& path) {
  ExpectKind(at, path, SCHEDHOST_CONFIG_STRING, "a string");
  return at.String("");
}

int64_t ReadInt(const Args& at, const std::string& path) {
  ExpectKind(at, path, SCHEDHOST_CONFIG_INT, "an integer");
  return at.Int(0);
}

std::string Idx(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

std::vector<std::string> ReadNames(const Args& at, const std::string& path, bool groups) {
  std::vector<std::string> out;
  if (!at.present()) return out;
  ExpectKind(at, path, SCHEDHOST_CONFIG_ARRAY, "an array of strings");
  for (size_t i = 0; i < at.size(); ++i) {
    std::string name = ReadString(at.At(i), Idx(path, i));
    if (groups && name.find('/') != std::string::npos) {
      Fail(at.At(i), Idx(path, i), "\"" + name + "\": resource group name can't contain '/'");
    }
    if (!IsQualifiedName(name)) {
      Fail(at.At(i), Idx(path, i),
           "\"" + name +
               "\" is not a qualified name (optional DNS subdomain prefix and '/', then "
               "at most 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric)");
    }
    out.push_back(std::move(name));
  }
  return out;
}

std::vector<FitResourceSpec> ReadResources(const Args& at, const std::string& path) {
  std::vector<FitResourceSpec> out;
  if (!at.present()) return out;
  ExpectKind(at, path, SCHEDHOST_CONFIG_ARRAY, "an array of { name, weight } tables");
  for (size_t i = 0; i < at.size(); ++i) {
    const Args item = at.At(i);
    const std::string p = Idx(path, i);
    ExpectKind(item, p, SCHEDHOST_CONFIG_TABLE, "a { name, weight } table");
    CheckKeys(item, p + ".", {"name", "weight"});
    if (!item["name"].present()) Fail(item, p + ".name", "is required");
    FitResourceSpec spec;
    spec.name = ReadString(item["name"], p + ".name");
    if (spec.name.empty()) Fail(item["name"], p + ".name", "must not be empty");
    for (const auto& prev : out) {
      if (prev.name == spec.name)
        Fail(item["name"], p + ".name", "resource \"" + spec.name + "\" is listed twice");
    }
    // Upstream defaults a weight it cannot tell from 0 to 1; here an absent weight is 1 and an
    // explicit 0 is refused like any other value outside [1, 100].
    if (item["weight"].present()) {
      spec.weight = ReadInt(item["weight"], p + ".weight");
      if (spec.weight < 1 || spec.weight > kMaxWeight) {
        Fail(item["weight"], p + ".weight",
             "resource weight of " + spec.name + " not in valid range [1, 100] (got " +
                 std::to_string(spec.weight) + ")");
      }
    }
    out.push_back(std::move(spec));
  }
  return out;
}

std::vector<FitShapePoint> ReadShape(const Args& rtcr, const std::string& path) {
  ExpectKind(rtcr, path, SCHEDHOST_CONFIG_TABLE, "a table with a shape array");
  CheckKeys(rtcr, path + ".", {"shape"});
  const Args shape = rtcr["shape"];
  const std::string sp = path + ".shape";
  if (!shape.present()) Fail(rtcr, sp, "is required: at least one point must be specified");
  ExpectKind(shape, sp, SCHEDHOST_CONFIG_ARRAY, "an array of { utilization, score } tables");
  if (shape.size() == 0) Fail(shape, sp, "at least one point must be specified");
  std::vector<FitShapePoint> out;
  for (size_t i = 0; i < shape.size(); ++i) {
    const Args pt = shape.At(i);
    const std::string p = Idx(sp, i);
    ExpectKind(pt, p, SCHEDHOST_CONFIG_TABLE, "a { utilization, score } table");
    CheckKeys(pt, p + ".", {"utilization", "score"});
    if (!pt["utilization"].present()) Fail(pt, p + ".utilization", "is required");
    if (!pt["score"].present()) Fail(pt, p + ".score", "is required");
    int64_t u = ReadInt(pt["utilization"], p + ".utilization");
    int64_t s = ReadInt(pt["score"], p + ".score");
    if (u < 0 || u > kMaxUtilization) {
      Fail(pt["utilization"], p + ".utilization",
           std::to_string(u) + " not in valid range [0, 100]");
    }
    if (s < 0 || s > kMaxCustomScore) {
      Fail(pt["score"], p + ".score", std::to_string(s) + " not in valid range [0, 10]");
    }
    if (!out.empty() && out.back().utilization >= u) {
      Fail(pt["utilization"], p + ".utilization",
           "utilization values must be sorted in increasing order (" + std::to_string(u) +
               " follows " + std::to_string(out.back().utilization) + ")");
    }
    out.push_back({u, s * (SCHEDHOST_MAX_NODE_SCORE / kMaxCustomScore)});
  }
  return out;
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
  if (args.present()) {
    ExpectKind(args, "", SCHEDHOST_CONFIG_TABLE, "a table");
    CheckKeys(args, "", {"ignored_resources", "ignored_resource_groups", "scoring_strategy"});
    out.ignored_resources = ReadNames(args["ignored_resources"], "ignored_resources", false);
    out.ignored_resource_groups =
        ReadNames(args["ignored_resource_groups"], "ignored_resource_groups", true);
    const Args ss = args["scoring_strategy"];
    if (ss.present()) {
      const std::string p = "scoring_strategy";
      ExpectKind(ss, p, SCHEDHOST_CONFIG_TABLE,
                 "a table { type, resources, requested_to_capacity_ratio }");
      CheckKeys(ss, p + ".", {"type", "resources", "requested_to_capacity_ratio"});
      // As upstream, a given scoring strategy must name its type; only an absent strategy
      // defaults to LeastAllocated.
      constexpr std::string_view kSupported =
          "supported values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"";
      if (!ss["type"].present()) Fail(ss, p + ".type", "is required; " + std::string(kSupported));
      const std::string type = ReadString(ss["type"], p + ".type");
      if (type == "LeastAllocated") {
        out.type = FitScoringType::kLeastAllocated;
      } else if (type == "MostAllocated") {
        out.type = FitScoringType::kMostAllocated;
      } else if (type == "RequestedToCapacityRatio") {
        out.type = FitScoringType::kRequestedToCapacityRatio;
      } else {
        Fail(ss["type"], p + ".type",
             "Unsupported value: \"" + type + "\": " + std::string(kSupported));
      }
      out.resources = ReadResources(ss["resources"], p + ".resources");
      const Args rtcr = ss["requested_to_capacity_ratio"];
      if (rtcr.present()) {
        out.shape = ReadShape(rtcr, p + ".requested_to_capacity_ratio");
      } else if (out.type == FitScoringType::kRequestedToCapacityRatio) {
        Fail(ss, p + ".requested_to_capacity_ratio",
             "is required for type RequestedToCapacityRatio (a table with a shape array)");
      }
      if (out.type != FitScoringType::kRequestedToCapacityRatio) out.shape.clear();
    }
  }
  if (out.resources.empty()) out.resources = {{"cpu", 1}, {"memory", 1}};
  return out;
}

}  // namespace schedhost::plugins
