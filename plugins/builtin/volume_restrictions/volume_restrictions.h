// VolumeRestrictions: keeps a pod off nodes where its in-tree disks would conflict with the
// disks of the pods already there, and away from a ReadWriteOncePod claim another pod uses, as
// upstream kube-scheduler's VolumeRestrictions. PreFilter reads each persistentVolumeClaim
// volume's claim (a missing one keeps the pod pending, UnschedulableAndUnresolvable with
// upstream's lister message) and counts the ReadWriteOncePod claims of the pod that a pod in the
// snapshot (any node, same namespace) already uses; AddPod and RemovePod move that count for
// preemption's dry runs. Filter rejects a node whose pods mount one of the pod's
// gcePersistentDisk, awsElasticBlockStore, rbd or iscsi disks in a conflicting way, then any
// node while a ReadWriteOncePod claim is in use (both Unschedulable: preemption may help).
// PreFilter returns Skip when the pod has no in-tree disk and no ReadWriteOncePod claim in use.
// It takes no arguments.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <schedhost/plugin.hpp>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage_objects.h"

namespace schedhost::plugins {

/// Disk is one in-tree disk source of a pod's volume, as upstream's isVolumeConflict compares
/// them.
struct Disk {
  enum class Type : uint8_t { kGce, kAws, kIscsi, kRbd };
  Type type = Type::kGce;
  /// id is the disk's identity: gcePersistentDisk's pdName, awsElasticBlockStore's volumeID,
  /// iscsi's iqn, rbd's image.
  std::string id;
  std::string pool;                   // rbd only ("rbd" when unset, the API's default)
  std::vector<std::string> monitors;  // rbd only
  bool read_only = false;

  bool operator==(const Disk&) const = default;
};

/// VolumeDisks returns the in-tree disk sources of `volumes` (Host::Volumes of a pod), in
/// spec.volumes order; a volume without one (a claim, an ephemeral volume) gives none. A field
/// of the wrong type reads as unset (the API server never serves one).
std::vector<Disk> VolumeDisks(const Args& volumes);

/// DisksConflict is upstream's isVolumeConflict for one disk of each pod: the same GCE disk
/// unless both are read-only, the same EBS volume, the same iSCSI IQN unless both are
/// read-only, the same RBD image and pool with a monitor in common unless both are read-only.
bool DisksConflict(const Disk& a, const Disk& b);

/// VolumeRestrictions rejects nodes by in-tree disk conflicts and ReadWriteOncePod claims.
class VolumeRestrictions final : public Plugin,
                                 public PreFilterPlugin,
                                 public PreFilterExtensions,
                                 public FilterPlugin,
                                 public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "VolumeRestrictions";
  static constexpr std::string_view kVersion = "1.0.0";
  /// The kind it reads, by index: claims.
  static constexpr uint32_t kClaims = 0;
  static constexpr std::array<Kind, 1> kKinds = {{
      {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true},
  }};
  static constexpr std::array<std::string_view, 5> kEvaluates = {
      "spec.volumes.persistentVolumeClaim", "spec.volumes.gcePersistentDisk",
      "spec.volumes.awsElasticBlockStore", "spec.volumes.rbd", "spec.volumes.iscsi"};
  /// kErrReasonDiskConflict rejects a node where a disk of the pod conflicts (upstream's
  /// ErrReasonDiskConflict).
  static constexpr std::string_view kErrReasonDiskConflict = "node(s) had no available disk";
  /// kErrReasonReadWriteOncePodConflict rejects every node while a ReadWriteOncePod claim of the
  /// pod is in use (upstream's ErrReasonReadWriteOncePodConflict).
  static constexpr std::string_view kErrReasonReadWriteOncePodConflict =
      "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
      "already in-use by another pod";

  /// VolumeRestrictions accepts no arguments; any plugin_config key throws ArgsError.
  VolumeRestrictions(const Host& host, const Args& args);

  /// PreFilter reads the pod's claims (UnschedulableAndUnresolvable when one is missing), counts
  /// its ReadWriteOncePod claims in use by pods of the snapshot, and keeps the pod's disks;
  /// Skip when there is no disk and no such claim in use.
  Status PreFilter(CycleState& state, const Pod& pod, PreFilterResult& result) override;

  /// AddPod and RemovePod add or take away one use for each persistentVolumeClaim volume of
  /// `to_add` / `to_remove` naming one of the pod's ReadWriteOncePod claims (by claim name
  /// only, as upstream); Error without PreFilter's state.
  Status AddPod(CycleState& state, const Pod& pod, const Pod& to_add, const NodeInfo& ni) override;
  Status RemovePod(CycleState& state, const Pod& pod, const Pod& to_remove,
                   const NodeInfo& ni) override;

  /// Filter rejects the node (Unschedulable, kErrReasonDiskConflict) when one of the pod's
  /// disks conflicts with a disk of a pod on it, then (Unschedulable,
  /// kErrReasonReadWriteOncePodConflict) while a ReadWriteOncePod claim is in use; Error without
  /// PreFilter's state.
  Status Filter(const CycleState& state, const Pod& pod, const NodeInfo& ni) override;

  /// EventsToRegister names upstream's events: assigned Pod delete, Node add (no hint) and
  /// PersistentVolumeClaim add.
  std::span<const schedhost_event_registration> EventsToRegister() override;

  /// The queueing hints, upstream's: a deleted pod of the pod's namespace whose disks conflict
  /// with the pod's or that uses a claim of the same name; a claim of the pod added.
  QueueingHint AssignedPodDeleted(const Pod& pod, const schedhost_cluster_event& event,
                                  const EventObject& old_obj, const EventObject& new_obj) const;
  QueueingHint ClaimAdded(const Pod& pod, const schedhost_cluster_event& event,
                          const EventObject& old_obj, const EventObject& new_obj) const;

 private:
  // ReadWriteOncePodClaims is upstream's readWriteOncePodPVCsForPod: the names of the pod's
  // claims with the ReadWriteOncePod access mode, or the status a missing claim gives.
  std::optional<Status> ReadWriteOncePodClaims(const CycleState& state, const Pod& pod,
                                               std::set<std::string, std::less<>>& out) const;
  // ReadClaim reads claim `namespace_name`/`name` into `out`, or returns the status its absence
  // gives (upstream's lister message for a missing claim).
  std::optional<Status> ReadClaim(const CycleState& state, std::string_view namespace_name,
                                  std::string_view name, Args& out) const;
  // ClaimUses counts the persistentVolumeClaim volumes of `other` whose claim is in `claims`.
  int64_t ClaimUses(const Pod& other, const std::set<std::string, std::less<>>& claims) const;
  // Conflicts tells whether one of `disks` conflicts with a disk of `other`.
  bool Conflicts(const std::vector<Disk>& disks, const Pod& other) const;

  Id state_key_ = 0;
};

}  // namespace schedhost::plugins
