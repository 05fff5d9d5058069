#include "host/model/node.h"

#include <utility>

#include "host/model/interner.h"
#include "host/model/view_convert.h"

namespace schedhost::model {
namespace {

constexpr uint64_t kNodeViewMagic = 0x7363686e6f646531ULL;  // "schnode1"

}  // namespace

void ApplyNodeDefaults(NodeData& node) {
  node.metadata.namespace_name.clear();
  if (node.status.allocatable.empty()) node.status.allocatable = node.status.capacity;
  DefaultMeta(node.metadata);
}

std::shared_ptr<const Node> Node::Make(NodeData data) {
  return std::make_shared<const Node>(Key{}, std::move(data));
}

Node::Node(Key /*key*/, NodeData data) : data_(std::move(data)) {
  ApplyNodeDefaults(data_);
  const std::vector<schedhost_resource> allocatable =
      internal::ToResources(data_.status.allocatable);
  allocatable_.assign(allocatable.begin(), allocatable.end());
  capacity_ = internal::ToResources(data_.status.capacity);
  holder_.magic = kNodeViewMagic;
  holder_.owner = this;
  BuildView();
}

const Node* Node::FromView(const schedhost_node_view* v) {
  return internal::OwnerFromView<Node>(v, kNodeViewMagic);
}

void Node::BuildView() {
  Interner& interner = Interner::Global();
  schedhost_node_view& v = holder_.view;
  v.struct_size = sizeof(schedhost_node_view);
  v.name = internal::ToStr(data_.metadata.name);
  v.name_id = interner.Intern(data_.metadata.name);
  v.unschedulable = data_.spec.unschedulable ? 1 : 0;
  v.labels = internal::ConvertLabels(data_.metadata.labels, arena_);

  const auto& taints = data_.spec.taints;
  auto* taint_views = arena_.Array<schedhost_taint>(taints.size());
  for (size_t i = 0; i < taints.size(); ++i) {
    taint_views[i].key = interner.Intern(taints[i].key);
    taint_views[i].value = interner.Intern(taints[i].value);
    taint_views[i].effect = static_cast<int32_t>(taints[i].effect);
  }
  v.taints = taint_views;
  v.taints_len = taints.size();

  v.allocatable = schedhost_resources{allocatable_.data(), allocatable_.size()};
  v.capacity = schedhost_resources{capacity_.data(), capacity_.size()};

  const auto& images = data_.status.images;
  auto* image_views = arena_.Array<schedhost_node_image>(images.size());
  for (size_t i = 0; i < images.size(); ++i) {
    auto* names = arena_.Array<schedhost_str>(images[i].names.size());
    for (size_t j = 0; j < images[i].names.size(); ++j) {
      names[j] = internal::ToStr(images[i].names[j]);
    }
    image_views[i] = {names, images[i].names.size(), images[i].size_bytes};
  }
  v.images = image_views;
  v.images_len = images.size();
  v.resource_version = data_.metadata.resource_version;
}

}  // namespace schedhost::model
