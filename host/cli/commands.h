// The schedctl commands that talk to schedhostd. Each takes a Client, which it connects once its
// arguments are checked, writes its output to `out` and problems to `err`, and returns the exit
// code: 0, or 1 when the server refused a call, an argument was wrong or the connection failed
// (after a message saying which).
//
//   Client client(options);
//   return RunGet(client, GetOptions{.resource = "pods", .output = "wide"}, std::cout, std::cerr);
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "host/cli/client.h"

namespace schedhost::cli {

// ScopeOptions say which namespace a namespaced kind is read in.
struct ScopeOptions {
  std::string namespace_name;   // -n; "" = "default"
  bool all_namespaces = false;  // -A
};

// NamespaceOf is the namespace `scope` names for a namespaced kind: -n, else "default"; "" (every
// namespace) under -A.
inline std::string NamespaceOf(const ScopeOptions& scope) {
  if (scope.all_namespaces) return "";
  return scope.namespace_name.empty() ? "default" : scope.namespace_name;
}

// RunApply sends every object of the manifest files (`-` is stdin) through Cluster.Apply in file
// order and prints kubectl's line per object (`pod/web-1 created`). Every file is decoded first:
// a bad manifest is reported with its file, document and field, and nothing is sent.
int RunApply(Client& client, const std::vector<std::string>& files, std::istream& in,
             std::ostream& out, std::ostream& err);

// GetOptions are `get`'s arguments.
struct GetOptions {
  std::string resource;  // "pods", "nodes", "pdb", ...
  std::string name;      // "" = list
  ScopeOptions scope;
  std::string output;    // "" (table), "wide", "json", "yaml" or "name"
  std::string selector;  // -l
};

// RunGet prints one object or a list as a table or in the -o format.
int RunGet(Client& client, const GetOptions& options, std::ostream& out, std::ostream& err);

// RunDelete deletes one object and prints `pod "x" deleted`.
int RunDelete(Client& client, const std::string& resource, const std::string& name,
              const ScopeOptions& scope, std::ostream& out, std::ostream& err);

// RunDescribe prints a pod's details, its last scheduling attempt (Admin.Explain) and events.
int RunDescribe(Client& client, const std::string& resource, const std::string& name,
                const ScopeOptions& scope, std::ostream& out, std::ostream& err);

// WatchOptions are `watch`'s arguments.
struct WatchOptions {
  std::string resource = "pods";
  ScopeOptions scope;
  uint64_t resource_version = 0;
  double timeout_seconds = 0;  // 0 = until interrupted
  uint64_t count = 0;          // stop after this many events; 0 = no limit
};

// RunWatch prints one line per event (`ADDED pod/web-1 namespace=default rv=12 node=...`)
// until the stream ends, --count events were printed or --timeout passed (exit 0 for both).
int RunWatch(Client& client, const WatchOptions& options, std::ostream& out, std::ostream& err);

// RunExplain prints Admin.Explain for a pod: nodes x plugins for Filter and for Score.
int RunExplain(Client& client, const std::string& resource, const std::string& name,
               const ScopeOptions& scope, std::ostream& out, std::ostream& err);

// ShadowOptions are `shadow`'s arguments.
struct ShadowOptions {
  std::string action = "status";  // status, start, stop or promote
  std::string profile;            // "" = every shadow (promote needs one)
  std::string output;             // "" (tables) or "json"
};

// RunShadow runs `shadow status|start|stop|promote`: status prints every shadow's agreement
// with its live profile as a table (with a name: its disagreements and plugin latency too),
// start and stop resume or pause shadows, promote makes one live through a reload.
int RunShadow(Client& client, const ShadowOptions& options, std::ostream& out, std::ostream& err);

// RunPlugins prints Admin.ListPlugins as a table.
int RunPlugins(Client& client, std::ostream& out, std::ostream& err);
// RunProfiles prints Admin.ListProfiles: each profile's plugins per extension point.
int RunProfiles(Client& client, std::ostream& out, std::ostream& err);
// RunStats prints Admin.Stats as `key: value` lines.
int RunStats(Client& client, std::ostream& out, std::ostream& err);
// RunReload calls Admin.Reload and prints its message; 1 when the reload was refused.
int RunReload(Client& client, std::ostream& out, std::ostream& err);

}  // namespace schedhost::cli
