// Nodes: NodeData mirrors the scheduling-relevant fields of core/v1 Node; Node is the immutable
// made object with interned labels, taints, resources and a ready schedhost_node_view.
// Node::Make applies the API server's default of allocatable = capacity when absent.
#pragma once

#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "host/model/affinity.h"
#include "host/model/meta.h"
#include "host/model/quantity.h"
#include "host/model/view_arena.h"
#include "schedhost/plugin.h"

namespace schedhost::model {

// NodeSpec mirrors the scheduling-relevant fields of core/v1 NodeSpec.
struct NodeSpec {
  bool unschedulable = false;
  std::vector<Taint> taints;
};

// ContainerImage mirrors core/v1 ContainerImage (an image present on the node).
struct ContainerImage {
  std::vector<std::string> names;
  int64_t size_bytes = 0;
};

// NodeCondition mirrors the type and status of a core/v1 NodeCondition.
struct NodeCondition {
  std::string type;    // e.g. "Ready"
  std::string status;  // "True", "False" or "Unknown"
};

// NodeStatus mirrors the scheduling-relevant fields of core/v1 NodeStatus.
struct NodeStatus {
  ResourceList capacity;
  ResourceList allocatable;  // Defaulted to capacity when empty.
  std::vector<ContainerImage> images;
  std::vector<NodeCondition> conditions;
};

// NodeData is a whole node as plain data.
struct NodeData {
  ObjectMeta metadata;  // Cluster-scoped: namespace_name stays "".
  NodeSpec spec;
  NodeStatus status;
};

// ApplyNodeDefaults clears the namespace (nodes are cluster-scoped), fills allocatable from
// capacity when it is empty, normalizes labels and generates a missing uid; idempotent.
void ApplyNodeDefaults(NodeData& node);

// Node is an immutable node shared as shared_ptr<const Node>; its view lives as long as it does.
class Node {
  struct Key {  // private: only Make can construct
    explicit Key() = default;
  };

 public:
  // Make applies the defaults, interns strings and builds the view.
  static std::shared_ptr<const Node> Make(NodeData data);
  // For Make only (Key is private): the object and its shared_ptr's count share one allocation.
  Node(Key key, NodeData data);

  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // data returns the (defaulted) plain data.
  const NodeData& data() const { return data_; }
  // metadata returns data().metadata (every made object has it, as Pod does).
  const ObjectMeta& metadata() const { return data_.metadata; }
  // view returns the ABI view, fully filled, with struct_size == sizeof(schedhost_node_view).
  const schedhost_node_view* view() const { return &holder_.view; }
  // FromView returns the node whose view() is `v`; nullptr for null (and, via a tag
  // stored beside the view, for most views it did not make: pass only views the host made).
  static const Node* FromView(const schedhost_node_view* v);
  /// ViewHolder is the view with what FromView reads beside it; a copy (what a NodeInfo keeps,
  /// next to its own view) converts back to this node like view() does.
  using ViewHolder = internal::ViewHolder<schedhost_node_view, Node>;
  const ViewHolder& view_holder() const { return holder_; }

  // name returns metadata.name.
  const std::string& name() const { return data_.metadata.name; }
  // namespace_name returns metadata.namespace ("": the kind is cluster-scoped).
  const std::string& namespace_name() const { return data_.metadata.namespace_name; }
  // uid returns metadata.uid.
  const std::string& uid() const { return data_.metadata.uid; }
  // resource_version returns metadata.resourceVersion (0 when unknown).
  uint64_t resource_version() const { return data_.metadata.resource_version; }
  // creation_timestamp_ns returns metadata.creationTimestamp in Unix ns (0 when unknown).
  int64_t creation_timestamp_ns() const { return data_.metadata.creation_timestamp_ns; }
  // name_id returns the interned id of the name.
  schedhost_id name_id() const { return holder_.view.name_id; }
  // allocatable returns status.allocatable sorted by name id (cpu in millicores).
  std::span<const schedhost_resource> allocatable() const {
    return {allocatable_.data(), allocatable_.size()};
  }

 private:
  void BuildView();

  NodeData data_;
  std::vector<schedhost_resource> capacity_;
  internal::InlineViewArena arena_;
  internal::ViewHolder<schedhost_node_view, Node> holder_{};
  // Right after the view, so that the allocatable resources Filter and Score read for every
  // node share its cache lines instead of being a separate allocation to wait for.
  boost::container::small_vector<schedhost_resource, 4> allocatable_;
};

}  // namespace schedhost::model
