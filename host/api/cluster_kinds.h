// Helpers shared by the Cluster service's files: proto kinds to store kinds and model types,
// and request validation errors in the "field: reason" form.
#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include <grpcpp/support/status.h>

#include "host/store/event.h"
#include "schedhost/v1/cluster.pb.h"

namespace schedhost::api::internal {

// Invalid is INVALID_ARGUMENT with `message` ("field: reason").
inline grpc::Status Invalid(const std::string& message) {
  return {grpc::StatusCode::INVALID_ARGUMENT, message};
}

// StoreKind maps a proto kind to the store's; nullopt for KIND_UNSPECIFIED and unknown values.
std::optional<store::Kind> StoreKind(int kind);

// ProtoKind maps a store kind to the proto's.
v1::Kind ProtoKind(store::Kind kind);

// CheckKind returns an INVALID_ARGUMENT naming `field` unless `kind` is a known kind.
grpc::Status CheckKind(int kind, const char* field, std::optional<store::Kind>& out);

// CheckName returns INVALID_ARGUMENT unless `name` (field `field`) is a valid object name;
// `required` refuses "".
grpc::Status CheckName(const std::string& name, const char* field, bool required);

// CheckNamespace returns INVALID_ARGUMENT unless `ns` is "" or a valid namespace name.
grpc::Status CheckNamespace(const std::string& ns, const char* field);

// WithType calls fn(std::type_identity<T>{}) with T the model type of `kind`.
template <class Fn>
decltype(auto) WithType(store::Kind kind, Fn&& fn) {
  switch (kind) {
    case store::Kind::kPod: return fn(std::type_identity<model::Pod>{});
    case store::Kind::kNode: return fn(std::type_identity<model::Node>{});
    case store::Kind::kPodDisruptionBudget:
      return fn(std::type_identity<model::PodDisruptionBudget>{});
    case store::Kind::kPriorityClass: return fn(std::type_identity<model::PriorityClass>{});
    case store::Kind::kNamespace: break;
  }
  return fn(std::type_identity<model::Namespace>{});
}

}  // namespace schedhost::api::internal
