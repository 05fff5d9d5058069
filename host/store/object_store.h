// ObjectStore: the objects of the API kinds plugins declare (PodGroups, ElasticQuotas,
// PersistentVolumeClaims, ...), kept as value trees beside the typed kinds of Store. One table
// per declared group and resource, shared by every plugin that declares it. Readers take an
// ObjectSnapshot: an immutable view of every table, cached until the next write, so a cycle reads
// a consistent state without a lock and a writer never waits for a reader. Thread-safe.
//
//   store.objects().Declare({"scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", true});
//   store.objects().Apply("podgroups.scheduling.x-k8s.io", "team-a", "gang", tree);
//   auto snapshot = store.objects().Snapshot();
//   const StoredObject* pg = snapshot->Find("podgroups.scheduling.x-k8s.io")->Get("team-a", "gang");
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "host/model/value_node.h"
#include "host/store/event.h"
#include "host/store/store_error.h"

namespace schedhost::model {
struct GenericObject;
}  // namespace schedhost::model

namespace schedhost::store {

// KindInfo is one declared API kind.
struct KindInfo {
  std::string group;  // "" for the core group
  std::string version;
  std::string resource;  // plural, lower case
  std::string kind;
  bool namespaced = true;

  // Key names the table: "<resource>.<group>" ("<resource>" for the core group), as kubectl
  // names resources ("podgroups.scheduling.x-k8s.io").
  std::string Key() const { return group.empty() ? resource : resource + "." + group; }
  // ApiVersion is "<group>/<version>" ("<version>" for the core group).
  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
  friend bool operator==(const KindInfo&, const KindInfo&) = default;
};

// StoredObject is one object as stored; immutable once made.
struct StoredObject {
  std::string namespace_name;  // "" for cluster-scoped kinds
  std::string name;
  std::string uid;  // metadata.uid as applied ("" when it had none)
  uint64_t resource_version = 0;
  std::shared_ptr<const model::ValueNode> tree;
};

// ObjectEvent is one change of an object of a declared kind, delivered to watchers in version
// order.
struct ObjectEvent {
  EventType type = EventType::kAdded;
  std::string key;   // the kind's KindInfo::Key
  std::string kind;  // the kind's name ("PodGroup"), for labels and messages
  // object is the new state (ADDED, MODIFIED) or the last stored state (DELETED).
  std::shared_ptr<const StoredObject> object;
  // old_object is the state before the change (MODIFIED, DELETED); null for ADDED.
  std::shared_ptr<const StoredObject> old_object;
  // resource_version is the ObjectStore version the change created.
  uint64_t resource_version = 0;
};

// KindObjects is an immutable table of one kind's objects, ordered by namespace and name.
class KindObjects {
 public:
  // Each table gets a revision no other table of the process has had (object_kind_revision).
  explicit KindObjects(std::vector<std::shared_ptr<const StoredObject>> items);

  // Get returns the object `namespace_name`/`name`, or nullptr. A large table builds its hash
  // index on the first Get: for tables read many times (a plugin's reads in every cycle).
  const StoredObject* Get(std::string_view namespace_name, std::string_view name) const;
  // Find is Get without building the index: for a table about to be replaced (a write).
  const StoredObject* Find(std::string_view namespace_name, std::string_view name) const;
  // InNamespace returns the objects of `namespace_name` ("" : every object), in order.
  std::pair<const std::shared_ptr<const StoredObject>*, const std::shared_ptr<const StoredObject>*>
  InNamespace(std::string_view namespace_name) const;
  // items returns every object, in order.
  const std::vector<std::shared_ptr<const StoredObject>>& items() const { return items_; }
  // revision is the table's revision: a table is immutable, and every change makes a new one.
  uint64_t revision() const { return revision_; }

 private:
  // Key is an object's namespace and name, viewing the stored object's own strings.
  struct Key {
    std::string_view namespace_name;
    std::string_view name;
    friend bool operator==(const Key&, const Key&) = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const noexcept;
  };
  // Tables at least this large answer Get through a hash index, built on the first Get (a
  // plugin may look an object up for every node of every cycle); smaller ones search the
  // sorted items.
  static constexpr size_t kIndexFrom = 64;

  std::vector<std::shared_ptr<const StoredObject>> items_;
  uint64_t revision_;
  // index_ is built once, under index_mu_; index_built_ says it is (std::call_once costs more
  // than the lookup it guards).
  mutable std::atomic<bool> index_built_{false};
  mutable std::mutex index_mu_;
  mutable std::unordered_map<Key, const StoredObject*, KeyHash> index_;
};

// ObjectSnapshot is every declared kind's table at one moment.
class ObjectSnapshot {
 public:
  // Find returns the table of the kind keyed `key` (KindInfo::Key), or nullptr when no such kind
  // is declared.
  const KindObjects* Find(std::string_view key) const;

 private:
  friend class ObjectStore;
  std::map<std::string, std::shared_ptr<const KindObjects>, std::less<>> tables_;
};

// ParseObjectVersion reads a metadata.resourceVersion the ObjectStore handed out (a decimal
// number above 0); nullopt for anything else.
std::optional<uint64_t> ParseObjectVersion(std::string_view text);

// ObjectWrite qualifies ObjectStore::Apply.
struct ObjectWrite {
  // expected_version, when not 0, is the version the writer read: the write happens only while
  // the stored object still has it (kConflict otherwise; kNotFound when there is none).
  uint64_t expected_version = 0;
  // stamp makes the store the owner of the object's identity, as in embedded mode: the stored
  // tree gets metadata.namespace, .name, .uid (kept across updates; a different uid given is
  // kConflict; generated on create when none is given), .resourceVersion and
  // .creationTimestamp (kept across updates). Without it (a
  // mirror of an API server) the tree is stored as given.
  bool stamp = false;
  // keep_creation_timestamp, with stamp, keeps a creationTimestamp the tree gives when the
  // object is created (a simulation's documents set their own times, as its pods do); the API
  // server, and so the daemon, sets its own.
  bool keep_creation_timestamp = false;
};

class ObjectStore {
 public:
  ObjectStore() = default;
  ObjectStore(const ObjectStore&) = delete;
  ObjectStore& operator=(const ObjectStore&) = delete;

  // Declare registers `kind` (again: nothing changes); StoreError(kInvalid) when it disagrees
  // with the declaration of the same group and resource already registered (version, kind or
  // scope), naming both.
  void Declare(const KindInfo& kind) { Declare(std::vector<KindInfo>{kind}); }
  // Declare registers every kind of `kinds`, or none: StoreError as above for the first that is
  // malformed or disagrees with a registered kind or an earlier one of `kinds`.
  void Declare(const std::vector<KindInfo>& kinds);
  // KindHooks let a mirror of an API server follow the declarations: `added` runs with the kinds
  // a Declare registered (after it, outside the store's lock; it may block until they are
  // listed), `dropped` with the kinds a Release let go of.
  struct KindHooks {
    std::function<void(const std::vector<KindInfo>&)> added;
    std::function<void(const std::vector<KindInfo>&)> dropped;
  };
  // SetHooks installs `hooks` (empty functions: none).
  void SetHooks(KindHooks hooks);
  // Release says no loaded plugin declares `kinds` any more. With a `dropped` hook (Kubernetes
  // mode) it is told, and forgets them; without one the tables stay (embedded mode: the objects
  // are the user's, and the kind is accepted until the host restarts).
  void Release(const std::vector<KindInfo>& kinds);
  // Kinds returns every declared kind, ordered by key.
  std::vector<KindInfo> Kinds() const;
  // FindKind returns the declared kind whose objects read apiVersion `api_version`, kind `kind`.
  std::optional<KindInfo> FindKind(std::string_view api_version, std::string_view kind) const;
  // FindKey returns the declared kind keyed `key`.
  std::optional<KindInfo> FindKey(std::string_view key) const;

  // Apply creates or replaces the object `namespace_name`/`name` of the kind keyed `key` and
  // returns it as stored, with a new resource version; kNotFound when the kind is not declared,
  // kInvalid for an empty name or a namespace on a cluster-scoped kind.
  std::shared_ptr<const StoredObject> Apply(std::string_view key, std::string namespace_name,
                                            std::string name,
                                            std::shared_ptr<const model::ValueNode> tree,
                                            const ObjectWrite& write = {});
  // ApplyDocument applies a decoded document (schedctl simulate, the test harness, a bench op)
  // to the declared kind its apiVersion and kind name: nullptr, and nothing applied, when no
  // declared kind matches; otherwise as Apply.
  std::shared_ptr<const StoredObject> ApplyDocument(const model::GenericObject& document,
                                                    const ObjectWrite& write = {});
  // Delete removes the object and returns its last state; nullptr when it was not there.
  // `expected_uid` / `expected_version`, when set, are preconditions (kConflict when the stored
  // object differs).
  std::shared_ptr<const StoredObject> Delete(std::string_view key, std::string_view namespace_name,
                                             std::string_view name,
                                             std::string_view expected_uid = {},
                                             uint64_t expected_version = 0);
  // Clear removes every object of the kind keyed `key` (DELETED for each); kNotFound when the
  // kind is not declared. Kubernetes mode clears a kind it can no longer mirror.
  void Clear(std::string_view key);
  // Undeclare forgets the kind keyed `key` with its objects (no event: nothing reads the kind any
  // more); false when it was not declared.
  bool Undeclare(std::string_view key);
  // resource_version returns the newest version handed out (0 for a new store).
  uint64_t resource_version() const;

  // Watch calls `fn` with every later change, in version order, and returns an id for Unwatch.
  // Callbacks run with the store's lock released, one at a time; a write returns once its
  // event was delivered (a write made inside a callback: right after that callback). A callback
  // that throws has its exception dropped.
  uint64_t Watch(std::function<void(const ObjectEvent&)> fn);
  // Unwatch stops a watch; once it returns (outside a callback) fn is not called again.
  bool Unwatch(uint64_t id);

  // Snapshot returns every table as of now (the same snapshot until the next write).
  std::shared_ptr<const ObjectSnapshot> Snapshot() const;

  // SetUnavailable records why the kind keyed `key` cannot be mirrored ("" : it can); Available
  // reads it back: true with "" when the kind is mirrored.
  void SetUnavailable(std::string_view key, std::string why);
  bool Available(std::string_view key, std::string* why) const;

 private:
  struct Table {
    KindInfo info;
    std::shared_ptr<const KindObjects> objects = std::make_shared<KindObjects>(
        std::vector<std::shared_ptr<const StoredObject>>{});
    std::string unavailable;
  };

  Table& TableOf(std::string_view key);  // holds mu_; throws kNotFound
  // The writes, with mu_ held; their events go to pending_.
  std::shared_ptr<const StoredObject> ApplyLocked(std::string_view key, std::string namespace_name,
                                                  std::string name,
                                                  std::shared_ptr<const model::ValueNode> tree,
                                                  const ObjectWrite& write);
  std::shared_ptr<const StoredObject> DeleteLocked(std::string_view key,
                                                   std::string_view namespace_name,
                                                   std::string_view name,
                                                   std::string_view expected_uid,
                                                   uint64_t expected_version);
  // QueueDeleted queues the DELETED event of `gone` at the current version (holds mu_).
  void QueueDeleted(const KindInfo& kind, const std::shared_ptr<const StoredObject>& gone);
  // Deliver hands the pending events to the watchers (called without mu_).
  void Deliver();

  mutable std::mutex mu_;
  KindHooks hooks_;  // guarded by mu_ (copied out to run)
  std::deque<ObjectEvent> pending_;  // guarded by mu_
  std::map<uint64_t, std::shared_ptr<std::function<void(const ObjectEvent&)>>> watchers_;  // mu_
  uint64_t next_watch_id_ = 1;                                                                // mu_
  std::mutex deliver_mu_;  // held by the one delivering thread
  std::map<std::string, Table, std::less<>> tables_;
  uint64_t version_ = 0;
  mutable std::shared_ptr<const ObjectSnapshot> snapshot_;  // null: rebuild at the next read
};

}  // namespace schedhost::store
