// NodeVolumeLimits: keeps a node from taking more CSI volumes of a driver than its CSINode
// allows (spec.drivers[].allocatable.count), as upstream kube-scheduler's NodeVolumeLimits (the
// CSI volume limits plugin). Each persistentVolumeClaim and ephemeral volume resolves to its CSI
// driver and a unique volume: a bound claim to its PersistentVolume's spec.csi driver and
// volumeHandle, an unbound one to its StorageClass's provisioner and a made-up handle of
// its own; an in-tree disk (a PersistentVolume's, a StorageClass's provisioner or an inline
// one) counts as the CSI driver it migrates to when the node has a CSINode. Filter counts the
// unique volumes of the pods on the node and of the node's VolumeAttachments per driver, and
// rejects the node when the new pod's volumes take a driver past its limit. A CSIDriver with
// spec.preventPodSchedulingIfMissing keeps its volumes off nodes whose CSINode lacks it. It
// takes no arguments.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <schedhost/plugin.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage_objects.h"

namespace schedhost::plugins {

/// CsiVolume is a volume as the CSI driver that attaches it sees it.
struct CsiVolume {
  std::string driver;
  std::string handle;
};

/// InTreePlugin is an in-tree volume plugin that migrates to a CSI driver: the volume source
/// key (in a pod's spec.volumes[] and a PersistentVolume's spec), the plugin's name (a
/// StorageClass's provisioner) and the CSI driver's name.
struct InTreePlugin {
  std::string_view source;
  std::string_view plugin;
  std::string_view driver;
  bool migration_on;  // upstream's isCSIMigrationOn names it (given a CSINode)
};

/// InTreePlugins lists upstream's migratable in-tree plugins (csi-translation-lib's).
std::span<const InTreePlugin> InTreePlugins();
/// InTreeSourceOf returns the migratable in-tree plugin of a volume source table (a pod
/// volume, or a PersistentVolume's spec), or nullptr.
const InTreePlugin* InTreeSourceOf(const Args& source);
/// TranslateInTree returns the CSI volume an in-tree volume migrates to, as upstream's
/// csi-translation-lib: `source` holds `plugin.source` (a pod volume when `inline_volume`, else
/// a PersistentVolume's spec); `zone_labels` is the PersistentVolume's zone label value. It
/// returns nullopt with `why` set when the translation fails (an EBS volume ID that is not one,
/// an Azure disk that is not managed, GCE zones of several regions).
std::optional<CsiVolume> TranslateInTree(const InTreePlugin& plugin, const Args& source,
                                         bool inline_volume, std::string_view zone_labels,
                                         std::string* why);

/// NodeVolumeLimits filters nodes by the CSI volume limits of their CSINode.
class NodeVolumeLimits final : public Plugin,
                               public PreFilterPlugin,
                               public FilterPlugin,
                               public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NodeVolumeLimits";
  static constexpr std::string_view kVersion = "1.0.0";
  /// The kinds it reads, by index.
  static constexpr uint32_t kClaims = 0;
  static constexpr uint32_t kVolumes = 1;
  static constexpr uint32_t kClasses = 2;
  static constexpr uint32_t kCSINodes = 3;
  static constexpr uint32_t kAttachments = 4;
  static constexpr uint32_t kDrivers = 5;
  static constexpr std::array<Kind, 6> kKinds = {{
      {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true},
      {"", "v1", "persistentvolumes", "PersistentVolume", false},
      {"storage.k8s.io", "v1", "storageclasses", "StorageClass", false},
      {"storage.k8s.io", "v1", "csinodes", "CSINode", false},
      {"storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", false},
      {"storage.k8s.io", "v1", "csidrivers", "CSIDriver", false},
  }};
  /// The inline in-tree disks are those it translates to their CSI drivers and counts.
  static constexpr std::array<std::string_view, 7> kEvaluates = {
      "spec.volumes.persistentVolumeClaim", "spec.volumes.ephemeral",
      "spec.volumes.awsElasticBlockStore",  "spec.volumes.gcePersistentDisk",
      "spec.volumes.azureDisk",             "spec.volumes.cinder",
      "spec.volumes.portworxVolume"};
  /// kErrReasonMaxVolumeCountExceeded rejects a node whose driver limit the pod would exceed
  /// (upstream's ErrReasonMaxVolumeCountExceeded).
  static constexpr std::string_view kErrReasonMaxVolumeCountExceeded =
      "node(s) exceed max volume count";

  /// NodeVolumeLimits accepts no arguments; any plugin_config key throws ArgsError.
  NodeVolumeLimits(const Host& host, const Args& args);

  /// PreFilter returns Skip for a pod without a persistentVolumeClaim, ephemeral or migratable
  /// in-tree volume; otherwise it resolves the pod's volumes (and lists the VolumeAttachments)
  /// once for Filter.
  Status PreFilter(CycleState& state, const Pod& pod, PreFilterResult& result) override;

  /// Filter rejects the node (Unschedulable, kErrReasonMaxVolumeCountExceeded) when, for a
  /// driver with an allocatable count in the node's CSINode, the unique volumes of the pods on
  /// the node and of its VolumeAttachments plus the pod's new ones exceed it. A missing claim of
  /// the pod is UnschedulableAndUnresolvable; a driver that must be installed and is not on the
  /// node is Unschedulable.
  Status Filter(const CycleState& state, const Pod& pod, const NodeInfo& ni) override;

  /// EventsToRegister names upstream's events: CSINode add and update, assigned Pod delete,
  /// PersistentVolumeClaim add, VolumeAttachment delete, with upstream's queueing hints.
  std::span<const schedhost_event_registration> EventsToRegister() override;

  /// The queueing hints, upstream's: a driver limit raised; a bound or nominated pod with a
  /// claim, ephemeral or migratable in-tree volume deleted; a claim of the pod added; a
  /// VolumeAttachment deleted while the pod has a claim or an in-tree volume of its attacher.
  QueueingHint CSINodeUpdated(const Pod& pod, const schedhost_cluster_event& event,
                              const EventObject& old_obj, const EventObject& new_obj) const;
  QueueingHint AssignedPodDeleted(const Pod& pod, const schedhost_cluster_event& event,
                                  const EventObject& old_obj, const EventObject& new_obj) const;
  QueueingHint ClaimAdded(const Pod& pod, const schedhost_cluster_event& event,
                          const EventObject& old_obj, const EventObject& new_obj) const;
  QueueingHint AttachmentDeleted(const Pod& pod, const schedhost_cluster_event& event,
                                 const EventObject& old_obj, const EventObject& new_obj) const;

  /// Entry is one attachable volume of a pod, or the failure its volume gives (in volume
  /// order: the first failure that applies on a node decides). An in-tree volume's entry counts
  /// only on a node with a CSINode (upstream's isCSIMigrationOn).
  struct Entry {
    std::string unique;  // "<driver>/<volume handle>"
    std::string driver;
    bool needs_csinode = false;
    std::optional<Status> failure;
  };
  /// Attachment is a VolumeAttachment of a node: its attacher and PersistentVolume.
  struct Attachment {
    std::string attacher;
    std::string volume;
  };
  /// AttachmentIndex is the VolumeAttachments by node name.
  using AttachmentIndex = std::map<std::string, std::vector<Attachment>, std::less<>>;
  /// Revisions are the revisions (Host::KindRevision) of the kinds a node's facts come from:
  /// claims, volumes, classes, CSINodes and VolumeAttachments.
  using Revisions = std::array<uint64_t, 5>;

  /// NodeFacts is what Filter works out for one node, whatever the new pod: its CSINode's
  /// drivers and, when one of them has a limit, the unique volumes its pods and its
  /// VolumeAttachments hold. Kept across cycles while the node's pods (NodeInfo generation) and
  /// the revisions of the kinds they come from stay the same.
  struct NodeFacts {
    uint64_t generation = 0;
    Revisions revisions{};
    std::optional<Status> csinode_failure;  // the CSINode does not decode
    bool has_csinode = false;
    std::shared_ptr<const std::vector<storage::CSINodeDriver>> drivers;  // never null
    bool any_limit = false;                 // some driver has allocatable.count
    std::optional<Status> pods_failure;     // a volume of a pod on the node fails here
    std::map<std::string, std::string, std::less<>> attached;    // pods' volumes: unique -> driver
    std::map<std::string, int64_t, std::less<>> attached_count;  // per driver, with attachments
  };

 private:
  // FactsCache keeps one NodeFacts per node, by the node name's interned id, for Filter's
  // threads: each slot is an atomic shared_ptr, so a lookup takes no lock of the plugin's.
  // Ids past kChunks * kChunkSlots are not kept.
  class FactsCache {
   public:
    FactsCache() = default;
    FactsCache(const FactsCache&) = delete;
    FactsCache& operator=(const FactsCache&) = delete;
    ~FactsCache();
    std::shared_ptr<const NodeFacts> Get(Id node) const;
    void Put(Id node, std::shared_ptr<const NodeFacts> facts);

   private:
    static constexpr size_t kChunkSlots = 1024;
    static constexpr size_t kChunks = 1024;
    struct Chunk {
      std::array<std::atomic<std::shared_ptr<const NodeFacts>>, kChunkSlots> slots;
    };
    std::array<std::atomic<Chunk*>, kChunks> chunks_{};
  };

  // FactsFor returns the node's facts: kept ones while current, else worked out (and kept when
  // `revisions` and `index` are known).
  std::shared_ptr<const NodeFacts> FactsFor(const CycleState& state, const NodeInfo& ni,
                                            const std::optional<Revisions>& revisions,
                                            const AttachmentIndex* index) const;
  // ComputeFacts works a node's facts out from its CSINode, pods and VolumeAttachments
  // (`index`; null: not counted, the caller reports why).
  NodeFacts ComputeFacts(const CycleState& state, const NodeInfo& ni,
                         const AttachmentIndex* index) const;
  // Resolve is upstream's filterAttachableVolumes before the CSINode is known: the pod's
  // volumes as entries. For the new pod a claim that cannot be read is a failure; for a pod on
  // the node it is not counted.
  std::vector<Entry> Resolve(const CycleState& state, const Pod& pod, bool new_pod) const;
  // ClaimVolume is upstream's getCSIDriverInfo: the CSI volume of a claim, or nullopt when it
  // is not counted; needs_csinode is set for a migrated in-tree volume.
  std::optional<CsiVolume> ClaimVolume(const CycleState& state, const storage::Claim& claim,
                                       bool& needs_csinode) const;
  // ClassVolume is upstream's getCSIDriverInfoFromSC: the provisioner of the claim's class and
  // a handle of the claim's own.
  std::optional<CsiVolume> ClassVolume(const CycleState& state, const storage::Claim& claim,
                                       bool& needs_csinode) const;
  // MustBeInstalled lists the drivers of `entries` whose CSIDriver asks to be installed on the
  // node (spec.preventPodSchedulingIfMissing), or the status of a read that failed.
  std::optional<Status> MustBeInstalled(const CycleState& state, const std::vector<Entry>& entries,
                                        std::vector<std::string>& out) const;
  // Attachments lists the VolumeAttachments by node, or the status of a list that failed.
  std::optional<Status> Attachments(const CycleState& state, AttachmentIndex& out) const;
  // Unavailable is the status of a kind the host does not mirror, naming the object.
  Status Unavailable(uint32_t kind, std::string_view object) const;

  Id state_key_ = 0;
  // Prefixes the made-up handle of an unbound claim, so it never equals a real one.
  std::string random_prefix_;
  // Claims and volumes decoded once per version: Filter reads those of every pod on every node.
  mutable storage::VersionCache<storage::Claim> claims_;
  mutable storage::VersionCache<storage::Volume> volumes_;
  mutable storage::VersionCache<std::vector<storage::CSINodeDriver>> csinodes_;
  // Node facts across cycles, and the VolumeAttachments by node as of one revision.
  mutable FactsCache facts_;
  mutable std::mutex attachments_mu_;
  uint64_t attachments_revision_ = 0;  // guarded by attachments_mu_
  std::shared_ptr<const AttachmentIndex> attachments_;  // guarded by attachments_mu_
};

}  // namespace schedhost::plugins
