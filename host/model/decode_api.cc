#include "host/model/decode_api.h"

#include <nlohmann/json.hpp>
#include <string>

#include "host/model/decode_util.h"
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

}  // namespace

ApiObject DecodeApiObject(const nlohmann::json& object, ApiKind kind) {
  if (!object.is_object()) {
    static constexpr std::string_view kNames[] = {"Pod", "Node", "PodDisruptionBudget",
                                                  "PriorityClass", "Namespace"};
    throw DecodeError("api", 0, std::string(kNames[static_cast<int>(kind)]), "",
                      "expected a JSON object");
  }
  YamlDocument doc;
  doc.root = Tree(&doc).Build(object, 0);
  return internal::DecodeApiTree(doc.root, kind);
}

}  // namespace schedhost::model
