// What the scheduler keeps for operators: running counters (SchedulerStats, upstream's
// scheduler_schedule_attempts_total and pending pods by queue) and, per pod, the per-node
// results of its last scheduling attempt (CycleExplanation) for the Admin API's Explain.
//
//   SchedulerStats s = scheduler.Stats();
//   if (auto e = scheduler.Explanation(pod.uid())) for (const NodeVerdict& v : e->nodes) ...
#pragma once

#include <array>
#include <boost/container/vector.hpp>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "host/framework/status.h"
#include "host/queue/scheduling_queue.h"
#include "schedhost/plugin.h"

namespace schedhost::scheduler {

/// SchedulerStats is a snapshot of the scheduler's counters since it was built.
struct SchedulerStats {
  /// queue holds the pending pods per sub-queue.
  queue::QueueCounts queue;
  /// attempts_* count scheduling attempts by result as upstream's
  /// scheduler_schedule_attempts_total: "scheduled" when the binding cycle bound the pod,
  /// "unschedulable" when a cycle ended rejected, "error" when it ended with an error.
  uint64_t attempts_scheduled = 0;
  uint64_t attempts_unschedulable = 0;
  uint64_t attempts_error = 0;
  /// bound_pods counts successful bindings.
  uint64_t bound_pods = 0;
  /// pods_per_second is the binding rate over the last minute of the scheduler's clock (over the
  /// time since the scheduler was built while that is shorter, and at least one second).
  double pods_per_second = 0;
};

/// NodeOutcome is how a node fared in one scheduling cycle.
enum class NodeOutcome : uint8_t {
  kFeasible,  // every Filter plugin passed
  kFiltered,  // a Filter plugin rejected it: NodeVerdict::status names the plugin
  kExcluded,  // no Filter ran: PreFilter rejected the pod or left the node out of its result
};

/// NodeVerdict is one evaluated node of a cycle.
struct NodeVerdict {
  std::string node;
  NodeOutcome outcome = NodeOutcome::kFeasible;
  /// status is the failing Filter status (kFiltered) or why the node was left out (kExcluded).
  framework::Status status;
  /// total, raw and weighted are the node's row of the cycle's framework::ScoreTable; raw and
  /// weighted are index-aligned with CycleExplanation::score_plugins and empty when the cycle
  /// did not score (one feasible node).
  int64_t total = 0;
  std::vector<int64_t> raw;
  std::vector<int64_t> weighted;
};

/// CycleExplanation is what one scheduling cycle found, node by node. Nodes the cycle did not
/// look at (percentageOfNodesToScore stopped Filter early, or the nominated node was taken at
/// once) are not listed; num_all_nodes minus nodes.size() of them were left.
struct CycleExplanation {
  std::string profile;
  /// filter_plugins are the profile's Filter plugins in run order; skipped_filter_plugins those
  /// PreFilter told to Skip this cycle.
  std::vector<std::string> filter_plugins;
  std::vector<std::string> skipped_filter_plugins;
  /// score_plugins and score_weights are the profile's Score plugins in order, with weights.
  std::vector<std::string> score_plugins;
  std::vector<int64_t> score_weights;
  size_t num_all_nodes = 0;
  /// pre_filter_failure is true when PreFilter rejected the pod: every node then carries its
  /// status.
  bool pre_filter_failure = false;
  std::vector<NodeVerdict> nodes;
};

/// ExplainHeader is the part of an explanation that depends only on the profile; recorded cycles
/// of one framework share it.
struct ExplainHeader {
  std::string profile;
  std::vector<std::string> filter_plugins;
  std::vector<std::string> score_plugins;
  std::vector<int64_t> score_weights;
};

/// RecordedCycle is the compact form the scheduling loop records for every cycle (a few
/// allocations whatever the node count); Expand builds the CycleExplanation Explain returns.
/// Nodes are named by their interned name ids (model::Interner::Global keeps node names for the
/// life of the process), so a record copies no names. Feasible nodes keep their ids in
/// evaluation order and their scores in flat arrays: normalised scores (0..100 after
/// NormalizeScore's range check), from which the weighted scores and totals follow, and the raw
/// scores of the columns where they can differ (see raw_columns).
struct RecordedCycle {
  std::shared_ptr<const ExplainHeader> header;
  std::vector<std::string> skipped_filter_plugins;
  size_t num_all_nodes = 0;
  // The buffers are the types of framework::ScoreTable's, taken from the table when scored.
  boost::container::vector<schedhost_id> feasible;  // name ids, in evaluation order
  boost::container::vector<uint8_t> normalized;     // feasible x score plugins, when scored
  /// raw holds feasible x raw_columns.size() raw scores, of the score plugins (header columns)
  /// in raw_columns: those with NormalizeScore that ran. Any other column's raw score is its
  /// normalised one (a plugin without NormalizeScore scores 0..100, a skipped one 0), so a
  /// record keeps ~2 of 7 columns' 8-byte cells.
  boost::container::vector<int64_t> raw;
  std::vector<uint32_t> raw_columns;
  /// The nodes a Filter plugin rejected or PreFilter left out. Each distinct status is held
  /// once in `statuses` (most nodes of a big cluster fail for one of a few reasons), which
  /// records with the same statuses share (see Seal; null when none was rejected); the nodes
  /// of each, sorted by name id, are stored in `rejected` as runs of consecutive ids, each
  /// varint-coded as (gap from the previous run's end, length - 1). Nodes created together get
  /// consecutive ids, so 5,000 nodes failing for one reason take a few bytes, not 5,000 names.
  std::shared_ptr<const std::vector<framework::Status>> statuses;
  std::vector<uint8_t> rejected;
  size_t num_rejected = 0;
  bool scored = false;              // normalized and raw hold the cycle's scores
  bool pre_filter_failure = false;  // every node was excluded by PreFilter's status

  /// AddRejected records a rejected or excluded node (its name id); Seal must follow the last.
  /// `status` is copied only when no earlier node had the same one.
  void AddRejected(schedhost_id node, const framework::Status& status);
  /// Seal encodes what AddRejected collected into `rejected` and frees the scratch. With
  /// `last`, statuses equal to *last's are shared instead of kept again, and *last becomes
  /// this record's (pending pods failing alike, cycle after cycle, hold one copy).
  void Seal(std::shared_ptr<const std::vector<framework::Status>>* last = nullptr);
  /// ForEachRejected calls f(name_id, status) for every rejected node, by status, then id.
  template <class F>
  void ForEachRejected(F&& f) const;
  /// Bytes estimates the memory the record holds (for the scheduler's explanation budget).
  size_t Bytes() const;
  /// SameAs is true when `other`, sealed, would expand to the same explanation as this sealed
  /// record: pods that fail alike, cycle after cycle, may then hold one record between them.
  /// (Statuses compare by pointer: Seal shares equal ones.)
  bool SameAs(const RecordedCycle& other) const;
  /// Expand returns the node-by-node explanation: feasible nodes in evaluation order, then the
  /// rejected ones by name.
  std::shared_ptr<const CycleExplanation> Expand() const;

 private:
  // What AddRejected collects, from its first call until Seal: a record kept for a pending pod
  // holds one pointer instead of two empty vectors.
  struct Scratch {
    std::vector<uint64_t> pending;                // (status index << 32 | name id)
    std::vector<framework::Status> new_statuses;  // the distinct statuses, in first-seen order
  };
  std::unique_ptr<Scratch> scratch_;
};

namespace internal {
// PutVarint appends `v` as a LEB128 varint; GetVarint reads one at `*at` and advances it.
void PutVarint(std::vector<uint8_t>& out, uint64_t v);
uint64_t GetVarint(const std::vector<uint8_t>& in, size_t* at);
}  // namespace internal

template <class F>
void RecordedCycle::ForEachRejected(F&& f) const {
  // Groups: status index, run count, then the runs (gap, length - 1), ids restarting at 0.
  size_t at = 0;
  while (at < rejected.size()) {
    const auto status = static_cast<size_t>(internal::GetVarint(rejected, &at));
    const uint64_t runs = internal::GetVarint(rejected, &at);
    uint64_t next = 0;
    for (uint64_t r = 0; r < runs; ++r) {
      const uint64_t first = next + internal::GetVarint(rejected, &at);
      const uint64_t length = internal::GetVarint(rejected, &at) + 1;
      for (uint64_t id = first; id < first + length; ++id) {
        f(static_cast<schedhost_id>(id), (*statuses)[status]);
      }
      next = first + length;
    }
  }
}

/// BindingRate counts bindings per second in a ring of the last 60 seconds; thread-safe.
class BindingRate {
 public:
  /// Add counts one binding at `now_ns` (nanoseconds on the scheduler's clock).
  void Add(int64_t now_ns);
  /// PerSecond returns the bindings per second over the minute before `now_ns`, dividing by the
  /// time since `start_ns` when that is shorter (at least one second).
  double PerSecond(int64_t start_ns, int64_t now_ns) const;

 private:
  static constexpr size_t kSeconds = 60;
  mutable std::mutex mu_;
  std::array<int64_t, kSeconds> second_{};  // which second each slot counts
  std::array<uint64_t, kSeconds> count_{};
};

}  // namespace schedhost::scheduler
