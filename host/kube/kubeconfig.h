// Where the Kubernetes API server is and how to authenticate to it: a kubeconfig read with
// kubectl's loading rules, or the service-account files a pod gets in a cluster.
//
//   ClusterAccess access = LoadKubeconfig("", "");  // $KUBECONFIG or ~/.kube/config
//   spdlog::info("API server: {}", DescribeAccess(access));
//   std::shared_ptr<boost::asio::ssl::context> ssl = MakeSslContext(access);
//
// Client certificates and bearer tokens (static, or a file that is re-read as it rotates) are
// supported. Exec plugins, auth providers, basic auth, impersonation and proxies are refused with
// a KubeconfigError naming the kubeconfig file and entry, never silently ignored.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

namespace boost::asio::ssl {
class context;
}

namespace schedhost::kube {

namespace internal {

// TokenFileCache is the last value read from a token file; the copies of a ClusterAccess share
// one, so a rotation seen by one is seen by all.
struct TokenFileCache {
  std::mutex mu;
  std::string path;                                      // the file `value` was read from
  std::string value;                                     // trimmed contents, empty until read
  std::optional<std::filesystem::file_time_type> mtime;  // at the last attempt; none: stat failed
  std::chrono::steady_clock::time_point read_at;         // of the last attempt
};

}  // namespace internal

// ClusterAccess is an API server endpoint with the credentials to use there.
struct ClusterAccess {
  std::string server;     // "https://host:port[/prefix]", without a trailing slash or query
  std::string host;       // without brackets, also for IPv6 ("fd00::1"): what a resolver takes
  std::string port;       // as written, else 443 for https and 80 for http
  std::string base_path;  // "" or "/prefix" (no trailing slash), prepended to request paths
  bool tls = true;        // false only for an http:// server, which gets no credentials (kubectl)
  std::string ca_pem;     // certificate-authority-data decoded, or the CA file's contents
  std::string client_cert_pem, client_key_pem;
  std::string token;       // static bearer token
  std::string token_file;  // bearer token file, re-read as it rotates; see BearerToken()
  std::string tls_server_name;
  bool insecure_skip_tls_verify = false;
  // source says where this came from, for messages: "kubeconfig /p (context c, user u)" or
  // "in-cluster".
  std::string source;
  std::string context, user, cluster;
  std::string default_namespace;  // the context's namespace, "default" when it names none
  // ca_origin, client_cert_origin and client_key_origin name what each PEM was read from (e.g.
  // `cluster "c" certificate-authority /etc/k/ca.crt`), for MakeSslContext's errors.
  std::string ca_origin, client_cert_origin, client_key_origin;

  // BearerToken returns the token to send, trimmed: token_file's current contents when it is
  // set (as kubectl, which then keeps `token` only as a fallback), else `token`. The file is
  // re-read when its mtime changes and at least every minute; when a re-read fails the last
  // value read is kept. Throws KubeconfigError when no value can be had. Thread-safe.
  std::string BearerToken() const;

  // token_cache is the token file's cache, shared by copies (internal).
  std::shared_ptr<internal::TokenFileCache> token_cache =
      std::make_shared<internal::TokenFileCache>();
};

// KubeconfigError is a kubeconfig or in-cluster setup that cannot be used; what() names the file
// and entry at fault and, where there is one, the fix.
class KubeconfigError : public std::runtime_error {
 public:
  using runtime_error::runtime_error;
};

// LoadKubeconfig reads `paths` (colon-separated like $KUBECONFIG; empty: $KUBECONFIG, else
// ~/.kube/config) and merges them as kubectl does: the first file to define a cluster, user or
// context name wins that whole entry, and current-context comes from the first file setting it.
// In a list, missing files are skipped (a single named file must exist). It then picks `context`
// (empty: the current-context) and resolves its cluster and user; relative file paths in an
// entry resolve against the directory of the kubeconfig that holds it. Throws KubeconfigError.
ClusterAccess LoadKubeconfig(const std::string& paths, const std::string& context);

// LoadInCluster builds the access a pod has: https://$KUBERNETES_SERVICE_HOST:
// $KUBERNETES_SERVICE_PORT (an IPv6 host bracketed), the token (re-read as it rotates), ca.crt
// and namespace from `sa_dir` ($POD_NAMESPACE, then the namespace file, else "default").
// Throws KubeconfigError when the variables or the token or CA files are missing.
ClusterAccess LoadInCluster(
    const std::string& sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// MakeSslContext builds a TLS 1.2+ client context for `access`: its CA (the system's roots when
// it has none) with peer and host name verification unless insecure_skip_tls_verify, and its
// client certificate and key. Throws KubeconfigError naming the source and the bad PEM.
std::shared_ptr<boost::asio::ssl::context> MakeSslContext(const ClusterAccess& access);

// TlsHostName returns the name the server's certificate must match: tls_server_name, else host.
std::string TlsHostName(const ClusterAccess& access);

// DescribeAccess returns a one-line description of `access` for logs, without secrets: the
// server, the source, the namespace, the kind of credentials and where the CA came from.
std::string DescribeAccess(const ClusterAccess& access);

}  // namespace schedhost::kube
