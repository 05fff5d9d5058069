#include "host/config/expand.h"

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/config/defaults.h"
#include "host/config/suggest.h"

namespace schedhost::config {
namespace {

// Expander holds what one ExpandProfile call needs: the profile, cached lookups, error context.
class Expander {
 public:
  Expander(const Profile& profile, const PointLookup& lookup,
           const std::vector<std::string>& known_plugins)
      : profile_(profile), lookup_(lookup), known_plugins_(known_plugins) {}

  ExpandedProfile Run() {
    ExpandedProfile out;
    out.name = profile_.name;
    out.percentage_of_nodes_to_score = profile_.percentage_of_nodes_to_score;
    // Every error of the profile at once (a config check shows them all): each step's error is
    // kept and the next step runs; the points are not expanded after a multi_point error, which
    // each of them would repeat.
    std::vector<ConfigError> errors;
    const auto attempt = [&errors](const auto& step) {
      try {
        step();
        return true;
      } catch (const ConfigError& e) {
        const bool seen = std::any_of(errors.begin(), errors.end(), [&e](const ConfigError& x) {
          return std::string_view(x.what()) == e.what();
        });
        if (!seen) errors.push_back(e);
        return false;
      }
    };
    if (attempt([this] { CheckMultiPoint(); })) {
      for (Point point : kAllPoints) {
        attempt([&] { out.points[PointIndex(point)] = ExpandPoint(point); });
      }
    }
    for (const auto& entry : profile_.plugin_config) {
      attempt([&] { CheckPluginConfig(entry.first, entry.second.get()); });
    }
    if (!errors.empty()) {
      std::string message = errors.front().message;
      for (size_t i = 1; i < errors.size(); ++i) message.append("\n").append(errors[i].what());
      throw ConfigError({errors.front().file, errors.front().line, errors.front().column}, message);
    }
    out.plugin_config = profile_.plugin_config;
    out.shadow_of = profile_.shadow_of;
    return out;
  }

 private:
  [[noreturn]] void Fail(const SourceLocation& where, std::string_view point,
                         const std::string& what) const {
    std::string context = "profile \"" + profile_.name + "\"";
    if (!point.empty()) context += ", point " + std::string(point);
    throw ConfigError(where, context + ": " + what);
  }

  std::string UnknownPluginMessage(const std::string& name) const {
    std::string message = "plugin \"" + name + "\" is not known";
    if (std::optional<std::string> match = ClosestMatch(name, known_plugins_)) {
      message += " (did you mean \"" + *match + "\"?)";
    }
    if (known_plugins_.empty()) {
      message += "; no loaded library provides it (check plugin_dirs and libraries)";
    } else {
      message += "; loaded plugins are: " + JoinNames(known_plugins_) +
                 " (check plugin_dirs and libraries)";
    }
    return message;
  }

  // PointsOf returns the points `entry` implements, failing when the plugin is unknown.
  uint32_t PointsOf(const PluginEntry& entry, std::string_view point) {
    auto cached = masks_.find(entry.name);
    if (cached == masks_.end()) {
      cached = masks_.emplace(entry.name, lookup_(entry.name)).first;
    }
    if (!cached->second.has_value()) {
      std::string message = UnknownPluginMessage(entry.name);
      if (entry.from_defaults) {
        message += "; it is a default plugin: if it is not wanted, add { name = \"" + entry.name +
                   "\" } to plugins.multi_point.disabled";
      }
      Fail(entry.location, point, message);
    }
    return *cached->second;
  }

  // CheckNoDuplicates fails on the second entry of a name within one enabled list.
  void CheckNoDuplicates(const std::vector<PluginEntry>& enabled, std::string_view point) const {
    for (size_t i = 0; i < enabled.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (enabled[j].name != enabled[i].name) continue;
        Fail(enabled[i].location, point,
             "plugin \"" + enabled[i].name + "\" is enabled twice (first at " +
                 enabled[j].location.ToString() + "); remove one of the entries");
      }
    }
  }

  void CheckMultiPoint() {
    CheckNoDuplicates(profile_.multi_point.enabled, kMultiPointName);
    for (const PluginEntry& entry : profile_.multi_point.enabled) {
      PointsOf(entry, kMultiPointName);
    }
  }

  static std::string ImplementedList(uint32_t mask) {
    std::vector<std::string> names;
    for (Point point : kAllPoints) {
      if ((mask & PointBit(point)) != 0) names.emplace_back(PointName(point));
    }
    return names.empty() ? "no extension point" : JoinNames(names);
  }

  static EnabledPlugin Enabled(const PluginEntry& entry, Point point) {
    int32_t weight = 0;
    if (point == Point::kScore) weight = entry.weight == 0 ? 1 : entry.weight;
    return EnabledPlugin{entry.name, weight, entry.location};
  }

  std::vector<EnabledPlugin> ExpandPoint(Point point) {
    const PluginSet& specific = profile_.points[PointIndex(point)];
    std::string_view point_name = PointName(point);
    CheckNoDuplicates(specific.enabled, point_name);
    std::set<std::string, std::less<>> named_here;
    for (const PluginEntry& entry : specific.enabled) {
      uint32_t mask = PointsOf(entry, point_name);
      if ((mask & PointBit(point)) == 0) {
        Fail(entry.location, point_name,
             "plugin \"" + entry.name + "\" does not implement " + std::string(point_name) +
                 " (it implements " + ImplementedList(mask) + "); remove it from plugins." +
                 std::string(point_name) +
                 ".enabled, or list it under plugins.multi_point to enable it at every point "
                 "it implements");
      }
      named_here.insert(entry.name);
    }
    std::set<std::string, std::less<>> disabled;
    for (const PluginEntry& entry : specific.disabled) disabled.insert(entry.name);

    std::vector<EnabledPlugin> result;
    if (disabled.contains(kWildcard)) {
      for (const PluginEntry& entry : specific.enabled) result.push_back(Enabled(entry, point));
      return result;
    }
    // Multi_point plugins that apply here; those also named at the point are overridden by it.
    std::set<std::string, std::less<>> overridden;
    std::vector<const PluginEntry*> from_multi_point;
    for (const PluginEntry& entry : profile_.multi_point.enabled) {
      if ((PointsOf(entry, kMultiPointName) & PointBit(point)) == 0) continue;
      if (disabled.contains(entry.name)) continue;
      if (named_here.contains(entry.name)) {
        overridden.insert(entry.name);
      } else {
        from_multi_point.push_back(&entry);
      }
    }
    for (const PluginEntry& entry : specific.enabled) {
      if (overridden.contains(entry.name)) result.push_back(Enabled(entry, point));
    }
    for (const PluginEntry* entry : from_multi_point) result.push_back(Enabled(*entry, point));
    for (const PluginEntry& entry : specific.enabled) {
      if (!overridden.contains(entry.name)) result.push_back(Enabled(entry, point));
    }
    return result;
  }

  // CheckPluginConfig fails when no loaded library provides the plugin plugin_config.<name>
  // configures.
  void CheckPluginConfig(const std::string& name, const ConfigNode* tree) {
    auto cached = masks_.find(name);
    if (cached == masks_.end()) cached = masks_.emplace(name, lookup_(name)).first;
    if (!cached->second.has_value()) {
      Fail(LocationOf(tree), "",
           "plugin_config." + name +
               " configures an unknown plugin: " + UnknownPluginMessage(name));
    }
  }

  // LocationOf turns a tree node's "file:line:col" back into a SourceLocation.
  SourceLocation LocationOf(const ConfigNode* node) const {
    SourceLocation where{profile_.location.file, 0, 0};
    if (node == nullptr) return where;
    const std::string& text = node->location;
    size_t col_sep = text.rfind(':');
    if (col_sep == std::string::npos || col_sep == 0) return where;
    size_t line_sep = text.rfind(':', col_sep - 1);
    if (line_sep == std::string::npos) return where;
    try {
      where.line = std::stoi(text.substr(line_sep + 1, col_sep - line_sep - 1));
      where.column = std::stoi(text.substr(col_sep + 1));
      where.file = text.substr(0, line_sep);
    } catch (const std::exception&) {
      where.line = where.column = 0;
    }
    return where;
  }

  const Profile& profile_;
  const PointLookup& lookup_;
  const std::vector<std::string>& known_plugins_;
  std::map<std::string, std::optional<uint32_t>, std::less<>> masks_;
};

}  // namespace

ExpandedProfile ExpandProfile(const Profile& profile, const PointLookup& lookup,
                              const std::vector<std::string>& known_plugins) {
  return Expander(profile, lookup, known_plugins).Run();
}

std::string Describe(const ExpandedProfile& profile) {
  std::string out = "profile \"" + profile.name + "\"\n";
  out += "  percentage_of_nodes_to_score: ";
  out += profile.percentage_of_nodes_to_score
             ? std::to_string(*profile.percentage_of_nodes_to_score)
             : std::string("host setting");
  out += "\n";
  size_t width = 0;
  for (Point point : kAllPoints) width = std::max(width, PointName(point).size());
  for (Point point : kAllPoints) {
    std::string_view name = PointName(point);
    out += "  " + std::string(name) + ":" + std::string(width - name.size() + 1, ' ');
    const std::vector<EnabledPlugin>& plugins = profile.PluginsAt(point);
    if (plugins.empty()) out += "(none)";
    for (size_t i = 0; i < plugins.size(); ++i) {
      if (i > 0) out += " ";
      out += plugins[i].name;
      if (point == Point::kScore) out += "(" + std::to_string(plugins[i].weight) + ")";
    }
    out += "\n";
  }
  out += "  plugin_config:";
  if (profile.plugin_config.empty()) out += " (none)";
  for (const auto& [name, tree] : profile.plugin_config) {
    out += " " + name;
    if (tree != nullptr && !tree->location.empty()) out += " (" + tree->location + ")";
  }
  out += "\n";
  return out;
}

}  // namespace schedhost::config
