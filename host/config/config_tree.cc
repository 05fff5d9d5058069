#include "host/config/config_tree.h"

namespace schedhost::config {
namespace {

schedhost_str Str(const std::string& s) noexcept { return schedhost_str{s.data(), s.size()}; }

bool IsContainer(const ConfigNode* node) noexcept {
  return node != nullptr &&
         (node->kind == SCHEDHOST_CONFIG_TABLE || node->kind == SCHEDHOST_CONFIG_ARRAY);
}

}  // namespace

int32_t ConfigKind(const schedhost_config* node) noexcept {
  return node == nullptr ? SCHEDHOST_CONFIG_NONE : FromAbi(node)->kind;
}

const schedhost_config* ConfigGet(const schedhost_config* node, schedhost_str key) noexcept {
  if (node == nullptr || (key.data == nullptr && key.len != 0)) return nullptr;
  std::string_view wanted = key.len == 0 ? std::string_view() : std::string_view(key.data, key.len);
  return AsAbi(FromAbi(node)->Find(wanted));
}

size_t ConfigLen(const schedhost_config* node) noexcept {
  const ConfigNode* n = FromAbi(node);
  return IsContainer(n) ? n->children.size() : 0;
}

const schedhost_config* ConfigAt(const schedhost_config* node, size_t index,
                                 schedhost_str* key) noexcept {
  if (key != nullptr) *key = schedhost_str{"", 0};
  const ConfigNode* n = FromAbi(node);
  if (!IsContainer(n) || index >= n->children.size()) return nullptr;
  const ConfigNode& child = n->children[index];
  if (key != nullptr && n->kind == SCHEDHOST_CONFIG_TABLE) *key = Str(child.key);
  return AsAbi(&child);
}

int32_t ConfigString(const schedhost_config* node, schedhost_str* out) noexcept {
  if (out == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  const ConfigNode* n = FromAbi(node);
  if (n == nullptr || n->kind != SCHEDHOST_CONFIG_STRING) return SCHEDHOST_E_WRONG_TYPE;
  *out = Str(n->string_value);
  return SCHEDHOST_OK;
}

int32_t ConfigInt(const schedhost_config* node, int64_t* out) noexcept {
  if (out == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  const ConfigNode* n = FromAbi(node);
  if (n == nullptr || n->kind != SCHEDHOST_CONFIG_INT) return SCHEDHOST_E_WRONG_TYPE;
  *out = n->int_value;
  return SCHEDHOST_OK;
}

int32_t ConfigFloat(const schedhost_config* node, double* out) noexcept {
  if (out == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  const ConfigNode* n = FromAbi(node);
  if (n == nullptr) return SCHEDHOST_E_WRONG_TYPE;
  if (n->kind == SCHEDHOST_CONFIG_FLOAT) {
    *out = n->float_value;
    return SCHEDHOST_OK;
  }
  if (n->kind == SCHEDHOST_CONFIG_INT) {
    *out = static_cast<double>(n->int_value);
    return SCHEDHOST_OK;
  }
  return SCHEDHOST_E_WRONG_TYPE;
}

int32_t ConfigBool(const schedhost_config* node, int32_t* out) noexcept {
  if (out == nullptr) return SCHEDHOST_E_INVALID_ARGUMENT;
  const ConfigNode* n = FromAbi(node);
  if (n == nullptr || n->kind != SCHEDHOST_CONFIG_BOOL) return SCHEDHOST_E_WRONG_TYPE;
  *out = n->bool_value ? 1 : 0;
  return SCHEDHOST_OK;
}

schedhost_str ConfigLocation(const schedhost_config* node) noexcept {
  const ConfigNode* n = FromAbi(node);
  return n == nullptr ? schedhost_str{"", 0} : Str(n->location);
}

schedhost_str ConfigKeyLocation(const schedhost_config* node) noexcept {
  const ConfigNode* n = FromAbi(node);
  if (n == nullptr) return schedhost_str{"", 0};
  return Str(n->key_location.empty() ? n->location : n->key_location);
}

}  // namespace schedhost::config
