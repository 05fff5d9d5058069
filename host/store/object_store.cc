#include "host/store/object_store.h"

#include <algorithm>
#include <charconv>
#include <chrono>

#include "host/model/decode.h"
#include "host/model/meta.h"

namespace schedhost::store {
namespace {

// The object stores this thread is delivering events for: a write made inside a callback leaves
// its event to the running delivery loop.
thread_local std::vector<const ObjectStore*> t_delivering;

bool DeliveringHere(const ObjectStore* store) {
  return std::find(t_delivering.begin(), t_delivering.end(), store) != t_delivering.end();
}

std::string UidOf(const model::ValueNode* tree) {
  return tree == nullptr ? "" : model::MetadataString(*tree, "uid");
}

using Item = std::shared_ptr<const StoredObject>;

bool Less(const Item& a, std::string_view ns, std::string_view name) {
  const std::string_view a_ns = a->namespace_name;
  return a_ns != ns ? a_ns < ns : std::string_view(a->name) < name;
}

std::string Describe(const KindInfo& k) {
  return k.ApiVersion() + " " + k.kind + " (" + k.Key() + ", " +
         (k.namespaced ? "namespaced" : "cluster-scoped") + ")";
}

}  // namespace

std::optional<uint64_t> ParseObjectVersion(std::string_view text) {
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v == 0) return std::nullopt;
  return v;
}

KindObjects::KindObjects(std::vector<std::shared_ptr<const StoredObject>> items)
    : items_(std::move(items)) {
  static std::atomic<uint64_t> next_revision{0};
  revision_ = next_revision.fetch_add(1, std::memory_order_relaxed) + 1;
}

size_t KindObjects::KeyHash::operator()(const Key& k) const noexcept {
  const size_t h = std::hash<std::string_view>{}(k.namespace_name);
  return h ^ (std::hash<std::string_view>{}(k.name) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

const StoredObject* KindObjects::Get(std::string_view namespace_name,
                                     std::string_view name) const {
  if (items_.size() >= kIndexFrom) {
    if (!index_built_.load(std::memory_order_acquire)) {
      std::lock_guard lock(index_mu_);
      if (!index_built_.load(std::memory_order_relaxed)) {
        index_.reserve(items_.size());
        for (const Item& item : items_) {
          index_.emplace(Key{item->namespace_name, item->name}, item.get());
        }
        index_built_.store(true, std::memory_order_release);
      }
    }
    auto found = index_.find(Key{namespace_name, name});
    return found == index_.end() ? nullptr : found->second;
  }
  return Find(namespace_name, name);
}

const StoredObject* KindObjects::Find(std::string_view namespace_name,
                                      std::string_view name) const {
  auto it = std::lower_bound(items_.begin(), items_.end(), std::pair(namespace_name, name),
                             [](const Item& a, const auto& key) {
                               return Less(a, key.first, key.second);
                             });
  if (it == items_.end() || (*it)->namespace_name != namespace_name || (*it)->name != name) {
    return nullptr;
  }
  return it->get();
}

std::pair<const Item*, const Item*> KindObjects::InNamespace(
    std::string_view namespace_name) const {
  const Item* first = items_.data();
  const Item* last = items_.data() + items_.size();
  if (namespace_name.empty()) return {first, last};
  const Item* lo = std::lower_bound(first, last, namespace_name,
                                    [](const Item& a, std::string_view ns) {
                                      return a->namespace_name < ns;
                                    });
  const Item* hi = std::upper_bound(lo, last, namespace_name,
                                    [](std::string_view ns, const Item& a) {
                                      return ns < a->namespace_name;
                                    });
  return {lo, hi};
}

const KindObjects* ObjectSnapshot::Find(std::string_view key) const {
  auto it = tables_.find(key);
  return it == tables_.end() ? nullptr : it->second.get();
}

void ObjectStore::Declare(const std::vector<KindInfo>& kinds) {
  std::unique_lock lock(mu_);
  // Everything checked before anything is registered: a refused list changes nothing.
  std::map<std::string, const KindInfo*, std::less<>> seen;
  for (const KindInfo& kind : kinds) {
    if (kind.version.empty() || kind.resource.empty() || kind.kind.empty()) {
      throw StoreError(ErrorCode::kInvalid, "declared kind " + Describe(kind) +
                                                ": version, resource and kind are required");
    }
    const KindInfo* known = nullptr;
    if (auto it = tables_.find(kind.Key()); it != tables_.end()) known = &it->second.info;
    if (auto it = seen.find(kind.Key()); it != seen.end()) known = it->second;
    if (known != nullptr && !(*known == kind)) {
      throw StoreError(ErrorCode::kInvalid, "declared kind " + Describe(kind) +
                                                " disagrees with the declaration already in use, " +
                                                Describe(*known));
    }
    seen.emplace(kind.Key(), &kind);
  }
  std::vector<KindInfo> added;
  for (const KindInfo& kind : kinds) {
    if (tables_.emplace(kind.Key(), Table{.info = kind}).second) {
      snapshot_.reset();
      added.push_back(kind);
    }
  }
  auto hook = hooks_.added;
  lock.unlock();
  if (hook && !added.empty()) hook(added);
}

void ObjectStore::SetHooks(KindHooks hooks) {
  std::lock_guard lock(mu_);
  hooks_ = std::move(hooks);
}

void ObjectStore::Release(const std::vector<KindInfo>& kinds) {
  std::function<void(const std::vector<KindInfo>&)> hook;
  {
    std::lock_guard lock(mu_);
    hook = hooks_.dropped;
  }
  if (hook && !kinds.empty()) hook(kinds);
}

std::vector<KindInfo> ObjectStore::Kinds() const {
  std::lock_guard lock(mu_);
  std::vector<KindInfo> out;
  for (const auto& [key, table] : tables_) out.push_back(table.info);
  return out;
}

std::shared_ptr<const StoredObject> ObjectStore::ApplyDocument(
    const model::GenericObject& document, const ObjectWrite& write) {
  const std::optional<KindInfo> kind = FindKind(document.api_version, document.kind);
  if (!kind) return nullptr;
  return Apply(kind->Key(), document.namespace_name, document.name, document.tree, write);
}

std::optional<KindInfo> ObjectStore::FindKind(std::string_view api_version,
                                              std::string_view kind) const {
  std::lock_guard lock(mu_);
  for (const auto& [key, table] : tables_) {
    if (table.info.kind == kind && table.info.ApiVersion() == api_version) return table.info;
  }
  return std::nullopt;
}

std::optional<KindInfo> ObjectStore::FindKey(std::string_view key) const {
  std::lock_guard lock(mu_);
  auto it = tables_.find(key);
  if (it == tables_.end()) return std::nullopt;
  return it->second.info;
}

ObjectStore::Table& ObjectStore::TableOf(std::string_view key) {
  auto it = tables_.find(key);
  if (it == tables_.end()) {
    throw StoreError(ErrorCode::kNotFound,
                     "no loaded plugin declares the kind " + std::string(key));
  }
  return it->second;
}

std::shared_ptr<const StoredObject> ObjectStore::Apply(
    std::string_view key, std::string namespace_name, std::string name,
    std::shared_ptr<const model::ValueNode> tree, const ObjectWrite& write) {
  std::shared_ptr<const StoredObject> stored;
  {
    std::lock_guard lock(mu_);
    stored = ApplyLocked(key, std::move(namespace_name), std::move(name), std::move(tree), write);
  }
  Deliver();
  return stored;
}

std::shared_ptr<const StoredObject> ObjectStore::ApplyLocked(
    std::string_view key, std::string namespace_name, std::string name,
    std::shared_ptr<const model::ValueNode> tree, const ObjectWrite& write) {
  Table& table = TableOf(key);
  if (name.empty()) throw StoreError(ErrorCode::kInvalid, table.info.kind + ": metadata.name is required");
  if (!table.info.namespaced && !namespace_name.empty()) {
    throw StoreError(ErrorCode::kInvalid, table.info.kind + " " + name +
                                              " is cluster-scoped and has no namespace (got \"" +
                                              namespace_name + "\")");
  }
  if (table.info.namespaced && namespace_name.empty()) namespace_name = "default";
  const std::string what = table.info.kind + " " +
                           (namespace_name.empty() ? name : namespace_name + "/" + name);
  const StoredObject* current = table.objects->Find(namespace_name, name);
  if (write.expected_version != 0) {
    if (current == nullptr) {
      throw StoreError(ErrorCode::kNotFound,
                       what + " not found, but resourceVersion " +
                           std::to_string(write.expected_version) + " was given");
    }
    if (current->resource_version != write.expected_version) {
      throw StoreError(ErrorCode::kConflict,
                       what + ": resourceVersion " + std::to_string(write.expected_version) +
                           " is not current (" + std::to_string(current->resource_version) +
                           "): read it again and retry");
    }
  }
  const uint64_t version = version_ + 1;
  if (write.stamp) {
    std::string uid = UidOf(tree.get());
    if (current != nullptr && !uid.empty() && uid != current->uid) {
      throw StoreError(ErrorCode::kConflict, what + ": metadata.uid " + uid +
                                                 " does not match the stored object's " +
                                                 current->uid);
    }
    if (uid.empty()) uid = current != nullptr ? current->uid : model::GenerateUid();
    auto stamped = std::make_shared<model::ValueNode>(tree ? *tree : model::ValueNode{});
    if (stamped->kind == SCHEDHOST_CONFIG_NONE) stamped->kind = SCHEDHOST_CONFIG_TABLE;
    model::SetMetadataString(*stamped, "name", name);
    if (table.info.namespaced) model::SetMetadataString(*stamped, "namespace", namespace_name);
    model::SetMetadataString(*stamped, "uid", std::move(uid));
    model::SetMetadataString(*stamped, "resourceVersion", std::to_string(version));
    std::string created = current != nullptr && current->tree
                              ? model::MetadataString(*current->tree, "creationTimestamp")
                              : "";
    if (created.empty() && current == nullptr && write.keep_creation_timestamp && tree) {
      created = model::MetadataString(*tree, "creationTimestamp");
    }
    if (created.empty()) {
      // Whole seconds, as the API server stamps it.
      const int64_t seconds = std::chrono::duration_cast<std::chrono::seconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
      created = model::FormatRfc3339(seconds * 1'000'000'000);
    }
    model::SetMetadataString(*stamped, "creationTimestamp", std::move(created));
    tree = std::move(stamped);
  }
  version_ = version;
  auto object = std::make_shared<StoredObject>();
  object->namespace_name = std::move(namespace_name);
  object->name = std::move(name);
  object->uid = UidOf(tree.get());
  object->resource_version = version;
  object->tree = std::move(tree);
  // Copy on write: readers keep the table they took.
  std::vector<Item> items = table.objects->items();
  auto it = std::lower_bound(items.begin(), items.end(), object,
                             [](const Item& a, const Item& b) {
                               return Less(a, b->namespace_name, b->name);
                             });
  ObjectEvent event{.key = table.info.Key(), .kind = table.info.kind, .object = object};
  if (it != items.end() && (*it)->namespace_name == object->namespace_name &&
      (*it)->name == object->name) {
    event.type = EventType::kModified;
    event.old_object = *it;
    *it = object;
  } else {
    items.insert(it, object);
  }
  table.objects = std::make_shared<KindObjects>(std::move(items));
  snapshot_.reset();
  event.resource_version = object->resource_version;
  if (!watchers_.empty()) pending_.push_back(std::move(event));
  return object;
}

std::shared_ptr<const StoredObject> ObjectStore::Delete(std::string_view key,
                                                        std::string_view namespace_name,
                                                        std::string_view name,
                                                        std::string_view expected_uid,
                                                        uint64_t expected_version) {
  std::shared_ptr<const StoredObject> gone;
  {
    std::lock_guard lock(mu_);
    gone = DeleteLocked(key, namespace_name, name, expected_uid, expected_version);
  }
  Deliver();
  return gone;
}

std::shared_ptr<const StoredObject> ObjectStore::DeleteLocked(std::string_view key,
                                                              std::string_view namespace_name,
                                                              std::string_view name,
                                                              std::string_view expected_uid,
                                                              uint64_t expected_version) {
  Table& table = TableOf(key);
  std::string_view ns = table.info.namespaced && namespace_name.empty() ? "default"
                        : table.info.namespaced                          ? namespace_name
                                                                         : "";
  std::vector<Item> items = table.objects->items();
  auto it = std::lower_bound(items.begin(), items.end(), std::pair(ns, name),
                             [](const Item& a, const auto& k) { return Less(a, k.first, k.second); });
  if (it == items.end() || (*it)->namespace_name != ns || (*it)->name != name) return nullptr;
  Item gone = *it;
  if ((!expected_uid.empty() && expected_uid != gone->uid) ||
      (expected_version != 0 && expected_version != gone->resource_version)) {
    throw StoreError(ErrorCode::kConflict,
                     table.info.kind + " " + (ns.empty() ? "" : std::string(ns) + "/") +
                         std::string(name) + ": the precondition (uid " +
                         std::string(expected_uid.empty() ? "any" : expected_uid) +
                         ", resourceVersion " +
                         (expected_version == 0 ? "any" : std::to_string(expected_version)) +
                         ") does not match the stored object (uid " + gone->uid +
                         ", resourceVersion " + std::to_string(gone->resource_version) + ")");
  }
  items.erase(it);
  ++version_;
  table.objects = std::make_shared<KindObjects>(std::move(items));
  snapshot_.reset();
  QueueDeleted(table.info, gone);
  return gone;
}

void ObjectStore::QueueDeleted(const KindInfo& kind, const std::shared_ptr<const StoredObject>& gone) {
  if (watchers_.empty()) return;
  pending_.push_back(ObjectEvent{.type = EventType::kDeleted,
                                 .key = kind.Key(),
                                 .kind = kind.kind,
                                 .object = gone,
                                 .old_object = gone,
                                 .resource_version = version_});
}

void ObjectStore::Clear(std::string_view key) {
  {
    std::lock_guard lock(mu_);
    Table& table = TableOf(key);
    for (const Item& item : table.objects->items()) {
      ++version_;
      QueueDeleted(table.info, item);
    }
    table.objects = std::make_shared<KindObjects>(std::vector<Item>{});
    snapshot_.reset();
  }
  Deliver();
}

bool ObjectStore::Undeclare(std::string_view key) {
  std::lock_guard lock(mu_);
  auto it = tables_.find(key);
  if (it == tables_.end()) return false;
  tables_.erase(it);
  snapshot_.reset();
  return true;
}

uint64_t ObjectStore::resource_version() const {
  std::lock_guard lock(mu_);
  return version_;
}

uint64_t ObjectStore::Watch(std::function<void(const ObjectEvent&)> fn) {
  std::lock_guard lock(mu_);
  const uint64_t id = next_watch_id_++;
  watchers_.emplace(id, std::make_shared<std::function<void(const ObjectEvent&)>>(std::move(fn)));
  return id;
}

bool ObjectStore::Unwatch(uint64_t id) {
  {
    std::lock_guard lock(mu_);
    if (watchers_.erase(id) == 0) return false;
  }
  // Wait for a delivery that may still be calling it (unless that delivery is ours).
  if (!DeliveringHere(this)) {
    std::lock_guard wait(deliver_mu_);
  }
  return true;
}

void ObjectStore::Deliver() {
  if (DeliveringHere(this)) return;  // the running loop below picks the event up
  std::lock_guard deliver(deliver_mu_);
  t_delivering.push_back(this);
  for (;;) {
    ObjectEvent event;
    std::vector<std::shared_ptr<std::function<void(const ObjectEvent&)>>> fns;
    {
      std::lock_guard lock(mu_);
      if (pending_.empty()) break;
      event = std::move(pending_.front());
      pending_.pop_front();
      for (const auto& [id, fn] : watchers_) fns.push_back(fn);
    }
    for (const auto& fn : fns) {
      try {
        (*fn)(event);
      } catch (...) {  // NOLINT(bugprone-empty-catch): a watcher's failure is its own
      }
    }
  }
  t_delivering.pop_back();
}

std::shared_ptr<const ObjectSnapshot> ObjectStore::Snapshot() const {
  std::lock_guard lock(mu_);
  if (snapshot_ == nullptr) {
    auto snapshot = std::make_shared<ObjectSnapshot>();
    for (const auto& [key, table] : tables_) snapshot->tables_.emplace(key, table.objects);
    snapshot_ = std::move(snapshot);
  }
  return snapshot_;
}

void ObjectStore::SetUnavailable(std::string_view key, std::string why) {
  std::lock_guard lock(mu_);
  TableOf(key).unavailable = std::move(why);
}

bool ObjectStore::Available(std::string_view key, std::string* why) const {
  std::lock_guard lock(mu_);
  auto it = tables_.find(key);
  std::string reason = it == tables_.end() ? "no loaded plugin declares the kind " + std::string(key)
                                           : it->second.unavailable;
  const bool ok = reason.empty();
  if (why != nullptr) *why = std::move(reason);
  return ok;
}

}  // namespace schedhost::store
