// Framework::Build: creating plugin instances from an expanded profile and validating the
// result as upstream's NewFramework does (reference/004: unknown plugin, plugin not
// implementing the point, duplicates, score-weight overflow, QueueSort and Bind counts).
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "host/framework/framework.h"
#include "host/framework/framework_metrics.h"
#include "host/framework/plugin_instance.h"

namespace schedhost::framework {
namespace {

// Upstream caps the sum of weight * MaxNodeScore at MaxInt64.
constexpr int64_t kMaxTotalScore = std::numeric_limits<int64_t>::max();

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out.empty() ? "(none)" : out;
}

std::string Where(const config::EnabledPlugin& e) {
  std::string loc = e.location.ToString();
  return loc.empty() ? std::string() : loc + ": ";
}

}  // namespace

Framework::~Framework() {
  // Destroy instances in reverse creation order, on the control thread.
  for (auto& p : points_) p.clear();
  while (!instances_.empty()) instances_.pop_back();
}

std::unique_ptr<Framework> Framework::Build(const config::ExpandedProfile& profile,
                                            const loader::PluginRegistry& registry,
                                            const FrameworkOptions& options) {
  std::unique_ptr<Framework> fw(new Framework());
  fw->name_ = profile.name;
  fw->percentage_of_nodes_to_score_ =
      profile.percentage_of_nodes_to_score.value_or(options.percentage_of_nodes_to_score);
  fw->parallelizer_ = options.parallelizer ? options.parallelizer : std::make_shared<Parallelizer>(1);
  const std::string prefix = "profile \"" + profile.name + "\"";

  // Every error of the profile is reported at once (a config check shows them all): a failing
  // entry is noted and the others are still built; the profile is refused at the end.
  std::vector<std::string> errors;
  const auto note = [&errors](std::string message) {
    if (std::find(errors.begin(), errors.end(), message) == errors.end()) {
      errors.push_back(std::move(message));
    }
  };
  // create makes an instance of `entry` with the profile's plugin_config for it; `what` names
  // the plugin in an error.
  const auto create = [&](const config::EnabledPlugin& e, const loader::PluginEntry& entry,
                          const std::string& what) -> std::unique_ptr<PluginInstance> {
    auto inst = std::make_unique<PluginInstance>();
    inst->name = e.name;
    inst->name_text = Text::Intern(e.name);
    inst->desc = entry.descriptor;
    inst->library = entry.library;
    if (auto it = profile.plugin_config.find(e.name); it != profile.plugin_config.end()) {
      inst->args = it->second;
    }
    inst->handle.framework = fw.get();
    inst->handle.plugin = inst.get();
    if (inst->desc->create == nullptr) {
      throw FrameworkError(prefix + ": " + what + " has no create function");
    }
    inst->kinds = KindsOf(*inst->desc, prefix + ": " + what);
    for (const store::KindInfo& k : inst->kinds) inst->kind_keys.push_back(k.Key());
    inst->evaluates = EvaluatesOf(*inst->desc, prefix + ": " + what);
    StatusSink sink;
    void* out = nullptr;
    int32_t rc = inst->desc->create(HostApi(), &inst->handle,
                                    inst->args ? config::AsAbi(inst->args.get()) : nullptr, &out,
                                    sink.abi());
    if (rc != SCHEDHOST_SUCCESS) {
      Status s = ToStatus(rc, sink, inst->name_text);
      // Errors about arguments carry their own location; without a plugin_config table (e.g. a
      // required argument not given) the place the plugin is enabled is the one to show.
      throw FrameworkError((inst->args ? std::string() : Where(e)) + prefix + ": " + what +
                           " could not be created: " + s.Message());
    }
    inst->instance = out;
    return inst;
  };

  std::map<std::string, PluginInstance*, std::less<>> made;
  std::set<std::string, std::less<>> failed;  // created with an error, noted once
  auto instantiate = [&](const config::EnabledPlugin& e,
                         const loader::PluginEntry& entry) -> PluginInstance* {
    if (auto it = made.find(e.name); it != made.end()) return it->second;
    std::unique_ptr<PluginInstance> inst = create(e, entry, "plugin \"" + e.name + "\"");
    if (options.batch_plugin_calls) {
      if (SCHEDHOST_HAS_FIELD(inst->desc, schedhost_plugin_descriptor, filter_batch)) {
        inst->filter_batch = inst->desc->filter_batch;
      }
      if (SCHEDHOST_HAS_FIELD(inst->desc, schedhost_plugin_descriptor, score_batch)) {
        inst->score_batch = inst->desc->score_batch;
      }
    }
    PluginInstance* raw = inst.get();
    fw->instances_.push_back(std::move(inst));
    made.emplace(e.name, raw);
    return raw;
  };

  int64_t total_score = 0;
  for (size_t p = 0; p < config::kNumPoints; ++p) {
    const auto point = static_cast<config::Point>(p);
    const std::string point_name(config::PointName(point));
    std::vector<std::string> seen;
    for (const auto& e : profile.points[p]) {
      if (std::find(seen.begin(), seen.end(), e.name) != seen.end()) {
        note(Where(e) + prefix + ", point " + point_name + ": plugin \"" + e.name +
             "\" is enabled more than once; remove the duplicate");
        continue;
      }
      seen.push_back(e.name);
      const loader::PluginEntry* entry = registry.Find(e.name);
      if (entry == nullptr) {
        note(Where(e) + prefix + ", point " + point_name + ": plugin \"" + e.name +
             "\" is not known; loaded plugins are: " + JoinNames(registry.Names()) +
             " (check plugin_dirs and libraries)");
        continue;
      }
      if ((loader::ImplementedPoints(*entry->descriptor) & (1u << p)) == 0) {
        note(Where(e) + prefix + ", point " + point_name + ": plugin \"" + e.name +
             "\" does not implement " + point_name +
             "; enable it under multi_point or at a point it implements");
        continue;
      }
      if (failed.contains(e.name)) continue;
      PluginRef ref;
      try {
        ref.plugin = instantiate(e, *entry);
      } catch (const FrameworkError& err) {
        failed.insert(e.name);
        note(err.what());
        continue;
      }
      ref.weight = 1;
      if (point == config::Point::kScore) {
        ref.weight = e.weight == 0 ? 1 : e.weight;
        if (ref.weight < 0) {
          note(Where(e) + prefix + ": score plugin \"" + e.name + "\" has a negative weight " +
               std::to_string(ref.weight));
          continue;
        }
        if (ref.weight > (kMaxTotalScore - total_score) / SCHEDHOST_MAX_NODE_SCORE) {
          note(Where(e) + prefix + ": total score of Score plugins could overflow (weight " +
               std::to_string(ref.weight) + " of plugin \"" + e.name + "\"); lower the weights");
          continue;
        }
        total_score += ref.weight * SCHEDHOST_MAX_NODE_SCORE;
      }
      fw->points_[p].push_back(ref);
    }
  }

  // plugin_config of a loaded plugin this profile does not enable is checked as well, by an
  // instance created with it and destroyed at once: a typo there is refused with the config,
  // not when someone enables the plugin. (Expansion refuses the names no library provides.)
  for (const auto& [name, args] : profile.plugin_config) {
    const loader::PluginEntry* entry = registry.Find(name);
    if (entry == nullptr || made.contains(name) || failed.contains(name)) continue;
    bool enabled = false;
    for (const auto& point : profile.points) {
      for (const auto& e : point) enabled = enabled || e.name == name;
    }
    if (enabled) continue;  // an error above already names it
    try {
      create(config::EnabledPlugin{name, 0, {}}, *entry,
             "plugin \"" + name + "\" (configured in plugin_config, not enabled)");
    } catch (const FrameworkError& err) {
      note(err.what());
    }
  }

  // Counted on the profile's lists (names, a duplicate noted above once), so a plugin that failed
  // above does not also read as absent.
  std::set<std::string_view> sorts;
  for (const auto& e : profile.points[static_cast<size_t>(config::Point::kQueueSort)]) {
    sorts.insert(e.name);
  }
  if (sorts.empty()) {
    note(prefix + ": no queue_sort plugin is enabled; enable one (e.g. PrioritySort)");
  } else if (sorts.size() > 1) {
    note(prefix + ": only one queue_sort plugin can be enabled, found " +
         std::to_string(sorts.size()));
  }
  if (profile.points[static_cast<size_t>(config::Point::kBind)].empty()) {
    note(prefix + ": at least one bind plugin is needed (e.g. DefaultBinder)");
  }
  if (!errors.empty()) {
    std::string message;
    for (const std::string& e : errors) {
      if (!message.empty()) message += '\n';
      message += e;
    }
    throw FrameworkError(message);
  }
  fw->metrics_ = std::make_unique<FrameworkMetrics>(fw->name_, fw->instances_, options.shadow);
  return fw;
}

std::vector<std::string> Framework::PluginNames() const {
  std::vector<std::string> out;
  for (const auto& i : instances_) out.push_back(i->name);
  return out;
}

std::string Framework::QueueSortPluginName() const {
  const auto& sorts = points_[static_cast<size_t>(config::Point::kQueueSort)];
  return sorts.empty() ? std::string() : sorts.front().plugin->name;
}

std::vector<std::string> Framework::ScorePluginNames() const {
  std::vector<std::string> out;
  for (const auto& r : points_[static_cast<size_t>(config::Point::kScore)]) out.push_back(r.plugin->name);
  return out;
}

}  // namespace schedhost::framework
