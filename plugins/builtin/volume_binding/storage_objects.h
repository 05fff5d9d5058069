// The storage API objects VolumeBinding reads (PersistentVolumeClaim, PersistentVolume,
// StorageClass, CSIDriver, CSIStorageCapacity) and NodeVolumeLimits reads (also CSINode and
// VolumeAttachment), decoded from the host's object trees into the few fields scheduling looks
// at, and the selector matching the PV controller's rules need (node affinity and allowed
// topologies against a node's labels, a claim's label selector against a volume's labels).
// Built only on the SDK.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <utility>
#include <optional>
#include <schedhost/plugin.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace schedhost::plugins::storage {

// Annotations and names the PV controller and the scheduler share (upstream's constants).
inline constexpr std::string_view kAnnBindCompleted = "pv.kubernetes.io/bind-completed";
inline constexpr std::string_view kAnnBoundByController = "pv.kubernetes.io/bound-by-controller";
inline constexpr std::string_view kAnnSelectedNode = "volume.kubernetes.io/selected-node";
inline constexpr std::string_view kAnnBetaStorageClass = "volume.beta.kubernetes.io/storage-class";
inline constexpr std::string_view kNotSupportedProvisioner = "kubernetes.io/no-provisioner";

using StringMap = std::map<std::string, std::string, std::less<>>;

/// Quoted is Go's %q of an object name, as upstream's messages quote names (names need no
/// escapes).
inline std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

/// Requirement is one node selector or label selector requirement, as written.
struct Requirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;
};

/// SelectorTerm is one node selector term: its label requirements and its field requirements
/// (a PV's node affinity is matched against labels only, so a field requirement never matches).
struct SelectorTerm {
  std::vector<Requirement> expressions;
  std::vector<Requirement> fields;
};

/// LabelSelector is a claim's spec.selector: matchLabels and matchExpressions, ANDed.
struct LabelSelector {
  StringMap match_labels;
  std::vector<Requirement> expressions;
};

/// Claim is what VolumeBinding reads of a PersistentVolumeClaim.
struct Claim {
  std::string namespace_name;
  std::string name;
  std::string uid;
  uint64_t resource_version = 0;
  std::string volume_name;  // spec.volumeName
  bool has_class = false;   // spec.storageClassName or the beta annotation is set
  std::string class_name;
  std::string phase;  // status.phase
  bool deleting = false;
  bool bind_completed = false;
  bool has_annotations = false;
  std::optional<std::string> selected_node;
  std::vector<std::string> access_modes;
  std::optional<int64_t> request_bytes;  // spec.resources.requests.storage
  std::string volume_mode;               // "Filesystem" when unset
  std::string attributes_class;          // spec.volumeAttributesClassName
  std::optional<LabelSelector> selector;
  std::optional<std::string> controller_uid;  // the controlling owner's uid, when a Pod

  /// Key is "namespace/name".
  std::string Key() const { return namespace_name + "/" + name; }
};

/// Volume is what VolumeBinding reads of a PersistentVolume.
struct Volume {
  std::string name;
  uint64_t resource_version = 0;
  std::string class_name;
  bool has_claim_ref = false;
  std::string claim_namespace;
  std::string claim_name;
  std::string claim_uid;
  std::string phase;
  bool deleting = false;
  int64_t capacity_bytes = 0;
  std::vector<std::string> access_modes;
  std::string volume_mode;  // "Filesystem" when unset
  std::string attributes_class;
  StringMap labels;
  // node_affinity: spec.nodeAffinity.required's terms; nullopt when the volume has none.
  std::optional<std::vector<SelectorTerm>> node_affinity;
  // csi: spec.csi is set (a CSI volume); csi_driver and csi_volume_handle are its driver and
  // volumeHandle ("" when unset).
  bool csi = false;
  std::string csi_driver;
  std::string csi_volume_handle;

  /// BoundTo tells whether the volume's claimRef names `claim` (and its uid, when set).
  bool BoundTo(const Claim& claim) const;
};

/// StorageClass is what VolumeBinding reads of a StorageClass.
struct StorageClass {
  std::string name;
  std::string provisioner;
  std::optional<std::string> binding_mode;  // volumeBindingMode
  // allowed_topologies: each term's requirements (key in values), ORed; empty allows all.
  std::vector<std::vector<Requirement>> allowed_topologies;
};

/// Capacity is what VolumeBinding reads of a CSIStorageCapacity.
struct Capacity {
  std::string namespace_name;
  std::string name;
  std::string class_name;
  std::optional<int64_t> capacity_bytes;
  std::optional<int64_t> maximum_volume_size_bytes;
  std::optional<LabelSelector> node_topology;
  bool topology_valid = true;  // false when nodeTopology does not convert to a selector

  /// Limit is maximumVolumeSize when set, else capacity (upstream's volumeLimit).
  std::optional<int64_t> Limit() const {
    return maximum_volume_size_bytes ? maximum_volume_size_bytes : capacity_bytes;
  }
};

/// DecodeClaim, DecodeVolume, DecodeStorageClass and DecodeCapacity read an object tree; they
/// throw ArgsError naming the object and the field when a field the plugin needs is malformed
/// (a quantity that does not parse, a requirement without a key).
Claim DecodeClaim(const Args& object);
Volume DecodeVolume(const Args& object);
StorageClass DecodeStorageClass(const Args& object);
Capacity DecodeCapacity(const Args& object);
/// CSIDriverStorageCapacity reads a CSIDriver's spec.storageCapacity (false when unset).
bool CSIDriverStorageCapacity(const Args& object);

/// CSINodeDriver is one entry of a CSINode's spec.drivers: the driver's name and its
/// allocatable.count (the most volumes of the driver the node takes; nullopt when unset).
struct CSINodeDriver {
  std::string name;
  std::optional<int64_t> allocatable_count;
};

/// VolumeAttachment is what NodeVolumeLimits reads of a VolumeAttachment.
struct VolumeAttachment {
  std::string name;
  std::string attacher;                               // spec.attacher
  std::string node_name;                              // spec.nodeName
  std::optional<std::string> persistent_volume_name;  // spec.source.persistentVolumeName
};

/// DecodeCSINodeDrivers reads a CSINode's spec.drivers; DecodeVolumeAttachment reads a
/// VolumeAttachment. They throw ArgsError as the decoders above.
std::vector<CSINodeDriver> DecodeCSINodeDrivers(const Args& object);
VolumeAttachment DecodeVolumeAttachment(const Args& object);
/// CSIDriverPreventsSchedulingIfMissing reads a CSIDriver's spec.preventPodSchedulingIfMissing
/// (false when unset).
bool CSIDriverPreventsSchedulingIfMissing(const Args& object);

/// NodeLabels is a node's labels as strings, with its name for field requirements.
struct NodeLabels {
  const Host* host = nullptr;
  Node node;

  /// Get returns the value of label `key`, or nullopt.
  std::optional<std::string_view> Get(std::string_view key) const;
};

/// MatchesTerms tells whether `node`'s labels match any of `terms`, as upstream's
/// MatchNodeSelectorTerms does for a node with labels only: a term with a malformed requirement
/// or with field requirements matches nothing; an empty term matches nothing.
bool MatchesTerms(const std::vector<SelectorTerm>& terms, const NodeLabels& node);
/// MatchesTopology tells whether `node` satisfies a StorageClass's allowedTopologies (an empty
/// list allows every node), as upstream's MatchTopologySelectorTerms.
bool MatchesTopology(const std::vector<std::vector<Requirement>>& terms, const NodeLabels& node);
/// MatchesSelector tells whether `labels` match a label selector (an empty one matches all).
bool MatchesSelector(const LabelSelector& selector, const StringMap& labels);
/// MatchesSelectorOnNode is MatchesSelector against a node's labels.
bool MatchesSelectorOnNode(const LabelSelector& selector, const NodeLabels& node);

/// ClaimNameOf returns the claim a pod volume uses (an ephemeral volume's is "<pod>-<volume>")
/// and whether it is ephemeral; nullopt for other sources. Throws ArgsError for a claimName or
/// a name that is not a string.
std::optional<std::pair<std::string, bool>> ClaimNameOf(const Args& volume,
                                                        std::string_view pod_name);

/// PodUsesClaim tells whether `pod` mounts `claim`: the claim is in the pod's namespace and a
/// persistentVolumeClaim volume names it, or (with `ephemeral`) an ephemeral volume's claim,
/// "<pod>-<volume>", is it. For queueing hints on claim events.
bool PodUsesClaim(const Host& host, const Pod& pod, const Claim& claim, bool ephemeral);

/// ResourceVersion reads an object's metadata.resourceVersion (0 when absent or not a number).
uint64_t ResourceVersion(const Args& object);

/// VersionCache keeps objects decoded (DecodeClaim, DecodeVolume, ...) by key for as long as
/// their resourceVersion stays the same, so a plugin that reads the same objects for every node
/// decodes each once per version. Thread-safe (Filter runs on many nodes at once); an object
/// without a resourceVersion is decoded every time. Entries of objects no longer read (deleted,
/// or no pod uses them now) go: when the cache reaches its limit, those not read since the last
/// sweep are dropped, and the limit becomes twice what stays (at least kMinLimit).
template <class T>
class VersionCache {
 public:
  static constexpr size_t kMinLimit = 4096;

  /// Get returns `object` decoded, by `key` ("namespace/name"); throws what `decode` throws.
  template <class Decode>
  std::shared_ptr<const T> Get(std::string_view key, const Args& object, Decode&& decode) {
    const uint64_t version = ResourceVersion(object);
    if (version == 0) return std::make_shared<const T>(decode(object));
    {
      std::shared_lock lock(mu_);
      auto it = entries_.find(key);
      if (it != entries_.end() && it->second.version == version) {
        it->second.read.store(true, std::memory_order_relaxed);
        return it->second.value;
      }
    }
    auto value = std::make_shared<const T>(decode(object));
    std::unique_lock lock(mu_);
    if (entries_.size() >= limit_ && !entries_.contains(key)) Sweep();
    Entry& e = entries_[std::string(key)];
    e.version = version;
    e.value = value;
    e.read.store(true, std::memory_order_relaxed);
    return value;
  }

  /// size is how many objects the cache holds.
  size_t size() const {
    std::shared_lock lock(mu_);
    return entries_.size();
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct Entry {
    uint64_t version = 0;
    std::shared_ptr<const T> value;
    std::atomic<bool> read{false};  // read since the last sweep
  };
  // Sweep drops the entries not read since the last sweep; called with mu_ held exclusively.
  void Sweep() {
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (it->second.read.exchange(false, std::memory_order_relaxed)) {
        ++it;
      } else {
        it = entries_.erase(it);
      }
    }
    limit_ = std::max(kMinLimit, 2 * entries_.size());
  }

  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, Entry, Hash, std::equal_to<>> entries_;
  size_t limit_ = kMinLimit;  // guarded by mu_
};

}  // namespace schedhost::plugins::storage
