// Objects of kinds the model does not type (the API kinds plugins declare) as value trees: from a
// manifest's YAML (schedctl apply, simulate -f) and from the API server's JSON (Kubernetes mode).
// Scalars follow JSON's types as the API server would read the manifest: a quoted scalar is a
// string; plain true/false are booleans, plain integers integers, plain decimals floats, plain
// null (or ~, or nothing) is no value at all.
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "host/model/decode.h"
#include "host/model/decode_api.h"
#include "host/model/decode_util.h"

namespace schedhost::model {
namespace internal {
namespace {

// kMaxDepth bounds nesting, so that a hostile document cannot exhaust the stack.
constexpr int kMaxDepth = 64;

bool IsPlainInt(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  std::string_view digits = s;
  if (digits.front() == '+') digits.remove_prefix(1);
  const char* first = digits.data();
  const char* last = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(first, last, *out);
  return ec == std::errc() && ptr == last;
}

bool IsPlainFloat(std::string_view s, double* out) {
  if (s.empty()) return false;
  if (s == ".inf" || s == "+.inf" || s == ".Inf" || s == ".INF") {
    *out = HUGE_VAL;
    return true;
  }
  if (s == "-.inf" || s == "-.Inf" || s == "-.INF") {
    *out = -HUGE_VAL;
    return true;
  }
  std::string_view digits = s.front() == '+' ? s.substr(1) : s;
  const char* last = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), last, *out);
  return ec == std::errc() && ptr == last;
}

class TreeBuilder {
 public:
  explicit TreeBuilder(std::string object) : object_(std::move(object)) {}

  // Build converts `node` (at `path`) into *out; false when the value is absent (null).
  bool Build(const YamlNode* node, const std::string& path, int depth, ValueNode* out) {
    if (depth > kMaxDepth) Fail(path, "nested deeper than " + std::to_string(kMaxDepth) + " levels");
    out->location = object_;
    switch (node == nullptr ? YamlNode::Kind::kNull : node->kind) {
      case YamlNode::Kind::kNull:
        return false;
      case YamlNode::Kind::kScalar:
        Scalar(*node, out);
        return true;
      case YamlNode::Kind::kSequence: {
        out->kind = SCHEDHOST_CONFIG_ARRAY;
        out->children.reserve(node->items.size());
        for (size_t i = 0; i < node->items.size(); ++i) {
          ValueNode child;
          const std::string child_path = path + "[" + std::to_string(i) + "]";
          Build(node->items[i], child_path, depth + 1, &child);  // a null stays: indexes hold
          out->children.push_back(std::move(child));
        }
        return true;
      }
      case YamlNode::Kind::kMap: {
        out->kind = SCHEDHOST_CONFIG_TABLE;
        MapReader reader(node, path);
        out->children.reserve(reader.entries().size());
        for (const auto& [key, value] : reader.entries()) {
          ValueNode child;
          if (!Build(value, reader.Path(key), depth + 1, &child)) continue;
          child.key = std::string(key);
          out->children.push_back(std::move(child));
        }
        return true;
      }
    }
    return false;
  }

 private:
  static void Scalar(const YamlNode& node, ValueNode* out) {
    const std::string& s = node.scalar;
    if (!node.quoted) {
      if (s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" ||
          s == "FALSE") {
        out->kind = SCHEDHOST_CONFIG_BOOL;
        out->bool_value = s.front() == 't' || s.front() == 'T';
        return;
      }
      if (IsPlainInt(s, &out->int_value)) {
        out->kind = SCHEDHOST_CONFIG_INT;
        return;
      }
      if (s.find_first_of("0123456789") != std::string::npos && IsPlainFloat(s, &out->float_value)) {
        out->kind = SCHEDHOST_CONFIG_FLOAT;
        return;
      }
    }
    out->kind = SCHEDHOST_CONFIG_STRING;
    out->string_value = s;
  }

  std::string object_;
};

void FromJson(const nlohmann::json& j, const std::string& object, const std::string& path,
              int depth, ValueNode* out) {
  if (depth > kMaxDepth) {
    throw std::invalid_argument(path + ": nested deeper than " + std::to_string(kMaxDepth) +
                                " levels");
  }
  out->location = object;
  switch (j.type()) {
    case nlohmann::json::value_t::object:
      out->kind = SCHEDHOST_CONFIG_TABLE;
      out->children.reserve(j.size());
      for (const auto& [key, value] : j.items()) {
        if (value.is_null()) continue;
        ValueNode child;
        child.key = key;
        FromJson(value, object, path.empty() ? key : path + "." + key, depth + 1, &child);
        out->children.push_back(std::move(child));
      }
      return;
    case nlohmann::json::value_t::array:
      out->kind = SCHEDHOST_CONFIG_ARRAY;
      out->children.resize(j.size());
      for (size_t i = 0; i < j.size(); ++i) {
        FromJson(j[i], object, path + "[" + std::to_string(i) + "]", depth + 1, &out->children[i]);
      }
      return;
    case nlohmann::json::value_t::string:
      out->kind = SCHEDHOST_CONFIG_STRING;
      out->string_value = j.get<std::string>();
      return;
    case nlohmann::json::value_t::boolean:
      out->kind = SCHEDHOST_CONFIG_BOOL;
      out->bool_value = j.get<bool>();
      return;
    case nlohmann::json::value_t::number_integer:
      out->kind = SCHEDHOST_CONFIG_INT;
      out->int_value = j.get<int64_t>();
      return;
    case nlohmann::json::value_t::number_unsigned: {
      const uint64_t u = j.get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) {
        out->kind = SCHEDHOST_CONFIG_INT;
        out->int_value = static_cast<int64_t>(u);
      } else {
        out->kind = SCHEDHOST_CONFIG_FLOAT;
        out->float_value = static_cast<double>(u);
      }
      return;
    }
    case nlohmann::json::value_t::number_float:
      out->kind = SCHEDHOST_CONFIG_FLOAT;
      out->float_value = j.get<double>();
      return;
    default:
      out->kind = SCHEDHOST_CONFIG_NONE;  // null inside an array, or binary
      return;
  }
}

}  // namespace

GenericObject DecodeGeneric(const YamlNode* object, const std::string& prefix,
                            const std::string& api_version, const std::string& kind) {
  MapReader top(object, prefix);
  MapReader meta(top.Get("metadata"), top.Path("metadata"));
  GenericObject out;
  out.api_version = api_version;
  out.kind = kind;
  out.name = ReadString(meta.Get("name"), meta.Path("name"));
  if (out.name.empty()) Fail(meta.Path("name"), "required");
  out.namespace_name = ReadString(meta.Get("namespace"), meta.Path("namespace"));
  auto tree = std::make_shared<ValueNode>();
  TreeBuilder(out.Describe()).Build(object, prefix, 0, tree.get());
  out.tree = std::move(tree);
  return out;
}

std::string ValueJson(const YamlNode* node, const std::string& path) {
  ValueNode tree;
  TreeBuilder("").Build(node, path, 0, &tree);
  return ValueTreeToJson(tree);
}

}  // namespace internal

std::string GenericObject::Describe() const {
  return kind + " " + (namespace_name.empty() ? name : namespace_name + "/" + name);
}

ValueNode ValueTreeFromJson(const std::string& json_text, std::string_view object) {
  return ValueTreeFromJson(nlohmann::json::parse(json_text), object);
}

ValueNode ValueTreeFromJson(const nlohmann::json& json, std::string_view object) {
  ValueNode root;
  internal::FromJson(json, std::string(object), "", 0, &root);
  return root;
}

namespace {

nlohmann::ordered_json ToJson(const ValueNode& node, bool root_without_identity, int depth) {
  switch (node.kind) {
    case SCHEDHOST_CONFIG_STRING: return node.string_value;
    case SCHEDHOST_CONFIG_INT: return node.int_value;
    case SCHEDHOST_CONFIG_FLOAT: return node.float_value;
    case SCHEDHOST_CONFIG_BOOL: return node.bool_value;
    case SCHEDHOST_CONFIG_ARRAY: {
      nlohmann::ordered_json out = nlohmann::ordered_json::array();
      for (const ValueNode& child : node.children) out.push_back(ToJson(child, false, depth + 1));
      return out;
    }
    case SCHEDHOST_CONFIG_TABLE: {
      nlohmann::ordered_json out = nlohmann::ordered_json::object();
      const bool metadata = root_without_identity && depth == 1;
      for (const ValueNode& child : node.children) {
        if (metadata && (child.key == "uid" || child.key == "resourceVersion" ||
                         child.key == "creationTimestamp" || child.key == "generation" ||
                         child.key == "managedFields")) {
          continue;
        }
        out[child.key] = ToJson(child, root_without_identity && depth == 0 &&
                                           child.key == "metadata", depth + 1);
      }
      return out;
    }
    default: return nullptr;
  }
}

}  // namespace

std::string ValueTreeToJson(const ValueNode& tree, bool without_identity) {
  return ToJson(tree, without_identity, 0).dump();
}

std::string MetadataString(const ValueNode& tree, std::string_view field) {
  const ValueNode* meta = tree.Find("metadata");
  const ValueNode* v = meta == nullptr ? nullptr : meta->Find(field);
  return v != nullptr && v->kind == SCHEDHOST_CONFIG_STRING ? v->string_value : "";
}

void SetMetadataString(ValueNode& tree, std::string_view field, std::string value) {
  if (tree.kind != SCHEDHOST_CONFIG_TABLE) return;
  ValueNode* meta = nullptr;
  for (ValueNode& child : tree.children) {
    if (child.key == "metadata" && child.kind == SCHEDHOST_CONFIG_TABLE) meta = &child;
  }
  if (meta == nullptr) {
    ValueNode m;
    m.kind = SCHEDHOST_CONFIG_TABLE;
    m.key = "metadata";
    m.location = tree.location;
    tree.children.push_back(std::move(m));
    meta = &tree.children.back();
  }
  for (ValueNode& child : meta->children) {
    if (child.key == field) {
      child.kind = SCHEDHOST_CONFIG_STRING;
      child.children.clear();
      child.string_value = std::move(value);
      return;
    }
  }
  ValueNode v;
  v.kind = SCHEDHOST_CONFIG_STRING;
  v.key = std::string(field);
  v.string_value = std::move(value);
  v.location = meta->location;
  meta->children.push_back(std::move(v));
}

}  // namespace schedhost::model
