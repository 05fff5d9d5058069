#include "host/kube/kube_mode.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <array>

namespace schedhost::kube {

ClusterAccess ResolveAccess(const config::KubernetesConfig& config) {
  if (config.in_cluster) return LoadInCluster();
  return LoadKubeconfig(config.kubeconfig, config.context);
}

namespace {

std::string Hostname() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "schedhost";
  return name.data();
}

}  // namespace

KubeMode::KubeMode(const config::KubernetesConfig& config) : config_(config) {
  ClusterAccess access = ResolveAccess(config_);
  if (access.insecure_skip_tls_verify) {
    spdlog::warn(
        "kubernetes: {} sets insecure-skip-tls-verify: the API server's certificate is NOT "
        "verified",
        access.source);
  }
  ClientOptions options;
  options.qps = config_.qps;
  options.burst = config_.burst;
  client_ = std::make_unique<ApiClient>(std::move(access), options);
}

KubeMode::~KubeMode() { Stop(); }

std::string KubeMode::description() const {
  return "the Kubernetes API server at " + client_->access().server;
}

void KubeMode::Start(store::Store& store) {
  spdlog::info("kubernetes: mirroring {} ({})", client_->access().server, client_->access().source);
  WriterOptions wo;
  wo.instance = Hostname();
  writer_ = std::make_shared<Writer>(*client_, wo);
  writer_->Start();
  for (Reflector::Spec spec :
       {Reflector::Namespaces(), Reflector::PriorityClasses(), Reflector::Nodes(),
        Reflector::PodDisruptionBudgets(), Reflector::Pods()}) {
    reflectors_.push_back(std::make_unique<Reflector>(*client_, store, std::move(spec)));
  }
  for (auto& r : reflectors_) r->Start();
}

bool KubeMode::WaitForSync(std::string* why) {
  const auto deadline = std::chrono::steady_clock::now() + config_.sync_timeout;
  for (auto& r : reflectors_) {
    for (;;) {
      if (r->WaitForSync(std::chrono::milliseconds(200))) break;
      if (std::string fatal = r->fatal(); !fatal.empty()) {
        *why = fatal;
        return false;
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        const ReflectorStats s = r->stats();
        *why = "no complete list of " + r->spec().name + " from " + client_->access().server +
               " within the sync timeout" +
               (s.last_error.empty() ? std::string() : ": " + s.last_error);
        return false;
      }
    }
  }
  return true;
}

bool KubeMode::Healthy(std::string* why) const {
  for (const auto& r : reflectors_) {
    if (!r->synced()) {
      *why = r->spec().name + " not synced";
      return false;
    }
    if (std::string fatal = r->fatal(); !fatal.empty()) {
      *why = fatal;
      return false;
    }
  }
  if (writer_ != nullptr) {
    if (std::string forbidden = writer_->forbidden(); !forbidden.empty()) {
      *why = forbidden;
      return false;
    }
  }
  return true;
}

void KubeMode::Stop() {
  if (stopped_) return;
  stopped_ = true;
  for (auto& r : reflectors_) r->Stop();
  client_->Cancel();
  if (writer_) writer_->Stop();
  for (auto& r : reflectors_) r->Join();
}

}  // namespace schedhost::kube
