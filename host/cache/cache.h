// Cache: the scheduler's cache of nodes and the pods placed on them (bound or assumed), and the
// source of the per-cycle Snapshot. The scheduling cycle assumes a pod onto its chosen node at
// once (optimistic binding); the binding cycle then confirms it when the store reports the pod
// bound, or forgets it when binding fails. Node infos are kept most recently changed first, so
// UpdateSnapshot copies only those whose generation moved since the snapshot was last updated.
//
//   cache.AssumePod(pod_with_node_name);      // counted on the node from now on
//   cache.UpdateSnapshot(snapshot);           // before the next cycle: copies changed nodes
//   cache.AddPod(bound_pod_from_store);       // confirms the assumed pod (same uid)
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "host/cache/node_info.h"
#include "host/cache/snapshot.h"

namespace schedhost::cache {

/// CacheError reports a call that does not fit the pod's or node's state in the cache (assuming
/// twice, forgetting a pod that is not assumed, removing an unknown node, ...); nothing changed.
class CacheError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// DescribePod names a pod in the cache's messages: "pod <namespace>/<name> (uid <uid>)".
std::string DescribePod(const model::Pod& pod);

/// SnapshotUpdate says what one UpdateSnapshot call did.
struct SnapshotUpdate {
  size_t copied = 0;            // node infos copied from the cache into the snapshot
  size_t removed = 0;           // nodes taken out of the snapshot
  bool lists_rebuilt = false;   // node order, views and name index were rebuilt
  bool images_rebuilt = false;  // image summaries were recomputed for every node
};

/// CachedPod is one pod the cache holds and where it holds it.
struct CachedPod {
  std::shared_ptr<const model::Pod> pod;
  std::string node_name;
  bool assumed = false;
  bool binding_finished = false;  // assumed and FinishBinding was called
};

/// CacheDump is a copy of the cache's contents for debugging and consistency checks.
struct CacheDump {
  std::vector<std::shared_ptr<const model::Node>> nodes;  // sorted by name
  std::vector<std::string> nodeless;  // names of removed nodes whose pods are still cached
  std::vector<CachedPod> pods;        // sorted by namespace/name
};

/// Cache is thread-safe: every method takes the cache's mutex.
class Cache {
 public:
  Cache() = default;
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  /// AddNode adds a node, or replaces the object when the name is already cached (also a node
  /// that was removed while its pods stayed).
  void AddNode(std::shared_ptr<const model::Node> node);
  /// UpdateNode replaces the node object (adding it when unknown, as upstream does).
  void UpdateNode(std::shared_ptr<const model::Node> node);
  /// RemoveNode removes a node; while pods are still cached on it a node-less info keeps them
  /// (left out of snapshots) until they go. Throws CacheError when the node is not cached.
  void RemoveNode(std::string_view name);

  /// SetNamespace adds or replaces a Namespace object (by name); snapshots see it after their
  /// next UpdateSnapshot.
  void SetNamespace(std::shared_ptr<const model::Namespace> ns);
  /// RemoveNamespace forgets the Namespace object `name`; unknown names are ignored.
  void RemoveNamespace(std::string_view name);

  /// AddPod adds a pod the store reports bound (spec.nodeName set). For an assumed pod of the
  /// same uid this confirms it: the object is replaced, counted once, moved if the store names
  /// another node. Throws CacheError for an unbound pod or one already added.
  void AddPod(std::shared_ptr<const model::Pod> pod);
  /// UpdatePod replaces an added (not assumed) pod, moving it when its node changed; throws
  /// CacheError when the pod is unknown or only assumed.
  void UpdatePod(std::shared_ptr<const model::Pod> pod);
  /// RemovePod removes the pod with `uid` (added or assumed); throws CacheError when unknown.
  void RemovePod(std::string_view uid);

  /// AssumePod places a pod with spec.nodeName set on that node before the store binds it.
  /// Throws CacheError when the node name is empty or the uid is already cached.
  void AssumePod(std::shared_ptr<const model::Pod> pod);
  /// FinishBinding records that the binding call for an assumed pod returned; false when the
  /// pod is not assumed (for example already confirmed by the store's event).
  bool FinishBinding(std::string_view uid);
  /// ForgetPod removes an assumed pod whose binding failed; throws CacheError when the pod is
  /// unknown or not assumed (confirmed pods leave through RemovePod).
  void ForgetPod(std::string_view uid);
  /// IsAssumed tells whether the pod with `uid` is assumed and not yet confirmed.
  bool IsAssumed(std::string_view uid) const;
  /// GetPod returns the cached pod with `uid`, or nullptr.
  std::shared_ptr<const model::Pod> GetPod(std::string_view uid) const;

  /// NodeCount returns the number of cached nodes (node-less infos not counted).
  size_t NodeCount() const;
  /// PodCount returns the number of cached pods, assumed ones included.
  size_t PodCount() const;
  /// NodeInfoCopy returns a copy of the node info cached under `name` (node-less ones too), or
  /// nullptr.
  std::unique_ptr<NodeInfo> NodeInfoCopy(std::string_view name) const;
  /// Dump copies the cache's nodes and pods.
  CacheDump Dump() const;

  /// UpdateSnapshot brings `snapshot` up to date: copies node infos whose generation is newer
  /// than the snapshot's, drops removed nodes, and rebuilds node order, lists and image
  /// summaries only when they changed. Nodes are ordered round-robin across zones, as upstream's
  /// node tree. Call it between cycles only, never while the snapshot is being read.
  SnapshotUpdate UpdateSnapshot(Snapshot& snapshot);
  /// UpdateSnapshots brings `first` and, when given, `second` up to date under one lock: both
  /// show the same state of the cluster (a shadow profile's snapshot and the live one). Returns
  /// what the update of `first` did.
  SnapshotUpdate UpdateSnapshots(Snapshot& first, Snapshot* second);

 private:
  SnapshotUpdate UpdateSnapshotLocked(Snapshot& snapshot);  // mu_ held
  struct Item {
    explicit Item(std::string n) : name(std::move(n)) {}
    std::string name;
    std::string zone;  // zone key while it has a node
    NodeInfo info;
  };
  using ItemIt = std::list<Item>::iterator;
  struct PodState {
    std::shared_ptr<const model::Pod> pod;
    bool assumed = false;
    bool binding_finished = false;
  };

  ItemIt ItemFor(const std::string& node_name);
  void MoveToHead(ItemIt it) { items_.splice(items_.begin(), items_, it); }
  void PlacePod(const std::shared_ptr<const model::Pod>& pod);
  void UnplacePod(const model::Pod& pod);
  void SetNodeLocked(std::shared_ptr<const model::Node> node);
  void TreeAdd(const std::string& zone, const std::string& name);
  void TreeRemove(const std::string& zone, const std::string& name);
  std::vector<std::string> TreeList() const;

  mutable std::mutex mu_;
  std::list<Item> items_;  // most recently changed first
  // By name, hashed (a lookup per assumed and bound pod; an ordered map's walk over 50,000
  // names was a cold miss per level). Dump sorts what it lists.
  std::unordered_map<std::string, ItemIt, Snapshot::NameHash, std::equal_to<>> nodes_;
  std::unordered_map<std::string, PodState, Snapshot::NameHash, std::equal_to<>> pods_;  // by uid
  // Node tree: zones in first-seen order, each with its node names in insertion order.
  std::vector<std::pair<std::string, std::vector<std::string>>> zones_;
  size_t num_nodes_ = 0;
  // Namespace objects, replaced as a whole on change so snapshots can share it.
  std::shared_ptr<const NamespaceIndex> namespaces_;
};

}  // namespace schedhost::cache
