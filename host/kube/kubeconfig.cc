// Kubeconfig and in-cluster loading (kubeconfig.h). The rules are client-go's clientcmd: the
// merge order, what makes the chosen context unusable, relative paths, and that credentials are
// never sent to a plain http:// server. Refusals name the file and entry so they can be fixed.
#include "host/kube/kubeconfig.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <pwd.h>
#include <spdlog/spdlog.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/context.hpp>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string_view>
#include <system_error>
#include <vector>

namespace schedhost::kube {
namespace {

namespace fs = std::filesystem;

// kTokenReread bounds how long a token file's value is reused while its mtime stays the same
// (client-go's period: half the time between a projected token's refresh and its expiry).
constexpr auto kTokenReread = std::chrono::minutes(1);

// ReadResult is a whole file, or the errno that stopped reading it.
struct ReadResult {
  std::string data;
  int error = 0;
  std::string Message() const { return std::error_code(error, std::generic_category()).message(); }
};

ReadResult ReadWholeFile(const std::string& path) {
  ReadResult r;
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rbe"), &std::fclose);
  if (!f) {
    r.error = errno;
    return r;
  }
  char buf[8192];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) r.data.append(buf, n);
  if (std::ferror(f.get())) r.error = errno != 0 ? errno : EIO;
  return r;
}

std::string Trim(std::string_view s) {
  const size_t begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return "";
  return std::string(s.substr(begin, s.find_last_not_of(" \t\r\n") - begin + 1));
}

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : std::string(sep)) + part;
  return out;
}

template <typename T>
std::string Names(const std::map<std::string, T>& entries) {
  std::vector<std::string> names;
  names.reserve(entries.size());
  for (const auto& [name, entry] : entries) names.push_back(name);
  return names.empty() ? "none" : Join(names, ", ");
}

// DecodeBase64 decodes standard base64 with padding, ignoring line breaks (as Go's decoder).
std::optional<std::string> DecodeBase64(std::string_view in) {
  std::string text;
  for (char c : in) {
    if (c != '\n' && c != '\r') text.push_back(c);
  }
  if (text.size() % 4 != 0) return std::nullopt;
  size_t end = text.size();
  for (int i = 0; i < 2 && end > 0 && text[end - 1] == '='; ++i) --end;
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < end; ++i) {
    const char c = text[i];
    int v = -1;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    if (c >= '0' && c <= '9') v = c - '0' + 52;
    if (c == '+') v = 62;
    if (c == '/') v = 63;
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

// Entry reads the fields of one YAML mapping; `where` prefixes its errors.
class Entry {
 public:
  Entry(const YAML::Node& node, std::string where) : node_(node), where_(std::move(where)) {}

  bool Has(const char* key) const { return Get(key) && !Get(key).IsNull(); }

  std::string Str(const char* key) const {
    const YAML::Node n = Get(key);
    if (!n || n.IsNull()) return "";
    if (!n.IsScalar()) Fail(std::string(key) + " must be a string");
    return n.Scalar();
  }

  bool Bool(const char* key) const {
    const YAML::Node n = Get(key);
    if (!n || n.IsNull()) return false;
    bool value = false;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, value)) {
      Fail(std::string(key) + " must be true or false");
    }
    return value;
  }

  // Data decodes a base64 field such as certificate-authority-data.
  std::string Data(const char* key) const {
    std::optional<std::string> data = DecodeBase64(Str(key));
    if (!data) Fail(std::string(key) + " is not valid base64");
    return *data;
  }

  // Path returns a file reference made absolute against `dir`, the kubeconfig's directory.
  std::string Path(const char* key, const fs::path& dir) const {
    std::string path = Str(key);
    if (path.empty() || fs::path(path).is_absolute()) return path;
    return (dir / path).lexically_normal().string();
  }

  // Sub returns the reader of the mapping under `key`.
  Entry Sub(const char* key) const { return Entry(Get(key), where_ + ": " + key); }

  [[noreturn]] void Fail(const std::string& what) const {
    throw KubeconfigError(where_ + ": " + what);
  }

 private:
  YAML::Node Get(const char* key) const {
    const YAML::Node& node = node_;
    return node.IsMap() ? node[key] : YAML::Node();
  }

  YAML::Node node_;
  std::string where_;
};

struct RawCluster {
  std::string file;  // the kubeconfig defining it
  std::string server, tls_server_name, ca_file, ca_data, proxy_url;
  bool insecure = false;
};

struct RawUser {
  std::string file;
  std::string token, token_file, cert_file, cert_data, key_file, key_data;
  bool basic_auth = false, exec = false, auth_provider = false;
  std::string auth_provider_name;
  std::string impersonation;  // the first impersonation field set ("as", "as-groups", ...)

  bool HasCredentials() const {
    return !token.empty() || !token_file.empty() || !cert_file.empty() || !cert_data.empty() ||
           basic_auth || exec || auth_provider;
  }
};

struct RawContext {
  std::string file, cluster, user, ns;
};

// RawConfig is the merge of the kubeconfig files read so far.
struct RawConfig {
  std::vector<std::string> files;
  std::map<std::string, RawCluster> clusters;
  std::map<std::string, RawUser> users;
  std::map<std::string, RawContext> contexts;
  std::string current_context, current_context_file;
};

// MergeList decodes the list `list` of `root` ({name, <body>} items) into `merged`, where an
// entry defined by an earlier file is kept whole. A name twice in one file is an error, as in
// kubectl.
template <typename T, typename Decode>
void MergeList(const YAML::Node& root, const char* list, const char* body, const std::string& where,
               const Decode& decode, std::map<std::string, T>* merged) {
  const YAML::Node items = root[list];
  if (!items || items.IsNull()) return;
  if (!items.IsSequence()) throw KubeconfigError(where + ": " + list + " must be a list");
  std::set<std::string> seen;
  size_t index = 0;
  for (const YAML::Node& item : items) {
    const Entry at(item, where + ": " + list + "[" + std::to_string(index++) + "]");
    if (!item.IsMap()) at.Fail(std::string("must be a mapping with name and ") + body);
    const std::string name = at.Str("name");
    if (name.empty()) at.Fail("has no name");
    if (!seen.insert(name).second)
      at.Fail(std::string(body) + " " + Quote(name) + " is defined twice");
    const YAML::Node value = item[body];
    if (value && !value.IsNull() && !value.IsMap())
      at.Fail(std::string(body) + " must be a mapping");
    merged->try_emplace(name, decode(Entry(value, where + ": " + body + " " + Quote(name))));
  }
}

void MergeFile(const std::string& file, const std::string& text, RawConfig* config) {
  const std::string where = "kubeconfig " + file;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw KubeconfigError(where + ":" + std::to_string(e.mark.line + 1) + ":" +
                          std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  if (!root || root.IsNull()) return;  // an empty file is an empty config, as in kubectl
  const Entry top(root, where);
  if (!root.IsMap()) top.Fail("not a kubeconfig: the top level must be a mapping");
  if (top.Has("kind") && top.Str("kind") != "Config") {
    top.Fail("not a kubeconfig: kind is " + Quote(top.Str("kind")) + ", not \"Config\"");
  }
  if (top.Has("apiVersion") && top.Str("apiVersion") != "v1") {
    top.Fail("apiVersion " + Quote(top.Str("apiVersion")) + " is not supported; use \"v1\"");
  }
  std::error_code ec;
  const fs::path dir = fs::absolute(fs::path(file), ec).parent_path();

  MergeList(
      root, "clusters", "cluster", where,
      [&](const Entry& e) {
        RawCluster c{.file = file};
        c.server = e.Str("server");
        c.tls_server_name = e.Str("tls-server-name");
        c.insecure = e.Bool("insecure-skip-tls-verify");
        c.ca_file = e.Path("certificate-authority", dir);
        c.ca_data = e.Data("certificate-authority-data");
        c.proxy_url = e.Str("proxy-url");
        return c;
      },
      &config->clusters);

  MergeList(
      root, "users", "user", where,
      [&](const Entry& e) {
        RawUser u{.file = file};
        u.token = e.Str("token");
        u.token_file = e.Path("tokenFile", dir);
        u.cert_file = e.Path("client-certificate", dir);
        u.cert_data = e.Data("client-certificate-data");
        u.key_file = e.Path("client-key", dir);
        u.key_data = e.Data("client-key-data");
        u.basic_auth = !e.Str("username").empty() || !e.Str("password").empty();
        u.exec = e.Has("exec");
        u.auth_provider = e.Has("auth-provider");
        if (u.auth_provider) u.auth_provider_name = e.Sub("auth-provider").Str("name");
        for (const char* key : {"as", "as-uid", "as-groups", "as-user-extra"}) {
          if (u.impersonation.empty() && e.Has(key)) u.impersonation = key;
        }
        return u;
      },
      &config->users);

  MergeList(
      root, "contexts", "context", where,
      [&](const Entry& e) {
        return RawContext{.file = file,
                          .cluster = e.Str("cluster"),
                          .user = e.Str("user"),
                          .ns = e.Str("namespace")};
      },
      &config->contexts);

  if (config->current_context.empty()) {
    config->current_context = top.Str("current-context");
    config->current_context_file = file;
  }
}

// ServerUrl is a server URL taken apart.
struct ServerUrl {
  std::string server, host, port, base_path;
  bool tls = true;
};

ServerUrl ParseServer(const std::string& server, const std::string& where) {
  const auto fail = [&](const std::string& why) -> KubeconfigError {
    return KubeconfigError(where + ": server " + Quote(server) + " " + why);
  };
  const size_t scheme_end = server.find("://");
  if (scheme_end == std::string::npos) throw fail("has no scheme; write https://" + server);
  ServerUrl url;
  std::string scheme = server.substr(0, scheme_end);
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "https" && scheme != "http") throw fail("must start with https:// or http://");
  url.tls = scheme == "https";
  const std::string_view rest = std::string_view(server).substr(scheme_end + 3);
  const size_t authority_end = std::min(rest.find_first_of("/?#"), rest.size());
  const std::string_view authority = rest.substr(0, authority_end);
  std::string_view path = rest.substr(authority_end);
  path = path.substr(0, std::min(path.find_first_of("?#"), path.size()));
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (authority.find('@') != std::string_view::npos) {
    throw fail("has credentials in it; put them in the user entry");
  }
  std::string_view host = authority;
  std::string_view port;
  if (authority.starts_with('[')) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) throw fail("has an unclosed '['");
    host = authority.substr(1, close - 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty() && after[0] != ':') throw fail("has text after the IPv6 address");
    if (!after.empty()) port = after.substr(1);
  } else if (const size_t colon = authority.find(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    if (port.find(':') != std::string_view::npos) throw fail("has an IPv6 host without brackets");
  }
  if (host.empty()) throw fail("has no host");
  if (!port.empty()) {
    int value = 0;
    for (char c : port) {
      if (c < '0' || c > '9' || (value = value * 10 + (c - '0')) > 65535) {
        throw fail("has an invalid port " + Quote(port));
      }
    }
    if (value == 0) throw fail("has an invalid port " + Quote(port));
  }
  url.host = std::string(host);
  url.port = port.empty() ? (url.tls ? "443" : "80") : std::string(port);
  url.base_path = std::string(path);
  url.server = scheme + "://" + std::string(authority) + url.base_path;
  return url;
}

void SetServer(const ServerUrl& url, ClusterAccess* access) {
  access->server = url.server;
  access->host = url.host;
  access->port = url.port;
  access->base_path = url.base_path;
  access->tls = url.tls;
}

// ReadReferenced reads a file an entry refers to; `what` names the entry and field.
std::string ReadReferenced(const std::string& path, const std::string& what) {
  ReadResult r = ReadWholeFile(path);
  if (r.error != 0) throw KubeconfigError(what + " " + path + ": " + r.Message());
  return std::move(r.data);
}

// PrimeToken reads access's token file for the first time: a token file that cannot be read
// makes the access unusable at load, as in kubectl.
void PrimeToken(const ClusterAccess& access, const std::string& what) {
  internal::TokenFileCache& cache = *access.token_cache;
  std::lock_guard<std::mutex> lock(cache.mu);
  std::error_code ec;
  const fs::file_time_type mtime = fs::last_write_time(access.token_file, ec);
  std::string value = Trim(ReadReferenced(access.token_file, what));
  if (value.empty()) throw KubeconfigError(what + " " + access.token_file + " is empty");
  cache.path = access.token_file;
  cache.value = std::move(value);
  cache.mtime = ec ? std::nullopt : std::optional(mtime);
  cache.read_at = std::chrono::steady_clock::now();
}

bool IsDns1123Label(std::string_view s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

void ResolveCluster(const RawCluster& c, const std::string& name, ClusterAccess* access) {
  const std::string where = "kubeconfig " + c.file + ": cluster " + Quote(name);
  if (c.server.empty()) throw KubeconfigError(where + " has no server");
  SetServer(ParseServer(c.server, where), access);
  if (!c.proxy_url.empty()) {
    throw KubeconfigError(where +
                          " sets proxy-url, which schedhost does not support yet; reach "
                          "the server directly");
  }
  if (!access->tls) return;  // kubectl uses no TLS settings for http://
  if (!c.ca_data.empty() && !c.ca_file.empty()) {
    throw KubeconfigError(where +
                          " sets both certificate-authority-data and "
                          "certificate-authority, which kubectl refuses too; keep one");
  }
  if (c.insecure && (!c.ca_data.empty() || !c.ca_file.empty())) {
    throw KubeconfigError(where +
                          " sets insecure-skip-tls-verify together with a certificate "
                          "authority, which kubectl refuses too; drop one of them");
  }
  access->insecure_skip_tls_verify = c.insecure;
  access->tls_server_name = c.tls_server_name;
  if (!c.ca_data.empty()) {
    access->ca_pem = c.ca_data;
    access->ca_origin = "cluster " + Quote(name) + " certificate-authority-data";
  } else if (!c.ca_file.empty()) {
    access->ca_pem = ReadReferenced(c.ca_file, where + ": certificate-authority");
    access->ca_origin = "cluster " + Quote(name) + " certificate-authority " + c.ca_file;
  }
}

// PemField returns the PEM of a data/file pair (data and file both set is an error).
std::string PemField(const std::string& data, const std::string& file, const std::string& key,
                     const std::string& where, const std::string& user, std::string* origin) {
  if (!data.empty() && !file.empty()) {
    throw KubeconfigError(where + " sets both " + key + "-data and " + key +
                          ", which kubectl refuses too; keep one");
  }
  if (!data.empty()) {
    *origin = "user " + Quote(user) + " " + key + "-data";
    return data;
  }
  *origin = "user " + Quote(user) + " " + key + " " + file;
  return ReadReferenced(file, where + ": " + key);
}

void ResolveUser(const RawUser& u, const std::string& name, ClusterAccess* access) {
  const std::string where = "kubeconfig " + u.file + ": user " + Quote(name);
  const std::string instead = "; use a client certificate or a token";
  if (u.exec) {
    throw KubeconfigError(where +
                          " uses an exec credential plugin, which schedhost does not "
                          "support yet" +
                          instead);
  }
  if (u.auth_provider) {
    throw KubeconfigError(where + " uses the auth-provider " + Quote(u.auth_provider_name) +
                          ", which schedhost does not support yet" + instead);
  }
  if (u.basic_auth) {
    throw KubeconfigError(where +
                          " sets username/password (basic authentication), which "
                          "schedhost does not support" +
                          instead);
  }
  if (!u.impersonation.empty()) {
    throw KubeconfigError(where + " sets " + u.impersonation +
                          " (impersonation), which "
                          "schedhost does not support yet; remove it");
  }
  const bool has_cert = !u.cert_data.empty() || !u.cert_file.empty();
  const bool has_key = !u.key_data.empty() || !u.key_file.empty();
  if (has_cert && !has_key) {
    throw KubeconfigError(where +
                          " has a client certificate but no client-key or "
                          "client-key-data");
  }
  if (has_key && !has_cert) {
    throw KubeconfigError(where +
                          " has a client key but no client-certificate or "
                          "client-certificate-data");
  }
  if (has_cert) {
    access->client_cert_pem = PemField(u.cert_data, u.cert_file, "client-certificate", where, name,
                                       &access->client_cert_origin);
    access->client_key_pem =
        PemField(u.key_data, u.key_file, "client-key", where, name, &access->client_key_origin);
  }
  access->token = u.token;
  access->token_file = u.token_file;
  if (!u.token_file.empty()) {
    try {
      PrimeToken(*access, where + ": tokenFile");
    } catch (const KubeconfigError&) {
      if (u.token.empty()) throw;  // with a static token the file is only preferred (kubectl)
    }
  }
}

ClusterAccess Resolve(const RawConfig& config, const std::string& wanted) {
  const std::string all = Join(config.files, ":");
  const std::string name = wanted.empty() ? config.current_context : wanted;
  if (name.empty()) {
    throw KubeconfigError("no context chosen: kubeconfig " + all +
                          " sets no current-context; "
                          "name one of its contexts: " +
                          Names(config.contexts));
  }
  const auto context = config.contexts.find(name);
  if (context == config.contexts.end()) {
    throw KubeconfigError(
        "context " + Quote(name) +
        (wanted.empty() ? " (the current-context of " + config.current_context_file + ")" : "") +
        " not found in kubeconfig " + all + "; contexts: " + Names(config.contexts));
  }
  const RawContext& c = context->second;
  const std::string where = "kubeconfig " + c.file + ": context " + Quote(name);
  if (c.cluster.empty()) throw KubeconfigError(where + " names no cluster");
  if (c.user.empty()) throw KubeconfigError(where + " names no user");
  const auto cluster = config.clusters.find(c.cluster);
  if (cluster == config.clusters.end()) {
    throw KubeconfigError(where + " names cluster " + Quote(c.cluster) +
                          ", which is not in kubeconfig " + all +
                          "; clusters: " + Names(config.clusters));
  }
  const auto user = config.users.find(c.user);
  if (user == config.users.end()) {
    throw KubeconfigError(where + " names user " + Quote(c.user) + ", which is not in kubeconfig " +
                          all + "; users: " + Names(config.users));
  }
  if (!c.ns.empty() && !IsDns1123Label(c.ns)) {
    throw KubeconfigError(where + ": namespace " + Quote(c.ns) +
                          " is not a valid namespace name "
                          "(lowercase letters, digits and '-', at most 63 characters)");
  }
  ClusterAccess access;
  access.context = name;
  access.cluster = c.cluster;
  access.user = c.user;
  access.default_namespace = c.ns.empty() ? "default" : c.ns;
  access.source = "kubeconfig " + c.file + " (context " + name + ", user " + c.user + ")";
  ResolveCluster(cluster->second, c.cluster, &access);
  if (access.tls) {
    ResolveUser(user->second, c.user, &access);
  } else if (user->second.HasCredentials()) {
    spdlog::warn(
        "{}: server {} is plain http, so user \"{}\"'s credentials are not sent (as "
        "kubectl)",
        access.source, access.server, c.user);
  }
  return access;
}

std::string HomeDir() {
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') return home;
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (getpwuid_r(getuid(), &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
    return found->pw_dir;
  }
  return "";
}

std::vector<std::string> SplitPaths(std::string_view list) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  while (!list.empty()) {
    const size_t colon = std::min(list.find(':'), list.size());
    std::string path(list.substr(0, colon));
    list.remove_prefix(std::min(colon + 1, list.size()));
    if (!path.empty() && seen.insert(path).second) out.push_back(std::move(path));
  }
  return out;
}

}  // namespace

std::string ClusterAccess::BearerToken() const {
  if (token_file.empty()) return Trim(token);
  internal::TokenFileCache& cache = *token_cache;
  std::lock_guard<std::mutex> lock(cache.mu);
  const auto now = std::chrono::steady_clock::now();
  std::error_code ec;
  const fs::file_time_type stat_mtime = fs::last_write_time(token_file, ec);
  const std::optional<fs::file_time_type> mtime = ec ? std::nullopt : std::optional(stat_mtime);
  const bool cached = cache.path == token_file && !cache.value.empty();
  if (cached && mtime == cache.mtime && now - cache.read_at < kTokenReread) return cache.value;

  const ReadResult r = ReadWholeFile(token_file);
  std::string value = r.error != 0 ? "" : Trim(r.data);
  cache.mtime = mtime;
  cache.read_at = now;
  if (!value.empty()) {
    cache.path = token_file;
    cache.value = std::move(value);
    return cache.value;
  }
  const std::string why = r.error != 0 ? r.Message() : "the file is empty";
  if (cached) {
    spdlog::warn("{}: cannot re-read token file {} ({}); keeping the token read before", source,
                 token_file, why);
    return cache.value;
  }
  if (!token.empty()) return Trim(token);
  throw KubeconfigError(source + ": token file " + token_file + ": " + why);
}

ClusterAccess LoadKubeconfig(const std::string& paths, const std::string& context) {
  std::vector<std::string> files;
  std::string none;  // what to say when no file exists
  bool must_exist = false;
  if (!paths.empty()) {
    files = SplitPaths(paths);
    must_exist = files.size() == 1;
    none = "no kubeconfig: none of " + paths + " exists";
  } else if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
    files = SplitPaths(env);
    none = "no kubeconfig: none of the files in $KUBECONFIG (" + std::string(env) + ") exists";
  } else {
    const std::string home = HomeDir();
    if (!home.empty()) files.push_back(home + "/.kube/config");
    none =
        "no kubeconfig: $KUBECONFIG is not set and " +
        (home.empty() ? std::string("there is no home directory") : files[0] + " does not exist") +
        "; name a kubeconfig, or run in a pod for the in-cluster config";
  }
  RawConfig config;
  for (const std::string& file : files) {
    const ReadResult r = ReadWholeFile(file);
    if (r.error == ENOENT && !must_exist) continue;  // kubectl skips missing files in a list
    if (r.error != 0) throw KubeconfigError("kubeconfig " + file + ": " + r.Message());
    config.files.push_back(file);
    MergeFile(file, r.data, &config);
  }
  if (config.files.empty()) throw KubeconfigError(none);
  return Resolve(config, context);
}

ClusterAccess LoadInCluster(const std::string& sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  std::vector<std::string> unset;
  if (host == nullptr || *host == '\0') unset.emplace_back("KUBERNETES_SERVICE_HOST");
  if (port == nullptr || *port == '\0') unset.emplace_back("KUBERNETES_SERVICE_PORT");
  if (!unset.empty()) {
    throw KubeconfigError("in-cluster: " + Join(unset, " and ") +
                          (unset.size() > 1 ? " are" : " is") +
                          " not set, so this is not a pod; use a kubeconfig instead");
  }
  const std::string h = host;
  const bool bracket = h.find(':') != std::string::npos && !h.starts_with('[');
  ClusterAccess access;
  access.source = "in-cluster";
  SetServer(ParseServer("https://" + (bracket ? "[" + h + "]" : h) + ":" + port,
                        "in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT give"),
            &access);
  access.token_file = sa_dir + "/token";
  PrimeToken(access, "in-cluster: service-account token");
  const std::string ca = sa_dir + "/ca.crt";
  access.ca_pem = ReadReferenced(ca, "in-cluster: service-account CA");
  access.ca_origin = "service-account CA " + ca;
  if (const char* ns = std::getenv("POD_NAMESPACE"); ns != nullptr && *ns != '\0') {
    access.default_namespace = ns;
  } else if (ReadResult r = ReadWholeFile(sa_dir + "/namespace"); r.error == 0) {
    access.default_namespace = Trim(r.data);
  }
  if (access.default_namespace.empty()) access.default_namespace = "default";
  return access;
}

namespace {

[[noreturn]] void SslFail(const ClusterAccess& access, const std::string& what) {
  ERR_clear_error();
  throw KubeconfigError((access.source.empty() ? "" : access.source + ": ") + what);
}

std::string OriginOr(const std::string& origin, const char* fallback) {
  return origin.empty() ? fallback : origin;
}

// AddCaCertificates adds every certificate of `pem` to `store`; false when there is none or one
// is malformed.
bool AddCaCertificates(X509_STORE* store, const std::string& pem) {
  const std::unique_ptr<BIO, int (*)(BIO*)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  int added = 0;
  ERR_clear_error();
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(store, cert);  // fails only for a duplicate, which is harmless
    X509_free(cert);
    ++added;
  }
  const unsigned long error = ERR_peek_last_error();
  const bool at_end =
      ERR_GET_LIB(error) == ERR_LIB_PEM && ERR_GET_REASON(error) == PEM_R_NO_START_LINE;
  ERR_clear_error();
  return added > 0 && at_end;
}

}  // namespace

std::string TlsHostName(const ClusterAccess& access) {
  return access.tls_server_name.empty() ? access.host : access.tls_server_name;
}

std::shared_ptr<boost::asio::ssl::context> MakeSslContext(const ClusterAccess& access) {
  namespace ssl = boost::asio::ssl;
  auto context = std::make_shared<ssl::context>(ssl::context::tls_client);
  SSL_CTX* native = context->native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_compression);
  if (access.insecure_skip_tls_verify) {
    if (!access.ca_pem.empty()) {
      SslFail(access, "insecure-skip-tls-verify together with a certificate authority is refused");
    }
    context->set_verify_mode(ssl::verify_none);
  } else {
    context->set_verify_mode(ssl::verify_peer);
    if (access.ca_pem.empty()) {
      context->set_default_verify_paths();
    } else if (!AddCaCertificates(SSL_CTX_get_cert_store(native), access.ca_pem)) {
      SslFail(access, OriginOr(access.ca_origin, "the certificate authority") +
                          " is not a PEM certificate");
    }
    // Streams made from this context check the name; a caller may still set its own per stream.
    const std::string name = TlsHostName(access);
    X509_VERIFY_PARAM* param = SSL_CTX_get0_param(native);
    boost::system::error_code not_ip;
    boost::asio::ip::make_address(name, not_ip);
    if (!not_ip) {
      X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
    } else if (!name.empty()) {
      X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size());
    }
  }
  if (access.client_cert_pem.empty() != access.client_key_pem.empty()) {
    SslFail(access, "a client certificate needs both the certificate and its key");
  }
  if (!access.client_cert_pem.empty()) {
    boost::system::error_code ec;
    context->use_certificate_chain(boost::asio::buffer(access.client_cert_pem), ec);
    if (ec) {
      SslFail(access, OriginOr(access.client_cert_origin, "the client certificate") +
                          " is not a PEM certificate");
    }
    const std::unique_ptr<BIO, int (*)(BIO*)> bio(
        BIO_new_mem_buf(access.client_key_pem.data(),
                        static_cast<int>(access.client_key_pem.size())),
        &BIO_free);
    const std::unique_ptr<EVP_PKEY, void (*)(EVP_PKEY*)> key(
        PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr), &EVP_PKEY_free);
    if (!key) {
      SslFail(access,
              OriginOr(access.client_key_origin, "the client key") + " is not a PEM private key");
    }
    if (SSL_CTX_use_PrivateKey(native, key.get()) != 1) {
      SslFail(access, OriginOr(access.client_key_origin, "the client key") + " does not match " +
                          OriginOr(access.client_cert_origin, "the client certificate"));
    }
  }
  return context;
}

std::string DescribeAccess(const ClusterAccess& access) {
  std::string out = access.server + " from " + (access.source.empty() ? "?" : access.source) +
                    ", namespace " +
                    (access.default_namespace.empty() ? "default" : access.default_namespace);
  std::vector<std::string> auth;
  if (!access.client_cert_pem.empty()) auth.emplace_back("client certificate");
  if (!access.token_file.empty()) {
    auth.push_back("bearer token file " + access.token_file);
  } else if (!access.token.empty()) {
    auth.emplace_back("bearer token");
  }
  out += ", auth: " + (auth.empty() ? std::string("none") : Join(auth, " + "));
  if (!access.tls) return out + ", plain http";
  if (access.insecure_skip_tls_verify) {
    out += ", server certificate NOT verified (insecure-skip-tls-verify)";
  } else {
    out += ", CA: " + (access.ca_pem.empty() ? std::string("system roots")
                                             : OriginOr(access.ca_origin, "given"));
  }
  if (!access.tls_server_name.empty()) out += ", tls-server-name " + access.tls_server_name;
  return out;
}

}  // namespace schedhost::kube
