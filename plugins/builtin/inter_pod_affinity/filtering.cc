// InterPodAffinity's Filter side: PreFilter builds the topology-pair counts of the three
// required rules, AddPod/RemovePod keep them current for nominated pods and preemption, and
// Filter reads them per node (concurrently, read-only).
#include <memory>
#include <string>

#include "inter_pod_affinity.h"

namespace schedhost::plugins {
namespace {

// PreFilterState is what Filter reads: the incoming pod's required terms (views valid for the
// cycle) and, per topology pair, how many pods make each rule bite. Copyable: the host clones
// it for preemption and nominated pods before calling AddPod/RemovePod on the copy.
struct PreFilterState {
  Id namespace_id = 0;
  std::span<const schedhost_pod_affinity_term> affinity;
  std::span<const schedhost_pod_affinity_term> anti_affinity;
  // The incoming pod matches all of its own required affinity terms (first pod of a group).
  bool matches_own_affinity = false;
  // Pairs whose domain holds an existing pod whose required anti-affinity matches the pod.
  PairCounts existing_anti_affinity;
  // Pairs whose domain holds pods matching every required affinity term, counted per term.
  PairCounts affinity_counts;
  // Pairs whose domain holds pods matching a required anti-affinity term, counted per term.
  PairCounts anti_affinity_counts;
};

void CountTerms(PairCounts& counts, std::span<const schedhost_pod_affinity_term> terms,
                const Labels& node_labels, int64_t delta) {
  for (const schedhost_pod_affinity_term& t : terms) {
    if (auto v = node_labels.Get(t.topology_key)) counts.Add(TopologyPair(t.topology_key, *v), delta);
  }
}

// CountExistingAntiAffinity counts `existing`'s required anti-affinity terms that match the
// incoming pod in the domains of `node_labels`.
void CountExistingAntiAffinity(const Host& host, PreFilterState& s, const Pod& incoming,
                               const Pod& existing, const Labels& node_labels, int64_t delta) {
  for (const schedhost_pod_affinity_term& t : RequiredAntiAffinity(existing)) {
    if (!TermMatches(host, t, existing.namespace_id(), incoming, Side::kExisting)) continue;
    if (auto v = node_labels.Get(t.topology_key)) {
      s.existing_anti_affinity.Add(TopologyPair(t.topology_key, *v), delta);
    }
  }
}

// CountIncoming counts `existing` against the incoming pod's required terms.
void CountIncoming(const Host& host, PreFilterState& s, const Pod& existing,
                   const Labels& node_labels, int64_t delta) {
  // upstream: an existing pod counts for affinity only when it matches every term.
  if (!s.affinity.empty() &&
      MatchesAllTerms(host, s.affinity, s.namespace_id, existing, Side::kIncoming)) {
    CountTerms(s.affinity_counts, s.affinity, node_labels, delta);
  }
  for (const schedhost_pod_affinity_term& t : s.anti_affinity) {
    if (!TermMatches(host, t, s.namespace_id, existing, Side::kIncoming)) continue;
    if (auto v = node_labels.Get(t.topology_key)) {
      s.anti_affinity_counts.Add(TopologyPair(t.topology_key, *v), delta);
    }
  }
}

Status UpdateWithPod(const Host& host, CycleState& state, Id key, const Pod& incoming,
                     const Pod& other, const NodeInfo& ni, int64_t delta) {
  auto* s = state.Read<PreFilterState>(key);
  if (s == nullptr) return Status::Error("InterPodAffinity: reading PreFilter state: not found");
  const Labels labels = ni.node().labels();
  CountExistingAntiAffinity(host, *s, incoming, other, labels, delta);
  CountIncoming(host, *s, other, labels, delta);
  return {};
}

bool SatisfiesAffinity(const PreFilterState& s, const Labels& labels) {
  bool pods_exist = true;
  for (const schedhost_pod_affinity_term& t : s.affinity) {
    auto v = labels.Get(t.topology_key);
    // upstream: every topology key of the required affinity terms must be on the node.
    if (!v) return false;
    if (s.affinity_counts.Get(TopologyPair(t.topology_key, *v)) <= 0) pods_exist = false;
  }
  if (pods_exist) return true;
  // The first pod of a group whose terms select itself: allowed when no pod anywhere matches.
  return s.affinity_counts.empty() && s.matches_own_affinity;
}

bool SatisfiesAntiAffinity(const PreFilterState& s, const Labels& labels) {
  if (s.anti_affinity_counts.empty()) return true;
  for (const schedhost_pod_affinity_term& t : s.anti_affinity) {
    auto v = labels.Get(t.topology_key);
    if (v && s.anti_affinity_counts.Get(TopologyPair(t.topology_key, *v)) > 0) return false;
  }
  return true;
}

bool SatisfiesExistingAntiAffinity(const PreFilterState& s, const Labels& labels) {
  // upstream looks every node label up; only the labels whose key some pair has can match.
  for (const auto& [key, pairs] : s.existing_anti_affinity.keys()) {
    auto v = labels.Get(key);
    if (v && s.existing_anti_affinity.Get(TopologyPair(key, *v)) > 0) return false;
  }
  return true;
}

}  // namespace

Status InterPodAffinity::PreFilter(CycleState& state, const Pod& pod, PreFilterResult& /*result*/) {
  const schedhost_host_api* api = host().api();
  const schedhost_node_info_view* const* anti_nodes = nullptr;
  size_t anti_nodes_len = 0;
  if (api->snapshot_have_pods_with_required_anti_affinity(host().handle(), &anti_nodes,
                                                          &anti_nodes_len) != SCHEDHOST_OK) {
    return Status::Error("InterPodAffinity: listing nodes with required anti-affinity pods");
  }
  auto s = std::make_unique<PreFilterState>();
  s->namespace_id = pod.namespace_id();
  s->affinity = RequiredAffinity(pod);
  s->anti_affinity = RequiredAntiAffinity(pod);
  if (s->affinity.empty() && s->anti_affinity.empty() && anti_nodes_len == 0) {
    return Status::Skip();
  }
  for (size_t i = 0; i < anti_nodes_len; ++i) {
    const NodeInfo ni(anti_nodes[i]);
    const Labels labels = ni.node().labels();
    for (const Pod existing : ni.pods_with_required_anti_affinity()) {
      CountExistingAntiAffinity(host(), *s, pod, existing, labels, 1);
    }
  }
  if (!s->affinity.empty() || !s->anti_affinity.empty()) {
    const size_t n = host().NodeCount();
    for (size_t i = 0; i < n; ++i) {
      const schedhost_node_info_view* v = api->snapshot_node_at(host().handle(), i);
      if (v == nullptr) continue;
      const NodeInfo ni(v);
      const Labels labels = ni.node().labels();
      if (labels.empty()) continue;  // no topology domain to count in
      for (const Pod existing : ni.pods()) CountIncoming(host(), *s, existing, labels, 1);
    }
    s->matches_own_affinity =
        !s->affinity.empty() &&
        MatchesAllTerms(host(), s->affinity, s->namespace_id, pod, Side::kIncoming);
  }
  state.Write(prefilter_key_, std::move(s));
  return {};
}

Status InterPodAffinity::AddPod(CycleState& state, const Pod& pod, const Pod& to_add,
                                const NodeInfo& ni) {
  return UpdateWithPod(host(), state, prefilter_key_, pod, to_add, ni, 1);
}

Status InterPodAffinity::RemovePod(CycleState& state, const Pod& pod, const Pod& to_remove,
                                   const NodeInfo& ni) {
  return UpdateWithPod(host(), state, prefilter_key_, pod, to_remove, ni, -1);
}

Status InterPodAffinity::Filter(const CycleState& state, const Pod& /*pod*/, const NodeInfo& ni) {
  const auto* s = state.Read<PreFilterState>(prefilter_key_);
  if (s == nullptr) return Status::Error("InterPodAffinity: reading PreFilter state: not found");
  const Labels labels = ni.node().labels();
  if (!SatisfiesAffinity(*s, labels)) {
    return Status::UnschedulableAndUnresolvable(Status::Static{kErrReasonAffinity});
  }
  if (!SatisfiesAntiAffinity(*s, labels)) {
    return Status::Unschedulable(Status::Static{kErrReasonAntiAffinity});
  }
  if (!SatisfiesExistingAntiAffinity(*s, labels)) {
    return Status::Unschedulable(Status::Static{kErrReasonExistingAntiAffinity});
  }
  return {};
}

}  // namespace schedhost::plugins
