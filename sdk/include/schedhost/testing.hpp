// schedhost::testing: test a plugin inside the real host, in-process, from GoogleTest or any
// other test runner. Nothing here is a fake: libschedhost-testing.so (CMake target
// schedhost::testing, `find_package(schedhost-sdk COMPONENTS testing)`) is the host's own
// loader, config, snapshot, framework, scheduler and `schedctl simulate`, behind plain values.
//
//  - Harness: a cluster (nodes, bound pods, Namespaces: YAML manifests or the builders below),
//    one profile's framework with your plugin loaded from the .so you ship, and a Cycle that runs
//    each extension point in upstream's order on a real CycleState; also EventsToRegister and
//    queueing hints, asked as the scheduling queue asks them.
//  - Simulate / Explain: `schedctl simulate -o json` and `schedctl simulate --explain -o json`
//    as functions: host config (TOML) and manifests (YAML) in, placements or explanations out.
//
//   using namespace schedhost::testing;
//   Harness h({.libraries = {"build/node_pool.so"}});
//   h.UsePlugins({"NodePool"});
//   h.AddObjects(NodeYaml("gpu-1", {{"example.com/pool", "gpu"}}));
//   Cycle c = h.StartCycle(PodYaml("trainer", {{"example.com/pool", "gpu"}}));
//   ASSERT_TRUE(c.PreFilter().ok());
//   EXPECT_EQ(c.Filter("gpu-1").code, Code::kSuccess);
//
// Only standard types cross this header, and the library exports nothing but its declarations.
// It is a C++ API, not the plugin C ABI: build your tests with the SDK of the host you test with.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace schedhost::testing {

/// Error is input the host refused (a manifest, a config, a library) or a call out of upstream's
/// order; what() says which and why.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what);
  ~Error() override;
};

/// Code is an extension point's result, numbered as plugin.h's schedhost_code.
enum class Code : int32_t {
  kSuccess = 0,
  kError = 1,
  kUnschedulable = 2,
  kUnschedulableAndUnresolvable = 3,
  kWait = 4,
  kSkip = 5,
  kPending = 6,
};

/// CodeName returns upstream's name of `code` ("Success", "Unschedulable", ...).
std::string CodeName(Code code);

/// Result is one extension point's outcome: its code, the plugin that decided it ("" when every
/// plugin succeeded) and the reasons in order. A plugin returning Skip does not decide the
/// outcome (the code stays kSuccess); `skipped` names it instead.
struct Result {
  Code code = Code::kSuccess;
  std::string plugin;
  std::vector<std::string> reasons;
  /// skipped names, in the profile's order, the plugins that returned Skip: at PreFilter (their
  /// Filter and PreFilterExtensions do not run this cycle) and PreScore (their Score does not
  /// run). Empty for every other extension point, as `schedctl explain` shows Filter's `skip`.
  std::vector<std::string> skipped;

  bool ok() const { return code == Code::kSuccess; }
  /// Message joins the reasons with ", ", as upstream's Status.Message().
  std::string Message() const {
    std::string out;
    for (const std::string& r : reasons) out += (out.empty() ? "" : ", ") + r;
    return out;
  }
};

/// NodeResult is Filter's verdict on one node.
struct NodeResult {
  std::string node;
  Result result;
};

/// PluginScore is one Score plugin's score of a node: before NormalizeScore (`raw`), after it
/// (`normalized`, equal to raw for a plugin without it) and times the plugin's weight.
struct PluginScore {
  std::string plugin;
  int64_t raw = 0;
  int64_t normalized = 0;
  int64_t weighted = 0;
  /// skipped (Cycle::Score): the plugin returned Skip at PreScore, so it did not score this
  /// cycle; raw, normalized and weighted are then 0 without being a score of 0. Explain's scores
  /// follow the explain document, which shows such a plugin as 0, 0, 0 and leaves this false.
  bool skipped = false;
};

/// NodeScore is a feasible node's total (the sum of `weighted`) and its Score plugins' scores,
/// in the profile's Score order.
struct NodeScore {
  std::string node;
  int64_t total = 0;
  std::vector<PluginScore> plugins;
};

/// PostFilterResult is PostFilter's verdict: the status and the nominated node ("" for none).
struct PostFilterResult {
  Result result;
  std::string nominated_node;
};

/// PermitResult is Permit's aggregate: Success, a rejection, or Wait with each waiting plugin's
/// timeout.
struct PermitResult {
  Result result;
  std::vector<std::pair<std::string, std::chrono::nanoseconds>> waits;
};

/// EventRegistration is one cluster event a plugin registered (EventsToRegister): `resource` is
/// a schedhost_event_resource and `actions` schedhost_event_action bits (plugin.h).
struct EventRegistration {
  std::string plugin;
  int32_t resource = 0;
  int32_t actions = 0;
  bool has_hint = false;  // false: the host queues the pod on every matching event
};

/// Event is a cluster change as the host's event router hands it to the scheduling queue; the
/// objects are YAML manifests. The host derives the action bits from old and new, as upstream
/// does (a node update that changes nothing scheduling-relevant moves no pod).
struct Event {
  enum class Kind {
    kNodeAdd,
    kNodeUpdate,
    kNodeDelete,
    kAssignedPodAdd,
    kAssignedPodUpdate,
    kAssignedPodDelete,
  };
  Kind kind = Kind::kNodeAdd;
  std::string old_object;  // updates and deletes
  std::string new_object;  // adds and updates

  static Event NodeAdd(std::string node) { return {Kind::kNodeAdd, {}, std::move(node)}; }
  static Event NodeUpdate(std::string old_node, std::string new_node) {
    return {Kind::kNodeUpdate, std::move(old_node), std::move(new_node)};
  }
  static Event NodeDelete(std::string node) { return {Kind::kNodeDelete, std::move(node), {}}; }
  static Event AssignedPodAdd(std::string pod) {
    return {Kind::kAssignedPodAdd, {}, std::move(pod)};
  }
  static Event AssignedPodUpdate(std::string old_pod, std::string new_pod) {
    return {Kind::kAssignedPodUpdate, std::move(old_pod), std::move(new_pod)};
  }
  static Event AssignedPodDelete(std::string pod) {
    return {Kind::kAssignedPodDelete, std::move(pod), {}};
  }
};

/// QueueingHint is the queue's decision for a pod a plugin rejected, given an event.
enum class QueueingHint { kSkip, kQueue };

/// Labels are label key -> value, as in a manifest.
using Labels = std::map<std::string, std::string>;

/// NodeYaml is the manifest of a node `name` with `labels` (kubernetes.io/hostname added unless
/// given) and `allocatable`, also its capacity (cpu, memory, pods, any extended resource;
/// defaults: 4 cpu, 16Gi, 110 pods).
std::string NodeYaml(const std::string& name, const Labels& labels = {},
                     const std::map<std::string, std::string>& allocatable = {});

/// PodYaml is the manifest of a pod `name` in `namespace_name` with `labels`, one container
/// requesting `requests` (e.g. {{"cpu", "500m"}}), bound to `node` when it is not "".
std::string PodYaml(const std::string& name, const Labels& labels = {},
                    const std::map<std::string, std::string>& requests = {},
                    const std::string& node = "", const std::string& namespace_name = "default");

/// NamespaceYaml is the manifest of Namespace `name` with `labels`.
std::string NamespaceYaml(const std::string& name, const Labels& labels = {});

class Harness;

/// Cycle is one pod's scheduling cycle: one CycleState that every call shares, the extension
/// points called one by one in upstream's order (PreFilter before Filter, FilterAll before
/// PostFilter and PreScore, PreScore before Score). A call out of order throws Error. A Cycle
/// must not outlive its Harness; AddObjects, SetConfig and UsePlugins end it (later calls throw
/// Error).
class Cycle {
 public:
  Cycle(Cycle&&) noexcept;
  Cycle& operator=(Cycle&&) noexcept;
  ~Cycle();

  /// PreFilter runs every PreFilter plugin of the profile; Result::skipped names those that
  /// returned Skip.
  Result PreFilter();
  /// PreFilterNodes is the node set PreFilter narrowed the cycle to, sorted; nullopt: all.
  std::optional<std::vector<std::string>> PreFilterNodes() const;
  /// AddPod is PreFilterExtensions.AddPod, as preemption and nominated pods run it: `pod` (a
  /// manifest) is added to a copy of `node` that this cycle's Filter sees from now on, and every
  /// PreFilter plugin with AddPod updates the CycleState.
  Result AddPod(std::string_view pod, std::string_view node);
  /// RemovePod is PreFilterExtensions.RemovePod for the pod "namespace/name" bound to `node` (in
  /// the cluster or added by AddPod): removed from this cycle's copy of the node.
  Result RemovePod(std::string_view pod, std::string_view node);
  /// Filter runs every Filter plugin on `node` (its copy when AddPod/RemovePod changed it); a
  /// node outside PreFilterNodes, or any node after PreFilter rejected, gets that status.
  Result Filter(std::string_view node);
  /// FilterAll is Filter on every node, by name; its feasible nodes are what PreScore and Score
  /// see, its rejections what PostFilter sees.
  std::vector<NodeResult> FilterAll();
  /// PostFilter runs the PostFilter plugins with FilterAll's rejections. The harness gives them
  /// no cluster actions (the preemption toolkit answers not available); use Simulate for
  /// preemption.
  PostFilterResult PostFilter();
  /// PreScore runs the PreScore plugins on FilterAll's feasible nodes; Result::skipped names
  /// those that returned Skip.
  Result PreScore();
  /// Score runs Score, NormalizeScore and the weights on the feasible nodes, by node name; a
  /// failure throws Error with the plugin's status.
  std::vector<NodeScore> Score();
  /// Reserve runs Reserve for `node`; Unreserve runs every Reserve plugin's Unreserve.
  Result Reserve(std::string_view node);
  void Unreserve(std::string_view node);
  /// Permit runs the Permit plugins (Wait is reported with its timeouts, not waited for).
  PermitResult Permit(std::string_view node);
  /// PreBind, Bind (plugins in order until one does not Skip; DefaultBinder's binding is
  /// recorded in Harness::Bindings) and PostBind.
  Result PreBind(std::string_view node);
  Result Bind(std::string_view node);
  void PostBind(std::string_view node);

 private:
  friend class Harness;
  struct Impl;
  explicit Cycle(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// ScheduleResult is one whole cycle's outcome: the node, or "" and upstream's message.
struct ScheduleResult {
  std::string node;
  std::string message;
};

/// Harness owns a plugin registry, one profile's framework and a cluster snapshot.
class Harness {
 public:
  /// Options say which plugins are loaded, through the host's loader (the checks, dlopen and
  /// ABI negotiation schedhostd does).
  struct Options {
    /// libraries are plugin .so files to load, e.g. the target file of your plugin. They load
    /// before plugin_dir's, and a library there naming one of their plugins (an installed copy
    /// of the plugin under test) is left out rather than refused as a duplicate.
    std::vector<std::string> libraries;
    /// plugin_dir holds the builtin plugins (PrioritySort, DefaultBinder, the default profile).
    /// "": $SCHEDHOST_PLUGIN_DIR when set, else the host's directory beside this library
    /// (<prefix>/lib/schedhost/plugins, or <build>/plugins in a build tree).
    std::string plugin_dir;
  };

  /// Harness loads the builtin plugins and `options.libraries`; throws Error naming a library
  /// the loader refused.
  explicit Harness(Options options = {});
  Harness(Harness&&) noexcept;
  Harness& operator=(Harness&&) noexcept;
  ~Harness();

  /// SetConfig uses the first profile of a whole schedhost config (TOML text).
  void SetConfig(std::string_view toml);
  /// UsePlugins uses a profile of `plugins` at every point they implement plus PrioritySort and
  /// DefaultBinder, every default plugin disabled; `extra_toml` is appended (e.g. a
  /// [profile.plugin_config.<Name>] table). Without SetConfig or UsePlugins: the default profile.
  void UsePlugins(const std::vector<std::string>& plugins, std::string_view extra_toml = "");
  /// AddObjects adds the Nodes, bound Pods and Namespaces of `yaml` (one or more manifests) to
  /// the cluster, and the objects of kinds the profile's plugins declare (a PodGroup, a kind of
  /// your own) to what Host::GetObject reads; built-in kinds the host does not model are
  /// ignored. Throws Error for a manifest the host refuses, or (when the profile is built) for
  /// an object of a kind no plugin of it declares.
  void AddObjects(std::string_view yaml);

  /// PluginNames lists the profile's plugins (any point); builds the profile (throws Error for
  /// a config the host refuses, with its file:line:col).
  std::vector<std::string> PluginNames();
  /// PreEnqueue runs the PreEnqueue plugins on the pod of `pod_yaml`, as the queue does before
  /// admitting it (a rejection keeps the pod out of every cycle).
  Result PreEnqueue(std::string_view pod_yaml);
  /// StartCycle begins a cycle for the pod of `pod_yaml` (a pod without spec.nodeName).
  Cycle StartCycle(std::string_view pod_yaml);
  /// ScheduleOne runs a whole cycle, PreFilter to PostBind (Unreserve on a failure after
  /// Reserve; no PostFilter): the best node, or "" and upstream's FitError message.
  ScheduleResult ScheduleOne(std::string_view pod_yaml);
  /// Bindings lists what Bind plugins bound through the host, "namespace/name -> node".
  std::vector<std::string> Bindings() const;

  /// EventsToRegister lists the profile's plugins' registrations, in plugin order.
  std::vector<EventRegistration> EventsToRegister();
  /// Hint answers as the scheduling queue does whether `event` may make the pod of `pod_yaml`,
  /// rejected by `plugin`, schedulable: kQueue when a registration of the plugin matches and its
  /// hint (if any) says Queue; a plugin that registers no events is asked about every event.
  QueueingHint Hint(std::string_view plugin, std::string_view pod_yaml, const Event& event);

  /// Impl is the library's own (opaque here; named by the library's Cycle).
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// Placement is one input pod's outcome in Simulate, as `schedctl simulate -o json` prints it.
struct Placement {
  std::string namespace_name;
  std::string name;
  std::optional<std::string> node;            // bound to; nullopt while pending
  std::optional<std::string> nominated_node;  // status.nominatedNodeName, when set
  std::string status;                         // "Bound" or "Pending"
  std::string message;                        // "" when bound, else why not
};

/// Eviction is a pod preemption deleted during Simulate.
struct Eviction {
  std::string namespace_name;
  std::string name;
  std::string by;  // "namespace/name" of the preemptor
};

/// SimulationResult is every input pod's placement, in input order, and the evictions.
struct SimulationResult {
  std::vector<Placement> pods;
  std::vector<Eviction> evicted;
  /// idle is false when the run stopped with pods still being retried (then `pods` is where
  /// they were at that point).
  bool idle = true;

  /// Find returns the placement of pod "namespace/name" (or "name" in default), or nullptr.
  const Placement* Find(std::string_view pod) const;
};

/// NodeVerdict is one node of an explanation: feasible, or the Filter plugin that rejected it.
struct NodeVerdict {
  std::string name;
  bool feasible = false;
  Result result;  // empty when feasible; no plugin for a node PreFilter's node set left out
};

/// Explanation is one pending pod's entry of the explain document (docs/conformance.md): its
/// single cycle against the input cluster plus the earlier pods that fitted.
struct Explanation {
  std::string namespace_name;
  std::string name;
  std::optional<Result> gated;        // a PreEnqueue plugin held the pod; nothing else follows
  std::optional<Result> pre_filter;   // PreFilter rejected the pod
  std::vector<NodeVerdict> nodes;     // every node, by name
  std::vector<NodeScore> scores;      // two or more feasible nodes: each one's scores, by name
  std::vector<std::string> best;      // the feasible nodes with the highest total, by name
  std::optional<std::string> placed;  // best[0]
  std::string message;                // no node fits: upstream's FitError message
  std::optional<std::string> nominated_node;  // no node fits: what PostFilter nominated ("" none)
  std::vector<std::string> victims;           // no node fits: who it would evict, sorted
};

/// ExplainResult is the explain document as values and as its JSON text (schedctl's output).
struct ExplainResult {
  std::vector<Explanation> pods;
  std::string json;

  /// Find returns the explanation of pod "namespace/name" (or "name" in default), or nullptr.
  const Explanation* Find(std::string_view pod) const;
};

/// SimulateOptions are `schedctl simulate`'s inputs besides the config and manifests.
struct SimulateOptions {
  /// libraries, when not empty, replace the config's [host] libraries: a config written for
  /// deployment names the installed path, the test the file it just built.
  std::vector<std::string> libraries;
  /// plugin_dir: as Harness::Options::plugin_dir (used when the config leaves plugin_dirs at its
  /// default).
  std::string plugin_dir;
  /// base_dir resolves the config's relative paths ("": the current directory).
  std::string base_dir;
  /// seed fixes the virtual clock and tie-breaks: the same input gives the same answer.
  uint64_t seed = 0;
};

/// Simulate runs the host on `manifests` with the profiles of `config_toml` ("" = the built-in
/// defaults) until no pod can make progress, as `schedctl simulate`. Throws Error for a config,
/// manifest or library the host refuses; nothing is scheduled then.
SimulationResult Simulate(std::string_view config_toml, std::string_view manifests,
                          const SimulateOptions& options = {});

/// Explain runs one cycle per pending pod of `manifests`, every node evaluated, as
/// `schedctl simulate --explain -o json`. Throws as Simulate.
ExplainResult Explain(std::string_view config_toml, std::string_view manifests,
                      const SimulateOptions& options = {});

}  // namespace schedhost::testing
