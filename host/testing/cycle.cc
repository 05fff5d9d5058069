// schedhost::testing::Cycle: one pod's cycle on the profile's framework, one call per extension
// point, with the CycleState and the node copies (AddPod/RemovePod) the calls share.
#include <algorithm>
#include <map>

#include "host/cache/node_info.h"
#include "host/framework/plugin_instance.h"
#include "host/testing/internal.h"

namespace schedhost::testing {

using internal::Guard;
using internal::ToResult;
using PodPtr = std::shared_ptr<const model::Pod>;

struct Cycle::Impl {
  Harness::Impl* harness = nullptr;
  uint64_t generation = 0;
  PodPtr pod;
  framework::CycleState state;
  bool pre_filter_ran = false;
  framework::Status pre_filter;
  framework::NodeNameSet node_set;
  // The nodes AddPod and RemovePod changed: this cycle's copies, which Filter sees instead.
  std::map<std::string, std::unique_ptr<cache::NodeInfo>, std::less<>> changed;
  std::vector<PodPtr> kept;  // pods the copies point at
  bool filtered_all = false;
  std::vector<std::pair<std::string, framework::Status>> rejected;
  std::vector<const schedhost_node_info_view*> feasible;
  bool pre_scored = false;

  framework::Framework& fw() {
    if (generation != harness->generation) {
      throw Error(
          "the cluster or profile changed (AddObjects, SetConfig, UsePlugins) after this cycle "
          "started: start a new one");
    }
    return harness->host.framework();
  }
  const schedhost_pod_view* view() const { return pod->view(); }

  void Require(bool done, std::string_view call, std::string_view before) const {
    if (!done) {
      throw Error("Cycle::" + std::string(call) + ": run " + std::string(before) +
                  " first (upstream's order)");
    }
  }

  // Node returns the snapshot's node `name`; throws Error when the cluster has none.
  const cache::NodeInfo& Node(std::string_view name) {
    fw();
    const cache::Snapshot& snap = harness->host.snapshot();
    for (size_t i = 0; i < snap.size(); ++i) {
      if (snap.at(i).node()->name() == name) return snap.at(i);
    }
    throw Error("no node \"" + std::string(name) + "\" in the cluster");
  }

  // Copy returns this cycle's copy of node `name`, made on first use.
  cache::NodeInfo& Copy(std::string_view name) {
    auto it = changed.find(name);
    if (it == changed.end()) {
      it = changed.emplace(std::string(name), std::make_unique<cache::NodeInfo>(Node(name))).first;
    }
    return *it->second;
  }

  const schedhost_node_info_view* View(std::string_view name) {
    auto it = changed.find(name);
    return it != changed.end() ? it->second->view() : Node(name).view();
  }

  // Skipped lists the plugins at `point` that are in `skip` (the CycleState's skip set that
  // point's Skip fills), in the profile's order.
  std::vector<std::string> Skipped(config::Point point, const framework::PluginNameSet& skip) {
    std::vector<std::string> out;
    for (const framework::PluginRef& ref : fw().plugins(point)) {
      if (skip.count(ref.plugin->name) != 0) out.push_back(ref.plugin->name);
    }
    return out;
  }

  framework::Status FilterOne(std::string_view name) {
    const schedhost_node_info_view* ni = View(name);
    if (!pre_filter.ok()) return pre_filter;
    if (node_set && node_set->count(std::string(name)) == 0) {
      return framework::Status::Make(
          framework::Code::kUnschedulableAndUnresolvable,
          framework::PreFilterExcludedMessage(state.pre_filter_node_plugins));
    }
    return fw().RunFilterPlugins(state, view(), ni);
  }
};

Cycle::Cycle(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Cycle::Cycle(Cycle&&) noexcept = default;
Cycle& Cycle::operator=(Cycle&&) noexcept = default;
Cycle::~Cycle() = default;

Cycle Harness::StartCycle(std::string_view pod_yaml) {
  return Guard("StartCycle", [&] {
    auto impl = std::make_unique<Cycle::Impl>();
    impl->harness = impl_.get();
    impl->generation = impl_->generation;
    impl->pod = internal::DecodePod(pod_yaml, "StartCycle pod");
    impl->fw();  // builds the profile now: a config error belongs to StartCycle
    return Cycle(std::move(impl));
  });
}

Result Cycle::PreFilter() {
  return Guard("PreFilter", [&] {
    auto [nodes, status] = impl_->fw().RunPreFilterPlugins(impl_->state, impl_->view());
    impl_->pre_filter_ran = true;
    impl_->pre_filter = status;
    impl_->node_set = std::move(nodes);
    Result r = ToResult(status);
    r.skipped = impl_->Skipped(config::Point::kPreFilter, impl_->state.skip_filter_plugins);
    return r;
  });
}

std::optional<std::vector<std::string>> Cycle::PreFilterNodes() const {
  impl_->Require(impl_->pre_filter_ran, "PreFilterNodes", "PreFilter");
  if (!impl_->node_set) return std::nullopt;
  std::vector<std::string> out(impl_->node_set->begin(), impl_->node_set->end());
  std::sort(out.begin(), out.end());
  return out;
}

Result Cycle::AddPod(std::string_view pod, std::string_view node) {
  impl_->Require(impl_->pre_filter_ran, "AddPod", "PreFilter");
  return Guard("AddPod", [&] {
    PodPtr added = internal::DecodePod(pod, "AddPod pod");
    if (added->node_name().empty()) {
      model::PodData data = added->data();
      data.spec.node_name = std::string(node);
      added = model::Pod::Make(std::move(data));
    }
    cache::NodeInfo& copy = impl_->Copy(node);
    copy.AddPod(added);
    impl_->kept.push_back(added);
    return ToResult(impl_->fw().RunPreFilterExtensionAddPod(impl_->state, impl_->view(),
                                                            added->view(), copy.view()));
  });
}

Result Cycle::RemovePod(std::string_view pod, std::string_view node) {
  impl_->Require(impl_->pre_filter_ran, "RemovePod", "PreFilter");
  return Guard("RemovePod", [&] {
    cache::NodeInfo& copy = impl_->Copy(node);
    const std::string key =
        pod.find('/') == std::string_view::npos ? "default/" + std::string(pod) : std::string(pod);
    PodPtr removed;
    for (const PodPtr& p : copy.pods()) {
      if (p->Key() == key) removed = p;
    }
    if (!removed) {
      throw Error("no pod " + key + " on node " + std::string(node));
    }
    copy.RemovePod(*removed);
    impl_->kept.push_back(removed);
    return ToResult(impl_->fw().RunPreFilterExtensionRemovePod(impl_->state, impl_->view(),
                                                               removed->view(), copy.view()));
  });
}

Result Cycle::Filter(std::string_view node) {
  impl_->Require(impl_->pre_filter_ran, "Filter", "PreFilter");
  return Guard("Filter", [&] { return ToResult(impl_->FilterOne(node)); });
}

std::vector<NodeResult> Cycle::FilterAll() {
  impl_->Require(impl_->pre_filter_ran, "FilterAll", "PreFilter");
  return Guard("FilterAll", [&] {
    impl_->fw();
    const cache::Snapshot& snap = impl_->harness->host.snapshot();
    std::vector<std::string> names;
    for (size_t i = 0; i < snap.size(); ++i) names.emplace_back(snap.at(i).node()->name());
    std::sort(names.begin(), names.end());
    impl_->rejected.clear();
    impl_->feasible.clear();
    std::vector<NodeResult> out;
    for (const std::string& name : names) {
      framework::Status s = impl_->FilterOne(name);
      if (s.ok()) {
        impl_->feasible.push_back(impl_->View(name));
      } else {
        impl_->rejected.emplace_back(name, s);
      }
      out.push_back({name, ToResult(s)});
    }
    impl_->filtered_all = true;
    impl_->pre_scored = false;
    return out;
  });
}

PostFilterResult Cycle::PostFilter() {
  impl_->Require(impl_->filtered_all, "PostFilter", "FilterAll");
  return Guard("PostFilter", [&] {
    framework::NodeStatuses statuses;
    for (const auto& [name, status] : impl_->rejected) statuses.emplace_back(name, status);
    auto [node, status] = impl_->fw().RunPostFilterPlugins(impl_->state, impl_->view(), statuses);
    return PostFilterResult{ToResult(status), node};
  });
}

Result Cycle::PreScore() {
  impl_->Require(impl_->filtered_all, "PreScore", "FilterAll");
  return Guard("PreScore", [&] {
    framework::Status s =
        impl_->fw().RunPreScorePlugins(impl_->state, impl_->view(), impl_->feasible);
    impl_->pre_scored = true;
    Result r = ToResult(s);
    r.skipped = impl_->Skipped(config::Point::kPreScore, impl_->state.skip_score_plugins);
    return r;
  });
}

std::vector<NodeScore> Cycle::Score() {
  impl_->Require(impl_->pre_scored, "Score", "PreScore");
  return Guard("Score", [&] {
    framework::Framework& fw = impl_->fw();
    framework::ScoreTable table;
    framework::Status s = fw.RunScorePlugins(impl_->state, impl_->view(), impl_->feasible, table);
    if (!s.ok()) throw Error("Score: " + s.plugin.str() + ": " + s.Message());
    const std::vector<std::string> plugins = fw.ScorePluginNames();
    std::vector<NodeScore> out;
    for (size_t i = 0; i < table.nodes.size(); ++i) {
      const schedhost_str name = table.nodes[i].node_info->node->name;
      NodeScore& ns = out.emplace_back();
      ns.node.assign(name.data, name.len);
      ns.total = table.nodes[i].total;
      for (size_t k = 0; k < table.columns; ++k) {
        ns.plugins.push_back({plugins.at(k), table.Raw(i, k),
                              int64_t{table.normalized[i * table.columns + k]},
                              table.Weighted(i, k),
                              impl_->state.skip_score_plugins.count(plugins.at(k)) != 0});
      }
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
    return out;
  });
}

Result Cycle::Reserve(std::string_view node) {
  return Guard("Reserve", [&] {
    return ToResult(impl_->fw().RunReservePluginsReserve(impl_->state, impl_->view(), node));
  });
}

void Cycle::Unreserve(std::string_view node) {
  Guard("Unreserve",
        [&] { impl_->fw().RunReservePluginsUnreserve(impl_->state, impl_->view(), node); });
}

PermitResult Cycle::Permit(std::string_view node) {
  return Guard("Permit", [&] {
    framework::PermitResult p = impl_->fw().RunPermitPlugins(impl_->state, impl_->view(), node);
    return PermitResult{ToResult(p.status), p.waits};
  });
}

Result Cycle::PreBind(std::string_view node) {
  return Guard("PreBind", [&] {
    return ToResult(impl_->fw().RunPreBindPlugins(impl_->state, impl_->view(), node));
  });
}

Result Cycle::Bind(std::string_view node) {
  return Guard("Bind", [&] {
    return ToResult(impl_->fw().RunBindPlugins(impl_->state, impl_->view(), node));
  });
}

void Cycle::PostBind(std::string_view node) {
  Guard("PostBind", [&] { impl_->fw().RunPostBindPlugins(impl_->state, impl_->view(), node); });
}

}  // namespace schedhost::testing
