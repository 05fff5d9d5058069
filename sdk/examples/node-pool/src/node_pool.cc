#include "node_pool.h"

#include <optional>
#include <schedhost/names.hpp>
#include <string>

namespace example {
namespace {

constexpr schedhost_event_registration kEvents[] = {
    {{SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE_NODE_LABEL}, nullptr},
};

// ReadLabel returns plugin_config.NodePool.label, checking every key and value: a typo in the
// config must fail the profile, with its file:line:col, rather than be ignored.
std::string ReadLabel(const schedhost::Args& args) {
  if (!args.present()) return std::string(NodePool::kDefaultLabel);
  if (args.kind() != SCHEDHOST_CONFIG_TABLE) args.Fail("a table");
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view key;
    const schedhost::Args value = args.At(i, &key);
    if (key != "label") {
      const std::string where = value.location();
      throw schedhost::ArgsError((where.empty() ? "" : where + ": ") + "plugin_config.NodePool." +
                                 std::string(key) + ": unknown key (NodePool takes only label)");
    }
  }
  std::string label = args["label"].String(NodePool::kDefaultLabel);
  if (!schedhost::names::IsQualifiedName(label)) {
    const std::string where = args["label"].location();
    throw schedhost::ArgsError((where.empty() ? "" : where + ": ") +
                               "plugin_config.NodePool.label: \"" + label +
                               "\" is not a valid label name");
  }
  return label;
}

}  // namespace

NodePool::NodePool(const schedhost::Host& host, const schedhost::Args& args)
    : Plugin(host), label_(ReadLabel(args)), label_id_(host.Intern(label_)) {}

schedhost::Status NodePool::Filter(const schedhost::CycleState& /*state*/,
                                   const schedhost::Pod& pod, const schedhost::NodeInfo& ni) {
  const std::optional<schedhost::Id> want = pod.labels().Get(label_id_);
  if (!want) return {};
  if (ni.raw()->node != nullptr && ni.node().labels().Get(label_id_) == want) return {};
  return schedhost::Status::UnschedulableAndUnresolvable(std::string(kReasonPrefix) +
                                                         std::string(host().IdString(*want)));
}

schedhost::Status NodePool::Score(const schedhost::CycleState& /*state*/, const schedhost::Pod& pod,
                                  const schedhost::NodeInfo& ni, int64_t& score) {
  const bool pod_in_pool = pod.labels().Has(label_id_);
  const bool node_in_pool = ni.raw()->node != nullptr && ni.node().labels().Has(label_id_);
  score = pod_in_pool || !node_in_pool ? SCHEDHOST_MAX_NODE_SCORE : SCHEDHOST_MIN_NODE_SCORE;
  return {};
}

std::span<const schedhost_event_registration> NodePool::EventsToRegister() { return kEvents; }

}  // namespace example

SCHEDHOST_PLUGIN_LIBRARY(example::NodePool)
