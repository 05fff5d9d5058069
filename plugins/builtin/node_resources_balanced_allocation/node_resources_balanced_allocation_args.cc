// NodeResourcesBalancedAllocation's arguments: reading plugin_config, upstream's default
// (cpu and memory) and validation (ValidateNodeResourcesBalancedAllocationArgs), and the
// resource-name rule Score relies on.
#include <schedhost/names.hpp>
#include <string>
#include <utility>

#include "node_resources_balanced_allocation.h"

namespace schedhost::plugins {
namespace {

constexpr std::string_view kPrefix = "plugin_config.NodeResourcesBalancedAllocation.";

[[noreturn]] void Fail(const Args& at, const std::string& path, std::string_view msg) {
  std::string loc = at.location();
  throw ArgsError((loc.empty() ? std::string() : loc + ": ") + std::string(kPrefix) + path + ": " +
                  std::string(msg));
}

void ExpectKind(const Args& at, const std::string& path, int32_t kind, std::string_view what) {
  if (at.kind() != kind) Fail(at, path, "expected " + std::string(what));
}

// CheckKeys refuses any key of `table` other than `known` (upstream decodes strictly).
void CheckKeys(const Args& table, const std::string& path, std::string_view known_list,
               bool (*known)(std::string_view)) {
  for (size_t i = 0; i < table.size(); ++i) {
    std::string_view key;
    const Args child = table.At(i, &key);
    if (!known(key)) {
      Fail(child, path + std::string(key),
           "unknown key (known keys: " + std::string(known_list) + ")");
    }
  }
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

bool IsScalarResource(std::string_view name) {
  // hugepages-*, attachable-volumes-* and names under *kubernetes.io/ are scalar; so are
  // extended resources: domain-prefixed names that stay qualified names once quota's
  // "requests." prefix is put in front (and do not carry it already).
  if (StartsWith(name, "hugepages-") || StartsWith(name, "attachable-volumes-")) return true;
  if (name.find("kubernetes.io/") != std::string_view::npos) return true;
  if (name.find('/') == std::string_view::npos || StartsWith(name, "requests.")) return false;
  return names::IsQualifiedName("requests." + std::string(name));
}

BalancedArgs ParseBalancedArgs(const Args& args) {
  BalancedArgs out;
  if (args.present()) {
    ExpectKind(args, "", SCHEDHOST_CONFIG_TABLE, "a table");
    CheckKeys(args, "", "resources", [](std::string_view k) { return k == "resources"; });
    const Args list = args["resources"];
    if (list.present()) {
      ExpectKind(list, "resources", SCHEDHOST_CONFIG_ARRAY, "an array of { name, weight } tables");
      for (size_t i = 0; i < list.size(); ++i) {
        const Args item = list.At(i);
        const std::string p = "resources[" + std::to_string(i) + "]";
        ExpectKind(item, p, SCHEDHOST_CONFIG_TABLE, "a { name, weight } table");
        CheckKeys(item, p + ".", "name, weight",
                  [](std::string_view k) { return k == "name" || k == "weight"; });
        const Args name = item["name"];
        if (!name.present()) Fail(item, p + ".name", "is required");
        ExpectKind(name, p + ".name", SCHEDHOST_CONFIG_STRING, "a string");
        std::string n = name.String("");
        if (n.empty()) Fail(name, p + ".name", "must not be empty");
        for (const auto& prev : out.resources) {
          if (prev == n) Fail(name, p + ".name", "resource \"" + n + "\" is listed twice");
        }
        // Upstream ignores the weight in its formula and refuses any value but 1 (an unset
        // weight defaults to 1); here too, so a weight is never silently ignored.
        const Args weight = item["weight"];
        if (weight.present()) {
          ExpectKind(weight, p + ".weight", SCHEDHOST_CONFIG_INT, "an integer");
          const int64_t w = weight.Int(1);
          if (w != 1) {
            Fail(weight, p + ".weight",
                 "must be 1 (balanced allocation does not weight resources; got " +
                     std::to_string(w) + ")");
          }
        }
        out.resources.push_back(std::move(n));
      }
    }
  }
  if (out.resources.empty()) out.resources = {"cpu", "memory"};
  return out;
}

}  // namespace schedhost::plugins
