// PodTopologySpread's shared pieces: selectors, domain counts and critical paths, building a
// pod's constraints (its own or the defaults), the node inclusion policies, and cluster events.
#include "pod_topology_spread.h"

#include <algorithm>

namespace schedhost::plugins {
namespace {

bool RequirementHolds(const SpreadSelector::Requirement& req, const Labels& labels) {
  const auto v = labels.Get(req.key);
  const bool in = v && std::find(req.values.begin(), req.values.end(), *v) != req.values.end();
  switch (req.op) {
    case SCHEDHOST_OP_IN: return in;
    case SCHEDHOST_OP_NOT_IN: return !in;
    case SCHEDHOST_OP_EXISTS: return v.has_value();
    case SCHEDHOST_OP_DOES_NOT_EXIST: return !v.has_value();
    default: return false;  // Gt/Lt are not label selector operators
  }
}

// ControllerRef returns the pod's controller owner reference, or nullptr.
const schedhost_owner_ref* ControllerRef(const Pod& pod) {
  for (const schedhost_owner_ref& ref : pod.owner_refs()) {
    if (ref.controller != 0) return &ref;
  }
  return nullptr;
}

// SelectorFrom converts a pod's label selector and adds matchLabelKeys' values from `labels`.
SpreadSelector SelectorFrom(const schedhost_spread_constraint& c, const Labels& labels) {
  SpreadSelector s;
  if (c.label_selector == nullptr) return s;  // nil selector: matches nothing, stays so
  s.kind = SpreadSelector::Kind::kLabels;
  for (const schedhost_requirement& r :
       MakeSpan(c.label_selector->requirements, c.label_selector->len)) {
    s.requirements.push_back({r.key, r.op, std::vector<Id>(r.values, r.values + r.values_len)});
  }
  // upstream: keys the incoming pod does not carry are ignored.
  for (Id key : MakeSpan(c.match_label_keys, c.match_label_keys_len)) {
    if (auto v = labels.Get(key)) s.requirements.push_back({key, SCHEDHOST_OP_IN, {*v}});
  }
  return s;
}

}  // namespace

bool SpreadSelector::Matches(const Pod& pod) const {
  switch (kind) {
    case Kind::kNothing: return false;
    case Kind::kLabels: {
      const Labels labels = pod.labels();
      return std::all_of(requirements.begin(), requirements.end(),
                         [&](const Requirement& r) { return RequirementHolds(r, labels); });
    }
    case Kind::kController: {
      const schedhost_owner_ref* ref = ControllerRef(pod);
      return ref != nullptr && ToView(ref->kind) == controller_kind &&
             ToView(ref->name) == controller_name;
    }
  }
  return false;
}

const DomainCount* DomainCounts::Find(Id value) const {
  auto it = std::lower_bound(items_.begin(), items_.end(), value,
                             [](const DomainCount& d, Id v) { return d.value < v; });
  return it != items_.end() && it->value == value ? &*it : nullptr;
}

DomainCount* DomainCounts::Find(Id value) {
  return const_cast<DomainCount*>(std::as_const(*this).Find(value));
}

DomainCount& DomainCounts::Insert(Id value) {
  auto it = std::lower_bound(items_.begin(), items_.end(), value,
                             [](const DomainCount& d, Id v) { return d.value < v; });
  if (it != items_.end() && it->value == value) return *it;
  return *items_.insert(it, DomainCount{value, 0});
}

void DomainCounts::Build() {
  std::sort(items_.begin(), items_.end(),
            [](const DomainCount& a, const DomainCount& b) { return a.value < b.value; });
  size_t out = 0;
  for (size_t i = 0; i < items_.size(); ++i) {
    if (out > 0 && items_[out - 1].value == items_[i].value) {
      items_[out - 1].count += items_[i].count;
    } else {
      items_[out++] = items_[i];
    }
  }
  items_.resize(out);
}

void CriticalPaths::Update(Id value, int64_t count) {
  int i = -1;
  if (value == paths[0].value) {
    i = 0;
  } else if (value == paths[1].value) {
    i = 1;
  }
  if (i >= 0) {
    paths[i].count = count;
    if (paths[0].count > paths[1].count) std::swap(paths[0], paths[1]);
    return;
  }
  if (count < paths[0].count) {
    paths[1] = paths[0];
    paths[0] = {value, count};
  } else if (count < paths[1].count) {
    paths[1] = {value, count};
  }
}

bool HasAllKeys(const Labels& labels, const Constraints& constraints) {
  return std::all_of(constraints.begin(), constraints.end(),
                     [&](const SpreadConstraint& c) { return labels.Has(c.topology_key); });
}

int64_t CountMatching(const NodeInfo& ni, const SpreadSelector& selector, Id ns) {
  if (selector.Empty() || selector.kind == SpreadSelector::Kind::kNothing) return 0;
  int64_t n = 0;
  // Pods being deleted are not modelled by schedhost: every pod on the node counts.
  for (const Pod p : ni.pods()) {
    if (p.namespace_id() == ns && selector.Matches(p)) ++n;
  }
  return n;
}

PodTopologySpread::PodTopologySpread(const Host& host, const Args& args)
    : Plugin(host),
      args_(ParsePodTopologySpreadArgs(host, args)),
      pre_filter_key_(host.Intern("PreFilterPodTopologySpread")),
      pre_score_key_(host.Intern("PreScorePodTopologySpread")) {}

Constraints PodTopologySpread::BuildConstraints(const Pod& pod, int32_t action) const {
  Constraints out;
  const auto own = pod.spread_constraints();
  if (!own.empty()) {
    const Labels labels = pod.labels();
    for (const schedhost_spread_constraint& c : own) {
      if (c.when_unsatisfiable != action) continue;
      SpreadConstraint sc;
      sc.max_skew = c.max_skew;
      sc.topology_key = c.topology_key;
      sc.min_domains = c.min_domains > 0 ? c.min_domains : 1;
      sc.honor_node_affinity = c.node_affinity_policy != SCHEDHOST_POLICY_IGNORE;
      sc.honor_node_taints = c.node_taints_policy == SCHEDHOST_POLICY_HONOR;
      sc.selector = SelectorFrom(c, labels);
      out.push_back(std::move(sc));
    }
    return out;
  }
  // Default constraints: upstream selects the pods of the Services, ReplicationControllers,
  // ReplicaSets and StatefulSets that select this pod; schedhost has none of those objects and
  // selects the pods of the same controller instead. No controller: no default constraints.
  const schedhost_owner_ref* ref = ControllerRef(pod);
  if (ref == nullptr) return out;
  for (const DefaultConstraint& d : args_.default_constraints) {
    if (d.when_unsatisfiable != action) continue;
    SpreadConstraint sc;
    sc.max_skew = d.max_skew;
    sc.topology_key = d.topology_key;
    sc.selector.kind = SpreadSelector::Kind::kController;
    sc.selector.controller_kind = std::string(ToView(ref->kind));
    sc.selector.controller_name = std::string(ToView(ref->name));
    out.push_back(std::move(sc));
  }
  return out;
}

bool PodTopologySpread::RequiredAffinityMatches(const Pod& pod, const Node& node) const {
  const Labels node_labels = node.labels();
  for (const schedhost_label& want : pod.node_selector().items()) {
    auto have = node_labels.Get(want.key);
    if (!have || *have != want.value) return false;
  }
  const schedhost_affinity* a = pod.affinity();
  if (a == nullptr || a->has_required_node_affinity == 0) return true;
  const auto terms = MakeSpan(a->required_node_terms, a->required_node_terms_len);
  return std::any_of(terms.begin(), terms.end(), [&](const schedhost_node_selector_term& t) {
    return host().NodeSelectorTermMatches(t, node);
  });
}

bool PodTopologySpread::NodeIncluded(const SpreadConstraint& c, const Pod& pod, const Node& node,
                                     NodeVerdicts& cache) const {
  if (c.honor_node_affinity) {
    if (cache.affinity < 0) cache.affinity = RequiredAffinityMatches(pod, node) ? 1 : 0;
    if (cache.affinity == 0) return false;
  }
  if (c.honor_node_taints) {
    if (cache.taints < 0) {
      cache.taints = 1;
      // upstream: only NoSchedule and NoExecute taints exclude a node.
      for (const schedhost_taint& t : node.taints()) {
        if ((t.effect == SCHEDHOST_EFFECT_NO_SCHEDULE || t.effect == SCHEDHOST_EFFECT_NO_EXECUTE) &&
            !AnyTolerates(pod.tolerations(), t)) {
          cache.taints = 0;
          break;
        }
      }
    }
    if (cache.taints == 0) return false;
  }
  return true;
}

int32_t PodTopologySpread::PodChangeHint(void* instance, const schedhost_pod_view* pod,
                                         const schedhost_cluster_event* /*event*/,
                                         const schedhost_event_object* old_obj,
                                         const schedhost_event_object* new_obj) noexcept {
  try {
    const auto* self = static_cast<const PodTopologySpread*>(instance);
    if (self == nullptr || pod == nullptr) return SCHEDHOST_QUEUE;
    const Pod waiting(pod);
    Constraints cs = self->BuildConstraints(waiting, SCHEDHOST_DO_NOT_SCHEDULE);
    Constraints soft = self->BuildConstraints(waiting, SCHEDHOST_SCHEDULE_ANYWAY);
    cs.insert(cs.end(), std::make_move_iterator(soft.begin()), std::make_move_iterator(soft.end()));
    // A pod in another namespace, or one no constraint selects (before or after the change),
    // cannot change any count this pod was judged by.
    for (const schedhost_event_object* o : {old_obj, new_obj}) {
      if (o == nullptr || o->pod == nullptr) continue;
      const Pod changed(o->pod);
      // Only pods on nodes are counted (upstream 1.28 skips unassigned pods as well).
      if (changed.node_name().empty() || changed.namespace_id() != waiting.namespace_id()) {
        continue;
      }
      for (const SpreadConstraint& c : cs) {
        if (c.selector.Matches(changed)) return SCHEDHOST_QUEUE;
      }
    }
    return SCHEDHOST_QUEUE_SKIP;
  } catch (...) {
    return SCHEDHOST_QUEUE;
  }
}

int32_t PodTopologySpread::NodeChangeHint(void* instance, const schedhost_pod_view* pod,
                                          const schedhost_cluster_event* /*event*/,
                                          const schedhost_event_object* old_obj,
                                          const schedhost_event_object* new_obj) noexcept {
  try {
    const auto* self = static_cast<const PodTopologySpread*>(instance);
    if (self == nullptr || pod == nullptr) return SCHEDHOST_QUEUE;
    const Pod waiting(pod);
    Constraints cs = self->BuildConstraints(waiting, SCHEDHOST_DO_NOT_SCHEDULE);
    Constraints soft = self->BuildConstraints(waiting, SCHEDHOST_SCHEDULE_ANYWAY);
    cs.insert(cs.end(), std::make_move_iterator(soft.begin()), std::make_move_iterator(soft.end()));
    // upstream: a node (the new one, else the deleted one) lacking a topology key of the pod's
    // constraints is not in any domain and cannot matter.
    const schedhost_node_view* node = nullptr;
    if (new_obj != nullptr && new_obj->node != nullptr) {
      node = new_obj->node;
    } else if (old_obj != nullptr) {
      node = old_obj->node;
    }
    if (node == nullptr) return SCHEDHOST_QUEUE;
    return HasAllKeys(Node(node).labels(), cs) ? SCHEDHOST_QUEUE : SCHEDHOST_QUEUE_SKIP;
  } catch (...) {
    return SCHEDHOST_QUEUE;
  }
}

std::span<const schedhost_event_registration> PodTopologySpread::EventsToRegister() {
  static constexpr schedhost_event_registration kEvents[] = {
      {{SCHEDHOST_RESOURCE_POD,
        SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE_POD_LABEL | SCHEDHOST_ACTION_DELETE},
       &PodTopologySpread::PodChangeHint},
      {{SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_DELETE |
                                     SCHEDHOST_ACTION_UPDATE_NODE_LABEL |
                                     SCHEDHOST_ACTION_UPDATE_NODE_TAINT},
       &PodTopologySpread::NodeChangeHint},
  };
  return kEvents;
}

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::PodTopologySpread)
