// CycleRunner: the scheduling cycle's algorithm (upstream's schedulePod) over one snapshot —
// PreFilter, the nominated node first, Filter in parallel over the sampled nodes with a
// round-robin start and early stop, Score and a random pick among the best nodes — with the
// per-node buffers it reuses from cycle to cycle. The scheduler runs the live cycles on one;
// each shadow profile's comparisons run on another, so both run the same code.
//
//   CycleRunner runner(seed);
//   CycleAttempt a = runner.SchedulePod(fw, *snapshot, state, pod);
//   auto record = runner.Record(pod, fw, state, a, header, &last_statuses);
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "host/cache/snapshot.h"
#include "host/framework/framework.h"
#include "host/model/interner.h"
#include "host/queue/scheduling_queue.h"
#include "host/scheduler/explain.h"

namespace schedhost::scheduler {

/// CycleAttempt is one scheduling cycle's results.
struct CycleAttempt {
  framework::Status status;  // ok: `node` was chosen
  std::string node;
  bool fit_error = false;                    // no node fits: PostFilter and FitError message
  std::optional<framework::Status> pre_filter_failure;  // PreFilter rejected the pod
  // Why each rejected node failed (upstream's NodeToStatusMap), in evaluation order, names from
  // the interner; rejected_ids holds each one's interned name id (aligned), for Explain.
  framework::NodeStatuses node_statuses;
  std::vector<schedhost_id> rejected_ids;
  queue::PluginSet rejectors;   // plugins whose rejection made the pod unschedulable
  queue::PluginSet pending;     // plugins that answered Pending
  framework::Text last_plugin;  // the plugin and code AddPluginStatus last recorded
  framework::Code last_code = framework::Code::kSuccess;
  size_t num_all_nodes = 0;
  // For Explain: the feasible nodes and, when the cycle scored them, their scores (aligned).
  std::vector<const schedhost_node_info_view*> feasible;
  framework::ScoreTable* scores = nullptr;  // the runner's table, when scored

  // The main Filter pass leaves its rejections where its workers wrote them (the runner's
  // filter_statuses_, by position): a successful cycle reads them only for Explain, and moving
  // each into node_statuses cost more than the Filter of some plugins. rejected_ids holds
  // node_statuses' ids first, then those of `kept`. TakeKept moves them into node_statuses
  // (for PostFilter and the FitError message).
  std::vector<uint32_t> kept;
  std::vector<framework::Status>* kept_statuses = nullptr;

  void Reject(const schedhost_node_info_view* ni, framework::Status s) {
    const schedhost_id id = ni->node->name_id;
    node_statuses.emplace_back(model::Interner::Global().Str(id), std::move(s));
    rejected_ids.push_back(id);
  }

  void Keep(const schedhost_node_info_view* ni, uint32_t position) {
    kept.push_back(position);
    rejected_ids.push_back(ni->node->name_id);
  }

  void TakeKept() {
    const model::Interner& names = model::Interner::Global();
    node_statuses.reserve(node_statuses.size() + kept.size());
    for (uint32_t position : kept) {
      const schedhost_id id = rejected_ids[node_statuses.size()];
      node_statuses.emplace_back(names.Str(id), std::move((*kept_statuses)[position]));
    }
    kept.clear();
  }

  // ForEachRejected calls fn(id, status) for every rejected node, in evaluation order.
  template <typename Fn>
  void ForEachRejected(Fn&& fn) const {
    for (size_t i = 0; i < node_statuses.size(); ++i) fn(rejected_ids[i], node_statuses[i].second);
    for (size_t k = 0; k < kept.size(); ++k) {
      fn(rejected_ids[node_statuses.size() + k], (*kept_statuses)[kept[k]]);
    }
  }

  void AddPluginStatus(const framework::Status& s) {
    // Most rejected nodes name the plugin the previous one did: skip the set's string compares.
    if (s.plugin.empty() || (s.code == last_code && s.plugin == last_plugin)) return;
    if (s.code == framework::Code::kPending) {
      pending.insert(s.plugin.str());
    } else if (s.IsRejected()) {
      rejectors.insert(s.plugin.str());
    } else {
      return;
    }
    last_plugin = s.plugin;
    last_code = s.code;
  }
};

/// MakeExplainHeader returns the profile part of `fw`'s explanations: its name, Filter plugins,
/// and Score plugins with their weights.
std::shared_ptr<const ExplainHeader> MakeExplainHeader(const framework::Framework& fw);

/// CycleRunner runs scheduling cycles one at a time (not thread-safe: one caller at a time);
/// Filter and Score fan out over the framework's parallelizer.
class CycleRunner {
 public:
  /// CycleRunner seeds the random pick among equally scored nodes with `seed`.
  explicit CycleRunner(uint64_t seed) : rng_(seed) {}
  CycleRunner(const CycleRunner&) = delete;
  CycleRunner& operator=(const CycleRunner&) = delete;

  /// SchedulePod runs PreFilter, Filter and Score for `pod` with `fw` on `snapshot` (the one
  /// `fw` is wired to) and picks a node; PostFilter is the caller's (on a fit error).
  CycleAttempt SchedulePod(framework::Framework& fw, const cache::Snapshot& snapshot,
                           framework::CycleState& state, const model::Pod& pod);
  /// Record returns the sealed record of attempt `a` under `header` (the profile part, built
  /// once per framework). The scores move out of the runner's table into the record. With
  /// `last`, rejection statuses equal to the last record's are shared (RecordedCycle::Seal).
  std::shared_ptr<RecordedCycle> Record(const model::Pod& pod, const framework::Framework& fw,
                                        const framework::CycleState& state, CycleAttempt& a,
                                        std::shared_ptr<const ExplainHeader> header,
                                        std::shared_ptr<const std::vector<framework::Status>>* last);
  /// next_start_node_index is where the next main Filter pass starts (upstream's rotation);
  /// a shadow sets it to the live cycle's so both look at the same nodes.
  size_t next_start_node_index() const { return next_start_node_index_; }
  void set_next_start_node_index(size_t i) { next_start_node_index_ = i; }

 private:
  std::vector<const schedhost_node_info_view*> FindNodesThatPassFilters(
      framework::Framework& fw, const framework::CycleState& state, const model::Pod& pod,
      const std::vector<const schedhost_node_info_view*>& nodes, bool rotate, CycleAttempt& a);
  std::string SelectHost(const framework::ScoreTable& table);

  std::mt19937_64 rng_;
  size_t next_start_node_index_ = 0;
  // FindNodesThatPassFilters' per-node buffers, reused from cycle to cycle. The main pass's
  // rejections stay in filter_statuses_ until the next pass overwrites them (the attempt
  // refers to them by position).
  std::vector<uint8_t> filter_outcome_;
  size_t filter_outcome_used_ = 0;  // how far the last pass wrote filter_outcome_ (the rest is 0)
  std::vector<framework::Status> filter_statuses_;
  // Per chunk of the last main pass (Parallelizer::ChunkSize of the nodes): the pool thread that
  // filtered it and how many feasible nodes it took; and from them, the ranges of the feasible
  // list each thread scores (the nodes it filtered, whose lines its core still holds).
  std::vector<int> chunk_worker_;
  std::vector<uint32_t> chunk_feasible_;
  std::vector<framework::Parallelizer::Range> score_ranges_;
  framework::ScoreTable scores_;  // the last cycle's scores, reused
};

}  // namespace schedhost::scheduler
