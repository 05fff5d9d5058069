#include "tests/kube/tcp_proxy.h"

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <functional>
#include <future>
#include <list>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace schedhost::testing {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// Pipe is one proxied connection: two sockets and a pump each way.
struct Pipe {
  Pipe(tcp::socket client, asio::io_context& io, std::atomic<int>& in_flight,
       std::atomic<int>& peak)
      : client(std::move(client)), server(io), in_flight(in_flight), peak(peak) {}
  tcp::socket client;
  tcp::socket server;
  std::atomic<int>& in_flight;  // the proxy's count of pipes awaiting an answer
  std::atomic<int>& peak;       // and its peak
  bool closed = false;
  bool stalled = false;   // Stall: its bytes are held until it closes
  bool awaiting = false;  // the client sent bytes the server has not answered yet

  // Awaiting marks whether the pipe waits for an answer, keeping the count and its peak.
  void Awaiting(bool now_awaiting) {
    if (awaiting == now_awaiting) return;
    awaiting = now_awaiting;
    if (!awaiting) {
      --in_flight;
      return;
    }
    const int now = ++in_flight;
    for (int p = peak.load(); now > p && !peak.compare_exchange_weak(p, now);) {
    }
  }

  void Close() {
    if (closed) return;
    closed = true;
    Awaiting(false);
    boost::system::error_code ignored;
    client.close(ignored);
    server.close(ignored);
  }
};

}  // namespace

// Handlers hold the State by plain pointer: it outlives the io thread (the destructor joins it),
// and the pipes they own are freed when the io_context is destroyed with its pending handlers.
// A shared_ptr<State> in a handler would be a cycle (State owns io, io owns the handler).
struct TcpProxy::State {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  uint16_t target_port = 0;
  std::thread thread;
  // All below only on the io thread, except `cut`.
  std::atomic<bool> cut{false};
  std::atomic<int64_t> latency_ms{0};
  std::atomic<int> in_flight{0};  // pipes awaiting an answer
  std::atomic<int> peak{0};
  std::list<std::weak_ptr<Pipe>> pipes;

  void Accept() {
    acceptor.async_accept([self = this](boost::system::error_code ec,
                                                      tcp::socket socket) {
      if (ec) return;  // closed
      auto pipe = std::make_shared<Pipe>(std::move(socket), self->io, self->in_flight,
                                         self->peak);
      self->pipes.push_back(pipe);
      self->pipes.remove_if([](const std::weak_ptr<Pipe>& p) { return p.expired(); });
      self->Connect(pipe);
      self->Accept();
    });
  }

  void Connect(const std::shared_ptr<Pipe>& pipe) {
    pipe->server.async_connect(
        tcp::endpoint(asio::ip::make_address("127.0.0.1"), target_port),
        [self = this, pipe](boost::system::error_code ec) {
          if (ec) {
            pipe->Close();
            return;
          }
          self->Pump(pipe, pipe->client, pipe->server);
          self->Pump(pipe, pipe->server, pipe->client);
        });
  }

  // Pump moves bytes from `from` to `to` until either side closes. While cut, what it has read
  // waits (and nothing more is read) until the cut heals, which closes the pipe instead.
  void Pump(const std::shared_ptr<Pipe>& pipe, tcp::socket& from, tcp::socket& to) {
    auto buffer = std::make_shared<std::vector<char>>(16384);
    from.async_read_some(
        asio::buffer(*buffer),
        [self = this, pipe, &from, &to, buffer](boost::system::error_code ec,
                                                              size_t n) {
          if (ec || pipe->closed) {
            pipe->Close();
            return;
          }
          pipe->Awaiting(&from == &pipe->client);
          buffer->resize(n);
          self->Forward(pipe, from, to, buffer);
        });
  }

  // Forward writes what was read, after the latency unless `delayed` says it has waited it;
  // while cut or stalled, it holds it (re-checking every 20 ms) until Heal closes the pipe.
  void Forward(const std::shared_ptr<Pipe>& pipe, tcp::socket& from, tcp::socket& to,
               const std::shared_ptr<std::vector<char>>& buffer, bool delayed = false) {
    const int64_t latency = latency_ms.load();
    const bool hold = cut.load() || pipe->stalled;
    if (hold || (!delayed && latency > 0)) {
      auto timer = std::make_shared<asio::steady_timer>(
          io, std::chrono::milliseconds(hold ? 20 : latency));
      timer->async_wait([self = this, pipe, &from, &to, buffer,
                         timer](boost::system::error_code) {
        if (pipe->closed || !timer) return;  // the timer lives until its wait ends
        self->Forward(pipe, from, to, buffer, /*delayed=*/true);
      });
      return;
    }
    Write(pipe, from, to, buffer);
  }

  void Write(const std::shared_ptr<Pipe>& pipe, tcp::socket& from, tcp::socket& to,
             const std::shared_ptr<std::vector<char>>& buffer) {
    asio::async_write(to, asio::buffer(*buffer),
                      [self = this, pipe, &from, &to, buffer](
                          boost::system::error_code ec, size_t) {
                        if (ec || pipe->closed) {
                          pipe->Close();
                          return;
                        }
                        self->Pump(pipe, from, to);
                      });
  }

  // Run runs `fn` on the io thread and waits for it.
  void Run(const std::function<void()>& fn) {
    std::promise<void> done;
    asio::post(io, [&] {
      fn();
      done.set_value();
    });
    done.get_future().wait();
  }
};

TcpProxy::TcpProxy(uint16_t target_port) : state_(std::make_unique<State>()) {
  state_->target_port = target_port;
  const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
  state_->acceptor.open(endpoint.protocol());
  state_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  state_->acceptor.bind(endpoint);
  state_->acceptor.listen();
  state_->Accept();
  state_->thread = std::thread([s = state_.get()] { s->io.run(); });
}

TcpProxy::~TcpProxy() {
  state_->Run([s = state_.get()] {
    boost::system::error_code ignored;
    s->acceptor.close(ignored);
    for (auto& weak : s->pipes) {
      if (auto pipe = weak.lock()) pipe->Close();
    }
  });
  state_->io.stop();
  state_->thread.join();
}

uint16_t TcpProxy::port() const { return state_->acceptor.local_endpoint().port(); }

void TcpProxy::Cut() { state_->cut.store(true); }

void TcpProxy::SetLatency(std::chrono::milliseconds latency) {
  state_->latency_ms.store(latency.count());
}

int TcpProxy::requests_in_flight() const { return state_->in_flight.load(); }

int TcpProxy::peak_requests_in_flight() const { return state_->peak.load(); }

void TcpProxy::ResetPeak() { state_->peak.store(state_->in_flight.load()); }

void TcpProxy::Stall() {
  state_->Run([s = state_.get()] {
    for (auto& weak : s->pipes) {
      if (auto pipe = weak.lock()) pipe->stalled = true;
    }
  });
}

void TcpProxy::Heal() {
  state_->Run([s = state_.get()] {
    for (auto& weak : s->pipes) {
      if (auto pipe = weak.lock()) pipe->Close();
    }
    s->pipes.clear();
    s->cut.store(false);
  });
}

}  // namespace schedhost::testing
