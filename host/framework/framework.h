// Framework: one profile's runtime — its plugin instances, the per-extension-point lists built
// from config, and the runners that call plugins with upstream kube-scheduler's semantics.
//
//   auto fw = Framework::Build(expanded_profile, registry, options);   // throws FrameworkError
//   fw->SetSnapshot(snapshot.get());
//   CycleState state;
//   auto [pre, status] = fw->RunPreFilterPlugins(state, pod);
//   Status s = fw->RunFilterPlugins(state, pod, node_info_view);
#pragma once

#include <schedhost/plugin.h>

#include <array>
#include <atomic>
#include <boost/container/vector.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "host/cache/snapshot.h"
#include "host/config/expand.h"
#include "host/config/host_config.h"
#include "host/config/point.h"
#include "host/framework/clock.h"
#include "host/framework/cluster_access.h"
#include "host/framework/cycle_scratch.h"
#include "host/framework/cycle_state.h"
#include "host/framework/parallel.h"
#include "host/framework/status.h"
#include "host/framework/waiting_pods.h"
#include "host/loader/loader.h"
#include "host/model/pod.h"
#include "host/queue/cluster_event.h"
#include "host/store/object_write.h"

namespace schedhost::queue {
class Nominator;
}  // namespace schedhost::queue

namespace schedhost::framework {

class Framework;
class FrameworkMetrics;

/// FilterBatch is the outcome of Filter on a run of up to kMaxNodes nodes (RunFilterBatch).
struct FilterBatch {
  static constexpr size_t kMaxNodes = 64;
  /// passed[j] is 1 when nodes[j] passed every Filter plugin; otherwise statuses[j] says why.
  std::array<uint8_t, kMaxNodes> passed{};
  std::array<Status, kMaxNodes> statuses;
};

/// FrameworkError reports why a profile could not be built (names the profile and plugin).
class FrameworkError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// KindsOf reads and checks the API kinds descriptor `d` declares (abi 1.5; none before it);
/// throws FrameworkError naming `who` and the declaration when one is malformed, selects
/// objects (not supported yet) or names a kind the host types itself.
std::vector<store::KindInfo> KindsOf(const schedhost_plugin_descriptor& d, const std::string& who);
/// EvaluatesOf reads and checks the parts of a pod descriptor `d` evaluates (abi 1.7; none
/// before it): each must name a part of the spec ("spec.volumes.<source>",
/// "spec.resourceClaims"); FrameworkError naming `who` otherwise.
std::vector<std::string> EvaluatesOf(const schedhost_plugin_descriptor& d, const std::string& who);

/// PluginInstance is one created plugin of a profile; it keeps its library loaded.
struct PluginInstance;

/// PluginRef is a plugin enabled at one extension point, with its weight (Score only).
struct PluginRef {
  PluginInstance* plugin = nullptr;
  int64_t weight = 1;
};

/// PreFilterResult is the node subset PreFilter plugins agreed on; nullopt means all nodes.
using NodeNameSet = std::optional<std::unordered_set<std::string>>;

/// PreFilterExcludedMessage is upstream's reason for a node the node set of `plugins` (sorted,
/// as CycleState::pre_filter_node_plugins) left out: "node(s) didn't satisfy plugin(s) [A B]".
std::string PreFilterExcludedMessage(const std::vector<std::string>& plugins);

/// NodeScore is a node's weighted total and the per-plugin scores behind it (for explain).
struct NodeScore {
  const schedhost_node_info_view* node_info = nullptr;
  int64_t total = 0;
};

/// ScoreCells is a buffer of raw scores that grows without clearing what it adds (`resize(n,
/// boost::container::default_init)`): every cell is written before it is read.
using ScoreCells = boost::container::vector<int64_t>;
/// NormalizedCells and NodeNames grow the same way, for the normalised scores and the name ids.
using NormalizedCells = boost::container::vector<uint8_t>;
using NodeNames = boost::container::vector<schedhost_id>;

/// RawScore is one node's raw score (before NormalizeScore) in `column`, from its row of
/// normalised cells and its row of kept raw scores (one per entry of `kept_columns`, the
/// columns whose raw score can differ from the normalised one; see ScoreTable::kept_raw).
inline int64_t RawScore(const uint8_t* normalized_row, const int64_t* kept_row,
                        std::span<const uint32_t> kept_columns, size_t column) {
  for (size_t j = 0; j < kept_columns.size(); ++j) {
    if (kept_columns[j] == column) return kept_row[j];
  }
  return normalized_row[column];
}

/// ScoreTable is RunScorePlugins' result: each node's weighted total and, per node and Score
/// plugin (columns in ScorePluginNames order; skipped plugins score 0), the raw score and the
/// normalised score; the weighted score is the normalised one times the column's weight. Kept by
/// the caller from cycle to cycle, it stops allocating once it has grown to the cluster's size
/// (`normalized`, `kept_raw` and `names` excepted when the caller takes them, as the
/// explanation record does).
struct ScoreTable {
  std::vector<NodeScore> nodes;
  size_t columns = 0;
  /// normalized is the score after NormalizeScore (0..100, range-checked), nodes.size() x columns.
  NormalizedCells normalized;
  /// kept_raw is nodes.size() x kept_columns.size(): the raw scores (before normalisation) of
  /// the columns whose raw score can differ from the normalised one, the plugins with
  /// NormalizeScore that were not skipped (columns in increasing order). Every other column's
  /// raw score equals its normalised one: a plugin without NormalizeScore must score 0..100,
  /// and a skipped one scores 0. So no table of all raw scores is written (at 2,500 nodes x 7
  /// plugins it was 140 KB of stores per cycle); Raw derives one.
  ScoreCells kept_raw;
  std::vector<uint32_t> kept_columns;
  /// names holds each node's name id, read by the thread that scored the node (its view is in
  /// that core's cache then; a caller reading them afterwards would miss on every node).
  NodeNames names;
  std::vector<int64_t> weights;  // per column
  /// work holds the scores of each plugin with NormalizeScore (one slice of nodes.size() per
  /// such plugin) for NormalizeScore (scratch).
  std::vector<schedhost_node_score> work;

  int64_t Raw(size_t node, size_t column) const {
    return RawScore(normalized.data() + node * columns,
                    kept_raw.data() + node * kept_columns.size(), kept_columns, column);
  }
  int64_t Weighted(size_t node, size_t column) const {
    return int64_t{normalized[node * columns + column]} * weights[column];
  }
};

/// PermitResult is RunPermitPlugins' aggregate: Success, Wait with per-plugin timeouts, or a
/// rejection/error status.
struct PermitResult {
  Status status;
  std::vector<std::pair<std::string, std::chrono::nanoseconds>> waits;  // plugin -> timeout
};

/// Options are the host settings a framework needs.
struct FrameworkOptions {
  std::shared_ptr<Parallelizer> parallelizer;
  int32_t percentage_of_nodes_to_score = 0;  // 0: upstream's adaptive default
  bool batch_plugin_calls = true;            // use filter_batch/score_batch where provided
  /// shadow: a shadow profile's framework, whose plugin calls are timed on every cycle into
  /// schedhost_shadow_plugin_duration_seconds instead of the live profiles' series.
  bool shadow = false;
};

/// OutOfCycleReads marks a plugin call that has no cycle state (PreEnqueue, QueueSort, a
/// queueing hint): while one lives on a thread, object_get and object_list called with a NULL
/// state (abi 1.7) read the latest objects of the store, pinned on the first such read so that
/// every view handed out stays valid, and consistent, until the outermost one ends. Outside
/// one, a NULL state is refused. Cheap: a thread-local counter until a plugin reads.
class OutOfCycleReads {
 public:
  OutOfCycleReads() noexcept;
  ~OutOfCycleReads();
  OutOfCycleReads(const OutOfCycleReads&) = delete;
  OutOfCycleReads& operator=(const OutOfCycleReads&) = delete;
};

/// LatestReads marks the binding cycle's plugin calls (PreBind, Bind, PostBind): while one lives
/// on a thread, object_get and object_list called with a NULL state (abi 1.8) read the latest
/// objects of the store at every call, so a plugin waiting for a controller (VolumeBinding's
/// PreBind) sees its progress; every snapshot a read used stays pinned, and its views valid,
/// until the outermost one ends. Cheap: a thread-local counter until a plugin reads.
class LatestReads {
 public:
  LatestReads() noexcept;
  ~LatestReads();
  LatestReads(const LatestReads&) = delete;
  LatestReads& operator=(const LatestReads&) = delete;
};


/// Framework runs one profile. Build and destruction happen on the control thread; the Run*
/// methods may be called from the scheduling thread while Filter/Score fan out to the pool.
class Framework {
 public:
  /// Build creates every plugin instance of `profile` and validates the result (QueueSort
  /// count, at least one Bind plugin, score weight overflow). Throws FrameworkError.
  static std::unique_ptr<Framework> Build(const config::ExpandedProfile& profile,
                                          const loader::PluginRegistry& registry,
                                          const FrameworkOptions& options);
  ~Framework();
  Framework(const Framework&) = delete;
  Framework& operator=(const Framework&) = delete;

  const std::string& profile_name() const { return name_; }
  int32_t percentage_of_nodes_to_score() const { return percentage_of_nodes_to_score_; }
  /// Plugins enabled at `point`, in order.
  const std::vector<PluginRef>& plugins(config::Point point) const {
    return points_[static_cast<size_t>(point)];
  }
  /// PluginNames lists every instantiated plugin (any point).
  std::vector<std::string> PluginNames() const;
  /// QueueSortPluginName is the name of the single QueueSort plugin ("" if none).
  std::string QueueSortPluginName() const;

  /// SetSnapshot points the host API's snapshot functions at `snapshot` (not owned).
  void SetSnapshot(const cache::Snapshot* snapshot) { snapshot_.store(snapshot); }
  const cache::Snapshot* snapshot() const { return snapshot_.load(); }
  Parallelizer& parallelizer() const { return *parallelizer_; }

  /// BindFn writes a binding to the cluster state (what the host's bind_pod does for Bind
  /// plugins such as DefaultBinder). Set once by the host before scheduling starts.
  using BindFn = std::function<Status(const schedhost_pod_view* pod, std::string_view node)>;
  void SetBinder(BindFn fn) { binder_ = std::move(fn); }
  /// ObjectWriteFn writes an object of a declared kind for a plugin (object_write); throws
  /// store::StoreError.
  using ObjectWriteFn =
      std::function<void(const store::KindInfo&, store::ObjectWriteOp, std::string_view namespace_name,
                         std::string_view name, std::string_view body)>;
  /// SetObjectWriter points object_write at the cluster (null: SCHEDHOST_E_NOT_AVAILABLE).
  void SetObjectWriter(ObjectWriteFn fn) { object_writer_ = std::move(fn); }
  const ObjectWriteFn& object_writer() const { return object_writer_; }
  const BindFn& binder() const { return binder_; }
  /// SetClusterAccess gives the host API its cluster objects, actions and preemption toolkit
  /// (not owned; null: those entries answer SCHEDHOST_E_NOT_AVAILABLE). Set by the host before
  /// scheduling starts, cleared before the access goes away.
  void SetClusterAccess(ClusterAccess* access) { cluster_access_.store(access); }
  ClusterAccess* cluster_access() const { return cluster_access_.load(); }
  /// SetObjects gives the host API the objects of declared kinds (not owned; null: object_get
  /// and object_list answer SCHEDHOST_E_NOT_AVAILABLE). Set and cleared as SetClusterAccess.
  void SetObjects(const store::ObjectStore* objects) { objects_.store(objects); }
  const store::ObjectStore* objects() const { return objects_.load(); }
  /// Unevaluated returns why `pod` may not be scheduled by this profile: the first part of it
  /// that a plugin must evaluate (model::PodNeed) and none of this profile's plugins does;
  /// nullopt when there is none (nearly every pod: a flag read).
  std::optional<Status> Unevaluated(const model::Pod& pod) const;
  /// DeclaredKinds returns the API kinds this profile's plugins declare, without repeats.
  std::vector<store::KindInfo> DeclaredKinds() const;

  /// SetNominator points nominated-pod lookups at the queue's Nominator (not owned; null: none).
  void SetNominator(const queue::Nominator* nominator) { nominator_.store(nominator); }
  /// NominatedPodsForNode returns the pods nominated to `node`, empty without a nominator.
  std::vector<std::shared_ptr<const model::Pod>> NominatedPodsForNode(std::string_view node) const;
  /// SetClock gives the waiting pods their timers (not owned; must outlive every wait).
  void SetClock(Clock* clock) { waiting_pods_.SetClock(clock); }
  /// waiting_pods returns the pods of this profile waiting at Permit.
  WaitingPods& waiting_pods() { return waiting_pods_; }
  /// scratch returns the arrays handed to plugins for the length of a cycle.
  CycleScratch& scratch() { return scratch_; }
  /// FindPlugin returns the instance of the plugin named `name`, or nullptr.
  const PluginInstance* FindPlugin(std::string_view name) const;

  /// RunPreEnqueuePlugins runs PreEnqueue (inside an OutOfCycleReads).
  Status RunPreEnqueuePlugins(const schedhost_pod_view* pod);
  /// QueueSortLess orders two queued pods with the QueueSort plugin (inside an
  /// OutOfCycleReads).
  bool QueueSortLess(const schedhost_queued_pod& a, const schedhost_queued_pod& b);
  /// EventsToRegister collects every plugin's cluster-event registrations, by plugin name, with
  /// a declared kind's registration naming the kind by key; FrameworkError for a registration of
  /// a kind index the plugin does not declare.
  std::vector<std::pair<std::string, std::vector<queue::EventRegistration>>> EventsToRegister();

  /// PreFilterExtensionsActive is whether a PreFilter plugin not skipped in `state` has AddPod
  /// or RemovePod. Without one, adding or removing a pod in a simulation leaves `state` as it
  /// is, so the simulation may read it instead of cloning it.
  bool PreFilterExtensionsActive(const CycleState& state) const;

  /// RunPreFilterPlugins runs PreFilter; Skip marks the plugin's Filter skipped in `state`.
  std::pair<NodeNameSet, Status> RunPreFilterPlugins(CycleState& state,
                                                     const schedhost_pod_view* pod);
  Status RunPreFilterExtensionAddPod(CycleState& state, const schedhost_pod_view* pod,
                                     const schedhost_pod_view* to_add,
                                     const schedhost_node_info_view* ni);
  Status RunPreFilterExtensionRemovePod(CycleState& state, const schedhost_pod_view* pod,
                                        const schedhost_pod_view* to_remove,
                                        const schedhost_node_info_view* ni);
  /// RunFilterPlugins runs Filter on one node; stops at the first failure unless
  /// state.run_all_filters (then continues past Unschedulable, collecting reasons).
  Status RunFilterPlugins(const CycleState& state, const schedhost_pod_view* pod,
                          const schedhost_node_info_view* ni);
  /// RunFilterPluginsWithNominatedPods is upstream's two-pass Filter (reference/003): when pods
  /// of equal or higher priority (other than `pod`) are nominated to the node, Filter first runs
  /// on a copy of `ni` with them added (PreFilter AddPod on a cloned state) and must pass, then
  /// on `ni` itself; without such pods it is one RunFilterPlugins.
  Status RunFilterPluginsWithNominatedPods(const CycleState& state, const schedhost_pod_view* pod,
                                           const schedhost_node_info_view* ni);
  /// CanBatchFilter tells whether this cycle's Filter may go through RunFilterBatch: PreFilter
  /// resolved the plugins, one of them has a batched entry, the cycle does not run all filters,
  /// and no pod is nominated anywhere (else the two-pass Filter above). A cycle that times its
  /// plugin calls batches too (see RunFilterBatch).
  bool CanBatchFilter(const CycleState& state) const;
  /// RunFilterBatch is RunFilterPlugins on each of nodes[0..n) (n <= FilterBatch::kMaxNodes),
  /// plugin by plugin: a plugin with filter_batch gets the nodes still passing in one call, the
  /// others one call per node. While the cycle still times plugin calls
  /// (FrameworkMetrics::TimesPluginCalls) the run goes node by node instead, every call timed.
  /// Same outcome per node as RunFilterPlugins; returns an Error (and `out` is then
  /// meaningless) when a plugin errs or answers its batch inconsistently.
  Status RunFilterBatch(const CycleState& state, const schedhost_pod_view* pod,
                        const schedhost_node_info_view* const* nodes, size_t n, FilterBatch& out);
  /// RunPostFilterPlugins runs until one succeeds or errors; returns the nominated node.
  std::pair<std::string, Status> RunPostFilterPlugins(CycleState& state,
                                                      const schedhost_pod_view* pod,
                                                      const NodeStatuses& node_statuses);
  Status RunPreScorePlugins(CycleState& state, const schedhost_pod_view* pod,
                            const std::vector<const schedhost_node_info_view*>& nodes);
  /// RunScorePlugins scores `nodes` with every (non-skipped) Score plugin in parallel,
  /// normalises, range-checks and weights; fills `out` (one row per node). `ranges`, when not
  /// empty, partitions the indices of `nodes` by the pool thread that should score them (the
  /// one that filtered them, whose core still holds their lines); see
  /// Parallelizer::UntilRanges.
  Status RunScorePlugins(const CycleState& state, const schedhost_pod_view* pod,
                         const std::vector<const schedhost_node_info_view*>& nodes, ScoreTable& out,
                         std::span<const Parallelizer::Range> ranges = {});
  Status RunReservePluginsReserve(CycleState& state, const schedhost_pod_view* pod,
                                  std::string_view node);
  void RunReservePluginsUnreserve(CycleState& state, const schedhost_pod_view* pod,
                                  std::string_view node);
  PermitResult RunPermitPlugins(CycleState& state, const schedhost_pod_view* pod,
                                std::string_view node);
  Status RunPreBindPlugins(CycleState& state, const schedhost_pod_view* pod, std::string_view node);
  /// RunBindPlugins tries Bind plugins in order until one does not Skip.
  Status RunBindPlugins(CycleState& state, const schedhost_pod_view* pod, std::string_view node);
  void RunPostBindPlugins(CycleState& state, const schedhost_pod_view* pod, std::string_view node);

  /// ScorePluginNames lists the Score plugins in order (the columns of ScoreTable).
  std::vector<std::string> ScorePluginNames() const;
  /// metrics returns what this framework records (attempts, extension points, plugin calls).
  FrameworkMetrics& metrics() { return *metrics_; }

 private:
  Framework() = default;

  // The runners without their extension-point timing (framework_run.cc); the public Run*
  // methods time them (framework_timed.cc).
  std::pair<NodeNameSet, Status> UntimedPreFilter(CycleState& state, const schedhost_pod_view* pod);
  std::pair<std::string, Status> UntimedPostFilter(CycleState& state, const schedhost_pod_view* pod,
                                                   const NodeStatuses& node_statuses);
  Status UntimedPreScore(CycleState& state, const schedhost_pod_view* pod,
                         const std::vector<const schedhost_node_info_view*>& nodes);
  Status UntimedScore(const CycleState& state, const schedhost_pod_view* pod,
                      const std::vector<const schedhost_node_info_view*>& nodes, ScoreTable& out,
                      std::span<const Parallelizer::Range> ranges);
  Status RunFilterList(const std::vector<const PluginRef*>& active, const CycleState& state,
                       const schedhost_pod_view* pod, const schedhost_node_info_view* ni);
  Status UntimedReserve(CycleState& state, const schedhost_pod_view* pod, std::string_view node);
  void UntimedUnreserve(CycleState& state, const schedhost_pod_view* pod, std::string_view node);
  PermitResult UntimedPermit(CycleState& state, const schedhost_pod_view* pod,
                             std::string_view node);
  Status UntimedPreBind(CycleState& state, const schedhost_pod_view* pod, std::string_view node);
  Status UntimedBind(CycleState& state, const schedhost_pod_view* pod, std::string_view node);
  void UntimedPostBind(CycleState& state, const schedhost_pod_view* pod, std::string_view node);

  std::string name_;
  int32_t percentage_of_nodes_to_score_ = 0;
  std::vector<std::unique_ptr<PluginInstance>> instances_;
  std::array<std::vector<PluginRef>, config::kNumPoints> points_;
  std::shared_ptr<Parallelizer> parallelizer_;
  std::atomic<const cache::Snapshot*> snapshot_{nullptr};
  std::atomic<const queue::Nominator*> nominator_{nullptr};
  BindFn binder_;
  ObjectWriteFn object_writer_;
  std::atomic<ClusterAccess*> cluster_access_{nullptr};
  std::atomic<const store::ObjectStore*> objects_{nullptr};
  CycleScratch scratch_;
  std::unique_ptr<FrameworkMetrics> metrics_;  // set by Build once the plugins exist
  WaitingPods waiting_pods_;  // Last: destroyed first, disarming timers before anything else.
};

/// NumFeasibleNodesToFind is upstream's adaptive sampling: how many feasible nodes to look for
/// among `num_nodes`, given a percentage (0 = adaptive: 50% minus 1% per 125 nodes, at least 5%)
/// and the minimum of 100 nodes.
int32_t NumFeasibleNodesToFind(int32_t percentage, int32_t num_nodes);

/// FitErrorMessage formats upstream's "0/N nodes are available: ..." from per-node statuses.
std::string FitErrorMessage(size_t num_nodes, const NodeStatuses& node_statuses,
                            const Status* pre_filter_failure = nullptr);

}  // namespace schedhost::framework
