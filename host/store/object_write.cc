#include "host/store/object_write.h"

#include <nlohmann/json.hpp>
#include <string>

#include "host/model/decode.h"
#include "host/model/decode_api.h"

namespace schedhost::store {
namespace {

using Json = nlohmann::json;

std::string Describe(const KindInfo& kind, std::string_view ns, std::string_view name) {
  return kind.kind + " " + (ns.empty() ? std::string(name) : std::string(ns) + "/" + std::string(name));
}

// ExpectedVersion reads metadata.resourceVersion of `object` as a precondition (0: none).
uint64_t ExpectedVersion(const Json& object, const std::string& what) {
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return 0;
  const auto rv = meta->find("resourceVersion");
  if (rv == meta->end() || rv->is_null()) return 0;
  const std::string text = rv->is_string() ? rv->get<std::string>() : rv->dump();
  const std::optional<uint64_t> v = ParseObjectVersion(text);
  if (!v) {
    throw StoreError(ErrorCode::kConflict, what + ": metadata.resourceVersion \"" + text +
                                                "\" is not a version this host handed out");
  }
  return *v;
}

Json Parse(std::string_view body, const std::string& what) {
  Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    throw StoreError(ErrorCode::kInvalid, what + ": the body is not a JSON object");
  }
  return j;
}

// CheckName refuses a body whose metadata.name or .namespace names another object.
void CheckIdentity(const Json& object, const KindInfo& kind, std::string_view ns,
                   std::string_view name, const std::string& what) {
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return;
  const auto n = meta->find("name");
  if (n != meta->end() && n->is_string() && n->get<std::string>() != name) {
    throw StoreError(ErrorCode::kInvalid,
                     what + ": the body's metadata.name is \"" + n->get<std::string>() + "\"");
  }
  const auto s = meta->find("namespace");
  if (kind.namespaced && s != meta->end() && s->is_string() && !s->get<std::string>().empty() &&
      s->get<std::string>() != ns) {
    throw StoreError(ErrorCode::kInvalid, what + ": the body's metadata.namespace is \"" +
                                              s->get<std::string>() + "\"");
  }
}

}  // namespace

std::shared_ptr<const StoredObject> WriteObject(ObjectStore& objects, const KindInfo& kind,
                                                ObjectWriteOp op, std::string_view namespace_name,
                                                std::string_view name, std::string_view body) {
  const std::string ns = !kind.namespaced          ? ""
                         : namespace_name.empty() ? "default"
                                                  : std::string(namespace_name);
  const std::string what = Describe(kind, ns, name);
  if (name.empty()) throw StoreError(ErrorCode::kInvalid, kind.kind + ": a name is required");
  if (op == ObjectWriteOp::kDelete) {
    auto gone = objects.Delete(kind.Key(), ns, name);
    if (gone == nullptr) throw StoreError(ErrorCode::kNotFound, what + " not found");
    return gone;
  }
  const Json request = Parse(body, what);
  CheckIdentity(request, kind, ns, name, what);
  const uint64_t expected = ExpectedVersion(request, what);
  const auto snapshot = objects.Snapshot();
  const KindObjects* table = snapshot->Find(kind.Key());
  const StoredObject* current = table == nullptr ? nullptr : table->Find(ns, name);
  if (op == ObjectWriteOp::kCreate) {
    if (current != nullptr) throw StoreError(ErrorCode::kAlreadyExists, what + " already exists");
  } else if (current == nullptr) {
    throw StoreError(ErrorCode::kNotFound, what + " not found");
  }
  Json stored = current != nullptr ? Json::parse(model::ValueTreeToJson(*current->tree)) : Json();
  Json result;
  switch (op) {
    case ObjectWriteOp::kCreate:
    case ObjectWriteOp::kUpdate:
      result = request;
      break;
    case ObjectWriteOp::kUpdateStatus:
      result = stored;
      if (request.contains("status")) {
        result["status"] = request["status"];
      } else {
        result.erase("status");
      }
      break;
    case ObjectWriteOp::kMergePatch:
      result = stored;
      result.merge_patch(request);
      break;
    case ObjectWriteOp::kMergePatchStatus: {
      result = stored;
      Json status_only = Json::object();
      if (request.contains("status")) status_only["status"] = request["status"];
      result.merge_patch(status_only);
      break;
    }
    case ObjectWriteOp::kDelete:
      break;
  }
  if (!result.is_object()) throw StoreError(ErrorCode::kInvalid, what + ": not an object");
  result["apiVersion"] = kind.ApiVersion();
  result["kind"] = kind.kind;
  auto tree = std::make_shared<const model::ValueNode>(model::ValueTreeFromJson(result, what));
  return objects.Apply(kind.Key(), ns, std::string(name), std::move(tree),
                       ObjectWrite{.expected_version = expected, .stamp = true});
}

}  // namespace schedhost::store
