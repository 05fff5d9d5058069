// ClusterService: Apply, Delete, Get and List (Watch lives in cluster_watch.cc).
#include "host/api/cluster_service.h"

#include <string>
#include <vector>

#include "host/api/cluster_kinds.h"
#include "host/api/encode.h"
#include "host/api/label_selector.h"
#include "host/model/validation.h"

namespace schedhost::api {
namespace internal {

std::optional<store::Kind> StoreKind(int kind) {
  switch (kind) {
    case v1::NODE: return store::Kind::kNode;
    case v1::POD: return store::Kind::kPod;
    case v1::POD_DISRUPTION_BUDGET: return store::Kind::kPodDisruptionBudget;
    case v1::PRIORITY_CLASS: return store::Kind::kPriorityClass;
    case v1::NAMESPACE: return store::Kind::kNamespace;
    default: return std::nullopt;
  }
}

v1::Kind ProtoKind(store::Kind kind) {
  switch (kind) {
    case store::Kind::kNode: return v1::NODE;
    case store::Kind::kPod: return v1::POD;
    case store::Kind::kPodDisruptionBudget: return v1::POD_DISRUPTION_BUDGET;
    case store::Kind::kPriorityClass: return v1::PRIORITY_CLASS;
    case store::Kind::kNamespace: return v1::NAMESPACE;
  }
  return v1::KIND_UNSPECIFIED;
}

grpc::Status CheckKind(int kind, const char* field, std::optional<store::Kind>& out) {
  out = StoreKind(kind);
  if (out) return grpc::Status::OK;
  return Invalid(std::string(field) + ": " +
                 (kind == v1::KIND_UNSPECIFIED ? std::string("required")
                                               : "unknown value " + std::to_string(kind)) +
                 " (one of NODE, POD, POD_DISRUPTION_BUDGET, PRIORITY_CLASS, NAMESPACE)");
}

grpc::Status CheckName(const std::string& name, const char* field, bool required) {
  if (name.empty()) {
    return required ? Invalid(std::string(field) + ": required") : grpc::Status::OK;
  }
  if (auto why = model::CheckDnsSubdomain(name)) {
    return Invalid(std::string(field) + ": invalid value \"" + name + "\": " + *why);
  }
  return grpc::Status::OK;
}

// A Kubernetes namespace is an RFC 1123 label, stricter than an object name.
grpc::Status CheckNamespace(const std::string& ns, const char* field) {
  if (ns.empty()) return grpc::Status::OK;
  if (auto why = model::CheckDnsLabel(ns)) {
    return Invalid(std::string(field) + ": invalid value \"" + ns + "\": " + *why);
  }
  return grpc::Status::OK;
}

}  // namespace internal

namespace {

// A uid is a UUID (36 characters); anything much longer is not one.
constexpr size_t kMaxUidBytes = 128;

using internal::CheckKind;
using internal::CheckName;
using internal::CheckNamespace;
using internal::Invalid;

// KeepServerOwned fills what an update from a manifest leaves to the host, as the API server
// ignores status on the main resource: a pod's nomination (the scheduler's). Immutable spec
// fields the manifest leaves out are kept by the store itself.
template <class Data, class T>
void KeepServerOwned(Data& data, const T& current) {
  if constexpr (std::is_same_v<T, model::Pod>) {
    const model::PodData& cur = current.data();
    if (data.status.nominated_node_name.empty()) {
      data.status.nominated_node_name = cur.status.nominated_node_name;
    }
    // The same defaults the store applies (see Store::Update), so UNCHANGED is decided on what
    // the update would store.
    if (data.spec.node_name.empty()) data.spec.node_name = cur.spec.node_name;
    if (data.spec.priority_class_name.empty()) {
      data.spec.priority_class_name = cur.spec.priority_class_name;
    }
    if (!data.spec.priority) data.spec.priority = cur.spec.priority;
    if (!data.spec.preemption_policy) data.spec.preemption_policy = cur.spec.preemption_policy;
  }
}

template <class T>
grpc::Status ApplyTyped(store::Store& store, const T& decoded, const std::string& what,
                        const std::string& manifest, v1::ApplyResponse* response) {
  auto data = decoded.data();
  // The decoder generates a uid when the manifest has none; a generated (random v4) uid cannot
  // occur in the text, so its absence there tells the two apart. A given uid is a precondition.
  const bool uid_given = manifest.find(data.metadata.uid) != std::string::npos;
  if (!uid_given) data.metadata.uid.clear();
  const uint64_t read_rv = data.metadata.resource_version;
  // Two tries: a concurrent create or delete between the read and the write turns an update
  // into a create (or back) once, as kubectl apply would on retry.
  for (int attempt = 0;; ++attempt) {
    try {
      std::shared_ptr<const T> current =
          store.Get<T>(data.metadata.namespace_name, data.metadata.name);
      if (!current) {
        if (read_rv != 0) {
          return {grpc::StatusCode::NOT_FOUND,
                  what + " not found, but metadata.resourceVersion " + std::to_string(read_rv) +
                      " was given: leave it out to create the object"};
        }
        ToProto(model::Object(store.Create(data)), *response->mutable_object());
        response->set_result(v1::CREATED);
        return grpc::Status::OK;
      }
      auto candidate = data;
      KeepServerOwned(candidate, *current);
      const bool same_version = read_rv == 0 || read_rv == current->resource_version();
      const bool same_uid = !uid_given || data.metadata.uid == current->uid();
      if (same_version && same_uid &&
          EncodeJsonWithoutIdentity(model::Object(T::Make(candidate))) ==
              EncodeJsonWithoutIdentity(model::Object(current))) {
        ToProto(model::Object(current), *response->mutable_object());
        response->set_result(v1::UNCHANGED);
        return grpc::Status::OK;
      }
      if (!uid_given) candidate.metadata.uid.clear();
      ToProto(model::Object(store.Update(std::move(candidate))), *response->mutable_object());
      response->set_result(v1::CONFIGURED);
      return grpc::Status::OK;
    } catch (const store::StoreError& e) {
      const bool raced = e.code() == store::ErrorCode::kAlreadyExists ||
                         (e.code() == store::ErrorCode::kNotFound && read_rv == 0);
      if (attempt == 0 && raced) continue;
      return ToStatus(e);
    }
  }
}

}  // namespace

grpc::Status ToStatus(const store::StoreError& error) {
  grpc::StatusCode code = grpc::StatusCode::INTERNAL;
  switch (error.code()) {
    case store::ErrorCode::kNotFound: code = grpc::StatusCode::NOT_FOUND; break;
    case store::ErrorCode::kAlreadyExists: code = grpc::StatusCode::ALREADY_EXISTS; break;
    // gRPC's guidance for read-modify-write conflicts; the client re-reads and retries.
    case store::ErrorCode::kConflict: code = grpc::StatusCode::ABORTED; break;
    case store::ErrorCode::kInvalid: code = grpc::StatusCode::INVALID_ARGUMENT; break;
    case store::ErrorCode::kLimitExceeded: code = grpc::StatusCode::RESOURCE_EXHAUSTED; break;
    case store::ErrorCode::kSuperseded: code = grpc::StatusCode::ABORTED; break;
    case store::ErrorCode::kUnavailable: code = grpc::StatusCode::UNAVAILABLE; break;
    case store::ErrorCode::kForbidden: code = grpc::StatusCode::PERMISSION_DENIED; break;
  }
  return {code, error.what()};
}

void ToProto(const model::Object& object, v1::Object& out) {
  out.set_kind(internal::ProtoKind(store::KindOf(object)));
  out.set_namespace_(std::string(store::NamespaceOf(object)));
  out.set_name(std::string(store::NameOf(object)));
  out.set_uid(std::string(store::UidOf(object)));
  out.set_resource_version(store::VersionOf(object));
  out.set_manifest(EncodeJson(object));
}

ClusterService::ClusterService(store::Store& store) : store_(store) {}

grpc::Status ClusterService::Apply(grpc::ServerContext*, const v1::ApplyRequest* request,
                                   v1::ApplyResponse* response) {
  if (!read_only_.empty()) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, read_only_);
  }
  const std::string& manifest = request->manifest();
  if (manifest.empty()) return Invalid("manifest: required: one Kubernetes object, YAML or JSON");
  if (manifest.size() > kMaxManifestBytes) {
    return Invalid("manifest: " + std::to_string(manifest.size()) + " bytes; the limit is " +
                   std::to_string(kMaxManifestBytes));
  }
  std::vector<model::Object> objects;
  std::vector<model::GenericObject> generic;
  try {
    model::DecodeLimits limits;
    limits.max_input_bytes = kMaxManifestBytes;
    objects = model::DecodeManifests(manifest, "manifest", limits, &generic);
  } catch (const model::DecodeError& e) {
    return Invalid(e.what());
  }
  const size_t count = objects.size() + generic.size();
  if (count != 1) {
    return Invalid(count == 0 ? "manifest: holds no object"
                              : "manifest: holds " + std::to_string(count) +
                                    " objects; Apply takes exactly one");
  }
  if (!generic.empty()) return ApplyDeclared(generic.front(), response);
  const std::string what = store::Describe(objects.front());
  return std::visit(
      [&](const auto& ptr) { return ApplyTyped(store_, *ptr, what, manifest, response); },
      objects.front());
}

grpc::Status ClusterService::Delete(grpc::ServerContext*, const v1::DeleteRequest* request,
                                    v1::DeleteResponse* response) {
  if (!read_only_.empty()) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, read_only_);
  }
  std::optional<store::Kind> kind;
  if (request->kind() == v1::DECLARED) {
    for (const grpc::Status& s : {CheckName(request->name(), "name", true),
                                  CheckNamespace(request->namespace_(), "namespace")}) {
      if (!s.ok()) return s;
    }
    return DeleteDeclared(*request, response);
  }
  for (const grpc::Status& s :
       {CheckKind(request->kind(), "kind", kind), CheckName(request->name(), "name", true),
        CheckNamespace(request->namespace_(), "namespace")}) {
    if (!s.ok()) return s;
  }
  if (request->uid().size() > kMaxUidBytes) {
    return Invalid("uid: " + std::to_string(request->uid().size()) + " bytes; the limit is " +
                   std::to_string(kMaxUidBytes));
  }
  try {
    store::Preconditions pre{request->uid(), request->resource_version()};
    ToProto(store_.DeleteObject(*kind, request->namespace_(), request->name(), pre),
            *response->mutable_object());
    return grpc::Status::OK;
  } catch (const store::StoreError& e) {
    return ToStatus(e);
  }
}

grpc::Status ClusterService::Get(grpc::ServerContext*, const v1::GetRequest* request,
                                 v1::GetResponse* response) {
  std::optional<store::Kind> kind;
  if (request->kind() == v1::DECLARED) {
    for (const grpc::Status& s : {CheckName(request->name(), "name", true),
                                  CheckNamespace(request->namespace_(), "namespace")}) {
      if (!s.ok()) return s;
    }
    return GetDeclared(*request, response);
  }
  for (const grpc::Status& s :
       {CheckKind(request->kind(), "kind", kind), CheckName(request->name(), "name", true),
        CheckNamespace(request->namespace_(), "namespace")}) {
    if (!s.ok()) return s;
  }
  std::optional<model::Object> found = internal::WithType(*kind, [&](auto type) {
    using T = typename decltype(type)::type;
    std::shared_ptr<const T> p = store_.Get<T>(request->namespace_(), request->name());
    return p ? std::optional<model::Object>(p) : std::nullopt;
  });
  if (!found) {
    return {grpc::StatusCode::NOT_FOUND,
            std::string(store::ToString(*kind)) + " " +
                store::ObjectKey(*kind, request->namespace_(), request->name()) + " not found"};
  }
  ToProto(*found, *response->mutable_object());
  return grpc::Status::OK;
}

grpc::Status ClusterService::List(grpc::ServerContext*, const v1::ListRequest* request,
                                  v1::ListResponse* response) {
  std::optional<store::Kind> kind;
  const bool declared = request->kind() == v1::DECLARED;
  for (const grpc::Status& s :
       {declared ? grpc::Status::OK : CheckKind(request->kind(), "kind", kind),
        CheckNamespace(request->namespace_(), "namespace")}) {
    if (!s.ok()) return s;
  }
  if (request->label_selector().size() > kMaxSelectorBytes) {
    return Invalid("label_selector: " + std::to_string(request->label_selector().size()) +
                   " bytes; the limit is " + std::to_string(kMaxSelectorBytes));
  }
  LabelSelector selector;
  try {
    selector = ParseLabelSelector(request->label_selector());
  } catch (const SelectorError& e) {
    return Invalid(std::string("label_selector: ") + e.what());
  }
  if (declared) return ListDeclared(*request, selector, response);
  const std::string& ns = store::Namespaced(*kind) ? request->namespace_() : std::string();
  // Read before listing: a watch from this version may repeat a change the list already shows,
  // but never misses one.
  response->set_resource_version(store_.resource_version());
  internal::WithType(*kind, [&](auto type) {
    using T = typename decltype(type)::type;
    auto items = store_.List<T>([&](const T& obj) {
      if (!ns.empty() && obj.namespace_name() != ns) return false;
      if constexpr (std::is_same_v<T, model::Pod>) {
        return selector.Matches(obj.labels());  // a pod's labels are interned, not kept as data
      } else {
        return selector.Matches(obj.metadata().labels);
      }
    });
    for (const auto& item : items) ToProto(model::Object(item), *response->add_items());
  });
  return grpc::Status::OK;
}

void ClusterService::Shutdown() { shutting_down_ = true; }

}  // namespace schedhost::api
