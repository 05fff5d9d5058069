#include "host/scheduler/profile_set.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <sstream>

#include "host/config/config_tree.h"
#include "host/framework/plugin_instance.h"

namespace schedhost::scheduler {
namespace {

const std::filesystem::path kInstalledPluginDir = "/usr/lib/schedhost/plugins";

// ErrorAt reports a library or directory that cannot be loaded where the config names it.
ProfileSetError ErrorAt(const config::SourceLocation& where, const loader::LoadError& e) {
  return ProfileSetError(where.file.empty() ? std::string(e.what())
                                            : where.ToString() + ": " + e.what());
}

// LoadPinned loads `lib` into `registry`, refusing a file whose sha256 is not the config's pin.
void LoadPinned(loader::PluginRegistry& registry, const config::LibrarySpec& lib,
                const schedhost_host_api* api) {
  std::shared_ptr<const loader::Library> loaded;
  try {
    loaded = registry.LoadLibrary(lib.path, api);
  } catch (const loader::LoadError& e) {
    throw ErrorAt(lib.location, e);
  }
  if (lib.sha256 && *lib.sha256 != loaded->sha256()) {
    throw ProfileSetError(lib.location.ToString() + ": library " + lib.path.string() +
                          " has sha256 " + loaded->sha256() + " but the config pins " +
                          *lib.sha256 + "; update the pin or restore the expected file");
  }
}

// Canonical text of a plugin argument tree, to compare QueueSort arguments across profiles.
void Serialize(const config::ConfigNode* node, std::string& out) {
  const schedhost_config* c = config::AsAbi(node);
  switch (config::ConfigKind(c)) {
    case SCHEDHOST_CONFIG_TABLE:
    case SCHEDHOST_CONFIG_ARRAY: {
      out += config::ConfigKind(c) == SCHEDHOST_CONFIG_TABLE ? "{" : "[";
      for (size_t i = 0; i < config::ConfigLen(c); ++i) {
        schedhost_str key{};
        const schedhost_config* child = config::ConfigAt(c, i, &key);
        out.append(key.data == nullptr ? "" : std::string(key.data, key.len)).append("=");
        Serialize(config::FromAbi(child), out);
        out += ",";
      }
      out += config::ConfigKind(c) == SCHEDHOST_CONFIG_TABLE ? "}" : "]";
      break;
    }
    case SCHEDHOST_CONFIG_STRING: {
      schedhost_str s{};
      config::ConfigString(c, &s);
      out.append("\"").append(s.data, s.len).append("\"");
      break;
    }
    case SCHEDHOST_CONFIG_INT: {
      int64_t v = 0;
      config::ConfigInt(c, &v);
      out += std::to_string(v);
      break;
    }
    case SCHEDHOST_CONFIG_FLOAT: {
      double v = 0;
      config::ConfigFloat(c, &v);
      out += std::to_string(v);
      break;
    }
    case SCHEDHOST_CONFIG_BOOL: {
      int32_t v = 0;
      config::ConfigBool(c, &v);
      out += v ? "true" : "false";
      break;
    }
    default:
      out += "null";
  }
}

std::string QueueSortKey(const config::ExpandedProfile& p) {
  const auto& sorts = p.PluginsAt(config::Point::kQueueSort);
  if (sorts.empty()) return "";
  std::string key = sorts.front().name + ":";
  if (auto it = p.plugin_config.find(sorts.front().name); it != p.plugin_config.end()) {
    Serialize(it->second.get(), key);
  }
  return key;
}

}  // namespace

void CheckQueueSortAgreement(const std::vector<config::ExpandedProfile>& profiles) {
  if (profiles.empty()) return;
  const std::string first = QueueSortKey(profiles.front());
  for (const auto& p : profiles) {
    if (QueueSortKey(p) != first) {
      throw ProfileSetError("profile \"" + p.name +
                            "\" uses a different queue_sort plugin or arguments than profile \"" +
                            profiles.front().name +
                            "\"; all profiles share one queue and must agree on QueueSort");
    }
  }
}

std::filesystem::path BuiltinPluginDir(const std::filesystem::path& exe) {
  std::error_code ec;
  const auto prefix = std::filesystem::weakly_canonical(exe, ec).parent_path().parent_path();
  if (ec) return kInstalledPluginDir;
  // The build tree (<build>/bin, <build>/plugins), then an install under any prefix
  // (<prefix>/bin, <prefix>/lib/schedhost/plugins; the packages use /usr).
  for (const auto& dir : {prefix / "plugins", prefix / "lib" / "schedhost" / "plugins"}) {
    if (std::filesystem::is_directory(dir, ec)) return dir;
  }
  return kInstalledPluginDir;
}

std::shared_ptr<loader::LibraryStore> OpenLibraryStore(const config::HostConfig& cfg) {
  try {
    return std::make_shared<loader::LibraryStore>(cfg.state_dir / "plugins",
                                                  cfg.unload == config::UnloadPolicy::kPin);
  } catch (const loader::LoadError& e) {
    spdlog::warn(
        "{}; plugin libraries load in place, so a library replaced at the same path is not "
        "reloaded until the host restarts",
        e.what());
    return nullptr;
  }
}

ProfileSet::~ProfileSet() {
  // Frameworks (and so plugin instances) go before the registries that keep their libraries.
  frameworks_.clear();
  shadows_.clear();
}

std::shared_ptr<const ProfileSet> ProfileSet::Build(const config::HostConfig& cfg,
                                                    const std::filesystem::path& builtin_dir) {
  return Build(cfg, builtin_dir, {});
}

std::shared_ptr<const ProfileSet> ProfileSet::Build(
    const config::HostConfig& cfg, const std::filesystem::path& builtin_dir,
    const std::vector<const schedhost_plugin_descriptor*>& in_process,
    std::shared_ptr<loader::LibraryStore> store) {
  std::shared_ptr<ProfileSet> set(new ProfileSet());
  set->registry_ = std::make_shared<loader::PluginRegistry>(std::move(store));
  // A config that leaves plugin_dirs at its default gets the builtin plugins of this binary.
  set->plugin_dirs_ = cfg.plugin_dirs;
  if (set->plugin_dirs_ == std::vector<std::filesystem::path>{kInstalledPluginDir}) {
    set->plugin_dirs_ = {builtin_dir};
  }
  const schedhost_host_api* api = framework::HostApi();
  try {
    // The config's locations apply unless the default directory was swapped for the builtin one.
    const bool dirs_from_config = set->plugin_dirs_ == cfg.plugin_dirs;
    for (size_t i = 0; i < set->plugin_dirs_.size(); ++i) {
      try {
        set->registry_->LoadDirectory(set->plugin_dirs_[i], api);
      } catch (const loader::LoadError& e) {
        const bool named = dirs_from_config && i < cfg.plugin_dir_locations.size();
        throw ErrorAt(named ? cfg.plugin_dir_locations[i] : config::SourceLocation{}, e);
      }
    }
    for (const auto& lib : cfg.libraries) LoadPinned(*set->registry_, lib, api);
    for (const schedhost_plugin_descriptor* d : in_process) set->registry_->RegisterInProcess(d);
  } catch (const loader::LoadError& e) {
    throw ProfileSetError(e.what());
  }
  if (!set->registry_->load_errors().empty()) {
    std::string msg = "some plugin libraries were refused:";
    for (const auto& e : set->registry_->load_errors()) msg += "\n  " + e;
    throw ProfileSetError(msg);
  }
  set->BuildProfiles(cfg);
  return set;
}

std::shared_ptr<const ProfileSet> ProfileSet::Rebuild(const config::HostConfig& cfg) const {
  std::shared_ptr<ProfileSet> set(new ProfileSet());
  set->registry_ = registry_;
  set->plugin_dirs_ = plugin_dirs_;
  set->BuildProfiles(cfg);
  return set;
}

void ProfileSet::BuildProfiles(const config::HostConfig& cfg) {
  parallelizer_ = std::make_shared<framework::Parallelizer>(cfg.parallelism);
  shadow_config_ = cfg.shadow;
  // Shadows run one cycle at a time on the shadow thread, Filter and Score included: their CPU
  // stays within one thread, beside the live cycles' pool.
  std::shared_ptr<framework::Parallelizer> shadow_parallelizer;
  // Every profile is built and each one's errors kept, so a refused config is refused with all
  // of them (`schedctl config check`, the daemon's start and reload share this path); the set
  // is never used then.
  std::vector<std::string> errors;
  for (const auto& profile : cfg.profiles) {
    // A shadow's own library versions come first, the set's provide the rest.
    std::shared_ptr<loader::PluginRegistry> own;
    try {
      own = ShadowRegistry(profile);
    } catch (const ProfileSetError& e) {
      errors.emplace_back(e.what());
      continue;
    }
    const loader::PluginRegistry& registry = own != nullptr ? *own : *registry_;
    const auto profile_lookup = [&registry](std::string_view name) -> std::optional<uint32_t> {
      const loader::PluginEntry* e = registry.Find(name);
      if (e == nullptr) return std::nullopt;
      return loader::ImplementedPoints(*e->descriptor);
    };
    config::ExpandedProfile expanded;
    try {
      expanded = config::ExpandProfile(profile, profile_lookup, registry.Names());
    } catch (const config::ConfigError& e) {
      errors.emplace_back(e.what());
      continue;
    }
    const bool shadow = !expanded.shadow_of.empty();
    if (shadow && shadow_parallelizer == nullptr) {
      shadow_parallelizer = std::make_shared<framework::Parallelizer>(1);
    }
    framework::FrameworkOptions options;
    options.parallelizer = shadow ? shadow_parallelizer : parallelizer_;
    options.percentage_of_nodes_to_score = cfg.percentage_of_nodes_to_score;
    options.batch_plugin_calls = cfg.batch_plugin_calls;
    options.shadow = shadow;
    std::unique_ptr<framework::Framework> fw;
    try {
      fw = framework::Framework::Build(expanded, registry, options);
    } catch (const framework::FrameworkError& e) {
      errors.emplace_back(e.what());
      continue;
    }
    if (shadow) {
      shadows_.push_back({std::move(expanded), std::move(own), std::move(fw)});
    } else {
      frameworks_.push_back(std::move(fw));
      expanded_.push_back(std::move(expanded));
    }
  }
  if (!errors.empty()) {
    std::string message;
    for (const std::string& e : errors) {
      if (!message.empty()) message += '\n';
      message += e;
    }
    throw ProfileSetError(message);
  }
  CheckQueueSortAgreement(expanded_);
  // Plugins that declare one group and resource share its mirror: they must agree on it.
  store::ObjectStore agreement;
  auto declare = [&agreement](const framework::Framework& fw) {
    for (const store::KindInfo& kind : fw.DeclaredKinds()) {
      try {
        agreement.Declare(kind);
      } catch (const store::StoreError& e) {
        throw ProfileSetError("profile \"" + fw.profile_name() + "\": " + e.what());
      }
    }
  };
  for (const auto& fw : frameworks_) declare(*fw);
  for (const ShadowProfile& s : shadows_) declare(*s.framework);
  kinds_ = agreement.Kinds();
}

std::shared_ptr<loader::PluginRegistry> ProfileSet::ShadowRegistry(
    const config::Profile& profile) const {
  if (profile.libraries.empty()) return nullptr;
  auto own = std::make_shared<loader::PluginRegistry>(registry_->store());
  for (const config::LibrarySpec& lib : profile.libraries) {
    LoadPinned(*own, lib, framework::HostApi());
  }
  own->AddMissing(*registry_);
  return own;
}

framework::Framework* ProfileSet::Find(std::string_view scheduler_name) const {
  for (const auto& fw : frameworks_) {
    if (fw->profile_name() == scheduler_name) return fw.get();
  }
  return nullptr;
}

std::string ProfileSet::Describe() const {
  std::ostringstream out;
  out << "Plugin libraries (" << registry_->Libraries().size() << "):\n";
  for (const auto& lib : registry_->Libraries()) {
    out << "  " << lib->path().filename().string() << "  abi " << lib->abi_major() << "."
        << lib->abi_minor() << "  sdk " << lib->sdk_version() << "  sha256 "
        << lib->sha256().substr(0, 12) << "\n";
    for (const auto& p : lib->manifest().plugins) {
      out << "      " << p.name << " " << p.version << "\n";
    }
  }
  for (const auto& p : expanded_) {
    out << "\n" << config::Describe(p);
  }
  for (const ShadowProfile& s : shadows_) {
    out << "\n(shadow of \"" << s.profile.shadow_of << "\")\n" << config::Describe(s.profile);
  }
  return out.str();
}

}  // namespace schedhost::scheduler
