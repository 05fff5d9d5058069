// PluginInstance and the host-side definitions of the ABI's opaque handles.
//
// Each plugin instance gets its own schedhost_host handle, so host functions know which
// framework (snapshot, profile) and which plugin (log tags) a call comes from.
#pragma once

#include <schedhost/plugin.h>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "host/config/config_tree.h"
#include "host/framework/status.h"
#include "host/loader/loader.h"
#include "host/store/object_store.h"

namespace schedhost::framework {
class Framework;
struct PluginInstance;

/// View sees an ABI string as a std::string_view, without copying; an empty one may carry a null
/// data pointer.
inline std::string_view View(schedhost_str s) {
  return s.len == 0 ? std::string_view{} : std::string_view{s.data, s.len};
}
}  // namespace schedhost::framework

/// schedhost_host is the framework handle one plugin instance calls the host with.
struct schedhost_host {
  schedhost::framework::Framework* framework = nullptr;
  schedhost::framework::PluginInstance* plugin = nullptr;
};

namespace schedhost::framework {

/// PluginInstance owns one created plugin; destroying it calls the plugin's destroy and then
/// releases its library reference (ABI rule 11: the library outlives everything made from it).
struct PluginInstance {
  std::string name;
  Text name_text;  // `name`, interned: what the statuses of this plugin's answers carry
  const schedhost_plugin_descriptor* desc = nullptr;
  std::shared_ptr<const loader::Library> library;  // null for in-process plugins
  std::shared_ptr<const config::ConfigNode> args;
  void* instance = nullptr;
  schedhost_host handle;
  // The batched entries (abi 1.2), read once through struct_size; null when the descriptor
  // predates them, does not set them, or the profile turned batching off.
  decltype(schedhost_plugin_descriptor::filter_batch) filter_batch = nullptr;
  decltype(schedhost_plugin_descriptor::score_batch) score_batch = nullptr;
  // The API kinds the plugin declares (abi 1.5), by the index object_get names them with, and
  // each one's table key (KindInfo::Key) for the snapshot lookup.
  std::vector<store::KindInfo> kinds;
  std::vector<std::string> kind_keys;
  // The parts of a pod the plugin evaluates (abi 1.7: "spec.volumes.persistentVolumeClaim").
  std::vector<std::string> evaluates;

  PluginInstance() = default;
  PluginInstance(const PluginInstance&) = delete;
  PluginInstance& operator=(const PluginInstance&) = delete;
  ~PluginInstance() {
    if (instance != nullptr && desc->destroy != nullptr) desc->destroy(instance);
  }
};

/// PreFilterResultSink is what a schedhost_pre_filter_result* points to.
struct PreFilterResultSink {
  bool set = false;
  std::vector<std::string> nodes;
};

/// PostFilterResultSink is what a schedhost_post_filter_result* points to.
struct PostFilterResultSink {
  std::string nominated_node;
};

/// NodeStatusMapView is what a schedhost_node_status_map* points to.
struct NodeStatusMapView {
  const NodeStatuses* statuses = nullptr;
  /// Message returns status `index`'s joined reasons. They are joined for every entry at the
  /// first call (a thread-safe once): most PostFilter plugins never ask, and joining 5,000 of
  /// them was a measurable share of a failed cycle.
  const std::string& Message(size_t index) const;

 private:
  mutable std::once_flag joined_;
  mutable std::vector<std::string> messages_;  // index-aligned with *statuses
};

/// HostApi returns the host function table given to every plugin (static, never freed).
const schedhost_host_api* HostApi();

/// FillObjectEntries sets the abi 1.5 entries for objects of declared kinds in `api`
/// (host_api_objects.cc).
void FillObjectEntries(schedhost_host_api* api);

}  // namespace schedhost::framework
