#include "host/store/object_store.h"

#include <algorithm>

namespace schedhost::store {
namespace {

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

const StoredObject* KindObjects::Get(std::string_view namespace_name,
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
  std::lock_guard lock(mu_);
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
  for (const KindInfo& kind : kinds) {
    if (tables_.emplace(kind.Key(), Table{.info = kind}).second) snapshot_.reset();
  }
}

std::vector<KindInfo> ObjectStore::Kinds() const {
  std::lock_guard lock(mu_);
  std::vector<KindInfo> out;
  for (const auto& [key, table] : tables_) out.push_back(table.info);
  return out;
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
    std::shared_ptr<const model::ValueNode> tree) {
  std::lock_guard lock(mu_);
  Table& table = TableOf(key);
  if (name.empty()) throw StoreError(ErrorCode::kInvalid, table.info.kind + ": metadata.name is required");
  if (!table.info.namespaced && !namespace_name.empty()) {
    throw StoreError(ErrorCode::kInvalid, table.info.kind + " " + name +
                                              " is cluster-scoped and has no namespace (got \"" +
                                              namespace_name + "\")");
  }
  if (table.info.namespaced && namespace_name.empty()) namespace_name = "default";
  auto object = std::make_shared<StoredObject>();
  object->namespace_name = std::move(namespace_name);
  object->name = std::move(name);
  object->resource_version = ++version_;
  object->tree = std::move(tree);
  // Copy on write: readers keep the table they took.
  std::vector<Item> items = table.objects->items();
  auto it = std::lower_bound(items.begin(), items.end(), object,
                             [](const Item& a, const Item& b) {
                               return Less(a, b->namespace_name, b->name);
                             });
  if (it != items.end() && (*it)->namespace_name == object->namespace_name &&
      (*it)->name == object->name) {
    *it = object;
  } else {
    items.insert(it, object);
  }
  table.objects = std::make_shared<KindObjects>(std::move(items));
  snapshot_.reset();
  return object;
}

std::shared_ptr<const StoredObject> ObjectStore::Delete(std::string_view key,
                                                        std::string_view namespace_name,
                                                        std::string_view name) {
  std::lock_guard lock(mu_);
  Table& table = TableOf(key);
  std::string_view ns = table.info.namespaced && namespace_name.empty() ? "default"
                        : table.info.namespaced                          ? namespace_name
                                                                         : "";
  std::vector<Item> items = table.objects->items();
  auto it = std::lower_bound(items.begin(), items.end(), std::pair(ns, name),
                             [](const Item& a, const auto& k) { return Less(a, k.first, k.second); });
  if (it == items.end() || (*it)->namespace_name != ns || (*it)->name != name) return nullptr;
  Item gone = *it;
  items.erase(it);
  ++version_;
  table.objects = std::make_shared<KindObjects>(std::move(items));
  snapshot_.reset();
  return gone;
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
