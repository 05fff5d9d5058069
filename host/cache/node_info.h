// NodeInfo: one node with the pods placed on it and what they use, aggregated for plugins.
//
// A NodeInfo keeps a ready schedhost_node_info_view pointing into its own arrays, so handing it
// to a plugin costs nothing. Every mutation (AddPod, RemovePod, SetNode) bumps the generation and
// refreshes the view. Copies rebuild their own view (they never share pointers with the source).
#pragma once

#include <schedhost/plugin.h>

#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "host/model/node.h"
#include "host/model/pod.h"

namespace schedhost::cache {

/// NextGeneration returns a process-wide, strictly increasing generation number.
uint64_t NextGeneration();

/// NodeInfo aggregates a node and its pods; not thread-safe for mutation, safe to read
/// concurrently once built.
class NodeInfo {
 public:
  /// kInlineResources is how many requested resources live inside the NodeInfo itself.
  static constexpr size_t kInlineResources = 4;

  NodeInfo();
  explicit NodeInfo(std::shared_ptr<const model::Node> node);
  NodeInfo(const NodeInfo& other);
  NodeInfo& operator=(const NodeInfo& other);
  NodeInfo(NodeInfo&&) = delete;
  NodeInfo& operator=(NodeInfo&&) = delete;

  /// SetNode replaces the node object (keeps the pods).
  void SetNode(std::shared_ptr<const model::Node> node);
  /// AddPod places a pod on this node and adds what it uses.
  void AddPod(std::shared_ptr<const model::Pod> pod);
  /// RemovePod removes the pod with the same uid; returns false when it was not here.
  bool RemovePod(std::string_view uid);
  /// RemovePod removes `pod` itself (found by address, else by uid): what a simulation that
  /// took the pod from this node's list calls, without comparing every uid.
  bool RemovePod(const model::Pod& pod);
  /// RemovePods removes each of `pods` found here (by address, else by uid) and recomputes what
  /// the node uses once; returns how many were removed.
  size_t RemovePods(std::span<const std::shared_ptr<const model::Pod>> pods);
  /// Clear drops the node and its pods but keeps the buffers, for a scratch copy that is
  /// assigned again and again.
  void Clear();
  /// SetImageStates replaces the cluster-wide image summaries (sorted by name) for this node.
  void SetImageStates(std::vector<schedhost_image_state> states);

  const model::Node* node() const { return node_.get(); }
  const std::shared_ptr<const model::Node>& node_ptr() const { return node_; }
  const std::vector<std::shared_ptr<const model::Pod>>& pods() const { return pods_; }
  uint64_t generation() const { return generation_; }
  /// requested returns the summed effective requests of the pods, sorted by resource id.
  std::span<const schedhost_resource> requested() const {
    return {requested_.data(), requested_.size()};
  }
  int64_t Requested(schedhost_id resource) const;

  /// view returns the ABI view; valid until the next mutation of this NodeInfo.
  const schedhost_node_info_view* view() const { return &holder_.view; }
  /// ViewPrefetchBytes is how many bytes from view() on hold the view, the inline requested
  /// resources, the node's view and its inline allocatable resources: one run of consecutive
  /// lines for a plugin that reads the view instead of its summary (the node loops prefetch
  /// only the summary, which is what the builtin plugins read).
  static constexpr size_t ViewPrefetchBytes() {
    return sizeof(Holder) + sizeof(decltype(requested_)) + sizeof(model::Node::ViewHolder) +
           sizeof(decltype(allocatable_));
  }
  /// FromView maps a view handed out by view() back to its NodeInfo.
  static const NodeInfo* FromView(const schedhost_node_info_view* v);

 private:
  struct Holder {
    schedhost_node_info_view view;  // first member: FromView relies on it
    const NodeInfo* owner;
  };
  void Recompute();
  using PodList = std::vector<std::shared_ptr<const model::Pod>>;
  // Find returns `pod` itself in pods_ (by address), else the pod with its uid, else end().
  PodList::iterator Find(const model::Pod& pod);
  bool Erase(PodList::iterator it);
  // PodsChanged recomputes the sums over pods_, takes a new generation and refreshes the view.
  void PodsChanged();
  // Accumulate adds one pod's view to the per-node arrays and sums.
  void Accumulate(const schedhost_pod_view* v);
  // TakeNodeView copies node_'s view and allocatable resources into node_holder_ and
  // allocatable_; called wherever node_ changes (RefreshView only points at the copy).
  void TakeNodeView();
  void RefreshView();
  // FillSummary copies into the view's summary (abi 1.3) what it summarises; RefreshView's last
  // step, once the view and the node's view copy are current.
  void FillSummary();

  std::shared_ptr<const model::Node> node_;
  std::vector<std::shared_ptr<const model::Pod>> pods_;
  std::vector<const schedhost_pod_view*> pod_views_;
  std::vector<const schedhost_pod_view*> affinity_views_;
  std::vector<const schedhost_pod_view*> anti_affinity_views_;
  int64_t non_zero_cpu_ = 0;
  int64_t non_zero_memory_ = 0;
  std::vector<schedhost_used_port> used_ports_;
  std::vector<schedhost_image_state> image_states_;
  uint64_t generation_ = 0;
  Holder holder_{};
  // Right after the view, so the few resources pods usually request (cpu, memory, ...) share
  // its cache lines and page: the Filter loop prefetches them with the view
  // (kViewPrefetchBytes) instead of following a pointer to a separate allocation per node.
  boost::container::small_vector<schedhost_resource, kInlineResources> requested_;
  // A copy of the node's view (with its FromView tag) and of its allocatable resources, which the
  // view's `node` points to: what every Filter and Score reads of the node is in these few
  // consecutive cache lines instead of in a second allocation (the Node, with its data between the
  // lines a plugin reads). The node object is immutable, so the copy never goes stale; it is taken
  // again whenever node_ changes (TakeNodeView). The view's other arrays (labels, taints, ...)
  // point into the node, which node_ keeps alive.
  model::Node::ViewHolder node_holder_{};
  boost::container::small_vector<schedhost_resource, kInlineResources> allocatable_;
};

/// HasAffinity tells whether a pod has pod affinity or anti-affinity terms of any kind.
bool HasAffinity(const schedhost_pod_view& pod);
/// HasRequiredAntiAffinity tells whether a pod has required anti-affinity terms.
bool HasRequiredAntiAffinity(const schedhost_pod_view& pod);

/// ScratchCopy is a copy of a node info made in a per-thread buffer that keeps its capacity,
/// so a simulation that copies a node per step (a preemption dry run, Filter with nominated
/// pods) stops allocating once warm. A few may be alive at once on a thread (one simulation
/// inside another); beyond that a copy is allocated. The buffer is cleared when the copy goes
/// away, so it keeps no pod alive.
class ScratchCopy {
 public:
  explicit ScratchCopy(const NodeInfo& source);
  ~ScratchCopy();
  ScratchCopy(const ScratchCopy&) = delete;
  ScratchCopy& operator=(const ScratchCopy&) = delete;

  NodeInfo& operator*() const { return *node_; }
  NodeInfo* operator->() const { return node_; }

 private:
  int slot_ = -1;
  std::unique_ptr<NodeInfo> own_;
  NodeInfo* node_ = nullptr;
};

}  // namespace schedhost::cache
