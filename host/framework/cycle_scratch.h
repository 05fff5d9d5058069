// CycleScratch: arrays the host hands to plugins that must stay valid "for the cycle" (e.g. the
// pods nominated to a node). Each array is tagged with the scheduling cycle it was made in and
// freed once that cycle and every binding cycle that started no later have ended, so a plugin
// in a long Permit wait or a slow PreBind never reads freed memory.
//
//   uint64_t cycle = scratch.Begin();    // the scheduling loop, at the start of a cycle
//   scratch.Pin(cycle); ... scratch.Unpin(cycle);   // around that pod's binding cycle
#pragma once

#include <schedhost/plugin.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "host/framework/cluster_access.h"
#include "host/model/pod.h"

namespace schedhost::framework {

/// CycleScratch is thread-safe.
class CycleScratch {
 public:
  /// Begin starts a new scheduling cycle, frees what no live cycle can still read, and returns
  /// the new cycle's number.
  uint64_t Begin() {
    std::lock_guard lock(mu_);
    ++cycle_;
    const uint64_t oldest_live = pins_.empty() ? cycle_ : std::min(cycle_, *pins_.begin());
    while (!blocks_.empty() && blocks_.front()->cycle < oldest_live) blocks_.pop_front();
    return cycle_;
  }
  /// Pin keeps arrays made from cycle `cycle` on alive until the matching Unpin.
  void Pin(uint64_t cycle) {
    std::lock_guard lock(mu_);
    pins_.insert(cycle);
  }
  /// Unpin releases one Pin of `cycle`.
  void Unpin(uint64_t cycle) {
    std::lock_guard lock(mu_);
    if (auto it = pins_.find(cycle); it != pins_.end()) pins_.erase(it);
  }
  /// KeepPods stores `pods` and returns their views as one array (nullptr when empty), valid
  /// as described above.
  const schedhost_pod_view* const* KeepPods(std::vector<std::shared_ptr<const model::Pod>> pods) {
    if (pods.empty()) return nullptr;
    auto block = std::make_unique<Block>();
    block->pods = std::move(pods);
    for (const auto& p : block->pods) block->views.push_back(p->view());
    const schedhost_pod_view* const* out = block->views.data();
    std::lock_guard lock(mu_);
    block->cycle = cycle_;
    blocks_.push_back(std::move(block));
    return out;
  }
  /// KeepPdbs stores `pdbs` (keeping their objects alive) and returns views of them whose
  /// disruptions_allowed is the computed one, as one array (nullptr when empty), valid as above.
  const schedhost_pdb_view* const* KeepPdbs(const std::vector<PdbState>& pdbs) {
    if (pdbs.empty()) return nullptr;
    auto block = std::make_unique<Block>();
    block->pdbs = pdbs;
    block->pdb_views.reserve(pdbs.size());
    for (const PdbState& p : pdbs) {
      schedhost_pdb_view v = *p.pdb->view();
      v.disruptions_allowed = p.disruptions_allowed;
      block->pdb_views.push_back(v);
    }
    for (const schedhost_pdb_view& v : block->pdb_views) block->pdb_view_ptrs.push_back(&v);
    const schedhost_pdb_view* const* out = block->pdb_view_ptrs.data();
    std::lock_guard lock(mu_);
    block->cycle = cycle_;
    blocks_.push_back(std::move(block));
    return out;
  }
  /// KeepObject keeps `object` alive as long as arrays of the current cycle.
  void KeepObject(std::shared_ptr<const void> object) {
    auto block = std::make_unique<Block>();
    block->object = std::move(object);
    std::lock_guard lock(mu_);
    block->cycle = cycle_;
    blocks_.push_back(std::move(block));
  }
  /// size returns how many arrays are kept (for tests).
  size_t size() const {
    std::lock_guard lock(mu_);
    return blocks_.size();
  }

 private:
  struct Block {
    uint64_t cycle = 0;
    std::vector<std::shared_ptr<const model::Pod>> pods;
    std::vector<const schedhost_pod_view*> views;
    std::shared_ptr<const void> object;
    std::vector<PdbState> pdbs;
    std::vector<schedhost_pdb_view> pdb_views;
    std::vector<const schedhost_pdb_view*> pdb_view_ptrs;
  };
  mutable std::mutex mu_;
  uint64_t cycle_ = 0;
  std::multiset<uint64_t> pins_;
  std::deque<std::unique_ptr<Block>> blocks_;  // in cycle order
};

}  // namespace schedhost::framework
