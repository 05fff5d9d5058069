// Term matching shared by Filter and Score: namespaces, namespaceSelector and label selector
// of one pod (anti-)affinity term, and the topology-pair counts both build.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>

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

void PutU64(std::string& key, uint64_t v) {
  key.append(reinterpret_cast<const char*>(&v), sizeof v);
}

std::span<const schedhost_pod_affinity_term> Terms(const Pod& pod, bool anti, bool required) {
  const schedhost_affinity* a = pod.affinity();
  if (a == nullptr) return {};
  const schedhost_pod_affinity_terms& t = anti ? a->pod_anti_affinity : a->pod_affinity;
  return required ? MakeSpan(t.required, t.required_len) : MakeSpan(t.preferred, t.preferred_len);
}

}  // namespace

void PairCounts::Add(uint64_t pair, int64_t delta) {
  if (delta == 0) return;
  if (2 * (size_ + 1) > slots_.size()) Grow();
  size_t i = Home(pair);
  for (; slots_[i].count != 0; i = (i + 1) & mask_) {
    if (slots_[i].pair != pair) continue;
    slots_[i].count += delta;
    if (slots_[i].count == 0) {
      Erase(i);
      CountKey(static_cast<Id>(pair >> 32U), -1);
    }
    return;
  }
  slots_[i] = {pair, delta};
  ++size_;
  CountKey(static_cast<Id>(pair >> 32U), 1);
}

void PairCounts::Grow() {
  std::vector<Slot> old = std::move(slots_);
  const size_t capacity = old.empty() ? 16 : 2 * old.size();
  slots_.assign(capacity, Slot{});
  mask_ = capacity - 1;
  shift_ = 64U - static_cast<unsigned>(std::countr_zero(capacity));
  for (const Slot& s : old) {
    if (s.count == 0) continue;
    size_t i = Home(s.pair);
    while (slots_[i].count != 0) i = (i + 1) & mask_;
    slots_[i] = s;
  }
}

void PairCounts::Erase(size_t i) {
  // Backward shift: move each later entry of the run into the hole when its home allows, so
  // lookups never need tombstones.
  --size_;
  for (size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
    if (slots_[j].count == 0) break;
    const size_t home = Home(slots_[j].pair);
    // j's entry may move to i when i lies cyclically in [home, j).
    if (((j - home) & mask_) >= ((j - i) & mask_)) {
      slots_[i] = slots_[j];
      i = j;
    }
  }
  slots_[i] = Slot{};
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

namespace {

void PutLabels(std::string& key, const Labels& labels) {
  PutU64(key, labels.size());
  for (const schedhost_label& l : labels.items()) PutU64(key, TopologyPair(l.key, l.value));
}

void PutSelector(std::string& key, const schedhost_label_selector* sel) {
  if (sel == nullptr) {
    PutU64(key, UINT64_MAX);
    return;
  }
  PutU64(key, sel->len);
  for (const schedhost_requirement& r : MakeSpan(sel->requirements, sel->len)) {
    PutU64(key, TopologyPair(r.key, static_cast<uint32_t>(r.op)));
    PutU64(key, r.values_len);
    for (Id v : MakeSpan(r.values, r.values_len)) PutU64(key, v);
  }
}

bool PutTerms(std::string& key, std::span<const schedhost_pod_affinity_term> terms) {
  PutU64(key, terms.size());
  for (const schedhost_pod_affinity_term& t : terms) {
    // A non-empty namespaceSelector reads the labels of every existing pod's namespace.
    if (t.namespace_selector != nullptr && t.namespace_selector->len != 0) return false;
    PutU64(key, TopologyPair(t.topology_key, t.namespace_selector != nullptr ? 1 : 0));
    PutU64(key, t.namespaces_len);
    for (Id ns : MakeSpan(t.namespaces, t.namespaces_len)) PutU64(key, ns);
    PutSelector(key, t.label_selector);
  }
  return true;
}

// PutIncoming spells out what existing pods' terms see of the incoming pod: its namespace, its
// labels and its namespace's labels (their namespaceSelector).
void PutIncoming(const Host& host, const Pod& pod, std::string& key) {
  PutU64(key, pod.namespace_id());
  PutLabels(key, pod.labels());
  PutLabels(key, host.NamespaceLabels(pod.namespace_id()).value_or(Labels()));
}

}  // namespace

bool ScoreCacheKey(const Host& host, const Pod& pod, std::string& key) {
  key.assign("score");  // apart from CacheKey's keys in the same map
  for (auto terms : {PreferredAffinity(pod), PreferredAntiAffinity(pod)}) {
    if (!PutTerms(key, terms)) return false;
    for (const schedhost_pod_affinity_term& t : terms) PutU64(key, static_cast<uint32_t>(t.weight));
  }
  PutIncoming(host, pod, key);
  return true;
}

bool CacheKey(const Host& host, const Pod& pod,
              std::span<const schedhost_pod_affinity_term> affinity,
              std::span<const schedhost_pod_affinity_term> anti_affinity, std::string& key) {
  key.clear();
  if (!PutTerms(key, affinity) || !PutTerms(key, anti_affinity)) return false;
  PutIncoming(host, pod, key);
  return true;
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
