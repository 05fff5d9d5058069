#include "host/cache/snapshot.h"

#include <algorithm>
#include <map>

namespace schedhost::cache {

const NodeInfo* Snapshot::Get(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : infos_[it->second].get();
}

std::unique_ptr<Snapshot> Snapshot::Build(
    const std::vector<std::shared_ptr<const model::Node>>& nodes,
    const std::vector<std::shared_ptr<const model::Pod>>& pods,
    const std::vector<std::shared_ptr<const model::Namespace>>& namespaces) {
  auto snap = std::make_unique<Snapshot>();
  if (!namespaces.empty()) {
    auto index = std::make_shared<NamespaceIndex>();
    for (const auto& ns : namespaces) (*index)[ns->name_id()] = ns;
    snap->namespaces_ = std::move(index);
  }
  std::unordered_map<std::string_view, NodeInfo*> by_name;
  for (const auto& n : nodes) {
    snap->infos_.push_back(std::make_unique<NodeInfo>(n));
    by_name[snap->infos_.back()->node()->name()] = snap->infos_.back().get();
  }
  for (const auto& p : pods) {
    auto it = by_name.find(p->node_name());
    if (p->node_name().empty() || it == by_name.end()) {
      ++snap->ignored_pods_;
      continue;
    }
    it->second->AddPod(p);
  }
  snap->Index();
  return snap;
}

const model::Namespace* Snapshot::GetNamespace(schedhost_id namespace_id) const {
  if (!namespaces_) return nullptr;
  auto it = namespaces_->find(namespace_id);
  return it == namespaces_->end() ? nullptr : it->second.get();
}

std::unique_ptr<Snapshot> Snapshot::FromNodeInfos(const std::vector<const NodeInfo*>& infos) {
  auto snap = std::make_unique<Snapshot>();
  for (const NodeInfo* ni : infos) snap->infos_.push_back(std::make_unique<NodeInfo>(*ni));
  snap->Index();
  return snap;
}

void Snapshot::Index() {
  RebuildImageStates();
  RebuildLists();
}

void Snapshot::RebuildImageStates() {
  // Image summaries: size and how many nodes hold each normalised image name.
  struct Summary {
    int64_t size = 0;
    int32_t nodes = 0;
  };
  std::map<std::string, Summary> images;
  std::vector<std::vector<std::string>> per_node(infos_.size());
  for (size_t i = 0; i < infos_.size(); ++i) {
    const model::Node* node = infos_[i]->node();
    if (node == nullptr) continue;
    const schedhost_node_view* nv = node->view();
    for (size_t k = 0; k < nv->images_len; ++k) {
      const auto& img = nv->images[k];
      for (size_t j = 0; j < img.names_len; ++j) {
        // The names as the node reports them: upstream's cache keys image states by them
        // unchanged (only the pod's image gets ":latest" when untagged, in ImageLocality).
        std::string n(img.names[j].data, img.names[j].len);
        if (std::find(per_node[i].begin(), per_node[i].end(), n) != per_node[i].end()) continue;
        auto& s = images[n];
        s.size = img.size_bytes;
        s.nodes += 1;
        per_node[i].push_back(std::move(n));
      }
    }
  }
  // The old names stay alive until every node has its new states.
  std::vector<std::string> names;
  names.reserve(images.size());
  std::map<std::string_view, size_t> name_index;
  for (const auto& [name, s] : images) {
    name_index[name] = names.size();
    names.push_back(name);
  }
  for (size_t i = 0; i < infos_.size(); ++i) {
    std::vector<schedhost_image_state> states;
    for (const auto& n : per_node[i]) {
      const std::string& stored = names[name_index[n]];
      const Summary& s = images[n];
      schedhost_image_state st{};
      st.name = schedhost_str{stored.data(), stored.size()};
      st.size_bytes = s.size;
      st.num_nodes = s.nodes;
      states.push_back(st);
    }
    std::sort(states.begin(), states.end(), [](const auto& a, const auto& b) {
      return std::string_view(a.name.data, a.name.len) < std::string_view(b.name.data, b.name.len);
    });
    if (!states.empty() || infos_[i]->view()->image_states_len != 0) {
      infos_[i]->SetImageStates(std::move(states));
    }
  }
  image_names_ = std::move(names);  // moving keeps each string's buffer where it is
}

void Snapshot::RebuildLists() {
  views_.clear();
  by_name_.clear();
  views_.reserve(infos_.size());
  for (size_t i = 0; i < infos_.size(); ++i) {
    views_.push_back(infos_[i]->view());
    if (infos_[i]->node() != nullptr) by_name_.emplace(infos_[i]->node()->name(), i);
  }
  RebuildAffinityLists();
}

void Snapshot::RebuildAffinityLists() {
  with_affinity_.clear();
  with_anti_affinity_.clear();
  for (const schedhost_node_info_view* v : views_) {
    if (v->pods_with_affinity_len > 0) with_affinity_.push_back(v);
    if (v->pods_with_required_anti_affinity_len > 0) with_anti_affinity_.push_back(v);
  }
}

NodeInfo* Snapshot::Find(std::string_view name) {
  auto it = by_name_.find(name);
  return it == by_name_.end() || !infos_[it->second] ? nullptr : infos_[it->second].get();
}

void Snapshot::Adopt(std::unique_ptr<NodeInfo> info) {
  by_name_.emplace(info->node()->name(), infos_.size());
  infos_.push_back(std::move(info));
}

void Snapshot::Drop(std::string_view name) {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return;
  infos_[it->second].reset();
  by_name_.erase(it);
}

void Snapshot::Reorder(const std::vector<std::string>& names) {
  std::vector<std::unique_ptr<NodeInfo>> ordered;
  ordered.reserve(names.size());
  for (const std::string& name : names) {
    auto it = by_name_.find(name);
    if (it != by_name_.end() && infos_[it->second])
      ordered.push_back(std::move(infos_[it->second]));
  }
  infos_ = std::move(ordered);
  RebuildLists();
}

}  // namespace schedhost::cache
