#include "taint_toleration.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace schedhost::plugins {
namespace {

constexpr schedhost_event_registration kEvents[] = {
    {{SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE}, nullptr},
};

// PreScoreState holds the pod's tolerations that matter for PreferNoSchedule taints.
struct PreScoreState {
  std::vector<schedhost_toleration> tolerations;
};

template <class Tolerations>
bool AnyTolerates(const Tolerations& tolerations, const schedhost_taint& taint) {
  return std::any_of(tolerations.begin(), tolerations.end(),
                     [&](const schedhost_toleration& t) { return TolerationTolerates(t, taint); });
}

// RejectArguments refuses plugin_config for a plugin that takes none, so a misspelt or
// misplaced key is reported rather than silently ignored.
void RejectArguments(const Args& args, std::string_view plugin) {
  if (!args.present()) return;
  if (args.kind() != SCHEDHOST_CONFIG_TABLE) args.Fail("a table (it takes no arguments)");
  if (args.size() == 0) return;
  std::string_view key;
  Args first = args.At(0, &key);
  std::string loc = first.location();
  throw ArgsError((loc.empty() ? std::string() : loc + ": ") + "plugin_config." +
                  std::string(plugin) + "." + std::string(key) + ": " + std::string(plugin) +
                  " takes no arguments");
}

}  // namespace

bool TolerationTolerates(const schedhost_toleration& toleration, const schedhost_taint& taint) {
  if (toleration.effect != SCHEDHOST_EFFECT_NONE && toleration.effect != taint.effect) {
    return false;
  }
  if (toleration.key != SCHEDHOST_ID_EMPTY && toleration.key != taint.key) return false;
  switch (toleration.op) {
    case SCHEDHOST_TOLERATION_EQUAL:
      return toleration.value == taint.value;
    case SCHEDHOST_TOLERATION_EXISTS:
      return true;
    default:
      return false;
  }
}

TaintToleration::TaintToleration(const Host& host, const Args& args)
    : Plugin(host), state_key_(host.Intern(kStateKey)) {
  RejectArguments(args, kName);
}

Status TaintToleration::Filter(const CycleState& /*state*/, const Pod& pod, const NodeInfo& ni) {
  if (ni.raw() == nullptr || ni.raw()->node == nullptr) return Status::Error("invalid nodeInfo");
  const auto tolerations = pod.tolerations();
  for (const schedhost_taint& taint : ni.node().taints()) {
    if (taint.effect != SCHEDHOST_EFFECT_NO_SCHEDULE &&
        taint.effect != SCHEDHOST_EFFECT_NO_EXECUTE) {
      continue;
    }
    if (AnyTolerates(tolerations, taint)) continue;
    std::string reason = "node(s) had untolerated taint {";
    reason += host().IdString(taint.key);
    reason += ": ";
    reason += host().IdString(taint.value);
    reason += '}';
    return Status::UnschedulableAndUnresolvable(std::move(reason));
  }
  return {};
}

Status TaintToleration::PreScore(CycleState& state, const Pod& pod, const NodeInfoList& nodes) {
  if (nodes.size() == 0) return {};
  auto s = std::make_unique<PreScoreState>();
  for (const schedhost_toleration& t : pod.tolerations()) {
    if (t.effect == SCHEDHOST_EFFECT_NONE || t.effect == SCHEDHOST_EFFECT_PREFER_NO_SCHEDULE) {
      s->tolerations.push_back(t);
    }
  }
  state.Write(state_key_, std::move(s));
  return {};
}

Status TaintToleration::Score(const CycleState& state, const Pod& /*pod*/, const NodeInfo& ni,
                              int64_t& score) {
  const auto* s = state.Read<PreScoreState>(state_key_);
  if (s == nullptr) {
    return Status::Error("reading \"" + std::string(kStateKey) + "\" from cycle state: not found");
  }
  int64_t intolerable = 0;
  for (const schedhost_taint& taint : ni.node().taints()) {
    if (taint.effect != SCHEDHOST_EFFECT_PREFER_NO_SCHEDULE) continue;
    if (!AnyTolerates(s->tolerations, taint)) ++intolerable;
  }
  score = intolerable;
  return {};
}

Status TaintToleration::NormalizeScore(const CycleState& /*state*/, const Pod& /*pod*/,
                                       std::span<schedhost_node_score> scores) {
  int64_t max = 0;
  for (const auto& s : scores) max = std::max(max, s.score);
  for (auto& s : scores) {
    s.score = max == 0 ? SCHEDHOST_MAX_NODE_SCORE
                       : SCHEDHOST_MAX_NODE_SCORE - SCHEDHOST_MAX_NODE_SCORE * s.score / max;
  }
  return {};
}

std::span<const schedhost_event_registration> TaintToleration::EventsToRegister() {
  return kEvents;
}

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::TaintToleration)
