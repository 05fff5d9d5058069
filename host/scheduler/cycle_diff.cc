// CompareCycles: agreements first (feasibility, best set, node), then the plugin that turned a
// disagreement on the node: a Filter rejection of the node one side chose, else the Score plugin
// whose weighted difference between the two nodes moved the most from one side to the other.
#include "host/scheduler/cycle_diff.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

namespace schedhost::scheduler {
namespace {

const NodeVerdict* Find(const CycleExplanation& e, std::string_view node) {
  for (const NodeVerdict& v : e.nodes) {
    if (v.node == node) return &v;
  }
  return nullptr;
}

bool Schedulable(const CycleExplanation& e) {
  return std::any_of(e.nodes.begin(), e.nodes.end(),
                     [](const NodeVerdict& v) { return v.outcome == NodeOutcome::kFeasible; });
}

// WeightedOf returns the weighted score `v` got from `plugin` in `e` (0 when it has none).
int64_t WeightedOf(const CycleExplanation& e, const NodeVerdict& v, std::string_view plugin) {
  for (size_t i = 0; i < e.score_plugins.size() && i < v.weighted.size(); ++i) {
    if (e.score_plugins[i] == plugin) return v.weighted[i];
  }
  return 0;
}

std::optional<int64_t> WeightOf(const CycleExplanation& e, std::string_view plugin) {
  for (size_t i = 0; i < e.score_plugins.size() && i < e.score_weights.size(); ++i) {
    if (e.score_plugins[i] == plugin) return e.score_weights[i];
  }
  return std::nullopt;
}

std::string Weight(const std::optional<int64_t>& w) {
  return w ? std::to_string(*w) : std::string("not enabled");
}

// Rejection names the plugin of `side`'s cycle that rejected `node`, which the other side chose.
bool Rejection(const CycleExplanation& e, std::string_view node, std::string_view side,
               std::string_view other, CycleDiff& d) {
  const NodeVerdict* v = Find(e, node);
  if (v == nullptr || v->outcome == NodeOutcome::kFeasible) return false;
  d.point = v->outcome == NodeOutcome::kExcluded ? "PreFilter" : "Filter";
  d.plugin = v->status.plugin.str();
  d.detail = std::string(side) + "'s " + d.point + " " + (d.plugin.empty() ? "?" : d.plugin) +
             " rejects " + std::string(node) + ", where " + std::string(other) +
             " placed the pod: " + v->status.Message();
  return true;
}

}  // namespace

std::vector<std::string> BestNodes(const CycleExplanation& e) {
  std::vector<std::string> best;
  std::optional<int64_t> top;
  for (const NodeVerdict& v : e.nodes) {
    if (v.outcome != NodeOutcome::kFeasible) continue;
    if (!top || v.total > *top) {
      top = v.total;
      best.clear();
    }
    if (v.total == *top) best.push_back(v.node);
  }
  std::sort(best.begin(), best.end());
  return best;
}

CycleDiff CompareCycles(const CycleExplanation& a, std::string_view a_node,
                        const CycleExplanation& b, std::string_view b_node,
                        std::string_view a_name, std::string_view b_name) {
  CycleDiff d;
  d.same_feasibility = Schedulable(a) == Schedulable(b);
  // b's verdicts by node: a shadow compares every cycle, and a big cluster's holds hundreds.
  std::unordered_map<std::string_view, const NodeVerdict*> in_b;
  in_b.reserve(b.nodes.size());
  for (const NodeVerdict& vb : b.nodes) in_b.emplace(vb.node, &vb);
  for (const NodeVerdict& va : a.nodes) {
    const auto vb = in_b.find(va.node);
    if (vb != in_b.end() && (va.outcome == NodeOutcome::kFeasible) !=
                                (vb->second->outcome == NodeOutcome::kFeasible)) {
      d.same_feasibility = false;
      break;
    }
  }
  const std::vector<std::string> best_a = BestNodes(a);
  const std::vector<std::string> best_b = BestNodes(b);
  d.same_best = best_a == best_b;
  d.same_node = a_node.empty()
                    ? b_node.empty()
                    : std::binary_search(best_b.begin(), best_b.end(), std::string(a_node));
  if (d.same_node) return d;

  // One side found no node: the other's node is one it rejected.
  if (a_node.empty() || b_node.empty()) {
    const bool a_none = a_node.empty();
    if (Rejection(a_none ? a : b, a_none ? b_node : a_node, a_none ? a_name : b_name,
                  a_none ? b_name : a_name, d)) {
      return d;
    }
    d.point = "Filter";
    d.detail = std::string(a_none ? a_name : b_name) + " found no node; " +
               std::string(a_none ? b_name : a_name) + " placed the pod on " +
               std::string(a_none ? b_node : a_node);
    return d;
  }
  // Each side rejects the node the other chose.
  if (Rejection(b, a_node, b_name, a_name, d)) return d;
  if (Rejection(a, b_node, a_name, b_name, d)) return d;

  // Both nodes feasible on both sides (or not evaluated by one): the scores turned it. With A the
  // node `a` chose and B the one `b` chose, each plugin moved B - A by (b's B - A) - (a's B - A);
  // the plugin that moved it the most towards B turned it.
  const NodeVerdict* a_in_a = Find(a, a_node);
  const NodeVerdict* b_in_a = Find(a, b_node);
  const NodeVerdict* a_in_b = Find(b, a_node);
  const NodeVerdict* b_in_b = Find(b, b_node);
  if (a_in_a == nullptr || b_in_a == nullptr || a_in_b == nullptr || b_in_b == nullptr) {
    d.point = "Filter";
    const bool a_missing = a_in_b == nullptr;
    d.detail = std::string(a_missing ? b_name : a_name) + " did not evaluate " +
               std::string(a_missing ? a_node : b_node) +
               " (percentageOfNodesToScore stopped the search first)";
    return d;
  }
  std::map<std::string, int64_t> moved;  // by plugin name, sorted: ties go to the first name
  for (const std::string& p : a.score_plugins) moved[p] = 0;
  for (const std::string& p : b.score_plugins) moved[p] = 0;
  for (auto& [plugin, m] : moved) {
    const int64_t in_b = WeightedOf(b, *b_in_b, plugin) - WeightedOf(b, *a_in_b, plugin);
    const int64_t in_a = WeightedOf(a, *b_in_a, plugin) - WeightedOf(a, *a_in_a, plugin);
    m = in_b - in_a;
  }
  const auto turned = std::max_element(moved.begin(), moved.end(),
                                        [](const auto& x, const auto& y) { return x.second < y.second; });
  d.point = "Score";
  if (turned == moved.end() || turned->second <= 0) {
    // No plugin moved it: `a` did not choose its node by score (a nominated node is tried
    // first and taken unscored when it fits).
    d.detail = "no Score plugin moved " + std::string(b_node) + " over " + std::string(a_node) +
               "; " + std::string(a_name) + " did not choose " + std::string(a_node) +
               " by its scores (a nominated node is taken without scoring)";
    return d;
  }
  d.plugin = turned->first;
  const std::optional<int64_t> wa = WeightOf(a, d.plugin);
  const std::optional<int64_t> wb = WeightOf(b, d.plugin);
  d.detail = d.plugin + " scores " + std::string(b_node) + " minus " + std::string(a_node) + " at " +
             std::to_string(WeightedOf(b, *b_in_b, d.plugin) - WeightedOf(b, *a_in_b, d.plugin)) +
             " in " + std::string(b_name) + " (weight " + Weight(wb) + ") against " +
             std::to_string(WeightedOf(a, *b_in_a, d.plugin) - WeightedOf(a, *a_in_a, d.plugin)) +
             " in " + std::string(a_name) + " (weight " + Weight(wa) + "); totals " +
             std::string(b_node) + " " + std::to_string(b_in_b->total) + ", " +
             std::string(a_node) + " " + std::to_string(a_in_b->total) + " in " +
             std::string(b_name);
  return d;
}

}  // namespace schedhost::scheduler
