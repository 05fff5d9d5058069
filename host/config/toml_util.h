// Internal helpers for reading TOML with toml++: locations, type checks, unknown keys.
//
// Only the config library's .cc files include this header (it pulls in toml++); nothing here
// is part of the config API. Every helper throws ConfigError at the offending key or value.
#pragma once

// toml++ 3.3's parser asserts an internal invariant that some malformed documents break (e.g. a
// stray "}" in an array inside an inline table). Its release build, which Debian ships, skips
// the check and reports a parse error; this makes header-only debug builds (the fuzz build)
// behave the same instead of aborting.
#ifndef TOML_ASSERT
#define TOML_ASSERT(expr) static_assert(true)
#endif
#include <toml++/toml.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/config/config_error.h"
#include "host/config/config_tree.h"
#include "host/config/host_config.h"

namespace schedhost::config::internal {

// Context is what every reader needs: the name errors carry and where relative paths start.
struct Context {
  std::string source;
  std::filesystem::path base_dir;
};

// At returns the location of `region` in the config named by `ctx`.
SourceLocation At(const Context& ctx, const toml::source_region& region);

// Fail throws ConfigError with `message` at `region`.
[[noreturn]] void Fail(const Context& ctx, const toml::source_region& region,
                       const std::string& message);

// TypeName returns "a string", "an integer", ... for the value in `node`.
std::string TypeName(const toml::node& node);

// Entry is one key of a table with its value.
using Entry = std::pair<const toml::key*, const toml::node*>;

// InFileOrder returns the entries of `table` in the order they appear in the file.
std::vector<Entry> InFileOrder(const toml::table& table);

// CheckKeys fails on the first key of `table` (in file order) that is not in `known`;
// `where` names the table in the message, e.g. "[host]".
void CheckKeys(const Context& ctx, const toml::table& table, const std::vector<std::string>& known,
               std::string_view where);

// ExpectTable returns `node` as a table or fails saying `path` must be one.
const toml::table& ExpectTable(const Context& ctx, const toml::node& node, std::string_view path);

// ExpectArray returns `node` as an array or fails saying `path` must be one.
const toml::array& ExpectArray(const Context& ctx, const toml::node& node, std::string_view path);

// GetString returns the string at `key` of `table` (nullopt when absent); `path` names it.
std::optional<std::string> GetString(const Context& ctx, const toml::table& table,
                                     std::string_view key, std::string_view path);

// GetBool returns the boolean at `key` of `table` (nullopt when absent); `path` names it.
std::optional<bool> GetBool(const Context& ctx, const toml::table& table, std::string_view key,
                            std::string_view path);

// GetInt returns the integer at `key` of `table`, checked against [min, max].
std::optional<int64_t> GetInt(const Context& ctx, const toml::table& table, std::string_view key,
                              std::string_view path, int64_t min, int64_t max);

// ToConfigNode converts a TOML value (dates and times are refused) into an owned tree.
ConfigNode ToConfigNode(const Context& ctx, const toml::node& node, std::string key);

// ParseToml parses `text` or throws ConfigError("invalid TOML: ...") at the syntax error.
toml::table ParseToml(const Context& ctx, std::string_view text);

// ParseLibrarySpecs reads an array of { path, sha256 } tables (`where` names it in errors),
// resolving each path against the config's directory; a path listed twice is refused.
std::vector<LibrarySpec> ParseLibrarySpecs(const Context& ctx, const toml::node& node,
                                           const std::string& where);

// ParseProfiles reads the `profile` array (absent: nullptr) into config.profiles.
void ParseProfiles(const Context& ctx, const toml::node* profiles, HostConfig& config);

}  // namespace schedhost::config::internal
