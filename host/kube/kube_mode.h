// KubeMode: the cluster source schedhostd uses with a `[kubernetes]` table. It resolves the
// credentials (kubeconfig or in-cluster), mirrors Pods, Nodes, Namespaces,
// PodDisruptionBudgets and PriorityClasses into the store with one reflector each (and every
// API kind a loaded plugin declares into its ObjectStore, following reloads), and gives
// the scheduler a Writer that binds, patches status, evicts and records events through the API.
//
//   auto kube = std::make_unique<kube::KubeMode>(*config.kubernetes);  // throws KubeconfigError
//   host.SetClusterSource(std::move(kube));
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/config/host_config.h"
#include "host/kube/api_client.h"
#include "host/kube/elector.h"
#include "host/kube/reflector.h"
#include "host/kube/writer.h"
#include "host/store/cluster_writer.h"

namespace schedhost::kube {

// ResolveAccess reads the credentials `config` names; throws KubeconfigError.
ClusterAccess ResolveAccess(const config::KubernetesConfig& config);

class KubeMode final : public store::ClusterSource {
 public:
  // KubeMode resolves the credentials and prepares the client; throws KubeconfigError.
  explicit KubeMode(const config::KubernetesConfig& config);
  ~KubeMode() override;

  void Start(store::Store& store) override;
  // WaitForSync waits up to config.sync_timeout.
  bool WaitForSync(std::string* why) override;
  std::shared_ptr<store::ClusterWriter> writer() override { return writer_; }
  bool Healthy(std::string* why) const override;
  // Degraded names the declared kinds that cannot be mirrored (no CRD, forbidden), with why.
  std::string Degraded() const override;
  std::string description() const override;
  // Campaign runs the leader election of [kubernetes.leader_election] (its own API client, so
  // renewals never queue behind bindings), or elects this replica at once when it is disabled.
  void Campaign(const std::function<void()>& elected, const std::function<void()>& lost) override;
  store::Leadership leadership() const override;
  // DelaysMirrorUntilElected: [kubernetes.leader_election] delay_cache_until_active.
  bool DelaysMirrorUntilElected() const override;
  void Stop() override;

  ApiClient& client() { return *client_; }
  const std::vector<std::unique_ptr<Reflector>>& reflectors() const { return reflectors_; }
  // DeclaredKinds returns the keys of the declared kinds mirrored now.
  std::vector<std::string> DeclaredKinds() const;
  // DeclaredStats returns the counters of the reflector of the declared kind keyed `key`
  // (KindInfo::Key), or nullopt when the kind is not mirrored.
  std::optional<ReflectorStats> DeclaredStats(std::string_view key) const;
  Writer* kube_writer() const { return writer_.get(); }
  LeaderElector* elector() const { return elector_.get(); }

 private:
  // Mirror starts a reflector per kind in `kinds` not mirrored yet; with `wait`, returns once
  // each has been listed (or found unavailable), or the sync timeout passed.
  void Mirror(const std::vector<store::KindInfo>& kinds, bool wait);
  // Forget stops mirroring `kinds` and removes them from the store.
  void Forget(const std::vector<store::KindInfo>& kinds);

  config::KubernetesConfig config_;
  store::Store* store_ = nullptr;  // set by Start
  // The reflectors of declared kinds, by key; retired ones end with Stop (their watch may be
  // waiting on the server).
  mutable std::mutex declared_mu_;
  std::map<std::string, std::unique_ptr<Reflector>, std::less<>> declared_;
  std::vector<std::unique_ptr<Reflector>> retired_;
  std::unique_ptr<ApiClient> client_;
  std::vector<std::unique_ptr<Reflector>> reflectors_;
  std::shared_ptr<Writer> writer_;
  std::unique_ptr<ApiClient> election_client_;  // null without an election
  std::unique_ptr<LeaderElector> elector_;
  std::atomic<bool> started_{false};  // Start ran: the reflectors and the writer's lanes exist
  bool stopped_ = false;
};

}  // namespace schedhost::kube
