// Snapshot: the immutable view of the cluster one scheduling cycle works on.
//
// Node infos sit in one array, with their ABI views in a parallel contiguous array so plugins
// iterate without indirection. Image summaries (how many nodes hold an image) are computed for
// the whole snapshot, as upstream does for ImageLocality.
#pragma once

#include <schedhost/plugin.h>

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "host/cache/node_info.h"

namespace schedhost::cache {

/// NormalizedImageName returns an image name with ":latest" added when it has no tag or digest.
std::string NormalizedImageName(std::string_view name);

/// Snapshot holds node infos for one cycle; read-only once built, safe to read concurrently.
class Snapshot {
 public:
  Snapshot() = default;
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;

  /// Build makes a snapshot from nodes and the pods bound to them (pods naming an unknown node
  /// are ignored and counted in ignored_pods()).
  static std::unique_ptr<Snapshot> Build(
      const std::vector<std::shared_ptr<const model::Node>>& nodes,
      const std::vector<std::shared_ptr<const model::Pod>>& pods);
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
  const std::vector<const schedhost_node_info_view*>& have_pods_with_required_anti_affinity() const {
    return with_anti_affinity_;
  }
  size_t ignored_pods() const { return ignored_pods_; }

 private:
  void Index();

  std::vector<std::unique_ptr<NodeInfo>> infos_;
  std::vector<const schedhost_node_info_view*> views_;
  std::vector<const schedhost_node_info_view*> with_affinity_;
  std::vector<const schedhost_node_info_view*> with_anti_affinity_;
  std::unordered_map<std::string_view, size_t> by_name_;
  std::vector<std::string> image_names_;  // storage for image_states names
  size_t ignored_pods_ = 0;
};

}  // namespace schedhost::cache
