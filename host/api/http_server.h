// HttpServer: schedhostd's HTTP endpoints (Boost.Beast), each on a thread of its own: the
// metrics endpoint on `[metrics] listen` (GET /metrics in Prometheus text format 0.0.4,
// /healthz, /readyz; MetricsRoute) and the web UI's JSON API on `[ui] listen` (UiRoute in
// ui_api.h), which is HTTPS with the API's certificate when it listens beyond loopback.
//
// It is small on purpose: GET only (405 otherwise), requests bounded (8 KiB of headers, no
// body), 10 s to send one; a malformed or oversized request closes its connection and nothing
// else. Keep-alive is honoured. A route that throws answers 500 with the message. Over TLS the
// same holds; a failed handshake closes that connection only.
//
//   HttpServer server("metrics", "127.0.0.1:0", MetricsRoute({.metrics = render, .ready = ok}));
//   server.Start();              // throws std::runtime_error saying why it cannot listen
//   uint16_t port = server.port();
//   server.Stop();
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

namespace schedhost::api {

// HttpAnswer is one answer to a GET.
struct HttpAnswer {
  unsigned status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// HttpRoute answers GET `path` with `query` (the part after '?', still percent-encoded), or
// nullopt for a path it does not serve (404). It runs on the server's thread.
using HttpRoute =
    std::function<std::optional<HttpAnswer>(std::string_view path, std::string_view query)>;

// MetricsHandlers are what the metrics endpoint answers with.
struct MetricsHandlers {
  // metrics returns the /metrics body.
  std::function<std::string()> metrics;
  // ready tells whether /readyz answers 200 (else 503); what it writes to *body (e.g. why not, or
  // whether this replica leads) is the answer's body, else "ok" / "not ready".
  std::function<bool(std::string* body)> ready;
};

// MetricsRoute serves /metrics, /healthz and /readyz from `handlers`.
HttpRoute MetricsRoute(MetricsHandlers handlers);

// HttpTls makes an HttpServer speak HTTPS (TLS 1.2 or later): PEM files, read by Start.
struct HttpTls {
  // cert is the certificate chain the server presents, key its private key.
  std::filesystem::path cert;
  std::filesystem::path key;
  // client_ca, when set, makes the server require a client certificate that it signed.
  std::optional<std::filesystem::path> client_ca;
  // setting is the config table the paths come from ("api.tls"), so that a message names the
  // key to fix ("api.tls.key: cannot read ...").
  std::string setting = "tls";
};

// HttpServer serves one route; Start and Stop from one thread.
class HttpServer {
 public:
  // HttpServer will listen on `listen` ("host:port", "[v6]:port"; an empty host means every
  // IPv4 address; port 0 picks a free port), over TLS when `tls` is set. `name` is the config
  // section it comes from ("metrics", "ui"), for messages.
  HttpServer(std::string name, std::string listen, HttpRoute route,
             std::optional<HttpTls> tls = std::nullopt);
  // ~HttpServer stops the server.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Start loads the TLS files (if any), binds and starts serving. Throws std::runtime_error
  // naming the address, or the TLS file, and the reason; nothing listens then.
  void Start();
  // Stop closes the listener and every connection and joins the thread. Idempotent.
  void Stop();
  // port returns the bound port (0 before Start).
  uint16_t port() const { return port_; }
  // tls tells whether the server speaks HTTPS.
  bool tls() const { return tls_.has_value(); }

 private:
  struct Impl;
  std::string name_;
  std::string listen_;
  HttpRoute route_;
  std::optional<HttpTls> tls_;
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
  uint16_t port_ = 0;
};

}  // namespace schedhost::api
