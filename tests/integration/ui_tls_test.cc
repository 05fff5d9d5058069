// The web UI over HTTPS: HttpServer with TLS (answers, keep-alive and errors as over plain HTTP;
// plain HTTP and untrusted clients refused per connection while the server goes on; bad files
// refused by Start, naming them), and a ServiceHost whose [ui] listen is not loopback serving the
// JSON API with [api.tls]'s certificate, mutual TLS included. The certificates are made in memory
// with OpenSSL (test_certs.h).
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/api/http_server.h"
#include "host/api/service_host.h"
#include "host/config/host_config.h"
#include "host/framework/testing/harness.h"
#include "host/framework/testing/temp_dir.h"
#include "host/framework/testing/test_certs.h"

namespace schedhost::api {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

using framework::testing::CertPem;
using framework::testing::KeyPem;
using framework::testing::MakeCert;

// Pki is files in a temporary directory: a CA, the server's certificate for 127.0.0.1 and its
// key, a client certificate the CA signed, and a client certificate of another CA.
struct Pki {
  framework::testing::TempDir temp;
  fs::path ca, server_cert, server_key, client_cert, client_key, stranger_cert, stranger_key;

  Pki() {
    const fs::path& d = temp.path();
    ca = d / "ca.pem";
    server_cert = d / "server.pem";
    server_key = d / "server.key";
    client_cert = d / "client.pem";
    client_key = d / "client.key";
    stranger_cert = d / "stranger.pem";
    stranger_key = d / "stranger.key";
    EVP_PKEY* ca_key = EVP_EC_gen("P-256");
    EVP_PKEY* other_ca_key = EVP_EC_gen("P-256");
    EVP_PKEY* server_key_pair = EVP_EC_gen("P-256");
    EVP_PKEY* client_key_pair = EVP_EC_gen("P-256");
    EVP_PKEY* stranger_key_pair = EVP_EC_gen("P-256");
    const std::vector<std::pair<int, const char*>> ca_ext = {
        {NID_basic_constraints, "critical,CA:TRUE"},
        {NID_key_usage, "critical,keyCertSign,cRLSign"}};
    X509* ca_x = MakeCert(ca_key, "ui test CA", nullptr, nullptr, ca_ext);
    X509* other_ca_x = MakeCert(other_ca_key, "another CA", nullptr, nullptr, ca_ext);
    X509* server_x = MakeCert(
        server_key_pair, "127.0.0.1", ca_x, ca_key,
        {{NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1"}, {NID_ext_key_usage, "serverAuth"}});
    X509* client_x =
        MakeCert(client_key_pair, "operator", ca_x, ca_key, {{NID_ext_key_usage, "clientAuth"}});
    X509* stranger_x = MakeCert(stranger_key_pair, "stranger", other_ca_x, other_ca_key,
                                {{NID_ext_key_usage, "clientAuth"}});
    std::ofstream(ca) << CertPem(ca_x);
    std::ofstream(server_cert) << CertPem(server_x);
    std::ofstream(server_key) << KeyPem(server_key_pair);
    std::ofstream(client_cert) << CertPem(client_x);
    std::ofstream(client_key) << KeyPem(client_key_pair);
    std::ofstream(stranger_cert) << CertPem(stranger_x);
    std::ofstream(stranger_key) << KeyPem(stranger_key_pair);
    for (X509* cert : {ca_x, other_ca_x, server_x, client_x, stranger_x}) X509_free(cert);
    for (EVP_PKEY* key :
         {ca_key, other_ca_key, server_key_pair, client_key_pair, stranger_key_pair}) {
      EVP_PKEY_free(key);
    }
  }

  HttpTls Tls(bool mutual) const {
    HttpTls tls{.cert = server_cert, .key = server_key, .setting = "api.tls"};
    if (mutual) tls.client_ca = ca;
    return tls;
  }
};

// ---- clients ----

struct Answer {
  unsigned status = 0;
  std::string content_type;
  std::string body;
};

// Exchange is what a TLS client got: an answer per request until `error` (the step that
// failed and why; "" when every request was answered).
struct Exchange {
  std::string error;
  std::vector<Answer> answers;
};

struct ClientCert {
  fs::path cert, key;
};

// TlsRequests connects to 127.0.0.1:port, checks the server's certificate for 127.0.0.1
// against `ca`, presents `client` when given, and sends each (method, target) in turn on that
// one connection. Every step is bounded by 10 s.
Exchange TlsRequests(uint16_t port, const fs::path& ca, const std::optional<ClientCert>& client,
                     const std::vector<std::pair<http::verb, std::string>>& requests) {
  asio::io_context ioc;
  asio::ssl::context ctx(asio::ssl::context::tls_client);
  ctx.set_verify_mode(asio::ssl::verify_peer);
  ctx.load_verify_file(ca.string());
  if (client) {
    ctx.use_certificate_chain_file(client->cert.string());
    ctx.use_private_key_file(client->key.string(), asio::ssl::context::pem);
  }
  beast::ssl_stream<beast::tcp_stream> stream(ioc, ctx);
  X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(stream.native_handle()), "127.0.0.1");
  Exchange out;
  beast::error_code ec;
  auto step = [&](const char* what) {
    ioc.restart();
    ioc.run();
    if (ec) out.error = std::string(what) + ": " + ec.message();
    return !ec;
  };
  auto done = [&](beast::error_code e, auto&&...) { ec = e; };
  beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(10));
  beast::get_lowest_layer(stream).async_connect(
      asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), done);
  if (!step("connect")) return out;
  beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(10));
  stream.async_handshake(asio::ssl::stream_base::client, done);
  if (!step("handshake")) return out;
  beast::flat_buffer buffer;
  for (size_t i = 0; i < requests.size(); ++i) {
    http::request<http::empty_body> req(requests[i].first, requests[i].second, 11);
    req.set(http::field::host, "127.0.0.1");
    req.keep_alive(i + 1 < requests.size());
    beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(10));
    http::async_write(stream, req, done);
    if (!step("write")) return out;
    http::response<http::string_body> res;
    http::async_read(stream, buffer, res, done);
    if (!step("read")) return out;
    out.answers.push_back(
        {res.result_int(), std::string(res[http::field::content_type]), res.body()});
  }
  return out;
}

Exchange TlsGet(uint16_t port, const fs::path& ca, const std::optional<ClientCert>& client,
                const std::string& target) {
  return TlsRequests(port, ca, client, {{http::verb::get, target}});
}

// PlainGet sends a plain HTTP GET to 127.0.0.1:port and returns what comes back before the
// server closes; `closed` says it did close (rather than the 10 s wait running out).
std::string PlainGet(uint16_t port, const std::string& target, bool* closed) {
  *closed = false;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return "<connect failed>";
  }
  timeval tv{.tv_sec = 10, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  const std::string request =
      "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
      continue;
    }
    *closed = n == 0 || errno == ECONNRESET;
    break;
  }
  ::close(fd);
  return out;
}

HttpRoute TestRoute() {
  return [](std::string_view path, std::string_view) -> std::optional<HttpAnswer> {
    if (path == "/hello") return HttpAnswer{200, "application/json", R"({"hello":"tls"})"};
    if (path == "/boom") throw std::runtime_error("it broke");
    return std::nullopt;
  };
}

// ---- HttpServer ----

// Over TLS the server answers as over plain HTTP: the route's body, 404, 500, 405, several
// requests on one connection.
TEST(UiTls, ServesTheRouteOverTlsWithKeepAlive) {
  const Pki pki;
  HttpServer server("ui", "127.0.0.1:0", TestRoute(), pki.Tls(false));
  server.Start();
  ASSERT_TRUE(server.tls());
  const uint16_t port = server.port();
  ASSERT_NE(port, 0);

  const Exchange one = TlsGet(port, pki.ca, std::nullopt, "/hello");
  EXPECT_THAT(one.error, IsEmpty());
  ASSERT_EQ(one.answers.size(), 1U);
  EXPECT_EQ(one.answers[0].status, 200U);
  EXPECT_EQ(one.answers[0].content_type, "application/json");
  EXPECT_EQ(one.answers[0].body, R"({"hello":"tls"})");

  const Exchange several = TlsRequests(port, pki.ca, std::nullopt,
                                       {{http::verb::get, "/hello"},
                                        {http::verb::get, "/nowhere"},
                                        {http::verb::get, "/boom"},
                                        {http::verb::post, "/hello"},
                                        {http::verb::get, "/hello"}});
  EXPECT_THAT(several.error, IsEmpty());
  ASSERT_EQ(several.answers.size(), 5U);
  EXPECT_EQ(several.answers[0].status, 200U);
  EXPECT_EQ(several.answers[1].status, 404U);
  EXPECT_EQ(several.answers[2].status, 500U);
  EXPECT_EQ(several.answers[2].body, "it broke\n");
  EXPECT_EQ(several.answers[3].status, 405U);
  EXPECT_EQ(several.answers[4].body, R"({"hello":"tls"})");
  server.Stop();
}

// Plain HTTP to the TLS port is no handshake: that connection closes unanswered and the next
// TLS client is served.
TEST(UiTls, PlainHttpGetsNoAnswerAndTheServerGoesOn) {
  const Pki pki;
  HttpServer server("ui", "127.0.0.1:0", TestRoute(), pki.Tls(false));
  server.Start();
  const uint16_t port = server.port();
  for (int i = 0; i < 2; ++i) {
    bool closed = false;
    const std::string plain = PlainGet(port, "/hello", &closed);
    EXPECT_TRUE(closed) << "the server kept a plain HTTP connection open";
    EXPECT_THAT(plain, Not(HasSubstr("HTTP/1.1")));
    EXPECT_THAT(plain, Not(HasSubstr("hello")));
    const Exchange after = TlsGet(port, pki.ca, std::nullopt, "/hello");
    EXPECT_THAT(after.error, IsEmpty());
    ASSERT_EQ(after.answers.size(), 1U);
    EXPECT_EQ(after.answers[0].status, 200U);
  }
}

// With client_ca, a client needs a certificate that CA signed: none, or another CA's, is
// refused (only that connection), the CA's is served.
TEST(UiTls, ClientCaRequiresAClientCertificateItSigned) {
  const Pki pki;
  HttpServer server("ui", "127.0.0.1:0", TestRoute(), pki.Tls(true));
  server.Start();
  const uint16_t port = server.port();

  const Exchange anonymous = TlsGet(port, pki.ca, std::nullopt, "/hello");
  // TLS 1.3: the client's handshake ends before the server has checked it; the alert comes next.
  EXPECT_THAT(anonymous.error, HasSubstr("alert certificate required"));
  EXPECT_THAT(anonymous.answers, IsEmpty());

  const Exchange stranger =
      TlsGet(port, pki.ca, ClientCert{pki.stranger_cert, pki.stranger_key}, "/hello");
  EXPECT_THAT(stranger.error, HasSubstr("alert unknown ca"));
  EXPECT_THAT(stranger.answers, IsEmpty());

  const Exchange known = TlsGet(port, pki.ca, ClientCert{pki.client_cert, pki.client_key}, "/hello");
  EXPECT_THAT(known.error, IsEmpty());
  ASSERT_EQ(known.answers.size(), 1U);
  EXPECT_EQ(known.answers[0].status, 200U);
  EXPECT_EQ(known.answers[0].body, R"({"hello":"tls"})");
}

// StartError returns what Start throws for `tls`, and checks that nothing listens then.
std::string StartError(const HttpTls& tls) {
  HttpServer server("ui", "127.0.0.1:0", TestRoute(), tls);
  try {
    server.Start();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(server.port(), 0);
    return e.what();
  }
  ADD_FAILURE() << "Start accepted " << tls.cert << " and " << tls.key;
  return "";
}

// Bad TLS files stop Start with the setting, the file and what is wrong.
TEST(UiTls, BadFilesMakeStartThrowNamingTheFile) {
  const Pki pki;
  const fs::path& d = pki.temp.path();
  const std::string where = "cannot serve ui.listen \"127.0.0.1:0\" over TLS: ";
  std::ofstream(d / "garbage.key") << "-----BEGIN PRIVATE KEY-----\nnot base64 at all\n"
                                      "-----END PRIVATE KEY-----\n";
  HttpTls tls = pki.Tls(false);
  tls.key = d / "garbage.key";
  EXPECT_THAT(StartError(tls),
              HasSubstr(where + "api.tls.key: " + (d / "garbage.key").string() +
                        ": not a PEM private key ("));

  tls.key = d / "missing.key";
  EXPECT_EQ(StartError(tls), where + "api.tls.key: cannot read " + (d / "missing.key").string() +
                                 ": No such file or directory");

  // Another key than the certificate's.
  tls.key = pki.client_key;
  EXPECT_EQ(StartError(tls), where + "api.tls.key: " + pki.client_key.string() +
                                 ": does not match the certificate in " +
                                 pki.server_cert.string());

  // A key of another type (RSA, the certificate's is EC).
  EVP_PKEY* rsa = EVP_RSA_gen(2048);
  std::ofstream(d / "rsa.key") << KeyPem(rsa);
  EVP_PKEY_free(rsa);
  tls.key = d / "rsa.key";
  EXPECT_EQ(StartError(tls), where + "api.tls.key: " + (d / "rsa.key").string() +
                                 ": does not match the certificate in " +
                                 pki.server_cert.string());

  tls = pki.Tls(false);
  tls.cert = pki.server_key;  // a key where the certificate goes
  EXPECT_THAT(StartError(tls), HasSubstr(where + "api.tls.cert: " + pki.server_key.string() +
                                         ": not a PEM certificate chain ("));

  tls = pki.Tls(true);
  std::ofstream(d / "empty-ca.pem") << "";
  tls.client_ca = d / "empty-ca.pem";
  EXPECT_THAT(StartError(tls), HasSubstr(where + "api.tls.client_ca: " +
                                         (d / "empty-ca.pem").string() + ": not PEM certificates"));
}

// ---- ServiceHost ----

std::string HostToml(const fs::path& dir, const Pki& pki, const std::string& ui_listen,
                     const fs::path& key, bool mutual) {
  std::string toml = "[host]\nstate_dir = \"" + (dir / "state").string() +
                     "\"\n[ui]\nlisten = \"" + ui_listen + "\"\n[api]\nlisten = \"unix://" +
                     (dir / "s.sock").string() + "\"\n[api.tls]\ncert = \"" +
                     pki.server_cert.string() + "\"\nkey = \"" + key.string() + "\"\n";
  if (mutual) toml += "client_ca = \"" + pki.ca.string() + "\"\n";
  return toml + "[metrics]\nlisten = \"127.0.0.1:0\"\n";
}

// [ui] listen on every address takes the API's certificate and client_ca: the JSON API answers
// over TLS to a client with a certificate the CA signed, and to nothing else.
TEST(UiTls, ServiceHostServesTheUiOverTlsBeyondLoopback) {
  const Pki pki;
  const framework::testing::TempDir temp;
  // [ui] comes before [api] in the file: the TLS rule holds in any order.
  ServiceHost host(config::ParseConfig(HostToml(temp.path(), pki, "0.0.0.0:0", pki.server_key,
                                                /*mutual=*/true),
                                       "test.toml", {}),
                   framework::testing::PluginDir());
  host.Start();
  const uint16_t port = host.ui_port();
  ASSERT_NE(port, 0);

  const Exchange stats =
      TlsGet(port, pki.ca, ClientCert{pki.client_cert, pki.client_key}, "/api/v1/stats");
  EXPECT_THAT(stats.error, IsEmpty());
  ASSERT_EQ(stats.answers.size(), 1U);
  EXPECT_EQ(stats.answers[0].status, 200U);
  EXPECT_EQ(stats.answers[0].content_type, "application/json");
  const nlohmann::json body =
      nlohmann::json::parse(stats.answers[0].body, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(body.is_object()) << stats.answers[0].body;
  EXPECT_EQ(body.value("config_generation", ""), "1") << stats.answers[0].body;

  const Exchange anonymous = TlsGet(port, pki.ca, std::nullopt, "/api/v1/stats");
  EXPECT_THAT(anonymous.error, HasSubstr("alert certificate required"));
  EXPECT_THAT(anonymous.answers, IsEmpty());
  bool closed = false;
  EXPECT_THAT(PlainGet(port, "/api/v1/stats", &closed), Not(HasSubstr("HTTP/1.1")));
  EXPECT_TRUE(closed);
  host.Stop();
}

// On loopback the UI stays plain HTTP, [api.tls] or not.
TEST(UiTls, ServiceHostKeepsLoopbackPlain) {
  const Pki pki;
  const framework::testing::TempDir temp;
  ServiceHost host(config::ParseConfig(HostToml(temp.path(), pki, "127.0.0.1:0", pki.server_key,
                                                /*mutual=*/true),
                                       "test.toml", {}),
                   framework::testing::PluginDir());
  host.Start();
  bool closed = false;
  EXPECT_THAT(PlainGet(host.ui_port(), "/api/v1/stats", &closed),
              HasSubstr("HTTP/1.1 200 OK\r\n"));
  host.Stop();
}

// A key the UI cannot use refuses the start with the message the daemon prints.
TEST(UiTls, ServiceHostRefusesToStartWithABadKey) {
  const Pki pki;
  const framework::testing::TempDir temp;
  const fs::path bad = temp.path() / "bad.key";
  std::ofstream(bad) << "not a key\n";
  ServiceHost host(
      config::ParseConfig(HostToml(temp.path(), pki, "0.0.0.0:0", bad, false), "test.toml", {}),
      framework::testing::PluginDir());
  try {
    host.Start();
    ADD_FAILURE() << "Start accepted a bad key";
  } catch (const ServiceHostError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot serve ui.listen \"0.0.0.0:0\" over TLS: api.tls.key: " +
                                    bad.string() + ": not a PEM private key"));
  }
  EXPECT_EQ(host.ui_port(), 0);
}

}  // namespace
}  // namespace schedhost::api
