// Harness: a real framework over a real snapshot, for tests of plugins and of the framework.
//
// It loads the builtin plugin libraries from $SCHEDHOST_PLUGIN_DIR through the real loader (or
// takes in-process descriptors through the same C ABI), builds the profile from TOML text through
// the real config code, and builds the snapshot from Kubernetes manifests.
//
//   Harness h;
//   h.OnlyPlugins({"NodeResourcesFit"});
//   h.AddObjects(R"(apiVersion: v1
//   kind: Node ...)");
//   auto results = h.RunFilter(*h.MakePod("apiVersion: v1\nkind: Pod ..."));
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/cache/snapshot.h"
#include "host/framework/framework.h"
#include "host/store/object_store.h"
#include "host/loader/loader.h"
#include "host/model/decode.h"
#include "host/model/node.h"
#include "host/model/pod.h"

namespace schedhost::framework::testing {

/// PluginDir returns $SCHEDHOST_PLUGIN_DIR (the builtin plugins of the build tree).
std::string PluginDir();

/// Harness owns a registry, a profile's framework and a snapshot.
/// ScoredNode is one node's row of a ScoreTable, for assertions: the weighted total and, per
/// Score plugin (ScorePluginNames order), the raw and the weighted score.
struct ScoredNode {
  const schedhost_node_info_view* node_info = nullptr;
  int64_t total = 0;
  std::vector<int64_t> raw;
  std::vector<int64_t> weighted;
};

class Harness {
 public:
  /// Harness loads every builtin plugin library when `load_builtin` is true.
  explicit Harness(bool load_builtin = true);
  ~Harness();

  loader::PluginRegistry& registry() { return *registry_; }
  /// RegisterInProcess adds a plugin by descriptor (same ABI path, no dlopen).
  void RegisterInProcess(const schedhost_plugin_descriptor* descriptor);

  /// SetConfig uses the first profile of a whole schedhost TOML config.
  void SetConfig(std::string_view toml);
  /// OnlyPlugins uses a profile whose multi_point holds PrioritySort, DefaultBinder and
  /// `plugins` (all defaults disabled); `extra_toml` is appended (e.g. plugin_config tables).
  void OnlyPlugins(const std::vector<std::string>& plugins, std::string_view extra_toml = "");

  /// AddObjects decodes manifests and adds their nodes, bound pods and Namespaces to the
  /// cluster.
  void AddObjects(std::string_view yaml);
  /// AddObjects adds decoded objects the same way.
  void AddObjects(const std::vector<model::Object>& objects);
  /// AddGeneric adds objects of kinds the profile's plugins declare (applied once the profile
  /// is built; an object of a kind no plugin declares fails it, naming the kind).
  void AddGeneric(const std::vector<model::GenericObject>& objects);
  /// objects is the store the plugins' object_get and object_list read.
  store::ObjectStore& objects() { return objects_; }
  /// MakePod decodes one pod manifest.
  std::shared_ptr<const model::Pod> MakePod(std::string_view yaml) const;

  /// HideSummaries(true): RunFilter and RunScore(Detailed) hand the plugins copies of the node
  /// views whose summary (abi 1.3) is left unfilled, as an older host's or a hand-made view
  /// would be, so the plugins read the views and their arrays instead. Both ways must agree.
  void HideSummaries(bool hide) { hide_summaries_ = hide; }

  /// framework builds (once per config) and returns the profile's framework.
  Framework& framework();
  /// Plugin returns the profile's instance of plugin `name` among those of `point` (a plugin of
  /// the profile is at every point it implements); throws when the profile has no such plugin.
  const PluginInstance& Plugin(std::string_view name,
                               config::Point point = config::Point::kFilter);
  /// snapshot builds (once per cluster change) and returns the snapshot.
  const cache::Snapshot& snapshot();

  struct NodeResult {
    std::string node;
    Status status;
  };
  /// RunFilter runs PreFilter, then Filter on every node (a PreFilter failure or a node left
  /// out by the PreFilter result is reported for that node). Snapshot order.
  std::vector<NodeResult> RunFilter(const model::Pod& pod, bool run_all_filters = false);
  /// RunScore runs PreScore and Score on the nodes that pass RunFilter; returns node -> total.
  std::vector<std::pair<std::string, int64_t>> RunScore(const model::Pod& pod);
  /// RunScoreDetailed is RunScore returning per-plugin raw and weighted scores.
  /// `ranges` as RunScorePlugins' (indices into the feasible nodes, in snapshot order).
  Status RunScoreDetailed(const model::Pod& pod, std::vector<ScoredNode>& out,
                          std::span<const Parallelizer::Range> ranges = {});
  /// Schedule runs one scheduling cycle (no queue, no binding cycle): the best node, or ""
  /// with `failure` set to upstream's message.
  std::string Schedule(const model::Pod& pod, std::string* failure = nullptr);

  /// bindings records what the profile's Bind plugins bound ("namespace/name -> node").
  const std::vector<std::string>& bindings() const { return bindings_; }

 private:
  std::unique_ptr<loader::PluginRegistry> registry_;
  std::string config_toml_;
  std::unique_ptr<Framework> framework_;
  store::ObjectStore objects_;
  std::vector<model::GenericObject> generic_;  // added before the profile was built
  std::vector<std::shared_ptr<const model::Node>> nodes_;
  std::vector<std::shared_ptr<const model::Pod>> pods_;
  std::vector<std::shared_ptr<const model::Namespace>> namespaces_;
  std::unique_ptr<cache::Snapshot> snapshot_;
  std::vector<std::string> bindings_;
  bool hide_summaries_ = false;
  // The copies HideSummaries hands out, one per snapshot node (made with the snapshot).
  std::vector<schedhost_node_info_view> bare_views_;
  // View is the snapshot's view of node i, or its copy without a summary.
  const schedhost_node_info_view* View(size_t i);
};

/// Registrations returns the events `plugin` registers (its events_to_register); throws when
/// the call fails.
std::span<const schedhost_event_registration> Registrations(const PluginInstance& plugin);

}  // namespace schedhost::framework::testing
