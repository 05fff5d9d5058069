// PodTopologySpread's Filter side: PreFilter counts matching pods per domain of every
// DoNotSchedule constraint, AddPod/RemovePod keep the counts right for nominated pods and
// preemption, and Filter applies the skew rule.
#include <algorithm>
#include <string>
#include <utility>

#include "pod_topology_spread.h"

namespace schedhost::plugins {

Status PodTopologySpread::PreFilter(CycleState& state, const Pod& pod,
                                    PreFilterResult& /*result*/) {
  auto constraints =
      std::make_shared<const Constraints>(BuildConstraints(pod, SCHEDHOST_DO_NOT_SCHEDULE));
  // upstream: no hard constraint, nothing to check; Skip also skips Filter.
  if (constraints->empty()) return Status::Skip();
  const Constraints& cs = *constraints;
  auto s = std::make_unique<PreFilterState>();
  s->counts.resize(cs.size());
  s->critical.resize(cs.size());
  s->self_match.resize(cs.size());
  for (size_t i = 0; i < cs.size(); ++i) s->self_match[i] = cs[i].selector.Matches(pod) ? 1 : 0;

  // Domains come from every node of the snapshot that carries all the topology keys and passes
  // the constraint's inclusion policies; pods are counted per node and summed per domain.
  const size_t n = host().NodeCount();
  std::lock_guard lock(count_mu_);
  std::vector<MatchCounts*> cached(cs.size());
  if (PolicyFree(pod, cs)) {
    for (size_t i = 0; i < cs.size(); ++i) {
      cached[i] = &CountsFor(cs[i].selector, pod.namespace_id(), &cs[i]);
    }
    std::vector<const CountAt*> entries(cs.size());
    for (size_t idx = 0; idx < n; ++idx) {
      const auto ni = host().NodeAt(idx);
      if (!ni) continue;
      bool all_keys = true;
      for (size_t i = 0; i < cs.size(); ++i) {
        entries[i] = &CachedPlace(*cached[i], idx, *ni, cs[i], pod, pod.namespace_id());
        all_keys &= entries[i]->place != Place::kMissingKey;
      }
      if (!all_keys) continue;
      for (size_t i = 0; i < cs.size(); ++i) {
        if (entries[i]->place == Place::kIncluded) {
          s->counts[i].Append(entries[i]->value, entries[i]->count);
        }
      }
    }
  } else {
    for (size_t i = 0; i < cs.size(); ++i)
      cached[i] = &CountsFor(cs[i].selector, pod.namespace_id());
    for (size_t idx = 0; idx < n; ++idx) {
      const auto ni = host().NodeAt(idx);
      if (!ni) continue;
      const Node node = ni->node();
      const Labels labels = node.labels();
      if (!HasAllKeys(labels, cs)) continue;
      NodeVerdicts verdicts;
      for (size_t i = 0; i < cs.size(); ++i) {
        if (!NodeIncluded(cs[i], pod, node, verdicts)) continue;
        s->counts[i].Append(*labels.Get(cs[i].topology_key),
                            CachedCount(*cached[i], idx, *ni, cs[i].selector, pod.namespace_id()));
      }
    }
  }
  for (DomainCounts& dc : s->counts) dc.Build();
  for (size_t i = 0; i < cs.size(); ++i) {
    for (const DomainCount& d : s->counts[i].items()) s->critical[i].Update(d.value, d.count);
  }
  s->constraints = std::move(constraints);
  state.Write(pre_filter_key_, std::move(s));
  return {};
}

bool PodTopologySpread::PolicyFree(const Pod& pod, const Constraints& cs) {
  const bool affinity = std::any_of(
      cs.begin(), cs.end(), [](const SpreadConstraint& c) { return c.honor_node_affinity; });
  const bool taints = std::any_of(cs.begin(), cs.end(),
                                  [](const SpreadConstraint& c) { return c.honor_node_taints; });
  const schedhost_affinity* a = pod.affinity();
  if (affinity &&
      (!pod.node_selector().empty() || (a != nullptr && a->has_required_node_affinity != 0))) {
    return false;
  }
  return !taints || pod.tolerations().empty();
}

const PodTopologySpread::CountAt& PodTopologySpread::CachedPlace(MatchCounts& counts, size_t index,
                                                                 const NodeInfo& ni,
                                                                 const SpreadConstraint& c,
                                                                 const Pod& pod, Id ns) const {
  if (counts.size() <= index) counts.resize(index + 1);
  CountAt& e = counts[index];
  const uint64_t generation = ni.generation();
  if (generation == 0 || e.generation != generation) {
    const Node node = ni.node();
    const auto value = node.labels().Get(c.topology_key);
    NodeVerdicts verdicts;
    e.value = value.value_or(0);
    e.place = !value                                 ? Place::kMissingKey
              : NodeIncluded(c, pod, node, verdicts) ? Place::kIncluded
                                                     : Place::kExcluded;
    e.count = e.place == Place::kIncluded ? CountMatching(ni, c.selector, ns) : 0;
    e.generation = generation;
  }
  return e;
}

PodTopologySpread::MatchCounts& PodTopologySpread::CountsFor(const SpreadSelector& selector, Id ns,
                                                             const SpreadConstraint* placed) const {
  // The key spells the selector out: kind, each requirement (key, operator, values), the
  // controller, and the namespace.
  std::string key;
  const auto put = [&key](uint64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(static_cast<uint64_t>(selector.kind));
  put(ns);
  for (const SpreadSelector::Requirement& r : selector.requirements) {
    put(r.key);
    put(static_cast<uint64_t>(static_cast<uint32_t>(r.op)));
    put(r.values.size());
    for (Id v : r.values) put(v);
  }
  put(selector.controller_kind.size());
  key += selector.controller_kind;
  key += selector.controller_name;
  if (placed != nullptr) {
    // Placed entries also depend on the topology key and the policies (a name can't hold \0).
    key += '\0';
    put(placed->topology_key);
    put((placed->honor_node_affinity ? 1U : 0U) | (placed->honor_node_taints ? 2U : 0U));
  }
  if (auto it = match_counts_.find(key); it != match_counts_.end()) return it->second;
  // A host that sees ever new selectors starts over when a 33rd arrives.
  constexpr size_t kMaxSelectors = 32;
  if (match_counts_.size() >= kMaxSelectors) match_counts_.clear();
  return match_counts_[key];
}

int64_t PodTopologySpread::CachedCount(MatchCounts& counts, size_t index, const NodeInfo& ni,
                                       const SpreadSelector& selector, Id ns) {
  if (counts.size() <= index) counts.resize(index + 1);
  CountAt& c = counts[index];
  const uint64_t generation = ni.generation();
  if (generation == 0 || c.generation != generation) {
    c.count = CountMatching(ni, selector, ns);
    c.generation = generation;
  }
  return c.count;
}

Status PodTopologySpread::UpdateWithPod(CycleState& state, const Pod& pod, const Pod& changed,
                                        const NodeInfo& ni, int64_t delta) const {
  auto* s = state.Read<PreFilterState>(pre_filter_key_);
  if (s == nullptr || !s->constraints) return {};  // PreFilter skipped: nothing is counted
  if (changed.namespace_id() != pod.namespace_id()) return {};
  const Node node = ni.node();
  const Labels labels = node.labels();
  const Constraints& cs = *s->constraints;
  if (!HasAllKeys(labels, cs)) return {};
  NodeVerdicts verdicts;
  for (size_t i = 0; i < cs.size(); ++i) {
    // upstream matches the selector here without the empty-selector exception of counting.
    if (!cs[i].selector.Matches(changed) || !NodeIncluded(cs[i], pod, node, verdicts)) continue;
    const Id value = *labels.Get(cs[i].topology_key);
    DomainCount& d = s->counts[i].Insert(value);
    d.count += delta;
    s->critical[i].Update(value, d.count);
  }
  return {};
}

Status PodTopologySpread::AddPod(CycleState& state, const Pod& pod, const Pod& to_add,
                                 const NodeInfo& ni) {
  return UpdateWithPod(state, pod, to_add, ni, 1);
}

Status PodTopologySpread::RemovePod(CycleState& state, const Pod& pod, const Pod& to_remove,
                                    const NodeInfo& ni) {
  return UpdateWithPod(state, pod, to_remove, ni, -1);
}

Status PodTopologySpread::Filter(const CycleState& state, const Pod& /*pod*/, const NodeInfo& ni) {
  const auto* s = state.Read<PreFilterState>(pre_filter_key_);
  if (s == nullptr) {
    return Status::Error("reading \"PreFilterPodTopologySpread\" from cycleState: not found");
  }
  if (!s->constraints) return {};
  const Constraints& cs = *s->constraints;
  const Labels labels = ni.node().labels();
  for (size_t i = 0; i < cs.size(); ++i) {
    const auto value = labels.Get(cs[i].topology_key);
    if (!value)
      return Status::UnschedulableAndUnresolvable(Status::Static{kErrReasonNodeLabelNotMatch});
    const DomainCounts& dc = s->counts[i];
    // No domain at all (no node passed the policies): upstream skips the constraint.
    if (dc.size() == 0) continue;
    // minDomains: with fewer domains than required, the global minimum is taken as 0.
    const int64_t min_match =
        static_cast<int64_t>(dc.size()) < cs[i].min_domains ? 0 : s->critical[i].paths[0].count;
    const DomainCount* d = dc.Find(*value);
    const int64_t match = d != nullptr ? d->count : 0;
    if (match + s->self_match[i] - min_match > cs[i].max_skew) {
      return Status::Unschedulable(Status::Static{kErrReasonConstraintsNotMatch});
    }
  }
  return {};
}

}  // namespace schedhost::plugins
