// schedctl: the command-line tool. This build offers `config check`, which builds the profiles
// of a config exactly as the host would (loading the plugin libraries) and prints them, and
// `simulate`, which schedules a file of manifests on an embedded host and prints where every
// pod lands.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>

#include "host/cli/simulate.h"
#include "host/config/host_config.h"
#include "host/scheduler/profile_set.h"

namespace {

// Exe is this binary's path: /proc/self/exe, so a schedctl found through PATH still finds the
// plugins beside it; argv[0] when /proc is not there.
std::filesystem::path Exe(const char* argv0) {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path(argv0) : self;
}

int ConfigCheck(const std::string& config_path, const std::string& plugin_dir, const char* argv0) {
  using schedhost::config::HostConfig;
  HostConfig cfg = config_path.empty() ? schedhost::config::ParseConfig("", "(built-in defaults)", {})
                                       : schedhost::config::LoadConfigFile(config_path);
  std::filesystem::path builtin =
      plugin_dir.empty() ? schedhost::scheduler::BuiltinPluginDir(Exe(argv0))
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

  auto* simulate = app.add_subcommand(
      "simulate",
      "Schedule the pods of manifest files on an embedded host (virtual clock, deterministic) "
      "and print where each one lands");
  schedhost::cli::SimulateOptions sim;
  std::string sim_plugin_dir;
  simulate->add_option("--config,-c", sim.config_path, "Config file (default: built-in defaults)");
  simulate->add_option("-f,--filename", sim.manifest_paths,
                       "Manifests (YAML or JSON, multi-document); repeat for several files")
      ->required();
  simulate->add_option("-o,--output", sim.output, "Output format: table or json")
      ->capture_default_str();
  simulate->add_option("--seed", sim.seed, "Seed of the random tie-break between equal nodes")
      ->capture_default_str();
  simulate->add_option("--plugin-dir", sim_plugin_dir, "Builtin plugin directory to use");
  CLI11_PARSE(app, argc, argv);
  if (simulate->parsed()) {
    sim.plugin_dir = sim_plugin_dir.empty()
                         ? schedhost::scheduler::BuiltinPluginDir(Exe(argv[0]))
                         : std::filesystem::path(sim_plugin_dir);
    return schedhost::cli::RunSimulate(sim, std::cout, std::cerr);
  }
  try {
    if (check->parsed()) return ConfigCheck(config_path, plugin_dir, argv[0]);
  } catch (const std::exception& e) {
    std::cerr << "schedctl: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
