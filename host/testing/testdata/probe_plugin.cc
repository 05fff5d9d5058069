// Probe: a test plugin with every extension point of a cross-node plugin, for the SDK harness's
// own tests. Pods with an `app` label are spread: PreFilter counts each node's pods of the same
// app (CycleState), AddPod/RemovePod keep the counts, Filter rejects a node that already runs
// `max_per_node` of them, Score/NormalizeScore prefer nodes running fewer. A pod labelled
// probe/only-node narrows PreFilter to that node; probe/permit=wait|deny drives Permit; Reserve
// takes the node's single slot until Unreserve or PostBind frees it; PreBind refuses the node
// "no-prebind"; PostFilter nominates the first rejected node by name. EventsToRegister: node
// adds and label changes (hint: Queue only for a node labelled probe/ready=true) and assigned
// pod deletions (no hint).
#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <schedhost/plugin.hpp>
#include <set>
#include <span>
#include <string>
#include <string_view>

namespace {

// Counts is each node's number of pods of the cycle's app (a copyable state: cloned for
// preemption and nominated pods).
struct Counts {
  std::map<std::string, int64_t, std::less<>> per_node;
};

// The ids the hint compares with, interned by the instance at creation (a hint cannot intern).
schedhost_id g_ready_key = SCHEDHOST_ID_EMPTY;
schedhost_id g_true_value = SCHEDHOST_ID_EMPTY;

int32_t ReadyNodesOnly(void*, const schedhost_pod_view*, const schedhost_cluster_event*,
                       const schedhost_event_object*,
                       const schedhost_event_object* new_obj) noexcept {
  if (new_obj == nullptr || new_obj->node == nullptr) return SCHEDHOST_QUEUE;
  const schedhost::Labels labels(new_obj->node->labels);
  return labels.Get(g_ready_key) == g_true_value ? SCHEDHOST_QUEUE : SCHEDHOST_QUEUE_SKIP;
}

constexpr schedhost_event_registration kEvents[] = {
    {{SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE_NODE_LABEL},
     &ReadyNodesOnly},
    {{SCHEDHOST_RESOURCE_ASSIGNED_POD, SCHEDHOST_ACTION_DELETE}, nullptr},
};

}  // namespace

namespace probe {

using schedhost::CycleState;
using schedhost::NodeInfo;
using schedhost::Pod;
using schedhost::Status;

class Probe final : public schedhost::Plugin,
                    public schedhost::PreFilterPlugin,
                    public schedhost::PreFilterExtensions,
                    public schedhost::FilterPlugin,
                    public schedhost::PostFilterPlugin,
                    public schedhost::PreScorePlugin,
                    public schedhost::ScorePlugin,
                    public schedhost::ScoreExtensions,
                    public schedhost::ReservePlugin,
                    public schedhost::PermitPlugin,
                    public schedhost::PreBindPlugin,
                    public schedhost::PostBindPlugin,
                    public schedhost::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "Probe";
  static constexpr std::string_view kVersion = "1.0.0";

  Probe(const schedhost::Host& host, const schedhost::Args& args)
      : Plugin(host),
        app_(host.Intern("app")),
        only_node_(host.Intern("probe/only-node")),
        permit_(host.Intern("probe/permit")),
        state_key_(host.Intern("probe/counts")) {
    schedhost::ArgsReader r(args, kName);
    max_per_node_ = r.Int("max_per_node", {.fallback = 1});
    r.Done();
    g_ready_key = host.Intern("probe/ready");
    g_true_value = host.Intern("true");
  }

  Status PreFilter(CycleState& state, const Pod& pod, schedhost::PreFilterResult& result) override {
    if (auto only = pod.labels().Get(only_node_)) {
      const std::string_view node = host().IdString(*only);
      result.SetNodes(std::span<const std::string_view>(&node, 1));
    }
    const std::optional<schedhost::Id> app = pod.labels().Get(app_);
    if (!app) return Status::Skip();
    auto counts = std::make_unique<Counts>();
    for (size_t i = 0; i < host().NodeCount(); ++i) {
      const std::optional<NodeInfo> ni = host().NodeAt(i);
      if (!ni) continue;
      counts->per_node[std::string(ni->node().name())] = CountApp(*ni, *app);
    }
    state.Write(state_key_, std::move(counts));
    return {};
  }

  Status AddPod(CycleState& state, const Pod& pod, const Pod& to_add, const NodeInfo& ni) override {
    return Adjust(state, pod, to_add, ni, +1);
  }
  Status RemovePod(CycleState& state, const Pod& pod, const Pod& to_remove,
                   const NodeInfo& ni) override {
    return Adjust(state, pod, to_remove, ni, -1);
  }

  Status Filter(const CycleState& state, const Pod& pod, const NodeInfo& ni) override {
    const Counts* counts = state.Read<Counts>(state_key_);
    if (counts == nullptr) return Status::Error("Probe: PreFilter wrote no state");
    auto it = counts->per_node.find(ni.node().name());
    const int64_t n = it == counts->per_node.end() ? 0 : it->second;
    if (n >= max_per_node_) {
      return Status::Unschedulable("node(s) already run " + std::to_string(n) + " pod(s) of app " +
                                   std::string(host().IdString(*pod.labels().Get(app_))));
    }
    return {};
  }

  Status PostFilter(CycleState& /*state*/, const Pod& /*pod*/,
                    const schedhost::NodeStatusMap& statuses, std::string& nominated) override {
    // Nominates the first rejected node by name: enough to see the verdict come back.
    std::optional<std::string> first;
    for (size_t i = 0; i < statuses.size(); ++i) {
      const std::string name(statuses.At(i).node_name);
      if (!first || name < *first) first = name;
    }
    if (!first) return Status::Unschedulable("Probe: nothing to nominate");
    nominated = *first;
    return {};
  }

  Status PreScore(CycleState& state, const Pod& pod, const schedhost::NodeInfoList&) override {
    if (!pod.labels().Has(app_) || state.Read<Counts>(state_key_) == nullptr) return Status::Skip();
    return {};
  }

  Status Score(const CycleState& state, const Pod& /*pod*/, const NodeInfo& ni,
               int64_t& score) override {
    const Counts* counts = state.Read<Counts>(state_key_);
    auto it = counts->per_node.find(ni.node().name());
    score = it == counts->per_node.end() ? 0 : it->second;  // raw: pods of the app
    return {};
  }

  Status NormalizeScore(const CycleState&, const Pod&,
                        std::span<schedhost_node_score> scores) override {
    int64_t max = 0;
    for (const auto& s : scores) max = std::max(max, s.score);
    for (auto& s : scores) {
      s.score = max == 0 ? SCHEDHOST_MAX_NODE_SCORE
                         : SCHEDHOST_MAX_NODE_SCORE - s.score * SCHEDHOST_MAX_NODE_SCORE / max;
    }
    return {};
  }

  Status Reserve(CycleState&, const Pod& pod, std::string_view node) override {
    std::lock_guard lock(mu_);
    auto [it, fresh] = slots_.emplace(std::string(node), std::string(pod.uid()));
    if (!fresh && it->second != pod.uid()) {
      return Status::Unschedulable("node " + std::string(node) + " has no free slot");
    }
    return {};
  }
  void Unreserve(CycleState&, const Pod& pod, std::string_view node) override {
    std::lock_guard lock(mu_);
    auto it = slots_.find(std::string(node));
    if (it != slots_.end() && it->second == pod.uid()) slots_.erase(it);
  }

  Status Permit(CycleState&, const Pod& pod, std::string_view,
                std::chrono::nanoseconds& timeout) override {
    const std::optional<schedhost::Id> v = pod.labels().Get(permit_);
    if (!v) return {};
    if (host().IdString(*v) == "wait") {
      timeout = std::chrono::seconds(5);
      return Status::Wait();
    }
    return Status::Unschedulable("Probe denies the pod");
  }

  Status PreBind(CycleState&, const Pod&, std::string_view node) override {
    if (node == "no-prebind") return Status::Error("Probe: PreBind refuses node no-prebind");
    return {};
  }
  // PostBind frees the node's slot: the binding is done.
  void PostBind(CycleState& state, const Pod& pod, std::string_view node) override {
    Unreserve(state, pod, node);
  }

  std::span<const schedhost_event_registration> EventsToRegister() override { return kEvents; }

 private:
  int64_t CountApp(const NodeInfo& ni, schedhost::Id app) const {
    int64_t n = 0;
    for (const Pod& p : ni.pods()) n += p.labels().Get(app_) == app ? 1 : 0;
    return n;
  }

  Status Adjust(CycleState& state, const Pod& pod, const Pod& other, const NodeInfo& ni,
                int64_t delta) {
    Counts* counts = state.Read<Counts>(state_key_);
    if (counts == nullptr) return {};
    if (other.labels().Get(app_) == pod.labels().Get(app_)) {
      counts->per_node[std::string(ni.node().name())] += delta;
    }
    return {};
  }

  schedhost::Id app_;
  schedhost::Id only_node_;
  schedhost::Id permit_;
  schedhost::Id state_key_;
  int64_t max_per_node_ = 1;
  std::mutex mu_;
  std::map<std::string, std::string> slots_;  // node -> uid of the pod holding its slot
};

}  // namespace probe

SCHEDHOST_PLUGIN_LIBRARY(probe::Probe)
