// Store: construction, the generic create / update / delete / get / list paths shared by every
// kind, and the typed entry points. Kind-specific admission lives in store_pods.cc, events and
// watches in store_watch.cc.
#include "host/store/store.h"

#include <chrono>
#include <type_traits>
#include <utility>

#include "host/store/store_internal.h"

namespace schedhost::store {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

template <class T>
std::string What(std::string_view namespace_name, std::string_view name) {
  return std::string(ToString(Ops<T>::kKind)) + " " +
         ObjectKey(Ops<T>::kKind, namespace_name, name);
}

}  // namespace

Store::Store() : Store(Limits{}) {}

Store::Store(Limits limits) : limits_(limits) {
  if (limits_.max_objects_per_kind == 0 || limits_.event_log_length == 0) {
    throw StoreError(ErrorCode::kInvalid,
                     "store limits: max_objects_per_kind and event_log_length must be at least 1");
  }
  if (limits_.system_priority_classes) SeedSystemPriorityClasses();
}

Store::~Store() = default;

template <>
Store::Table<model::Pod>& Store::TableOf<model::Pod>() {
  return pods_;
}
template <>
Store::Table<model::Node>& Store::TableOf<model::Node>() {
  return nodes_;
}
template <>
Store::Table<model::PodDisruptionBudget>& Store::TableOf<model::PodDisruptionBudget>() {
  return pdbs_;
}
template <>
Store::Table<model::PriorityClass>& Store::TableOf<model::PriorityClass>() {
  return classes_;
}
template <>
Store::Table<model::Namespace>& Store::TableOf<model::Namespace>() {
  return namespaces_;
}
template <class T>
const Store::Table<T>& Store::TableOf() const {
  return const_cast<Store*>(this)->TableOf<T>();
}

void Store::CheckCapacity(Kind kind, size_t size) const {
  if (size >= limits_.max_objects_per_kind) {
    throw StoreError(ErrorCode::kLimitExceeded, "the store holds its maximum of " +
                                                    std::to_string(limits_.max_objects_per_kind) +
                                                    " " + std::string(ToString(kind)) +
                                                    " objects (Store::Limits::max_objects_" +
                                                    "per_kind); delete some before creating more");
  }
}

template <class T, class Data>
std::shared_ptr<const T> Store::CreateTyped(Data data) {
  using O = Ops<T>;
  O::Default(data);
  const std::string key = ObjectKey(O::kKind, data.metadata.namespace_name, data.metadata.name);
  const std::string what = std::string(ToString(O::kKind)) + " " + key;
  if (auto error = O::Validate(data)) {
    throw StoreError(ErrorCode::kInvalid, what + ": " + Message(*error));
  }
  if (data.metadata.creation_timestamp_ns == 0) data.metadata.creation_timestamp_ns = NowNs();
  std::unique_lock lock(mu_);
  auto& items = TableOf<T>().items;
  if (items.find(KeyIn<T>(data.metadata.namespace_name, data.metadata.name)) != items.end()) {
    throw StoreError(ErrorCode::kAlreadyExists, what + " already exists");
  }
  CheckCapacity(O::kKind, items.size());
  O::AdmitCreate(*this, what, data);
  const uint64_t rv = NextVersion();
  data.metadata.resource_version = rv;
  std::shared_ptr<const T> object = T::Make(std::move(data));
  items.insert(object);
  Record(EventType::kAdded, object, std::nullopt, rv);
  Deliver(lock);
  return object;
}

template <class T, class Data>
std::shared_ptr<const T> Store::UpdateTyped(Data data) {
  using O = Ops<T>;
  const bool has_uid = !data.metadata.uid.empty();
  O::Default(data);  // Fills a uid when there is none; replaced by the stored one below.
  const std::string key = ObjectKey(O::kKind, data.metadata.namespace_name, data.metadata.name);
  const std::string what = std::string(ToString(O::kKind)) + " " + key;
  if (auto error = O::Validate(data)) {
    throw StoreError(ErrorCode::kInvalid, what + ": " + Message(*error));
  }
  std::unique_lock lock(mu_);
  auto& items = TableOf<T>().items;
  auto it = items.find(KeyIn<T>(data.metadata.namespace_name, data.metadata.name));
  if (it == items.end()) throw StoreError(ErrorCode::kNotFound, what + " not found");
  // A copy: Replace below drops the table's reference, and the event still needs the old object.
  // NOLINTNEXTLINE(performance-unnecessary-copy-initialization)
  const std::shared_ptr<const T> current = *it;
  const uint64_t read_rv = data.metadata.resource_version;
  if (read_rv != 0 && read_rv != current->resource_version()) {
    throw StoreError(ErrorCode::kConflict, what + ": resource version " + std::to_string(read_rv) +
                                               " is stale (current " +
                                               std::to_string(current->resource_version()) +
                                               "); read the object again and retry");
  }
  if (!has_uid) {
    data.metadata.uid = current->uid();
  } else if (data.metadata.uid != current->uid()) {
    throw StoreError(ErrorCode::kConflict, what + ": uid " + data.metadata.uid +
                                               " does not match the stored object's uid " +
                                               std::string(current->uid()) +
                                               " (it was deleted and re-created)");
  }
  data.metadata.creation_timestamp_ns = current->creation_timestamp_ns();
  O::AdmitUpdate(*this, what, *current, data);
  const uint64_t rv = NextVersion();
  data.metadata.resource_version = rv;
  std::shared_ptr<const T> object = T::Make(std::move(data));
  TableOf<T>().Replace(it, object);
  Record(EventType::kModified, object, model::Object(current), rv);
  Deliver(lock);
  return object;
}

template <class T, class Data>
std::shared_ptr<const T> Store::MirrorApplyTyped(Data data) {
  using O = Ops<T>;
  if constexpr (!Namespaced(O::kKind)) data.metadata.namespace_name.clear();
  const std::string key = ObjectKey(O::kKind, data.metadata.namespace_name, data.metadata.name);
  if (data.metadata.uid.empty()) {
    throw StoreError(ErrorCode::kInvalid,
                     std::string(ToString(O::kKind)) + " " + key + ": a mirrored object needs a uid");
  }
  std::unique_lock lock(mu_);
  auto& table = TableOf<T>();
  auto it = table.items.find(KeyIn<T>(data.metadata.namespace_name, data.metadata.name));
  std::shared_ptr<const T> current = it == table.items.end() ? nullptr : *it;
  if (current != nullptr && current->uid() != data.metadata.uid) {
    table.items.erase(it);
    Record(EventType::kDeleted, current, model::Object(current), NextVersion());
    current = nullptr;
    it = table.items.end();
  }
  if (current == nullptr) CheckCapacity(O::kKind, table.items.size());
  const uint64_t rv = NextVersion();
  data.metadata.resource_version = rv;
  std::shared_ptr<const T> object = T::Make(std::move(data));
  if (current == nullptr) {
    table.items.insert(object);
    Record(EventType::kAdded, object, std::nullopt, rv);
  } else {
    table.Replace(it, object);
    Record(EventType::kModified, object, model::Object(current), rv);
  }
  Deliver(lock);
  return object;
}

template <class T>
bool Store::MirrorDeleteTyped(std::string_view namespace_name, std::string_view name) {
  std::unique_lock lock(mu_);
  auto& items = TableOf<T>().items;
  auto it = items.find(KeyIn<T>(namespace_name, name));
  if (it == items.end()) return false;
  std::shared_ptr<const T> object = *it;
  items.erase(it);
  Record(EventType::kDeleted, object, model::Object(object), NextVersion());
  Deliver(lock);
  return true;
}

std::shared_ptr<const model::Pod> Store::MirrorApply(model::PodData data) {
  return MirrorApplyTyped<model::Pod>(std::move(data));
}
std::shared_ptr<const model::Node> Store::MirrorApply(model::NodeData data) {
  return MirrorApplyTyped<model::Node>(std::move(data));
}
std::shared_ptr<const model::PodDisruptionBudget> Store::MirrorApply(
    model::PodDisruptionBudgetData data) {
  return MirrorApplyTyped<model::PodDisruptionBudget>(std::move(data));
}
std::shared_ptr<const model::PriorityClass> Store::MirrorApply(model::PriorityClassData data) {
  return MirrorApplyTyped<model::PriorityClass>(std::move(data));
}
std::shared_ptr<const model::Namespace> Store::MirrorApply(model::NamespaceData data) {
  return MirrorApplyTyped<model::Namespace>(std::move(data));
}

bool Store::MirrorDelete(Kind kind, std::string_view namespace_name, std::string_view name) {
  switch (kind) {
    case Kind::kPod: return MirrorDeleteTyped<model::Pod>(namespace_name, name);
    case Kind::kNode: return MirrorDeleteTyped<model::Node>(namespace_name, name);
    case Kind::kPodDisruptionBudget:
      return MirrorDeleteTyped<model::PodDisruptionBudget>(namespace_name, name);
    case Kind::kPriorityClass: return MirrorDeleteTyped<model::PriorityClass>(namespace_name, name);
    case Kind::kNamespace: return MirrorDeleteTyped<model::Namespace>(namespace_name, name);
  }
  throw StoreError(ErrorCode::kInvalid, "MirrorDelete: unknown kind");
}

std::shared_ptr<const model::Pod> Store::Create(model::PodData data) {
  return CreateTyped<model::Pod>(std::move(data));
}
std::shared_ptr<const model::Node> Store::Create(model::NodeData data) {
  return CreateTyped<model::Node>(std::move(data));
}
std::shared_ptr<const model::PodDisruptionBudget> Store::Create(
    model::PodDisruptionBudgetData data) {
  return CreateTyped<model::PodDisruptionBudget>(std::move(data));
}
std::shared_ptr<const model::PriorityClass> Store::Create(model::PriorityClassData data) {
  return CreateTyped<model::PriorityClass>(std::move(data));
}

std::shared_ptr<const model::Namespace> Store::Create(model::NamespaceData data) {
  return CreateTyped<model::Namespace>(std::move(data));
}

std::shared_ptr<const model::Pod> Store::Update(model::PodData data) {
  return UpdateTyped<model::Pod>(std::move(data));
}
std::shared_ptr<const model::Node> Store::Update(model::NodeData data) {
  return UpdateTyped<model::Node>(std::move(data));
}
std::shared_ptr<const model::PodDisruptionBudget> Store::Update(
    model::PodDisruptionBudgetData data) {
  return UpdateTyped<model::PodDisruptionBudget>(std::move(data));
}
std::shared_ptr<const model::PriorityClass> Store::Update(model::PriorityClassData data) {
  return UpdateTyped<model::PriorityClass>(std::move(data));
}

std::shared_ptr<const model::Namespace> Store::Update(model::NamespaceData data) {
  return UpdateTyped<model::Namespace>(std::move(data));
}

model::Object Store::CreateObject(const model::Object& object) {
  return std::visit(
      [this](const auto& p) -> model::Object {
        if (!p) throw StoreError(ErrorCode::kInvalid, "CreateObject: null object");
        return Create(p->data());
      },
      object);
}

model::Object Store::UpdateObject(const model::Object& object) {
  return std::visit(
      [this](const auto& p) -> model::Object {
        if (!p) throw StoreError(ErrorCode::kInvalid, "UpdateObject: null object");
        return Update(p->data());
      },
      object);
}

template <class T>
std::shared_ptr<const T> Store::Delete(std::string_view namespace_name, std::string_view name,
                                       const Preconditions& preconditions) {
  std::unique_lock lock(mu_);
  auto& items = TableOf<T>().items;
  auto it = items.find(KeyIn<T>(namespace_name, name));
  if (it == items.end()) {
    throw StoreError(ErrorCode::kNotFound, What<T>(namespace_name, name) + " not found");
  }
  std::shared_ptr<const T> object = *it;
  if (!preconditions.uid.empty() && preconditions.uid != object->uid()) {
    throw StoreError(ErrorCode::kConflict,
                     What<T>(namespace_name, name) + ": delete precondition failed: uid is " +
                         std::string(object->uid()) + ", not " + preconditions.uid);
  }
  if (preconditions.resource_version != 0 &&
      preconditions.resource_version != object->resource_version()) {
    throw StoreError(ErrorCode::kConflict,
                     What<T>(namespace_name, name) +
                         ": delete precondition failed: resource version is " +
                         std::to_string(object->resource_version()) + ", not " +
                         std::to_string(preconditions.resource_version));
  }
  items.erase(it);
  Record(EventType::kDeleted, object, model::Object(object), NextVersion());
  Deliver(lock);
  return object;
}

model::Object Store::DeleteObject(Kind kind, std::string_view namespace_name, std::string_view name,
                                  const Preconditions& preconditions) {
  switch (kind) {
    case Kind::kPod:
      return Delete<model::Pod>(namespace_name, name, preconditions);
    case Kind::kNode:
      return Delete<model::Node>(namespace_name, name, preconditions);
    case Kind::kPodDisruptionBudget:
      return Delete<model::PodDisruptionBudget>(namespace_name, name, preconditions);
    case Kind::kPriorityClass:
      return Delete<model::PriorityClass>(namespace_name, name, preconditions);
    case Kind::kNamespace:
      return Delete<model::Namespace>(namespace_name, name, preconditions);
  }
  throw StoreError(ErrorCode::kInvalid, "DeleteObject: unknown kind");
}

template <class T>
std::shared_ptr<const T> Store::Get(std::string_view namespace_name, std::string_view name) const {
  std::lock_guard lock(mu_);
  const auto& items = TableOf<T>().items;
  auto it = items.find(KeyIn<T>(namespace_name, name));
  return it == items.end() ? nullptr : *it;
}

template <class T>
std::vector<std::shared_ptr<const T>> Store::List(
    const std::function<bool(const T&)>& filter) const {
  std::vector<std::shared_ptr<const T>> out;
  {
    std::lock_guard lock(mu_);
    const auto& items = TableOf<T>().items;
    out.assign(items.begin(), items.end());
  }
  // The filter runs unlocked so it may call back into the store.
  if (filter) std::erase_if(out, [&](const auto& object) { return !filter(*object); });
  return out;
}

size_t Store::Count(Kind kind) const {
  std::lock_guard lock(mu_);
  switch (kind) {
    case Kind::kPod:
      return pods_.items.size();
    case Kind::kNode:
      return nodes_.items.size();
    case Kind::kPodDisruptionBudget:
      return pdbs_.items.size();
    case Kind::kPriorityClass:
      return classes_.items.size();
    case Kind::kNamespace:
      return namespaces_.items.size();
  }
  return 0;
}

uint64_t Store::resource_version() const {
  std::lock_guard lock(mu_);
  return rv_;
}

#define SCHEDHOST_STORE_INSTANTIATE(T)                                                       \
  template std::shared_ptr<const T> Store::Delete<T>(std::string_view, std::string_view,     \
                                                     const Preconditions&);                  \
  template std::shared_ptr<const T> Store::Get<T>(std::string_view, std::string_view) const; \
  template std::vector<std::shared_ptr<const T>> Store::List<T>(                             \
      const std::function<bool(const T&)>&) const;
SCHEDHOST_STORE_INSTANTIATE(model::Pod)
SCHEDHOST_STORE_INSTANTIATE(model::Node)
SCHEDHOST_STORE_INSTANTIATE(model::PodDisruptionBudget)
SCHEDHOST_STORE_INSTANTIATE(model::PriorityClass)
SCHEDHOST_STORE_INSTANTIATE(model::Namespace)
#undef SCHEDHOST_STORE_INSTANTIATE

}  // namespace schedhost::store
