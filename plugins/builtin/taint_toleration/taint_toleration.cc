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

}  // namespace

TaintToleration::TaintToleration(const Host& host, const Args& args)
    : Plugin(host), state_key_(host.Intern(kStateKey)) {
  args.ExpectNone(kName);
}

Status TaintToleration::Filter(const CycleState& /*state*/, const Pod& pod, const NodeInfo& ni) {
  // An untainted node passes on the summary's line alone.
  if (const schedhost_node_summary* s = ni.summary();
      s != nullptr && (s->flags & SCHEDHOST_NODE_SUMMARY_HAS_NODE) != 0 && s->taints_len == 0) {
    return {};
  }
  if (ni.raw() == nullptr || ni.raw()->node == nullptr) return Status::Error("invalid nodeInfo");
  const auto tolerations = pod.tolerations();
  for (const schedhost_taint& taint : ni.node().taints()) {
    if (taint.effect != SCHEDHOST_EFFECT_NO_SCHEDULE &&
        taint.effect != SCHEDHOST_EFFECT_NO_EXECUTE) {
      continue;
    }
    if (AnyTolerates(tolerations, taint)) continue;
    // Upstream (since v1.33) names no taint: a pod's status must not reveal the node's.
    return Status::UnschedulableAndUnresolvable("node(s) had untolerated taint(s)");
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
  if (const schedhost_node_summary* sum = ni.summary(); sum != nullptr && sum->taints_len == 0) {
    score = 0;
    return {};
  }
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
