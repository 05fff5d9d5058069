// ServiceHost: a whole schedhost service in one object — the store, the profiles built from a
// config, the scheduler running on a real clock, and the gRPC server (Cluster, Admin, health,
// reflection) on the configured listener. schedhostd's main only parses flags, builds one and
// waits for a signal; tests build one on a temporary socket.
//
// It also serves Prometheus metrics, /healthz and /readyz over HTTP on config.metrics_listen
// (see http_server.h); /readyz says 200 once the scheduler runs and gRPC serves. With
// config.ui_listen it serves the web UI's JSON API there too (ui_api.h).
//
//   ServiceHost host(config::LoadConfigFile(path), scheduler::BuiltinPluginDir(argv[0]), path);
//   host.Start();          // throws ServiceHostError saying why it cannot serve
//   ...                    // SIGTERM
//   host.Stop();           // stop accepting, end watches, finish or requeue in-flight cycles
#pragma once

#include <schedhost/plugin.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/config/host_config.h"
#include "host/metrics/metrics.h"
#include "host/store/cluster_writer.h"
#include "host/store/store.h"
#include "host/store/volume_controller.h"

namespace grpc {
class Server;
}

namespace schedhost::loader {
class LibraryStore;
}  // namespace schedhost::loader
namespace schedhost::scheduler {
class Scheduler;
class ProfileSet;
}  // namespace schedhost::scheduler

namespace schedhost::api {

class ClusterService;
class AdminService;
class HttpServer;
class ConfigWatcher;
class ControlThread;

// ServiceHostError is a reason the host cannot start (listener, TLS files, plugins).
class ServiceHostError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// UnixSocketPath returns the path of a "unix:///path" listen address, or "" for TCP.
std::filesystem::path UnixSocketPath(const std::string& listen);

// ReloadResult is the outcome of ServiceHost::Reload: whether the config file was accepted, and
// the message Admin.Reload would answer (what was read, or the error with file:line:col).
struct ReloadResult {
  bool ok = false;
  std::string message;
};

// ServiceHost owns one running schedhost service.
class ServiceHost {
 public:
  // ServiceHost keeps `config`; plugins come from `builtin_dir` when the config leaves
  // plugin_dirs at its default (see ProfileSet::Build). `config_file` is the file `config` was
  // read from, which Admin.Reload re-reads (empty: none, and Reload has nothing to re-read).
  ServiceHost(config::HostConfig config, std::filesystem::path builtin_dir,
              std::filesystem::path config_file = {});
  // ~ServiceHost stops the host (see Stop).
  ~ServiceHost();
  ServiceHost(const ServiceHost&) = delete;
  ServiceHost& operator=(const ServiceHost&) = delete;

  // RegisterInProcess adds a plugin descriptor to the registry Start builds the profiles from
  // (tests and embedders: the C ABI path without dlopen; the descriptor must outlive the host).
  // Call before Start.
  void RegisterInProcess(const schedhost_plugin_descriptor* descriptor) {
    in_process_.push_back(descriptor);
  }

  // SetClusterSource makes the store a mirror of `source` (Kubernetes mode): Start starts it,
  // waits until it has synced (or gives up with the source's reason) before scheduling, hands the
  // scheduler its writer and refuses the Cluster API's writes; /readyz follows its health. Call
  // before Start.
  void SetClusterSource(std::unique_ptr<store::ClusterSource> source) {
    source_ = std::move(source);
  }

  // SetUiPages sets the directory of the web UI's built pages, served on `[ui] listen` beside
  // its JSON API (UiPagesDir finds a binary's). Unset, `/` answers that there are none. Call
  // before Start.
  void SetUiPages(std::filesystem::path dir) { ui_pages_ = std::move(dir); }

  // OnLostLeadership sets what runs when this replica loses its lease (Kubernetes mode with
  // leader election): by then it writes nothing more, and kube-scheduler exits; schedhostd does
  // too (status 1). Runs on the elector's thread. Call before Start.
  void OnLostLeadership(std::function<void()> handler) { on_lost_ = std::move(handler); }

  // Start builds the profiles, listens on config.metrics_listen (HTTP), config.ui_listen (when
  // set: HTTP on loopback, else HTTPS with [api.tls]) and config.api_listen (a Unix socket is
  // created with mode 0600, its parent directory made when missing, a stale socket file
  // replaced; TCP only with [api.tls]) and starts the scheduling loop. Throws ServiceHostError, ProfileSetError.
  void Start();
  // Stop turns /readyz to 503 and stops the metrics endpoint, stops accepting calls, ends open
  // watches with UNAVAILABLE, waits briefly for calls in progress, then stops the scheduler
  // (binding cycles finish, pods at Permit are requeued) and removes the socket file. Idempotent.
  void Stop();

  // Reload does what Admin.Reload does, for schedhostd's SIGHUP: re-reads the config file,
  // builds and validates its profiles off the scheduling loop and swaps them in; a refused
  // config changes nothing. Not ok before Start, or when the host has no config file.
  ReloadResult Reload();

  // leadership says whether this replica leads (Kubernetes mode with leader election).
  store::Leadership leadership() const {
    return source_ != nullptr ? source_->leadership() : store::Leadership{};
  }

  // store returns the cluster state.
  store::Store& store() { return store_; }
  // scheduler returns the scheduler (null before Start).
  scheduler::Scheduler* scheduler() { return scheduler_.get(); }
  // listen returns the address being served.
  const std::string& listen() const { return config_.api_listen; }
  // metrics_port returns the port the metrics endpoint is bound to (the chosen one when the
  // config says port 0; 0 before Start).
  uint16_t metrics_port() const;
  // ui_port returns the port the web UI's endpoint is bound to (0 without `[ui] listen`).
  uint16_t ui_port() const;

 private:
  // StartMetrics starts the metrics endpoint (throws ServiceHostError when it cannot listen).
  void StartMetrics();
  // RegisterGauges registers the scrape-time gauges over the scheduler.
  void RegisterGauges();
  // Ready is /readyz: serving with a synced mirror; *body says why not, or whether this
  // replica leads.
  bool Ready(std::string* body) const;

  config::HostConfig config_;
  std::filesystem::path builtin_dir_;
  std::vector<const schedhost_plugin_descriptor*> in_process_;
  // Plugin lifecycle (building sets, destroying replaced ones) runs here (docs/abi.md rule 9).
  // Declared before everything that holds a set, so it ends after they have let go of them.
  std::shared_ptr<ControlThread> control_;
  std::shared_ptr<loader::LibraryStore> library_store_;  // null: libraries load in place
  std::filesystem::path config_file_;
  store::Store store_;
  std::unique_ptr<store::ClusterSource> source_;  // null: the store is the cluster
  // The PV controller and provisioner of an embedded cluster (not in Kubernetes mode, where
  // the cluster's kube-controller-manager binds volumes).
  std::unique_ptr<store::VolumeController> volumes_;
  std::unique_ptr<scheduler::Scheduler> scheduler_;
  std::unique_ptr<ClusterService> cluster_;
  std::unique_ptr<AdminService> admin_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<HttpServer> metrics_server_;
  std::unique_ptr<HttpServer> ui_server_;  // [ui] listen
  std::filesystem::path ui_pages_;          // SetUiPages
  std::unique_ptr<ConfigWatcher> watcher_;  // [host] watch_config
  metrics::Registry::Registration pending_pods_gauge_;
  metrics::Registry::Registration libraries_gauge_;
  metrics::Registry::Registration leader_gauge_;
  std::function<void()> on_lost_;
  std::atomic<bool> ready_{false};
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace schedhost::api
