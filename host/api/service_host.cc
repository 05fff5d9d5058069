// ServiceHost: wiring the store, the scheduler and the gRPC server, and the listener rules
// (Unix socket mode 0600, TCP only over TLS).
#include "host/api/service_host.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>

#include "host/api/admin_service.h"
#include "host/api/cluster_service.h"
#include "host/api/config_watcher.h"
#include "host/api/control_thread.h"
#include "host/api/http_server.h"
#include "host/api/ui_api.h"
#include "host/metrics/scheduler_metrics.h"
#include "host/scheduler/profile_set.h"
#include "host/scheduler/scheduler.h"

namespace schedhost::api {

namespace {

// How long Stop lets calls in progress finish before cancelling them.
constexpr auto kShutdownGrace = std::chrono::seconds(2);
// kWatchDebounce is how long the config file must stay unchanged before watch_config reloads:
// long enough to take an editor's save or a `cp` as one change, short for a person waiting.
constexpr auto kWatchDebounce = std::chrono::milliseconds(500);

std::string ReadPem(const std::filesystem::path& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ServiceHostError(std::string("api.tls.") + what + ": cannot read " + path.string() +
                           ": " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::shared_ptr<grpc::ServerCredentials> Credentials(const config::HostConfig& config) {
  if (config::IsUnixListen(config.api_listen)) return grpc::InsecureServerCredentials();
  if (!config.api_tls) {
    throw ServiceHostError("api.listen \"" + config.api_listen +
                           "\" is a TCP address, which schedhost serves only over TLS: add "
                           "[api.tls] with cert and key, or listen on a Unix socket");
  }
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back(
      {ReadPem(config.api_tls->key, "key"), ReadPem(config.api_tls->cert, "cert")});
  if (config.api_tls->client_ca) {
    options.pem_root_certs = ReadPem(*config.api_tls->client_ca, "client_ca");
    options.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(options);
}

// UiTls is the web UI's TLS: none on a loopback address, else the API's certificate and key
// (and client_ca, for mutual TLS as on the API).
std::optional<HttpTls> UiTls(const config::HostConfig& config) {
  if (config.ui_listen.empty() || config::IsLoopbackListen(config.ui_listen)) return std::nullopt;
  if (!config.api_tls) {
    throw ServiceHostError("ui.listen \"" + config.ui_listen +
                           "\" is not a loopback address, which the web UI serves only over TLS "
                           "with the API's certificate: add [api.tls] with cert and key");
  }
  return HttpTls{.cert = config.api_tls->cert,
                 .key = config.api_tls->key,
                 .client_ca = config.api_tls->client_ca,
                 .setting = "api.tls"};
}

// SomeoneListens tells whether a process accepts connections on the socket at `path`.
bool SomeoneListens(const std::filesystem::path& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string p = path.string();
  if (p.size() >= sizeof(addr.sun_path)) return false;
  std::memcpy(addr.sun_path, p.c_str(), p.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

// PrepareSocket makes the parent directory and clears a stale socket file left by a crash.
void PrepareSocket(const std::filesystem::path& path) {
  const std::string where = "api.listen \"unix://" + path.string() + "\": ";
  if (path.string().size() >= sizeof(sockaddr_un{}.sun_path)) {
    throw ServiceHostError(where + "the path is longer than a Unix socket path may be (" +
                           std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) + " bytes)");
  }
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) {
    throw ServiceHostError(where + "cannot create " + path.parent_path().string() + ": " +
                           ec.message());
  }
  std::filesystem::file_status st = std::filesystem::symlink_status(path, ec);
  if (ec || !std::filesystem::exists(st)) return;
  if (!std::filesystem::is_socket(st)) {
    throw ServiceHostError(where + "exists and is not a socket; refusing to replace it");
  }
  if (SomeoneListens(path)) {
    throw ServiceHostError(where + "another process is serving on it (another schedhostd?)");
  }
  std::filesystem::remove(path, ec);
}

}  // namespace

std::filesystem::path UnixSocketPath(const std::string& listen) {
  if (!config::IsUnixListen(listen)) return {};
  return std::filesystem::path(listen.substr(std::string_view("unix://").size()));
}

ServiceHost::ServiceHost(config::HostConfig config, std::filesystem::path builtin_dir,
                         std::filesystem::path config_file)
    : config_(std::move(config)),
      builtin_dir_(std::move(builtin_dir)),
      config_file_(std::move(config_file)) {}

ServiceHost::~ServiceHost() { Stop(); }

ReloadResult ServiceHost::Reload() {
  if (admin_ == nullptr) return {false, "the host is not running, so there is nothing to reload"};
  v1::ReloadRequest request;
  v1::ReloadResponse response;
  const grpc::Status status = admin_->Reload(nullptr, &request, &response);
  if (!status.ok()) return {false, status.error_message()};
  return {response.ok(), response.message()};
}

uint16_t ServiceHost::metrics_port() const { return metrics_server_ ? metrics_server_->port() : 0; }

uint16_t ServiceHost::ui_port() const { return ui_server_ ? ui_server_->port() : 0; }

void ServiceHost::StartMetrics() {
  metrics_server_ = std::make_unique<HttpServer>(
      "metrics", config_.metrics_listen,
      MetricsRoute({.metrics = [] { return metrics::DefaultRegistry().Render(); },
                    .ready = [this](std::string* body) { return Ready(body); }}));
  try {
    metrics_server_->Start();
  } catch (const std::runtime_error& e) {
    metrics_server_.reset();
    throw ServiceHostError(e.what());
  }
}

bool ServiceHost::Ready(std::string* body) const {
  if (!ready_.load()) {
    *body = "not ready: starting or stopping";
    return false;
  }
  if (source_ == nullptr) return true;
  std::string why;
  if (!source_->Healthy(&why)) {
    *body = "not ready: " + why;
    return false;
  }
  // Ready, but saying what it cannot see: pods that need it wait with a message, others go on.
  const std::string degraded = source_->Degraded();
  const store::Leadership l = source_->leadership();
  if (!l.enabled) {
    if (!degraded.empty()) *body = "ok, degraded: " + degraded;
    return true;
  }
  // A standby is ready: its mirror is warm and it takes over at once (as kube-scheduler's).
  *body = l.leading ? "ok: leading (lease " + l.lease + ", identity " + l.identity + ")"
                    : "ok: standby (lease " + l.lease + " held by " +
                          (l.holder.empty() ? std::string("nobody") : l.holder) + ", identity " +
                          l.identity + ")";
  if (!degraded.empty()) *body += "; degraded: " + degraded;
  return true;
}

void ServiceHost::RegisterGauges() {
  // Computed at scrape time from the queue and the live profiles, as upstream's gauges are kept
  // current by the queue; the registrations go before the scheduler does (Stop).
  metrics::Registry& registry = metrics::DefaultRegistry();
  scheduler::Scheduler* s = scheduler_.get();
  pending_pods_gauge_ = registry.AddGaugeCallback(
      "scheduler_pending_pods",
      "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; "
      "'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in "
      "unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the "
      "number of unschedulable pods that the scheduler never attempted to schedule because they "
      "are gated.",
      {"queue"}, [s] {
        const queue::QueueCounts c = s->queue().Counts();
        return std::vector<metrics::GaugeSample>{
            {{"active"}, static_cast<double>(c.active)},
            {{"backoff"}, static_cast<double>(c.backoff)},
            {{"unschedulable"}, static_cast<double>(c.unschedulable)},
            {{"gated"}, static_cast<double>(c.gated)}};
      });
  libraries_gauge_ = registry.AddGaugeCallback(
      "schedhost_plugin_libraries_loaded",
      "Number of plugin libraries the live profiles were built from.", {}, [s] {
        const auto libraries = s->profiles()->set().registry().Libraries().size();
        return std::vector<metrics::GaugeSample>{{{}, static_cast<double>(libraries)}};
      });
  if (source_ != nullptr && source_->leadership().enabled) {
    const store::ClusterSource* source = source_.get();
    // upstream's name and label (client-go's leader election metrics)
    leader_gauge_ = registry.AddGaugeCallback(
        "leader_election_master_status",
        "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 "
        "indicates master. 'name' is the string used to identify the lease. Please make sure to "
        "group by name.",
        {"name"}, [source] {
          const store::Leadership l = source->leadership();
          const std::string name = l.lease.substr(l.lease.find('/') + 1);
          return std::vector<metrics::GaugeSample>{{{name}, l.leading ? 1.0 : 0.0}};
        });
  }
}

void ServiceHost::Start() {
  if (started_) return;
  if (config_.watch_config && !config_file_.empty()) {
    // First, so a directory inotify cannot watch refuses the start before anything listens.
    // Changes before the host is ready are ignored: Start serves the file it was given.
    try {
      watcher_ = std::make_unique<ConfigWatcher>(config_file_, kWatchDebounce, [this] {
        if (ready_.load()) Reload();  // AdminService logs, counts and records the outcome
      });
    } catch (const std::system_error& e) {
      throw ServiceHostError(std::string("host.watch_config: ") + e.what());
    }
  }
  std::shared_ptr<grpc::ServerCredentials> credentials = Credentials(config_);
  std::optional<HttpTls> ui_tls = UiTls(config_);
  // Not kept here: the scheduler owns the live set, so a replaced one drains and goes away.
  // One store for the life of the host: every set a reload builds shares its versions.
  if (!library_store_) library_store_ = scheduler::OpenLibraryStore(config_);
  if (!control_) control_ = ControlThread::Create();
  // Every set is built on the control thread and, when the last cycle holding it lets go,
  // destroyed there too: plugin create and destroy callbacks run on one thread, in order.
  auto build = [control = control_, builtin_dir = builtin_dir_, in_process = in_process_,
                store = library_store_](const config::HostConfig& config) {
    return control->Run([&] {
      return control->Adopt(scheduler::ProfileSet::Build(config, builtin_dir, in_process, store));
    });
  };
  std::shared_ptr<const scheduler::ProfileSet> profiles = build(config_);
  if (library_store_) library_store_->MarkLive(profiles->registry().Libraries(), 1);
  const size_t profile_count = profiles->profiles().size();
  const std::filesystem::path socket = UnixSocketPath(config_.api_listen);
  if (!socket.empty()) PrepareSocket(socket);
  StartMetrics();

  scheduler::SchedulerOptions options;
  options.pod_initial_backoff = config_.pod_initial_backoff;
  options.pod_max_backoff = config_.pod_max_backoff;
  if (source_ != nullptr) {
    // The mirror is filled before the scheduler is wired, so the cache and the queue start
    // from the whole cluster (as kube-scheduler waits for its informers to sync). A standby
    // that delays its mirror until elected starts empty and fills it then.
    // The kinds the plugins declare are mirrored with the rest (the scheduler declares them
    // again, which changes nothing).
    try {
      store_.objects().Declare(profiles->DeclaredKinds());
    } catch (const store::StoreError& e) {
      metrics_server_.reset();
      throw ServiceHostError(e.what());
    }
    if (!source_->DelaysMirrorUntilElected()) {
      source_->Start(store_);
      std::string why;
      if (!source_->WaitForSync(&why)) {
        source_->Stop();
        metrics_server_.reset();
        throw ServiceHostError("cannot mirror " + source_->description() + ": " + why);
      }
    }
    options.writer = source_->writer();
    // A binding waits for the API server's answer: more of them in flight keep the loop fed.
    options.binding_threads = 16;
  } else {
    // The embedded cluster's PV controller: claims bind as they would in a cluster.
    volumes_ = std::make_unique<store::VolumeController>(store_.objects(),
                                                         store::NodeHostnames(store_));
  }
  // The scheduler asks every plugin for its events as it wires the set: a lifecycle call too.
  scheduler_ = control_->Run(
      [&] { return std::make_unique<scheduler::Scheduler>(store_, std::move(profiles), options); });
  cluster_ = std::make_unique<ClusterService>(store_);
  if (source_ != nullptr) {
    cluster_->SetReadOnly("the cluster is managed by " + source_->description() +
                          ": change it there (kubectl), not through schedhost");
  }
  admin_ = std::make_unique<AdminService>(
      store_, *scheduler_,
      AdminOptions{
          .config_file = config_file_,
          .builtin_dir = builtin_dir_,
          .in_process = in_process_,
          .library_store = library_store_,
          .running = config_,
          .build = build,
          .lifecycle = [control = control_](const auto& fn) { control->Run([&] { fn(); }); },
          .leadership = [this] { return leadership(); }});

  if (!config_.ui_listen.empty()) {
    ui_server_ = std::make_unique<HttpServer>(
        "ui", config_.ui_listen, UiRoute(*admin_, store_, *scheduler_, ui_pages_), ui_tls);
    try {
      ui_server_->Start();
    } catch (const std::runtime_error& e) {
      ui_server_.reset();
      metrics_server_.reset();
      scheduler_.reset();
      throw ServiceHostError(e.what());
    }
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(config_.api_listen, credentials);
  builder.RegisterService(cluster_.get());
  builder.RegisterService(admin_.get());
  // The socket is born 0600 (no window where others could connect), then chmod makes sure.
  const mode_t old_umask = socket.empty() ? 0 : ::umask(0177);
  server_ = builder.BuildAndStart();
  if (!socket.empty()) ::umask(old_umask);
  if (!server_) {
    ui_server_.reset();
    metrics_server_.reset();
    scheduler_.reset();
    throw ServiceHostError("cannot listen on api.listen \"" + config_.api_listen +
                           "\" (see the gRPC log above for why)");
  }
  if (!socket.empty() && ::chmod(socket.c_str(), 0600) != 0) {
    spdlog::warn("chmod 0600 {}: {}", socket.string(), std::strerror(errno));
  }
  server_->GetHealthCheckService()->SetServingStatus(true);
  RegisterGauges();
  started_ = true;
  ready_.store(true);
  if (source_ == nullptr) {
    scheduler_->Start();
  } else {
    // Only the leader's loop pops pods; a standby keeps its mirror, cache and queue current.
    source_->Campaign(
        [this] {
          if (source_->DelaysMirrorUntilElected()) {
            source_->Start(store_);
            std::string why;
            if (!source_->WaitForSync(&why)) {
              // A leader that cannot see the cluster cannot schedule it: give the lease up
              // the way a lost one is (the process exits; its supervisor starts it again).
              spdlog::error("kubernetes: elected, but cannot mirror {}: {}",
                            source_->description(), why);
              if (on_lost_) on_lost_();
              return;
            }
          }
          try {
            scheduler_->Start();
          } catch (const scheduler::SchedulerError&) {
            // elected while stopping: nothing to schedule any more
          }
        },
        [this] {
          if (on_lost_) on_lost_();
        });
  }
  spdlog::info("schedhost serving on {} with {} profile(s); metrics on {} (port {})",
               config_.api_listen, profile_count, config_.metrics_listen, metrics_port());
  if (ui_server_) {
    spdlog::info("web UI on {}://{}/ (port {}{}), pages from {}",
                 ui_server_->tls() ? "https" : "http", config_.ui_listen, ui_port(),
                 ui_tls && ui_tls->client_ca ? ", client certificates required" : "",
                 ui_pages_.empty() ? std::string("nowhere") : ui_pages_.string());
  }
}

void ServiceHost::Stop() {
  if (!started_ || stopped_) return;
  stopped_ = true;
  ready_.store(false);
  watcher_.reset();  // a reload it started finishes first
  metrics_server_->Stop();
  if (ui_server_) ui_server_->Stop();
  pending_pods_gauge_.Reset();
  libraries_gauge_.Reset();
  leader_gauge_.Reset();
  server_->GetHealthCheckService()->SetServingStatus(false);
  cluster_->Shutdown();
  server_->Shutdown(std::chrono::system_clock::now() + kShutdownGrace);
  server_->Wait();
  scheduler_->Stop();
  if (source_ != nullptr) source_->Stop();
  const std::filesystem::path socket = UnixSocketPath(config_.api_listen);
  std::error_code ec;
  if (!socket.empty()) std::filesystem::remove(socket, ec);
  spdlog::info("schedhost stopped");
}

}  // namespace schedhost::api
