// schedctl: the command-line tool. Offline, `config check` builds the profiles of a config
// exactly as the host would (loading the plugin libraries) and prints them, and `simulate`
// schedules a file of manifests on an embedded host and prints where every pod lands (or,
// with --compare, where each of two configs does); `snapshot` writes a live cluster as such a
// file, reading it from the Kubernetes API server. Every
// other command is a client of a running schedhostd's gRPC API (see commands.h): apply, get,
// describe, delete, watch, explain, plugins, profiles, stats and reload.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <iostream>

#include "host/api/ui_api.h"
#include "host/cli/commands.h"
#include "host/cli/snapshot.h"
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
  HostConfig cfg = config_path.empty()
                       ? schedhost::config::ParseConfig("", "(built-in defaults)", {})
                       : schedhost::config::LoadConfigFile(config_path);
  std::filesystem::path builtin = plugin_dir.empty()
                                      ? schedhost::scheduler::BuiltinPluginDir(Exe(argv0))
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

// AddScope adds kubectl's -n / -A to `cmd`.
void AddScope(CLI::App* cmd, schedhost::cli::ScopeOptions& scope) {
  cmd->add_option("-n,--namespace", scope.namespace_name, "Namespace (default: \"default\")");
  cmd->add_flag("-A,--all-namespaces", scope.all_namespaces, "Every namespace");
}

}  // namespace

int main(int argc, char** argv) {
  namespace cli = schedhost::cli;
  // Log lines (the host's warnings, plugins' messages) are diagnostics: stdout carries the
  // output alone, which callers parse (JSON, one document per line under --batch).
  spdlog::set_default_logger(spdlog::stderr_color_mt("schedctl"));
  CLI::App app{"schedctl: the schedhost command-line tool"};
  app.require_subcommand(1);
  // Global flags may also follow the subcommand (`schedctl get pods --server ...`).
  app.fallthrough();
  cli::ClientOptions client_options;
  app.add_option("--server,-s", client_options.server,
                 "schedhostd address: unix:///path or host:port (TLS) (default: $SCHEDHOST_SERVER, "
                 "else " +
                     std::string(cli::kDefaultServer) + ")");
  app.add_option(
      "--tls-ca", client_options.tls_ca,
      "PEM CA certificate that signed the server's (TCP addresses; default: system roots)");
  app.add_option("--tls-cert", client_options.tls_cert, "PEM client certificate (mutual TLS)");
  app.add_option("--tls-key", client_options.tls_key, "PEM client key (mutual TLS)");
  double request_timeout = 30;
  app.add_option("--request-timeout", request_timeout, "Seconds to wait for each reply")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
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
                       "Manifests (YAML or JSON, multi-document); repeat for several files");
  simulate->add_option("-o,--output", sim.output, "Output format: table or json")
      ->capture_default_str();
  simulate->add_flag("--explain", sim.explain,
                     "Print each pending pod's scheduling cycle (every node's Filter verdict, "
                     "scores, best nodes, PostFilter) as JSON, one cycle per pod against the "
                     "cluster plus the earlier pods that fitted; needs -o json");
  bool sim_batch = false;
  simulate->add_flag("--batch", sim_batch,
                     "With --explain -o json and no -f: read one manifest file path per line of "
                     "stdin and answer each with one line on stdout, its explain document or "
                     "{\"error\": ...}, each on a fresh host; the config and plugins are loaded "
                     "once (difftest's many scenarios)");
  simulate->add_option("--seed", sim.seed, "Seed of the random tie-break between equal nodes")
      ->capture_default_str();
  simulate->add_option("--plugin-dir", sim_plugin_dir,
                       "Builtin plugin directory to use, in place of the one beside schedctl "
                       "(to add a plugin to the builtins, name its library under [host] "
                       "libraries in the config instead)");
  simulate->add_option("--pod", sim.pod,
                       "With --explain: print only this pending pod's entry (namespace/name, or "
                       "name in default); the pods before it still get their cycles and places");
  simulate->add_option("--html", sim.html,
                       "Also write the web UI's views of the result to this file: one "
                       "self-contained HTML page that opens without a server");
  simulate->add_option("--compare", sim.compare_path,
                       "Also run the input under this config (the old one; --config is the new) "
                       "and print, for each pending pod and for a replay of each bound pod, "
                       "where each places it and, where they differ, which plugin turned it");
  std::string sim_ui_dir;
  simulate->add_option("--ui-dir", sim_ui_dir,
                       "The web UI's built pages --html uses (default: beside the binary, else "
                       "/usr/share/schedhost/ui)");
  auto* snapshot = app.add_subcommand(
      "snapshot",
      "Write a Kubernetes cluster's nodes, pods and the other objects scheduling reads as one "
      "manifest for simulate (secrets and fields no scheduler reads left out)");
  cli::SnapshotOptions snap;
  std::string snap_plugin_dir;
  snapshot->add_option("--kubeconfig", snap.kubeconfig,
                       "Kubeconfig file(s), colon-separated (default: $KUBECONFIG, else "
                       "~/.kube/config)");
  snapshot->add_option("--context", snap.context, "Kubeconfig context (default: the current one)");
  snapshot->add_option("-o,--output", snap.output, "The manifest file to write")->required();
  snapshot->add_option("--config,-c", snap.config_path,
                       "Config whose plugins say which further kinds to read (default: built-in "
                       "defaults)");
  snapshot->add_option("--plugin-dir", snap_plugin_dir, "Builtin plugin directory to use");
  // --- Commands served by schedhostd ---
  std::function<int(cli::Client&)> run;
  auto* apply = app.add_subcommand("apply", "Create or update objects from manifest files");
  std::vector<std::string> apply_files;
  apply
      ->add_option("-f,--filename", apply_files,
                   "Manifests (YAML or JSON, multi-document; - for stdin); repeatable")
      ->required();
  apply->callback([&] {
    run = [&](cli::Client& c) {
      return cli::RunApply(c, apply_files, std::cin, std::cout, std::cerr);
    };
  });

  cli::GetOptions get_options;
  auto* get = app.add_subcommand("get", "List objects of one kind, or show one");
  get->add_option("kind", get_options.resource, "nodes, pods, pdbs, priorityclasses or namespaces")
      ->required();
  get->add_option("name", get_options.name, "One object by name");
  AddScope(get, get_options.scope);
  get->add_option("-o,--output", get_options.output, "wide, json, yaml or name");
  get->add_option("-l,--selector", get_options.selector,
                  "Label selector: key=value, key!=value, key in (a,b), key notin (a), key, !key");
  get->callback([&] {
    run = [&](cli::Client& c) { return cli::RunGet(c, get_options, std::cout, std::cerr); };
  });

  // describe, delete and explain take KIND NAME.
  std::string kind_arg;
  std::string name_arg;
  cli::ScopeOptions scope;
  auto kind_and_name = [&](CLI::App* cmd, const char* kinds) {
    cmd->add_option("kind", kind_arg, kinds)->required();
    cmd->add_option("name", name_arg, "The object's name")->required();
    AddScope(cmd, scope);
  };
  auto* describe = app.add_subcommand("describe", "Show a pod and its last scheduling attempt");
  kind_and_name(describe, "pod");
  describe->callback([&] {
    run = [&](cli::Client& c) {
      return cli::RunDescribe(c, kind_arg, name_arg, scope, std::cout, std::cerr);
    };
  });
  auto* del = app.add_subcommand("delete", "Delete one object");
  kind_and_name(del, "pod, node, pdb, priorityclass or namespace");
  del->callback([&] {
    run = [&](cli::Client& c) {
      return cli::RunDelete(c, kind_arg, name_arg, scope, std::cout, std::cerr);
    };
  });
  auto* explain = app.add_subcommand(
      "explain", "Show a pod's last scheduling attempt: each plugin's verdict and score per node");
  kind_and_name(explain, "pod");
  explain->callback([&] {
    run = [&](cli::Client& c) {
      return cli::RunExplain(c, kind_arg, name_arg, scope, std::cout, std::cerr);
    };
  });

  cli::WatchOptions watch_options;
  auto* watch = app.add_subcommand("watch", "Print every change to objects of one kind");
  watch->add_option("kind", watch_options.resource, "pods (default), nodes, pdbs, ...")
      ->capture_default_str();
  AddScope(watch, watch_options.scope);
  watch->add_option("--resource-version", watch_options.resource_version,
                    "Changes after this version (default 0: current state first)");
  watch->add_option("--timeout", watch_options.timeout_seconds,
                    "Stop after this many seconds (exit 0)");
  watch->add_option("--count", watch_options.count, "Stop after this many events (exit 0)");
  watch->callback([&] {
    run = [&](cli::Client& c) { return cli::RunWatch(c, watch_options, std::cout, std::cerr); };
  });

  auto admin = [&](const char* name, const char* help,
                   int (*fn)(cli::Client&, std::ostream&, std::ostream&)) {
    app.add_subcommand(name, help)->callback([&run, fn] {
      run = [fn](cli::Client& c) { return fn(c, std::cout, std::cerr); };
    });
  };
  admin("plugins", "List the loaded plugin libraries with versions and hashes", cli::RunPlugins);
  admin("profiles", "List the profiles and their plugins per extension point", cli::RunProfiles);
  admin("stats", "Show queue sizes, attempts and throughput", cli::RunStats);
  admin("reload", "Re-read the config file and swap in its profiles", cli::RunReload);

  cli::ShadowOptions shadow_options;
  auto* shadow = app.add_subcommand(
      "shadow", "Shadow profiles: compare a candidate profile with the live one on live traffic");
  shadow->require_subcommand(1);
  auto shadow_action = [&](const char* name, const char* help, bool needs_name) {
    auto* cmd = shadow->add_subcommand(name, help);
    auto* opt = cmd->add_option("name", shadow_options.profile,
                                needs_name ? "The shadow profile" : "One shadow profile (default: all)");
    if (needs_name) opt->required();
    if (std::string(name) == "status") {
      cmd->add_option("-o,--output", shadow_options.output, "json");
    }
    cmd->callback([&run, &shadow_options, name] {
      shadow_options.action = name;
      run = [&shadow_options](cli::Client& c) {
        return cli::RunShadow(c, shadow_options, std::cout, std::cerr);
      };
    });
  };
  shadow_action("status", "Agreement with the live profile; with a name, the disagreements "
                "and plugin latency", false);
  shadow_action("start", "Resume a stopped shadow (or retry a failed one)", false);
  shadow_action("stop", "Pause a shadow: it compares nothing until started", false);
  shadow_action("promote", "Make the shadow the live profile: rewrite the config file and "
                "reload", true);

  CLI11_PARSE(app, argc, argv);
  if (run) {
    client_options.request_timeout =
        std::chrono::milliseconds(static_cast<int64_t>(request_timeout * 1000));
    cli::Client client(client_options);
    try {
      return run(client);
    } catch (const std::exception& e) {
      std::cerr << "error: " << e.what() << "\n";
      return 1;
    }
  }
  if (simulate->parsed()) {
    sim.plugin_dir = sim_plugin_dir.empty() ? schedhost::scheduler::BuiltinPluginDir(Exe(argv[0]))
                                            : std::filesystem::path(sim_plugin_dir);
    if (!sim_plugin_dir.empty()) {
      sim.replaced_plugin_dir = schedhost::scheduler::BuiltinPluginDir(Exe(argv[0]));
    }
    sim.ui_dir = sim_ui_dir.empty() ? schedhost::api::UiPagesDir(Exe(argv[0]))
                                    : std::filesystem::path(sim_ui_dir);
    if (sim_batch) return schedhost::cli::RunSimulateBatch(sim, std::cin, std::cout, std::cerr);
    return schedhost::cli::RunSimulate(sim, std::cout, std::cerr);
  }
  if (snapshot->parsed()) {
    snap.plugin_dir = snap_plugin_dir.empty()
                          ? schedhost::scheduler::BuiltinPluginDir(Exe(argv[0]))
                          : std::filesystem::path(snap_plugin_dir);
    return cli::RunSnapshot(snap, std::cout, std::cerr);
  }
  try {
    if (check->parsed()) return ConfigCheck(config_path, plugin_dir, argv[0]);
  } catch (const std::exception& e) {
    std::cerr << "schedctl: " << e.what()
              << (plugin_dir.empty()
                      ? std::string()
                      : cli::PluginDirReplacedNote(
                            plugin_dir, schedhost::scheduler::BuiltinPluginDir(Exe(argv[0])),
                            e.what()))
              << "\n";
    return 1;
  }
  return 0;
}
