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
struct Pipe : std::enable_shared_from_this<Pipe> {
  Pipe(tcp::socket client, asio::io_context& io) : client(std::move(client)), server(io) {}
  tcp::socket client;
  tcp::socket server;
  bool closed = false;
  bool stalled = false;  // Stall: its bytes are held until it closes

  void Close() {
    if (closed) return;
    closed = true;
    boost::system::error_code ignored;
    client.close(ignored);
    server.close(ignored);
  }
};

}  // namespace

struct TcpProxy::State : std::enable_shared_from_this<TcpProxy::State> {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  uint16_t target_port = 0;
  std::thread thread;
  // All below only on the io thread, except `cut`.
  std::atomic<bool> cut{false};
  std::list<std::weak_ptr<Pipe>> pipes;

  void Accept() {
    acceptor.async_accept([self = shared_from_this()](boost::system::error_code ec,
                                                      tcp::socket socket) {
      if (ec) return;  // closed
      auto pipe = std::make_shared<Pipe>(std::move(socket), self->io);
      self->pipes.push_back(pipe);
      self->pipes.remove_if([](const std::weak_ptr<Pipe>& p) { return p.expired(); });
      self->Connect(pipe);
      self->Accept();
    });
  }

  void Connect(const std::shared_ptr<Pipe>& pipe) {
    pipe->server.async_connect(
        tcp::endpoint(asio::ip::make_address("127.0.0.1"), target_port),
        [self = shared_from_this(), pipe](boost::system::error_code ec) {
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
        [self = shared_from_this(), pipe, &from, &to, buffer](boost::system::error_code ec,
                                                              size_t n) {
          if (ec || pipe->closed) {
            pipe->Close();
            return;
          }
          buffer->resize(n);
          self->Forward(pipe, from, to, buffer);
        });
  }

  // Forward writes what was read; while cut or stalled, it holds it (re-checking every
  // 20 ms) until Heal closes the pipe.
  void Forward(const std::shared_ptr<Pipe>& pipe, tcp::socket& from, tcp::socket& to,
               const std::shared_ptr<std::vector<char>>& buffer) {
    if (cut.load() || pipe->stalled) {
      auto timer = std::make_shared<asio::steady_timer>(io, std::chrono::milliseconds(20));
      timer->async_wait([self = shared_from_this(), pipe, &from, &to, buffer,
                         timer](boost::system::error_code) {
        if (pipe->closed || !timer) return;  // the timer lives until its wait ends
        self->Forward(pipe, from, to, buffer);
      });
      return;
    }
    Write(pipe, from, to, buffer);
  }

  void Write(const std::shared_ptr<Pipe>& pipe, tcp::socket& from, tcp::socket& to,
             const std::shared_ptr<std::vector<char>>& buffer) {
    asio::async_write(to, asio::buffer(*buffer),
                      [self = shared_from_this(), pipe, &from, &to, buffer](
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

TcpProxy::TcpProxy(uint16_t target_port) : state_(std::make_shared<State>()) {
  state_->target_port = target_port;
  const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
  state_->acceptor.open(endpoint.protocol());
  state_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  state_->acceptor.bind(endpoint);
  state_->acceptor.listen();
  state_->Accept();
  state_->thread = std::thread([s = state_] { s->io.run(); });
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
