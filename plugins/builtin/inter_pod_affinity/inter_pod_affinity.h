// InterPodAffinity: keeps a pod away from or next to other pods by topology domain, as upstream
// kube-scheduler's interpodaffinity plugin does. Filter enforces the incoming pod's required
// affinity and anti-affinity and existing pods' required anti-affinity against it; Score ranks
// nodes by preferred terms in both directions plus existing pods' required affinity terms
// weighted by hard_pod_affinity_weight. Counts per topology pair are built once per cycle.
//
//   [profile.plugin_config.InterPodAffinity]
//   hard_pod_affinity_weight = 1
//   ignore_preferred_terms_of_existing_pods = false
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <schedhost/plugin.hpp>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace schedhost::plugins {

/// InterPodAffinityArgs are InterPodAffinity's validated arguments.
struct InterPodAffinityArgs {
  /// hard_pod_affinity_weight scores existing pods' required affinity terms (0..100).
  int32_t hard_pod_affinity_weight = 1;
  /// ignore_preferred_terms_of_existing_pods skips scoring when the incoming pod has no
  /// preferred terms of its own.
  bool ignore_preferred_terms_of_existing_pods = false;
};

/// ParseInterPodAffinityArgs reads and validates plugin_config.InterPodAffinity; throws
/// ArgsError naming the key, its location and what is wrong.
InterPodAffinityArgs ParseInterPodAffinityArgs(const Args& args);

/// TopologyPair packs a (topology key id, topology value id) pair into one integer.
inline uint64_t TopologyPair(Id key, Id value) noexcept {
  return (static_cast<uint64_t>(key) << 32U) | value;
}

/// PairCounts maps topology pairs to counts; pairs whose count drops to 0 are removed, so
/// empty() means "no pair counted" as upstream's map length test.
///
/// An open-addressing table (linear probing, a slot with count 0 is free, deletion shifts the
/// run back): Filter looks a pair up for every node, and PreFilter copies the whole table into
/// each cycle's state, so both want flat, trivially copyable storage. A sorted vector cost a
/// dependent load per halving (7.6 % of pod_anti_affinity's scheduling thread); node-based or
/// Swiss tables copy element by element.
class PairCounts {
 public:
  /// Add adds `delta` to the count of `pair`.
  void Add(uint64_t pair, int64_t delta);
  /// Get returns the count of `pair` (0 when absent).
  int64_t Get(uint64_t pair) const noexcept {
    if (size_ == 0) return 0;
    for (size_t i = Home(pair);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.count == 0) return 0;
      if (s.pair == pair) return s.count;
    }
  }
  bool empty() const noexcept { return size_ == 0; }
  size_t size() const noexcept { return size_; }
  /// keys lists the topology keys of the counted pairs, each once with its number of pairs
  /// (usually one or two keys: a node's other labels need no lookup).
  std::span<const std::pair<Id, uint32_t>> keys() const noexcept { return keys_; }

 private:
  struct Slot {
    uint64_t pair = 0;
    int64_t count = 0;  // 0: free
  };
  size_t Home(uint64_t pair) const noexcept {
    // Fibonacci hashing: the high bits of the product spread ids that differ in low bits.
    return static_cast<size_t>((pair * 0x9E3779B97F4A7C15ULL) >> shift_);
  }
  void Grow();
  void Erase(size_t i);
  void CountKey(Id key, int delta);

  std::vector<Slot> slots_;  // power-of-two size, at most half full
  size_t mask_ = 0;
  unsigned shift_ = 64;
  size_t size_ = 0;
  std::vector<std::pair<Id, uint32_t>> keys_;
};

/// Rule names PreFilter's three counts: existing pods whose required anti-affinity matches the
/// incoming pod, and pods matching the incoming pod's required affinity and anti-affinity.
enum Rule : uint8_t { kExistingAntiAffinity = 0, kAffinity = 1, kAntiAffinity = 2 };
using RuleCounts = std::array<PairCounts, 3>;  // by Rule

/// Unshare makes `counts` its holder's own before a change: a copy when anyone else holds it.
/// Sound across threads: a count of 1 means no other holder exists, and none can appear, since
/// a new one could only copy the pointer from a holder.
inline RuleCounts& Unshare(std::shared_ptr<RuleCounts>& counts) {
  if (counts.use_count() > 1) counts = std::make_shared<RuleCounts>(*counts);
  return *counts;
}

/// Side says whose namespace rules a term is read with: the incoming pod's terms resolve a
/// namespaceSelector against existing Namespace objects only (upstream merges the selected
/// names into the term), existing pods' terms see a missing namespace as one without labels.
enum class Side { kIncoming, kExisting };

/// TermMatches tells whether `target` matches `term`, a term of a pod in namespace `owner_ns`:
/// target's namespace is in the term's namespaces (the owner's own when neither namespaces nor
/// a namespaceSelector is given) or selected by namespaceSelector (empty: every namespace),
/// and target's labels satisfy the label selector (absent: nothing).
bool TermMatches(const Host& host, const schedhost_pod_affinity_term& term, Id owner_ns,
                 const Pod& target, Side side);

/// MatchesAllTerms tells whether `target` matches every term (true for no terms).
bool MatchesAllTerms(const Host& host, std::span<const schedhost_pod_affinity_term> terms,
                     Id owner_ns, const Pod& target, Side side);

/// RequiredAffinity, RequiredAntiAffinity, PreferredAffinity and PreferredAntiAffinity return a
/// pod's terms of that kind (empty when it has none).
std::span<const schedhost_pod_affinity_term> RequiredAffinity(const Pod& pod) noexcept;
std::span<const schedhost_pod_affinity_term> RequiredAntiAffinity(const Pod& pod) noexcept;
std::span<const schedhost_pod_affinity_term> PreferredAffinity(const Pod& pod) noexcept;
std::span<const schedhost_pod_affinity_term> PreferredAntiAffinity(const Pod& pod) noexcept;

/// InterPodAffinity filters and scores nodes by pod (anti-)affinity.
class InterPodAffinity final : public Plugin,
                               public PreFilterPlugin,
                               public PreFilterExtensions,
                               public FilterPlugin,
                               public PreScorePlugin,
                               public ScorePlugin,
                               public ScoreExtensions,
                               public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "InterPodAffinity";
  static constexpr std::string_view kVersion = "1.0.0";
  /// kErrReasonAffinity: the node's domains lack pods matching every required affinity term.
  static constexpr std::string_view kErrReasonAffinity = "node(s) didn't match pod affinity rules";
  /// kErrReasonAntiAffinity: a domain of the node holds a pod the incoming pod repels.
  static constexpr std::string_view kErrReasonAntiAffinity =
      "node(s) didn't match pod anti-affinity rules";
  /// kErrReasonExistingAntiAffinity: a domain of the node holds a pod that repels the incoming.
  static constexpr std::string_view kErrReasonExistingAntiAffinity =
      "node(s) didn't satisfy existing pods anti-affinity rules";

  /// InterPodAffinity validates its arguments (see ParseInterPodAffinityArgs).
  InterPodAffinity(const Host& host, const Args& args);

  /// PreFilter counts, per topology pair, the pods matching the incoming pod's required terms
  /// and the existing pods whose required anti-affinity matches it. Skip when the pod has no
  /// required terms and no node holds a pod with required anti-affinity.
  Status PreFilter(CycleState& state, const Pod& pod, PreFilterResult& result) override;
  /// AddPod counts `to_add` on `ni` as if it were there (nominated pods, preemption).
  Status AddPod(CycleState& state, const Pod& pod, const Pod& to_add, const NodeInfo& ni) override;
  /// RemovePod stops counting `to_remove` on `ni`.
  Status RemovePod(CycleState& state, const Pod& pod, const Pod& to_remove,
                   const NodeInfo& ni) override;
  /// Filter: UnschedulableAndUnresolvable when required affinity fails (a missing topology key
  /// included), Unschedulable when the pod's or an existing pod's anti-affinity fails.
  Status Filter(const CycleState& state, const Pod& pod, const NodeInfo& ni) override;

  /// PreScore sums preferred and hard-weighted terms per topology pair; Skip when none apply.
  Status PreScore(CycleState& state, const Pod& pod, const NodeInfoList& nodes) override;
  /// Score sums the PreScore totals of the node's topology pairs (may be negative).
  Status Score(const CycleState& state, const Pod& pod, const NodeInfo& ni,
               int64_t& score) override;
  /// NormalizeScore maps [min, max] onto [0, 100] (all 0 when min == max).
  Status NormalizeScore(const CycleState& state, const Pod& pod,
                        std::span<schedhost_node_score> scores) override;

  /// EventsToRegister: any Pod event, Node add and label updates.
  std::span<const schedhost_event_registration> EventsToRegister() override;

  const InterPodAffinityArgs& args() const noexcept { return args_; }

 private:
  // NodeShare is one node's part of PreFilter's counts for one kind of incoming pod, as of a
  // node info generation. Generations are unique across the host (every change to a node or
  // its pods takes a new one), so a share whose generation equals the node's is still right.
  struct Contribution {
    uint64_t pair = 0;
    int32_t delta = 0;
    Rule rule = kExistingAntiAffinity;
  };
  struct NodeShare {
    uint64_t generation = 0;
    std::vector<Contribution> items;
  };
  // CountCache is PreFilter's counts for one kind of incoming pod (CacheKey) kept across
  // cycles: the totals equal the sum of the shares, and a cycle recounts only the nodes whose
  // generation moved since the last pod of that kind. Cycle states share the totals rather than
  // copy them (a copy per cycle, and Filter reading it cold, was 7 % of pod_anti_affinity's
  // scheduling thread); whoever changes a table others still hold copies it first.
  struct CountCache {
    std::vector<NodeShare> shares;  // by snapshot index
    std::shared_ptr<RuleCounts> totals = std::make_shared<RuleCounts>();
  };
  // UpdateShares brings `cache` up to date with the snapshot: for each node whose generation
  // moved it takes the node's old share out of the totals and counts it again through
  // count_node(ni, labels, add), add(rule, pair, delta) adding to the node's share. Returns
  // the totals, shared.
  template <typename CountNode>
  std::shared_ptr<RuleCounts> UpdateShares(CountCache& cache, CountNode&& count_node) {
    RuleCounts* totals = nullptr;  // writable, once owned alone
    const auto write = [&cache, &totals]() -> RuleCounts& {
      if (totals == nullptr) totals = &Unshare(cache.totals);
      return *totals;
    };
    const auto drop = [&write](NodeShare& share) {
      for (const Contribution& c : share.items) write()[c.rule].Add(c.pair, -c.delta);
      share.items.clear();
    };
    const size_t n = host().NodeCount();
    for (size_t i = n; i < cache.shares.size(); ++i) drop(cache.shares[i]);
    cache.shares.resize(n);
    for (size_t i = 0; i < n; ++i) {
      NodeShare& share = cache.shares[i];
      const auto ni = host().NodeAt(i);
      const uint64_t generation = ni ? ni->generation() : 0;
      // Generation 0 is a node info that never took one (a hand-built snapshot): recount.
      if (generation != 0 && generation == share.generation) continue;
      drop(share);
      share.generation = generation;
      if (!ni) continue;
      const Labels labels = ni->node().labels();
      if (labels.empty()) continue;  // no topology domain to count in
      const auto add = [&share](Rule rule, uint64_t pair, int32_t delta) {
        // A node's pods mostly share their pairs: fold repeats into one contribution.
        for (Contribution& c : share.items) {
          if (c.rule == rule && c.pair == pair) {
            c.delta += delta;
            return;
          }
        }
        share.items.push_back({pair, delta, rule});
      };
      count_node(*ni, labels, add);
      for (const Contribution& c : share.items) write()[c.rule].Add(c.pair, c.delta);
    }
    return cache.totals;
  }
  // CountCached is UpdateShares with PreFilter's counts for `pod`; the caller holds cache_mu_.
  std::shared_ptr<RuleCounts> CountCached(
      CountCache& cache, const Pod& pod, std::span<const schedhost_pod_affinity_term> affinity,
      std::span<const schedhost_pod_affinity_term> anti_affinity);
  // ScoreCached is UpdateShares with PreScore's sums for `pod` in totals[0] (over every pod
  // when `all_pods`, else over pods with affinity); the caller holds cache_mu_.
  std::shared_ptr<RuleCounts> ScoreCached(CountCache& cache, const Pod& pod, bool all_pods);
  // CacheFor returns the cache of `key`; the caller holds cache_mu_.
  CountCache& CacheFor(const std::string& key);

  InterPodAffinityArgs args_;
  Id prefilter_key_;
  Id prescore_key_;
  std::mutex cache_mu_;  // PreFilter runs on one thread, but nothing promises it
  std::map<std::string, CountCache, std::less<>> caches_;
};

/// ScoreCacheKey is CacheKey for PreScore's sums: the pod's namespace, labels, its namespace's
/// labels and its preferred terms with their weights. False as CacheKey.
bool ScoreCacheKey(const Host& host, const Pod& pod, std::string& key);

/// CacheKey spells out what PreFilter's counts depend on besides the snapshot: the pod's
/// namespace and labels, its namespace's labels and its required terms. False when the counts
/// depend on more (a term with a non-empty namespaceSelector reads every namespace's labels).
bool CacheKey(const Host& host, const Pod& pod,
              std::span<const schedhost_pod_affinity_term> affinity,
              std::span<const schedhost_pod_affinity_term> anti_affinity, std::string& key);

}  // namespace schedhost::plugins
