// The extension-point runners, with upstream kube-scheduler's semantics for each point.
#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <mutex>
#include <numeric>

#include "host/framework/framework.h"
#include "host/framework/framework_metrics.h"
#include "host/framework/plugin_instance.h"
#include "host/framework/prefetch.h"
#include "host/queue/nominator.h"

namespace schedhost::framework {
namespace {

schedhost_str Str(std::string_view s) { return schedhost_str{s.data(), s.size()}; }

const std::vector<PluginRef>& At(const std::array<std::vector<PluginRef>, config::kNumPoints>& p,
                                 config::Point point) {
  return p[static_cast<size_t>(point)];
}

// Wrap turns a non-rejection failure into upstream's "running <Point> plugin "X": msg" error.
Status Wrap(Status s, std::string_view what, const Text& plugin) {
  if (s.IsRejected()) {
    s.plugin = plugin;
    return s;
  }
  return Status::Error(
      "running " + std::string(what) + " plugin \"" + plugin + "\": " + s.Message(), plugin);
}

std::string GoList(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? " " : "") + names[i];
  return out + "]";
}

}  // namespace

std::string PreFilterExcludedMessage(const std::vector<std::string>& plugins) {
  return "node(s) didn't satisfy plugin(s) " + GoList(plugins);
}

Status Framework::RunPreEnqueuePlugins(const schedhost_pod_view* pod) {
  const OutOfCycleReads reads;
  for (const auto& ref : At(points_, config::Point::kPreEnqueue)) {
    StatusSink sink;
    Status s = ToStatus(ref.plugin->desc->pre_enqueue(ref.plugin->instance, pod, sink.abi()), sink,
                        ref.plugin->name_text);
    if (!s.ok()) {
      if (!s.IsRejected()) return Wrap(std::move(s), "PreEnqueue", ref.plugin->name_text);
      return s;
    }
  }
  return {};
}

bool Framework::QueueSortLess(const schedhost_queued_pod& a, const schedhost_queued_pod& b) {
  const auto& sorts = At(points_, config::Point::kQueueSort);
  if (sorts.empty()) return a.timestamp_ns < b.timestamp_ns;
  const PluginInstance* p = sorts.front().plugin;
  const OutOfCycleReads reads;
  return p->desc->queue_sort_less(p->instance, &a, &b) != 0;
}

std::vector<std::pair<std::string, std::vector<queue::EventRegistration>>>
Framework::EventsToRegister() {
  std::vector<std::pair<std::string, std::vector<queue::EventRegistration>>> out;
  for (const auto& inst : instances_) {
    if (!SCHEDHOST_HAS_FIELD(inst->desc, schedhost_plugin_descriptor, events_to_register) ||
        inst->desc->events_to_register == nullptr) {
      continue;
    }
    const schedhost_event_registration* regs = nullptr;
    size_t n = 0;
    if (inst->desc->events_to_register(inst->instance, &regs, &n) != SCHEDHOST_SUCCESS) continue;
    std::vector<queue::EventRegistration> copy;
    for (size_t i = 0; regs != nullptr && i < n; ++i) {
      queue::EventRegistration reg{regs[i].event, regs[i].hint, ""};
      if (reg.event.resource >= SCHEDHOST_RESOURCE_DECLARED_KIND) {
        const auto index = static_cast<size_t>(reg.event.resource - SCHEDHOST_RESOURCE_DECLARED_KIND);
        if (index >= inst->kind_keys.size()) {
          throw FrameworkError("plugin " + inst->name + ": EventsToRegister entry " +
                               std::to_string(i) + " registers for declared kind " +
                               std::to_string(index) + ", but the plugin declares " +
                               std::to_string(inst->kind_keys.size()) + " kind(s)");
        }
        reg.kind = inst->kind_keys[index];
      }
      copy.push_back(std::move(reg));
    }
    out.emplace_back(inst->name, std::move(copy));
  }
  return out;
}

std::pair<NodeNameSet, Status> Framework::UntimedPreFilter(CycleState& state,
                                                           const schedhost_pod_view* pod) {
  NodeNameSet result;
  state.skip_filter_plugins.clear();
  state.active_filters.clear();
  state.filters_resolved = false;
  state.pre_filter_node_plugins.clear();
  // A plugin's Unschedulable does not end PreFilter (upstream, kubernetes#119770): the plugins
  // after it still write their state, which preemption's what-if Filter runs need. The last such
  // status is the result unless a later plugin rules the pod out for good or fails.
  Status unschedulable = Status::Success();
  for (const auto& ref : At(points_, config::Point::kPreFilter)) {
    StatusSink sink;
    PreFilterResultSink r;
    const auto t0 = FrameworkMetrics::PluginStart(state);
    int32_t rc = ref.plugin->desc->pre_filter(ref.plugin->instance, state.abi(), pod,
                                              reinterpret_cast<schedhost_pre_filter_result*>(&r),
                                              sink.abi());
    metrics_->ObservePlugin(t0, *ref.plugin, SlotOf(config::Point::kPreFilter), rc);
    Status s = ToStatus(rc, sink, ref.plugin->name_text);
    if (s.code == Code::kSkip) {
      state.skip_filter_plugins.insert(ref.plugin->name);
      continue;
    }
    if (s.code == Code::kUnschedulable) {
      unschedulable = Wrap(std::move(s), "PreFilter", ref.plugin->name_text);
      continue;
    }
    if (!s.ok()) return {std::nullopt, Wrap(std::move(s), "PreFilter", ref.plugin->name_text)};
    if (!r.set) continue;
    // Upstream keeps them in a set and prints it sorted.
    state.pre_filter_node_plugins.insert(
        std::lower_bound(state.pre_filter_node_plugins.begin(), state.pre_filter_node_plugins.end(),
                         ref.plugin->name),
        ref.plugin->name);
    std::unordered_set<std::string> nodes(r.nodes.begin(), r.nodes.end());
    if (!result) {
      result = std::move(nodes);
    } else {
      for (auto it = result->begin(); it != result->end();) {
        it = nodes.count(*it) ? std::next(it) : result->erase(it);
      }
    }
    if (result->empty()) {
      const std::vector<std::string>& plugins = state.pre_filter_node_plugins;
      std::string msg = plugins.size() == 1 ? "node(s) didn't satisfy plugin " + plugins[0]
                                            : "node(s) didn't satisfy plugin(s) " +
                                                  GoList(plugins) + " simultaneously";
      return {std::nullopt, Status::Make(Code::kUnschedulableAndUnresolvable, msg)};
    }
  }
  for (const auto& ref : At(points_, config::Point::kFilter)) {
    if (!state.skip_filter_plugins.count(ref.plugin->name)) state.active_filters.push_back(&ref);
  }
  state.filters_resolved = true;
  return {std::move(result), std::move(unschedulable)};
}

bool Framework::PreFilterExtensionsActive(const CycleState& state) const {
  for (const auto& ref : At(points_, config::Point::kPreFilter)) {
    const auto* d = ref.plugin->desc;
    if ((d->pre_filter_add_pod != nullptr || d->pre_filter_remove_pod != nullptr) &&
        state.skip_filter_plugins.count(ref.plugin->name) == 0) {
      return true;
    }
  }
  return false;
}

Status Framework::RunPreFilterExtensionAddPod(CycleState& state, const schedhost_pod_view* pod,
                                              const schedhost_pod_view* to_add,
                                              const schedhost_node_info_view* ni) {
  for (const auto& ref : At(points_, config::Point::kPreFilter)) {
    const auto* d = ref.plugin->desc;
    if (d->pre_filter_add_pod == nullptr || state.skip_filter_plugins.count(ref.plugin->name))
      continue;
    StatusSink sink;
    Status s = ToStatus(
        d->pre_filter_add_pod(ref.plugin->instance, state.abi(), pod, to_add, ni, sink.abi()), sink,
        ref.plugin->name_text);
    if (!s.ok()) {
      return Status::Error(
          "running AddPod on PreFilter plugin \"" + ref.plugin->name + "\": " + s.Message(),
          ref.plugin->name_text);
    }
  }
  return {};
}

Status Framework::RunPreFilterExtensionRemovePod(CycleState& state, const schedhost_pod_view* pod,
                                                 const schedhost_pod_view* to_remove,
                                                 const schedhost_node_info_view* ni) {
  for (const auto& ref : At(points_, config::Point::kPreFilter)) {
    const auto* d = ref.plugin->desc;
    if (d->pre_filter_remove_pod == nullptr || state.skip_filter_plugins.count(ref.plugin->name))
      continue;
    StatusSink sink;
    Status s = ToStatus(
        d->pre_filter_remove_pod(ref.plugin->instance, state.abi(), pod, to_remove, ni, sink.abi()),
        sink, ref.plugin->name_text);
    if (!s.ok()) {
      return Status::Error(
          "running RemovePod on PreFilter plugin \"" + ref.plugin->name + "\": " + s.Message(),
          ref.plugin->name_text);
    }
  }
  return {};
}

Status Framework::RunFilterPlugins(const CycleState& state, const schedhost_pod_view* pod,
                                   const schedhost_node_info_view* ni) {
  if (state.filters_resolved) return RunFilterList(state.active_filters, state, pod, ni);
  // PreFilter did not run (tests, callers outside a cycle): skip by name.
  std::vector<const PluginRef*> active;
  for (const auto& ref : At(points_, config::Point::kFilter)) {
    if (!state.skip_filter_plugins.count(ref.plugin->name)) active.push_back(&ref);
  }
  return RunFilterList(active, state, pod, ni);
}

Status Framework::RunFilterList(const std::vector<const PluginRef*>& active,
                                const CycleState& state, const schedhost_pod_view* pod,
                                const schedhost_node_info_view* ni) {
  Status merged;
  for (const PluginRef* ref : active) {
    StatusSink sink;
    const auto t0 = FrameworkMetrics::PluginStart(state);
    int32_t rc = ref->plugin->desc->filter(ref->plugin->instance, state.abi(), pod, ni, sink.abi());
    metrics_->ObservePlugin(t0, *ref->plugin, SlotOf(config::Point::kFilter), rc);
    if (rc == SCHEDHOST_SUCCESS && sink.reasons.empty()) continue;
    Status s = ToStatus(rc, sink, ref->plugin->name_text);
    if (s.ok()) continue;
    if (!s.IsRejected()) {
      return Status::Error("running \"" + ref->plugin->name + "\" filter plugin: " + s.Message(),
                           ref->plugin->name_text);
    }
    if (!state.run_all_filters || s.code == Code::kUnschedulableAndUnresolvable) {
      if (merged.ok()) return s;
      merged.code = s.code;
      merged.reasons.insert(merged.reasons.end(), s.reasons.begin(), s.reasons.end());
      return merged;
    }
    if (merged.ok()) {
      merged = std::move(s);
    } else {
      merged.reasons.insert(merged.reasons.end(), s.reasons.begin(), s.reasons.end());
    }
  }
  return merged;
}

bool Framework::CanBatchFilter(const CycleState& state) const {
  // A sampled cycle batches too: RunFilterBatch takes its runs node by node while it still
  // times plugin calls (FrameworkMetrics::TimesPluginCalls).
  if (!state.filters_resolved || state.run_all_filters) return false;
  const queue::Nominator* nominator = nominator_.load();
  if (nominator != nullptr && nominator->Size() > 0) return false;
  return std::any_of(state.active_filters.begin(), state.active_filters.end(),
                     [](const PluginRef* ref) { return ref->plugin->filter_batch != nullptr; });
}

Status Framework::RunFilterBatch(const CycleState& state, const schedhost_pod_view* pod,
                                 const schedhost_node_info_view* const* nodes, size_t n,
                                 FilterBatch& out) {
  // The nodes every plugin so far passed, in order: `nodes` itself until a plugin rejects one,
  // then `alive`, with each node's index in `nodes` in `at`. Without run_all_filters a node's
  // first rejection is its status, so a rejected node leaves the list. Before any rejection
  // nothing is copied: kept == k for every node kept.
  n = std::min(n, FilterBatch::kMaxNodes);
  if (FrameworkMetrics::TimesPluginCalls(state)) {
    // A sampled cycle times its first plugin calls: this run goes one node at a time, each call
    // timed, as UntimedScore's runs do.
    for (size_t j = 0; j < n; ++j) {
      Status s = RunFilterList(state.active_filters, state, pod, nodes[j]);
      if (s.code == Code::kError) return s;
      out.passed[j] = s.ok() ? 1 : 0;
      if (!s.ok()) out.statuses[j] = std::move(s);
    }
    return {};
  }
  std::array<const schedhost_node_info_view*, FilterBatch::kMaxNodes> alive;
  std::array<uint8_t, FilterBatch::kMaxNodes> at;
  const schedhost_node_info_view* const* src = nodes;
  bool rejected_any = false;
  size_t m = n;
  size_t kept = 0;
  const auto keep = [&](size_t k) {
    if (kept != k) {  // only after a rejection, so `alive` is in use
      alive[kept] = alive[k];
      at[kept] = at[k];
    }
    ++kept;
  };
  const auto reject = [&](size_t k, Status s) {
    if (!rejected_any) {
      rejected_any = true;
      std::copy_n(nodes, n, alive.begin());
      std::iota(at.begin(), at.begin() + static_cast<std::ptrdiff_t>(n), uint8_t{0});
      src = alive.data();
    }
    out.statuses[at[k]] = std::move(s);
  };
  // settle applies the status plugin `p` gave node k: keeps a node that passed, records a
  // rejection; false (with `error` set) when the status is an error.
  Status error;
  const auto settle = [&](const PluginInstance& p, size_t k, Status s) {
    if (s.ok()) {
      keep(k);
      return true;
    }
    if (!s.IsRejected()) {
      error =
          Status::Error("running \"" + p.name + "\" filter plugin: " + s.Message(), p.name_text);
      return false;
    }
    reject(k, std::move(s));
    return true;
  };
  for (const PluginRef* ref : state.active_filters) {
    if (m == 0) break;
    const PluginInstance& p = *ref->plugin;
    kept = 0;
    if (p.filter_batch != nullptr) {
      for (size_t pos = 0; pos < m;) {
        StatusSink sink;
        const size_t len = m - pos;
        size_t passed = len + 1;  // a plugin that does not set it is caught below
        const int32_t rc =
            p.filter_batch(p.instance, state.abi(), pod, src + pos, len, &passed, sink.abi());
        if (rc == SCHEDHOST_SUCCESS ? passed != len : passed >= len) {
          return Status::Error("plugin \"" + p.name + "\" answered filter_batch on " +
                                   std::to_string(len) + " nodes with code " + std::to_string(rc) +
                                   " and " + std::to_string(passed) +
                                   " passed: the batch must stop at the first node that does "
                                   "not pass",
                               p.name_text);
        }
        if (kept == pos) {
          kept += passed;  // nothing rejected before this stretch: already in place
        } else {
          for (size_t k = pos; k < pos + passed; ++k) keep(k);
        }
        if (rc == SCHEDHOST_SUCCESS) break;
        const size_t k = pos + passed;
        if (!settle(p, k, ToStatus(rc, sink, p.name_text))) return error;
        pos = k + 1;
      }
    } else {
      for (size_t k = 0; k < m; ++k) {
        StatusSink sink;
        const int32_t rc = p.desc->filter(p.instance, state.abi(), pod, src[k], sink.abi());
        if (rc == SCHEDHOST_SUCCESS && sink.reasons.empty()) {
          keep(k);
        } else if (!settle(p, k, ToStatus(rc, sink, p.name_text))) {
          return error;
        }
      }
    }
    m = kept;
  }
  if (!rejected_any) {
    std::fill_n(out.passed.begin(), n, uint8_t{1});
  } else {
    std::fill_n(out.passed.begin(), n, uint8_t{0});
    for (size_t k = 0; k < m; ++k) out.passed[at[k]] = 1;
  }
  return {};
}

std::pair<std::string, Status> Framework::UntimedPostFilter(CycleState& state,
                                                            const schedhost_pod_view* pod,
                                                            const NodeStatuses& node_statuses) {
  NodeStatusMapView map;
  map.statuses = &node_statuses;
  Status merged;
  std::string nominated;
  for (const auto& ref : At(points_, config::Point::kPostFilter)) {
    StatusSink sink;
    PostFilterResultSink r;
    const auto t0 = FrameworkMetrics::PluginStart(state);
    int32_t rc = ref.plugin->desc->post_filter(
        ref.plugin->instance, state.abi(), pod,
        reinterpret_cast<const schedhost_node_status_map*>(&map),
        reinterpret_cast<schedhost_post_filter_result*>(&r), sink.abi());
    metrics_->ObservePlugin(t0, *ref.plugin, SlotOf(config::Point::kPostFilter), rc);
    Status s = ToStatus(rc, sink, ref.plugin->name_text);
    if (s.ok()) return {r.nominated_node, s};
    if (s.code == Code::kUnschedulableAndUnresolvable) return {r.nominated_node, s};
    if (!s.IsRejected()) return {"", Status::Error(s.Message(), ref.plugin->name_text)};
    if (!r.nominated_node.empty()) nominated = r.nominated_node;
    if (merged.ok()) merged.code = s.code;
    merged.reasons.insert(merged.reasons.end(), s.reasons.begin(), s.reasons.end());
  }
  return {nominated, merged};
}

Status Framework::UntimedPreScore(CycleState& state, const schedhost_pod_view* pod,
                                  const std::vector<const schedhost_node_info_view*>& nodes) {
  state.skip_score_plugins.clear();
  for (const auto& ref : At(points_, config::Point::kPreScore)) {
    StatusSink sink;
    const auto t0 = FrameworkMetrics::PluginStart(state);
    Status s = ToStatus(ref.plugin->desc->pre_score(ref.plugin->instance, state.abi(), pod,
                                                    nodes.data(), nodes.size(), sink.abi()),
                        sink, ref.plugin->name_text);
    metrics_->ObservePlugin(t0, *ref.plugin, SlotOf(config::Point::kPreScore), s.code);
    if (s.code == Code::kSkip) {
      state.skip_score_plugins.insert(ref.plugin->name);
      continue;
    }
    if (!s.ok()) {
      return Status::Error("running PreScore plugin \"" + ref.plugin->name + "\": " + s.Message(),
                           ref.plugin->name_text);
    }
  }
  return {};
}

Status Framework::UntimedScore(const CycleState& state, const schedhost_pod_view* pod,
                               const std::vector<const schedhost_node_info_view*>& nodes,
                               ScoreTable& out, std::span<const Parallelizer::Range> ranges) {
  const auto& all = At(points_, config::Point::kScore);
  const size_t n = nodes.size();
  const size_t np = all.size();
  // Each column (a Score plugin, in profile order) is skipped, finished where it was scored (no
  // NormalizeScore: range-checked, weighted and added to the node's total by the thread that
  // scored the node), or gathered into a slice of `work` for NormalizeScore after all nodes are
  // scored. Only NormalizeScore and what follows it run on this thread alone.
  struct Column {
    const PluginRef* ref;
    size_t col;
    size_t slice;  // into out.work; kDirect for a column finished where it was scored
  };
  constexpr size_t kDirect = SIZE_MAX;
  std::vector<const PluginRef*> active;
  std::vector<Column> active_columns;  // `active` with what each column is, in profile order
  std::vector<Column> direct;
  std::vector<Column> normalizing;
  std::vector<size_t> skipped;
  out.weights.resize(np);
  for (size_t col = 0; col < np; ++col) {
    const PluginRef& ref = all[col];
    out.weights[col] = ref.weight;
    if (state.skip_score_plugins.count(ref.plugin->name)) {
      skipped.push_back(col);
      continue;
    }
    active.push_back(&ref);
    if (ref.plugin->desc->normalize_score == nullptr) {
      direct.push_back({&ref, col, kDirect});
    } else {
      normalizing.push_back({&ref, col, normalizing.size()});
    }
    active_columns.push_back(ref.plugin->desc->normalize_score == nullptr ? direct.back()
                                                                          : normalizing.back());
  }
  out.nodes.resize(n);
  out.columns = np;
  // Every cell is written below, so neither buffer is cleared first (at 2,500 nodes x 7
  // plugins that was a 160 KB memset per cycle).
  out.normalized.resize(n * np, boost::container::default_init);
  out.names.resize(n, boost::container::default_init);
  const size_t kept = normalizing.size();
  out.kept_columns.clear();
  for (const Column& c : normalizing) out.kept_columns.push_back(static_cast<uint32_t>(c.col));
  out.kept_raw.resize(n * kept, boost::container::default_init);
  out.work.resize(kept * n);
  std::mutex err_mu;
  Status first_error;
  std::atomic<bool> stop{false};
  const auto fail = [&](const PluginInstance& p, int32_t rc, StatusSink& sink) {
    Status s = ToStatus(rc, sink, p.name_text);
    std::lock_guard<std::mutex> lock(err_mu);
    if (first_error.ok()) {
      first_error =
          Status::Error("running Score plugin \"" + p.name + "\": " + s.Message(), p.name_text);
    }
    stop.store(true);
  };
  // A score out of [0, 100] after normalisation fails the cycle. The error names the first such
  // plugin in profile order and, within it, the first node, whichever thread saw it.
  std::vector<std::pair<size_t, int64_t>> out_of_range(np, {SIZE_MAX, 0});
  const auto note_out_of_range = [&](size_t col, size_t i, int64_t s) {
    std::lock_guard<std::mutex> lock(err_mu);
    if (i < out_of_range[col].first) out_of_range[col] = {i, s};
  };
  const auto in_range = [](int64_t s) {
    return s >= SCHEDHOST_MIN_NODE_SCORE && s <= SCHEDHOST_MAX_NODE_SCORE;
  };
  // finish takes node i once every plugin has scored it.
  const auto finish = [&](size_t i, const int64_t* raw) {
    uint8_t* normalized = out.normalized.data() + i * np;
    int64_t total = 0;
    for (const Column& c : direct) {
      const int64_t s = raw[c.col];
      if (!in_range(s)) {
        note_out_of_range(c.col, i, s);
        continue;
      }
      normalized[c.col] = static_cast<uint8_t>(s);
      total += s * c.ref->weight;
    }
    int64_t* kept_raw = out.kept_raw.data() + i * kept;
    for (const Column& c : normalizing) {
      out.work[c.slice * n + i] = {nodes[i], raw[c.col]};
      kept_raw[c.slice] = raw[c.col];
    }
    for (const size_t col : skipped) normalized[col] = 0;
    out.nodes[i] = NodeScore{nodes[i], total};
    out.names[i] = nodes[i]->node != nullptr ? nodes[i]->node->name_id : SCHEDHOST_ID_EMPTY;
  };
  // score_one is one node's Score calls, each timed while the cycle times plugin calls; the
  // scores go to raw[column].
  const auto score_one = [&](size_t i, int64_t* raw) {
    for (const PluginRef* ref : active) {
      const PluginInstance* p = ref->plugin;
      StatusSink sink;
      int64_t score = 0;
      const auto t0 = FrameworkMetrics::PluginStart(state);
      int32_t rc = p->desc->score(p->instance, state.abi(), pod, nodes[i], &score, sink.abi());
      metrics_->ObservePlugin(t0, *p, SlotOf(config::Point::kScore), rc);
      if (rc != SCHEDHOST_SUCCESS) {
        fail(*p, rc, sink);
        return false;
      }
      raw[ref - all.data()] = score;
    }
    return true;
  };
  // run_loop runs a loop body over all n nodes: by the caller's ranges when it has them, by
  // chunks otherwise.
  const auto run_loop = [&](const std::function<void(size_t, size_t)>& body) {
    if (ranges.empty()) {
      parallelizer_->UntilChunks(n, body, &stop);
    } else {
      parallelizer_->UntilRanges(ranges, body, &stop);
    }
  };
  // Batched (abi 1.2): runs of up to kRun nodes, plugin by plugin, a plugin with score_batch
  // scoring a run in one call. A sampled cycle takes its runs node by node, every call timed,
  // until it has timed kMaxTimedPluginCalls calls (the per-call histograms mean what they always
  // did; the calls past the budget were never timed).
  const bool batched = std::any_of(active.begin(), active.end(), [](const PluginRef* ref) {
    return ref->plugin->score_batch != nullptr;
  });
  if (batched) {
    // A run is finished column by column, each plugin's scores as they come back, instead of
    // node by node afterwards (finish): the same stores, in tight loops over the run.
    constexpr size_t kRun = 64;
    const std::function<void(size_t, size_t)> score_runs = [&](size_t begin, size_t end) {
      std::array<int64_t, kRun> scores;
      std::array<int64_t, kRun> totals;
      boost::container::small_vector<int64_t, 8> cells;  // a timed run's, node by node
      for (size_t b = begin; b < end; b += kRun) {
        if (stop.load(std::memory_order_relaxed)) return;
        const size_t len = std::min(kRun, end - b);
        if (FrameworkMetrics::TimesPluginCalls(state)) {
          cells.resize(np);
          for (size_t j = 0; j < len; ++j) {
            if (!score_one(b + j, cells.data())) return;
            finish(b + j, cells.data());
          }
          continue;
        }
        for (size_t j = 0; j < len; ++j) {
          PrefetchView(nodes[b + j]);
        }
        std::fill_n(totals.begin(), len, 0);
        uint8_t* normalized = out.normalized.data() + b * np;
        for (const Column& c : active_columns) {
          const PluginInstance& p = *c.ref->plugin;
          if (p.score_batch != nullptr) {
            StatusSink sink;
            const int32_t rc = p.score_batch(p.instance, state.abi(), pod, nodes.data() + b, len,
                                             scores.data(), sink.abi());
            if (rc != SCHEDHOST_SUCCESS) return fail(p, rc, sink);
          } else {
            for (size_t j = 0; j < len; ++j) {
              StatusSink sink;
              scores[j] = 0;
              const int32_t rc =
                  p.desc->score(p.instance, state.abi(), pod, nodes[b + j], &scores[j], sink.abi());
              if (rc != SCHEDHOST_SUCCESS) return fail(p, rc, sink);
            }
          }
          if (c.slice == kDirect) {
            const int64_t weight = c.ref->weight;
            for (size_t j = 0; j < len; ++j) {
              const int64_t s = scores[j];
              if (!in_range(s)) {
                note_out_of_range(c.col, b + j, s);
                continue;
              }
              normalized[j * np + c.col] = static_cast<uint8_t>(s);
              totals[j] += s * weight;
            }
          } else {
            schedhost_node_score* work = out.work.data() + c.slice * n + b;
            int64_t* kept_raw = out.kept_raw.data() + b * kept + c.slice;
            for (size_t j = 0; j < len; ++j) {
              work[j] = {nodes[b + j], scores[j]};
              kept_raw[j * kept] = scores[j];
            }
          }
        }
        for (const size_t col : skipped) {
          for (size_t j = 0; j < len; ++j) normalized[j * np + col] = 0;
        }
        for (size_t j = 0; j < len; ++j) {
          const schedhost_node_info_view* v = nodes[b + j];
          out.nodes[b + j] = NodeScore{v, totals[j]};
          // From the summary, the line the plugins just read (every snapshot view has one).
          out.names[b + j] = (v->summary.flags & SCHEDHOST_NODE_SUMMARY_VALID) != 0
                                 ? v->summary.name_id
                             : v->node != nullptr ? v->node->name_id
                                                  : SCHEDHOST_ID_EMPTY;
        }
      }
    };
    run_loop(score_runs);
  } else {
    run_loop([&](size_t begin, size_t end) {
      boost::container::small_vector<int64_t, 8> cells(np);
      for (size_t i = begin; i < end; ++i) {
        PrefetchAhead(nodes, i, end, [](size_t j) { return j; });
        if (!score_one(i, cells.data())) return;
        finish(i, cells.data());
      }
    });
  }
  if (!first_error.ok()) return first_error;

  // As upstream: every plugin normalises first, then weights and range checks follow.
  for (const Column& c : normalizing) {
    const PluginInstance* p = c.ref->plugin;
    StatusSink sink;
    int32_t rc = p->desc->normalize_score(p->instance, state.abi(), pod,
                                          out.work.data() + c.slice * n, n, sink.abi());
    if (rc != SCHEDHOST_SUCCESS) {
      Status s = ToStatus(rc, sink, p->name_text);
      return Status::Error("running Normalize on Score plugin \"" + p->name + "\": " + s.Message(),
                           p->name_text);
    }
  }
  for (const Column& c : normalizing) {
    const schedhost_node_score* work = out.work.data() + c.slice * n;
    const int64_t weight = c.ref->weight;
    for (size_t i = 0; i < n; ++i) {
      const int64_t s = work[i].score;
      if (!in_range(s)) {
        if (i < out_of_range[c.col].first) out_of_range[c.col] = {i, s};
        break;
      }
      out.normalized[i * np + c.col] = static_cast<uint8_t>(s);
      out.nodes[i].total += s * weight;
    }
  }
  for (const PluginRef* ref : active) {
    const auto col = static_cast<size_t>(ref - all.data());
    if (out_of_range[col].first == SIZE_MAX) continue;
    return Status::Error("plugin \"" + ref->plugin->name + "\" returns an invalid score " +
                             std::to_string(out_of_range[col].second) +
                             ", it should in the range of [0, 100] after normalizing",
                         ref->plugin->name_text);
  }
  return {};
}

Status Framework::UntimedReserve(CycleState& state, const schedhost_pod_view* pod,
                                 std::string_view node) {
  for (const auto& ref : At(points_, config::Point::kReserve)) {
    StatusSink sink;
    const auto t0 = FrameworkMetrics::PluginStart(state);
    Status s = ToStatus(
        ref.plugin->desc->reserve(ref.plugin->instance, state.abi(), pod, Str(node), sink.abi()),
        sink, ref.plugin->name_text);
    metrics_->ObservePlugin(t0, *ref.plugin, SlotOf(config::Point::kReserve), s.code);
    if (!s.ok()) return Wrap(std::move(s), "Reserve", ref.plugin->name_text);
  }
  return {};
}

void Framework::UntimedUnreserve(CycleState& state, const schedhost_pod_view* pod,
                                 std::string_view node) {
  const auto& list = At(points_, config::Point::kReserve);
  for (auto it = list.rbegin(); it != list.rend(); ++it) {
    if (it->plugin->desc->unreserve == nullptr) continue;
    const auto t0 = FrameworkMetrics::PluginStart(state);
    it->plugin->desc->unreserve(it->plugin->instance, state.abi(), pod, Str(node));
    metrics_->ObservePlugin(t0, *it->plugin, kUnreserveSlot, SCHEDHOST_SUCCESS);
  }
}

PermitResult Framework::UntimedPermit(CycleState& state, const schedhost_pod_view* pod,
                                      std::string_view node) {
  PermitResult result;
  for (const auto& ref : At(points_, config::Point::kPermit)) {
    StatusSink sink;
    int64_t timeout_ns = 0;
    const auto t0 = FrameworkMetrics::PluginStart(state);
    Status s = ToStatus(ref.plugin->desc->permit(ref.plugin->instance, state.abi(), pod, Str(node),
                                                 &timeout_ns, sink.abi()),
                        sink, ref.plugin->name_text);
    metrics_->ObservePlugin(t0, *ref.plugin, SlotOf(config::Point::kPermit), s.code);
    if (s.ok()) continue;
    if (s.IsRejected()) {
      s.plugin = ref.plugin->name_text;
      result.status = std::move(s);
      result.waits.clear();
      return result;
    }
    if (s.code == Code::kWait) {
      timeout_ns = std::clamp<int64_t>(timeout_ns, 0, SCHEDHOST_MAX_PERMIT_TIMEOUT_NS);
      result.waits.emplace_back(ref.plugin->name, std::chrono::nanoseconds(timeout_ns));
      continue;
    }
    result.status =
        Status::Error("running Permit plugin \"" + ref.plugin->name + "\": " + s.Message(),
                      ref.plugin->name_text);
    result.waits.clear();
    return result;
  }
  if (!result.waits.empty()) {
    result.status = Status::Make(Code::kWait,
                                 "one or more plugins asked to wait and no plugin rejected pod \"" +
                                     std::string(pod->name.data, pod->name.len) + "\"");
  }
  return result;
}

Status Framework::UntimedPreBind(CycleState& state, const schedhost_pod_view* pod,
                                 std::string_view node) {
  for (const auto& ref : At(points_, config::Point::kPreBind)) {
    StatusSink sink;
    const auto t0 = FrameworkMetrics::PluginStart(state);
    Status s = ToStatus(
        ref.plugin->desc->pre_bind(ref.plugin->instance, state.abi(), pod, Str(node), sink.abi()),
        sink, ref.plugin->name_text);
    metrics_->ObservePlugin(t0, *ref.plugin, SlotOf(config::Point::kPreBind), s.code);
    if (!s.ok()) return Wrap(std::move(s), "PreBind", ref.plugin->name_text);
  }
  return {};
}

Status Framework::UntimedBind(CycleState& state, const schedhost_pod_view* pod,
                              std::string_view node) {
  Status last = Status::Make(Code::kSkip, "no Bind plugin bound the pod");
  for (const auto& ref : At(points_, config::Point::kBind)) {
    StatusSink sink;
    const auto t0 = FrameworkMetrics::PluginStart(state);
    Status s = ToStatus(
        ref.plugin->desc->bind(ref.plugin->instance, state.abi(), pod, Str(node), sink.abi()), sink,
        ref.plugin->name_text);
    metrics_->ObservePlugin(t0, *ref.plugin, SlotOf(config::Point::kBind), s.code);
    if (s.code == Code::kSkip) {
      last = std::move(s);
      continue;
    }
    if (!s.ok()) return Wrap(std::move(s), "Bind", ref.plugin->name_text);
    return s;
  }
  return last;
}

void Framework::UntimedPostBind(CycleState& state, const schedhost_pod_view* pod,
                                std::string_view node) {
  for (const auto& ref : At(points_, config::Point::kPostBind)) {
    const auto t0 = FrameworkMetrics::PluginStart(state);
    ref.plugin->desc->post_bind(ref.plugin->instance, state.abi(), pod, Str(node));
    metrics_->ObservePlugin(t0, *ref.plugin, SlotOf(config::Point::kPostBind), SCHEDHOST_SUCCESS);
  }
}

}  // namespace schedhost::framework
