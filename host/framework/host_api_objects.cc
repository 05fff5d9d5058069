// The host table's entries for objects of declared kinds: object_get, object_list and
// object_kind_status (abi 1.5), object_write (abi 1.6), object_kind_revision (abi 1.9). Reads
// in a cycle go to the cycle's object snapshot (CycleState::Objects), so they take no lock after
// the first one of a cycle; reads outside one (a NULL state, abi 1.7) go to the snapshot this
// thread's OutOfCycleReads pinned.
#include <memory>
#include <utility>
#include <vector>

#include "host/framework/framework.h"
#include "host/framework/plugin_instance.h"
#include "host/model/interner.h"

namespace schedhost::framework {
namespace {

// OutOfCycle is this thread's OutOfCycleReads nesting and the snapshots its reads pinned, one
// per store (a process runs one store; tests may run several hosts).
struct OutOfCycle {
  int depth = 0;
  int latest_depth = 0;  // LatestReads nesting
  std::vector<std::pair<const store::ObjectStore*, std::shared_ptr<const store::ObjectSnapshot>>>
      pins;
};
thread_local OutOfCycle t_out_of_cycle;

// PinnedSnapshot returns the snapshot of `objects` this thread reads outside a cycle: inside an
// OutOfCycleReads the latest on the first read, then that one; inside a LatestReads the latest
// at every read (pinned beside the earlier ones unless it is the last one pinned); null when
// neither is open.
const store::ObjectSnapshot* PinnedSnapshot(const store::ObjectStore& objects) {
  OutOfCycle& t = t_out_of_cycle;
  if (t.depth > 0) {
    for (const auto& [store, pinned] : t.pins) {
      if (store == &objects) return pinned.get();
    }
    return t.pins.emplace_back(&objects, objects.Snapshot()).second.get();
  }
  if (t.latest_depth == 0) return nullptr;
  std::shared_ptr<const store::ObjectSnapshot> latest = objects.Snapshot();
  for (auto it = t.pins.rbegin(); it != t.pins.rend(); ++it) {
    if (it->first != &objects) continue;
    if (it->second == latest) return latest.get();
    break;
  }
  return t.pins.emplace_back(&objects, std::move(latest)).second.get();
}

// Resolved is a checked request: the kind's table key and scope, and the snapshot's table.
struct Resolved {
  int32_t rc = SCHEDHOST_OK;
  const store::KindInfo* info = nullptr;
  const store::KindObjects* table = nullptr;
};

Resolved Resolve(schedhost_host* host, const schedhost_cycle_state* state, uint32_t kind) {
  Resolved r;
  if (host == nullptr) {
    r.rc = SCHEDHOST_E_INVALID_ARGUMENT;
    return r;
  }
  const PluginInstance* plugin = host->plugin;
  if (plugin == nullptr || kind >= plugin->kinds.size()) {
    r.rc = SCHEDHOST_E_OUT_OF_RANGE;
    return r;
  }
  r.info = &plugin->kinds[kind];
  const store::ObjectStore* objects = host->framework ? host->framework->objects() : nullptr;
  if (objects == nullptr) {
    r.rc = SCHEDHOST_E_NOT_AVAILABLE;
    return r;
  }
  const store::ObjectSnapshot* snapshot =
      state != nullptr ? CycleState::From(state)->Objects(*objects) : PinnedSnapshot(*objects);
  if (snapshot == nullptr) {  // a NULL state outside PreEnqueue, QueueSort and hints
    r.rc = SCHEDHOST_E_INVALID_ARGUMENT;
    return r;
  }
  r.table = snapshot->Find(plugin->kind_keys[kind]);
  if (r.table == nullptr) r.rc = SCHEDHOST_E_NOT_AVAILABLE;
  return r;
}

// NamespaceOf is where a request looks: "" for cluster-scoped kinds, "default" for an empty one.
std::string_view NamespaceOf(const store::KindInfo& info, schedhost_str ns) {
  if (!info.namespaced) return {};
  return ns.len == 0 ? std::string_view("default") : View(ns);
}

// Unavailable tells a miss in a kind the host cannot mirror from a plain miss.
bool Unavailable(schedhost_host* host, uint32_t kind) {
  const store::ObjectStore* objects = host->framework->objects();
  return !objects->Available(host->plugin->kind_keys[kind], nullptr);
}

int32_t ObjectGet(schedhost_host* host, const schedhost_cycle_state* state, uint32_t kind,
                  schedhost_str namespace_name, schedhost_str name,
                  const schedhost_config** out) noexcept {
  if (out == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  *out = nullptr;
  try {
    const Resolved r = Resolve(host, state, kind);
    if (r.rc != SCHEDHOST_OK) return r.rc;
    const store::StoredObject* object = r.table->Get(NamespaceOf(*r.info, namespace_name), View(name));
    if (object == nullptr) {
      return Unavailable(host, kind) ? SCHEDHOST_E_NOT_AVAILABLE : SCHEDHOST_E_NOT_FOUND;
    }
    *out = config::AsAbi(object->tree.get());
    return SCHEDHOST_OK;
  } catch (...) {
    return SCHEDHOST_E_INTERNAL;
  }
}

int32_t ObjectList(schedhost_host* host, const schedhost_cycle_state* state, uint32_t kind,
                   schedhost_str namespace_name, schedhost_object_fn fn, void* user) noexcept {
  if (fn == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  try {
    const Resolved r = Resolve(host, state, kind);
    if (r.rc != SCHEDHOST_OK) return r.rc;
    if (r.table->items().empty() && Unavailable(host, kind)) return SCHEDHOST_E_NOT_AVAILABLE;
    const auto [first, last] =
        r.table->InNamespace(r.info->namespaced ? View(namespace_name) : std::string_view());
    for (auto it = first; it != last; ++it) {
      if (fn(user, config::AsAbi((*it)->tree.get())) != 0) break;
    }
    return SCHEDHOST_OK;
  } catch (...) {
    return SCHEDHOST_E_INTERNAL;
  }
}

int32_t ObjectKindRevision(schedhost_host* host, const schedhost_cycle_state* state,
                           uint32_t kind, uint64_t* out) noexcept {
  if (out == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  *out = 0;
  try {
    const Resolved r = Resolve(host, state, kind);
    if (r.rc != SCHEDHOST_OK) return r.rc;
    *out = r.table->revision();
    return SCHEDHOST_OK;
  } catch (...) {
    return SCHEDHOST_E_INTERNAL;
  }
}

int32_t ObjectKindStatus(schedhost_host* host, uint32_t kind, schedhost_str* message) noexcept {
  if (message != nullptr) *message = schedhost_str{"", 0};
  try {
    if (host == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
    if (host->plugin == nullptr || kind >= host->plugin->kinds.size()) {
      return SCHEDHOST_E_OUT_OF_RANGE;
    }
    const store::ObjectStore* objects = host->framework ? host->framework->objects() : nullptr;
    std::string why;
    if (objects == nullptr) {
      why = "this host keeps no cluster state for " + host->plugin->kind_keys[kind];
    } else if (objects->Available(host->plugin->kind_keys[kind], &why)) {
      return SCHEDHOST_OK;
    }
    if (message != nullptr) {
      // Interned: the text lives as long as the process, as the ABI promises.
      const std::string_view text =
          model::Interner::Global().Str(model::Interner::Global().Intern(why));
      *message = schedhost_str{text.data(), text.size()};
    }
    return SCHEDHOST_E_NOT_AVAILABLE;
  } catch (...) {
    return SCHEDHOST_E_INTERNAL;
  }
}

// The message of this thread's last object_write: host-owned until its next call.
thread_local std::string t_write_message;

int32_t WriteResult(int32_t rc, std::string message, schedhost_str* out) {
  t_write_message = std::move(message);
  if (out != nullptr) *out = schedhost_str{t_write_message.data(), t_write_message.size()};
  return rc;
}

int32_t ObjectWrite(schedhost_host* host, uint32_t kind, int32_t op, schedhost_str namespace_name,
                    schedhost_str name, schedhost_str body, schedhost_str* message) noexcept {
  try {
    if (host == nullptr || host->framework == nullptr) {
      return WriteResult(SCHEDHOST_E_INVALID_ARGUMENT, "object_write: no host", message);
    }
    const PluginInstance* plugin = host->plugin;
    if (plugin == nullptr || kind >= plugin->kinds.size()) {
      return WriteResult(SCHEDHOST_E_OUT_OF_RANGE,
                         "object_write: the plugin declares no kind " + std::to_string(kind),
                         message);
    }
    if (!store::ValidWriteOp(op)) {
      return WriteResult(SCHEDHOST_E_INVALID_ARGUMENT,
                         "object_write: unknown op " + std::to_string(op), message);
    }
    const Framework::ObjectWriteFn& writer = host->framework->object_writer();
    if (!writer) {
      return WriteResult(SCHEDHOST_E_NOT_AVAILABLE, "object_write: this host has no cluster to "
                         "write to", message);
    }
    auto view = [](schedhost_str s) {
      return s.data == nullptr ? std::string_view() : std::string_view(s.data, s.len);
    };
    writer(plugin->kinds[kind], static_cast<store::ObjectWriteOp>(op), view(namespace_name),
           view(name), view(body));
    return WriteResult(SCHEDHOST_OK, "", message);
  } catch (const store::StoreError& e) {
    int32_t rc = SCHEDHOST_E_UNAVAILABLE;
    switch (e.code()) {
      case store::ErrorCode::kNotFound: rc = SCHEDHOST_E_NOT_FOUND; break;
      case store::ErrorCode::kAlreadyExists: rc = SCHEDHOST_E_ALREADY_EXISTS; break;
      case store::ErrorCode::kConflict:
      case store::ErrorCode::kSuperseded: rc = SCHEDHOST_E_CONFLICT; break;
      case store::ErrorCode::kInvalid:
      case store::ErrorCode::kLimitExceeded: rc = SCHEDHOST_E_INVALID_ARGUMENT; break;
      case store::ErrorCode::kForbidden: rc = SCHEDHOST_E_FORBIDDEN; break;
      case store::ErrorCode::kUnavailable: rc = SCHEDHOST_E_UNAVAILABLE; break;
    }
    return WriteResult(rc, e.what(), message);
  } catch (const std::exception& e) {
    return WriteResult(SCHEDHOST_E_INTERNAL, std::string("object_write: ") + e.what(), message);
  } catch (...) {
    return WriteResult(SCHEDHOST_E_INTERNAL, "object_write: an unknown failure", message);
  }
}

}  // namespace

OutOfCycleReads::OutOfCycleReads() noexcept { ++t_out_of_cycle.depth; }

OutOfCycleReads::~OutOfCycleReads() {
  OutOfCycle& t = t_out_of_cycle;
  if (--t.depth == 0 && t.latest_depth == 0) t.pins.clear();
}

LatestReads::LatestReads() noexcept { ++t_out_of_cycle.latest_depth; }

LatestReads::~LatestReads() {
  OutOfCycle& t = t_out_of_cycle;
  if (--t.latest_depth == 0 && t.depth == 0) t.pins.clear();
}

void FillObjectEntries(schedhost_host_api* api) {
  api->object_get = &ObjectGet;
  api->object_list = &ObjectList;
  api->object_kind_status = &ObjectKindStatus;
  api->object_write = &ObjectWrite;
  api->object_kind_revision = &ObjectKindRevision;
}

}  // namespace schedhost::framework
