// NodeAffinity's extension points: PreFilter (node-name narrowing), Filter (required affinity and
// nodeSelector), PreScore/Score/NormalizeScore (preferred terms), and its cluster events.
#include "node_affinity.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>

namespace schedhost::plugins {
namespace {

std::span<const schedhost_node_selector_term> RequiredTerms(const schedhost_affinity* a) {
  if (a == nullptr || a->has_required_node_affinity == 0) return {};
  return MakeSpan(a->required_node_terms, a->required_node_terms_len);
}

std::span<const schedhost_preferred_term> PreferredTerms(const schedhost_affinity* a) {
  if (a == nullptr) return {};
  return MakeSpan(a->preferred_node_terms, a->preferred_node_terms_len);
}

bool NodeSelectorMatches(const Labels& selector, const Labels& node_labels) {
  for (const schedhost_label& want : selector.items()) {
    auto have = node_labels.Get(want.key);
    if (!have || *have != want.value) return false;
  }
  return true;
}

}  // namespace

NodeAffinity::NodeAffinity(const Host& host, const Args& args)
    : Plugin(host), args_(ParseNodeAffinityArgs(host, args)) {}

bool NodeAffinity::AnyTermMatches(std::span<const schedhost_node_selector_term> terms,
                                  const Node& node) const {
  // Terms are ORed; the host's matcher treats an empty term as matching nothing, as upstream.
  return std::any_of(terms.begin(), terms.end(), [&](const schedhost_node_selector_term& t) {
    return host().NodeSelectorTermMatches(t, node);
  });
}

bool NodeAffinity::RequiredMatch(const Pod& pod, const Node& node, bool* enforced_failed) const {
  *enforced_failed = false;
  if (args_.has_required && !AnyTermMatches(args_.required.terms(), node)) {
    *enforced_failed = true;
    return false;
  }
  if (!NodeSelectorMatches(pod.node_selector(), node.labels())) return false;
  const schedhost_affinity* a = pod.affinity();
  if (a != nullptr && a->has_required_node_affinity != 0 &&
      !AnyTermMatches(RequiredTerms(a), node)) {
    return false;
  }
  return true;
}

Status NodeAffinity::PreFilter(CycleState& /*state*/, const Pod& pod, PreFilterResult& result) {
  const schedhost_affinity* a = pod.affinity();
  const bool has_required = a != nullptr && a->has_required_node_affinity != 0;
  if (!has_required && !args_.has_required && pod.node_selector().empty()) return Status::Skip();
  const auto terms = RequiredTerms(a);
  if (terms.empty()) return {};
  // A term can only hold on nodes named by all of its metadata.name In requirements; the pod
  // can only go where some term holds. One term without such a requirement allows every node.
  std::vector<Id> names;
  for (const schedhost_node_selector_term& t : terms) {
    bool constrained = false;
    std::vector<Id> term_names;
    for (const schedhost_requirement& r : MakeSpan(t.match_fields, t.match_fields_len)) {
      if (r.key != SCHEDHOST_ID_FIELD_METADATA_NAME || r.op != SCHEDHOST_OP_IN) continue;
      std::vector<Id> values(r.values, r.values + r.values_len);
      std::sort(values.begin(), values.end());
      if (!constrained) {
        term_names = std::move(values);
        constrained = true;
      } else {
        std::vector<Id> both;
        std::set_intersection(term_names.begin(), term_names.end(), values.begin(), values.end(),
                              std::back_inserter(both));
        term_names = std::move(both);
      }
    }
    if (!constrained) return {};
    names.insert(names.end(), term_names.begin(), term_names.end());
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  if (names.empty())
    return Status::UnschedulableAndUnresolvable(Status::Static{kErrReasonConflict});
  std::vector<std::string_view> node_names;
  node_names.reserve(names.size());
  for (Id id : names) node_names.push_back(host().IdString(id));
  result.SetNodes(node_names);
  return {};
}

Status NodeAffinity::Filter(const CycleState& /*state*/, const Pod& pod, const NodeInfo& ni) {
  bool enforced_failed = false;
  if (RequiredMatch(pod, ni.node(), &enforced_failed)) return {};
  return Status::UnschedulableAndUnresolvable(
      Status::Static{enforced_failed ? kErrReasonEnforced : kErrReasonPod});
}

Status NodeAffinity::PreScore(CycleState& /*state*/, const Pod& pod,
                              const NodeInfoList& /*nodes*/) {
  if (PreferredTerms(pod.affinity()).empty() && args_.preferred.empty()) return Status::Skip();
  return {};
}

Status NodeAffinity::Score(const CycleState& /*state*/, const Pod& pod, const NodeInfo& ni,
                           int64_t& score) {
  const Node node = ni.node();
  int64_t total = 0;
  const auto added = args_.preferred.terms();
  const auto weights = args_.preferred.weights();
  for (size_t i = 0; i < added.size(); ++i) {
    if (host().NodeSelectorTermMatches(added[i], node)) total += weights[i];
  }
  for (const schedhost_preferred_term& p : PreferredTerms(pod.affinity())) {
    if (p.weight != 0 && host().NodeSelectorTermMatches(p.term, node)) total += p.weight;
  }
  score = total;
  return {};
}

Status NodeAffinity::NormalizeScore(const CycleState& /*state*/, const Pod& /*pod*/,
                                    std::span<schedhost_node_score> scores) {
  int64_t max = 0;
  for (const auto& s : scores) max = std::max(max, s.score);
  if (max == 0) return {};
  for (auto& s : scores) s.score = s.score * SCHEDHOST_MAX_NODE_SCORE / max;
  return {};
}

int32_t NodeAffinity::NodeChangeHint(void* instance, const schedhost_pod_view* pod,
                                     const schedhost_cluster_event* /*event*/,
                                     const schedhost_event_object* old_obj,
                                     const schedhost_event_object* new_obj) noexcept {
  const auto* self = static_cast<const NodeAffinity*>(instance);
  const schedhost_node_view* now = new_obj != nullptr ? new_obj->node : nullptr;
  if (self == nullptr || pod == nullptr || now == nullptr) return SCHEDHOST_QUEUE;
  bool enforced_failed = false;
  if (!self->RequiredMatch(Pod(pod), Node(now), &enforced_failed)) return SCHEDHOST_QUEUE_SKIP;
  const schedhost_node_view* before = old_obj != nullptr ? old_obj->node : nullptr;
  if (before == nullptr) return SCHEDHOST_QUEUE;
  // A node that already matched before the update did not change this plugin's verdict.
  return self->RequiredMatch(Pod(pod), Node(before), &enforced_failed) ? SCHEDHOST_QUEUE_SKIP
                                                                       : SCHEDHOST_QUEUE;
}

std::span<const schedhost_event_registration> NodeAffinity::EventsToRegister() {
  static constexpr schedhost_event_registration kEvents[] = {
      {{SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE_NODE_LABEL},
       &NodeAffinity::NodeChangeHint},
  };
  return kEvents;
}

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::NodeAffinity)
