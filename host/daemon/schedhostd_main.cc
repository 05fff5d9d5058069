// schedhostd [--config FILE] [--log-level LEVEL]: the schedhost daemon. Loads the config (a
// config without profiles gets the default profile; without plugin_dirs, the builtin plugins
// beside the binary or installed), serves the API and schedules until SIGTERM or SIGINT, then
// stops cleanly and exits 0. In Kubernetes mode a replica that loses its leader lease stops and
// exits 1, as kube-scheduler does. SIGHUP (`systemctl reload schedhost`) does what Admin.Reload
// does: re-reads the config file, builds its profiles and swaps them in between two cycles, or
// keeps the running ones and logs why the file was refused.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "host/api/service_host.h"
#include "host/api/ui_api.h"
#include "host/config/host_config.h"
#include "host/kube/kube_mode.h"
#include "host/scheduler/profile_set.h"

namespace {

std::filesystem::path Exe(const char* argv0) {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path(argv0) : self;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"schedhostd: the schedhost scheduling daemon"};
  std::string config_path;
  std::string log_level;  // "" : [log] level from the config
  std::string plugin_dir;
  app.add_option("--config", config_path, "Config file (TOML); built-in defaults when omitted");
  app.add_option("--log-level", log_level,
                 "trace, debug, info, warn, error, critical or off (overrides [log] level)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.add_option("--plugin-dir", plugin_dir, "Builtin plugin directory to use");
  CLI11_PARSE(app, argc, argv);
  if (!log_level.empty()) spdlog::set_level(spdlog::level::from_str(log_level));

  // Under systemd the journal stamps time and unit itself: log the level and message only.
  if (std::getenv("JOURNAL_STREAM") != nullptr) spdlog::set_pattern("[%l] %v");

  // Block the handled signals before any thread exists, so every thread inherits the mask and
  // only sigwait below sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  // SIGUSR2 is how the elector's thread tells this one the lease was lost.
  sigaddset(&signals, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  try {
    schedhost::config::HostConfig config =
        config_path.empty() ? schedhost::config::ParseConfig("", "(built-in defaults)", {})
                            : schedhost::config::LoadConfigFile(config_path);
    if (log_level.empty()) spdlog::set_level(spdlog::level::from_str(config.log_level));
    std::filesystem::path builtin = plugin_dir.empty()
                                        ? schedhost::scheduler::BuiltinPluginDir(Exe(argv[0]))
                                        : std::filesystem::path(plugin_dir);
    // [kubernetes]: the API server is the source of truth and the store its mirror.
    std::unique_ptr<schedhost::kube::KubeMode> kube;
    if (config.kubernetes) kube = std::make_unique<schedhost::kube::KubeMode>(*config.kubernetes);
    schedhost::api::ServiceHost host(std::move(config), builtin, config_path);
    if (kube) host.SetClusterSource(std::move(kube));
    host.SetUiPages(schedhost::api::UiPagesDir(Exe(argv[0])));
    host.OnLostLeadership([] { ::kill(::getpid(), SIGUSR2); });
    host.Start();
    int signal = 0;
    while (sigwait(&signals, &signal) == 0 && signal == SIGHUP) {
      const schedhost::api::ReloadResult reload = host.Reload();
      if (reload.ok) {
        spdlog::info("SIGHUP: {}", reload.message);
      } else {
        spdlog::error("SIGHUP: {}", reload.message);
      }
    }
    if (signal == SIGUSR2) {
      // As kube-scheduler: a replica that lost its lease exits, and its supervisor (systemd,
      // the Deployment) starts it again as a standby. Nothing has been written since the loss.
      spdlog::error("leader election lost, exiting");
      host.Stop();
      return 1;
    }
    spdlog::info("received {}, shutting down", signal == SIGTERM ? "SIGTERM" : "SIGINT");
    host.Stop();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "schedhostd: " << e.what() << "\n";
    return 1;
  }
}
