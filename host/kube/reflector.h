// Reflector: one kind of the API server mirrored into the store, with client-go's reflector
// semantics. It lists (in pages, a consistent read), applies the difference to the store
// (deleting what vanished), then watches from the list's resourceVersion with bookmarks. A
// watch that ends (server timeout, closed stream) is resumed from the last resourceVersion
// seen, without a list; `410 Gone`/`Expired` and any other error lead to a fresh list after a
// backoff (0.8 s doubling to 30 s, jittered). A watch silent for Spec::idle_timeout (2 min; the
// server sends a bookmark every minute) is taken for dead: a fresh list follows. Objects that
// cannot be decoded are logged, counted and skipped; they never stop the watch.
//
//   Reflector pods(client, store, Reflector::Pods());
//   pods.Start();  ... pods.synced() ...  client.Cancel(); pods.Join();
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <unordered_map>

#include "host/kube/api_client.h"
#include "host/model/decode_api.h"
#include "host/store/object_store.h"
#include "host/store/store.h"

namespace schedhost::kube {

// ReflectorStats are a reflector's counters, for logs, metrics and tests.
struct ReflectorStats {
  uint64_t lists = 0;            // lists completed (the first one included)
  uint64_t watches = 0;          // watch requests started
  uint64_t events = 0;           // watch events applied
  uint64_t expired = 0;          // watches answered 410 (history compacted): relisted
  uint64_t errors = 0;           // lists or watches that failed
  uint64_t decode_failures = 0;  // objects skipped because they could not be decoded
  std::string last_error;
};

class Reflector {
 public:
  // Spec says what to mirror.
  struct Spec {
    std::string name;            // for logs: "pods"
    std::string path;            // collection path: "/api/v1/pods"
    std::string field_selector;  // "" for none
    model::ApiKind kind = model::ApiKind::kPod;
    store::Kind store_kind = store::Kind::kPod;
    // keep, when set, says whether an object is mirrored at all; an object that stops being
    // kept is removed from the store as if deleted.
    std::function<bool(const nlohmann::json&)> keep;
    // optional: a kind the scheduler can do without. When listing it is forbidden (kube-
    // scheduler's ClusterRole does not cover PriorityClasses: admission resolved every pod's
    // priority already) the reflector counts as synced with nothing and tries again later.
    bool optional = false;
    // idle_timeout ends a watch that has delivered nothing, not even a bookmark, for this long:
    // the API server sends a bookmark about every minute, so a silent stream is a dead one (a
    // connection whose peer vanished without closing it), and the reflector lists again after
    // its backoff, as after any failed watch.
    std::chrono::milliseconds idle_timeout{std::chrono::minutes(2)};
    // declared is a kind a plugin declares, mirrored into the store's ObjectStore as value
    // trees instead of a typed kind. Such a kind may be missing: when the API server does not
    // serve it (404: its CRD is not installed, or was deleted) or the credentials may not read
    // it (403), the reflector empties its table, marks it unavailable with the reason (plugins
    // read it through object_kind_status), counts as synced, and lists again after a backoff
    // (1 s doubling to 10 s) until it can.
    std::optional<store::KindInfo> declared;
    // api_version and object_kind name the kind ("v1", "Pod"): when the client asks for
    // protobuf and the kind has a message (proto::Supports), lists and watches use it.
    std::string api_version;
    std::string object_kind;
  };
  // The specs for the kinds the scheduler reads.
  static Spec Pods();
  static Spec Nodes();
  static Spec PodDisruptionBudgets();
  static Spec PriorityClasses();
  static Spec Namespaces();
  // Declared is the spec of a kind a plugin declares.
  static Spec Declared(const store::KindInfo& kind);

  Reflector(ApiClient& client, store::Store& store, Spec spec);
  ~Reflector();
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  // Start runs the list-and-watch loop on a thread of its own.
  void Start();
  // Stop asks the loop to end; it does once the client's requests end (ApiClient::Cancel).
  void Stop();
  // Join waits for the loop's thread.
  void Join();

  // synced is true once the first list has been applied.
  bool synced() const { return synced_.load(); }
  // WaitForSync waits for the first list, up to `timeout`; false on timeout or Stop.
  bool WaitForSync(std::chrono::nanoseconds timeout);
  // unavailable returns why a declared kind cannot be mirrored now, or "".
  std::string unavailable() const;
  // fatal returns the error that makes waiting pointless (401, 403 on list), or "".
  std::string fatal() const;
  const Spec& spec() const { return spec_; }
  ReflectorStats stats() const;

 private:
  struct Entry {
    std::string uid;
    std::string resource_version;
  };

  void Run();
  // List lists every page, applies the difference, and returns the list's resourceVersion.
  // Accept is the Accept header of this kind's lists and watches.
  std::string_view Accept() const;
  std::string List();
  // Watch watches from `rv` until the stream ends (returns the last resourceVersion seen) or
  // the server says the history is gone (throws Expired).
  std::string Watch(std::string rv);
  // Apply mirrors one object (ADDED or MODIFIED); Remove deletes the one under `key`.
  void Apply(const nlohmann::json& object);
  void Remove(const std::string& key);
  std::string KeyOf(const nlohmann::json& object) const;
  void Fail(const std::string& error, bool fatal);
  // Unavailable empties a declared kind's table and records why it cannot be mirrored.
  void Unavailable(const ApiError& error);
  bool Namespaced() const;
  void MarkSynced();
  bool Sleep(std::chrono::milliseconds d);

  ApiClient& client_;
  store::Store& store_;
  const Spec spec_;
  std::unordered_map<std::string, Entry> index_;  // loop thread only
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> synced_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  ReflectorStats stats_;
  std::string fatal_;
  std::string unavailable_;  // guarded by mu_
  const std::string declared_key_;  // spec_.declared's key ("" for a typed kind)
  // checks_storage_: the declared kind's scheduling fields are checked as in embedded mode
  // (model::IsCheckedStorageKind).
  const bool checks_storage_;
};

}  // namespace schedhost::kube
