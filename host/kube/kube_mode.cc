#include "host/kube/kube_mode.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace schedhost::kube {

ClusterAccess ResolveAccess(const config::KubernetesConfig& config) {
  if (config.in_cluster) return LoadInCluster();
  return LoadKubeconfig(config.kubeconfig, config.context);
}

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
  options.protobuf = config_.content_type == "application/vnd.kubernetes.protobuf";
  const config::LeaderElectionConfig& le = config_.leader_election;
  if (le.enabled) {
    // Its own client and rate limit, as kube-scheduler's leader election has: a renewal never
    // waits behind bindings. Each request must end well before the renew deadline.
    ClientOptions election = options;
    election.timeout = std::max<std::chrono::milliseconds>(
        std::chrono::seconds(1),
        std::chrono::duration_cast<std::chrono::milliseconds>(le.renew_deadline / 2));
    election.user_agent = "schedhost/leader-election";
    election_client_ = std::make_unique<ApiClient>(access, election);
    ElectorOptions eo;
    eo.lease_namespace = le.lease_namespace;
    eo.lease_name = le.lease_name;
    eo.identity = le.identity.empty() ? DefaultIdentity() : le.identity;
    eo.lease_duration = le.lease_duration;
    eo.renew_deadline = le.renew_deadline;
    eo.retry_period = le.retry_period;
    elector_ = std::make_unique<LeaderElector>(*election_client_, std::move(eo));
  }
  client_ = std::make_unique<ApiClient>(std::move(access), options);
  WriterOptions wo;
  wo.instance = Hostname();
  writer_ = std::make_shared<Writer>(*client_, wo);
  if (elector_ != nullptr) writer_->SetFence([e = elector_.get()] { return e->Leading(); });
}

bool KubeMode::DelaysMirrorUntilElected() const {
  return elector_ != nullptr && config_.leader_election.delay_cache_until_active;
}

KubeMode::~KubeMode() { Stop(); }

std::string KubeMode::description() const {
  return "the Kubernetes API server at " + client_->access().server;
}

void KubeMode::Start(store::Store& store) {
  spdlog::info("kubernetes: mirroring {} ({})", client_->access().server, client_->access().source);
  writer_->Start();
  for (Reflector::Spec spec :
       {Reflector::Namespaces(), Reflector::PriorityClasses(), Reflector::Nodes(),
        Reflector::PodDisruptionBudgets(), Reflector::Pods()}) {
    spec.idle_timeout =
        std::chrono::duration_cast<std::chrono::milliseconds>(config_.watch_idle_timeout);
    reflectors_.push_back(std::make_unique<Reflector>(*client_, store, std::move(spec)));
  }
  for (auto& r : reflectors_) r->Start();
  store_ = &store;
  // The kinds the loaded plugins declare, then whatever reloads add (listed before the new set
  // goes live) or drop.
  Mirror(store.objects().Kinds(), /*wait=*/false);
  store.objects().SetHooks({.added = [this](const auto& kinds) { Mirror(kinds, true); },
                            .dropped = [this](const auto& kinds) { Forget(kinds); }});
  // Last: Healthy (another thread) reads reflectors_ once this is set. Stop joins the elector,
  // which may be the thread running this, before it reads either.
  started_.store(true);
}

void KubeMode::Mirror(const std::vector<store::KindInfo>& kinds, bool wait) {
  std::vector<Reflector*> started;
  {
    std::lock_guard lock(declared_mu_);
    for (const store::KindInfo& kind : kinds) {
      if (declared_.contains(kind.Key())) continue;
      Reflector::Spec spec = Reflector::Declared(kind);
      spec.idle_timeout =
          std::chrono::duration_cast<std::chrono::milliseconds>(config_.watch_idle_timeout);
      auto r = std::make_unique<Reflector>(*client_, *store_, std::move(spec));
      spdlog::info("kubernetes: mirroring {} ({} {}), declared by a loaded plugin", kind.Key(),
                   kind.ApiVersion(), kind.kind);
      r->Start();
      started.push_back(r.get());
      declared_.emplace(kind.Key(), std::move(r));
    }
  }
  if (!wait) return;
  const auto deadline = std::chrono::steady_clock::now() + config_.sync_timeout;
  for (Reflector* r : started) {
    while (!r->WaitForSync(std::chrono::milliseconds(200))) {
      if (std::chrono::steady_clock::now() >= deadline || !r->fatal().empty()) {
        spdlog::warn("kubernetes: {} not listed within the sync timeout; the new profiles go "
                     "live without it (its plugins read it as unavailable until it is)",
                     r->spec().name);
        break;
      }
    }
  }
}

void KubeMode::Forget(const std::vector<store::KindInfo>& kinds) {
  std::lock_guard lock(declared_mu_);
  for (const store::KindInfo& kind : kinds) {
    auto it = declared_.find(kind.Key());
    if (it == declared_.end()) continue;
    it->second->Stop();
    retired_.push_back(std::move(it->second));
    declared_.erase(it);
    store_->objects().Undeclare(kind.Key());
    spdlog::info("kubernetes: no loaded plugin declares {} any more; stopped mirroring it",
                 kind.Key());
  }
}

std::vector<std::string> KubeMode::DeclaredKinds() const {
  std::lock_guard lock(declared_mu_);
  std::vector<std::string> out;
  for (const auto& [key, r] : declared_) out.push_back(key);
  return out;
}

std::optional<ReflectorStats> KubeMode::DeclaredStats(std::string_view key) const {
  std::lock_guard lock(declared_mu_);
  auto it = declared_.find(key);
  if (it == declared_.end()) return std::nullopt;
  return it->second->stats();
}

std::string KubeMode::Degraded() const {
  std::lock_guard lock(declared_mu_);
  std::string out;
  for (const auto& [key, r] : declared_) {
    if (std::string why = r->unavailable(); !why.empty()) {
      out += (out.empty() ? "" : "; ") + std::string("declared kind ") + key +
             " unavailable: " + why;
    }
  }
  return out;
}

bool KubeMode::WaitForSync(std::string* why) {
  const auto deadline = std::chrono::steady_clock::now() + config_.sync_timeout;
  std::vector<Reflector*> all;
  for (auto& r : reflectors_) all.push_back(r.get());
  {
    std::lock_guard lock(declared_mu_);
    for (auto& [key, r] : declared_) all.push_back(r.get());
  }
  for (Reflector* r : all) {
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
  if (!started_) {
    *why = "standby with delay_cache_until_active: the mirror starts once this replica leads";
    return false;
  }
  {
    std::lock_guard lock(declared_mu_);
    for (const auto& [key, r] : declared_) {
      if (!r->synced()) {
        *why = key + " not synced";
        return false;
      }
    }
  }
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

void KubeMode::Campaign(const std::function<void()>& elected,
                        const std::function<void()>& lost) {
  if (elector_ == nullptr) {
    elected();
    return;
  }
  elector_->Run({.started = elected, .stopped = lost});
}

store::Leadership KubeMode::leadership() const {
  return elector_ != nullptr ? elector_->Status() : store::Leadership{};
}

void KubeMode::Stop() {
  if (stopped_) return;
  stopped_ = true;
  // First: the lease is released (the scheduler has stopped binding), so a standby takes over
  // without waiting for it to run out; the writer's fence is closed from here on.
  if (elector_ != nullptr) elector_->Stop();
  if (store_ != nullptr) store_->objects().SetHooks({});
  std::lock_guard lock(declared_mu_);
  for (auto& r : reflectors_) r->Stop();
  for (auto& [key, r] : declared_) r->Stop();
  client_->Cancel();
  if (started_) writer_->Stop();
  for (auto& r : reflectors_) r->Join();
  for (auto& [key, r] : declared_) r->Join();
  for (auto& r : retired_) r->Join();
}

}  // namespace schedhost::kube
