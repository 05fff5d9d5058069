#include "host/model/decode_api.h"

#include <nlohmann/json.hpp>

#include <string>

#include "host/model/decode_util.h"
#include "host/model/validation.h"
#include "host/model/validation_util.h"
#include "host/model/yaml_tree.h"

namespace schedhost::model {
namespace {

using internal::YamlDocument;
using internal::YamlNode;

// Tree builds the decoder's document tree from parsed JSON: strings are quoted scalars (never
// numbers or booleans), numbers and booleans plain scalars as JSON wrote them.
class Tree {
 public:
  explicit Tree(YamlDocument* doc) : doc_(doc) {}

  const YamlNode* Build(const nlohmann::json& value, int depth) {
    YamlNode& node = doc_->nodes.emplace_back();
    switch (value.type()) {
      case nlohmann::json::value_t::object:
        node.kind = YamlNode::Kind::kMap;
        node.entries.reserve(value.size());
        for (const auto& [key, item] : value.items()) {
          // Opaque to the model or never read: the caller keeps the resource version.
          if (depth == 1 && (key == "managedFields" || key == "resourceVersion")) continue;
          YamlNode& k = doc_->nodes.emplace_back();
          k.kind = YamlNode::Kind::kScalar;
          k.quoted = true;
          k.scalar = key;
          node.entries.emplace_back(&k, Build(item, depth + 1));
        }
        break;
      case nlohmann::json::value_t::array:
        node.kind = YamlNode::Kind::kSequence;
        node.items.reserve(value.size());
        for (const auto& item : value) node.items.push_back(Build(item, depth + 1));
        break;
      case nlohmann::json::value_t::string:
        node.kind = YamlNode::Kind::kScalar;
        node.quoted = true;
        node.scalar = value.get_ref<const std::string&>();
        break;
      case nlohmann::json::value_t::null:
      case nlohmann::json::value_t::discarded:
        node.kind = YamlNode::Kind::kNull;
        break;
      default:  // numbers and booleans, as JSON spells them
        node.kind = YamlNode::Kind::kScalar;
        node.scalar = value.dump();
        break;
    }
    return &node;
  }

 private:
  YamlDocument* doc_;
};

std::string Identity(const nlohmann::json& object, std::string_view kind) {
  std::string out(kind);
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return out;
  auto text = [&](const char* key) {
    auto it = meta->find(key);
    return it != meta->end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  const std::string ns = text("namespace");
  out += " " + (ns.empty() ? text("name") : ns + "/" + text("name"));
  return out;
}

template <class Data>
Data Checked(Data data, std::optional<FieldError> (*validate)(const Data&)) {
  if (auto error = validate(data)) internal::Fail(error->path, error->reason);
  return data;
}

}  // namespace

ApiObject DecodeApiObject(const nlohmann::json& object, ApiKind kind) {
  static constexpr std::string_view kNames[] = {"Pod", "Node", "PodDisruptionBudget",
                                                "PriorityClass", "Namespace"};
  const std::string_view name = kNames[static_cast<int>(kind)];
  if (!object.is_object()) {
    throw DecodeError("api", 0, std::string(name), "", "expected a JSON object");
  }
  YamlDocument doc;
  doc.root = Tree(&doc).Build(object, 0);
  try {
    internal::MapReader top(doc.root, "");
    switch (kind) {
      case ApiKind::kPod: {
        PodData data = internal::DecodePod(top);
        ApplyPodDefaults(data);
        return Checked(std::move(data), &ValidatePod);
      }
      case ApiKind::kNode: {
        NodeData data = internal::DecodeNode(top);
        ApplyNodeDefaults(data);
        return Checked(std::move(data), &ValidateNode);
      }
      case ApiKind::kPodDisruptionBudget: {
        PodDisruptionBudgetData data = internal::DecodePdb(top);
        ApplyPdbDefaults(data);
        return Checked(std::move(data), &ValidatePdb);
      }
      case ApiKind::kPriorityClass: {
        PriorityClassData data = internal::DecodePriorityClass(top);
        data.metadata.namespace_name.clear();
        return Checked(std::move(data), &ValidatePriorityClass);
      }
      case ApiKind::kNamespace: {
        NamespaceData data = internal::DecodeNamespace(top);
        ApplyNamespaceDefaults(data);
        return Checked(std::move(data), &ValidateNamespace);
      }
    }
  } catch (internal::ValidationFailure& failure) {
    throw DecodeError("api", 0, Identity(object, name), std::move(failure.error.path),
                      std::move(failure.error.reason));
  }
  throw DecodeError("api", 0, std::string(name), "", "unknown kind");
}

}  // namespace schedhost::model
