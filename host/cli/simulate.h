// `schedctl simulate`: an embedded host run on manifests. Every manifest is decoded first (a bad
// one changes nothing), the objects are applied in upstream's order (Namespaces,
// PriorityClasses, nodes, PDBs, bound pods, then pending pods in file order), and the scheduler
// runs on a virtual clock until no pod can make progress — seeded, so the same input gives the
// same answer every run. Compare runs one input under two configs and says where they part.
//
//   SimulationResult r = Simulate(config, DecodeFile("cluster.yaml"), plugin_dir, /*seed=*/0);
//   std::cout << FormatJson(r);
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/config/host_config.h"
#include "host/model/decode.h"
#include "host/scheduler/cycle_diff.h"
#include "host/scheduler/profile_set.h"
#include "host/scheduler/scheduler.h"

namespace schedhost::cli {

/// SimulatedPod is one input pod's outcome.
struct SimulatedPod {
  std::string namespace_name;
  std::string name;
  std::optional<std::string> node;            // bound to; nullopt while pending
  std::optional<std::string> nominated_node;  // status.nominatedNodeName, when set
  std::string status;                         // "Bound" or "Pending"
  std::string message;  // "" when bound; upstream's failure message (or the gate) when pending
};

/// Eviction is a pod deleted by preemption during the simulation (filled by preemption).
struct Eviction {
  std::string namespace_name;
  std::string name;
  std::string by;  // "namespace/name" of the preemptor
};

/// SimulationResult is the outcome of every input pod, in input order.
struct SimulationResult {
  std::vector<SimulatedPod> pods;
  std::vector<Eviction> evicted;
  scheduler::RunResult run;
};

/// SimulationError is input the simulation refused (the objects could not all be applied);
/// nothing was scheduled.
class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Simulate applies `objects` to a fresh store in upstream's order, schedules them with the
/// profiles of `config` (plugins from `plugin_dir` when the config leaves plugin_dirs at its
/// default) on a virtual clock seeded with `seed`, and reports every input pod. Throws
/// SimulationError (an object the store refused), scheduler::ProfileSetError or ConfigError.
/// `inspect`, when set, is called once the run has ended, before the scheduler stops, with the
/// store and the scheduler as they are then (the HTML report reads them).
SimulationResult Simulate(
    const config::HostConfig& config, const std::vector<model::Object>& objects,
    const std::filesystem::path& plugin_dir, uint64_t seed,
    const std::function<void(store::Store&, scheduler::Scheduler&)>& inspect = nullptr);
/// Simulate, with objects of the API kinds the loaded plugins declare (`generic`, applied
/// after the typed cluster objects and before any cycle); a document of a kind no loaded plugin
/// declares is refused with SimulationError, naming it and the kinds that are declared.
SimulationResult Simulate(
    const config::HostConfig& config, const std::vector<model::Object>& objects,
    const std::vector<model::GenericObject>& generic, const std::filesystem::path& plugin_dir,
    uint64_t seed,
    const std::function<void(store::Store&, scheduler::Scheduler&)>& inspect = nullptr);

/// ExplainEachPod runs one scheduling cycle for each pending pod of `objects`, in input order,
/// against the input's cluster plus the earlier pending pods that fitted (bound to the first of
/// their best nodes by name), every node evaluated; a pod that fits nowhere changes nothing
/// (its preemption is reported, not carried out). `generic` (objects of the kinds the loaded
/// plugins declare: claims, volumes, classes...) are part of every cycle's cluster as given: no
/// controller acts on them, and a cycle runs no PreBind or Bind, so what one pod would write
/// (a claim's selected node, an assumed volume) is not seen by the next. Returns the explain
/// document of docs/conformance.md. Throws as Simulate does.
nlohmann::ordered_json ExplainEachPod(config::HostConfig config,
                                      const std::vector<model::Object>& objects,
                                      const std::filesystem::path& plugin_dir, uint64_t seed,
                                      const std::vector<model::GenericObject>& generic = {});

/// ExplainConfig is `config` as ExplainEachPod runs it: every node evaluated (the document
/// lists them all), whatever percentage of nodes to score the config sets.
config::HostConfig ExplainConfig(config::HostConfig config);
/// ExplainEachPod with the profiles of `profiles`, built from an ExplainConfig; it must be a set
/// no other run has used, so that no plugin instance carries anything from another input (a
/// batch builds each one with ProfileSet::Rebuild).
nlohmann::ordered_json ExplainEachPod(std::shared_ptr<const scheduler::ProfileSet> profiles,
                                      const std::vector<model::Object>& objects, uint64_t seed,
                                      const std::vector<model::GenericObject>& generic = {});

namespace internal {
/// ApplyOrder returns the indexes of `objects` in the order Simulate applies them: Namespaces,
/// PriorityClasses, Nodes, PDBs, bound pods, then pending pods, each kind in input order.
std::vector<size_t> ApplyOrder(const std::vector<model::Object>& objects);
/// IsPending is true for a pod without spec.nodeName.
bool IsPending(const model::Object& obj);
/// ApplyAll creates `objects` in `store` in ApplyOrder; throws SimulationError naming the
/// first refused object by its place in the input.
void ApplyAll(store::Store& store, const std::vector<model::Object>& objects);
/// ApplyGeneric declares `kinds` in the store and applies `generic` to it, in input order;
/// throws SimulationError for an object of a kind not among `kinds` (naming the kinds that are)
/// or one the store refuses.
void ApplyGeneric(store::Store& store, const std::vector<store::KindInfo>& kinds,
                  const std::vector<model::GenericObject>& generic);
}  // namespace internal

/// FormatJson renders exactly one JSON object:
/// {"pods":[{"namespace","name","node","nominatedNode","status","message"}],"evicted":[...]}.
std::string FormatJson(const SimulationResult& result);
/// FormatTable renders a kubectl-like table: NAMESPACE NAME STATUS NODE NOMINATED MESSAGE.
std::string FormatTable(const SimulationResult& result);

/// ComparedSide is where one config puts a pod.
struct ComparedSide {
  std::optional<std::string> node;  // nullopt while pending
  std::string message;              // why it is pending ("" when placed)
  /// explanation is the pod's last cycle under this config; null when none ran (a gated pod,
  /// a schedulerName no profile has) or its record was dropped.
  std::shared_ptr<const scheduler::CycleExplanation> explanation;
  nlohmann::json explain_json;  // api::UiExplanation of that cycle, with --html; else null
};

/// ComparedPod is one pod under both configs: "pending" (an input pod without a node, as the
/// whole simulation placed it) or "replay" (a bound pod of the input scheduled alone, one cycle,
/// against the cluster without it; runs_on is where it runs).
struct ComparedPod {
  std::string namespace_name;
  std::string name;
  std::string kind;                    // "pending" or "replay"
  std::optional<std::string> runs_on;  // replay: spec.nodeName of the input
  ComparedSide old_side;               // --compare's config
  ComparedSide new_side;               // --config's
  bool differs = false;                // the two nodes (or pending) are not the same
  /// diff is scheduler::CompareCycles over the two cycles (old as "old", new as "new") when
  /// `differs`; point, plugin and detail say why.
  scheduler::CycleDiff diff;
};

/// Comparison is `simulate --compare`'s answer, pending pods first, each kind in input order.
struct Comparison {
  std::string old_config;  // the files' names, for the output
  std::string new_config;
  std::vector<ComparedPod> pods;
  nlohmann::json report;  // with --html: the new config's UiReport, its "compare" added
};

/// Compare runs `objects` (and `generic`) under `old_config` and `new_config` with one seed:
/// the whole simulation for the pending pods, and a replay of every bound pod (see ComparedPod).
/// Each config gets the objects of `generic` whose kind it declares (or neither does, which is
/// refused as Simulate refuses it), so that one snapshot serves a config that reads more kinds.
/// With `html`, the sides keep their explanations' JSON and `report` is filled. Throws as
/// Simulate does.
Comparison Compare(const config::HostConfig& old_config, const config::HostConfig& new_config,
                   const std::vector<model::Object>& objects,
                   const std::vector<model::GenericObject>& generic,
                   const std::filesystem::path& plugin_dir, uint64_t seed, bool html);

/// FormatCompareTable renders a kubectl-like table, NAMESPACE NAME KIND RUNS-ON OLD NEW
/// DIFFERS-BY, every pod a row, then a count and one line per differing pod saying why.
std::string FormatCompareTable(const Comparison& comparison);
/// FormatCompareJson renders exactly one JSON object: {"old":{"config"},"new":{"config"},
/// "summary":{...},"pods":[{"namespace","name","kind","runsOn","old":{"node","message"},
/// "new":{...},"differs","diff":{"point","plugin","detail","sameFeasibility","sameBest",
/// "sameNode"}|null}]}.
std::string FormatCompareJson(const Comparison& comparison);

/// SimulateOptions are the command's flags.
struct SimulateOptions {
  std::string config_path;                  // "" = built-in defaults
  std::string compare_path;                 // --compare: the config to compare with ("": none)
  std::vector<std::string> manifest_paths;  // -f, in order
  std::string output = "table";             // "table" or "json"
  bool explain = false;                     // the explain document instead of placements
  uint64_t seed = 0;
  std::filesystem::path plugin_dir;  // builtin plugins (beside the binary)
  std::filesystem::path html;        // --html: also write the report page here ("" : no)
  std::filesystem::path ui_dir;      // the web UI's built pages the report is made of
  std::string pod;  // --pod with --explain: only this pending pod ("namespace/name", or "name")
  // --plugin-dir: the builtin directory it replaced, for the error of a plugin then not found
  // ("" when plugin_dir is the builtin one).
  std::filesystem::path replaced_plugin_dir;
};

/// PluginDirReplacedNote is what an error that names a plugin as not known gets appended when
/// --plugin-dir `given` replaced the builtin directory `builtin` (the builtin plugins were then
/// not loaded): how to add libraries instead. "" when `builtin` is empty or `error` names no
/// unknown plugin.
std::string PluginDirReplacedNote(const std::filesystem::path& given,
                                  const std::filesystem::path& builtin, std::string_view error);

/// WriteHtmlReport writes the web UI's pages from `ui_dir` as one self-contained HTML file at
/// `path`, showing `report` (api::UiReport's document; `title` is shown above it): the styles,
/// the script and the data are inlined, so the file opens from disk with no server and no
/// network. Throws std::runtime_error naming the file it could not read or write.
void WriteHtmlReport(const std::filesystem::path& ui_dir, const std::string& title,
                     nlohmann::json report, const std::filesystem::path& path);

/// RunSimulate is the command: prints the result to `out`, problems to `err`; returns the exit
/// code (0, or 1 for bad flags, config or manifests — then nothing is scheduled).
int RunSimulate(const SimulateOptions& options, std::ostream& out, std::ostream& err);

/// RunSimulateBatch is `simulate --explain -o json --batch`: many inputs through one process, so
/// that a caller with thousands of them (difftest) pays for the start, the config and the
/// plugin libraries once. Each line of `in` names one manifest file (options.manifest_paths
/// must be empty), which is explained as `simulate --explain -o json -f FILE` would explain it,
/// on a host of its own: fresh store, profiles and plugin instances (ProfileSet::Rebuild), so
/// nothing of one input reaches the next. Each line gets exactly one line on `out`, flushed:
/// the explain document on one line, or {"error":"..."} with what the single run would print
/// on `err` for an input it refuses; the batch goes on. Returns 0 when `in` ends, or 1 before
/// reading any of it for bad flags, a bad config or plugins that do not load (said on `err`).
int RunSimulateBatch(const SimulateOptions& options, std::istream& in, std::ostream& out,
                     std::ostream& err);

}  // namespace schedhost::cli
