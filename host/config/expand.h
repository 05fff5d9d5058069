// Expansion of a Profile into the final ordered plugin list of every extension point.
//
// Expansion needs to know which points each plugin implements, which only the loader knows, so
// it takes a lookup. Per point the order is upstream's: (1) plugins enabled at the point that
// are also in multi_point, in the point's order and with its weights; (2) multi_point plugins
// implementing the point and not disabled there; (3) the point's other plugins. A "*" in a
// point's `disabled` list keeps multi_point out of that point entirely.
//
//   ExpandedProfile expanded = ExpandProfile(config.profiles[0], lookup, registry.Names());
//   std::cout << Describe(expanded);
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/config/config_error.h"
#include "host/config/config_tree.h"
#include "host/config/host_config.h"
#include "host/config/point.h"

namespace schedhost::config {

// PointLookup returns the bitmask (bit i = Point i) of points `plugin` implements, or nullopt
// when no loaded library provides a plugin of that name.
using PointLookup = std::function<std::optional<uint32_t>(std::string_view plugin)>;

// EnabledPlugin is one plugin in a point's final list.
struct EnabledPlugin {
  std::string name;
  // weight is the score weight (>= 1) at Point::kScore, and 0 at every other point.
  int32_t weight = 0;
  // location is the entry that put the plugin here (specific point or multi_point).
  SourceLocation location;

  friend bool operator==(const EnabledPlugin&, const EnabledPlugin&) = default;
};

// ExpandedProfile is a profile as the framework runs it: one ordered list per point.
struct ExpandedProfile {
  std::string name;
  std::optional<int32_t> percentage_of_nodes_to_score;
  // points holds the final list of each point, indexed by PointIndex (multi_point excluded).
  std::array<std::vector<EnabledPlugin>, kNumPoints> points;
  // plugin_config maps a plugin name to its arguments tree (a table).
  std::map<std::string, std::shared_ptr<const ConfigNode>> plugin_config;
  // shadow_of is the live profile this one shadows ("" for a live profile).
  std::string shadow_of;

  // PluginsAt returns the final list of `point`.
  const std::vector<EnabledPlugin>& PluginsAt(Point point) const {
    return points[PointIndex(point)];
  }
};

// ExpandProfile builds every point's list of `profile`. `known_plugins` (the loaded plugin
// names) only improves error messages. Throws ConfigError naming file:line:col, the profile,
// the point and the plugin for an unknown plugin, a plugin named at a point it does not
// implement, a plugin enabled twice in one list, or plugin_config for an unknown plugin.
ExpandedProfile ExpandProfile(const Profile& profile, const PointLookup& lookup,
                              const std::vector<std::string>& known_plugins = {});

// Describe returns a readable multi-line listing of `profile`: one line per point with its
// plugins ("score: TaintToleration(3) NodeAffinity(2)"), then the configured plugin args.
std::string Describe(const ExpandedProfile& profile);

}  // namespace schedhost::config
