// MetricsServer: schedhostd's plain HTTP endpoint on `[metrics] listen` (Boost.Beast), serving
// GET /metrics (Prometheus text format 0.0.4), /healthz and /readyz on a thread of its own.
//
// It is small on purpose: GET only (405 otherwise), 404 for other paths, requests bounded (8 KiB
// of headers, no body), 10 s to send one; a malformed or oversized request closes its
// connection and nothing else. Keep-alive is honoured.
//
//   MetricsServer server("127.0.0.1:0", {.metrics = render, .ready = is_ready});
//   server.Start();              // throws std::runtime_error saying why it cannot listen
//   uint16_t port = server.port();
//   server.Stop();
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

namespace schedhost::api {

// MetricsHandlers are what the endpoints answer with; both run on the server's thread.
struct MetricsHandlers {
  // metrics returns the /metrics body.
  std::function<std::string()> metrics;
  // ready tells whether /readyz answers 200 (else 503); what it writes to *body (e.g. why not, or
  // whether this replica leads) is the answer's body, else "ok" / "not ready".
  std::function<bool(std::string* body)> ready;
};

// MetricsServer serves the metrics and health endpoints; Start and Stop from one thread.
class MetricsServer {
 public:
  // MetricsServer will listen on `listen` ("host:port", "[v6]:port"; an empty host means every
  // IPv4 address; port 0 picks a free port).
  MetricsServer(std::string listen, MetricsHandlers handlers);
  // ~MetricsServer stops the server.
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Start binds and starts serving. Throws std::runtime_error naming the address and the reason.
  void Start();
  // Stop closes the listener and every connection and joins the thread. Idempotent.
  void Stop();
  // port returns the bound port (0 before Start).
  uint16_t port() const { return port_; }

 private:
  struct Impl;
  std::string listen_;
  MetricsHandlers handlers_;
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
  uint16_t port_ = 0;
};

}  // namespace schedhost::api
