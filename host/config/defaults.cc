#include "host/config/defaults.h"

#include <algorithm>
#include <set>
#include <string>

namespace schedhost::config {

std::vector<DefaultPlugin> DefaultMultiPointPlugins() {
  // Upstream's default profile, in its order, but for DynamicResources and NodeDeclaredFeatures,
  // not written yet: a pod that needs what they evaluate is held, saying so. Weights are the
  // upstream default score weights (a score plugin without one weighs 1).
  return {
      {"SchedulingGates", 0},
      {"PrioritySort", 0},
      {"NodeUnschedulable", 0},
      {"NodeName", 0},
      {"TaintToleration", 3},
      {"NodeAffinity", 2},
      {"NodePorts", 0},
      {"NodeResourcesFit", 1},
      {"VolumeRestrictions", 0},
      {"NodeVolumeLimits", 0},
      {"VolumeBinding", 0},
      {"VolumeZone", 0},
      {"PodTopologySpread", 2},
      {"InterPodAffinity", 2},
      {"DefaultPreemption", 0},
      {"NodeResourcesBalancedAllocation", 1},
      {"ImageLocality", 1},
      {"DefaultBinder", 0},
  };
}

std::vector<PluginEntry> DefaultMultiPointEntries(const SourceLocation& where) {
  std::vector<PluginEntry> entries;
  for (const DefaultPlugin& plugin : DefaultMultiPointPlugins()) {
    entries.push_back(PluginEntry{std::string(plugin.name), plugin.weight, where, true});
  }
  return entries;
}

std::vector<PluginEntry> MergeWithDefaults(const std::vector<PluginEntry>& defaults,
                                           const PluginSet& user) {
  std::set<std::string, std::less<>> disabled;
  for (const PluginEntry& entry : user.disabled) disabled.insert(entry.name);
  std::vector<bool> used(user.enabled.size(), false);
  std::vector<PluginEntry> merged;
  if (!disabled.contains(kWildcard)) {
    for (const PluginEntry& plugin : defaults) {
      if (disabled.contains(plugin.name)) continue;
      // A user entry naming a default takes its place (and its weight, even when unset). When
      // the user names it twice, the last one replaces it, as upstream does; the earlier one is
      // then appended below and rejected as a duplicate.
      auto it = std::find_if(user.enabled.rbegin(), user.enabled.rend(),
                             [&](const PluginEntry& e) { return e.name == plugin.name; });
      if (it == user.enabled.rend()) {
        merged.push_back(plugin);
        continue;
      }
      used[static_cast<size_t>(user.enabled.rend() - it - 1)] = true;
      merged.push_back(*it);
    }
  }
  for (size_t i = 0; i < user.enabled.size(); ++i) {
    if (!used[i]) merged.push_back(user.enabled[i]);
  }
  return merged;
}

}  // namespace schedhost::config
