// ArgsTree: an argument tree the plugin owns, read through the same Args and ArgsReader as
// plugin_config. For a file the plugin parses itself (convert its parser's tree into ArgsNodes,
// with each value's and key's "file:line:col") and for tests that build arguments by hand.
//
//   ArgsNode root{.kind = SCHEDHOST_CONFIG_TABLE};
//   root.children.push_back({.kind = SCHEDHOST_CONFIG_INT, .key = "weight", .int_value = 3,
//                            .location = "quotas.toml:1:10", .key_location = "quotas.toml:1:1"});
//   ArgsTree tree(std::move(root));
//   ArgsReader r = ArgsReader::Document(tree.root());
//   int64_t w = r.Int("weight");  // 3
#pragma once

#include <memory>
#include <schedhost/args.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace schedhost {

/// ArgsNode is one value of an ArgsTree; a table keeps its entries in the order given.
struct ArgsNode {
  int32_t kind = SCHEDHOST_CONFIG_NONE;  // a schedhost_config_kind
  std::string key = {};                  // the key in the parent table ("" in an array)
  std::vector<ArgsNode> children = {};   // a table's entries or an array's elements
  std::string string_value = {};
  int64_t int_value = 0;
  double float_value = 0;
  bool bool_value = false;
  std::string location = {};      // "file:line:col" of the value, "" when unknown
  std::string key_location = {};  // "file:line:col" of the key, "" when unknown
};

/// ArgsTree owns a tree of ArgsNodes and a host API table whose config_* entries (and nothing
/// else) read it, so root() works wherever plugin_config's Args does.
class ArgsTree {
 public:
  explicit ArgsTree(ArgsNode root)
      : root_(std::make_unique<ArgsNode>(std::move(root))),
        api_(std::make_unique<schedhost_host_api>()) {
    api_->struct_size = sizeof(schedhost_host_api);
    api_->abi_major = SCHEDHOST_ABI_MAJOR;
    api_->abi_minor = SCHEDHOST_ABI_MINOR;
    api_->config_kind = &Kind;
    api_->config_get = &Get;
    api_->config_len = &Len;
    api_->config_at = &At;
    api_->config_string = &String;
    api_->config_int = &Int;
    api_->config_float = &Float;
    api_->config_bool = &Bool;
    api_->config_location = &Location;
    api_->config_key_location = &KeyLocation;
  }

  /// root returns the top of the tree (valid while this object lives; moving keeps it valid).
  Args root() const noexcept { return Args(api_.get(), C(root_.get())); }

 private:
  static const ArgsNode* N(const schedhost_config* c) noexcept {
    return reinterpret_cast<const ArgsNode*>(c);
  }
  static const schedhost_config* C(const ArgsNode* n) noexcept {
    return reinterpret_cast<const schedhost_config*>(n);
  }
  static schedhost_str S(const std::string& s) noexcept { return {s.data(), s.size()}; }
  static bool IsContainer(const ArgsNode* n) noexcept {
    return n != nullptr && (n->kind == SCHEDHOST_CONFIG_TABLE || n->kind == SCHEDHOST_CONFIG_ARRAY);
  }
  static int32_t Kind(const schedhost_config* c) noexcept {
    return c == nullptr ? SCHEDHOST_CONFIG_NONE : N(c)->kind;
  }
  static const schedhost_config* Get(const schedhost_config* c, schedhost_str key) noexcept {
    const ArgsNode* n = N(c);
    if (n == nullptr || n->kind != SCHEDHOST_CONFIG_TABLE) return nullptr;
    for (const ArgsNode& child : n->children) {
      if (child.key == args_detail::View(key)) return C(&child);
    }
    return nullptr;
  }
  static size_t Len(const schedhost_config* c) noexcept {
    return IsContainer(N(c)) ? N(c)->children.size() : 0;
  }
  static const schedhost_config* At(const schedhost_config* c, size_t index,
                                    schedhost_str* key) noexcept {
    if (key != nullptr) *key = schedhost_str{"", 0};
    const ArgsNode* n = N(c);
    if (!IsContainer(n) || index >= n->children.size()) return nullptr;
    const ArgsNode& child = n->children[index];
    if (key != nullptr && n->kind == SCHEDHOST_CONFIG_TABLE) *key = S(child.key);
    return C(&child);
  }
  static int32_t String(const schedhost_config* c, schedhost_str* out) noexcept {
    if (out == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
    if (Kind(c) != SCHEDHOST_CONFIG_STRING) return SCHEDHOST_E_WRONG_TYPE;
    *out = S(N(c)->string_value);
    return SCHEDHOST_OK;
  }
  static int32_t Int(const schedhost_config* c, int64_t* out) noexcept {
    if (out == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
    if (Kind(c) != SCHEDHOST_CONFIG_INT) return SCHEDHOST_E_WRONG_TYPE;
    *out = N(c)->int_value;
    return SCHEDHOST_OK;
  }
  static int32_t Float(const schedhost_config* c, double* out) noexcept {
    if (out == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
    if (Kind(c) == SCHEDHOST_CONFIG_INT) {
      *out = static_cast<double>(N(c)->int_value);
      return SCHEDHOST_OK;
    }
    if (Kind(c) != SCHEDHOST_CONFIG_FLOAT) return SCHEDHOST_E_WRONG_TYPE;
    *out = N(c)->float_value;
    return SCHEDHOST_OK;
  }
  static int32_t Bool(const schedhost_config* c, int32_t* out) noexcept {
    if (out == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
    if (Kind(c) != SCHEDHOST_CONFIG_BOOL) return SCHEDHOST_E_WRONG_TYPE;
    *out = N(c)->bool_value ? 1 : 0;
    return SCHEDHOST_OK;
  }
  static schedhost_str Location(const schedhost_config* c) noexcept {
    return c == nullptr ? schedhost_str{"", 0} : S(N(c)->location);
  }
  static schedhost_str KeyLocation(const schedhost_config* c) noexcept {
    return c == nullptr ? schedhost_str{"", 0} : S(N(c)->key_location);
  }

  std::unique_ptr<ArgsNode> root_;
  std::unique_ptr<schedhost_host_api> api_;
};

}  // namespace schedhost
