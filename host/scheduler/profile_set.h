// ProfileSet: every profile of a config, built and validated together, plus the plugin
// libraries they hold. Immutable once built: a reload builds a new set and swaps
// one pointer; frameworks and libraries go away when the last holder releases the set.
//
//   auto set = ProfileSet::Build(config, BuiltinPluginDir(argv0));   // throws ProfileSetError
//   const framework::Framework* fw = set->Find(pod.scheduler_name());
#pragma once

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "host/config/expand.h"
#include "host/config/host_config.h"
#include "host/framework/framework.h"
#include "host/loader/loader.h"

namespace schedhost::scheduler {

/// ProfileSetError reports why a config could not become a ProfileSet.
class ProfileSetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// BuiltinPluginDir returns the builtin plugin directory of a binary: `<exe>/../plugins` in a
/// build tree when it exists, else `<exe>/../lib/schedhost/plugins` (an install under any
/// prefix), otherwise the packaged /usr/lib/schedhost/plugins.
std::filesystem::path BuiltinPluginDir(const std::filesystem::path& exe);

/// CheckQueueSortAgreement throws ProfileSetError unless every profile enables the same QueueSort
/// plugin with the same arguments: all profiles share one scheduling queue.
void CheckQueueSortAgreement(const std::vector<config::ExpandedProfile>& profiles);

/// OpenLibraryStore returns the store that loads plugin libraries from shadow copies in
/// `<config.state_dir>/plugins` under the config's unload policy; when that directory cannot be
/// created or written it logs a warning naming it and returns nullptr (libraries then load in
/// place, and a library replaced at the same path is not reloaded until a restart).
std::shared_ptr<loader::LibraryStore> OpenLibraryStore(const config::HostConfig& config);

/// ShadowProfile is a profile with `shadow_of`: built like a live one, with its own
/// single-threaded parallelizer and metrics of its own (schedhost_shadow_*), and run only by the
/// scheduler's shadow runner. Its `libraries` load beside the set's: a plugin they export
/// replaces the set's plugin of that name in this profile only.
struct ShadowProfile {
  config::ExpandedProfile profile;
  /// registry is the shadow's own when it names libraries (theirs first, then the set's);
  /// null otherwise. Declared before the framework, which goes first.
  std::shared_ptr<loader::PluginRegistry> registry;
  std::unique_ptr<framework::Framework> framework;
};

/// ProfileSet owns the registry, the expanded profiles and one framework per profile.
class ProfileSet {
 public:
  /// Build loads the plugin libraries the config names (plugin_dirs, libraries; when plugin_dirs
  /// is left at its default, `builtin_dir` is used instead), expands and builds every profile,
  /// and checks that all profiles agree on the QueueSort plugin and its arguments.
  static std::shared_ptr<const ProfileSet> Build(const config::HostConfig& config,
                                                 const std::filesystem::path& builtin_dir);
  /// Build, with `in_process` plugin descriptors registered before the profiles are built (tests
  /// and embedders: the same C ABI path without dlopen; the descriptors must outlive the set).
  /// With a `store`, libraries load through it (a host that reloads passes the same store to
  /// every set: shadow copies, unchanged versions reused); without one, each loads in place,
  /// which suits one-shot builds (config check, simulate).
  static std::shared_ptr<const ProfileSet> Build(
      const config::HostConfig& config, const std::filesystem::path& builtin_dir,
      const std::vector<const schedhost_plugin_descriptor*>& in_process,
      std::shared_ptr<loader::LibraryStore> store = nullptr);

  /// Rebuild returns a set over this set's plugin libraries with every profile of `config`
  /// expanded and built afresh: new frameworks, so new plugin instances that share no state
  /// with this set's, and no library loaded, hashed or checked again (`config`'s plugin_dirs
  /// and libraries are not read: this set's stand). A run of many independent simulations
  /// (`schedctl simulate --batch`) pays for the loading once. Both sets hold the registry,
  /// which nothing loads into any more. Throws ProfileSetError as Build does.
  std::shared_ptr<const ProfileSet> Rebuild(const config::HostConfig& config) const;

  /// Find returns the framework of the live profile named `scheduler_name`, or nullptr.
  framework::Framework* Find(std::string_view scheduler_name) const;
  /// frameworks and profiles are the live profiles' (index-aligned); shadows are not among them.
  const std::vector<std::unique_ptr<framework::Framework>>& frameworks() const { return frameworks_; }
  const std::vector<config::ExpandedProfile>& profiles() const { return expanded_; }
  /// shadows are the shadow profiles, in file order.
  const std::vector<ShadowProfile>& shadows() const { return shadows_; }
  /// shadow_config is the config's [shadow].
  const config::ShadowConfig& shadow_config() const { return shadow_config_; }
  const loader::PluginRegistry& registry() const { return *registry_; }
  /// plugin_dirs are the directories the libraries were loaded from.
  const std::vector<std::filesystem::path>& plugin_dirs() const { return plugin_dirs_; }
  /// Describe renders profiles, points, plugins, weights and libraries for people.
  std::string Describe() const;
  /// DeclaredKinds returns the API kinds the set's plugins declare, without repeats; Build has
  /// checked that declarations of one group and resource agree.
  const std::vector<store::KindInfo>& DeclaredKinds() const { return kinds_; }

  ~ProfileSet();

 private:
  ProfileSet() = default;
  // BuildProfiles expands and builds every profile of `config` over the loaded registry_, and
  // checks what the profiles must agree on.
  void BuildProfiles(const config::HostConfig& config);
  // ShadowRegistry loads the libraries `profile` (a shadow) names into a registry of its own
  // that falls back to the set's; null when it names none.
  std::shared_ptr<loader::PluginRegistry> ShadowRegistry(const config::Profile& profile) const;

  std::shared_ptr<loader::PluginRegistry> registry_;
  std::vector<std::filesystem::path> plugin_dirs_;
  std::vector<config::ExpandedProfile> expanded_;
  std::shared_ptr<framework::Parallelizer> parallelizer_;
  std::vector<std::unique_ptr<framework::Framework>> frameworks_;
  std::vector<ShadowProfile> shadows_;
  config::ShadowConfig shadow_config_;
  std::vector<store::KindInfo> kinds_;
};

}  // namespace schedhost::scheduler
