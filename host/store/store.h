// Store: the embedded cluster state the host schedules against — Nodes, Pods,
// PodDisruptionBudgets, PriorityClasses and Namespaces keyed by namespace/name, every version
// stamped with one store-wide, strictly increasing resource version, plus a bounded event log and
// watches. Writes admit objects as the API server would (defaults, validation, pod priority from
// its PriorityClass); refusals throw StoreError and change nothing. Thread-safe; watch callbacks
// run outside the store's lock, one at a time, in resource-version order.
//
//   store::Store store;
//   auto pod = store.Create(pod_data);                      // ADDED, rv 3
//   store.Bind("default", "web", pod->uid(), pod->resource_version(), "n1");
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "host/model/decode.h"
#include "host/store/event.h"
#include "host/store/object_store.h"
#include "host/store/store_error.h"

namespace schedhost::store {

// Default for Limits::max_objects_per_kind.
inline constexpr size_t kDefaultMaxObjectsPerKind = 1'000'000;
// Default for Limits::event_log_length.
inline constexpr size_t kDefaultEventLogLength = 10'000;

// Preconditions restrict a Delete to the version the caller read; empty / 0 fields are not
// checked.
struct Preconditions {
  std::string uid;
  uint64_t resource_version = 0;
};

class Store {
 public:
  // Limits size the store; exceeding max_objects_per_kind is a kLimitExceeded error.
  struct Limits {
    size_t max_objects_per_kind = kDefaultMaxObjectsPerKind;
    // Events kept for replay; a watch from an older version gets a resync instead.
    size_t event_log_length = kDefaultEventLogLength;
    // Create the built-in system-node-critical and system-cluster-critical PriorityClasses, as
    // the API server does at start-up (they take resource versions 1 and 2).
    bool system_priority_classes = true;
  };

  // Store starts empty apart from the built-in PriorityClasses (see Limits).
  Store();
  // Store starts with the given limits; throws StoreError(kInvalid) when a limit is 0.
  explicit Store(Limits limits);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Create stores a new object and returns it as stored (defaults applied, uid, resource
  // version and creation time set); kAlreadyExists when the key is taken, kInvalid when the
  // object fails validation or admission. A pod's priority is resolved from its PriorityClass.
  std::shared_ptr<const model::Pod> Create(model::PodData data);
  std::shared_ptr<const model::Node> Create(model::NodeData data);
  std::shared_ptr<const model::PodDisruptionBudget> Create(model::PodDisruptionBudgetData data);
  std::shared_ptr<const model::PriorityClass> Create(model::PriorityClassData data);
  std::shared_ptr<const model::Namespace> Create(model::NamespaceData data);
  // CreateObject stores a copy of a decoded object's data (see the typed Create).
  model::Object CreateObject(const model::Object& object);

  // Update replaces an existing object; data.metadata.resource_version is the version the
  // caller read (0: unconditional) and a different current version is kConflict. Fields the
  // API server treats as immutable (uid, pod nodeName and priority, PriorityClass value) keep
  // their stored values when left empty and are kInvalid when changed; kNotFound when absent.
  std::shared_ptr<const model::Pod> Update(model::PodData data);
  std::shared_ptr<const model::Node> Update(model::NodeData data);
  std::shared_ptr<const model::PodDisruptionBudget> Update(model::PodDisruptionBudgetData data);
  std::shared_ptr<const model::PriorityClass> Update(model::PriorityClassData data);
  std::shared_ptr<const model::Namespace> Update(model::NamespaceData data);
  // UpdateObject updates from a copy of a decoded object's data (see the typed Update).
  model::Object UpdateObject(const model::Object& object);

  // Delete removes the object of type T and returns its last state; kNotFound when absent,
  // kConflict when a precondition does not hold. Cluster-scoped kinds ignore the namespace.
  template <class T>
  std::shared_ptr<const T> Delete(std::string_view namespace_name, std::string_view name,
                                  const Preconditions& preconditions = {});
  // DeleteObject removes the object of `kind` (see Delete).
  model::Object DeleteObject(Kind kind, std::string_view namespace_name, std::string_view name,
                             const Preconditions& preconditions = {});

  // Get returns the stored object of type T, or nullptr; "" namespace reads as "default",
  // cluster-scoped kinds ignore the namespace.
  template <class T>
  std::shared_ptr<const T> Get(std::string_view namespace_name, std::string_view name) const;
  // List returns the objects of type T accepted by `filter` (all when empty), sorted by key.
  template <class T>
  std::vector<std::shared_ptr<const T>> List(
      const std::function<bool(const T&)>& filter = nullptr) const;
  // Count returns how many objects of `kind` are stored.
  size_t Count(Kind kind) const;

  // Bind sets spec.nodeName of an unbound pod and clears status.nominatedNodeName: kNotFound
  // when the pod is gone, kConflict when it is already bound or its uid / resource version
  // differ from the ones given (empty uid / 0 version: not checked), kInvalid for an empty node.
  std::shared_ptr<const model::Pod> Bind(std::string_view namespace_name, std::string_view name,
                                         std::string_view uid, uint64_t expected_resource_version,
                                         std::string_view node_name);
  // SetNominatedNodeName sets (or with "" clears) status.nominatedNodeName; kNotFound when the
  // pod is gone, kConflict when its uid differs (empty uid: not checked). No event and no new
  // version when the value is unchanged.
  std::shared_ptr<const model::Pod> SetNominatedNodeName(std::string_view namespace_name,
                                                         std::string_view name,
                                                         std::string_view uid,
                                                         std::string_view node_name);

  // Mirror writes (Kubernetes mode): the API server is the source of truth and has admitted the
  // object already, so neither defaults beyond the decoder's, validation nor admission run here.
  // MirrorApply stores `data` under its key as given (uid included), ADDED when the key is new
  // and MODIFIED when it replaces an object with the same uid; an object with another uid (deleted
  // and re-created between two looks) is reported as DELETED, then ADDED. The stored version is
  // the store's own. kInvalid when the uid is empty, kLimitExceeded as Create.
  std::shared_ptr<const model::Pod> MirrorApply(model::PodData data);
  std::shared_ptr<const model::Node> MirrorApply(model::NodeData data);
  std::shared_ptr<const model::PodDisruptionBudget> MirrorApply(
      model::PodDisruptionBudgetData data);
  std::shared_ptr<const model::PriorityClass> MirrorApply(model::PriorityClassData data);
  std::shared_ptr<const model::Namespace> MirrorApply(model::NamespaceData data);
  // MirrorDelete removes the object of `kind` when it is there (DELETED); false when it was not.
  bool MirrorDelete(Kind kind, std::string_view namespace_name, std::string_view name);

  // Watch delivers every event with a resource version above `from_rv` and then live events,
  // in order, to `fn`, and returns an id for Unwatch. When the log no longer holds the events
  // after `from_rv`, fn gets a resync (ADDED with resync set for every object) instead. The
  // backlog is delivered before Watch returns; kInvalid when from_rv is in the future. Every
  // write returns once its event reached all watchers (a write made inside a callback: right
  // after that callback), so never write while holding a lock a callback takes.
  uint64_t Watch(uint64_t from_rv, std::function<void(const Event&)> fn);
  // Unwatch stops a watch; once it returns (outside a callback) fn is not running or called
  // again. Returns false for an unknown id.
  bool Unwatch(uint64_t id);

  // resource_version returns the newest resource version handed out (0 for a new store).
  uint64_t resource_version() const;
  // oldest_replayable_rv returns the lowest from_rv Watch can replay without a resync.
  uint64_t oldest_replayable_rv() const;
  // failed_callbacks counts watch callbacks that threw; the exception was dropped.
  uint64_t failed_callbacks() const { return failed_callbacks_.load(); }
  // limits returns the store's limits.
  const Limits& limits() const { return limits_; }
  // objects returns the objects of the API kinds plugins declare, kept beside the typed kinds.
  ObjectStore& objects() { return objects_; }
  const ObjectStore& objects() const { return objects_; }

 private:
  struct Watcher;
  // TableKey is where an object sits in its table: its namespace ("default" when empty; "" for
  // cluster-scoped kinds, as ObjectKey reads them) and its name.
  struct TableKey {
    std::string_view namespace_name;
    std::string_view name;
    friend auto operator<=>(const TableKey&, const TableKey&) = default;
  };
  // A table is a set of its objects ordered by their own namespace and name: no copy of the key
  // beside each object (a pod's key would cost a map node's key string and its heap block). An
  // object is replaced only by one with the same key (Replace).
  template <class T>
  struct Table {
    struct Less {
      using is_transparent = void;
      static TableKey KeyOf(const TableKey& key) { return key; }
      static TableKey KeyOf(const std::shared_ptr<const T>& object);  // store_internal.h
      template <class A, class B>
      bool operator()(const A& a, const B& b) const {
        return KeyOf(a) < KeyOf(b);
      }
    };
    using Items = std::set<std::shared_ptr<const T>, Less>;
    Items items;

    // Replace puts `object` (same key) where `it` is.
    void Replace(typename Items::iterator it, std::shared_ptr<const T> object) {
      auto hint = std::next(it);
      auto node = items.extract(it);
      node.value() = std::move(object);
      items.insert(hint, std::move(node));
    }
  };
  template <class T>
  friend struct Ops;

  // KeyIn is where an object of kind T named (namespace_name, name) sits in its table.
  template <class T>
  static TableKey KeyIn(std::string_view namespace_name, std::string_view name);
  template <class T>
  Table<T>& TableOf();
  template <class T>
  const Table<T>& TableOf() const;
  template <class T, class Data>
  std::shared_ptr<const T> CreateTyped(Data data);
  template <class T, class Data>
  std::shared_ptr<const T> UpdateTyped(Data data);
  template <class T, class Data>
  std::shared_ptr<const T> MirrorApplyTyped(Data data);
  template <class T>
  bool MirrorDeleteTyped(std::string_view namespace_name, std::string_view name);
  // Record appends an event to the log and to every watcher's queue; mu_ must be held.
  void Record(EventType type, model::Object object, std::optional<model::Object> old,
              uint64_t resource_version);
  // Deliver runs queued watch callbacks with mu_ released; `lock` holds mu_ on entry and exit.
  void Deliver(std::unique_lock<std::mutex>& lock);
  void QueueResync(Watcher& watcher) const;
  void SeedSystemPriorityClasses();
  void CheckCapacity(Kind kind, size_t size) const;
  uint64_t NextVersion() { return ++rv_; }
  // The globalDefault PriorityClass other than `except_name`, or nullptr; mu_ must be held.
  const model::PriorityClass* DefaultPriorityClass(std::string_view except_name) const;

  const Limits limits_;
  mutable std::mutex mu_;
  uint64_t rv_ = 0;
  Table<model::Pod> pods_;
  Table<model::Node> nodes_;
  Table<model::PodDisruptionBudget> pdbs_;
  Table<model::PriorityClass> classes_;
  Table<model::Namespace> namespaces_;

  // LogEntry is an event as the log keeps it: the objects type-erased (their kind says what they
  // are), 48 bytes where an Event takes 72. The log holds event_log_length of them; a watch that
  // replays from the log gets them back as Events (store_watch.cc).
  struct LogEntry {
    std::shared_ptr<const void> object;
    std::shared_ptr<const void> old_object;  // null for ADDED
    uint64_t resource_version = 0;
    EventType type = EventType::kAdded;
    Kind kind = Kind::kPod;
  };
  static_assert(sizeof(void*) != 8 || sizeof(LogEntry) == 48);
  std::deque<LogEntry> log_;
  uint64_t compacted_rv_ = 0;  // Events up to this version are gone from log_.
  std::map<uint64_t, std::shared_ptr<Watcher>> watchers_;
  uint64_t next_watch_id_ = 1;
  bool delivering_ = false;
  std::condition_variable idle_cv_;
  std::atomic<uint64_t> failed_callbacks_{0};
  ObjectStore objects_;
};

}  // namespace schedhost::store
