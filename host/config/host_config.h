// The host's configuration: host settings, listeners and scheduling profiles, read from TOML.
//
// The file mirrors kube-scheduler's KubeSchedulerConfiguration (see docs/config-reference.md).
// Reading validates every value and merges each profile's multi_point plugins with the default
// profile; turning a Profile into per-point plugin lists needs to know which points each plugin
// implements and is done later by ExpandProfile (expand.h). Any problem throws ConfigError.
//
//   HostConfig config = LoadConfigFile("/etc/schedhost/schedhost.toml");
//   for (const Profile& profile : config.profiles) { ... }
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/config/config_error.h"
#include "host/config/config_tree.h"
#include "host/config/point.h"

namespace schedhost::config {

// kDefaultProfileName is the schedulerName of a profile that does not name itself.
inline constexpr std::string_view kDefaultProfileName = "default-scheduler";

// kMaxScoreWeight is the largest weight a score plugin may be given.
inline constexpr int32_t kMaxScoreWeight = 100000;

// kMaxParallelism is the largest accepted `host.parallelism`.
inline constexpr int32_t kMaxParallelism = 4096;

// PluginEntry is one `{ name = ..., weight = ... }` of an enabled or disabled list.
struct PluginEntry {
  std::string name;
  // weight is the score weight as written; 0 when not given (a score plugin then weighs 1).
  int32_t weight = 0;
  // location is where the entry is written (the profile's location for built-in defaults).
  SourceLocation location;
  // from_defaults is true for entries that come from the built-in default profile.
  bool from_defaults = false;
};

// PluginSet is the enabled and disabled lists of one point (or of multi_point).
struct PluginSet {
  std::vector<PluginEntry> enabled;
  std::vector<PluginEntry> disabled;
};

// LibrarySpec is one explicitly listed plugin library, optionally pinned to a sha256.
struct LibrarySpec {
  // path is absolute or resolved against the config file's directory.
  std::filesystem::path path;
  // sha256 is the expected lower-case hex digest of the file, when pinned.
  std::optional<std::string> sha256;
  SourceLocation location;
};

// Profile is one `[[profile]]`, merged with the defaults but not yet expanded per point.
struct Profile {
  // name is the schedulerName pods use to pick this profile.
  std::string name{kDefaultProfileName};
  // location is where the profile is declared (just the file for the implicit default profile).
  SourceLocation location;
  // percentage_of_nodes_to_score overrides the host setting when present (0..100).
  std::optional<int32_t> percentage_of_nodes_to_score;
  // multi_point holds the defaults merged with the user's multi_point lists (see merge.h).
  PluginSet multi_point;
  // points holds the user's lists for each specific point, indexed by PointIndex.
  std::array<PluginSet, kNumPoints> points;
  // plugin_config maps a plugin name to its arguments tree (a table).
  std::map<std::string, std::shared_ptr<const ConfigNode>> plugin_config;
  // shadow_of names the live profile this one shadows ("" for a live profile): a shadow
  // schedules no pod of its own; it runs each cycle of that profile again, off the scheduling
  // thread, and reports where it would have placed the pod ([shadow]).
  std::string shadow_of;
  // libraries (shadows only) are plugin libraries whose plugins this profile takes before the
  // set's of the same name: a new build of a plugin, shadowing the live one.
  std::vector<LibrarySpec> libraries;
};

// ShadowConfig is `[shadow]`: how shadow profiles run beside the live ones.
struct ShadowConfig {
  // cpu_budget_percent caps the shadows' CPU time at this share of the scheduling thread's;
  // a pod offered while over it (or while the shadow is still on the previous one) is skipped
  // and counted.
  int32_t cpu_budget_percent = 1;
  // every_pod makes the scheduling loop wait for the shadow instead of skipping: every pod is
  // compared, and live throughput pays for the shadow's cycles.
  bool every_pod = false;
  // deadline bounds one shadow cycle; a shadow past it is stopped and reported.
  std::chrono::nanoseconds deadline = std::chrono::seconds(1);
  // memory_limit_bytes bounds what a shadow's cycles may hold allocated at once; a shadow over
  // it has its allocations refused and is stopped and reported.
  int64_t memory_limit_bytes = int64_t{256} << 20;
  // max_disagreements is how many disagreements each shadow keeps for status and the web view
  // (the newest; the counters count them all).
  int32_t max_disagreements = 100;
};

// UnloadPolicy says what happens to a plugin library no longer used by any profile.
enum class UnloadPolicy {
  kUnload,  // unload it once nothing of it can still be called
  kPin,     // keep it mapped for the life of the process
};


// ApiTls is `[api.tls]`: the server certificate and key (PEM files) and, for mutual TLS, the CA
// that client certificates must chain to.
struct ApiTls {
  std::filesystem::path cert;
  std::filesystem::path key;
  // client_ca, when set, makes the server require and verify client certificates.
  std::optional<std::filesystem::path> client_ca;
};

// IsUnixListen tells whether a listen address is a Unix socket ("unix:///path").
inline bool IsUnixListen(std::string_view listen) { return listen.starts_with("unix://"); }

// IsLoopbackListen tells whether a valid "host:port" names a loopback host: 127.0.0.0/8, [::1]
// or localhost (an empty host means every address, so not). The web UI serves such an address
// over plain HTTP and any other over TLS.
bool IsLoopbackListen(std::string_view listen);

// LeaderElectionConfig is [kubernetes.leader_election]: upstream kube-scheduler's leader election
// on a coordination.k8s.io/v1 Lease, with its defaults.
struct LeaderElectionConfig {
  // enabled: replicas elect one leader, which alone schedules (kube-scheduler's leaderElect).
  bool enabled = true;
  // lease_namespace / lease_name name the Lease (resourceNamespace / resourceName).
  std::string lease_namespace = "kube-system";
  std::string lease_name = "schedhost";
  // identity names this replica in the Lease's holderIdentity; "" : "<hostname>_<random>".
  std::string identity;
  // lease_duration is how long a standby waits after the last renewal it observed before it
  // takes the lease; renew_deadline is how long the leader keeps trying to renew before it stops
  // scheduling; retry_period is the pause between attempts.
  std::chrono::nanoseconds lease_duration = std::chrono::seconds(15);
  std::chrono::nanoseconds renew_deadline = std::chrono::seconds(10);
  std::chrono::nanoseconds retry_period = std::chrono::seconds(2);
  // delay_cache_until_active makes a standby mirror nothing until it is elected: less memory,
  // slower takeover (kube-scheduler's delayCacheUntilActive).
  bool delay_cache_until_active = false;
};

// KubernetesConfig is `[kubernetes]`: schedule the pods of a Kubernetes cluster, whose API
// server is then the source of truth (see docs/operations.md, "Running as a second scheduler").
struct KubernetesConfig {
  // kubeconfig is a path list as $KUBECONFIG takes it ("a:b"); empty: $KUBECONFIG, else
  // ~/.kube/config. Relative paths resolve against the config file's directory.
  std::string kubeconfig;
  // context picks a kubeconfig context; empty: its current-context.
  std::string context;
  // in_cluster uses the pod's service account (token, CA, KUBERNETES_SERVICE_HOST/PORT)
  // instead of a kubeconfig; kubeconfig and context must then be unset.
  bool in_cluster = false;
  // qps and burst limit the client's request rate (kube-scheduler's defaults); qps 0 lifts it.
  double qps = 50;
  int32_t burst = 100;
  // content_type is what the client speaks to the API server for the built-in kinds, as
  // kube-scheduler's clientConnection.contentType: protobuf (its default) or JSON.
  std::string content_type = "application/vnd.kubernetes.protobuf";
  // sync_timeout bounds the wait for the first list of every kind at start.
  std::chrono::nanoseconds sync_timeout = std::chrono::minutes(2);
  // watch_idle_timeout ends a watch silent for this long (no event, no bookmark; the API server
  // sends a bookmark about every minute): its connection is taken for dead and the kind listed
  // again.
  std::chrono::nanoseconds watch_idle_timeout = std::chrono::minutes(2);
  // leader_election is [kubernetes.leader_election].
  LeaderElectionConfig leader_election;
};

// HostConfig is a whole config file, validated, with defaults filled in.
struct HostConfig {
  // source is the name the config was read under (its path for LoadConfigFile).
  std::string source;
  // parallelism is how many threads Filter and Score run on (1..kMaxParallelism).
  int32_t parallelism = 16;
  // percentage_of_nodes_to_score is 0 for upstream's adaptive default, else 1..100.
  int32_t percentage_of_nodes_to_score = 0;
  // pod_initial_backoff is the backoff after a pod's first failed attempt (> 0).
  std::chrono::nanoseconds pod_initial_backoff = std::chrono::seconds(1);
  // pod_max_backoff caps the doubling backoff (>= pod_initial_backoff).
  std::chrono::nanoseconds pod_max_backoff = std::chrono::seconds(10);
  // plugin_dirs are the directories every *.so of which is loaded, resolved.
  std::vector<std::filesystem::path> plugin_dirs{"/usr/lib/schedhost/plugins"};
  // plugin_dir_locations are where each of plugin_dirs is written, index-aligned (empty for
  // the built-in default and for directories set by code, not a file).
  std::vector<SourceLocation> plugin_dir_locations;
  // libraries are plugin libraries loaded by path, in file order.
  std::vector<LibrarySpec> libraries;
  // state_dir is where the host keeps its state (shadow copies of plugin libraries, ...).
  std::filesystem::path state_dir{"/var/lib/schedhost"};
  // unload is what happens to libraries no profile uses any more.
  UnloadPolicy unload = UnloadPolicy::kUnload;
  // watch_config makes schedhostd reload by itself when the config file's content changes
  // (inotify on its directory, debounced); off: reload on SIGHUP or Admin.Reload only.
  bool watch_config = false;
  // batch_plugin_calls lets Filter and Score go through a plugin's batched entries (abi 1.2,
  // one call per run of nodes) when it has them; off: one call per node, as before 1.2.
  bool batch_plugin_calls = true;
  // api_listen is the gRPC endpoint: "unix://<path>" or "host:port".
  std::string api_listen = "unix:///run/schedhost/schedhost.sock";
  // api_tls is `[api.tls]`; required when api_listen is a TCP address (ParseConfig checks).
  std::optional<ApiTls> api_tls;
  // metrics_listen is the metrics/health HTTP endpoint "host:port".
  std::string metrics_listen = "127.0.0.1:10259";
  // ui_listen is `[ui] listen`, the web UI's HTTP endpoint "host:port": plain HTTP on a
  // loopback address, HTTPS with api_tls on any other (ParseConfig refuses one without
  // api_tls); "" (the default) serves no UI.
  std::string ui_listen;
  // log_level is `[log] level`: spdlog's level name ("info" unless set); schedhostd's
  // --log-level overrides it.
  std::string log_level = "info";
  // kubernetes is `[kubernetes]`: present, the host schedules a Kubernetes cluster's pods.
  std::optional<KubernetesConfig> kubernetes;
  // shadow is `[shadow]`.
  ShadowConfig shadow;
  // profiles are the scheduling profiles in file order, names unique; ParseConfig never leaves
  // it empty (and never with shadows alone).
  std::vector<Profile> profiles;

  // FindProfile returns the profile named `name`, or nullptr.
  const Profile* FindProfile(std::string_view name) const;
};

// ParseConfig reads a config from `text`; errors name `source_name`, relative paths resolve
// against `base_dir` (left relative when it is empty). Throws ConfigError.
HostConfig ParseConfig(std::string_view text, std::string_view source_name,
                       const std::filesystem::path& base_dir);

// LoadConfigFile reads the config file at `path`; relative paths in it resolve against its
// directory. Throws ConfigError (also when the file cannot be read).
HostConfig LoadConfigFile(const std::filesystem::path& path);

// UnloadPolicyName returns the TOML spelling of `policy` ("unload" or "pin").
std::string_view UnloadPolicyName(UnloadPolicy policy);

}  // namespace schedhost::config
