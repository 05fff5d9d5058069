// InterPodAffinity's Score side: PreScore sums term weights per topology pair over the pods
// that matter, Score adds up the pairs of one node, NormalizeScore maps min..max to 0..100.
#include <algorithm>
#include <limits>
#include <memory>

#include "inter_pod_affinity.h"

namespace schedhost::plugins {
namespace {

// PreScoreState holds the summed weights per topology pair and the distinct topology keys, so
// Score looks up one value per key. Read-only after PreScore.
struct PreScoreState {
  PairCounts scores;
  std::vector<Id> keys;
};

void AddKey(std::vector<Id>& keys, Id key) {
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
}

// ProcessTerm adds weight * sign to the domain of `node_labels` when `target` matches `term`.
void ProcessTerm(const Host& host, PreScoreState& s, const schedhost_pod_affinity_term& term,
                 Id owner_ns, const Pod& target, Side side, const Labels& node_labels,
                 int64_t weight) {
  auto v = node_labels.Get(term.topology_key);
  if (!v || !TermMatches(host, term, owner_ns, target, side)) return;
  s.scores.Add(TopologyPair(term.topology_key, *v), weight);
  AddKey(s.keys, term.topology_key);
}

void ProcessPreferred(const Host& host, PreScoreState& s,
                      std::span<const schedhost_pod_affinity_term> terms, Id owner_ns,
                      const Pod& target, Side side, const Labels& node_labels, int64_t sign) {
  for (const schedhost_pod_affinity_term& t : terms) {
    ProcessTerm(host, s, t, owner_ns, target, side, node_labels, sign * t.weight);
  }
}

}  // namespace

Status InterPodAffinity::PreScore(CycleState& state, const Pod& pod, const NodeInfoList& nodes) {
  if (nodes.size() == 0) return Status::Skip();
  const auto pref_affinity = PreferredAffinity(pod);
  const auto pref_anti = PreferredAntiAffinity(pod);
  const bool has_constraints = !pref_affinity.empty() || !pref_anti.empty();
  // upstream: the option only skips pods without preferred terms of their own.
  if (args_.ignore_preferred_terms_of_existing_pods && !has_constraints) return Status::Skip();

  // Without preferred terms of its own, only pods with affinity can score the pod.
  const schedhost_host_api* api = host().api();
  const schedhost_node_info_view* const* list = nullptr;
  size_t len = 0;
  std::vector<const schedhost_node_info_view*> all;
  if (has_constraints) {
    const size_t n = host().NodeCount();
    all.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      if (const auto* v = api->snapshot_node_at(host().handle(), i)) all.push_back(v);
    }
    list = all.data();
    len = all.size();
  } else if (api->snapshot_have_pods_with_affinity(host().handle(), &list, &len) != SCHEDHOST_OK) {
    return Status::Error("InterPodAffinity: listing nodes with affinity pods");
  }

  auto s = std::make_unique<PreScoreState>();
  const Id ns = pod.namespace_id();
  const int64_t hard = args_.hard_pod_affinity_weight;
  for (size_t i = 0; i < len; ++i) {
    const NodeInfo ni(list[i]);
    const Labels labels = ni.node().labels();
    if (labels.empty()) continue;
    const PodList pods = has_constraints ? ni.pods() : ni.pods_with_affinity();
    for (const Pod existing : pods) {
      // The incoming pod's preferred terms against the existing pod.
      ProcessPreferred(host(), *s, pref_affinity, ns, existing, Side::kIncoming, labels, 1);
      ProcessPreferred(host(), *s, pref_anti, ns, existing, Side::kIncoming, labels, -1);
      // The existing pod's terms against the incoming pod.
      const Id other_ns = existing.namespace_id();
      if (hard > 0) {
        for (const schedhost_pod_affinity_term& t : RequiredAffinity(existing)) {
          ProcessTerm(host(), *s, t, other_ns, pod, Side::kExisting, labels, hard);
        }
      }
      ProcessPreferred(host(), *s, PreferredAffinity(existing), other_ns, pod, Side::kExisting,
                       labels, 1);
      ProcessPreferred(host(), *s, PreferredAntiAffinity(existing), other_ns, pod,
                       Side::kExisting, labels, -1);
    }
  }
  if (s->scores.empty()) return Status::Skip();
  state.Write(prescore_key_, std::move(s));
  return {};
}

Status InterPodAffinity::Score(const CycleState& state, const Pod& /*pod*/, const NodeInfo& ni,
                               int64_t& score) {
  const auto* s = state.Read<PreScoreState>(prescore_key_);
  if (s == nullptr) return Status::Error("InterPodAffinity: reading PreScore state: not found");
  const Labels labels = ni.node().labels();
  int64_t total = 0;
  for (Id key : s->keys) {
    if (auto v = labels.Get(key)) total += s->scores.Get(TopologyPair(key, *v));
  }
  score = total;
  return {};
}

Status InterPodAffinity::NormalizeScore(const CycleState& state, const Pod& /*pod*/,
                                        std::span<schedhost_node_score> scores) {
  if (state.Read<PreScoreState>(prescore_key_) == nullptr || scores.empty()) return {};
  int64_t min = std::numeric_limits<int64_t>::max();
  int64_t max = std::numeric_limits<int64_t>::min();
  for (const auto& s : scores) {
    min = std::min(min, s.score);
    max = std::max(max, s.score);
  }
  const int64_t diff = max - min;
  for (auto& s : scores) {
    // upstream: float64(MaxNodeScore) * (score - min) / (max - min), truncated.
    s.score = diff > 0 ? static_cast<int64_t>(static_cast<double>(SCHEDHOST_MAX_NODE_SCORE) *
                                              (static_cast<double>(s.score - min) /
                                               static_cast<double>(diff)))
                       : 0;
  }
  return {};
}

}  // namespace schedhost::plugins
