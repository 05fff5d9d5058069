// FakePlugin: scriptable in-process plugins for framework tests, registered through the same
// C ABI descriptors a library exports (no dlopen). Each extension point is a std::function;
// points left empty are NULL in the descriptor, exactly like a plugin that does not implement
// them.
//
//   FakePlugin& f = fakes.Add("Alpha");
//   f.filter = [](const schedhost_pod_view*, const schedhost_node_info_view* ni, Reasons& r) {
//     r.push_back("nope"); return SCHEDHOST_UNSCHEDULABLE; };
//   harness.RegisterInProcess(f.descriptor());
#pragma once

#include <schedhost/plugin.h>

#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace schedhost::framework::testing {

using Reasons = std::vector<std::string>;

/// FakePlugin is one scripted plugin; its descriptor stays valid while the FakePlugin lives.
struct FakePlugin {
  std::string name;
  std::function<int32_t(Reasons&)> create;  // default: Success
  std::function<int32_t(const schedhost_pod_view*, Reasons&)> pre_enqueue;
  std::function<bool(const schedhost_queued_pod*, const schedhost_queued_pod*)> queue_sort_less;
  std::function<int32_t(schedhost_cycle_state*, const schedhost_pod_view*, std::vector<std::string>* nodes,
                        bool* set_nodes, Reasons&)>
      pre_filter;
  std::function<int32_t(const schedhost_pod_view* to_add, Reasons&)> add_pod;
  std::function<int32_t(const schedhost_cycle_state*, const schedhost_pod_view*, const schedhost_node_info_view*,
                        Reasons&)>
      filter;
  std::function<int32_t(const schedhost_node_status_map*, std::string* nominated, Reasons&)> post_filter;
  std::function<int32_t(schedhost_cycle_state*, size_t num_nodes, Reasons&)> pre_score;
  std::function<int32_t(const schedhost_node_info_view*, int64_t*, Reasons&)> score;
  std::function<int32_t(schedhost_node_score*, size_t, Reasons&)> normalize_score;
  /// The batched entries (abi 1.2); set them with filter / score, which the host still calls.
  std::function<int32_t(const schedhost_node_info_view* const*, size_t, size_t* passed, Reasons&)>
      filter_batch;
  std::function<int32_t(const schedhost_node_info_view* const*, size_t, int64_t*, Reasons&)>
      score_batch;
  std::function<int32_t(std::string_view node, Reasons&)> reserve;
  std::function<void(std::string_view node)> unreserve;
  std::function<int32_t(std::string_view node, int64_t* timeout_ns, Reasons&)> permit;
  std::function<int32_t(std::string_view node, Reasons&)> pre_bind;
  std::function<int32_t(std::string_view node, Reasons&)> bind;
  std::function<void(std::string_view node)> post_bind;
  /// The parts of a pod the plugin evaluates (abi 1.7), e.g. "spec.volumes.persistentVolumeClaim".
  std::vector<std::string> evaluates;

  int destroyed = 0;

  /// descriptor builds the C descriptor from the points set so far (call after setting them).
  const schedhost_plugin_descriptor* descriptor();

 private:
  schedhost_plugin_descriptor desc_{};
  std::vector<schedhost_str> evaluates_strs_;
};

/// FakePlugins owns fakes with stable addresses.
class FakePlugins {
 public:
  FakePlugin& Add(std::string name) {
    fakes_.emplace_back();
    fakes_.back().name = std::move(name);
    return fakes_.back();
  }

 private:
  std::deque<FakePlugin> fakes_;
};

}  // namespace schedhost::framework::testing
