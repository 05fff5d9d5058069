// InterPodAffinity's Score side: PreScore sums term weights per topology pair over the pods
// that matter, Score adds up the pairs of one node, NormalizeScore maps min..max to 0..100.
#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>
#include <string>

#include "inter_pod_affinity.h"

namespace schedhost::plugins {
namespace {

// PreScoreState holds the summed weights per topology pair in (*sums)[0] (shared with the
// plugin's cache when it came from there); Score looks up one value per topology key of the
// counted pairs. Read-only after PreScore.
struct PreScoreState {
  std::shared_ptr<const RuleCounts> sums;
  const PairCounts& scores() const { return (*sums)[0]; }
};

// ScoreExisting calls add(pair, weight) for what `existing`, a pod on a node with
// `node_labels`, adds to the incoming pod's scores: the incoming pod's preferred terms against
// it, and its required affinity (weighted `hard`) and preferred terms against the incoming pod.
template <typename Add>
void ScoreExisting(const Host& host, const Pod& pod,
                   std::span<const schedhost_pod_affinity_term> pref_affinity,
                   std::span<const schedhost_pod_affinity_term> pref_anti, int64_t hard,
                   const Pod& existing, const Labels& node_labels, Add&& add) {
  const auto term = [&](const schedhost_pod_affinity_term& t, Id owner_ns, const Pod& target,
                        Side side, int64_t weight) {
    auto v = node_labels.Get(t.topology_key);
    if (v && TermMatches(host, t, owner_ns, target, side)) {
      add(TopologyPair(t.topology_key, *v), weight);
    }
  };
  const Id ns = pod.namespace_id();
  for (const auto& t : pref_affinity) term(t, ns, existing, Side::kIncoming, t.weight);
  for (const auto& t : pref_anti) term(t, ns, existing, Side::kIncoming, -int64_t{t.weight});
  const Id other_ns = existing.namespace_id();
  if (hard > 0) {
    for (const auto& t : RequiredAffinity(existing)) term(t, other_ns, pod, Side::kExisting, hard);
  }
  for (const auto& t : PreferredAffinity(existing)) {
    term(t, other_ns, pod, Side::kExisting, t.weight);
  }
  for (const auto& t : PreferredAntiAffinity(existing)) {
    term(t, other_ns, pod, Side::kExisting, -int64_t{t.weight});
  }
}

}  // namespace

Status InterPodAffinity::PreScore(CycleState& state, const Pod& pod, const NodeInfoList& nodes) {
  // Filter is over, and nothing reads its state after it: letting go of it here, rather than
  // when the binding cycle ends, lets the next cycle's PreFilter update the shared counts in
  // place instead of copying them.
  state.Delete(prefilter_key_);
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
  if (!has_constraints) {
    if (api->snapshot_have_pods_with_affinity(host().handle(), &list, &len) != SCHEDHOST_OK) {
      return Status::Error("InterPodAffinity: listing nodes with affinity pods");
    }
    if (len == 0) return Status::Skip();
  }
  auto s = std::make_unique<PreScoreState>();
  const int64_t hard = args_.hard_pod_affinity_weight;
  const size_t n = host().NodeCount();
  std::string key;
  // With most nodes to visit anyway, the sums of the last pod of the same kind are brought up
  // to date by visiting only the nodes that changed since.
  if ((has_constraints || 8 * len >= n) && ScoreCacheKey(host(), pod, key)) {
    std::lock_guard lock(cache_mu_);
    s->sums = ScoreCached(CacheFor(key), pod, has_constraints);
  } else {
    auto sums = std::make_shared<RuleCounts>();
    PairCounts& scores = (*sums)[0];
    std::vector<const schedhost_node_info_view*> all;
    if (has_constraints) {
      all.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        if (const auto* v = api->snapshot_node_at(host().handle(), i)) all.push_back(v);
      }
      list = all.data();
      len = all.size();
    }
    for (size_t i = 0; i < len; ++i) {
      const NodeInfo ni(list[i]);
      const Labels labels = ni.node().labels();
      if (labels.empty()) continue;
      for (const Pod existing : has_constraints ? ni.pods() : ni.pods_with_affinity()) {
        ScoreExisting(host(), pod, pref_affinity, pref_anti, hard, existing, labels,
                      [&scores](uint64_t pair, int64_t weight) { scores.Add(pair, weight); });
      }
    }
    s->sums = std::move(sums);
  }
  if (s->scores().empty()) return Status::Skip();
  state.Write(prescore_key_, std::move(s));
  return {};
}

std::shared_ptr<RuleCounts> InterPodAffinity::ScoreCached(CountCache& cache, const Pod& pod,
                                                          bool all_pods) {
  const auto pref_affinity = PreferredAffinity(pod);
  const auto pref_anti = PreferredAntiAffinity(pod);
  const int64_t hard = args_.hard_pod_affinity_weight;
  return UpdateShares(cache, [&](const NodeInfo& ni, const Labels& labels, const auto& add) {
    for (const Pod existing : all_pods ? ni.pods() : ni.pods_with_affinity()) {
      ScoreExisting(host(), pod, pref_affinity, pref_anti, hard, existing, labels,
                    [&add](uint64_t pair, int64_t weight) {
                      add(kExistingAntiAffinity, pair, static_cast<int32_t>(weight));
                    });
    }
  });
}

Status InterPodAffinity::Score(const CycleState& state, const Pod& /*pod*/, const NodeInfo& ni,
                               int64_t& score) {
  const auto* s = state.Read<PreScoreState>(prescore_key_);
  if (s == nullptr) return Status::Error("InterPodAffinity: reading PreScore state: not found");
  const Labels labels = ni.node().labels();
  int64_t total = 0;
  const PairCounts& scores = s->scores();
  for (const auto& [key, pairs] : scores.keys()) {
    if (auto v = labels.Get(key)) total += scores.Get(TopologyPair(key, *v));
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
