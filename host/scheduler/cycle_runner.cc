// The scheduling cycle's algorithm (upstream's schedulingCycle / schedulePod): PreFilter, the
// nominated node first, Filter in parallel over the sampled nodes with a round-robin start and
// early stop, Score, and a random pick among the best nodes; and the record Explain keeps.
#include "host/scheduler/cycle_runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>

#include "host/framework/plugin_instance.h"
#include "host/framework/prefetch.h"

namespace schedhost::scheduler {

using framework::Code;
using framework::Status;

namespace {

std::string NameOf(const schedhost_node_info_view* ni) {
  return std::string(ni->node->name.data, ni->node->name.len);
}

}  // namespace

std::shared_ptr<const ExplainHeader> MakeExplainHeader(const framework::Framework& fw) {
  auto h = std::make_shared<ExplainHeader>();
  h->profile = fw.profile_name();
  for (const auto& ref : fw.plugins(config::Point::kFilter)) {
    h->filter_plugins.push_back(ref.plugin->name);
  }
  for (const auto& ref : fw.plugins(config::Point::kScore)) {
    h->score_plugins.push_back(ref.plugin->name);
    h->score_weights.push_back(ref.weight);
  }
  return h;
}

CycleAttempt CycleRunner::SchedulePod(framework::Framework& fw, const cache::Snapshot& snap,
                                      framework::CycleState& state, const model::Pod& pod) {
  CycleAttempt a;
  a.num_all_nodes = snap.size();
  if (snap.size() == 0) {
    a.status = Status::Error("no nodes available to schedule pods");
    return a;
  }
  // A part of the pod no plugin of the profile evaluates (a claim, an unknown volume source)
  // fails the cycle as a PreFilter rejection would: every node gets the reason, nothing runs.
  auto [pre_result, pre] = [&]() -> std::pair<framework::NodeNameSet, Status> {
    if (std::optional<Status> blind = fw.Unevaluated(pod)) return {std::nullopt, *blind};
    return fw.RunPreFilterPlugins(state, pod.view());
  }();
  if (!pre.ok()) {
    if (!pre.IsRejected()) {
      a.status = pre;
      return a;
    }
    // Every node gets PreFilter's status, so PostFilter (preemption) sees why none was tried.
    a.fit_error = true;
    a.status = pre;
    a.pre_filter_failure = pre;
    a.node_statuses.reserve(snap.size());
    a.rejected_ids.reserve(snap.size());
    for (size_t i = 0; i < snap.size(); ++i) a.Reject(snap.views()[i], pre);
    a.AddPluginStatus(pre);
    return a;
  }

  // A node nominated by an earlier preemption is likely the only one that fits: try it first.
  // Its rejection, if it had one, is kept unless the full pass below rejects it again (one
  // entry per node, the later status winning, as upstream's map).
  const std::string_view nominated = pod.nominated_node_name();
  schedhost_id nominated_rejected = 0;
  if (!nominated.empty()) {
    if (const cache::NodeInfo* ni = snap.Get(nominated)) {
      auto feasible = FindNodesThatPassFilters(fw, state, pod, {ni->view()}, false, a);
      if (!a.rejected_ids.empty()) nominated_rejected = a.rejected_ids.back();
      if (!a.status.ok()) {
        spdlog::warn("scheduler: evaluating nominated node {} for pod {}/{}: {}", nominated,
                     pod.namespace_name(), pod.name(), a.status.Message());
        a.status = Status::Success();
      } else if (!feasible.empty()) {
        a.feasible = std::move(feasible);
        a.node = nominated;
        return a;
      }
    }
  }

  // Every node of the snapshot (its own array, not a copy), or PreFilter's subset.
  std::vector<const schedhost_node_info_view*> subset;
  const std::vector<const schedhost_node_info_view*>* nodes = &snap.views();
  if (pre_result) {
    nodes = &subset;
    const Status excluded =
        Status::Make(Code::kUnschedulableAndUnresolvable,
                     framework::PreFilterExcludedMessage(state.pre_filter_node_plugins));
    for (size_t i = 0; i < snap.size(); ++i) {
      const std::string& name = snap.at(i).node()->name();
      if (pre_result->count(name)) {
        subset.push_back(snap.views()[i]);
      } else {
        // Left out by PreFilter: recorded so that preemption does not consider it either.
        a.Reject(snap.views()[i], excluded);
      }
    }
  }
  a.feasible = FindNodesThatPassFilters(fw, state, pod, *nodes, true, a);
  if (nominated_rejected != 0 && a.rejected_ids.size() > 1 &&
      std::find(a.rejected_ids.begin() + 1, a.rejected_ids.end(), nominated_rejected) !=
          a.rejected_ids.end()) {
    a.node_statuses.erase(a.node_statuses.begin());
    a.rejected_ids.erase(a.rejected_ids.begin());
  }
  const std::vector<const schedhost_node_info_view*>& feasible = a.feasible;
  if (!a.status.ok()) return a;
  if (feasible.empty()) {
    a.fit_error = true;
    a.status = Status::Make(Code::kUnschedulable, "");
    return a;
  }
  if (feasible.size() == 1) {
    a.node = NameOf(feasible.front());
    return a;
  }
  if (Status s = fw.RunPreScorePlugins(state, pod.view(), feasible); !s.ok()) {
    a.status = s;
    return a;
  }
  if (Status s = fw.RunScorePlugins(state, pod.view(), feasible, scores_, score_ranges_); !s.ok()) {
    a.status = s;
    return a;
  }
  a.node = SelectHost(scores_);
  a.scores = &scores_;
  return a;
}

std::vector<const schedhost_node_info_view*> CycleRunner::FindNodesThatPassFilters(
    framework::Framework& fw, const framework::CycleState& state, const model::Pod& pod,
    const std::vector<const schedhost_node_info_view*>& nodes, bool rotate, CycleAttempt& a) {
  std::vector<const schedhost_node_info_view*> out;
  score_ranges_.clear();
  const size_t n = nodes.size();
  if (n == 0) return out;
  const auto to_find = static_cast<size_t>(framework::NumFeasibleNodesToFind(
      fw.percentage_of_nodes_to_score(), static_cast<int32_t>(n)));
  const size_t start = rotate ? next_start_node_index_ % n : 0;
  if (fw.plugins(config::Point::kFilter).empty()) {
    for (size_t i = 0; i < to_find; ++i) out.push_back(nodes[(start + i) % n]);
    if (rotate) next_start_node_index_ = (start + out.size()) % n;
    return out;
  }
  // Per-index outcome of this pass, in buffers kept across cycles (a cycle allocates nothing per
  // node): 0 not evaluated (early stop), 1 feasible, 2 rejected with filter_statuses_[i].
  // Only the part the last pass wrote is cleared (its nodes up to where it stopped: ~2,600
  // of 50,000 in scale_50k).
  std::vector<uint8_t>& outcome = filter_outcome_;
  std::fill_n(outcome.begin(), std::min(filter_outcome_used_, outcome.size()), uint8_t{0});
  outcome.resize(n, 0);
  filter_outcome_used_ = n;  // until this pass knows where it stopped
  if (filter_statuses_.size() < n) filter_statuses_.resize(n);
  // With helper threads, the main pass notes which thread filtered each chunk and how many
  // feasible nodes it took there, for the Score pass (score_ranges_ below).
  const bool track = rotate && fw.parallelizer().threads() > 1;
  const size_t chunk = fw.parallelizer().ChunkSize(n);
  if (track) {
    chunk_worker_.resize((n + chunk - 1) / chunk);
    chunk_feasible_.assign(chunk_worker_.size(), 0);
  }
  std::atomic<size_t> found{0};
  std::atomic<bool> stop{false};
  std::mutex error_mu;
  Status error;
  // index maps a position in this pass (0 .. n-1, from `start` on) to an index of `nodes`; a
  // compare, not a modulo (a 64-bit division per node was a tenth of this function's own time).
  const auto index = [start, n](size_t i) { return i < n - start ? start + i : i - (n - start); };
  // found_one counts a node that passed; false (and `stop` set) when enough were found before it.
  const auto found_one = [&](size_t i) {
    if (found.fetch_add(1) + 1 > to_find) {
      found.fetch_sub(1);
      stop.store(true);
      return false;
    }
    outcome[i] = 1;
    return true;
  };
  // reached is one past the highest index any chunk was handed; nothing beyond it was looked at,
  // so the passes over the outcomes below stop there (~550 of 5,000 nodes in scheduling_basic).
  std::atomic<size_t> reached{0};
  const auto reach = [&reached](size_t end) {
    size_t seen = reached.load(std::memory_order_relaxed);
    while (seen < end && !reached.compare_exchange_weak(seen, end, std::memory_order_relaxed)) {
    }
  };
  const auto fail = [&](Status s) {
    std::lock_guard lock(error_mu);
    if (error.ok()) error = std::move(s);
    stop.store(true);
  };
  if (fw.CanBatchFilter(state)) {
    // Runs of up to FilterBatch::kMaxNodes nodes, plugin by plugin (batched entries where the
    // plugins have them); `stop` is looked at between runs. Within a run the nodes are taken in
    // order, so a run that reaches the limit leaves the rest of it unevaluated, as one node at a
    // time would.
    fw.parallelizer().UntilChunks(
        n,
        [&](size_t begin, size_t end) {
          reach(end);
          if (track) chunk_worker_[begin / chunk] = framework::Parallelizer::Worker();
          framework::FilterBatch batch;
          std::array<const schedhost_node_info_view*, framework::FilterBatch::kMaxNodes> run;
          for (size_t b = begin; b < end; b += run.size()) {
            if (stop.load(std::memory_order_relaxed)) return;
            const size_t len = std::min(run.size(), end - b);
            for (size_t j = 0; j < len; ++j) run[j] = nodes[index(b + j)];
            framework::PrefetchRun(run.data(), len);
            Status s = fw.RunFilterBatch(state, pod.view(), run.data(), len, batch);
            if (!s.ok()) return fail(std::move(s));
            // One add to the shared count per run, not per node (the other thread's core
            // holds its cache line): `take` of the run's passes fit under to_find.
            const auto passed = static_cast<size_t>(std::count(
                batch.passed.begin(), batch.passed.begin() + static_cast<ptrdiff_t>(len), 1));
            size_t take = passed;
            if (passed > 0) {
              const size_t before = found.fetch_add(passed);
              if (before + passed > to_find) {
                take = to_find > before ? to_find - before : 0;
                found.fetch_sub(passed - take);
              }
              if (track) chunk_feasible_[begin / chunk] += static_cast<uint32_t>(take);
            }
            for (size_t j = 0; j < len; ++j) {
              if (!batch.passed[j]) {
                filter_statuses_[b + j] = std::move(batch.statuses[j]);
                outcome[b + j] = 2;
              } else if (take == 0) {
                // Enough feasible nodes found: the rest are not looked at (upstream's early stop).
                stop.store(true);
                return;
              } else {
                --take;
                outcome[b + j] = 1;
              }
            }
          }
        },
        &stop);
  } else {
    fw.parallelizer().UntilChunks(
        n,
        [&](size_t begin, size_t end) {
          reach(end);
          if (track) chunk_worker_[begin / chunk] = framework::Parallelizer::Worker();
          for (size_t i = begin; i < end; ++i) {
            if (stop.load(std::memory_order_relaxed)) return;
            framework::PrefetchAhead(nodes, i, end, index);
            Status s = fw.RunFilterPluginsWithNominatedPods(state, pod.view(), nodes[index(i)]);
            if (s.code == Code::kError) {
              fail(std::move(s));
            } else if (s.ok()) {
              // Enough feasible nodes found: the rest are not looked at (upstream's early stop).
              if (found_one(i) && track) ++chunk_feasible_[begin / chunk];
            } else {
              filter_statuses_[i] = std::move(s);
              outcome[i] = 2;
            }
          }
        },
        &stop);
  }
  const size_t last = std::min(n, reached.load());
  filter_outcome_used_ = last;
  if (!error.ok()) {
    for (size_t i = 0; i < last; ++i) {
      if (outcome[i] == 2) filter_statuses_[i] = Status{};
    }
    a.status = std::move(error);
    return {};
  }
  out.reserve(std::min(n, to_find));
  const size_t rejected = static_cast<size_t>(
      std::count(outcome.begin(), outcome.begin() + static_cast<std::ptrdiff_t>(last), 2));
  a.rejected_ids.reserve(a.rejected_ids.size() + rejected);
  // The main pass (rotate) leaves its statuses in place (Attempt::kept); a nominated node's
  // own pass moves its one status out, as the main pass will overwrite the buffer.
  const bool keep = rotate;
  if (keep) {
    a.kept.reserve(rejected);
    a.kept_statuses = &filter_statuses_;
  } else {
    a.node_statuses.reserve(a.node_statuses.size() + rejected);
  }
  size_t processed = 0;
  if (rejected == 0) {
    // Every node looked at passed (a big cluster with room): only the feasible ones to gather,
    // without the per-node branches and capacity checks of the general walk.
    out.resize(static_cast<size_t>(
        std::count(outcome.begin(), outcome.begin() + static_cast<std::ptrdiff_t>(last), 1)));
    const schedhost_node_info_view** to = out.data();
    const size_t wrap = std::min(last, n - start);  // positions before it map to start + i
    for (size_t i = 0; i < wrap; ++i) {
      if (outcome[i] == 1) *to++ = nodes[start + i];
    }
    for (size_t i = wrap; i < last; ++i) {
      if (outcome[i] == 1) *to++ = nodes[i - wrap];
    }
    processed = out.size();
  } else {
    for (size_t i = 0; i < last; ++i) {
      const schedhost_node_info_view* ni = nodes[index(i)];
      if (outcome[i] == 1) {
        out.push_back(ni);
        ++processed;
      } else if (outcome[i] == 2) {
        a.AddPluginStatus(filter_statuses_[i]);
        if (keep) {
          a.Keep(ni, static_cast<uint32_t>(i));
        } else {
          a.Reject(ni, std::move(filter_statuses_[i]));
          filter_statuses_[i] = Status{};
        }
        ++processed;
      }
    }
  }
  if (rotate) next_start_node_index_ = (start + processed) % n;
  if (track) {
    // The feasible list is in pass order, so each chunk's feasible nodes are one stretch of it.
    // Pieces of the Score pass's own chunk size keep its balance when a thread takes another's.
    const size_t piece = fw.parallelizer().ChunkSize(out.size());
    size_t pos = 0;
    for (size_t k = 0; k < chunk_feasible_.size(); ++k) {
      for (size_t left = chunk_feasible_[k]; left > 0;) {
        const size_t len = std::min<size_t>(left, piece);
        score_ranges_.push_back({pos, pos + len, chunk_worker_[k]});
        pos += len;
        left -= len;
      }
    }
    if (pos != out.size()) score_ranges_.clear();  // not expected; the Score pass then chunks
  }
  return out;
}

std::shared_ptr<RecordedCycle> CycleRunner::Record(
    const model::Pod& pod, const framework::Framework& fw, const framework::CycleState& state,
    CycleAttempt& a, std::shared_ptr<const ExplainHeader> header,
    std::shared_ptr<const std::vector<framework::Status>>* last) {
  auto r = std::make_shared<RecordedCycle>();
  r->header = std::move(header);
  for (const auto& ref : fw.plugins(config::Point::kFilter)) {
    if (state.skip_filter_plugins.count(ref.plugin->name)) {
      r->skipped_filter_plugins.push_back(ref.plugin->name);
    }
  }
  r->num_all_nodes = a.num_all_nodes;
  const std::string_view nominated = pod.nominated_node_name();
  const schedhost_id nominated_id =
      nominated.empty() ? 0 : model::Interner::Global().Lookup(nominated);
  const size_t columns = r->header->score_plugins.size();
  framework::ScoreTable* t = a.scores;
  r->scored = t != nullptr && !a.feasible.empty() && t->nodes.size() == a.feasible.size() &&
              t->columns == columns;
  if (r->scored) {
    // The cells and the name ids move into the record (the table is refilled next cycle): a
    // 5,000-node cycle scores ~500 nodes x 5 plugins, and copying them was most of this
    // function; the ids were read where each node was scored, its view then in cache. Of the
    // raw scores only the columns where they differ from the normalised ones are kept.
    r->normalized.swap(t->normalized);
    r->raw.swap(t->kept_raw);
    r->raw_columns = t->kept_columns;
    r->feasible.swap(t->names);
  } else {
    r->feasible.resize(a.feasible.size(), boost::container::default_init);
    for (size_t i = 0; i < a.feasible.size(); ++i) r->feasible[i] = a.feasible[i]->node->name_id;
  }
  const bool nominated_feasible =
      nominated_id != 0 &&
      std::find(r->feasible.begin(), r->feasible.end(), nominated_id) != r->feasible.end();
  r->pre_filter_failure = a.pre_filter_failure.has_value();
  a.ForEachRejected([&](schedhost_id id, const Status& status) {
    // A nominated node that failed its own pass first and then passed the full one.
    if (nominated_feasible && id == nominated_id) return;
    r->AddRejected(id, status);
  });
  r->Seal(last);
  return r;
}

std::string CycleRunner::SelectHost(const framework::ScoreTable& table) {
  const std::vector<framework::NodeScore>& scores = table.nodes;
  // Each of the k equally best nodes wins with probability 1/k, as upstream's reservoir
  // sampling, from one draw: the best total and its count first, then the draw's k-th of them.
  // (A draw per tie cost 2,500 draws per cycle on a 50,000-node cluster of identical nodes.)
  int64_t best = scores[0].total;
  uint64_t ties = 1;
  for (size_t i = 1; i < scores.size(); ++i) {
    if (scores[i].total > best) {
      best = scores[i].total;
      ties = 1;
    } else if (scores[i].total == best) {
      ++ties;
    }
  }
  uint64_t k = ties == 1 ? 0 : rng_() % ties;
  size_t selected = 0;
  for (; selected < scores.size(); ++selected) {
    if (scores[selected].total == best && k-- == 0) break;
  }
  return NameOf(scores[selected].node_info);
}

}  // namespace schedhost::scheduler
