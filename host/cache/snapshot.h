// Snapshot: the immutable view of the cluster one scheduling cycle works on.
//
// Node infos sit in one array, with their ABI views in a parallel contiguous array so plugins
// iterate without indirection. Image summaries (how many nodes hold an image) are computed for
// the whole snapshot, as upstream does for ImageLocality. Between cycles Cache::UpdateSnapshot
// refreshes a snapshot in place, copying only node infos whose generation moved; each NodeInfo
// keeps its address (and so its view) for as long as its node stays in the snapshot.
#pragma once

#include <schedhost/plugin.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "host/cache/node_info.h"
#include "host/model/namespace.h"

namespace schedhost::cache {

class Cache;

/// NamespaceIndex maps interned namespace names to their Namespace objects. Immutable once
/// shared: the cache replaces it on every Namespace change (they are rare) and snapshots hold it.
using NamespaceIndex =
    std::unordered_map<schedhost_id, std::shared_ptr<const model::Namespace>>;

/// Snapshot holds node infos for one cycle; read-only once built, safe to read concurrently.
/// Only Cache::UpdateSnapshot changes it, between cycles, never while it is being read.
class Snapshot {
 public:
  Snapshot() = default;
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;

  /// Build makes a snapshot from nodes and the pods bound to them (pods naming an unknown node
  /// are ignored and counted in ignored_pods()).
  static std::unique_ptr<Snapshot> Build(
      const std::vector<std::shared_ptr<const model::Node>>& nodes,
      const std::vector<std::shared_ptr<const model::Pod>>& pods,
      const std::vector<std::shared_ptr<const model::Namespace>>& namespaces = {});
  /// FromNodeInfos makes a snapshot owning copies of `infos` (order kept).
  static std::unique_ptr<Snapshot> FromNodeInfos(const std::vector<const NodeInfo*>& infos);

  size_t size() const { return infos_.size(); }
  const NodeInfo& at(size_t i) const { return *infos_[i]; }
  /// Get returns the node info of `name`, or nullptr.
  const NodeInfo* Get(std::string_view name) const;
  /// views is the contiguous array of ABI views, index-aligned with at().
  const std::vector<const schedhost_node_info_view*>& views() const { return views_; }
  const std::vector<const schedhost_node_info_view*>& have_pods_with_affinity() const {
    return with_affinity_;
  }
  const std::vector<const schedhost_node_info_view*>& have_pods_with_required_anti_affinity()
      const {
    return with_anti_affinity_;
  }
  /// GetNamespace returns the Namespace object named by `namespace_id`, or nullptr.
  const model::Namespace* GetNamespace(schedhost_id namespace_id) const;
  size_t ignored_pods() const { return ignored_pods_; }
  /// generation is the newest NodeInfo generation the snapshot reflects (0 when built directly).
  uint64_t generation() const { return generation_; }

 private:
  friend class Cache;
  // Transparent hashing so Get(string_view) finds std::string keys without a copy.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  void Index();
  // RebuildLists refills views_, the affinity lists and by_name_ from infos_.
  void RebuildLists();
  // RebuildAffinityLists refills only the affinity lists from views_ (the node set and every
  // node's view address unchanged: a pod with affinity came or went).
  void RebuildAffinityLists();
  // RebuildImageStates recomputes the image summaries and hands each node its states.
  void RebuildImageStates();
  // Find returns the mutable node info of `name`, or nullptr (for Cache::UpdateSnapshot).
  NodeInfo* Find(std::string_view name);
  // Adopt appends a node info for a new node; Reorder must follow before the next read.
  void Adopt(std::unique_ptr<NodeInfo> info);
  // Drop deletes the node info of `name`; Reorder must follow before the next read.
  void Drop(std::string_view name);
  // Reorder arranges infos_ in `names` order (unknown names skipped, unnamed infos dropped)
  // and rebuilds the lists.
  void Reorder(const std::vector<std::string>& names);

  std::vector<std::unique_ptr<NodeInfo>> infos_;
  std::vector<const schedhost_node_info_view*> views_;
  std::vector<const schedhost_node_info_view*> with_affinity_;
  std::vector<const schedhost_node_info_view*> with_anti_affinity_;
  std::unordered_map<std::string, size_t, NameHash, std::equal_to<>> by_name_;
  std::vector<std::string> image_names_;  // storage for image_states names
  std::shared_ptr<const NamespaceIndex> namespaces_;
  size_t ignored_pods_ = 0;
  uint64_t generation_ = 0;
};

}  // namespace schedhost::cache
