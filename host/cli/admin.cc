// The Admin commands: `plugins`, `profiles`, `stats` and `reload`.
#include <iomanip>
#include <iostream>
#include <sstream>

#include "host/cli/commands.h"
#include "host/cli/printers.h"

namespace schedhost::cli {
namespace {

std::string Join(const google::protobuf::RepeatedPtrField<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

}  // namespace

int RunPlugins(Client& client, std::ostream& out, std::ostream& err) {
  if (!client.Connect(err)) return 1;
  v1::ListPluginsResponse response;
  grpc::Status status =
      client.admin().ListPlugins(client.Context().get(), v1::ListPluginsRequest(), &response);
  if (!status.ok()) return ReportError(status, err, "schedhost.v1.Admin/ListPlugins");
  Table table({"NAME", "VERSION", "ABI", "POINTS", "PROFILES", "LIBRARY", "SHA256"});
  for (const v1::Plugin& p : response.plugins()) {
    // Twelve hex digits name a build as well as git's short hashes do; -o json is not offered,
    // the full digest is on the library file itself (sha256sum).
    table.AddRow({p.name(), OrNone(p.version()), p.abi_version(), Join(p.extension_points()),
                  OrNone(Join(p.profiles())), p.library_path(), p.sha256().substr(0, 12)});
  }
  if (table.empty()) {
    err << "No plugins loaded.\n";
    return 0;
  }
  table.Print(out);
  if (response.declared_kinds_size() > 0) {
    // The API kinds the plugins read, and whether the host can see them.
    Table kinds({"RESOURCE", "KIND", "PLUGINS", "OBJECTS", "STATUS"});
    for (const v1::DeclaredKind& k : response.declared_kinds()) {
      kinds.AddRow({k.resource(), k.api_version() + " " + k.kind(), Join(k.plugins()),
                    std::to_string(k.objects()),
                    k.available() ? "mirrored" : "unavailable: " + k.unavailable_reason()});
    }
    out << "\nDeclared kinds:\n";
    kinds.Print(out);
  }
  if (response.library_versions_size() > 0) {
    // Every loaded version, the live set's and those still draining after a reload. The shadow
    // copy's name follows from state_dir and the digest, so it is left to the API.
    Table versions({"LIBRARY", "SHA256", "STATE", "GENERATION"});
    for (const v1::LibraryVersion& v : response.library_versions()) {
      versions.AddRow(
          {v.path(), v.sha256().substr(0, 12), v.state(), std::to_string(v.generation())});
    }
    out << "\nLibrary versions:\n";
    versions.Print(out);
  }
  return 0;
}

int RunProfiles(Client& client, std::ostream& out, std::ostream& err) {
  if (!client.Connect(err)) return 1;
  v1::ListProfilesResponse response;
  grpc::Status status =
      client.admin().ListProfiles(client.Context().get(), v1::ListProfilesRequest(), &response);
  if (!status.ok()) return ReportError(status, err, "schedhost.v1.Admin/ListProfiles");
  // The live set's generation: 1 as started, +1 per successful reload.
  out << "Config generation: " << response.generation() << "\n";
  Table table({"PROFILE", "EXTENSION POINT", "PLUGINS"});
  for (const v1::Profile& profile : response.profiles()) {
    const int pct = profile.percentage_of_nodes_to_score();
    table.AddRow({profile.scheduler_name(), "(percentageOfNodesToScore)",
                  pct == 0 ? "0 (adaptive)" : std::to_string(pct)});
    for (const v1::ExtensionPointPlugins& point : profile.extension_points()) {
      std::string plugins;
      for (const v1::PluginRef& p : point.plugins()) {
        plugins += (plugins.empty() ? "" : ", ") + p.name();
        if (point.extension_point() == "Score") plugins += "(" + std::to_string(p.weight()) + ")";
      }
      table.AddRow({"", point.extension_point(), OrNone(plugins)});
    }
  }
  table.Print(out);
  return 0;
}

int RunStats(Client& client, std::ostream& out, std::ostream& err) {
  if (!client.Connect(err)) return 1;
  v1::StatsResponse s;
  grpc::Status status = client.admin().Stats(client.Context().get(), v1::StatsRequest(), &s);
  if (!status.ok()) return ReportError(status, err, "schedhost.v1.Admin/Stats");
  std::ostringstream rate;
  rate << std::fixed << std::setprecision(2) << s.pods_per_second();
  out << "active_pods: " << s.active_pods() << "\n"
      << "backoff_pods: " << s.backoff_pods() << "\n"
      << "unschedulable_pods: " << s.unschedulable_pods() << "\n"
      << "gated_pods: " << s.gated_pods() << "\n"
      << "in_flight_pods: " << s.in_flight_pods() << "\n"
      << "attempts_scheduled: " << s.attempts_scheduled() << "\n"
      << "attempts_unschedulable: " << s.attempts_unschedulable() << "\n"
      << "attempts_error: " << s.attempts_error() << "\n"
      << "bound_pods: " << s.bound_pods() << "\n"
      << "pods_per_second: " << rate.str() << "\n"
      << "resource_version: " << s.resource_version() << "\n"
      << "config_generation: " << s.config_generation() << "\n"
      << "draining_profile_sets: " << s.draining_profile_sets() << "\n"
      << "last_reload: " << (s.last_reload_result().empty() ? "<none>" : s.last_reload_result())
      << "\n";
  if (!s.last_reload_result().empty()) {
    out << "last_reload_message: " << s.last_reload_message() << "\n"
        << "last_reload_unix_seconds: " << s.last_reload_unix_seconds() << "\n";
  }
  if (s.has_leader_election()) {
    const v1::LeaderElection& le = s.leader_election();
    out << "leader_election: " << (le.leading() ? "leading" : "standby") << "\n"
        << "lease: " << le.lease() << "\n"
        << "lease_holder: " << (le.holder().empty() ? "<none>" : le.holder()) << "\n"
        << "lease_transitions: " << le.transitions() << "\n"
        << "identity: " << le.identity() << "\n";
    if (!le.last_error().empty()) out << "leader_election_error: " << le.last_error() << "\n";
  }
  return 0;
}

int RunReload(Client& client, std::ostream& out, std::ostream& err) {
  if (!client.Connect(err)) return 1;
  v1::ReloadResponse response;
  grpc::Status status =
      client.admin().Reload(client.Context().get(), v1::ReloadRequest(), &response);
  if (!status.ok()) return ReportError(status, err, "schedhost.v1.Admin/Reload");
  if (!response.ok()) {
    err << "error: reload refused, the running profiles are unchanged: " << response.message()
        << "\n";
    return 1;
  }
  out << response.message() << "\n";
  return 0;
}

}  // namespace schedhost::cli
