// schedctl: the command-line tool. This build offers `config check`, which builds the profiles
// of a config exactly as the host would (loading the plugin libraries) and prints them.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>

#include "host/config/host_config.h"
#include "host/scheduler/profile_set.h"

namespace {

int ConfigCheck(const std::string& config_path, const std::string& plugin_dir, const char* argv0) {
  using schedhost::config::HostConfig;
  HostConfig cfg = config_path.empty() ? schedhost::config::ParseConfig("", "(built-in defaults)", {})
                                       : schedhost::config::LoadConfigFile(config_path);
  std::filesystem::path builtin =
      plugin_dir.empty() ? schedhost::scheduler::BuiltinPluginDir(std::filesystem::path(argv0))
                         : std::filesystem::path(plugin_dir);
  if (!plugin_dir.empty()) cfg.plugin_dirs = {builtin};
  auto set = schedhost::scheduler::ProfileSet::Build(cfg, builtin);
  std::cout << "Config " << cfg.source << ": OK (" << set->profiles().size() << " profile"
            << (set->profiles().size() == 1 ? "" : "s") << ")\n";
  std::cout << "Plugin directories:";
  for (const auto& d : set->plugin_dirs()) std::cout << " " << d.string();
  std::cout << "\n\n" << set->Describe();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"schedctl: the schedhost command-line tool"};
  app.require_subcommand(1);
  auto* config = app.add_subcommand("config", "Work with schedhost config files");
  config->require_subcommand(1);
  auto* check = config->add_subcommand(
      "check", "Validate a config: load its plugins, build every profile, print the result");
  std::string config_path;
  std::string plugin_dir;
  check->add_option("--config,-c", config_path, "Config file (default: built-in defaults)");
  check->add_option("--plugin-dir", plugin_dir, "Load plugins from this directory instead");
  CLI11_PARSE(app, argc, argv);
  try {
    if (check->parsed()) return ConfigCheck(config_path, plugin_dir, argv[0]);
  } catch (const std::exception& e) {
    std::cerr << "schedctl: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
