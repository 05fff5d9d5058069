// HttpServer: an Asio accept loop and one Beast session per connection (plain or TLS), all on
// one thread.
#include "host/api/http_server.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <type_traits>

#include "host/metrics/metrics.h"

namespace schedhost::api {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// Limits of one request: headers, body (a GET has none) and the time to send it.
constexpr size_t kMaxHeaderBytes = size_t{8} * 1024;
constexpr uint64_t kMaxBodyBytes = 1024;
constexpr auto kReadTimeout = std::chrono::seconds(10);

// Session reads requests from one connection and answers each. Stream is beast::tcp_stream
// (plain HTTP) or TlsStream: the limits and the answers are the same, only the handshake and the
// goodbye differ.
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  // `tls` is the ssl::context of a TlsStream, nothing for a plain one.
  template <class... Tls>
  Session(tcp::socket socket, const HttpRoute& route, Tls&... tls)
      : stream_(std::move(socket), tls...), route_(route) {}

  // Run starts the session: the TLS handshake first (bounded like a request), then requests.
  void Run() {
    if constexpr (kTls) {
      Lowest().expires_after(kReadTimeout);
      stream_.async_handshake(asio::ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (ec) {
                                  // Plain HTTP, an untrusted or missing client certificate, a
                                  // scanner: nothing to answer, and only this connection closes.
                                  spdlog::debug("TLS handshake failed: {}", ec.message());
                                  self->Close();
                                  return;
                                }
                                self->Read();
                              });
    } else {
      Read();
    }
  }

 private:
  void Read() {
    parser_.emplace();
    parser_->header_limit(kMaxHeaderBytes);
    parser_->body_limit(kMaxBodyBytes);
    Lowest().expires_after(kReadTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, size_t) {
                       self->OnRead(ec);
                     });
  }

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
    Lowest().expires_after(kReadTimeout);  // a client that never reads its answer is dropped
    http::async_write(stream_, res_,
                      [self = this->shared_from_this()](beast::error_code ec, size_t) {
                        if (ec) {
                          self->Close();
                        } else if (!self->res_.keep_alive()) {
                          self->Finish();
                        } else {
                          self->Read();
                        }
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

  // Finish ends a connection whose last answer said "Connection: close": over TLS with a
  // close_notify first, so that the client can tell the end from a cut.
  void Finish() {
    if constexpr (kTls) {
      Lowest().expires_after(kReadTimeout);
      stream_.async_shutdown(
          [self = this->shared_from_this()](beast::error_code) { self->Close(); });
    } else {
      Close();
    }
  }

  void Close() {
    beast::error_code ignored;
    Lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    Lowest().socket().close(ignored);
  }

  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }

  Stream stream_;
  const HttpRoute& route_;
  beast::flat_buffer buffer_{kMaxHeaderBytes + kMaxBodyBytes};
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
};

// ReadTlsFile returns the bytes of `setting`.`key` (the file at `path`).
std::string ReadTlsFile(const HttpTls& tls, const char* key, const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error(tls.setting + "." + key + ": cannot read " + path.string() + ": " +
                             std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// TlsContext is the server side of TLS made from `tls`'s files, as the gRPC API makes its own
// from [api.tls]: TLS 1.2 at least, and with client_ca, a client certificate it signed required.
// Throws std::runtime_error naming the setting, the file and what is wrong with it.
std::unique_ptr<asio::ssl::context> TlsContext(const HttpTls& tls) {
  auto context = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
  SSL_CTX* native = context->native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  context->set_options(asio::ssl::context::default_workarounds |
                       asio::ssl::context::no_compression);
  // An encrypted key would make OpenSSL ask for its passphrase on the terminal, and a daemon
  // has none: no passphrase, so such a key is refused like a bad one.
  context->set_password_callback(
      [](size_t, asio::ssl::context::password_purpose) { return std::string(); });
  auto fail = [&](const char* key, const std::filesystem::path& path, const std::string& why) {
    throw std::runtime_error(tls.setting + "." + key + ": " + path.string() + ": " + why);
  };
  beast::error_code ec;
  context->use_certificate_chain(asio::buffer(ReadTlsFile(tls, "cert", tls.cert)), ec);
  if (ec) fail("cert", tls.cert, "not a PEM certificate chain (" + ec.message() + ")");
  const std::string mismatch = "does not match the certificate in " + tls.cert.string();
  context->use_private_key(asio::buffer(ReadTlsFile(tls, "key", tls.key)),
                           asio::ssl::context::pem, ec);
  if (ec) {
    // OpenSSL compares a key with the certificate of its type as it takes it.
    const auto error = static_cast<unsigned long>(ec.value());
    if (ec.category() == asio::error::get_ssl_category() && ERR_GET_LIB(error) == ERR_LIB_X509 &&
        (ERR_GET_REASON(error) == X509_R_KEY_VALUES_MISMATCH ||
         ERR_GET_REASON(error) == X509_R_KEY_TYPE_MISMATCH)) {
      fail("key", tls.key, mismatch);
    }
    fail("key", tls.key, "not a PEM private key (" + ec.message() + ")");
  }
  // A key of another type than the certificate's is only found out here.
  if (SSL_CTX_check_private_key(native) != 1) fail("key", tls.key, mismatch);
  if (tls.client_ca) {
    context->add_certificate_authority(asio::buffer(ReadTlsFile(tls, "client_ca", *tls.client_ca)),
                                       ec);
    if (ec) fail("client_ca", *tls.client_ca, "not PEM certificates (" + ec.message() + ")");
    // The CAs' names go to the client, which picks a certificate they signed (as gRPC does).
    SSL_CTX_set_client_CA_list(native, SSL_load_client_CA_file(tls.client_ca->c_str()));
    context->set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert);
  }
  return context;
}

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
  // Before ioc, so that the sessions its handlers hold go first.
  std::unique_ptr<asio::ssl::context> tls;
  asio::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  const HttpRoute* route = nullptr;

  void Accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket s) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
      if (!ec) {
        if (tls) {
          std::make_shared<Session<TlsStream>>(std::move(s), *route, *tls)->Run();
        } else {
          std::make_shared<Session<beast::tcp_stream>>(std::move(s), *route)->Run();
        }
      }
      Accept();
    });
  }
};

HttpServer::HttpServer(std::string name, std::string listen, HttpRoute route,
                       std::optional<HttpTls> tls)
    : name_(std::move(name)),
      listen_(std::move(listen)),
      route_(std::move(route)),
      tls_(std::move(tls)) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Start() {
  if (impl_) return;
  auto impl = std::make_unique<Impl>();
  impl->route = &route_;
  if (tls_) {
    try {
      impl->tls = TlsContext(*tls_);
    } catch (const std::exception& e) {
      throw std::runtime_error("cannot serve " + name_ + ".listen \"" + listen_ +
                               "\" over TLS: " + e.what());
    }
  }
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
