// TomlArgs: a TOML file read by the plugin itself, seen through the SDK's Args.
//
// The SDK's Args reads a configuration tree only through the config_* entries of the host API
// table. TomlArgs supplies those entries over a tree of its own (parsed with toml++), so code
// written against Args (ParseCapacitySchedulingArgs' quota validation) checks a file's contents
// exactly as it checks plugin_config, with the file's "path:line:col" in every message.
//
//   TomlArgs file = TomlArgs::Load("/etc/schedhost/quotas.toml");  // throws ArgsError
//   Args quotas = file.root()["quotas"];
#pragma once

#include <memory>
#include <schedhost/plugin.hpp>
#include <string>

namespace schedhost::contrib {

/// TomlArgs owns one parsed TOML document and an API table whose config_* entries read it.
class TomlArgs {
 public:
  /// Load reads and parses `path`; throws ArgsError ("path: cannot read ...", or
  /// "path:line:col: invalid TOML: ...") when it cannot. Files over 1 MiB are refused.
  static TomlArgs Load(const std::string& path);

  TomlArgs(TomlArgs&&) noexcept;
  TomlArgs& operator=(TomlArgs&&) noexcept;
  ~TomlArgs();

  /// root returns the document's top-level table (valid while this object lives).
  Args root() const noexcept;

  struct Node;  // the tree; public only for the C callbacks in toml_args.cc

 private:
  TomlArgs();
  std::unique_ptr<Node> root_;
  std::unique_ptr<schedhost_host_api> api_;  // only the config_* entries are set
};

}  // namespace schedhost::contrib
