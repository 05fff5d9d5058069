// PodTopologySpread's Score side: PreScore counts matching pods per domain of every
// ScheduleAnyway constraint over the domains of the feasible nodes, Score weighs the counts of
// the node's domains, NormalizeScore turns "fewer is better" into [0, 100].
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "pod_topology_spread.h"

namespace schedhost::plugins {
namespace {

// TopologyNormalizingWeight keeps small topologies from being drowned by large ones: size is
// the number of domains among the feasible nodes (at most 5,000 nodes: a weight in 1.09..8.52).
double TopologyNormalizingWeight(size_t size) { return std::log(static_cast<double>(size) + 2); }

bool IsIgnored(const PreScoreState& s, Id node) {
  return std::binary_search(s.ignored_nodes.begin(), s.ignored_nodes.end(), node);
}

}  // namespace

Status PodTopologySpread::PreScore(CycleState& state, const Pod& pod, const NodeInfoList& nodes) {
  const size_t all = host().NodeCount();
  if (nodes.size() == 0 || all == 0) return Status::Skip();
  auto constraints =
      std::make_shared<const Constraints>(BuildConstraints(pod, SCHEDHOST_SCHEDULE_ANYWAY));
  if (constraints->empty()) return Status::Skip();
  const Constraints& cs = *constraints;
  // upstream: with the system defaults, nodes need not carry every key, so a node without a
  // zone label still spreads by hostname.
  const bool require_all = !pod.spread_constraints().empty() || !args_.system_defaulted;

  auto s = std::make_unique<PreScoreState>();
  s->counts.resize(cs.size());
  for (size_t idx = 0; idx < nodes.size(); ++idx) {
    const Node node = nodes[idx].node();
    const Labels labels = node.labels();
    if (require_all && !HasAllKeys(labels, cs)) {
      s->ignored_nodes.push_back(node.name_id());
      continue;
    }
    for (size_t i = 0; i < cs.size(); ++i) {
      if (cs[i].topology_key == SCHEDHOST_ID_LABEL_HOSTNAME) continue;  // counted in Score
      // A missing label is the empty value, as upstream's map lookup gives.
      s->counts[i].Append(labels.Get(cs[i].topology_key).value_or(SCHEDHOST_ID_EMPTY), 0);
    }
  }
  std::sort(s->ignored_nodes.begin(), s->ignored_nodes.end());
  s->weights.resize(cs.size());
  for (size_t i = 0; i < cs.size(); ++i) {
    s->counts[i].Build();
    const size_t size = cs[i].topology_key == SCHEDHOST_ID_LABEL_HOSTNAME
                            ? nodes.size() - s->ignored_nodes.size()
                            : s->counts[i].size();
    s->weights[i] = TopologyNormalizingWeight(size);
  }

  // Every node of the cluster counts towards the domains of the feasible nodes.
  for (size_t idx = 0; idx < all; ++idx) {
    const auto ni = host().NodeAt(idx);
    if (!ni) continue;
    const Node node = ni->node();
    const Labels labels = node.labels();
    if (require_all && !HasAllKeys(labels, cs)) continue;
    NodeVerdicts verdicts;
    for (size_t i = 0; i < cs.size(); ++i) {
      if (cs[i].topology_key == SCHEDHOST_ID_LABEL_HOSTNAME) continue;
      DomainCount* d =
          s->counts[i].Find(labels.Get(cs[i].topology_key).value_or(SCHEDHOST_ID_EMPTY));
      if (d == nullptr || !NodeIncluded(cs[i], pod, node, verdicts)) continue;
      d->count += CountMatching(*ni, cs[i].selector, pod.namespace_id());
    }
  }
  s->constraints = std::move(constraints);
  state.Write(pre_score_key_, std::move(s));
  return {};
}

Status PodTopologySpread::Score(const CycleState& state, const Pod& pod, const NodeInfo& ni,
                                int64_t& score) {
  score = 0;
  const auto* s = state.Read<PreScoreState>(pre_score_key_);
  if (s == nullptr) {
    return Status::Error("reading \"PreScorePodTopologySpread\" from cycleState: not found");
  }
  const Node node = ni.node();
  if (IsIgnored(*s, node.name_id())) return {};
  const Constraints& cs = *s->constraints;
  const Labels labels = node.labels();
  double total = 0;
  for (size_t i = 0; i < cs.size(); ++i) {
    const auto value = labels.Get(cs[i].topology_key);
    if (!value) continue;
    int64_t count = 0;
    if (cs[i].topology_key == SCHEDHOST_ID_LABEL_HOSTNAME) {
      count = CountMatching(ni, cs[i].selector, pod.namespace_id());
    } else if (const DomainCount* d = s->counts[i].Find(*value)) {
      count = d->count;
    }
    // maxSkew - 1 softens small differences between domains: the bigger maxSkew, the less a
    // difference of one pod matters.
    total += static_cast<double>(count) * s->weights[i] + static_cast<double>(cs[i].max_skew - 1);
  }
  score = std::llround(total);
  return {};
}

Status PodTopologySpread::NormalizeScore(const CycleState& state, const Pod& /*pod*/,
                                         std::span<schedhost_node_score> scores) {
  const auto* s = state.Read<PreScoreState>(pre_score_key_);
  if (s == nullptr) return {};
  int64_t min_score = std::numeric_limits<int64_t>::max();
  int64_t max_score = 0;
  for (const schedhost_node_score& ns : scores) {
    if (IsIgnored(*s, ns.node_info->node->name_id)) continue;
    min_score = std::min(min_score, ns.score);
    max_score = std::max(max_score, ns.score);
  }
  for (schedhost_node_score& ns : scores) {
    if (IsIgnored(*s, ns.node_info->node->name_id)) {
      ns.score = 0;
    } else if (max_score == 0) {
      ns.score = SCHEDHOST_MAX_NODE_SCORE;
    } else {
      ns.score = SCHEDHOST_MAX_NODE_SCORE * (max_score + min_score - ns.score) / max_score;
    }
  }
  return {};
}

}  // namespace schedhost::plugins
