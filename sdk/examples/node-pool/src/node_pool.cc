#include "node_pool.h"

#include <memory>
#include <optional>
#include <schedhost/args.hpp>
#include <schedhost/names.hpp>
#include <string>
#include <utility>

namespace example {
namespace {

// Args is plugin_config.NodePool. Any other key is refused: a typo in the config must fail the
// profile, with its file:line:col, rather than be ignored.
struct Args {
  std::string label;
  int64_t max_pods = 0;
};

Args ReadArgs(const schedhost::Args& args) {
  schedhost::ArgsReader r(args, NodePool::kName);
  Args out;
  out.label = r.String("label", {.valid = schedhost::names::IsQualifiedName,
                                 .what = "a valid label name",
                                 .fallback = NodePool::kDefaultLabel});
  out.max_pods = r.Int("max_pods", {.min = 0, .fallback = 0});
  r.Done();
  return out;
}

}  // namespace

NodePool::NodePool(const schedhost::Host& host, const schedhost::Args& args) : Plugin(host) {
  Args parsed = ReadArgs(args);
  label_ = std::move(parsed.label);
  max_pods_ = parsed.max_pods;
  label_id_ = host.Intern(label_);
  state_key_ = host.Intern(kStateKey);
}

bool NodePool::InPool(const schedhost::Pod& pod, const schedhost::NodeInfo& ni,
                      schedhost::Id pool) const {
  return pod.labels().Get(label_id_) == pool && ni.raw()->node != nullptr &&
         ni.node().labels().Get(label_id_) == pool;
}

schedhost::Status NodePool::PreFilter(schedhost::CycleState& state, const schedhost::Pod& pod,
                                      schedhost::PreFilterResult& /*result*/) {
  const std::optional<schedhost::Id> pool = pod.labels().Get(label_id_);
  // Skip also skips this plugin's Filter (and AddPod/RemovePod) for the cycle: right for a pod
  // without the label, which Filter passes everywhere, wrong for one with it.
  if (!pool) return schedhost::Status::Skip();
  // The pool's NodePool object, when there is one, sets its limit.
  const std::string pool_name(host().IdString(*pool));
  int64_t limit = max_pods_;
  int32_t rc = SCHEDHOST_OK;
  const schedhost::Args object = host().GetObject(state, 0, "", pool_name, &rc);
  if (rc == SCHEDHOST_OK) {
    try {
      schedhost::ArgsReader spec = schedhost::ArgsReader::Object(object["spec"], "spec");
      limit = spec.Int("maxPods", {.min = 0, .fallback = max_pods_});
    } catch (const schedhost::ArgsError& e) {
      return schedhost::Status::UnschedulableAndUnresolvable(e.what());
    }
  } else if (rc != SCHEDHOST_E_NOT_FOUND) {
    std::string why;
    host().KindAvailable(0, &why);
    return schedhost::Status::UnschedulableAndUnresolvable("cannot read NodePool objects: " +
                                                           why);
  }
  if (limit == 0) return {};
  // One walk over the snapshot per cycle; Filter then reads one number per node.
  auto s = std::make_unique<PoolState>();
  s->pool = *pool;
  s->limit = limit;
  for (size_t i = 0; i < host().NodeCount(); ++i) {
    const std::optional<schedhost::NodeInfo> ni = host().NodeAt(i);
    if (!ni) continue;
    for (const schedhost::Pod& p : ni->pods()) {
      if (InPool(p, *ni, *pool)) ++s->pods;
    }
  }
  state.Write(state_key_, std::move(s));
  return {};
}

schedhost::Status NodePool::AddPod(schedhost::CycleState& state, const schedhost::Pod& /*pod*/,
                                   const schedhost::Pod& to_add, const schedhost::NodeInfo& ni) {
  // The state is this call's own copy: changing it in place is what the host expects.
  auto* s = state.Read<PoolState>(state_key_);
  if (s != nullptr && InPool(to_add, ni, s->pool)) ++s->pods;
  return {};
}

schedhost::Status NodePool::RemovePod(schedhost::CycleState& state, const schedhost::Pod& /*pod*/,
                                      const schedhost::Pod& to_remove,
                                      const schedhost::NodeInfo& ni) {
  auto* s = state.Read<PoolState>(state_key_);
  if (s != nullptr && InPool(to_remove, ni, s->pool)) --s->pods;
  return {};
}

schedhost::Status NodePool::Filter(const schedhost::CycleState& state,
                                   const schedhost::Pod& pod, const schedhost::NodeInfo& ni) {
  const std::optional<schedhost::Id> want = pod.labels().Get(label_id_);
  if (!want) return {};
  if (ni.raw()->node == nullptr || ni.node().labels().Get(label_id_) != want) {
    return schedhost::Status::UnschedulableAndUnresolvable(std::string(kReasonPrefix) +
                                                           std::string(host().IdString(*want)));
  }
  if (const auto* s = state.Read<PoolState>(state_key_); s != nullptr && s->pods >= s->limit) {
    return schedhost::Status::Unschedulable(std::string(kFullPrefix) +
                                            std::string(host().IdString(*want)));
  }
  return {};
}

schedhost::Status NodePool::Score(const schedhost::CycleState& /*state*/, const schedhost::Pod& pod,
                                  const schedhost::NodeInfo& ni, int64_t& score) {
  const bool pod_in_pool = pod.labels().Has(label_id_);
  const bool node_in_pool = ni.raw()->node != nullptr && ni.node().labels().Has(label_id_);
  score = pod_in_pool || !node_in_pool ? SCHEDHOST_MAX_NODE_SCORE : SCHEDHOST_MIN_NODE_SCORE;
  return {};
}

schedhost::QueueingHint NodePool::OnNodeChange(const schedhost::Pod& pod,
                                               const schedhost_cluster_event& /*event*/,
                                               const schedhost::EventObject& /*old_obj*/,
                                               const schedhost::EventObject& new_obj) const {
  // Only a node of the pod's own pool can take a pod Filter sent away from the others.
  const std::optional<schedhost::Id> want = pod.labels().Get(label_id_);
  const std::optional<schedhost::Node> node = new_obj.node();
  if (!want || !node) return schedhost::QueueingHint::kQueue;
  return node->labels().Get(label_id_) == want ? schedhost::QueueingHint::kQueue
                                                : schedhost::QueueingHint::kSkip;
}

schedhost::QueueingHint NodePool::OnPodDelete(const schedhost::Pod& pod,
                                              const schedhost_cluster_event& /*event*/,
                                              const schedhost::EventObject& old_obj,
                                              const schedhost::EventObject& /*new_obj*/) const {
  // A full pool has room again when one of the pods it counts goes.
  const std::optional<schedhost::Id> want = pod.labels().Get(label_id_);
  const std::optional<schedhost::Pod> gone = old_obj.pod();
  if (!want || !gone) return schedhost::QueueingHint::kQueue;
  return gone->labels().Get(label_id_) == want ? schedhost::QueueingHint::kQueue
                                                : schedhost::QueueingHint::kSkip;
}

schedhost::QueueingHint NodePool::OnNodePoolChange(const schedhost::Pod& pod,
                                                   const schedhost_cluster_event& /*event*/,
                                                   const schedhost::EventObject& /*old_obj*/,
                                                   const schedhost::EventObject& new_obj) const {
  // A new or changed limit matters to the pods of that pool only.
  const std::optional<schedhost::Id> want = pod.labels().Get(label_id_);
  const schedhost::Args object = new_obj.object(host());
  if (!want || !object.present()) return schedhost::QueueingHint::kQueue;
  return object["metadata"]["name"].String("") == host().IdString(*want)
             ? schedhost::QueueingHint::kQueue
             : schedhost::QueueingHint::kSkip;
}

std::span<const schedhost_event_registration> NodePool::EventsToRegister() {
  static constexpr schedhost_event_registration kEvents[] = {
      schedhost::OnEvent<&NodePool::OnNodeChange>(
          SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE_NODE_LABEL),
      schedhost::OnEvent<&NodePool::OnPodDelete>(SCHEDHOST_RESOURCE_ASSIGNED_POD,
                                                 SCHEDHOST_ACTION_DELETE),
      schedhost::OnEvent<&NodePool::OnNodePoolChange>(
          SCHEDHOST_KIND_EVENT(0), SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE),
  };
  return kEvents;
}

}  // namespace example

SCHEDHOST_PLUGIN_LIBRARY(example::NodePool)
