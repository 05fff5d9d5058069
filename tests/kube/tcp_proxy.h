// TcpProxy: a TCP forwarder a test puts between a client and the API server to make the
// network misbehave on command. It listens on 127.0.0.1 (a free port) and forwards every
// connection to 127.0.0.1:target_port, byte for byte (TLS passes through untouched, so the
// client still verifies the API server's certificate, which names 127.0.0.1).
//
//   TcpProxy proxy(api_server_port);
//   ... point a kubeconfig at https://127.0.0.1:<proxy.port()> ...
//   proxy.Cut();   // a partition: nothing passes either way, nothing is refused or closed
//   proxy.Heal();  // connections from before are closed (as a long partition ends them); new
//                  // ones pass again
//   proxy.SetLatency(50ms);  // every piece read is held 50 ms before it is passed on
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

namespace schedhost::testing {

class TcpProxy {
 public:
  // TcpProxy starts listening and forwarding at once; throws std::runtime_error when it cannot.
  explicit TcpProxy(uint16_t target_port);
  ~TcpProxy();
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  uint16_t port() const;
  // Cut stops every byte in both directions, on open connections and new ones alike: the
  // peers see silence, not an error.
  void Cut();
  // Stall silences every connection open now, for good (their bytes are held until they
  // close); connections opened later pass. A peer that vanished without closing looks so.
  void Stall();
  // Heal closes every connection opened before it and forwards new ones again.
  void Heal();
  // SetLatency holds every piece of data read, either way, `latency` before writing it on (a
  // slow network; 0 ends it). Pieces of one connection keep their order, and a piece is read
  // only once the one before it is written, so a message split over several reads takes that
  // many times `latency`.
  void SetLatency(std::chrono::milliseconds latency);

  // requests_in_flight counts the connections whose client has sent bytes the server has not
  // answered yet: on HTTP/1.1, the requests waiting for their response (a watch counts until
  // its response starts). peak_requests_in_flight is the most at once since the proxy started
  // or since ResetPeak, which sets it to requests_in_flight.
  int requests_in_flight() const;
  int peak_requests_in_flight() const;
  void ResetPeak();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace schedhost::testing
