// Nominator: which pending pods preemption has nominated to which nodes (reference/000). Filter
// counts the nominated pods of equal or higher priority as present on their node, so resources
// freed by preemption stay reserved for the preemptor while its victims terminate.
// Indexed by node (its interned name id; pods in insertion order) and by pod uid; thread-safe.
//
//   nominator.Add(pod, "node-1");                  // after a successful PostFilter
//   for (auto& p : nominator.NominatedPodsForNode("node-1")) ...
//   nominator.Delete(*pod);                        // when the pod is assumed
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "host/model/pod.h"

namespace schedhost::queue {

/// Nominator keeps the nominated pods; every method takes its own lock.
class Nominator {
 public:
  /// Add nominates `pod` to `node_name`, replacing any earlier nomination of the pod; an empty
  /// `node_name` falls back to the pod's status.nominatedNodeName, and when both are empty the
  /// pod ends up not nominated.
  void Add(std::shared_ptr<const model::Pod> pod, std::string_view node_name);
  /// CopyFrom makes this nominator hold what `other` holds now (a shadow profile's cycle reads
  /// the nominations its live cycle saw).
  void CopyFrom(const Nominator& other);
  /// Delete removes the nomination of the pod with `pod`'s uid, if any.
  void Delete(const model::Pod& pod);
  /// Update replaces `old_pod` by `new_pod`. When neither carries a status.nominatedNodeName but
  /// the pod was nominated (by the scheduler, before the API caught up), the nomination is kept;
  /// otherwise the new pod's own status.nominatedNodeName decides (setting, changing or
  /// clearing it).
  void Update(const model::Pod& old_pod, std::shared_ptr<const model::Pod> new_pod);
  /// NominatedPodsForNode returns the pods nominated to `node_name` in nomination order; the
  /// shared_ptrs stay valid after the call, without the lock.
  std::vector<std::shared_ptr<const model::Pod>> NominatedPodsForNode(
      std::string_view node_name) const;
  /// ForEachNominatedPod calls `fn(const std::shared_ptr<const model::Pod>&)` for each pod
  /// nominated to the node whose interned name id is `node`, in nomination order, without
  /// copying the list: Filter asks this for every node. `fn` runs under the nominator's read
  /// lock, so it must not call into the nominator (copy what it needs, act after).
  template <typename Fn>
  void ForEachNominatedPod(schedhost_id node, Fn&& fn) const {
    std::shared_lock lock(mu_);
    auto it = pods_by_node_.find(node);
    if (it == pods_by_node_.end()) return;
    for (const auto& pod : it->second) fn(pod);
  }
  /// NominatedNodeFor returns the node the pod with `uid` is nominated to, or "".
  std::string NominatedNodeFor(std::string_view uid) const;
  /// Size returns how many pods are nominated; lock-free (Filter asks it for every node).
  size_t Size() const { return size_.load(std::memory_order_acquire); }
  /// CheckInvariants returns "" when the two indexes agree, else what is wrong.
  std::string CheckInvariants() const;

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  template <typename V>
  using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

  void AddLocked(std::shared_ptr<const model::Pod> pod, std::string_view node_name);
  void DeleteLocked(std::string_view uid);

  mutable std::shared_mutex mu_;
  std::unordered_map<schedhost_id, std::vector<std::shared_ptr<const model::Pod>>> pods_by_node_;
  StringMap<schedhost_id> node_by_uid_;  // the node's interned name id
  std::atomic<size_t> size_{0};  // node_by_uid_.size(), written under mu_
};

}  // namespace schedhost::queue
