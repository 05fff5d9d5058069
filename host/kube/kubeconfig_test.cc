// LoadKubeconfig, LoadInCluster, BearerToken and MakeSslContext against kubeconfigs and
// service-account directories written into a temp dir, and TLS handshakes with a CA, server and
// client certificates generated here.
#include "host/kube/kubeconfig.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdlib.h>

#include <atomic>
#include <boost/asio/ssl/context.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "host/framework/testing/test_certs.h"

namespace schedhost::kube {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// TempDir is a fresh directory, removed with its contents at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::path(::testing::TempDir()) / "kubeconfig_test.XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = fs::path(pattern).lexically_normal();
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Write creates `name` (and its directories) with `text`; returns its path.
  std::string Write(const std::string& name, const std::string& text) const {
    const fs::path path = path_ / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    return path.string();
  }
  std::string Path(const std::string& name = "") const {
    return name.empty() ? path_.string() : (path_ / name).string();
  }

 private:
  fs::path path_;
};

// ScopedEnv sets (or, with nullopt, unsets) an environment variable and restores it.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::optional<std::string>& value) : name_(std::move(name)) {
    if (const char* old = getenv(name_.c_str())) old_ = old;
    Set(value);
  }
  ~ScopedEnv() { Set(old_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  void Set(const std::optional<std::string>& value) {
    if (value) {
      setenv(name_.c_str(), value->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  std::string name_;
  std::optional<std::string> old_;
};

// ErrorOf returns what() of the KubeconfigError `fn` throws, or a note that it threw none.
std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const KubeconfigError& e) {
    return e.what();
  }
  return "<no KubeconfigError>";
}

std::string Base64(const std::string& data) {
  std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(data.data()),
                                static_cast<int>(data.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

// Kubeconfig returns a kubeconfig with one context "a" (cluster "c", user "u"), the cluster and
// user given as YAML flow mappings.
std::string Kubeconfig(const std::string& cluster, const std::string& user) {
  std::string out = "apiVersion: v1\nkind: Config\ncurrent-context: a\n";
  out += "clusters: [{name: c, cluster: " + cluster + "}]\n";
  out += "users: [{name: u, user: " + user + "}]\n";
  out += "contexts: [{name: a, context: {cluster: c, user: u}}]\n";
  return out;
}

TEST(KubeconfigTest, MergesFilesFirstWins) {
  TempDir dir;
  // The first file defines cluster c and context a but no current-context; the second redefines
  // c (ignored as a whole, tls-server-name included) and sets current-context; the third sets
  // another current-context, which comes too late.
  const std::string first = dir.Write("first", R"(
clusters:
- name: c
  cluster: {server: "https://first.example:1"}
users:
- name: u
  user: {token: first-token}
contexts:
- name: a
  context: {cluster: c, user: u, namespace: ns-a}
)");
  const std::string second = dir.Write("second", R"(
current-context: a
clusters:
- name: c
  cluster: {server: "https://second.example:2", tls-server-name: second}
- name: d
  cluster: {server: "https://d.example"}
users:
- name: u
  user: {token: second-token}
contexts:
- name: a
  context: {cluster: d, user: u}
- name: b
  context: {cluster: d, user: u}
)");
  const std::string third = dir.Write("third", "current-context: b\n");

  const ClusterAccess access = LoadKubeconfig(first + ":" + second + ":" + third, "");
  EXPECT_EQ(access.context, "a");
  EXPECT_EQ(access.cluster, "c");
  EXPECT_EQ(access.server, "https://first.example:1");
  EXPECT_EQ(access.tls_server_name, "");
  EXPECT_EQ(access.token, "first-token");
  EXPECT_EQ(access.default_namespace, "ns-a");
  EXPECT_EQ(access.source, "kubeconfig " + first + " (context a, user u)");

  // In the other order the second file's entries win, and its current-context too.
  const ClusterAccess reversed = LoadKubeconfig(third + ":" + second + ":" + first, "");
  EXPECT_EQ(reversed.context, "b");
  EXPECT_EQ(reversed.server, "https://d.example");
  EXPECT_EQ(reversed.token, "second-token");
  EXPECT_EQ(reversed.default_namespace, "default");
  EXPECT_EQ(reversed.source, "kubeconfig " + second + " (context b, user u)");
}

TEST(KubeconfigTest, ExplicitContextOverridesCurrentContext) {
  TempDir dir;
  const std::string path = dir.Write("config", R"(
current-context: a
clusters:
- {name: c1, cluster: {server: "https://one"}}
- {name: c2, cluster: {server: "https://two:6443"}}
users:
- {name: u, user: {}}
contexts:
- {name: a, context: {cluster: c1, user: u}}
- {name: b, context: {cluster: c2, user: u, namespace: kube-system}}
)");
  EXPECT_EQ(LoadKubeconfig(path, "").server, "https://one");
  const ClusterAccess b = LoadKubeconfig(path, "b");
  EXPECT_EQ(b.context, "b");
  EXPECT_EQ(b.server, "https://two:6443");
  EXPECT_EQ(b.port, "6443");
  EXPECT_EQ(b.default_namespace, "kube-system");
  EXPECT_EQ(DescribeAccess(b),
            "https://two:6443 from kubeconfig " + path +
                " (context b, user u), namespace kube-system, auth: none, CA: system roots");
}

TEST(KubeconfigTest, ContextErrors) {
  TempDir dir;
  const std::string a = dir.Write("a", R"(
contexts:
- {name: b, context: {cluster: c, user: u}}
- {name: a, context: {cluster: missing, user: u}}
- {name: nouser, context: {cluster: c}}
- {name: nocluster, context: {user: u}}
- {name: ghost, context: {cluster: c, user: ghost}}
- {name: ns, context: {cluster: c, user: u, namespace: Bad_NS}}
)");
  const std::string b = dir.Write("b", R"(
current-context: gone
clusters:
- {name: c, cluster: {server: "https://c"}}
users:
- {name: u, user: {}}
)");
  const std::string both = a + ":" + b;
  EXPECT_EQ(ErrorOf([&] { LoadKubeconfig(both, "foo"); }),
            "context \"foo\" not found in kubeconfig " + both +
                "; contexts: a, b, ghost, nocluster, nouser, ns");
  EXPECT_EQ(ErrorOf([&] { LoadKubeconfig(both, ""); }),
            "context \"gone\" (the current-context of " + b + ") not found in kubeconfig " + both +
                "; contexts: a, b, ghost, nocluster, nouser, ns");
  EXPECT_EQ(
      ErrorOf([&] { LoadKubeconfig(a, ""); }),
      "no context chosen: kubeconfig " + a +
          " sets no current-context; name one of its contexts: a, b, ghost, nocluster, nouser, ns");
  EXPECT_EQ(ErrorOf([&] { LoadKubeconfig(both, "a"); }),
            "kubeconfig " + a +
                ": context \"a\" names cluster \"missing\", which is not in "
                "kubeconfig " +
                both + "; clusters: c");
  EXPECT_EQ(ErrorOf([&] { LoadKubeconfig(both, "ghost"); }),
            "kubeconfig " + a +
                ": context \"ghost\" names user \"ghost\", which is not in "
                "kubeconfig " +
                both + "; users: u");
  EXPECT_EQ(ErrorOf([&] { LoadKubeconfig(both, "nocluster"); }),
            "kubeconfig " + a + ": context \"nocluster\" names no cluster");
  EXPECT_EQ(ErrorOf([&] { LoadKubeconfig(both, "nouser"); }),
            "kubeconfig " + a + ": context \"nouser\" names no user");
  EXPECT_THAT(ErrorOf([&] { LoadKubeconfig(both, "ns"); }),
              HasSubstr("context \"ns\": namespace \"Bad_NS\" is not a valid namespace name"));
  EXPECT_EQ(LoadKubeconfig(both, "b").server, "https://c");
}

TEST(KubeconfigTest, MissingAndUnreadableFiles) {
  TempDir dir;
  const std::string good = dir.Write("good", Kubeconfig("{server: \"https://h\"}", "{}"));
  const std::string missing = dir.Path("missing");
  // One named file must exist; in a list missing files are skipped, as kubectl does.
  EXPECT_EQ(ErrorOf([&] { LoadKubeconfig(missing, ""); }),
            "kubeconfig " + missing + ": No such file or directory");
  EXPECT_EQ(LoadKubeconfig(missing + ":" + good, "").server, "https://h");
  EXPECT_EQ(ErrorOf([&] { LoadKubeconfig(missing + ":" + missing + "2", ""); }),
            "no kubeconfig: none of " + missing + ":" + missing + "2 exists");
  EXPECT_EQ(ErrorOf([&] { LoadKubeconfig(dir.Path() + ":" + good, ""); }),
            "kubeconfig " + dir.Path() + ": Is a directory");
}

TEST(KubeconfigTest, KubeconfigVariableThenHome) {
  TempDir dir;
  const std::string from_env = dir.Write("env", Kubeconfig("{server: \"https://env\"}", "{}"));
  dir.Write("home/.kube/config", Kubeconfig("{server: \"https://home\"}", "{}"));
  ScopedEnv home("HOME", dir.Path("home"));
  {
    ScopedEnv kubeconfig("KUBECONFIG", dir.Path("nothing") + ":" + from_env);
    EXPECT_EQ(LoadKubeconfig("", "").server, "https://env");
  }
  {
    ScopedEnv kubeconfig("KUBECONFIG", dir.Path("nothing"));
    EXPECT_EQ(
        ErrorOf([&] { LoadKubeconfig("", ""); }),
        "no kubeconfig: none of the files in $KUBECONFIG (" + dir.Path("nothing") + ") exists");
  }
  ScopedEnv kubeconfig("KUBECONFIG", std::nullopt);
  EXPECT_EQ(LoadKubeconfig("", "").server, "https://home");
  ScopedEnv empty_home("HOME", dir.Path("empty"));
  EXPECT_EQ(ErrorOf([&] { LoadKubeconfig("", ""); }),
            "no kubeconfig: $KUBECONFIG is not set and " + dir.Path("empty") +
                "/.kube/config does not exist; name a kubeconfig, or run in a pod for the "
                "in-cluster config");
}

TEST(KubeconfigTest, ServerUrls) {
  struct Case {
    std::string server, host, port, base_path, normalized;
    bool tls;
  };
  const std::vector<Case> cases = {
      {"https://h.example", "h.example", "443", "", "https://h.example", true},
      {"https://10.0.0.1:6443", "10.0.0.1", "6443", "", "https://10.0.0.1:6443", true},
      {"https://h/prefix/api/?q=1#f", "h", "443", "/prefix/api", "https://h/prefix/api", true},
      {"https://[fd00::1]:6443/", "fd00::1", "6443", "", "https://[fd00::1]:6443", true},
      {"https://[fd00::1]", "fd00::1", "443", "", "https://[fd00::1]", true},
      {"http://h", "h", "80", "", "http://h", false},
      {"HTTPS://h:6443", "h", "6443", "", "https://h:6443", true},
  };
  TempDir dir;
  for (const Case& c : cases) {
    const std::string path =
        dir.Write("config", Kubeconfig("{server: \"" + c.server + "\"}", "{}"));
    const ClusterAccess access = LoadKubeconfig(path, "");
    EXPECT_EQ(access.server, c.normalized) << c.server;
    EXPECT_EQ(access.host, c.host) << c.server;
    EXPECT_EQ(access.port, c.port) << c.server;
    EXPECT_EQ(access.base_path, c.base_path) << c.server;
    EXPECT_EQ(access.tls, c.tls) << c.server;
  }
  const std::map<std::string, std::string> refused = {
      {"h.example:6443", "has no scheme; write https://h.example:6443"},
      {"ftp://h", "must start with https:// or http://"},
      {"https://h:99999", "has an invalid port \"99999\""},
      {"https://h:x1", "has an invalid port \"x1\""},
      {"https://fd00::1:443", "has an IPv6 host without brackets"},
      {"https://user:pw@h", "has credentials in it; put them in the user entry"},
      {"https://:6443", "has no host"},
  };
  for (const auto& [server, why] : refused) {
    const std::string path = dir.Write("config", Kubeconfig("{server: \"" + server + "\"}", "{}"));
    EXPECT_EQ(ErrorOf([&] { LoadKubeconfig(path, ""); }),
              "kubeconfig " + path + ": cluster \"c\": server \"" + server + "\" " + why);
  }
  const std::string none = dir.Write("config", Kubeconfig("{}", "{}"));
  EXPECT_EQ(ErrorOf([&] { LoadKubeconfig(none, ""); }),
            "kubeconfig " + none + ": cluster \"c\" has no server");
}

TEST(KubeconfigTest, RelativePathsResolveAgainstTheKubeconfigDirectory) {
  TempDir dir;
  dir.Write("conf/pki/ca.crt", "CA PEM");
  dir.Write("conf/pki/client.crt", "CERT PEM");
  dir.Write("conf/pki/client.key", "KEY PEM");
  dir.Write("conf/token", "  file-token\n");
  const std::string path =
      dir.Write("conf/kubeconfig",
                Kubeconfig("{server: \"https://h\", certificate-authority: pki/ca.crt}",
                           "{client-certificate: pki/client.crt, client-key: ./pki/client.key, "
                           "tokenFile: token}"));
  const ClusterAccess access = LoadKubeconfig(path, "");
  EXPECT_EQ(access.ca_pem, "CA PEM");
  EXPECT_EQ(access.ca_origin, "cluster \"c\" certificate-authority " + dir.Path("conf/pki/ca.crt"));
  EXPECT_EQ(access.client_cert_pem, "CERT PEM");
  EXPECT_EQ(access.client_key_pem, "KEY PEM");
  EXPECT_EQ(access.client_key_origin, "user \"u\" client-key " + dir.Path("conf/pki/client.key"));
  EXPECT_EQ(access.token_file, dir.Path("conf/token"));
  EXPECT_EQ(access.BearerToken(), "file-token");
}

TEST(KubeconfigTest, CertificateData) {
  TempDir dir;
  dir.Write("ca.crt", "FROM FILE");
  const std::string data = dir.Write(
      "data",
      Kubeconfig("{server: \"https://h\", certificate-authority-data: " + Base64("FROM DATA") + "}",
                 "{client-certificate-data: " + Base64("CERT") +
                     ", client-key-data: " + Base64("KEY") + "}"));
  const ClusterAccess access = LoadKubeconfig(data, "");
  EXPECT_EQ(access.ca_pem, "FROM DATA");
  EXPECT_EQ(access.ca_origin, "cluster \"c\" certificate-authority-data");
  EXPECT_EQ(access.client_cert_pem, "CERT");
  EXPECT_EQ(access.client_key_pem, "KEY");
  EXPECT_EQ(DescribeAccess(access),
            "https://h from kubeconfig " + data +
                " (context a, user u), namespace default, auth: client certificate, CA: cluster "
                "\"c\" certificate-authority-data");

  const std::string file =
      dir.Write("file", Kubeconfig("{server: \"https://h\", certificate-authority: ca.crt, "
                                   "tls-server-name: api.internal}",
                                   "{token: tok}"));
  const ClusterAccess from_file = LoadKubeconfig(file, "");
  EXPECT_EQ(from_file.ca_pem, "FROM FILE");
  EXPECT_EQ(from_file.tls_server_name, "api.internal");
  EXPECT_EQ(TlsHostName(from_file), "api.internal");
  EXPECT_EQ(TlsHostName(access), "h");
}

TEST(KubeconfigTest, Refusals) {
  struct Case {
    std::string name, cluster, user, message;  // message follows "kubeconfig <path>: "
  };
  const std::string server = "server: \"https://h\"";
  const std::vector<Case> cases = {
      {"CA data and file",
       "{" + server + ", certificate-authority-data: " + Base64("x") +
           ", certificate-authority: ca.crt}",
       "{}",
       "cluster \"c\" sets both certificate-authority-data and certificate-authority, which "
       "kubectl refuses too; keep one"},
      {"insecure with CA",
       "{" + server +
           ", insecure-skip-tls-verify: true, "
           "certificate-authority-data: " +
           Base64("x") + "}",
       "{}",
       "cluster \"c\" sets insecure-skip-tls-verify together with a certificate authority, which "
       "kubectl refuses too; drop one of them"},
      {"bad base64", "{" + server + ", certificate-authority-data: \"not*base64\"}", "{}",
       "cluster \"c\": certificate-authority-data is not valid base64"},
      {"bad padding", "{" + server + ", certificate-authority-data: \"QUJD=\"}", "{}",
       "cluster \"c\": certificate-authority-data is not valid base64"},
      {"missing CA file", "{" + server + ", certificate-authority: /nonexistent/ca.crt}", "{}",
       "cluster \"c\": certificate-authority /nonexistent/ca.crt: No such file or directory"},
      {"proxy", "{" + server + ", proxy-url: \"http://proxy:3128\"}", "{}",
       "cluster \"c\" sets proxy-url, which schedhost does not support yet; reach the server "
       "directly"},
      {"insecure not a bool", "{" + server + ", insecure-skip-tls-verify: maybe}", "{}",
       "cluster \"c\": insecure-skip-tls-verify must be true or false"},
      {"exec", "{" + server + "}",
       "{exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}}",
       "user \"u\" uses an exec credential plugin, which schedhost does not support yet; use a "
       "client certificate or a token"},
      {"auth-provider", "{" + server + "}", "{auth-provider: {name: oidc}}",
       "user \"u\" uses the auth-provider \"oidc\", which schedhost does not support yet; use a "
       "client certificate or a token"},
      {"basic auth", "{" + server + "}", "{username: admin, password: secret}",
       "user \"u\" sets username/password (basic authentication), which schedhost does not "
       "support; use a client certificate or a token"},
      {"impersonation", "{" + server + "}", "{token: t, as-groups: [system:masters]}",
       "user \"u\" sets as-groups (impersonation), which schedhost does not support yet; remove "
       "it"},
      {"cert without key", "{" + server + "}", "{client-certificate-data: " + Base64("c") + "}",
       "user \"u\" has a client certificate but no client-key or client-key-data"},
      {"key without cert", "{" + server + "}", "{client-key: k.pem}",
       "user \"u\" has a client key but no client-certificate or client-certificate-data"},
      {"cert data and file", "{" + server + "}",
       "{client-certificate-data: " + Base64("c") +
           ", client-certificate: c.pem, "
           "client-key-data: " +
           Base64("k") + "}",
       "user \"u\" sets both client-certificate-data and client-certificate, which kubectl "
       "refuses too; keep one"},
      {"missing client key file", "{" + server + "}",
       "{client-certificate-data: " + Base64("c") + ", client-key: nokey.pem}",
       "user \"u\": client-key {dir}/nokey.pem: No such file or directory"},
      {"missing token file", "{" + server + "}", "{tokenFile: /nonexistent/token}",
       "user \"u\": tokenFile /nonexistent/token: No such file or directory"},
      {"empty token file", "{" + server + "}", "{tokenFile: empty-token}",
       "user \"u\": tokenFile {dir}/empty-token is empty"},
  };
  TempDir dir;
  dir.Write("ca.crt", "CA");
  dir.Write("empty-token", "\n");
  for (const Case& c : cases) {
    const std::string path = dir.Write("config", Kubeconfig(c.cluster, c.user));
    std::string message = c.message;
    if (const size_t at = message.find("{dir}"); at != std::string::npos) {
      message.replace(at, 5, dir.Path());
    }
    EXPECT_EQ(ErrorOf([&] { LoadKubeconfig(path, ""); }), "kubeconfig " + path + ": " + message)
        << c.name;
  }
}

TEST(KubeconfigTest, MalformedFiles) {
  TempDir dir;
  const std::string syntax = dir.Write("syntax", "clusters:\n- name: c\n  cluster: {server: [\n");
  EXPECT_THAT(ErrorOf([&] { LoadKubeconfig(syntax, ""); }),
              HasSubstr("kubeconfig " + syntax + ":4:"));
  const std::string pod = dir.Write("pod", "apiVersion: v1\nkind: Pod\n");
  EXPECT_EQ(ErrorOf([&] { LoadKubeconfig(pod, ""); }),
            "kubeconfig " + pod + ": not a kubeconfig: kind is \"Pod\", not \"Config\"");
  const std::string list = dir.Write("list", "- a\n- b\n");
  EXPECT_EQ(ErrorOf([&] { LoadKubeconfig(list, ""); }),
            "kubeconfig " + list + ": not a kubeconfig: the top level must be a mapping");
  const std::string twice = dir.Write("twice", R"(
clusters:
- {name: c, cluster: {server: "https://one"}}
- {name: c, cluster: {server: "https://two"}}
)");
  EXPECT_EQ(ErrorOf([&] { LoadKubeconfig(twice, ""); }),
            "kubeconfig " + twice + ": clusters[1]: cluster \"c\" is defined twice");
  const std::string unnamed = dir.Write("unnamed", "users:\n- user: {token: t}\n");
  EXPECT_EQ(ErrorOf([&] { LoadKubeconfig(unnamed, ""); }),
            "kubeconfig " + unnamed + ": users[0]: has no name");
  // An empty file is an empty config, as in kubectl: the next file supplies everything.
  const std::string empty = dir.Write("empty", "");
  const std::string good = dir.Write("good", Kubeconfig("{server: \"https://h\"}", "{}"));
  EXPECT_EQ(LoadKubeconfig(empty + ":" + good, "").server, "https://h");
}

TEST(KubeconfigTest, PlainHttpSendsNoCredentials) {
  TempDir dir;
  const std::string path = dir.Write(
      "config", Kubeconfig("{server: \"http://localhost:8080\", certificate-authority: nope}",
                           "{token: secret, exec: {command: x}}"));
  const ClusterAccess access = LoadKubeconfig(path, "");
  EXPECT_FALSE(access.tls);
  EXPECT_EQ(access.token, "");
  EXPECT_EQ(access.BearerToken(), "");
  EXPECT_EQ(access.ca_pem, "");
  EXPECT_THAT(DescribeAccess(access), HasSubstr("auth: none, plain http"));
}

TEST(KubeconfigTest, StaticTokenAndTokenFile) {
  TempDir dir;
  const std::string path =
      dir.Write("config", Kubeconfig("{server: \"https://h\"}", "{token: \" static-secret \"}"));
  const ClusterAccess access = LoadKubeconfig(path, "");
  EXPECT_EQ(access.BearerToken(), "static-secret");
  EXPECT_THAT(DescribeAccess(access), HasSubstr("auth: bearer token"));
  EXPECT_THAT(DescribeAccess(access), Not(HasSubstr("secret")));

  // With both, the file is used (kubectl), the static token only while the file is unreadable.
  const std::string token = dir.Write("token", "from-file\n");
  const std::string both = dir.Write(
      "both", Kubeconfig("{server: \"https://h\"}", "{token: fallback, tokenFile: token}"));
  const ClusterAccess with_file = LoadKubeconfig(both, "");
  EXPECT_EQ(with_file.BearerToken(), "from-file");
  fs::remove(token);
  EXPECT_EQ(LoadKubeconfig(both, "").BearerToken(), "fallback");
}

TEST(KubeconfigTest, TokenFileRotation) {
  TempDir dir;
  const std::string token = dir.Write("token", "one\n");
  const std::string path =
      dir.Write("config", Kubeconfig("{server: \"https://h\"}", "{tokenFile: token}"));
  const ClusterAccess access = LoadKubeconfig(path, "");
  const ClusterAccess copy = access;  // copies share the cache
  EXPECT_EQ(access.BearerToken(), "one");

  // Rewritten with the same mtime: still the cached value (read at most once a minute).
  const fs::file_time_type mtime = fs::last_write_time(token);
  dir.Write("token", "two\n");
  fs::last_write_time(token, mtime);
  EXPECT_EQ(access.BearerToken(), "one");

  // A new mtime: re-read at once.
  fs::last_write_time(token, mtime + std::chrono::seconds(10));
  EXPECT_EQ(copy.BearerToken(), "two");
  EXPECT_EQ(access.BearerToken(), "two");

  // The file gone: the last value read is kept.
  fs::remove(token);
  EXPECT_EQ(access.BearerToken(), "two");
  EXPECT_THAT(DescribeAccess(access), HasSubstr("auth: bearer token file " + token));
}

TEST(KubeconfigTest, TokenFileReadFromManyThreads) {
  TempDir dir;
  const std::string token = dir.Write("token", "one");
  ClusterAccess access;
  access.token_file = token;
  ASSERT_EQ(access.BearerToken(), "one");  // cached, so a reader racing the rewrite keeps it
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, copy = access] {
      for (int i = 0; i < 200; ++i) {
        const std::string value = copy.BearerToken();
        if (value != "one" && value != "two") ++bad;
      }
    });
  }
  dir.Write("token", "two");
  fs::last_write_time(token, fs::last_write_time(token) + std::chrono::seconds(10));
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(access.BearerToken(), "two");
}

TEST(KubeconfigTest, TokenFileWithoutAnyValueThrows) {
  ClusterAccess access;
  access.source = "test";
  access.token_file = "/nonexistent/token";
  EXPECT_EQ(ErrorOf([&] { access.BearerToken(); }),
            "test: token file /nonexistent/token: No such file or directory");
}

// InCluster sets the service variables and writes a service-account directory.
class InClusterTest : public ::testing::Test {
 protected:
  InClusterTest() {
    dir_.Write("sa/token", "sa-token\n");
    dir_.Write("sa/ca.crt", "SA CA");
    dir_.Write("sa/namespace", "team-a\n");
  }
  TempDir dir_;
  ScopedEnv host_{"KUBERNETES_SERVICE_HOST", "10.96.0.1"};
  ScopedEnv port_{"KUBERNETES_SERVICE_PORT", "443"};
  ScopedEnv pod_namespace_{"POD_NAMESPACE", std::nullopt};
};

TEST_F(InClusterTest, ReadsServiceAccount) {
  const ClusterAccess access = LoadInCluster(dir_.Path("sa"));
  EXPECT_EQ(access.server, "https://10.96.0.1:443");
  EXPECT_EQ(access.host, "10.96.0.1");
  EXPECT_EQ(access.port, "443");
  EXPECT_TRUE(access.tls);
  EXPECT_EQ(access.ca_pem, "SA CA");
  EXPECT_EQ(access.token_file, dir_.Path("sa/token"));
  EXPECT_EQ(access.BearerToken(), "sa-token");
  EXPECT_EQ(access.default_namespace, "team-a");
  EXPECT_EQ(access.source, "in-cluster");

  // The kubelet rotates the token in place.
  dir_.Write("sa/token", "rotated\n");
  fs::last_write_time(dir_.Path("sa/token"),
                      fs::last_write_time(dir_.Path("sa/token")) + std::chrono::seconds(5));
  EXPECT_EQ(access.BearerToken(), "rotated");
}

TEST_F(InClusterTest, Ipv6HostAndNamespaceOverride) {
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "fd00:10:96::1");
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "6443");
  ScopedEnv ns("POD_NAMESPACE", "from-env");
  const ClusterAccess access = LoadInCluster(dir_.Path("sa"));
  EXPECT_EQ(access.server, "https://[fd00:10:96::1]:6443");
  EXPECT_EQ(access.host, "fd00:10:96::1");
  EXPECT_EQ(access.default_namespace, "from-env");
  fs::remove(dir_.Path("sa/namespace"));
  ScopedEnv no_ns("POD_NAMESPACE", std::nullopt);
  EXPECT_EQ(LoadInCluster(dir_.Path("sa")).default_namespace, "default");
}

TEST_F(InClusterTest, Errors) {
  {
    ScopedEnv host("KUBERNETES_SERVICE_HOST", std::nullopt);
    EXPECT_EQ(ErrorOf([&] { LoadInCluster(dir_.Path("sa")); }),
              "in-cluster: KUBERNETES_SERVICE_HOST is not set, so this is not a pod; use a "
              "kubeconfig instead");
    ScopedEnv port("KUBERNETES_SERVICE_PORT", "");
    EXPECT_THAT(ErrorOf([&] { LoadInCluster(dir_.Path("sa")); }),
                HasSubstr("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set"));
  }
  {
    ScopedEnv port("KUBERNETES_SERVICE_PORT", "https");
    EXPECT_THAT(ErrorOf([&] { LoadInCluster(dir_.Path("sa")); }),
                HasSubstr("has an invalid port \"https\""));
  }
  fs::remove(dir_.Path("sa/ca.crt"));
  EXPECT_EQ(
      ErrorOf([&] { LoadInCluster(dir_.Path("sa")); }),
      "in-cluster: service-account CA " + dir_.Path("sa/ca.crt") + ": No such file or directory");
  fs::remove(dir_.Path("sa/token"));
  EXPECT_EQ(
      ErrorOf([&] { LoadInCluster(dir_.Path("sa")); }),
      "in-cluster: service-account token " + dir_.Path("sa/token") + ": No such file or directory");
}

// Pki is a CA with a server certificate (for kube.test and 127.0.0.1) and a client certificate
// it signed, generated with OpenSSL; a second key matches none of them.
struct Pki {
  std::string ca_pem, server_cert_pem, server_key_pem, client_cert_pem, client_key_pem,
      other_key_pem;
};

const Pki& TestPki() {
  using framework::testing::CertPem;
  using framework::testing::KeyPem;
  using framework::testing::MakeCert;
  static const Pki pki = [] {
    EVP_PKEY* ca_key = EVP_EC_gen("P-256");
    EVP_PKEY* server_key = EVP_EC_gen("P-256");
    EVP_PKEY* client_key = EVP_EC_gen("P-256");
    EVP_PKEY* other_key = EVP_EC_gen("P-256");
    X509* ca = MakeCert(ca_key, "test CA", nullptr, nullptr,
                        {{NID_basic_constraints, "critical,CA:TRUE"},
                         {NID_key_usage, "critical,keyCertSign,cRLSign"}});
    X509* server = MakeCert(
        server_key, "kube.test", ca, ca_key,
        {{NID_subject_alt_name, "DNS:kube.test,IP:127.0.0.1"}, {NID_ext_key_usage, "serverAuth"}});
    X509* client = MakeCert(client_key, "system:kube-scheduler", ca, ca_key,
                            {{NID_ext_key_usage, "clientAuth"}});
    Pki out{CertPem(ca),     CertPem(server),    KeyPem(server_key),
            CertPem(client), KeyPem(client_key), KeyPem(other_key)};
    for (X509* cert : {ca, server, client}) X509_free(cert);
    for (EVP_PKEY* key : {ca_key, server_key, client_key, other_key}) EVP_PKEY_free(key);
    return out;
  }();
  return pki;
}

// Handshake runs a TLS handshake in memory between a client made from `client` and a server
// presenting the test server certificate; returns the client's error, "" on success.
std::string Handshake(boost::asio::ssl::context& client) {
  const Pki& pki = TestPki();
  SSL_CTX* server_ctx = SSL_CTX_new(TLS_server_method());
  BIO* cert_bio = BIO_new_mem_buf(pki.server_cert_pem.data(), -1);
  X509* cert = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
  BIO* key_bio = BIO_new_mem_buf(pki.server_key_pem.data(), -1);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  SSL_CTX_use_certificate(server_ctx, cert);
  SSL_CTX_use_PrivateKey(server_ctx, key);
  SSL* s = SSL_new(server_ctx);
  SSL* c = SSL_new(client.native_handle());
  BIO* client_bio = nullptr;
  BIO* server_bio = nullptr;
  BIO_new_bio_pair(&client_bio, 0, &server_bio, 0);
  SSL_set_bio(c, client_bio, client_bio);
  SSL_set_bio(s, server_bio, server_bio);
  SSL_set_connect_state(c);
  SSL_set_accept_state(s);
  std::string error = "handshake did not finish";
  for (int i = 0; i < 50; ++i) {
    const int cr = SSL_do_handshake(c);
    const int sr = SSL_do_handshake(s);
    if (cr == 1 && sr == 1) {
      error = "";
      break;
    }
    const int ce = SSL_get_error(c, cr);
    if (cr != 1 && ce != SSL_ERROR_WANT_READ && ce != SSL_ERROR_WANT_WRITE) {
      error = X509_verify_cert_error_string(SSL_get_verify_result(c));
      break;
    }
  }
  SSL_free(c);
  SSL_free(s);
  SSL_CTX_free(server_ctx);
  X509_free(cert);
  EVP_PKEY_free(key);
  BIO_free(cert_bio);
  BIO_free(key_bio);
  return error;
}

ClusterAccess TlsAccess() {
  ClusterAccess access;
  access.server = "https://127.0.0.1:6443";
  access.host = "127.0.0.1";
  access.port = "6443";
  access.source = "kubeconfig /k (context a, user u)";
  access.ca_pem = TestPki().ca_pem;
  access.ca_origin = "cluster \"c\" certificate-authority-data";
  return access;
}

TEST(MakeSslContextTest, VerifiesTheServerAgainstTheCa) {
  ClusterAccess access = TlsAccess();
  EXPECT_EQ(Handshake(*MakeSslContext(access)), "");  // by IP address
  access.tls_server_name = "kube.test";
  EXPECT_EQ(Handshake(*MakeSslContext(access)), "");
  access.tls_server_name = "other.test";
  EXPECT_EQ(Handshake(*MakeSslContext(access)), "hostname mismatch");
  access.insecure_skip_tls_verify = true;
  access.ca_pem.clear();
  EXPECT_EQ(Handshake(*MakeSslContext(access)), "");

  // A CA that did not sign the server's certificate.
  ClusterAccess wrong_ca = TlsAccess();
  wrong_ca.ca_pem = TestPki().client_cert_pem;
  EXPECT_THAT(Handshake(*MakeSslContext(wrong_ca)), HasSubstr("unable to get local issuer"));
}

TEST(MakeSslContextTest, ClientCertificate) {
  ClusterAccess access = TlsAccess();
  access.client_cert_pem = TestPki().client_cert_pem;
  access.client_key_pem = TestPki().client_key_pem;
  access.client_key_origin = "user \"u\" client-key-data";
  access.client_cert_origin = "user \"u\" client-certificate-data";
  const auto context = MakeSslContext(access);
  EXPECT_NE(SSL_CTX_get0_certificate(context->native_handle()), nullptr);
  EXPECT_EQ(Handshake(*context), "");

  access.client_key_pem = TestPki().other_key_pem;
  EXPECT_EQ(ErrorOf([&] { MakeSslContext(access); }),
            "kubeconfig /k (context a, user u): user \"u\" client-key-data does not match user "
            "\"u\" client-certificate-data");
  access.client_key_pem = "garbage";
  EXPECT_EQ(ErrorOf([&] { MakeSslContext(access); }),
            "kubeconfig /k (context a, user u): user \"u\" client-key-data is not a PEM private "
            "key");
  access.client_cert_pem = "garbage";
  EXPECT_EQ(ErrorOf([&] { MakeSslContext(access); }),
            "kubeconfig /k (context a, user u): user \"u\" client-certificate-data is not a PEM "
            "certificate");
}

TEST(MakeSslContextTest, RefusesABadCa) {
  ClusterAccess access = TlsAccess();
  for (const std::string& bad :
       {std::string("garbage"),
        std::string("-----BEGIN CERTIFICATE-----\nAAAA\n-----END "
                    "CERTIFICATE-----\n"),
        TestPki().ca_pem + "-----BEGIN CERTIFICATE-----\nbroken\n-----END CERTIFICATE-----\n"}) {
    access.ca_pem = bad;
    EXPECT_EQ(ErrorOf([&] { MakeSslContext(access); }),
              "kubeconfig /k (context a, user u): cluster \"c\" certificate-authority-data is not "
              "a PEM certificate");
  }
  // A bundle of two CAs is fine.
  access.ca_pem = TestPki().ca_pem + TestPki().client_cert_pem;
  EXPECT_EQ(Handshake(*MakeSslContext(access)), "");
}

TEST(MakeSslContextTest, FromAKubeconfig) {
  TempDir dir;
  const Pki& pki = TestPki();
  dir.Write("pki/ca.crt", pki.ca_pem);
  dir.Write("pki/client.key", pki.client_key_pem);
  const std::string path =
      dir.Write("config", Kubeconfig("{server: \"https://127.0.0.1:6443\", certificate-authority: "
                                     "pki/ca.crt}",
                                     "{client-certificate-data: " + Base64(pki.client_cert_pem) +
                                         ", client-key: pki/client.key}"));
  const ClusterAccess access = LoadKubeconfig(path, "");
  EXPECT_EQ(Handshake(*MakeSslContext(access)), "");
  const std::string garbage =
      dir.Write("garbage", Kubeconfig("{server: \"https://h\", certificate-authority-data: " +
                                          Base64("not a certificate") + "}",
                                      "{}"));
  EXPECT_EQ(ErrorOf([&] { MakeSslContext(LoadKubeconfig(garbage, "")); }),
            "kubeconfig " + garbage +
                " (context a, user u): cluster \"c\" "
                "certificate-authority-data is not a PEM certificate");
}

}  // namespace
}  // namespace schedhost::kube
