// Term matching shared by Filter and Score: namespaces, namespaceSelector and label selector
// of one pod (anti-)affinity term, and the topology-pair counts both build.
#include <algorithm>

#include "inter_pod_affinity.h"

namespace schedhost::plugins {
namespace {

bool NamespaceMatches(const Host& host, const schedhost_pod_affinity_term& term, Id owner_ns,
                      Id target_ns, Side side) {
  const auto names = MakeSpan(term.namespaces, term.namespaces_len);
  if (names.empty() && term.namespace_selector == nullptr) return target_ns == owner_ns;
  if (std::find(names.begin(), names.end(), target_ns) != names.end()) return true;
  const schedhost_label_selector* sel = term.namespace_selector;
  if (sel == nullptr) return false;
  // upstream: an empty namespaceSelector selects every namespace, existing or not.
  if (sel->len == 0) return true;
  std::optional<Labels> labels = host.NamespaceLabels(target_ns);
  if (!labels) {
    // upstream: the incoming pod's selector is resolved to the Namespace objects it selects,
    // so a namespace without an object is never selected; an existing pod's term is matched
    // against the incoming pod's namespace labels, empty when the object is missing.
    if (side == Side::kIncoming) return false;
    return SelectorMatches(sel, Labels());
  }
  return SelectorMatches(sel, *labels);
}

std::span<const schedhost_pod_affinity_term> Terms(const Pod& pod, bool anti, bool required) {
  const schedhost_affinity* a = pod.affinity();
  if (a == nullptr) return {};
  const schedhost_pod_affinity_terms& t = anti ? a->pod_anti_affinity : a->pod_affinity;
  return required ? MakeSpan(t.required, t.required_len) : MakeSpan(t.preferred, t.preferred_len);
}

}  // namespace

void PairCounts::Add(uint64_t pair, int64_t delta) {
  // Pairs mostly come in ascending order (node names interned in creation order): try the end.
  auto it = !items_.empty() && items_.back().first < pair
                ? items_.end()
                : std::lower_bound(items_.begin(), items_.end(), pair,
                                   [](const auto& item, uint64_t p) { return item.first < p; });
  const auto key = static_cast<Id>(pair >> 32U);
  if (it != items_.end() && it->first == pair) {
    it->second += delta;
    if (it->second == 0) {
      items_.erase(it);
      CountKey(key, -1);
    }
    return;
  }
  if (delta != 0) {
    items_.insert(it, {pair, delta});
    CountKey(key, 1);
  }
}

void PairCounts::CountKey(Id key, int delta) {
  auto it =
      std::find_if(keys_.begin(), keys_.end(), [key](const auto& k) { return k.first == key; });
  if (it == keys_.end()) {
    keys_.emplace_back(key, 1);  // delta is 1: a key's first pair
    return;
  }
  it->second = static_cast<uint32_t>(static_cast<int>(it->second) + delta);
  if (it->second == 0) keys_.erase(it);
}

int64_t PairCounts::Get(uint64_t pair) const noexcept {
  auto it = std::lower_bound(items_.begin(), items_.end(), pair,
                             [](const auto& item, uint64_t p) { return item.first < p; });
  return (it != items_.end() && it->first == pair) ? it->second : 0;
}

bool TermMatches(const Host& host, const schedhost_pod_affinity_term& term, Id owner_ns,
                 const Pod& target, Side side) {
  // The label selector is the cheap, usually failing test: run it first.
  if (!SelectorMatches(term.label_selector, target.labels())) return false;
  return NamespaceMatches(host, term, owner_ns, target.namespace_id(), side);
}

bool MatchesAllTerms(const Host& host, std::span<const schedhost_pod_affinity_term> terms,
                     Id owner_ns, const Pod& target, Side side) {
  return std::all_of(terms.begin(), terms.end(), [&](const schedhost_pod_affinity_term& t) {
    return TermMatches(host, t, owner_ns, target, side);
  });
}

std::span<const schedhost_pod_affinity_term> RequiredAffinity(const Pod& pod) noexcept {
  return Terms(pod, false, true);
}
std::span<const schedhost_pod_affinity_term> RequiredAntiAffinity(const Pod& pod) noexcept {
  return Terms(pod, true, true);
}
std::span<const schedhost_pod_affinity_term> PreferredAffinity(const Pod& pod) noexcept {
  return Terms(pod, false, false);
}
std::span<const schedhost_pod_affinity_term> PreferredAntiAffinity(const Pod& pod) noexcept {
  return Terms(pod, true, false);
}

}  // namespace schedhost::plugins
