// VolumeBinding: places a pod where its PersistentVolumeClaims (and ephemeral volumes' claims)
// can be used, and binds the unbound ones there, as upstream kube-scheduler's VolumeBinding.
//
// PreFilter reads the pod's claims: one missing (or, for an ephemeral volume, not yet made by
// the ephemeral volume controller), lost, being deleted, or unbound in Immediate mode keeps the
// pod pending, UnschedulableAndUnresolvable, with upstream's message. Filter keeps the nodes a
// bound claim's PersistentVolume reaches (its node affinity), and for unbound claims of a
// WaitForFirstConsumer class the nodes where an available volume matches (smallest first, as
// the PV controller matches) or where the class's provisioner may provision (allowed
// topologies, CSIStorageCapacity when the CSIDriver asks for it). Score ranks nodes by how full
// the chosen volumes or capacities would be (StorageCapacityScoring, `shape`). Reserve assumes
// the choice, so the next pod does not take the same volume before the API server says it is
// taken; PreBind writes it (the volume's claimRef, the claim's selected-node annotation) and
// waits, at most bind_timeout_seconds, for the PV controller to finish the binding.
//
//   [profile.plugin_config.VolumeBinding]
//   bind_timeout_seconds = 600
//   shape = [{ utilization = 0, score = 10 }, { utilization = 100, score = 0 }]
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <schedhost/plugin.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "storage_objects.h"

namespace schedhost::plugins {

/// ShapePoint is one point of the score's shape: utilization in percent, score 0..10.
struct ShapePoint {
  int64_t utilization = 0;
  int64_t score = 0;
};

/// VolumeBindingArgs are VolumeBinding's validated arguments (upstream's VolumeBindingArgs).
struct VolumeBindingArgs {
  /// bind_timeout is how long PreBind waits for the PV controller (0: not at all).
  std::chrono::seconds bind_timeout{600};
  /// shape maps a node's storage utilization to its score (scores 0..10, scaled to 0..100).
  std::vector<ShapePoint> shape = {{0, 10}, {100, 0}};
};

/// ParseVolumeBindingArgs reads plugin_config.VolumeBinding; throws ArgsError naming the key.
VolumeBindingArgs ParseVolumeBindingArgs(const Args& args);

/// VolumeBinding is the volume binding plugin.
class VolumeBinding final : public Plugin,
                            public EnqueueExtensions,
                            public PreFilterPlugin,
                            public FilterPlugin,
                            public PreScorePlugin,
                            public ScorePlugin,
                            public ReservePlugin,
                            public PreBindPlugin {
 public:
  static constexpr std::string_view kName = "VolumeBinding";
  static constexpr std::string_view kVersion = "1.0.0";
  /// The kinds it reads, by index: claims, volumes, classes, CSI drivers, CSI capacities.
  static constexpr uint32_t kClaims = 0;
  static constexpr uint32_t kVolumes = 1;
  static constexpr uint32_t kClasses = 2;
  static constexpr uint32_t kDrivers = 3;
  static constexpr uint32_t kCapacities = 4;
  static constexpr std::array<Kind, 5> kKinds = {{
      {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true},
      {"", "v1", "persistentvolumes", "PersistentVolume", false},
      {"storage.k8s.io", "v1", "storageclasses", "StorageClass", false},
      {"storage.k8s.io", "v1", "csidrivers", "CSIDriver", false},
      {"storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", true},
  }};
  static constexpr std::array<std::string_view, 2> kEvaluates = {
      "spec.volumes.persistentVolumeClaim", "spec.volumes.ephemeral"};

  VolumeBinding(const Host& host, const Args& args);

  std::span<const schedhost_event_registration> EventsToRegister() override;
  Status PreFilter(CycleState& state, const Pod& pod, PreFilterResult& result) override;
  Status Filter(const CycleState& state, const Pod& pod, const NodeInfo& ni) override;
  Status PreScore(CycleState& state, const Pod& pod, const NodeInfoList& nodes) override;
  Status Score(const CycleState& state, const Pod& pod, const NodeInfo& ni,
               int64_t& score) override;
  Status Reserve(CycleState& state, const Pod& pod, std::string_view node) override;
  void Unreserve(CycleState& state, const Pod& pod, std::string_view node) override;
  Status PreBind(CycleState& state, const Pod& pod, std::string_view node) override;

  const VolumeBindingArgs& args() const { return args_; }

  /// Binding is an unbound claim matched to an available volume on one node.
  struct Binding {
    storage::Volume volume;
    storage::Claim claim;
  };
  /// Provision is an unbound claim its class's provisioner would make a volume for.
  struct Provision {
    storage::Claim claim;
    std::optional<storage::Capacity> capacity;  // the capacity that admits it, when checked
  };
  /// NodeVolumes is what Filter found on one node.
  struct NodeVolumes {
    std::vector<Binding> bindings;
    std::vector<Provision> provisions;
  };
  /// PodClaims is the cycle's view of the pod's claims (PreFilter), and what Filter found per
  /// node; shared by the state's clones, as upstream's.
  struct PodClaims {
    bool has_claims = false;
    std::vector<storage::Claim> bound;
    std::map<std::string, storage::Volume, std::less<>> bound_volumes;  // by name; absent: lost
    // bound's volumes in bound's order, null for a lost one (Filter's loop, per node).
    std::vector<const storage::Volume*> bound_in_order;
    std::vector<storage::Claim> delayed;  // unbound, WaitForFirstConsumer
    std::map<std::string, std::vector<storage::Volume>, std::less<>> volumes_by_class;
    std::map<std::string, storage::StorageClass, std::less<>> classes;
    std::map<std::string, bool, std::less<>> driver_capacity;  // CSIDriver.spec.storageCapacity
    std::vector<storage::Capacity> capacities;
    std::mutex mu;  // guards what follows (Filter runs on many nodes at once)
    std::map<std::string, NodeVolumes, std::less<>> by_node;
    bool has_static_bindings = false;
    bool all_bound = false;  // Reserve: nothing to write
  };

 private:
  static int32_t Hint(void* instance, const schedhost_pod_view* pod,
                      const schedhost_cluster_event* event, const schedhost_event_object* old_obj,
                      const schedhost_event_object* new_obj) noexcept;
  // ReadClaims fills `out` for the pod, or returns the status that keeps it pending.
  std::optional<Status> ReadClaims(const CycleState& state, const Pod& pod, PodClaims& out);
  // FindVolumes is upstream's FindPodVolumes on one node: the reasons it does not fit.
  std::vector<std::string> FindVolumes(const PodClaims& claims, const NodeInfo& ni,
                                       NodeVolumes& out) const;
  // Overlay applies this plugin's assumptions to a volume or a claim read from the host.
  void Overlay(storage::Volume& volume);
  void Overlay(storage::Claim& claim);
  // Revert drops the assumptions `found` made.
  void Revert(const NodeVolumes& found);
  // WaitForBindings polls the latest objects until the PV controller completed every binding
  // and provisioning of `found` on `node`, or says why it cannot.
  Status WaitForBindings(const Pod& pod, std::string_view node, const NodeVolumes& found);

  VolumeBindingArgs args_;
  Id state_key_ = 0;
  std::vector<schedhost_event_registration> events_;

  // The assume cache: a volume this plugin bound to a claim, or a claim it chose a node for,
  // kept until the host's copy of the object moves past the version the choice was made on.
  struct AssumedVolume {
    uint64_t base_version = 0;
    std::string claim_namespace, claim_name, claim_uid;
  };
  struct AssumedClaim {
    uint64_t base_version = 0;
    std::string node;
  };
  std::mutex assumed_mu_;
  std::map<std::string, AssumedVolume, std::less<>> assumed_volumes_;
  std::map<std::string, AssumedClaim, std::less<>> assumed_claims_;  // by namespace/name
};

}  // namespace schedhost::plugins
