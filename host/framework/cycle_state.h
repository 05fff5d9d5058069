// CycleState: per-cycle key/value storage shared by one profile's plugins.
//
// Keys are interned ids (plugins intern their key once at creation), so a read in Filter is a
// scan of a few entries rather than a string-map lookup. Values are plugin-owned blobs with
// destroy and clone callbacks from the plugin. Writes happen only in single-threaded phases
// (PreFilter, PreScore, Reserve, Permit); concurrent reads are safe (ABI contract, plugin.h).
#pragma once

#include <schedhost/plugin.h>

#include <algorithm>
#include <atomic>
#include <boost/container/small_vector.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "host/store/object_store.h"

namespace schedhost::framework {

struct PluginRef;

/// PluginNameSet is the few plugin names of a skip set. The names are views: they must outlive
/// the set, as the framework's plugin names (and string literals) do. A copy allocates nothing
/// for up to 8 names, and CycleState::Clone copies two of these once per node a preemption dry
/// run or a pass with nominated pods simulates.
class PluginNameSet {
 public:
  void insert(std::string_view name) {
    if (count(name) == 0) names_.push_back(name);
  }
  size_t count(std::string_view name) const {
    return std::find(names_.begin(), names_.end(), name) != names_.end() ? 1 : 0;
  }
  void clear() { names_.clear(); }
  bool empty() const { return names_.empty(); }
  size_t size() const { return names_.size(); }
  auto begin() const { return names_.begin(); }
  auto end() const { return names_.end(); }

 private:
  boost::container::small_vector<std::string_view, 8> names_;
};

/// CycleState holds plugin values and the host's per-cycle skip sets.
class CycleState {
 public:
  CycleState() = default;
  ~CycleState();
  CycleState(const CycleState&) = delete;
  CycleState& operator=(const CycleState&) = delete;

  /// Write stores `data` under `key`, destroying any previous value.
  void Write(schedhost_id key, void* data, schedhost_state_destroy_fn destroy,
             schedhost_state_clone_fn clone);
  /// Read returns the value under `key` or nullptr (also when the stored value is nullptr).
  bool Read(schedhost_id key, void** out) const;
  /// Delete destroys the value under `key`, if any.
  void Delete(schedhost_id key);
  /// Clone copies every value that has a clone callback (others are left out) and the skip sets.
  std::unique_ptr<CycleState> Clone() const;

  /// Plugins whose PreFilter returned Skip: their Filter does not run this cycle.
  PluginNameSet skip_filter_plugins;
  /// active_filters, once PreFilter has run (filters_resolved), are the profile's Filter plugins
  /// minus skip_filter_plugins, in order: Filter walks this list instead of looking every
  /// plugin up in the skip set for every node.
  std::vector<const PluginRef*> active_filters;
  bool filters_resolved = false;
  /// pre_filter_node_plugins names, sorted, the PreFilter plugins that narrowed the nodes this
  /// cycle (returned a node set): a node left out "didn't satisfy" them.
  std::vector<std::string> pre_filter_node_plugins;
  /// Plugins whose PreScore returned Skip: their Score does not run this cycle.
  PluginNameSet skip_score_plugins;
  /// Whether reasons from every Filter plugin are collected (diagnostics, explain).
  bool run_all_filters = false;
  /// Whether this cycle times each plugin call (sampled; see framework_metrics.h).
  bool record_plugin_metrics = false;
  /// How many plugin calls this cycle has timed (FrameworkMetrics::PluginStart's budget).
  mutable std::atomic<uint32_t> timed_plugin_calls{0};
  /// When the scheduling attempt began (scheduler_scheduling_attempt_duration_seconds).
  std::chrono::steady_clock::time_point attempt_start{};

  /// Objects returns the cycle's snapshot of the declared kinds' objects, taken from `source`
  /// at the first call (from any thread; Filter may be first) and the same for the rest of the
  /// cycle, clones included: every read in one cycle sees one state.
  const store::ObjectSnapshot* Objects(const store::ObjectStore& source) const;

  schedhost_cycle_state* abi() { return reinterpret_cast<schedhost_cycle_state*>(this); }
  const schedhost_cycle_state* abi() const {
    return reinterpret_cast<const schedhost_cycle_state*>(this);
  }
  static CycleState* From(schedhost_cycle_state* s) { return reinterpret_cast<CycleState*>(s); }
  static const CycleState* From(const schedhost_cycle_state* s) {
    return reinterpret_cast<const CycleState*>(s);
  }

 private:
  struct Entry {
    schedhost_id key;
    void* data;
    schedhost_state_destroy_fn destroy;
    schedhost_state_clone_fn clone;
  };
  std::vector<Entry> entries_;
  // The object snapshot Objects() took: objects_view_ is set once objects_ holds it.
  mutable std::mutex objects_mu_;
  mutable std::shared_ptr<const store::ObjectSnapshot> objects_;
  mutable std::atomic<const store::ObjectSnapshot*> objects_view_{nullptr};
};

}  // namespace schedhost::framework
