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
  // [kExistingAntiAffinity]: pairs whose domain holds an existing pod whose required
  // anti-affinity matches the pod. [kAffinity]: pairs whose domain holds pods matching every
  // required affinity term, counted per term. [kAntiAffinity]: pairs whose domain holds pods
  // matching a required anti-affinity term, counted per term. Shared with the plugin's cache
  // and with clones of the state: copied before AddPod/RemovePod change it.
  std::shared_ptr<RuleCounts> counts;
};

// CountExistingAntiAffinity calls add(rule, pair) for `existing`'s required anti-affinity
// terms that match the incoming pod in the domains of `node_labels`.
template <typename Add>
void CountExistingAntiAffinity(const Host& host, const Pod& incoming, const Pod& existing,
                               const Labels& node_labels, Add&& add) {
  for (const schedhost_pod_affinity_term& t : RequiredAntiAffinity(existing)) {
    if (!TermMatches(host, t, existing.namespace_id(), incoming, Side::kExisting)) continue;
    if (auto v = node_labels.Get(t.topology_key)) {
      add(kExistingAntiAffinity, TopologyPair(t.topology_key, *v));
    }
  }
}

// CountIncoming calls add(rule, pair) for `existing` against the incoming pod's required terms
// (those of a pod in namespace `ns`).
template <typename Add>
void CountIncoming(const Host& host, Id ns, std::span<const schedhost_pod_affinity_term> affinity,
                   std::span<const schedhost_pod_affinity_term> anti_affinity, const Pod& existing,
                   const Labels& node_labels, Add&& add) {
  // upstream: an existing pod counts for affinity only when it matches every term.
  if (!affinity.empty() && MatchesAllTerms(host, affinity, ns, existing, Side::kIncoming)) {
    for (const schedhost_pod_affinity_term& t : affinity) {
      if (auto v = node_labels.Get(t.topology_key))
        add(kAffinity, TopologyPair(t.topology_key, *v));
    }
  }
  for (const schedhost_pod_affinity_term& t : anti_affinity) {
    if (!TermMatches(host, t, ns, existing, Side::kIncoming)) continue;
    if (auto v = node_labels.Get(t.topology_key)) {
      add(kAntiAffinity, TopologyPair(t.topology_key, *v));
    }
  }
}

Status UpdateWithPod(const Host& host, CycleState& state, Id key, const Pod& incoming,
                     const Pod& other, const NodeInfo& ni, int64_t delta) {
  auto* s = state.Read<PreFilterState>(key);
  if (s == nullptr) return Status::Error("InterPodAffinity: reading PreFilter state: not found");
  const Labels labels = ni.node().labels();
  RuleCounts& counts = Unshare(s->counts);
  const auto add = [&](Rule rule, uint64_t pair) { counts[rule].Add(pair, delta); };
  CountExistingAntiAffinity(host, incoming, other, labels, add);
  CountIncoming(host, s->namespace_id, s->affinity, s->anti_affinity, other, labels, add);
  return {};
}

bool SatisfiesAffinity(const PreFilterState& s, const Labels& labels) {
  bool pods_exist = true;
  for (const schedhost_pod_affinity_term& t : s.affinity) {
    auto v = labels.Get(t.topology_key);
    // upstream: every topology key of the required affinity terms must be on the node.
    if (!v) return false;
    if ((*s.counts)[kAffinity].Get(TopologyPair(t.topology_key, *v)) <= 0) pods_exist = false;
  }
  if (pods_exist) return true;
  // The first pod of a group whose terms select itself: allowed when no pod anywhere matches.
  return (*s.counts)[kAffinity].empty() && s.matches_own_affinity;
}

bool SatisfiesAntiAffinity(const PreFilterState& s, const Labels& labels) {
  if ((*s.counts)[kAntiAffinity].empty()) return true;
  for (const schedhost_pod_affinity_term& t : s.anti_affinity) {
    auto v = labels.Get(t.topology_key);
    if (v && (*s.counts)[kAntiAffinity].Get(TopologyPair(t.topology_key, *v)) > 0) return false;
  }
  return true;
}

bool SatisfiesExistingAntiAffinity(const PreFilterState& s, const Labels& labels) {
  // upstream looks every node label up; only the labels whose key some pair has can match.
  for (const auto& [key, pairs] : (*s.counts)[kExistingAntiAffinity].keys()) {
    auto v = labels.Get(key);
    if (v && (*s.counts)[kExistingAntiAffinity].Get(TopologyPair(key, *v)) > 0) return false;
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
  if (s->affinity.empty() && s->anti_affinity.empty()) {
    if (anti_nodes_len == 0) return Status::Skip();
    // Only existing pods' anti-affinity can bite, and only nodes holding such pods count.
    s->counts = std::make_shared<RuleCounts>();
    RuleCounts& counts = *s->counts;
    for (size_t i = 0; i < anti_nodes_len; ++i) {
      const NodeInfo ni(anti_nodes[i]);
      const Labels labels = ni.node().labels();
      for (const Pod existing : ni.pods_with_required_anti_affinity()) {
        CountExistingAntiAffinity(host(), pod, existing, labels,
                                  [&](Rule rule, uint64_t pair) { counts[rule].Add(pair, 1); });
      }
    }
    state.Write(prefilter_key_, std::move(s));
    return {};
  }
  // The pod's own terms read every node's pods: count through the cache of its kind, so only
  // the nodes that changed since the last such pod are read again.
  std::string key;
  if (CacheKey(host(), pod, s->affinity, s->anti_affinity, key)) {
    std::lock_guard lock(cache_mu_);
    s->counts = CountCached(CacheFor(key), pod, s->affinity, s->anti_affinity);
  } else {
    CountCache scratch;
    s->counts = CountCached(scratch, pod, s->affinity, s->anti_affinity);
  }
  s->matches_own_affinity =
      !s->affinity.empty() &&
      MatchesAllTerms(host(), s->affinity, s->namespace_id, pod, Side::kIncoming);
  state.Write(prefilter_key_, std::move(s));
  return {};
}

std::shared_ptr<RuleCounts> InterPodAffinity::CountCached(
    CountCache& cache, const Pod& pod, std::span<const schedhost_pod_affinity_term> affinity,
    std::span<const schedhost_pod_affinity_term> anti_affinity) {
  return UpdateShares(cache, [&](const NodeInfo& ni, const Labels& labels, const auto& add) {
    const auto add_one = [&add](Rule rule, uint64_t pair) { add(rule, pair, 1); };
    for (const Pod existing : ni.pods_with_required_anti_affinity()) {
      CountExistingAntiAffinity(host(), pod, existing, labels, add_one);
    }
    for (const Pod existing : ni.pods()) {
      CountIncoming(host(), pod.namespace_id(), affinity, anti_affinity, existing, labels, add_one);
    }
  });
}

InterPodAffinity::CountCache& InterPodAffinity::CacheFor(const std::string& key) {
  if (auto it = caches_.find(key); it != caches_.end()) return it->second;
  // A host that sees ever new kinds of pods starts over when a 17th arrives.
  constexpr size_t kMaxCaches = 16;
  if (caches_.size() >= kMaxCaches) caches_.clear();
  return caches_[key];
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
