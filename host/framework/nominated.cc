// Nominated pods in filtering (reference/003): pods that preemption nominated to a node, of
// equal or higher priority than the pod being scheduled, count as already running there in a
// first Filter pass; a second pass without them must pass too, since they may never arrive.
#include <boost/container/small_vector.hpp>
#include <memory>
#include <optional>

#include "host/cache/node_info.h"
#include "host/framework/framework.h"
#include "host/framework/plugin_instance.h"
#include "host/queue/nominator.h"

namespace schedhost::framework {
std::vector<std::shared_ptr<const model::Pod>> Framework::NominatedPodsForNode(
    std::string_view node) const {
  const queue::Nominator* nominator = nominator_.load();
  if (nominator == nullptr) return {};
  return nominator->NominatedPodsForNode(node);
}

const PluginInstance* Framework::FindPlugin(std::string_view name) const {
  for (const auto& inst : instances_) {
    if (inst->name == name) return inst.get();
  }
  return nullptr;
}

Status Framework::RunFilterPluginsWithNominatedPods(const CycleState& state,
                                                    const schedhost_pod_view* pod,
                                                    const schedhost_node_info_view* ni) {
  const queue::Nominator* nominator = nominator_.load();
  // The node with the nominated pods is a scratch copy; the state is cloned only when a
  // PreFilter extension will change it (otherwise the first pass reads the cycle's own).
  std::optional<cache::ScratchCopy> ni_with;
  std::unique_ptr<CycleState> state_with;
  bool extensions = false;
  if (nominator != nullptr && pod != nullptr && ni != nullptr && ni->node != nullptr &&
      nominator->Size() > 0) {
    const std::string_view uid = View(pod->uid);
    // The ones that count, copied out of the nominator's lock (plugins run below).
    boost::container::small_vector<std::shared_ptr<const model::Pod>, 4> counted;
    nominator->ForEachNominatedPod(ni->node->name_id, [&](const auto& nominated) {
      if (nominated->priority() >= pod->priority && nominated->uid() != uid) {
        counted.push_back(nominated);
      }
    });
    for (const auto& nominated : counted) {
      if (!ni_with) {
        const cache::NodeInfo* source = cache::NodeInfo::FromView(ni);
        if (source == nullptr) {
          return Status::Error("filtering with nominated pods: node " +
                               std::string(View(ni->node->name)) +
                               " is not a node info the host made");
        }
        ni_with.emplace(*source);
        extensions = PreFilterExtensionsActive(state);
        if (extensions) state_with = state.Clone();
      }
      (*ni_with)->AddPod(nominated);
      if (!extensions) continue;
      Status s =
          RunPreFilterExtensionAddPod(*state_with, pod, nominated->view(), (*ni_with)->view());
      if (!s.ok()) return s;
    }
  }
  if (ni_with) {
    Status first = RunFilterPlugins(state_with ? *state_with : state, pod, (*ni_with)->view());
    if (!first.ok()) return first;
  }
  return RunFilterPlugins(state, pod, ni);
}

}  // namespace schedhost::framework
