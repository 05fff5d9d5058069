// Cache: node and pod bookkeeping (assume / confirm / forget, node removal with pods left),
// the zone-interleaved node order, and the incremental snapshot update.
#include "host/cache/cache.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "host/model/interner.h"

namespace schedhost::cache {

std::string DescribePod(const model::Pod& pod) {
  return "pod " + pod.Key() + " (uid " + std::string(pod.uid()) + ")";
}

namespace {

// ZoneKey groups nodes as upstream's node tree does: by region and zone labels.
std::string ZoneKey(const model::Node& node) {
  const model::Labels& labels = node.metadata().labels;
  auto get = [&](std::string_view key, std::string_view legacy) {
    const std::string* v = model::FindLabel(labels, key);
    if (v == nullptr) v = model::FindLabel(labels, legacy);
    return v == nullptr ? std::string() : *v;
  };
  std::string region =
      get("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region");
  std::string zone = get("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone");
  if (region.empty() && zone.empty()) return "";
  return region + std::string(":\0:", 3) + zone;
}

bool SameImages(const model::Node* a, const model::Node* b) {
  if (a == b) return true;
  if (a == nullptr || b == nullptr) return false;
  const auto& x = a->data().status.images;
  const auto& y = b->data().status.images;
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].names != y[i].names || x[i].size_bytes != y[i].size_bytes) return false;
  }
  return true;
}

}  // namespace

// --- Node tree -----------------------------------------------------------------------------

void Cache::TreeAdd(const std::string& zone, const std::string& name) {
  auto it =
      std::find_if(zones_.begin(), zones_.end(), [&](const auto& z) { return z.first == zone; });
  if (it == zones_.end()) it = zones_.insert(zones_.end(), {zone, {}});
  it->second.push_back(name);
  ++num_nodes_;
}

void Cache::TreeRemove(const std::string& zone, const std::string& name) {
  auto it =
      std::find_if(zones_.begin(), zones_.end(), [&](const auto& z) { return z.first == zone; });
  if (it == zones_.end()) return;
  auto pos = std::find(it->second.begin(), it->second.end(), name);
  if (pos == it->second.end()) return;
  it->second.erase(pos);
  --num_nodes_;
  if (it->second.empty()) zones_.erase(it);
}

std::vector<std::string> Cache::TreeList() const {
  // One node from each zone in turn, so the first nodes a cycle samples span the zones.
  std::vector<std::string> out;
  out.reserve(num_nodes_);
  for (size_t index = 0; out.size() < num_nodes_; ++index) {
    for (const auto& [zone, names] : zones_) {
      if (index < names.size()) out.push_back(names[index]);
    }
  }
  return out;
}

// --- Nodes ---------------------------------------------------------------------------------

Cache::ItemIt Cache::ItemFor(const std::string& node_name) {
  auto it = nodes_.find(node_name);
  if (it != nodes_.end()) return it->second;
  items_.emplace_front(node_name);
  nodes_.emplace(node_name, items_.begin());
  return items_.begin();
}

void Cache::SetNodeLocked(std::shared_ptr<const model::Node> node) {
  if (node == nullptr) throw CacheError("cache: node is null");
  ItemIt it = ItemFor(node->name());
  std::string zone = ZoneKey(*node);
  if (it->info.node() == nullptr) {
    TreeAdd(zone, it->name);
  } else if (zone != it->zone) {
    TreeRemove(it->zone, it->name);
    TreeAdd(zone, it->name);
  }
  it->zone = std::move(zone);
  it->info.SetNode(std::move(node));
  MoveToHead(it);
}

void Cache::AddNode(std::shared_ptr<const model::Node> node) {
  std::lock_guard lock(mu_);
  SetNodeLocked(std::move(node));
}

void Cache::UpdateNode(std::shared_ptr<const model::Node> node) {
  std::lock_guard lock(mu_);
  SetNodeLocked(std::move(node));
}

void Cache::RemoveNode(std::string_view name) {
  std::lock_guard lock(mu_);
  auto found = nodes_.find(name);
  if (found == nodes_.end() || found->second->info.node() == nullptr) {
    throw CacheError("node " + std::string(name) + " is not in the cache, so it cannot be removed");
  }
  ItemIt it = found->second;
  TreeRemove(it->zone, it->name);
  if (it->info.pods().empty()) {
    nodes_.erase(found);
    items_.erase(it);
    return;
  }
  // Its pods are still reported by the store; keep them until they are removed.
  it->info.SetNode(nullptr);
  it->zone.clear();
  MoveToHead(it);
}

// --- Pods ----------------------------------------------------------------------------------

void Cache::PlacePod(const std::shared_ptr<const model::Pod>& pod) {
  ItemIt it = ItemFor(std::string(pod->node_name()));
  it->info.AddPod(pod);
  MoveToHead(it);
}

void Cache::UnplacePod(const model::Pod& pod) {
  auto found = nodes_.find(pod.node_name());
  if (found == nodes_.end()) return;
  ItemIt it = found->second;
  it->info.RemovePod(pod.uid());
  if (it->info.node() == nullptr && it->info.pods().empty()) {
    nodes_.erase(found);
    items_.erase(it);
    return;
  }
  MoveToHead(it);
}

void Cache::AssumePod(std::shared_ptr<const model::Pod> pod) {
  if (pod == nullptr) throw CacheError("cache: AssumePod got a null pod");
  if (pod->node_name().empty()) {
    throw CacheError(DescribePod(*pod) +
                     " has no spec.nodeName; set the chosen node before assuming");
  }
  std::lock_guard lock(mu_);
  auto found = pods_.find(pod->uid());
  if (found != pods_.end()) {
    throw CacheError(DescribePod(*pod) + " is already in the cache (" +
                     (found->second.assumed ? "assumed" : "bound") + " on " +
                     std::string(found->second.pod->node_name()) + "), so it cannot be assumed");
  }
  PlacePod(pod);
  std::string uid(pod->uid());
  pods_.emplace(std::move(uid), PodState{std::move(pod), true, false});
}

bool Cache::FinishBinding(std::string_view uid) {
  std::lock_guard lock(mu_);
  auto found = pods_.find(uid);
  if (found == pods_.end() || !found->second.assumed) return false;
  found->second.binding_finished = true;
  return true;
}

void Cache::ForgetPod(std::string_view uid) {
  std::lock_guard lock(mu_);
  auto found = pods_.find(uid);
  if (found == pods_.end()) {
    throw CacheError("pod with uid " + std::string(uid) +
                     " is not in the cache, so it cannot be forgotten");
  }
  if (!found->second.assumed) {
    throw CacheError(DescribePod(*found->second.pod) +
                     " is bound, not assumed, so it cannot be forgotten; use RemovePod");
  }
  UnplacePod(*found->second.pod);
  pods_.erase(found);
}

void Cache::AddPod(std::shared_ptr<const model::Pod> pod) {
  if (pod == nullptr) throw CacheError("cache: AddPod got a null pod");
  if (pod->node_name().empty()) {
    throw CacheError(DescribePod(*pod) + " is not bound (no spec.nodeName), so it cannot be added");
  }
  std::lock_guard lock(mu_);
  auto found = pods_.find(pod->uid());
  if (found == pods_.end()) {
    PlacePod(pod);
    std::string uid(pod->uid());
    pods_.emplace(std::move(uid), PodState{std::move(pod), false, false});
    return;
  }
  if (!found->second.assumed) {
    throw CacheError(DescribePod(*pod) + " was already added to the cache (on " +
                     std::string(found->second.pod->node_name()) + "); use UpdatePod");
  }
  // Confirmation: swap the assumed object for the stored one (moving it if the store disagrees).
  UnplacePod(*found->second.pod);
  PlacePod(pod);
  found->second = PodState{std::move(pod), false, false};
}

void Cache::UpdatePod(std::shared_ptr<const model::Pod> pod) {
  if (pod == nullptr) throw CacheError("cache: UpdatePod got a null pod");
  if (pod->node_name().empty()) {
    throw CacheError(DescribePod(*pod) +
                     " has no spec.nodeName; a cached pod cannot become unbound");
  }
  std::lock_guard lock(mu_);
  auto found = pods_.find(pod->uid());
  if (found == pods_.end()) {
    throw CacheError(DescribePod(*pod) + " is not in the cache, so it cannot be updated");
  }
  if (found->second.assumed) {
    throw CacheError(DescribePod(*pod) +
                     " is assumed; it changes only through AddPod (confirm) "
                     "or ForgetPod");
  }
  UnplacePod(*found->second.pod);
  PlacePod(pod);
  found->second.pod = std::move(pod);
}

void Cache::RemovePod(std::string_view uid) {
  std::lock_guard lock(mu_);
  auto found = pods_.find(uid);
  if (found == pods_.end()) {
    throw CacheError("pod with uid " + std::string(uid) +
                     " is not in the cache, so it cannot be removed");
  }
  UnplacePod(*found->second.pod);
  pods_.erase(found);
}

bool Cache::IsAssumed(std::string_view uid) const {
  std::lock_guard lock(mu_);
  auto found = pods_.find(uid);
  return found != pods_.end() && found->second.assumed;
}

std::shared_ptr<const model::Pod> Cache::GetPod(std::string_view uid) const {
  std::lock_guard lock(mu_);
  auto found = pods_.find(uid);
  return found == pods_.end() ? nullptr : found->second.pod;
}

size_t Cache::NodeCount() const {
  std::lock_guard lock(mu_);
  return num_nodes_;
}

size_t Cache::PodCount() const {
  std::lock_guard lock(mu_);
  return pods_.size();
}

std::unique_ptr<NodeInfo> Cache::NodeInfoCopy(std::string_view name) const {
  std::lock_guard lock(mu_);
  auto found = nodes_.find(name);
  return found == nodes_.end() ? nullptr : std::make_unique<NodeInfo>(found->second->info);
}

CacheDump Cache::Dump() const {
  std::lock_guard lock(mu_);
  CacheDump dump;
  for (const auto& [name, it] : nodes_) {
    if (it->info.node() != nullptr) {
      dump.nodes.push_back(it->info.node_ptr());
    } else {
      dump.nodeless.push_back(name);
    }
  }
  std::sort(dump.nodes.begin(), dump.nodes.end(),
            [](const auto& a, const auto& b) { return a->name() < b->name(); });
  std::sort(dump.nodeless.begin(), dump.nodeless.end());
  for (const auto& [uid, state] : pods_) {
    dump.pods.push_back(CachedPod{state.pod, std::string(state.pod->node_name()), state.assumed,
                                  state.binding_finished});
  }
  std::sort(dump.pods.begin(), dump.pods.end(), [](const CachedPod& a, const CachedPod& b) {
    return std::make_tuple(a.pod->namespace_name(), a.pod->name(), a.pod->uid()) <
           std::make_tuple(b.pod->namespace_name(), b.pod->name(), b.pod->uid());
  });
  return dump;
}

// --- Snapshot ------------------------------------------------------------------------------

void Cache::SetNamespace(std::shared_ptr<const model::Namespace> ns) {
  if (!ns) throw CacheError("SetNamespace: null namespace");
  std::lock_guard lock(mu_);
  auto index = namespaces_ ? std::make_shared<NamespaceIndex>(*namespaces_)
                           : std::make_shared<NamespaceIndex>();
  const schedhost_id id = ns->name_id();
  (*index)[id] = std::move(ns);
  namespaces_ = std::move(index);
}

void Cache::RemoveNamespace(std::string_view name) {
  std::lock_guard lock(mu_);
  if (!namespaces_) return;
  const schedhost_id id = model::Interner::Global().Lookup(name);
  if (id == 0 || namespaces_->count(id) == 0) return;
  auto index = std::make_shared<NamespaceIndex>(*namespaces_);
  index->erase(id);
  namespaces_ = std::move(index);
}

SnapshotUpdate Cache::UpdateSnapshot(Snapshot& snapshot) {
  std::lock_guard lock(mu_);
  return UpdateSnapshotLocked(snapshot);
}

SnapshotUpdate Cache::UpdateSnapshots(Snapshot& first, Snapshot* second) {
  std::lock_guard lock(mu_);
  if (second != nullptr) UpdateSnapshotLocked(*second);
  return UpdateSnapshotLocked(first);
}

SnapshotUpdate Cache::UpdateSnapshotLocked(Snapshot& snapshot) {
  SnapshotUpdate result;
  snapshot.namespaces_ = namespaces_;
  bool affinity_changed = false;
  // Items are newest first: stop at the first one the snapshot already reflects.
  for (Item& item : items_) {
    if (item.info.generation() <= snapshot.generation_) break;
    NodeInfo* existing = snapshot.Find(item.name);
    if (item.info.node() == nullptr) {  // removed node whose pods are still here
      if (existing != nullptr) {
        snapshot.Drop(item.name);
        ++result.removed;
        result.lists_rebuilt = true;
      }
      continue;
    }
    ++result.copied;
    if (existing == nullptr) {
      snapshot.Adopt(std::make_unique<NodeInfo>(item.info));
      result.lists_rebuilt = true;
      result.images_rebuilt = true;
      continue;
    }
    const schedhost_node_info_view* before = existing->view();
    const bool had_affinity = before->pods_with_affinity_len > 0;
    const bool had_anti_affinity = before->pods_with_required_anti_affinity_len > 0;
    const bool same_images = SameImages(existing->node(), item.info.node());
    std::vector<schedhost_image_state> states(before->image_states,
                                              before->image_states + before->image_states_len);
    *existing = item.info;  // same object, so its view keeps its address
    if (same_images && !states.empty()) existing->SetImageStates(std::move(states));
    if (!same_images) result.images_rebuilt = true;
    const schedhost_node_info_view* after = existing->view();
    affinity_changed |= had_affinity != (after->pods_with_affinity_len > 0) ||
                        had_anti_affinity != (after->pods_with_required_anti_affinity_len > 0);
  }
  if (!items_.empty())
    snapshot.generation_ = std::max(snapshot.generation_, items_.front().info.generation());
  // Nodes deleted outright are no longer in items_; the snapshot then has names too many.
  if (snapshot.by_name_.size() > num_nodes_) {
    std::vector<std::string> gone;
    for (const auto& [name, index] : snapshot.by_name_) {
      auto found = nodes_.find(name);
      if (found == nodes_.end() || found->second->info.node() == nullptr) gone.push_back(name);
    }
    for (const std::string& name : gone) snapshot.Drop(name);
    result.removed += gone.size();
    result.lists_rebuilt = result.lists_rebuilt || !gone.empty();
    result.images_rebuilt = result.images_rebuilt || !gone.empty();
  }
  if (result.lists_rebuilt) {
    snapshot.Reorder(TreeList());
  } else if (affinity_changed) {
    snapshot.RebuildAffinityLists();
  }
  if (snapshot.infos_.size() != num_nodes_) {
    // The snapshot lost track (e.g. it was last updated from another cache): copy everything.
    snapshot.infos_.clear();
    snapshot.by_name_.clear();
    result.copied = 0;
    for (const Item& item : items_) {
      if (item.info.node() == nullptr) continue;
      snapshot.Adopt(std::make_unique<NodeInfo>(item.info));
      ++result.copied;
    }
    snapshot.Reorder(TreeList());
    result.lists_rebuilt = true;
    result.images_rebuilt = true;
  }
  if (result.images_rebuilt) snapshot.RebuildImageStates();
  return result;
}

}  // namespace schedhost::cache
