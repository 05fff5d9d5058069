// HttpServer: an Asio accept loop and one Beast session per connection, all on one thread.
#include "host/api/http_server.h"

#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <optional>
#include <string_view>

#include "host/metrics/metrics.h"

namespace schedhost::api {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// Limits of one request: headers, body (a GET has none) and the time to send it.
constexpr size_t kMaxHeaderBytes = size_t{8} * 1024;
constexpr uint64_t kMaxBodyBytes = 1024;
constexpr auto kReadTimeout = std::chrono::seconds(10);

// Session reads requests from one connection and answers each.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const HttpRoute& route) : stream_(std::move(socket)), route_(route) {}

  void Read() {
    parser_.emplace();
    parser_->header_limit(kMaxHeaderBytes);
    parser_->body_limit(kMaxBodyBytes);
    stream_.expires_after(kReadTimeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

 private:
  void OnRead(beast::error_code ec) {
    if (ec) {
      // End of stream, timeout, or a request that is malformed or too large: close this
      // connection only (nothing is answered to garbage).
      Close();
      return;
    }
    const http::request<http::string_body>& req = parser_->get();
    res_ = http::response<http::string_body>();
    res_.version(req.version());
    res_.keep_alive(req.keep_alive());
    res_.set(http::field::server, "schedhost");
    Answer(req);
    res_.prepare_payload();
    stream_.expires_after(kReadTimeout);  // a client that never reads its answer is dropped
    http::async_write(stream_, res_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec || !self->res_.keep_alive()) {
        self->Close();
        return;
      }
      self->Read();
    });
  }

  void Answer(const http::request<http::string_body>& req) {
    const std::string_view target(req.target().data(), req.target().size());
    const size_t mark = target.find('?');
    const std::string_view path = target.substr(0, mark);
    const std::string_view query = mark == std::string_view::npos ? "" : target.substr(mark + 1);
    HttpAnswer answer;
    if (req.method() != http::verb::get) {
      answer = {405, "text/plain; charset=utf-8", "method not allowed\n"};
      res_.set(http::field::allow, "GET");
    } else {
      try {
        std::optional<HttpAnswer> routed = route_(path, query);
        answer = routed ? std::move(*routed)
                        : HttpAnswer{404, "text/plain; charset=utf-8", "404 page not found\n"};
      } catch (const std::exception& e) {
        answer = {500, "text/plain; charset=utf-8", std::string(e.what()) + "\n"};
      }
    }
    res_.result(answer.status);
    res_.set(http::field::content_type, answer.content_type);
    res_.body() = std::move(answer.body);
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  const HttpRoute& route_;
  beast::flat_buffer buffer_{kMaxHeaderBytes + kMaxBodyBytes};
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
};

// Endpoint parses "host:port" / "[v6]:port" (the config has checked the shape).
tcp::endpoint Endpoint(asio::io_context& ioc, const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("want host:port");
  std::string host = listen.substr(0, colon);
  const std::string port = listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "0.0.0.0";
  boost::system::error_code ec;
  const asio::ip::address address = asio::ip::make_address(host, ec);
  const auto port_number = static_cast<uint16_t>(std::stoul(port));
  if (!ec) return {address, port_number};
  tcp::resolver resolver(ioc);
  auto results = resolver.resolve(host, port, ec);
  if (ec || results.empty()) {
    throw std::runtime_error("cannot resolve \"" + host + "\": " + ec.message());
  }
  return results.begin()->endpoint();
}

}  // namespace

HttpRoute MetricsRoute(MetricsHandlers handlers) {
  return [handlers = std::move(handlers)](std::string_view path,
                                          std::string_view) -> std::optional<HttpAnswer> {
    if (path == "/healthz") return HttpAnswer{200, "text/plain; charset=utf-8", "ok"};
    if (path == "/readyz") {
      std::string body;
      const bool ready = handlers.ready && handlers.ready(&body);
      if (body.empty()) body = ready ? "ok" : "not ready";
      return HttpAnswer{ready ? 200U : 503U, "text/plain; charset=utf-8", std::move(body)};
    }
    if (path == "/metrics") {
      return HttpAnswer{200, std::string(metrics::kTextContentType),
                        handlers.metrics ? handlers.metrics() : std::string()};
    }
    return std::nullopt;
  };
}

struct HttpServer::Impl {
  asio::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  const HttpRoute* route = nullptr;

  void Accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket s) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
      if (!ec) std::make_shared<Session>(std::move(s), *route)->Read();
      Accept();
    });
  }
};

HttpServer::HttpServer(std::string name, std::string listen, HttpRoute route)
    : name_(std::move(name)), listen_(std::move(listen)), route_(std::move(route)) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Start() {
  if (impl_) return;
  auto impl = std::make_unique<Impl>();
  impl->route = &route_;
  try {
    const tcp::endpoint endpoint = Endpoint(impl->ioc, listen_);
    impl->acceptor.open(endpoint.protocol());
    impl->acceptor.set_option(asio::socket_base::reuse_address(true));
    impl->acceptor.bind(endpoint);
    impl->acceptor.listen(asio::socket_base::max_listen_connections);
    port_ = impl->acceptor.local_endpoint().port();
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot listen on " + name_ + ".listen \"" + listen_ + "\": " +
                             e.what());
  }
  impl->Accept();
  impl_ = std::move(impl);
  thread_ = std::thread([impl = impl_.get(), name = name_] {
    for (;;) {
      try {
        impl->ioc.run();
        return;
      } catch (const std::exception& e) {
        // Routes' exceptions are answered; this is Asio or Beast itself: keep serving.
        spdlog::error("{} endpoint: {}", name, e.what());
      }
    }
  });
}

void HttpServer::Stop() {
  if (!impl_) return;
  asio::post(impl_->ioc, [impl = impl_.get()] {
    beast::error_code ignored;
    impl->acceptor.close(ignored);
    impl->ioc.stop();
  });
  thread_.join();
  impl_.reset();  // destroys the pending handlers and with them every open connection
}

}  // namespace schedhost::api
