// Reading [[profile]] tables: names, plugin lists per point, plugin_config trees.
#include <string>
#include <utility>

#include "host/config/defaults.h"
#include "host/config/suggest.h"
#include "host/config/toml_util.h"

namespace schedhost::config::internal {
namespace {

std::vector<std::string> SectionNames() {
  std::vector<std::string> names;
  names.reserve(kAllPoints.size() + 1);
  for (Point point : kAllPoints) names.emplace_back(PointName(point));
  names.emplace_back(kMultiPointName);
  return names;
}

// ParseEntries reads an `enabled` or `disabled` array of `{ name = ..., weight = ... }`;
// `where` is the profile and point ("profile \"x\", point filter") and `list` the key.
std::vector<PluginEntry> ParseEntries(const Context& ctx, const toml::node& node,
                                      const std::string& where, std::string_view list,
                                      bool weighted) {
  const bool enabled = list == "enabled";
  const toml::array& array = ExpectArray(ctx, node, where + ": " + std::string(list));
  std::vector<PluginEntry> entries;
  for (size_t i = 0; i < array.size(); ++i) {
    const std::string entry_path = std::string(list) + "[" + std::to_string(i) + "]";
    const toml::node& item = *array.get(i);
    const toml::table* table = item.as_table();
    if (table == nullptr) {
      Fail(ctx, item.source(),
           where + ": " + entry_path + " must be a table like { name = \"PluginName\" }, not " +
               TypeName(item));
    }
    if (!enabled && table->get("weight") != nullptr) {
      Fail(ctx, table->get("weight")->source(),
           where + ": " + entry_path + ": weight has no meaning in a disabled list; remove it");
    }
    CheckKeys(
        ctx, *table,
        enabled ? std::vector<std::string>{"name", "weight"} : std::vector<std::string>{"name"},
        where + ", " + entry_path);
    PluginEntry entry;
    entry.location = At(ctx, table->source());
    std::optional<std::string> name =
        GetString(ctx, *table, "name", where + ": " + entry_path + ".name");
    if (!name) {
      Fail(ctx, table->source(),
           where + ": " + entry_path + " needs a name, e.g. { name = \"Foo\" }");
    }
    if (name->empty()) {
      Fail(ctx, table->get("name")->source(),
           where + ": " + entry_path + ".name must not be empty");
    }
    if (enabled && *name == kWildcard) {
      Fail(ctx, table->get("name")->source(),
           where + ": " + entry_path +
               ": \"*\" stands for every plugin and is only allowed in disabled lists");
    }
    entry.name = std::move(*name);
    const std::string plugin = where + ": plugin \"" + entry.name + "\"";
    if (const toml::node* weight = table->get("weight"); weight != nullptr && !weighted) {
      Fail(ctx, weight->source(),
           plugin +
               ": weight applies to score only; set it under plugins.score or "
               "plugins.multi_point");
    }
    if (auto weight = GetInt(ctx, *table, "weight", plugin + ": weight", 0, kMaxScoreWeight)) {
      entry.weight = static_cast<int32_t>(*weight);
    }
    if (enabled) {
      for (const PluginEntry& earlier : entries) {
        if (earlier.name != entry.name) continue;
        throw ConfigError(entry.location, plugin + " is enabled twice (first at " +
                                              earlier.location.ToString() +
                                              "); remove one of the entries");
      }
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

PluginSet ParsePluginSet(const Context& ctx, const toml::node& node, const std::string& where,
                         std::string_view point) {
  const toml::table& table = ExpectTable(ctx, node, where);
  CheckKeys(ctx, table, {"enabled", "disabled"}, where);
  bool weighted = point == PointName(Point::kScore) || point == kMultiPointName;
  PluginSet set;
  if (const toml::node* enabled = table.get("enabled")) {
    set.enabled = ParseEntries(ctx, *enabled, where, "enabled", weighted);
  }
  if (const toml::node* disabled = table.get("disabled")) {
    set.disabled = ParseEntries(ctx, *disabled, where, "disabled", weighted);
  }
  return set;
}

void ParsePlugins(const Context& ctx, const toml::node& node, const std::string& where,
                  Profile& profile) {
  const toml::table& plugins = ExpectTable(ctx, node, where + ": plugins");
  CheckKeys(ctx, plugins, SectionNames(), where + ": plugins");
  PluginSet user_multi_point;
  for (const auto& [key, value] : InFileOrder(plugins)) {
    const std::string name(key->str());
    PluginSet set = ParsePluginSet(ctx, *value, where + ", point " + name, name);
    if (name == kMultiPointName) {
      user_multi_point = std::move(set);
    } else {
      profile.points[PointIndex(*PointFromName(name))] = std::move(set);
    }
  }
  profile.multi_point.enabled = MergeWithDefaults(profile.multi_point.enabled, user_multi_point);
  profile.multi_point.disabled = std::move(user_multi_point.disabled);
}

void ParsePluginConfig(const Context& ctx, const toml::node& node, const std::string& where,
                       Profile& profile) {
  const std::string path = where + ": plugin_config";
  const toml::table& table = ExpectTable(ctx, node, path);
  for (const auto& [key, value] : InFileOrder(table)) {
    const std::string name(key->str());
    if (name.empty() || name == kWildcard) {
      Fail(ctx, key->source(), path + " needs a plugin name as key, not \"" + name + "\"");
    }
    if (value->as_table() == nullptr) {
      Fail(ctx, value->source(),
           path + "." + name + " must be a table of the plugin's arguments, not " +
               TypeName(*value));
    }
    ConfigNode tree = ToConfigNode(ctx, *value, "");
    tree.key_location = At(ctx, key->source()).ToString();  // the plugin's name
    profile.plugin_config[name] = std::make_shared<const ConfigNode>(std::move(tree));
  }
}

Profile ParseProfile(const Context& ctx, const toml::node& node, size_t index) {
  const std::string prefix = "profile[" + std::to_string(index) + "]";
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    Fail(ctx, node.source(),
         prefix + " must be a table (write [[profile]]), not " + TypeName(node));
  }
  CheckKeys(ctx, *table,
            {"name", "percentage_of_nodes_to_score", "plugins", "plugin_config", "shadow_of",
             "libraries"},
            "[[profile]]");
  Profile profile;
  profile.location = At(ctx, table->source());
  if (std::optional<std::string> name = GetString(ctx, *table, "name", prefix + ".name")) {
    if (name->empty()) Fail(ctx, table->get("name")->source(), prefix + ".name must not be empty");
    profile.name = std::move(*name);
  }
  const std::string where = "profile \"" + profile.name + "\"";
  if (std::optional<std::string> of = GetString(ctx, *table, "shadow_of", where + ": shadow_of")) {
    if (of->empty()) Fail(ctx, table->get("shadow_of")->source(), where + ": shadow_of is empty");
    profile.shadow_of = std::move(*of);
  }
  if (const toml::node* libraries = table->get("libraries")) {
    if (profile.shadow_of.empty()) {
      Fail(ctx, libraries->source(),
           where + ": libraries is for shadow profiles (with shadow_of), which try a new build "
                   "of a plugin; a live profile's plugins come from [host] libraries and "
                   "plugin_dirs");
    }
    profile.libraries = ParseLibrarySpecs(ctx, *libraries, where + ": libraries");
  }
  if (auto percentage = GetInt(ctx, *table, "percentage_of_nodes_to_score",
                               where + ": percentage_of_nodes_to_score", 0, 100)) {
    profile.percentage_of_nodes_to_score = static_cast<int32_t>(*percentage);
  }
  profile.multi_point.enabled = DefaultMultiPointEntries(profile.location);
  if (const toml::node* plugins = table->get("plugins")) {
    ParsePlugins(ctx, *plugins, where, profile);
  }
  if (const toml::node* plugin_config = table->get("plugin_config")) {
    ParsePluginConfig(ctx, *plugin_config, where, profile);
  }
  return profile;
}

}  // namespace

void ParseProfiles(const Context& ctx, const toml::node* profiles, HostConfig& config) {
  config.profiles.clear();
  if (profiles != nullptr) {
    const toml::array* array = profiles->as_array();
    if (array == nullptr) {
      Fail(ctx, profiles->source(),
           "profile must be an array of tables: write each profile as [[profile]], not " +
               TypeName(*profiles));
    }
    for (size_t i = 0; i < array->size(); ++i) {
      Profile profile = ParseProfile(ctx, *array->get(i), i);
      if (const Profile* earlier = config.FindProfile(profile.name)) {
        const toml::node* name = array->get(i)->as_table()->get("name");
        throw ConfigError(name != nullptr ? At(ctx, name->source()) : profile.location,
                          "profile \"" + profile.name + "\" is defined twice (first at " +
                              earlier->location.ToString() + "); profile names must be unique");
      }
      config.profiles.push_back(std::move(profile));
    }
  }
  // A shadow names a live profile of the same file (checked once all are read: it may come
  // first).
  for (const Profile& profile : config.profiles) {
    if (profile.shadow_of.empty()) continue;
    const Profile* of = config.FindProfile(profile.shadow_of);
    std::string why;
    if (of == nullptr) {
      why = "names no profile of this file";
    } else if (of == &profile) {
      why = "names the profile itself";
    } else if (!of->shadow_of.empty()) {
      why = "names another shadow; a shadow follows a live profile";
    }
    if (!why.empty()) {
      std::string live;
      for (const Profile& p : config.profiles) {
        if (p.shadow_of.empty()) live += (live.empty() ? "\"" : ", \"") + p.name + "\"";
      }
      throw ConfigError(profile.location, "profile \"" + profile.name + "\": shadow_of \"" +
                                              profile.shadow_of + "\" " + why +
                                              " (live profiles: " +
                                              (live.empty() ? "none" : live) + ")");
    }
  }
  if (config.profiles.empty()) {
    Profile profile;
    profile.location = SourceLocation{ctx.source, 0, 0};
    profile.multi_point.enabled = DefaultMultiPointEntries(profile.location);
    config.profiles.push_back(std::move(profile));
  }
}

}  // namespace schedhost::config::internal
