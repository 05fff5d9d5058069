// Explain's rendering: a scheduler::CycleExplanation (what the last cycle recorded, compactly)
// turned into per-node, per-plugin verdicts. The per-plugin strings are built here, on request,
// so the scheduling cycle never builds them for nodes that passed.
#include <algorithm>
#include <string>

#include "host/api/admin_service.h"
#include "host/framework/status.h"
#include "host/scheduler/explain.h"

namespace schedhost::api {
namespace {

using scheduler::NodeOutcome;

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// FilterVerdicts sets filter_code/filter_reason of the Filter plugins (the first
// filter_plugins.size() entries of `node`) for one evaluated node.
void FilterVerdicts(const scheduler::CycleExplanation& e, const scheduler::NodeVerdict& v,
                    v1::NodeExplanation& node) {
  if (v.outcome == NodeOutcome::kExcluded) {
    node.set_reason(v.status.plugin.empty() ? v.status.Message()
                                            : v.status.plugin + ": " + v.status.Message());
    return;  // no Filter ran
  }
  // Upstream stops at the first rejecting plugin: those before it passed (or were skipped),
  // those after it did not run.
  bool failed = false;
  for (size_t i = 0; i < e.filter_plugins.size(); ++i) {
    v1::PluginVerdict& p = *node.mutable_plugins(static_cast<int>(i));
    const std::string& name = e.filter_plugins[i];
    if (failed) continue;
    if (v.outcome == NodeOutcome::kFiltered && name == v.status.plugin) {
      p.set_filter_code(std::string(framework::CodeName(v.status.code)));
      p.set_filter_reason(v.status.Message());
      failed = true;
    } else {
      p.set_filter_code(Contains(e.skipped_filter_plugins, name) ? "Skip" : "Success");
    }
  }
  if (v.outcome == NodeOutcome::kFiltered && !failed) {
    // The rejection came from a plugin not in the Filter list (should not happen): say it.
    node.set_reason(v.status.plugin + ": " + v.status.Message());
  }
}

}  // namespace

void FillExplanation(const scheduler::CycleExplanation& e, v1::ExplainResponse& out) {
  // Plugin columns: the Filter plugins in run order, then Score plugins without a Filter.
  std::vector<std::string> columns = e.filter_plugins;
  std::vector<int> score_column(e.score_plugins.size());
  for (size_t k = 0; k < e.score_plugins.size(); ++k) {
    auto it = std::find(columns.begin(), columns.end(), e.score_plugins[k]);
    score_column[k] = static_cast<int>(it - columns.begin());
    if (it == columns.end()) columns.push_back(e.score_plugins[k]);
  }
  // Feasible nodes first, best total first; then the others; ties by name.
  std::vector<const scheduler::NodeVerdict*> order;
  order.reserve(e.nodes.size());
  for (const scheduler::NodeVerdict& v : e.nodes) order.push_back(&v);
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    const bool fa = a->outcome == NodeOutcome::kFeasible;
    const bool fb = b->outcome == NodeOutcome::kFeasible;
    if (fa != fb) return fa;
    if (a->total != b->total) return a->total > b->total;
    return a->node < b->node;
  });
  for (const scheduler::NodeVerdict* vp : order) {
    const scheduler::NodeVerdict& v = *vp;
    v1::NodeExplanation& node = *out.add_nodes();
    node.set_node(v.node);
    node.set_feasible(v.outcome == NodeOutcome::kFeasible);
    for (const std::string& name : columns) node.add_plugins()->set_plugin(name);
    FilterVerdicts(e, v, node);
    if (v.outcome != NodeOutcome::kFeasible) continue;
    node.set_total_score(v.total);
    for (size_t k = 0; k < e.score_plugins.size() && k < v.raw.size() && k < v.weighted.size();
         ++k) {
      v1::PluginVerdict& p = *node.mutable_plugins(score_column[k]);
      const int64_t weight = k < e.score_weights.size() ? e.score_weights[k] : 1;
      p.set_score(v.raw[k]);
      p.set_weighted_score(v.weighted[k]);
      p.set_normalized_score(weight != 0 ? v.weighted[k] / weight : v.weighted[k]);
    }
  }
  const size_t listed = e.nodes.size();
  out.set_nodes_not_evaluated(
      static_cast<int32_t>(e.num_all_nodes > listed ? e.num_all_nodes - listed : 0));
}

}  // namespace schedhost::api
