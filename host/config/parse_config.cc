// ParseConfig and LoadConfigFile: the top level, [host], [api] and [metrics].
#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "host/config/duration.h"
#include "host/config/host_config.h"
#include "host/config/toml_util.h"

namespace schedhost::config {
namespace {

using internal::Context;
using internal::Fail;

// kMaxConfigFileBytes bounds what LoadConfigFile reads; real configs are a few kilobytes.
constexpr std::uintmax_t kMaxConfigFileBytes = 16u << 20;

std::filesystem::path ResolvePath(const Context& ctx, const toml::node& node,
                                  std::string_view path) {
  const toml::value<std::string>* s = node.as_string();
  if (s == nullptr) {
    Fail(ctx, node.source(),
         std::string(path) + " must be a string, not " + internal::TypeName(node));
  }
  if (s->get().empty()) Fail(ctx, node.source(), std::string(path) + " must not be empty");
  if (s->get().find('\0') != std::string::npos) {
    Fail(ctx, node.source(), std::string(path) + " must not contain a NUL character");
  }
  std::filesystem::path p(s->get());
  if (p.is_relative() && !ctx.base_dir.empty()) p = ctx.base_dir / p;
  return p.lexically_normal();
}

std::optional<std::chrono::nanoseconds> GetDuration(const Context& ctx, const toml::table& table,
                                                    std::string_view key, std::string_view path) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return std::nullopt;
  const toml::value<std::string>* s = node->as_string();
  if (s == nullptr) {
    Fail(ctx, node->source(),
         std::string(path) + " must be a duration string like \"1s\" or " + "\"500ms\", not " +
             internal::TypeName(*node));
  }
  std::string error;
  std::optional<std::chrono::nanoseconds> d = ParseDuration(s->get(), &error);
  if (!d) Fail(ctx, node->source(), std::string(path) + ": " + error);
  if (d->count() <= 0) {
    Fail(ctx, node->source(), std::string(path) + " must be positive, not \"" + s->get() + "\"");
  }
  return d;
}

bool IsHexSha256(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!hex) return false;
  }
  return true;
}

}  // namespace

namespace internal {

std::vector<LibrarySpec> ParseLibrarySpecs(const Context& ctx, const toml::node& node,
                                           const std::string& where) {
  const toml::array& array = internal::ExpectArray(ctx, node, where);
  std::set<std::filesystem::path> seen;
  std::vector<LibrarySpec> libraries;
  for (size_t i = 0; i < array.size(); ++i) {
    const std::string path = where + "[" + std::to_string(i) + "]";
    const toml::node& item = *array.get(i);
    if (item.as_table() == nullptr) {
      Fail(ctx, item.source(),
           path +
               " must be a table like { path = \"x/libfoo.so\", sha256 = "
               "\"<64 hex digits>\" }, not " +
               internal::TypeName(item));
    }
    const toml::table& table = *item.as_table();
    internal::CheckKeys(ctx, table, {"path", "sha256"}, path);
    LibrarySpec spec;
    spec.location = internal::At(ctx, table.source());
    const toml::node* file = table.get("path");
    if (file == nullptr) Fail(ctx, table.source(), path + " needs a path");
    spec.path = ResolvePath(ctx, *file, path + ".path");
    if (!seen.insert(spec.path).second) {
      Fail(ctx, file->source(), "library " + spec.path.string() + " is listed twice");
    }
    if (std::optional<std::string> sha = internal::GetString(ctx, table, "sha256", path)) {
      if (!IsHexSha256(*sha)) {
        Fail(ctx, table.get("sha256")->source(),
             path + ".sha256 must be 64 hexadecimal digits, not \"" + *sha + "\"");
      }
      for (char& c : *sha) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      spec.sha256 = std::move(*sha);
    }
    libraries.push_back(std::move(spec));
  }
  return libraries;
}

}  // namespace internal

namespace {

void ParseHost(const Context& ctx, const toml::table& host, HostConfig& config) {
  internal::CheckKeys(
      ctx, host,
      {"parallelism", "percentage_of_nodes_to_score", "pod_initial_backoff", "pod_max_backoff",
       "plugin_dirs", "libraries", "state_dir", "unload", "watch_config", "batch_plugin_calls"},
      "[host]");
  if (auto v = internal::GetInt(ctx, host, "parallelism", "host.parallelism", 1, kMaxParallelism)) {
    config.parallelism = static_cast<int32_t>(*v);
  }
  if (auto v = internal::GetInt(ctx, host, "percentage_of_nodes_to_score",
                                "host.percentage_of_nodes_to_score", 0, 100)) {
    config.percentage_of_nodes_to_score = static_cast<int32_t>(*v);
  }
  if (auto d = GetDuration(ctx, host, "pod_initial_backoff", "host.pod_initial_backoff")) {
    config.pod_initial_backoff = *d;
  }
  if (auto d = GetDuration(ctx, host, "pod_max_backoff", "host.pod_max_backoff")) {
    config.pod_max_backoff = *d;
  }
  if (config.pod_max_backoff < config.pod_initial_backoff) {
    const toml::node* at = host.get("pod_max_backoff");
    if (at == nullptr) at = host.get("pod_initial_backoff");
    Fail(ctx, at->source(),
         "host.pod_max_backoff (" + FormatDuration(config.pod_max_backoff) +
             ") must not be shorter than host.pod_initial_backoff (" +
             FormatDuration(config.pod_initial_backoff) + ")");
  }
  if (const toml::node* dirs = host.get("plugin_dirs")) {
    const toml::array& array = internal::ExpectArray(ctx, *dirs, "host.plugin_dirs");
    config.plugin_dirs.clear();
    config.plugin_dir_locations.clear();
    for (size_t i = 0; i < array.size(); ++i) {
      std::filesystem::path dir =
          ResolvePath(ctx, *array.get(i), "host.plugin_dirs[" + std::to_string(i) + "]");
      if (std::find(config.plugin_dirs.begin(), config.plugin_dirs.end(), dir) !=
          config.plugin_dirs.end()) {
        Fail(ctx, array.get(i)->source(), "plugin directory " + dir.string() + " is listed twice");
      }
      config.plugin_dirs.push_back(std::move(dir));
      config.plugin_dir_locations.push_back(internal::At(ctx, array.get(i)->source()));
    }
  }
  if (const toml::node* libraries = host.get("libraries")) {
    config.libraries = internal::ParseLibrarySpecs(ctx, *libraries, "host.libraries");
  }
  if (const toml::node* dir = host.get("state_dir")) {
    config.state_dir = ResolvePath(ctx, *dir, "host.state_dir");
  }
  if (std::optional<std::string> unload = internal::GetString(ctx, host, "unload", "host.unload")) {
    if (*unload == "unload") {
      config.unload = UnloadPolicy::kUnload;
    } else if (*unload == "pin") {
      config.unload = UnloadPolicy::kPin;
    } else {
      Fail(ctx, host.get("unload")->source(),
           "host.unload must be \"unload\" or \"pin\", not \"" + *unload + "\"");
    }
  }
  if (std::optional<bool> watch =
          internal::GetBool(ctx, host, "watch_config", "host.watch_config")) {
    config.watch_config = *watch;
  }
  if (std::optional<bool> batch =
          internal::GetBool(ctx, host, "batch_plugin_calls", "host.batch_plugin_calls")) {
    config.batch_plugin_calls = *batch;
  }
}

// ValidHostPort says whether `s` is "host:port", "[v6]:port" or ":port" with a port 0..65535.
bool ValidHostPort(std::string_view s) {
  size_t colon = s.rfind(':');
  if (colon == std::string_view::npos) return false;
  std::string_view host = s.substr(0, colon);
  std::string_view port = s.substr(colon + 1);
  if (port.empty() || port.size() > 5) return false;
  for (char c : port) {
    if (c < '0' || c > '9') return false;
  }
  if (std::stoi(std::string(port)) > 65535) return false;
  if (!host.empty() && host.front() == '[') return host.size() > 2 && host.back() == ']';
  for (char c : host) {
    if (c == ':' || c == '/' || c == ' ' || c == '[' || c == ']') return false;
  }
  return true;
}

// kLogLevels are spdlog's level names, as `[log] level` and --log-level accept them.
constexpr std::array<std::string_view, 7> kLogLevels = {"trace", "debug",    "info", "warn",
                                                        "error", "critical", "off"};

std::string GetListen(const Context& ctx, const toml::table& table, std::string_view section,
                      bool allow_unix, std::string fallback) {
  const std::string path = std::string(section) + ".listen";
  std::optional<std::string> listen = internal::GetString(ctx, table, "listen", path);
  if (!listen) return fallback;
  bool ok = ValidHostPort(*listen);
  if (allow_unix && listen->starts_with("unix://")) ok = listen->size() > 8 && (*listen)[7] == '/';
  if (!ok) {
    Fail(ctx, table.get("listen")->source(),
         path + " must be " + (allow_unix ? "\"unix:///absolute/path.sock\" or " : "") +
             "\"host:port\" (port 0..65535), not \"" + *listen + "\"");
  }
  return *listen;
}

ApiTls ParseApiTls(const Context& ctx, const toml::table& table, const toml::node& node) {
  internal::CheckKeys(ctx, table, {"cert", "key", "client_ca"}, "[api.tls]");
  ApiTls tls;
  for (const char* key : {"cert", "key"}) {
    const toml::node* value = table.get(key);
    if (value == nullptr) {
      Fail(ctx, node.source(),
           std::string("api.tls.") + key + " is required: the PEM file of the server's " +
               (std::string_view(key) == "cert" ? "certificate chain" : "private key"));
    }
    (std::string_view(key) == "cert" ? tls.cert : tls.key) =
        ResolvePath(ctx, *value, std::string("api.tls.") + key);
  }
  if (const toml::node* ca = table.get("client_ca")) {
    tls.client_ca = ResolvePath(ctx, *ca, "api.tls.client_ca");
  }
  return tls;
}

// IsDnsSubdomain: what Kubernetes accepts as an object name (RFC 1123 subdomain).
bool IsDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-' || c == '.'; });
}

LeaderElectionConfig ParseLeaderElection(const Context& ctx, const toml::table& table) {
  internal::CheckKeys(ctx, table,
                      {"enabled", "lease_namespace", "lease_name", "identity", "lease_duration",
                       "renew_deadline", "retry_period", "delay_cache_until_active"},
                      "[kubernetes.leader_election]");
  LeaderElectionConfig le;
  const std::string prefix = "kubernetes.leader_election.";
  if (auto v = internal::GetBool(ctx, table, "enabled", prefix + "enabled")) le.enabled = *v;
  for (auto [key, field] : {std::pair{"lease_namespace", &le.lease_namespace},
                            std::pair{"lease_name", &le.lease_name}}) {
    if (auto v = internal::GetString(ctx, table, key, prefix + key)) {
      if (!IsDnsSubdomain(*v)) {
        Fail(ctx, table.get(key)->source(),
             prefix + key + " \"" + *v +
                 "\" is not a valid object name (lower-case letters, digits, '-' and '.', "
                 "starting and ending with a letter or digit, at most 253)");
      }
      *field = *v;
    }
  }
  if (auto v = internal::GetString(ctx, table, "identity", prefix + "identity")) le.identity = *v;
  for (auto [key, field] : {std::pair{"lease_duration", &le.lease_duration},
                            std::pair{"renew_deadline", &le.renew_deadline},
                            std::pair{"retry_period", &le.retry_period}}) {
    if (auto v = GetDuration(ctx, table, key, prefix + key)) *field = *v;
  }
  if (le.lease_duration % std::chrono::seconds(1) != std::chrono::nanoseconds(0)) {
    Fail(ctx, table.get("lease_duration")->source(),
         prefix + "lease_duration must be whole seconds: the Lease stores leaseDurationSeconds");
  }
  // client-go's rules: a leader gives up before a standby may take over, and tries more than once.
  const toml::node* where = table.get("renew_deadline") != nullptr ? table.get("renew_deadline")
                            : table.get("lease_duration") != nullptr ? table.get("lease_duration")
                                                                     : table.get("retry_period");
  if (le.renew_deadline >= le.lease_duration) {
    Fail(ctx, where != nullptr ? where->source() : table.source(),
         prefix + "renew_deadline must be shorter than lease_duration (" +
             FormatDuration(le.renew_deadline) + " >= " + FormatDuration(le.lease_duration) +
             "): a standby could take over while the leader still schedules");
  }
  if (le.renew_deadline.count() <= le.retry_period.count() * 12 / 10) {
    Fail(ctx, where != nullptr ? where->source() : table.source(),
         prefix + "renew_deadline must be longer than 1.2 × retry_period (" +
             FormatDuration(le.renew_deadline) + " <= 1.2 × " + FormatDuration(le.retry_period) +
             "): the leader needs room for more than one renewal attempt");
  }
  if (auto v = internal::GetBool(ctx, table, "delay_cache_until_active",
                                 prefix + "delay_cache_until_active")) {
    le.delay_cache_until_active = *v;
  }
  return le;
}

ShadowConfig ParseShadow(const Context& ctx, const toml::table& table) {
  internal::CheckKeys(ctx, table,
                      {"cpu_budget_percent", "every_pod", "deadline", "memory_limit_mib",
                       "max_disagreements"},
                      "[shadow]");
  ShadowConfig shadow;
  if (auto v = internal::GetInt(ctx, table, "cpu_budget_percent", "shadow.cpu_budget_percent", 1,
                                1000)) {
    shadow.cpu_budget_percent = static_cast<int32_t>(*v);
  }
  if (auto v = internal::GetBool(ctx, table, "every_pod", "shadow.every_pod")) {
    shadow.every_pod = *v;
  }
  if (auto v = GetDuration(ctx, table, "deadline", "shadow.deadline")) shadow.deadline = *v;
  if (auto v = internal::GetInt(ctx, table, "memory_limit_mib", "shadow.memory_limit_mib", 1,
                                int64_t{1} << 30)) {
    shadow.memory_limit_bytes = *v << 20;
  }
  if (auto v = internal::GetInt(ctx, table, "max_disagreements", "shadow.max_disagreements", 1,
                                100000)) {
    shadow.max_disagreements = static_cast<int32_t>(*v);
  }
  return shadow;
}

KubernetesConfig ParseKubernetes(const Context& ctx, const toml::table& table) {
  internal::CheckKeys(ctx, table,
                      {"kubeconfig", "context", "in_cluster", "qps", "burst", "content_type",
                       "sync_timeout", "watch_idle_timeout", "leader_election"},
                      "[kubernetes]");
  KubernetesConfig kube;
  if (const toml::node* path = table.get("kubeconfig")) {
    // A list like $KUBECONFIG: each part resolves against the config file's directory.
    const std::string list = ResolvePath(ctx, *path, "kubernetes.kubeconfig").string();
    std::string joined;
    size_t start = 0;
    const std::string raw = path->as_string()->get();
    while (start <= raw.size()) {
      const size_t end = std::min(raw.find(':', start), raw.size());
      std::filesystem::path part(raw.substr(start, end - start));
      if (!part.empty()) {
        if (part.is_relative() && !ctx.base_dir.empty()) part = ctx.base_dir / part;
        if (!joined.empty()) joined += ':';
        joined += part.lexically_normal().string();
      }
      start = end + 1;
    }
    kube.kubeconfig = joined.empty() ? list : joined;
  }
  if (auto v = internal::GetString(ctx, table, "context", "kubernetes.context")) kube.context = *v;
  if (auto v = internal::GetBool(ctx, table, "in_cluster", "kubernetes.in_cluster")) {
    kube.in_cluster = *v;
  }
  if (kube.in_cluster && (table.get("kubeconfig") != nullptr || table.get("context") != nullptr)) {
    Fail(ctx, table.get("in_cluster")->source(),
         "kubernetes.in_cluster = true uses the pod's service account: leave kubeconfig and "
         "context unset");
  }
  if (const toml::node* qps = table.get("qps")) {
    std::optional<double> value;
    if (const auto* f = qps->as_floating_point()) value = f->get();
    if (const auto* i = qps->as_integer()) value = static_cast<double>(i->get());
    if (!value || *value < 0 || *value > 1e6) {
      Fail(ctx, qps->source(), "kubernetes.qps must be a number from 0 (no limit) to 1000000");
    }
    kube.qps = *value;
  }
  if (auto v = internal::GetInt(ctx, table, "burst", "kubernetes.burst", 1, 1'000'000)) {
    kube.burst = static_cast<int32_t>(*v);
  }
  if (auto v = internal::GetString(ctx, table, "content_type", "kubernetes.content_type")) {
    if (*v != "application/vnd.kubernetes.protobuf" && *v != "application/json") {
      Fail(ctx, table.get("content_type")->source(),
           "kubernetes.content_type must be \"application/vnd.kubernetes.protobuf\" or "
           "\"application/json\", not \"" + *v + "\"");
    }
    kube.content_type = *v;
  }
  if (auto v = GetDuration(ctx, table, "sync_timeout", "kubernetes.sync_timeout")) {
    kube.sync_timeout = *v;
  }
  if (auto v = GetDuration(ctx, table, "watch_idle_timeout", "kubernetes.watch_idle_timeout")) {
    kube.watch_idle_timeout = *v;
  }
  if (const toml::node* election = table.get("leader_election")) {
    kube.leader_election = ParseLeaderElection(
        ctx, internal::ExpectTable(ctx, *election, "[kubernetes.leader_election]"));
  }
  return kube;
}

}  // namespace

bool IsLoopbackListen(std::string_view listen) {
  std::string_view host = listen.substr(0, listen.rfind(':'));
  if (host == "localhost" || host == "[::1]") return true;
  if (!host.starts_with("127.")) return false;
  int dots = 0;
  for (char c : host) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  return dots == 3;
}

const Profile* HostConfig::FindProfile(std::string_view name) const {
  for (const Profile& profile : profiles) {
    if (profile.name == name) return &profile;
  }
  return nullptr;
}

std::string_view UnloadPolicyName(UnloadPolicy policy) {
  return policy == UnloadPolicy::kPin ? "pin" : "unload";
}

HostConfig ParseConfig(std::string_view text, std::string_view source_name,
                       const std::filesystem::path& base_dir) {
  Context ctx{std::string(source_name), base_dir};
  toml::table root = internal::ParseToml(ctx, text);
  internal::CheckKeys(ctx, root,
                      {"host", "api", "metrics", "ui", "log", "kubernetes", "shadow", "profile"},
                      "the top level");
  HostConfig config;
  config.source = ctx.source;
  if (const toml::node* host = root.get("host")) {
    ParseHost(ctx, internal::ExpectTable(ctx, *host, "[host]"), config);
  }
  if (const toml::node* api = root.get("api")) {
    const toml::table& table = internal::ExpectTable(ctx, *api, "[api]");
    internal::CheckKeys(ctx, table, {"listen", "tls"}, "[api]");
    config.api_listen = GetListen(ctx, table, "api", true, config.api_listen);
    if (const toml::node* tls = table.get("tls")) {
      config.api_tls = ParseApiTls(ctx, internal::ExpectTable(ctx, *tls, "[api.tls]"), *tls);
    }
    // gRPC over TCP carries the whole cluster state and the Admin service: never in clear text.
    if (!IsUnixListen(config.api_listen) && !config.api_tls) {
      Fail(ctx, table.get("listen")->source(),
           "api.listen \"" + config.api_listen +
               "\" is a TCP address, which schedhost serves only over TLS: add [api.tls] with "
               "cert and key (and client_ca for mutual TLS), or listen on a Unix socket "
               "(\"unix:///run/schedhost/schedhost.sock\")");
    }
  }
  if (const toml::node* metrics = root.get("metrics")) {
    const toml::table& table = internal::ExpectTable(ctx, *metrics, "[metrics]");
    internal::CheckKeys(ctx, table, {"listen"}, "[metrics]");
    config.metrics_listen = GetListen(ctx, table, "metrics", false, config.metrics_listen);
  }
  if (const toml::node* ui = root.get("ui")) {
    const toml::table& table = internal::ExpectTable(ctx, *ui, "[ui]");
    internal::CheckKeys(ctx, table, {"listen"}, "[ui]");
    config.ui_listen = GetListen(ctx, table, "ui", false, config.ui_listen);
  }
  if (const toml::node* log = root.get("log")) {
    const toml::table& table = internal::ExpectTable(ctx, *log, "[log]");
    internal::CheckKeys(ctx, table, {"level"}, "[log]");
    if (std::optional<std::string> level = internal::GetString(ctx, table, "level", "log.level")) {
      if (std::find(kLogLevels.begin(), kLogLevels.end(), *level) == kLogLevels.end()) {
        Fail(ctx, table.get("level")->source(),
             "log.level \"" + *level +
                 "\" is not a level: use trace, debug, info, warn, error, critical or off");
      }
      config.log_level = *level;
    }
  }
  if (const toml::node* kube = root.get("kubernetes")) {
    config.kubernetes = ParseKubernetes(ctx, internal::ExpectTable(ctx, *kube, "[kubernetes]"));
  }
  // The UI shows the whole cluster and every decision: beyond loopback only over TLS, with the
  // API's certificate. Checked once [api] and [ui] are both read, whatever their order.
  if (!config.ui_listen.empty() && !IsLoopbackListen(config.ui_listen) && !config.api_tls) {
    Fail(ctx, root["ui"]["listen"].node()->source(),
         "ui.listen \"" + config.ui_listen +
             "\" is not a loopback address, which the web UI serves only over TLS with the "
             "API's certificate: add [api.tls] with cert and key (and client_ca for mutual "
             "TLS), or listen on 127.0.0.1, [::1] or localhost");
  }
  if (const toml::node* shadow = root.get("shadow")) {
    config.shadow = ParseShadow(ctx, internal::ExpectTable(ctx, *shadow, "[shadow]"));
  }
  internal::ParseProfiles(ctx, root.get("profile"), config);
  return config;
}

HostConfig LoadConfigFile(const std::filesystem::path& path) {
  const SourceLocation file{path.string(), 0, 0};
  std::error_code ec;
  std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw ConfigError(file, "cannot read config file: " + ec.message());
  if (size > kMaxConfigFileBytes) {
    throw ConfigError(file, "config file is " + std::to_string(size) + " bytes; the limit is " +
                                std::to_string(kMaxConfigFileBytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(file, std::string("cannot open config file: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError(file, "cannot read config file");
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  std::filesystem::path base_dir = ec ? path.parent_path() : absolute.parent_path();
  return ParseConfig(text.str(), file.file, base_dir.lexically_normal());
}

}  // namespace schedhost::config
