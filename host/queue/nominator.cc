#include "host/queue/nominator.h"

#include <algorithm>
#include <mutex>
#include <utility>

#include "host/model/interner.h"

namespace schedhost::queue {

void Nominator::Add(std::shared_ptr<const model::Pod> pod, std::string_view node_name) {
  if (!pod) return;
  std::unique_lock lock(mu_);
  AddLocked(std::move(pod), node_name);
}

void Nominator::CopyFrom(const Nominator& other) {
  if (&other == this) return;
  std::shared_lock from(other.mu_);
  std::unique_lock to(mu_);
  pods_by_node_ = other.pods_by_node_;
  node_by_uid_ = other.node_by_uid_;
  size_.store(node_by_uid_.size(), std::memory_order_release);
}

void Nominator::Delete(const model::Pod& pod) {
  std::unique_lock lock(mu_);
  DeleteLocked(pod.uid());
}

void Nominator::Update(const model::Pod& old_pod, std::shared_ptr<const model::Pod> new_pod) {
  if (!new_pod) return;
  std::unique_lock lock(mu_);
  // An update that neither sets, changes nor clears status.nominatedNodeName comes from
  // something else (labels, spec); the nomination the scheduler made may not have reached the
  // API yet, so it is kept. Every other case follows the new pod's own field.
  std::string_view node;  // the interner's copy: it outlives the deletion below
  if (old_pod.nominated_node_name().empty() && new_pod->nominated_node_name().empty()) {
    if (auto it = node_by_uid_.find(old_pod.uid()); it != node_by_uid_.end()) {
      node = model::Interner::Global().Str(it->second);
    }
  }
  // Always re-added, even with the same node, so the index holds the newest object.
  DeleteLocked(old_pod.uid());
  AddLocked(std::move(new_pod), node);
}

std::vector<std::shared_ptr<const model::Pod>> Nominator::NominatedPodsForNode(
    std::string_view node_name) const {
  const schedhost_id node = model::Interner::Global().Lookup(node_name);
  if (node == 0) return {};
  std::shared_lock lock(mu_);
  auto it = pods_by_node_.find(node);
  if (it == pods_by_node_.end()) return {};
  return it->second;
}

std::string Nominator::NominatedNodeFor(std::string_view uid) const {
  std::shared_lock lock(mu_);
  auto it = node_by_uid_.find(uid);
  return it == node_by_uid_.end() ? std::string()
                                  : std::string(model::Interner::Global().Str(it->second));
}

std::string Nominator::CheckInvariants() const {
  std::shared_lock lock(mu_);
  size_t listed = 0;
  for (const auto& [node_id, pods] : pods_by_node_) {
    const std::string node(model::Interner::Global().Str(node_id));
    if (pods.empty()) return "nominator: node " + node + " has an empty pod list";
    for (const auto& pod : pods) {
      ++listed;
      auto it = node_by_uid_.find(pod->uid());
      if (it == node_by_uid_.end()) {
        return "nominator: pod " + std::string(pod->uid()) + " listed on node " + node +
               " has no uid entry";
      }
      if (it->second != node_id) {
        return "nominator: pod " + std::string(pod->uid()) + " listed on node " + node +
               " but indexed to node " + std::string(model::Interner::Global().Str(it->second));
      }
    }
  }
  if (listed != node_by_uid_.size()) {
    return "nominator: " + std::to_string(listed) + " pods listed by node but " +
           std::to_string(node_by_uid_.size()) + " indexed by uid";
  }
  return "";
}

void Nominator::AddLocked(std::shared_ptr<const model::Pod> pod, std::string_view node_name) {
  // Deleting first keeps one entry per pod; the per-node lists cannot deduplicate themselves.
  DeleteLocked(pod->uid());
  // The caller's node is the newest knowledge (a PostFilter result), so it wins over the
  // pod's status, which may lag behind.
  std::string_view node = node_name;
  if (node.empty()) node = pod->nominated_node_name();
  if (node.empty()) return;
  const schedhost_id node_id = model::Interner::Global().Intern(node);
  node_by_uid_.insert_or_assign(std::string(pod->uid()), node_id);
  size_.store(node_by_uid_.size(), std::memory_order_release);
  pods_by_node_[node_id].push_back(std::move(pod));
}

void Nominator::DeleteLocked(std::string_view uid) {
  auto it = node_by_uid_.find(uid);
  if (it == node_by_uid_.end()) return;
  auto list = pods_by_node_.find(it->second);
  if (list != pods_by_node_.end()) {
    auto& pods = list->second;
    auto pos =
        std::find_if(pods.begin(), pods.end(), [&](const auto& p) { return p->uid() == uid; });
    if (pos != pods.end()) pods.erase(pos);
    if (pods.empty()) pods_by_node_.erase(list);
  }
  node_by_uid_.erase(it);
  size_.store(node_by_uid_.size(), std::memory_order_release);
}

}  // namespace schedhost::queue
