// ClusterService for objects of declared kinds (kind DECLARED): the kinds loaded plugins declare
// live in the store's ObjectStore as value trees, keyed by kubectl's resource name
// ("podgroups.scheduling.x-k8s.io"). Apply keeps the manifest whole and lets the host own the
// identity (metadata.namespace, name, uid, resourceVersion); the other calls name the kind by
// `resource`. Watches have no history to replay: 0 starts from the current objects, the latest
// version resumes, anything else is OUT_OF_RANGE.
#include <cctype>

#include "host/api/cluster_kinds.h"
#include "host/api/cluster_service.h"
#include "host/api/label_selector.h"
#include "host/api/watch_stream.h"

namespace schedhost::api {
namespace {

using internal::Invalid;

std::string DeclaredList(const store::ObjectStore& objects) {
  std::string out;
  for (const store::KindInfo& k : objects.Kinds()) {
    out += (out.empty() ? "" : ", ") + k.Key() + " (" + k.ApiVersion() + " " + k.kind + ")";
  }
  return out.empty() ? "none" : out;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

model::Labels LabelsOf(const model::ValueNode& tree) {
  model::Labels out;
  const model::ValueNode* meta = tree.Find("metadata");
  const model::ValueNode* labels = meta == nullptr ? nullptr : meta->Find("labels");
  if (labels == nullptr || labels->kind != SCHEDHOST_CONFIG_TABLE) return out;
  for (const model::ValueNode& l : labels->children) {
    if (l.kind == SCHEDHOST_CONFIG_STRING) out.emplace_back(l.key, l.string_value);
  }
  return out;
}


}  // namespace

void ToProto(const std::string& key, const store::StoredObject& object, v1::Object& out) {
  out.set_kind(v1::DECLARED);
  out.set_resource(key);
  out.set_namespace_(object.namespace_name);
  out.set_name(object.name);
  out.set_uid(object.uid);
  out.set_resource_version(object.resource_version);
  out.set_manifest(object.tree ? model::ValueTreeToJson(*object.tree) : "{}");
}

grpc::Status ClusterService::Declared(const std::string& resource, const char* field,
                                      store::KindInfo& out) const {
  if (resource.empty()) {
    return Invalid(std::string(field) + ": required for kind DECLARED (e.g. \"podgroups." +
                   "scheduling.x-k8s.io\"); declared: " + DeclaredList(store_.objects()));
  }
  // kubectl's spellings: plural.group (the key), plural, singular (the kind in lower case), the
  // kind, each unqualified one only when one declared kind answers to it.
  std::optional<store::KindInfo> kind = store_.objects().FindKey(resource);
  if (!kind) {
    const std::string lower = Lower(resource);
    int matches = 0;
    for (const store::KindInfo& k : store_.objects().Kinds()) {
      const std::string singular = Lower(k.kind);
      const std::string group = k.group.empty() ? "" : "." + k.group;
      if (lower == k.resource || lower == singular || lower == singular + group ||
          lower == Lower(k.Key())) {
        ++matches;
        kind = k;
      }
    }
    if (matches > 1) {
      return Invalid(std::string(field) + ": \"" + resource +
                     "\" names more than one declared kind; qualify it with its group (" +
                     DeclaredList(store_.objects()) + ")");
    }
  }
  if (!kind) {
    return Invalid(std::string(field) + ": no loaded plugin declares the kind \"" + resource +
                   "\"; declared: " + DeclaredList(store_.objects()));
  }
  out = std::move(*kind);
  return grpc::Status::OK;
}

grpc::Status ClusterService::ApplyDeclared(const model::GenericObject& object,
                                           v1::ApplyResponse* response) {
  const std::optional<store::KindInfo> kind =
      store_.objects().FindKind(object.api_version, object.kind);
  if (!kind) {
    return Invalid("manifest: document 1 (" + object.Describe() + "): kind: unsupported kind \"" +
                   object.kind + "\" of apiVersion \"" + object.api_version + "\"; supported: " +
                   std::string(model::kBuiltinKinds) +
                   ", and the kinds the loaded plugins declare (" +
                   DeclaredList(store_.objects()) + ")");
  }
  if (!kind->namespaced && !object.namespace_name.empty()) {
    return Invalid("manifest: metadata.namespace: " + object.kind +
                   " is cluster-scoped and has no namespace (got \"" + object.namespace_name +
                   "\")");
  }
  if (grpc::Status s = internal::CheckName(object.name, "manifest: metadata.name", true); !s.ok()) {
    return s;
  }
  if (grpc::Status s = internal::CheckNamespace(object.namespace_name, "manifest: metadata.namespace");
      !s.ok()) {
    return s;
  }
  store::ObjectWrite write{.stamp = true};
  const std::string rv = model::MetadataString(*object.tree, "resourceVersion");
  if (!rv.empty()) {
    const std::optional<uint64_t> version = store::ParseObjectVersion(rv);
    if (!version) {
      return Invalid("manifest: metadata.resourceVersion: \"" + rv +
                     "\" is not a version this host handed out");
    }
    write.expected_version = *version;
  }
  const std::string ns = kind->namespaced && object.namespace_name.empty() ? "default"
                                                                           : object.namespace_name;
  try {
    const auto snapshot = store_.objects().Snapshot();
    const store::KindObjects* table = snapshot->Find(kind->Key());
    const store::StoredObject* current = table ? table->Find(ns, object.name) : nullptr;
    const std::string uid = model::MetadataString(*object.tree, "uid");
    if (current != nullptr && (write.expected_version == 0 ||
                               write.expected_version == current->resource_version) &&
        (uid.empty() || uid == current->uid)) {
      // UNCHANGED when the manifest says nothing new: compared without the identity fields,
      // with the namespace and name the host would stamp.
      model::ValueNode candidate = *object.tree;
      model::SetMetadataString(candidate, "name", object.name);
      if (kind->namespaced) model::SetMetadataString(candidate, "namespace", ns);
      if (model::ValueTreeToJson(candidate, true) == model::ValueTreeToJson(*current->tree, true)) {
        ToProto(kind->Key(), *current, *response->mutable_object());
        response->set_result(v1::UNCHANGED);
        return grpc::Status::OK;
      }
    }
    const auto stored = store_.objects().Apply(kind->Key(), ns, object.name, object.tree, write);
    ToProto(kind->Key(), *stored, *response->mutable_object());
    response->set_result(current == nullptr ? v1::CREATED : v1::CONFIGURED);
    return grpc::Status::OK;
  } catch (const store::StoreError& e) {
    return ToStatus(e);
  }
}

grpc::Status ClusterService::DeleteDeclared(const v1::DeleteRequest& request,
                                            v1::DeleteResponse* response) {
  store::KindInfo kind;
  if (grpc::Status s = Declared(request.resource(), "resource", kind); !s.ok()) return s;
  try {
    const auto gone = store_.objects().Delete(kind.Key(), request.namespace_(), request.name(),
                                              request.uid(), request.resource_version());
    if (gone == nullptr) {
      return {grpc::StatusCode::NOT_FOUND,
              kind.kind + " " +
                  (kind.namespaced ? (request.namespace_().empty() ? "default"
                                                                   : request.namespace_()) +
                                         "/"
                                   : "") +
                  request.name() + " not found"};
    }
    ToProto(kind.Key(), *gone, *response->mutable_object());
    return grpc::Status::OK;
  } catch (const store::StoreError& e) {
    return ToStatus(e);
  }
}

grpc::Status ClusterService::GetDeclared(const v1::GetRequest& request,
                                         v1::GetResponse* response) {
  store::KindInfo kind;
  if (grpc::Status s = Declared(request.resource(), "resource", kind); !s.ok()) return s;
  const std::string ns = !kind.namespaced               ? ""
                         : request.namespace_().empty() ? "default"
                                                        : request.namespace_();
  const auto snapshot = store_.objects().Snapshot();
  const store::KindObjects* table = snapshot->Find(kind.Key());
  const store::StoredObject* found = table ? table->Get(ns, request.name()) : nullptr;
  if (found == nullptr) {
    return {grpc::StatusCode::NOT_FOUND,
            kind.kind + " " + (ns.empty() ? "" : ns + "/") + request.name() + " not found"};
  }
  ToProto(kind.Key(), *found, *response->mutable_object());
  return grpc::Status::OK;
}

grpc::Status ClusterService::ListDeclared(const v1::ListRequest& request,
                                          const LabelSelector& selector,
                                          v1::ListResponse* response) {
  store::KindInfo kind;
  if (grpc::Status s = Declared(request.resource(), "resource", kind); !s.ok()) return s;
  // One snapshot: the version and the items agree.
  response->set_resource_version(store_.objects().resource_version());
  const auto snapshot = store_.objects().Snapshot();
  const store::KindObjects* table = snapshot->Find(kind.Key());
  if (table == nullptr) return grpc::Status::OK;
  const auto [first, last] = table->InNamespace(kind.namespaced ? request.namespace_() : "");
  for (auto it = first; it != last; ++it) {
    if (!selector.Matches(LabelsOf(*(*it)->tree))) continue;
    ToProto(kind.Key(), **it, *response->add_items());
  }
  return grpc::Status::OK;
}

grpc::Status ClusterService::WatchDeclared(grpc::ServerContext* context,
                                           const v1::WatchRequest& request,
                                           grpc::ServerWriter<v1::WatchEvent>* writer) {
  std::vector<store::KindInfo> kinds;
  for (int i = 0; i < request.resources_size(); ++i) {
    store::KindInfo kind;
    const std::string field = "resources[" + std::to_string(i) + "]";
    if (grpc::Status s = Declared(request.resources(i), field.c_str(), kind); !s.ok()) return s;
    kinds.push_back(std::move(kind));
  }
  const std::string& ns = request.namespace_();
  if (grpc::Status s = internal::CheckNamespace(ns, "namespace"); !s.ok()) return s;
  if (shutting_down_) return {grpc::StatusCode::UNAVAILABLE, "the host is shutting down"};

  auto stream = std::make_shared<internal::WatchStream<store::ObjectEvent>>();
  auto wanted = [kinds, ns](const std::string& key, const store::StoredObject& o) {
    for (const store::KindInfo& k : kinds) {
      if (k.Key() == key) return !k.namespaced || ns.empty() || o.namespace_name == ns;
    }
    return false;
  };
  // Watch first, then read the state: an event between the two is in both, and the version
  // check below drops the older copy.
  const uint64_t id = store_.objects().Watch([stream, wanted](const store::ObjectEvent& e) {
    if (wanted(e.key, *e.object)) stream->Push(e);
  });
  const uint64_t from = request.resource_version();
  const uint64_t now = store_.objects().resource_version();
  const auto too_old = [from, now] {
    return grpc::Status(grpc::StatusCode::OUT_OF_RANGE,
                        "resource_version: " + std::to_string(from) +
                            " is not the latest version of the declared kinds (" +
                            std::to_string(now) +
                            ") and no history is kept for them; list again and watch from the "
                            "list's resource_version");
  };
  v1::WatchEvent out;
  auto send = [&](store::EventType type, const std::string& key, const store::StoredObject& o,
                  uint64_t version) {
    out.Clear();
    out.set_type(internal::ProtoEventType(type));
    out.set_resource_version(version);
    ToProto(key, o, *out.mutable_object());
    return writer->Write(out);
  };
  grpc::Status result = grpc::Status::OK;
  if (from != 0 && from != now) {
    result = too_old();
  } else {
    bool gone = false;
    if (from == 0) {
      const auto snapshot = store_.objects().Snapshot();
      for (const store::KindInfo& k : kinds) {
        const store::KindObjects* table = snapshot->Find(k.Key());
        for (size_t j = 0; table != nullptr && !gone && j < table->items().size(); ++j) {
          const auto& item = table->items()[j];
          if (wanted(k.Key(), *item)) {
            gone = !send(store::EventType::kAdded, k.Key(), *item, item->resource_version);
          }
        }
      }
    }
    const uint64_t sent = now;  // what the initial state (or the client) has seen
    if (!gone) {
      result = internal::PumpWatch(
          context, *stream, shutting_down_, too_old,
          "list again and watch from the list's resource_version",
          [&](const store::ObjectEvent& e) {
            if (e.resource_version <= sent) return true;  // already in the initial state
            return send(e.type, e.key, *e.object, e.resource_version);
          });
    }
  }
  store_.objects().Unwatch(id);
  return result;
}

}  // namespace schedhost::api
