// NodeResourcesBalancedAllocation's arguments: reading plugin_config, upstream's default
// (cpu and memory) and validation (ValidateNodeResourcesBalancedAllocationArgs), and the
// resource-name rule Score relies on.
#include <algorithm>
#include <schedhost/names.hpp>
#include <string>
#include <utility>

#include "node_resources_balanced_allocation.h"

namespace schedhost::plugins {
namespace {

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
  ArgsReader r(args, "NodeResourcesBalancedAllocation");
  r.Tables("resources", [&](ArgsReader& item) {
    std::string name = item.RequiredString("name");
    if (name.empty()) item.Fail("name", "must not be empty");
    if (std::find(out.resources.begin(), out.resources.end(), name) != out.resources.end()) {
      item.Fail("name", "resource \"" + name + "\" is listed twice");
    }
    // Upstream ignores the weight in its formula and refuses any value but 1 (an unset weight
    // defaults to 1); here too, so a weight is never silently ignored.
    if (const int64_t w = item.Int("weight", {.fallback = 1}); w != 1) {
      item.Fail("weight", "must be 1 (balanced allocation does not weight resources; got " +
                              std::to_string(w) + ")");
    }
    out.resources.push_back(std::move(name));
  });
  r.Done();
  if (out.resources.empty()) out.resources = {"cpu", "memory"};
  return out;
}

}  // namespace schedhost::plugins
