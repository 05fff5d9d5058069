// The plugin arguments tree: `[profile.plugin_config.<Name>]` as an owned, read-only tree.
//
// The host converts each plugin_config table into a ConfigNode tree once, when the config is
// read, and hands plugins a `const schedhost_config*` that is really a `const ConfigNode*`
// (AsAbi). The Config* free functions below implement the config_* entries of the host API table
// in plugin.h with exactly their signatures; all are noexcept and accept NULL.
//
//   auto args = ParsePluginArgs("weight = 3\nmode = \"fast\"");
//   int64_t w = 0;
//   ConfigInt(ConfigGet(AsAbi(args.get()), {"weight", 6}), &w);  // w == 3
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "host/model/value_node.h"
#include "schedhost/plugin.h"

namespace schedhost::config {

// ConfigNode is one value of a plugin's arguments (model::ValueNode, which objects of declared
// kinds share, so that one accessor family reads both).
using ConfigNode = model::ValueNode;

// ParsePluginArgs reads a TOML document into a table ConfigNode; throws ConfigError when bad.
std::shared_ptr<const ConfigNode> ParsePluginArgs(std::string_view toml_text,
                                                  std::string_view source_name = "<args>");

// AsAbi returns `node` as the opaque handle plugins receive.
inline const schedhost_config* AsAbi(const ConfigNode* node) noexcept {
  return reinterpret_cast<const schedhost_config*>(node);
}

// FromAbi returns the ConfigNode behind a handle made by AsAbi.
inline const ConfigNode* FromAbi(const schedhost_config* node) noexcept {
  return reinterpret_cast<const ConfigNode*>(node);
}

// ConfigKind returns the schedhost_config_kind of `node`; NULL is SCHEDHOST_CONFIG_NONE.
int32_t ConfigKind(const schedhost_config* node) noexcept;

// ConfigGet returns the child of a table by key; NULL when absent or `node` is not a table.
const schedhost_config* ConfigGet(const schedhost_config* node, schedhost_str key) noexcept;

// ConfigLen returns the number of entries of a table or array; 0 for anything else.
size_t ConfigLen(const schedhost_config* node) noexcept;

// ConfigAt returns entry `index` of an array or table (file order) and, for tables, its key
// into *key (`key` may be NULL; it is set to "" for arrays and when out of range, which is NULL).
const schedhost_config* ConfigAt(const schedhost_config* node, size_t index,
                                 schedhost_str* key) noexcept;

// ConfigString reads a string into *out (valid while the tree lives); SCHEDHOST_E_WRONG_TYPE
// for any other kind (NULL included), SCHEDHOST_E_INVALID_ARGUMENT when `out` is NULL.
int32_t ConfigString(const schedhost_config* node, schedhost_str* out) noexcept;

// ConfigInt reads an integer into *out; SCHEDHOST_E_WRONG_TYPE otherwise (floats included).
int32_t ConfigInt(const schedhost_config* node, int64_t* out) noexcept;

// ConfigFloat reads a float, converting integers, into *out; SCHEDHOST_E_WRONG_TYPE otherwise.
int32_t ConfigFloat(const schedhost_config* node, double* out) noexcept;

// ConfigBool reads a boolean into *out as 0 or 1; SCHEDHOST_E_WRONG_TYPE otherwise.
int32_t ConfigBool(const schedhost_config* node, int32_t* out) noexcept;

// ConfigLocation returns "file:line:col" of `node` (valid while the tree lives); "" for NULL.
schedhost_str ConfigLocation(const schedhost_config* node) noexcept;

// ConfigKeyLocation returns "file:line:col" of `node`'s key, or of the node itself when it has
// no known key (array elements); "" for NULL.
schedhost_str ConfigKeyLocation(const schedhost_config* node) noexcept;

}  // namespace schedhost::config
