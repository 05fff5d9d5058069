#include "host/store/event.h"

#include <type_traits>
#include <variant>

#include "host/store/store_error.h"

namespace schedhost::store {

std::string_view ToString(ErrorCode code) {
  switch (code) {
    case ErrorCode::kNotFound:
      return "NotFound";
    case ErrorCode::kAlreadyExists:
      return "AlreadyExists";
    case ErrorCode::kConflict:
      return "Conflict";
    case ErrorCode::kInvalid:
      return "Invalid";
    case ErrorCode::kLimitExceeded:
      return "LimitExceeded";
    case ErrorCode::kSuperseded:
      return "Superseded";
    case ErrorCode::kUnavailable:
      return "Unavailable";
    case ErrorCode::kForbidden:
      return "Forbidden";
  }
  return "Unknown";
}

StoreError::StoreError(ErrorCode code, const std::string& message)
    : std::runtime_error(message), code_(code) {}

std::string_view ToString(Kind kind) {
  switch (kind) {
    case Kind::kPod:
      return "Pod";
    case Kind::kNode:
      return "Node";
    case Kind::kPodDisruptionBudget:
      return "PodDisruptionBudget";
    case Kind::kPriorityClass:
      return "PriorityClass";
    case Kind::kNamespace:
      return "Namespace";
  }
  return "Unknown";
}

std::string_view ToString(EventType type) {
  switch (type) {
    case EventType::kAdded:
      return "ADDED";
    case EventType::kModified:
      return "MODIFIED";
    case EventType::kDeleted:
      return "DELETED";
  }
  return "UNKNOWN";
}

Kind KindOf(const model::Object& object) {
  return std::visit(
      [](const auto& p) {
        using T = std::remove_const_t<typename std::decay_t<decltype(p)>::element_type>;
        if constexpr (std::is_same_v<T, model::Pod>) {
          return Kind::kPod;
        } else if constexpr (std::is_same_v<T, model::Node>) {
          return Kind::kNode;
        } else if constexpr (std::is_same_v<T, model::PodDisruptionBudget>) {
          return Kind::kPodDisruptionBudget;
        } else if constexpr (std::is_same_v<T, model::PriorityClass>) {
          return Kind::kPriorityClass;
        } else {
          static_assert(std::is_same_v<T, model::Namespace>);
          return Kind::kNamespace;
        }
      },
      object);
}

std::string ObjectKey(Kind kind, std::string_view namespace_name, std::string_view name) {
  if (!Namespaced(kind)) return std::string(name);
  std::string key(namespace_name.empty() ? std::string_view("default") : namespace_name);
  key += '/';
  key += name;
  return key;
}

std::string_view NameOf(const model::Object& object) {
  return std::visit([](const auto& p) -> std::string_view { return p->name(); }, object);
}

std::string_view NamespaceOf(const model::Object& object) {
  return std::visit([](const auto& p) -> std::string_view { return p->namespace_name(); }, object);
}

std::string_view UidOf(const model::Object& object) {
  return std::visit([](const auto& p) -> std::string_view { return p->uid(); }, object);
}

uint64_t VersionOf(const model::Object& object) {
  return std::visit([](const auto& p) { return p->resource_version(); }, object);
}

std::string KeyOf(const model::Object& object) {
  return ObjectKey(KindOf(object), NamespaceOf(object), NameOf(object));
}

std::string Describe(const model::Object& object) {
  return std::string(ToString(KindOf(object))) + " " + KeyOf(object);
}

}  // namespace schedhost::store
