// Nominated pods in filtering (reference/003): pods that preemption nominated to a node, of
// equal or higher priority than the pod being scheduled, count as already running there in a
// first Filter pass; a second pass without them must pass too, since they may never arrive.
#include <memory>

#include "host/cache/node_info.h"
#include "host/framework/framework.h"
#include "host/framework/plugin_instance.h"
#include "host/queue/nominator.h"

namespace schedhost::framework {
namespace {

std::string_view View(schedhost_str s) {
  return s.len == 0 ? std::string_view{} : std::string_view{s.data, s.len};
}

// NodeScratch is one thread's node info for the pass with nominated pods. A node assigned into
// it reuses its buffers, so once warm the pass copies a node without allocating (in a
// preemption-heavy cycle every node has nominated pods). A nested use on the same thread (a
// plugin calling back into Filter) gets its own copy instead.
struct NodeScratch {
  cache::NodeInfo node;
  bool busy = false;
};
thread_local NodeScratch t_node_scratch;

// ScratchNode hands out the thread's scratch node (or a fresh one when it is taken) and clears
// it when done, so it holds no pods between uses.
class ScratchNode {
 public:
  ScratchNode() = default;
  ScratchNode(const ScratchNode&) = delete;
  ScratchNode& operator=(const ScratchNode&) = delete;
  ~ScratchNode() {
    if (taken_) {
      t_node_scratch.node.Clear();
      t_node_scratch.busy = false;
    }
  }
  cache::NodeInfo* CopyOf(const cache::NodeInfo& source) {
    if (!t_node_scratch.busy) {
      t_node_scratch.busy = true;
      taken_ = true;
      t_node_scratch.node = source;
      return &t_node_scratch.node;
    }
    own_ = std::make_unique<cache::NodeInfo>(source);
    return own_.get();
  }

 private:
  bool taken_ = false;
  std::unique_ptr<cache::NodeInfo> own_;
};

}  // namespace

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
  std::unique_ptr<CycleState> state_with;
  ScratchNode scratch;
  cache::NodeInfo* ni_with = nullptr;
  if (nominator != nullptr && pod != nullptr && ni != nullptr && ni->node != nullptr &&
      nominator->Size() > 0) {
    const std::string_view uid = View(pod->uid);
    for (const auto& nominated : nominator->NominatedPodsForNode(View(ni->node->name))) {
      if (nominated->priority() < pod->priority || nominated->uid() == uid) continue;
      if (!ni_with) {
        const cache::NodeInfo* source = cache::NodeInfo::FromView(ni);
        if (source == nullptr) {
          return Status::Error("filtering with nominated pods: node " +
                               std::string(View(ni->node->name)) +
                               " is not a node info the host made");
        }
        ni_with = scratch.CopyOf(*source);
        state_with = state.Clone();
      }
      ni_with->AddPod(nominated);
      Status s = RunPreFilterExtensionAddPod(*state_with, pod, nominated->view(), ni_with->view());
      if (!s.ok()) return s;
    }
  }
  if (ni_with) {
    Status first = RunFilterPlugins(*state_with, pod, ni_with->view());
    if (!first.ok()) return first;
  }
  return RunFilterPlugins(state, pod, ni);
}

}  // namespace schedhost::framework
