// DecodeManifests: documents -> objects (with List support), defaults, validation, errors.
#include "host/model/decode.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "host/model/decode_util.h"
#include "host/model/validation.h"
#include "host/model/yaml_tree.h"

namespace schedhost::model {
namespace {

using internal::Fail;
using internal::MapReader;
using internal::YamlNode;

struct KindSpec {
  std::string_view kind;
  std::string_view api_version;
  bool namespaced;
  std::string_view list_kind;
  ApiKind api_kind;
};

// In ApiKind's order: kKinds[static_cast<int>(kind)] describes `kind`.
constexpr KindSpec kKinds[] = {
    {"Pod", "v1", true, "PodList", ApiKind::kPod},
    {"Node", "v1", false, "NodeList", ApiKind::kNode},
    {"PodDisruptionBudget", "policy/v1", true, "PodDisruptionBudgetList",
     ApiKind::kPodDisruptionBudget},
    {"PriorityClass", "scheduling.k8s.io/v1", false, "PriorityClassList", ApiKind::kPriorityClass},
    {"Namespace", "v1", false, "NamespaceList", ApiKind::kNamespace},
};


// FindScalar returns a scalar field of a map without failing on malformed input.
std::string FindScalar(const YamlNode* map, std::string_view key) {
  if (map == nullptr || map->kind != YamlNode::Kind::kMap) return "";
  for (const auto& [k, v] : map->entries) {
    if (k->kind == YamlNode::Kind::kScalar && k->scalar == key) {
      return v->kind == YamlNode::Kind::kScalar ? v->scalar : "";
    }
  }
  return "";
}

const YamlNode* FindField(const YamlNode* map, std::string_view key) {
  if (map == nullptr || map->kind != YamlNode::Kind::kMap) return nullptr;
  for (const auto& [k, v] : map->entries) {
    if (k->kind == YamlNode::Kind::kScalar && k->scalar == key) return v;
  }
  return nullptr;
}

// Identity renders "<Kind> <namespace>/<name>" (or "<Kind> <name>") as far as it is known.
std::string Identity(const YamlNode* object, const KindSpec& spec) {
  const YamlNode* meta = FindField(object, "metadata");
  std::string name = FindScalar(meta, "name");
  std::string out(spec.kind);
  if (name.empty()) return out;
  if (!spec.namespaced) return out + " " + name;
  std::string ns = FindScalar(meta, "namespace");
  return out + " " + (ns.empty() ? "default" : ns) + "/" + name;
}

// Check turns a validation error into a failure, with the list item prefix when there is one.
void Check(std::optional<FieldError> error, const std::string& prefix) {
  if (error) Fail(prefix.empty() ? error->path : prefix + "." + error->path, error->reason);
}

// DecodeData reads one object of `kind` from `top` with its defaults and validates it (a
// failure's path starts with `prefix`, the list item it is in).
ApiObject DecodeData(const MapReader& top, ApiKind kind, const std::string& prefix) {
  switch (kind) {
    case ApiKind::kPod: {
      PodData data = internal::DecodePod(top);
      ApplyPodDefaults(data);
      Check(ValidatePod(data), prefix);
      return data;
    }
    case ApiKind::kNode: {
      NodeData data = internal::DecodeNode(top);
      ApplyNodeDefaults(data);
      Check(ValidateNode(data), prefix);
      return data;
    }
    case ApiKind::kPodDisruptionBudget: {
      PodDisruptionBudgetData data = internal::DecodePdb(top);
      ApplyPdbDefaults(data);
      Check(ValidatePdb(data), prefix);
      return data;
    }
    case ApiKind::kPriorityClass: {
      PriorityClassData data = internal::DecodePriorityClass(top);
      data.metadata.namespace_name.clear();
      Check(ValidatePriorityClass(data), prefix);
      return data;
    }
    case ApiKind::kNamespace: {
      NamespaceData data = internal::DecodeNamespace(top);
      ApplyNamespaceDefaults(data);
      Check(ValidateNamespace(data), prefix);
      return data;
    }
  }
  Fail(prefix, "unknown kind");
}

// Made turns decoded data into the object the store and the scheduler share.
Object Made(PodData data) { return Pod::Make(std::move(data)); }
Object Made(NodeData data) { return Node::Make(std::move(data)); }
Object Made(PodDisruptionBudgetData data) { return PodDisruptionBudget::Make(std::move(data)); }
Object Made(PriorityClassData data) { return PriorityClass::Make(std::move(data)); }
Object Made(NamespaceData data) { return Namespace::Make(std::move(data)); }

class Decoder {
 public:
  Decoder(std::string_view source, int document, std::vector<Object>* out,
          std::vector<GenericObject>* generic)
      : source_(source), document_(document), out_(out), generic_(generic) {}

  void DecodeRoot(const YamlNode* root) {
    if (root->kind != YamlNode::Kind::kMap) {
      throw DecodeError(
          source_, document_, "", "",
          "expected an object (a Kubernetes manifest), got " + internal::Describe(root));
    }
    DecodeObject(root, "", nullptr);
  }

 private:
  void DecodeObject(const YamlNode* node, const std::string& prefix, const KindSpec* item_kind) {
    std::string identity;
    try {
      MapReader top(node, prefix);
      std::string api_version = internal::ReadString(top.Get("apiVersion"), top.Path("apiVersion"));
      std::string kind = internal::ReadString(top.Get("kind"), top.Path("kind"));
      // Items of typed lists (PodList, ...) may leave out their kind and apiVersion.
      if (item_kind != nullptr && kind.empty()) kind = item_kind->kind;
      if (item_kind != nullptr && api_version.empty() && kind == item_kind->kind) {
        api_version = item_kind->api_version;
      }
      if (kind.empty()) Fail(top.Path("kind"), "required");
      if (DecodeList(top, api_version, kind, item_kind != nullptr)) return;
      const KindSpec* spec = nullptr;
      for (const KindSpec& k : kKinds) {
        if (k.kind == kind) spec = &k;
      }
      if (spec == nullptr && generic_ != nullptr) {
        if (api_version.empty()) {
          Fail(top.Path("apiVersion"), "required (kind " + internal::Quote(kind) +
                                           " is not built in: its apiVersion says whose it is)");
        }
        // Named as GenericObject::Describe names it, for errors about its fields.
        const YamlNode* meta = FindField(node, "metadata");
        const std::string ns = FindScalar(meta, "namespace");
        identity = kind + " " + (ns.empty() ? "" : ns + "/") + FindScalar(meta, "name");
        const bool defaults = internal::CheckStorageObject(node, prefix, api_version, kind);
        generic_->push_back(internal::DecodeGeneric(node, prefix, api_version, kind));
        if (defaults) internal::DefaultStorageObject(generic_->back());
        generic_->back().source = source_;
        generic_->back().document = document_;
        return;
      }
      if (spec == nullptr) {
        Fail(top.Path("kind"),
             "unsupported kind " + internal::Quote(kind) + "; supported: " +
                 std::string(kBuiltinKinds) + ", or a v1 List of them");
      }
      identity = Identity(node, *spec);
      if (api_version.empty()) Fail(top.Path("apiVersion"), "required");
      if (api_version != spec->api_version) {
        Fail(top.Path("apiVersion"), "unsupported apiVersion " + internal::Quote(api_version) +
                                         " for kind " + std::string(spec->kind) + " (want \"" +
                                         std::string(spec->api_version) + "\")");
      }
      MakeObject(top, *spec, prefix);
    } catch (internal::ValidationFailure& failure) {
      throw DecodeError(source_, document_, identity, std::move(failure.error.path),
                        std::move(failure.error.reason));
    }
  }

  // DecodeList handles List kinds; returns false when `kind` is not a list.
  bool DecodeList(const MapReader& top, const std::string& api_version, const std::string& kind,
                  bool nested) {
    const KindSpec* element = nullptr;
    bool generic = kind == "List";
    for (const KindSpec& k : kKinds) {
      if (k.list_kind == kind) element = &k;
    }
    if (!generic && element == nullptr) return false;
    if (nested) Fail(top.Path("kind"), "a List may not contain another List");
    std::string_view want = generic ? "v1" : element->api_version;
    if (api_version != want) {
      Fail(top.Path("apiVersion"), "unsupported apiVersion " + internal::Quote(api_version) +
                                       " for kind " + kind + " (want \"" + std::string(want) +
                                       "\")");
    }
    internal::ReadList(top.Get("items"), top.Path("items"),
                       [&](const YamlNode* item, const std::string& item_path) {
                         if (item->kind != YamlNode::Kind::kMap) {
                           Fail(item_path, "expected an object, got " + internal::Describe(item));
                         }
                         DecodeObject(item, item_path, generic ? &kGenericItem : element);
                       });
    return true;
  }

  void MakeObject(const MapReader& top, const KindSpec& spec, const std::string& prefix) {
    out_->push_back(
        std::visit([](auto&& data) { return Made(std::forward<decltype(data)>(data)); },
                   DecodeData(top, spec.api_kind, prefix)));
  }

  // Items of a generic List carry their own kind; this marks "inside a list" only.
  static constexpr KindSpec kGenericItem = {"", "", false, "", ApiKind::kPod};

  std::string source_;
  int document_;
  std::vector<Object>* out_;
  std::vector<GenericObject>* generic_;  // null: untyped kinds are refused
};

}  // namespace

namespace internal {

ApiObject DecodeApiTree(const YamlNode* root, ApiKind kind) {
  const KindSpec& spec = kKinds[static_cast<int>(kind)];
  try {
    return DecodeData(MapReader(root, ""), kind, "");
  } catch (ValidationFailure& failure) {
    throw DecodeError("api", 0, Identity(root, spec), std::move(failure.error.path),
                      std::move(failure.error.reason));
  }
}

}  // namespace internal

DecodeError::DecodeError(std::string source, int document, std::string object, std::string path,
                         std::string reason, int line)
    : std::runtime_error([&] {
        std::string what = source;
        if (document > 0) what += ": document " + std::to_string(document);
        if (!object.empty()) what += " (" + object + ")";
        if (line > 0) what += ": line " + std::to_string(line);
        if (!path.empty()) what += ": " + path;
        return what + ": " + reason;
      }()),
      source_(std::move(source)),
      document_(document),
      object_(std::move(object)),
      path_(std::move(path)),
      reason_(std::move(reason)),
      line_(line) {}

std::vector<Object> DecodeManifests(std::string_view text, std::string_view source_name,
                                    const DecodeLimits& limits) {
  return DecodeManifests(text, source_name, limits, nullptr);
}

std::vector<Object> DecodeManifests(std::string_view text, std::string_view source_name,
                                    const DecodeLimits& limits,
                                    std::vector<GenericObject>* generic) {
  std::string source(source_name);
  if (text.size() > limits.max_input_bytes) {
    throw DecodeError(source, 0, "", "",
                      "input is " + std::to_string(text.size()) + " bytes; the limit is " +
                          std::to_string(limits.max_input_bytes));
  }
  std::vector<Object> out;
  internal::YamlStream stream(text, limits.max_document_nodes, limits.max_document_scalar_bytes);
  internal::YamlDocument doc;
  for (int index = 1;; ++index) {
    try {
      if (!stream.Next(&doc)) break;
    } catch (const internal::YamlError& e) {
      throw DecodeError(source, index, "", "", e.what(), e.line);
    }
    if (static_cast<size_t>(index) > limits.max_documents) {
      throw DecodeError(
          source, index, "", "",
          "too many documents (the limit is " + std::to_string(limits.max_documents) + ")");
    }
    if (doc.root == nullptr || doc.root->kind == YamlNode::Kind::kNull) continue;
    Decoder(source, index, &out, generic).DecodeRoot(doc.root);
  }
  return out;
}

std::vector<Object> DecodeFile(const std::string& path, const DecodeLimits& limits) {
  return DecodeFile(path, limits, nullptr);
}

std::vector<Object> DecodeFile(const std::string& path, const DecodeLimits& limits,
                               std::vector<GenericObject>* generic) {
  std::error_code ec;
  uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw DecodeError(path, 0, "", "", "cannot read file: " + ec.message());
  if (size > limits.max_input_bytes) {
    throw DecodeError(path, 0, "", "",
                      "file is " + std::to_string(size) + " bytes; the limit is " +
                          std::to_string(limits.max_input_bytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw DecodeError(path, 0, "", "", std::string("cannot open file: ") + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw DecodeError(path, 0, "", "", "cannot read file: I/O error");
  return DecodeManifests(buffer.str(), path, limits, generic);
}

}  // namespace schedhost::model
