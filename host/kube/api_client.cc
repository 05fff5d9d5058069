#include "host/kube/api_client.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <istream>
#include <limits>
#include <optional>
#include <streambuf>
#include <thread>
#include <utility>

#include "host/kube/proto_codec.h"

namespace schedhost::kube {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace {

// The largest answer a request reads whole (a page of a list is far below it).
constexpr uint64_t kMaxBodyBytes = uint64_t{1} << 30;
// A watch reads its body this much at a time; a failed watch's answer is kept up to this much.
constexpr size_t kChunkBytes = size_t{64} * 1024;

std::string StatusText(int status) {
  return std::to_string(status) + " " +
         std::string(http::obsolete_reason(static_cast<http::status>(status)));
}

// Failure is a request that got no answer.
ApiError Failure(std::string_view what, const beast::error_code& ec) {
  return ApiError(0, "", std::string(what) + ": " + ec.message());
}

}  // namespace

ApiError ApiError::From(const Response& response, std::string_view what) {
  std::string reason;
  std::string message;
  try {
    const nlohmann::json status = proto::IsProtobuf(response.content_type)
                                      ? proto::DecodeObject(response.body)
                                      : nlohmann::json::parse(response.body);
    if (status.is_object()) {
      reason = status.value("reason", "");
      message = status.value("message", "");
    }
  } catch (const nlohmann::json::exception&) {
    message = response.body.substr(0, 200);
  } catch (const proto::ProtoError&) {
    message = "(an answer in protobuf that does not decode)";
  }
  std::string text = std::string(what) + ": " + StatusText(response.status);
  if (!message.empty()) text += ": " + message;
  return ApiError(response.status, reason, text);
}

// ---- RateLimiter ----

RateLimiter::RateLimiter(double qps, int burst)
    : qps_(qps),
      burst_(std::max(1, burst)),
      tokens_(std::max(1, burst)),
      last_(std::chrono::steady_clock::now()) {}

bool RateLimiter::Acquire() {
  if (qps_ <= 0) return true;
  std::unique_lock lock(mu_);
  for (;;) {
    if (cancelled_) return false;
    const auto now = std::chrono::steady_clock::now();
    tokens_ = std::min(burst_, tokens_ + std::chrono::duration<double>(now - last_).count() * qps_);
    last_ = now;
    if (tokens_ >= 1) {
      tokens_ -= 1;
      return true;
    }
    const auto wait = std::chrono::duration<double>((1 - tokens_) / qps_);
    cv_.wait_for(lock, std::chrono::duration_cast<std::chrono::nanoseconds>(wait));
  }
}

void RateLimiter::Cancel() {
  {
    std::lock_guard lock(mu_);
    cancelled_ = true;
  }
  cv_.notify_all();
}

// ---- JsonStream ----

namespace {

// MemoryBuffer reads a byte range as a stream, to parse one JSON value from its front.
struct MemoryBuffer : std::streambuf {
  MemoryBuffer(const char* begin, const char* end) {
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): read only, as streambuf wants
    char* b = const_cast<char*>(begin);
    setg(b, b, b + (end - begin));
  }
  size_t consumed() const { return static_cast<size_t>(gptr() - eback()); }
};

bool Blank(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; });
}

}  // namespace

void JsonStream::Feed(std::string_view bytes) {
  if (start_ > 0 && start_ >= buffer_.size() / 2) {
    buffer_.erase(0, start_);
    start_ = 0;
  }
  buffer_.append(bytes);
  incomplete_ = false;
}

bool JsonStream::Next(nlohmann::json* out) {
  if (incomplete_) return false;
  const std::string_view rest = std::string_view(buffer_).substr(start_);
  if (Blank(rest)) {
    buffer_.clear();
    start_ = 0;
    return false;
  }
  // The API server writes one value per line: try the line first, with the fast parser.
  if (const size_t newline = rest.find('\n'); newline != std::string_view::npos) {
    nlohmann::json value = nlohmann::json::parse(rest.begin(), rest.begin() + newline, nullptr,
                                                 /*allow_exceptions=*/false);
    if (!value.is_discarded()) {
      *out = std::move(value);
      start_ += newline + 1;
      return true;
    }
  }
  // Otherwise read exactly one value from the front, wherever it ends.
  MemoryBuffer memory(rest.data(), rest.data() + rest.size());
  std::istream in(&memory);
  try {
    nlohmann::json value;
    in >> value;
    *out = std::move(value);
    start_ += memory.consumed();
    return true;
  } catch (const nlohmann::json::parse_error& e) {
    // An error at the very end is a value still arriving; anywhere else the bytes are bad.
    if (e.byte >= rest.size()) {
      incomplete_ = true;
      return false;
    }
    throw;
  }
}

// ---- Connection ----

// Connection is one keep-alive connection; used by one thread at a time, cancellable from any.
class Connection {
 public:
  Connection(const ClusterAccess& access, ssl::context* ssl)
      : access_(access), ssl_context_of_tls_(ssl) {
    if (access_.tls) {
      tls_.emplace(ioc_, *ssl);
    } else {
      plain_.emplace(ioc_);
    }
  }

  // Cancel closes the connection from any thread; the operation in flight fails at once.
  void Cancel() {
    cancelled_.store(true);
    asio::post(ioc_, [this] { Lowest().close(); });
  }

  // Exchange sends `request` and reads the whole answer. A reused connection the server closed
  // meanwhile is reopened once. `may_send` (when set) is asked once the connection is open, just
  // before the first byte goes out; false throws ApiError::NotSent.
  Response Exchange(http::request<http::string_body>& request, std::chrono::milliseconds timeout,
                    const std::function<bool()>& may_send) {
    for (int attempt = 0;; ++attempt) {
      const bool reused = open_;
      try {
        Open(timeout);
        if (may_send && !may_send()) {
          throw ApiError::NotSent(std::string(request.method_string()) + " " +
                                  std::string(request.target()));
        }
        Write(request, timeout);
        http::response_parser<http::string_body> parser;
        parser.body_limit(kMaxBodyBytes);
        Await([&](auto& stream, auto done) { http::async_read(stream, buffer_, parser, done); },
              timeout, "reading the answer");
        Response out;
        out.status = static_cast<int>(parser.get().result_int());
        if (auto it = parser.get().find(http::field::retry_after); it != parser.get().end()) {
          out.retry_after = std::string(it->value());
        }
        if (auto it = parser.get().find(http::field::content_type); it != parser.get().end()) {
          out.content_type = std::string(it->value());
        }
        if (!parser.get().keep_alive()) Close();
        out.body = std::move(parser.get().body());
        return out;
      } catch (const ApiError& e) {
        Close();
        if (!reused || attempt > 0 || cancelled_.load() || e.not_sent()) throw;
      }
    }
  }

  // Stream sends a GET and hands the body to `on_data` piece by piece (see ApiClient::Watch).
  int Stream(http::request<http::string_body>& request,
             const std::function<bool(std::string_view)>& on_data,
             std::chrono::milliseconds connect_timeout, std::chrono::milliseconds idle_timeout,
             std::string* error_body, std::string* content_type) {
    Open(connect_timeout);
    Write(request, connect_timeout);
    http::response_parser<http::buffer_body> parser;
    // No limit, spelt as the largest one: Boost 1.74 compares a Content-Length against an
    // empty optional as exceeding it, so body_limit(boost::none) fails every non-chunked
    // answer (a 404 or 410 with a body) with "body limit exceeded".
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    Await([&](auto& stream, auto done) { http::async_read_header(stream, buffer_, parser, done); },
          idle_timeout, "reading the watch header");
    const int status = static_cast<int>(parser.get().result_int());
    if (content_type != nullptr) {
      auto it = parser.get().find(http::field::content_type);
      *content_type = it != parser.get().end() ? std::string(it->value()) : std::string();
    }
    std::array<char, kChunkBytes> chunk{};
    while (!parser.is_done()) {
      parser.get().body().data = chunk.data();
      parser.get().body().size = chunk.size();
      beast::error_code ec = Run(
          [&](auto& stream, auto done) { http::async_read_some(stream, buffer_, parser, done); },
          idle_timeout);
      if (ec == http::error::need_buffer) ec = {};
      if (ec) {
        Close();
        if (ec == http::error::end_of_stream || ec == asio::error::eof) return status;
        throw Failure(cancelled_.load() ? "cancelled" : "reading the watch", ec);
      }
      const size_t n = chunk.size() - parser.get().body().size;
      if (n == 0) continue;
      if (status != 200) {
        if (error_body != nullptr && error_body->size() < kChunkBytes) {
          error_body->append(chunk.data(), n);
        }
      } else if (!on_data(std::string_view(chunk.data(), n))) {
        Close();
        return status;
      }
    }
    if (!parser.get().keep_alive()) Close();
    return status;
  }

 private:
  beast::tcp_stream& Lowest() { return tls_ ? beast::get_lowest_layer(*tls_) : *plain_; }

  // Run starts one asynchronous operation on the stream and runs it to its end or the deadline.
  template <class Start>
  beast::error_code Run(Start&& start, std::chrono::milliseconds timeout) {
    if (cancelled_.load()) return asio::error::operation_aborted;
    beast::error_code result = asio::error::would_block;
    Lowest().expires_after(timeout);
    auto done = [&result](beast::error_code ec, auto&&...) { result = ec; };
    if (tls_) {
      start(*tls_, done);
    } else {
      start(*plain_, done);
    }
    ioc_.restart();
    ioc_.run();
    if (cancelled_.load() && !result) result = asio::error::operation_aborted;
    return result;
  }

  template <class Start>
  void Await(Start&& start, std::chrono::milliseconds timeout, std::string_view what) {
    const beast::error_code ec = Run(std::forward<Start>(start), timeout);
    if (ec) {
      Close();
      throw Failure(cancelled_.load() ? "cancelled" : what, ec);
    }
  }

  void Write(http::request<http::string_body>& request, std::chrono::milliseconds timeout) {
    Await([&](auto& stream, auto done) { http::async_write(stream, request, done); }, timeout,
          "sending the request");
  }

  void Open(std::chrono::milliseconds timeout) {
    if (open_) return;
    if (cancelled_.load()) throw ApiError(0, "", "cancelled");
    tcp::resolver resolver(ioc_);
    beast::error_code ec;
    const std::string& host = access_.host;
    const auto endpoints = resolver.resolve(host, access_.port, ec);
    if (ec) throw Failure("resolving " + host, ec);
    beast::error_code connected = asio::error::would_block;
    Lowest().expires_after(timeout);
    Lowest().async_connect(endpoints,
                           [&](beast::error_code e, const tcp::endpoint&) { connected = e; });
    ioc_.restart();
    ioc_.run();
    if (connected) {
      Close();
      throw Failure("connecting to " + access_.server, connected);
    }
    Lowest().socket().set_option(tcp::no_delay(true));
    if (tls_) {
      SSL* native = tls_->native_handle();
      const std::string& name = access_.tls_server_name.empty() ? host : access_.tls_server_name;
      beast::error_code parse_error;
      asio::ip::make_address(name, parse_error);
      const bool is_ip = !parse_error;
      if (!is_ip) SSL_set_tlsext_host_name(native, name.c_str());
      if (!access_.insecure_skip_tls_verify) {
        X509_VERIFY_PARAM* param = SSL_get0_param(native);
        if (is_ip) {
          X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
        } else {
          X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size());
        }
      }
      beast::error_code shaken = asio::error::would_block;
      Lowest().expires_after(timeout);
      tls_->async_handshake(ssl::stream_base::client, [&](beast::error_code e) { shaken = e; });
      ioc_.restart();
      ioc_.run();
      if (shaken) {
        Close();
        throw Failure("TLS handshake with " + access_.server, shaken);
      }
    }
    open_ = true;
  }

  void Close() {
    beast::error_code ignored;
    Lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    Lowest().close();
    buffer_.clear();
    open_ = false;
    // A TLS stream cannot be reused after close: a fresh one for the next Open.
    if (tls_) {
      ssl::context& context = *ssl_context_of_tls_;
      tls_.reset();
      tls_.emplace(ioc_, context);
    } else {
      plain_.reset();
      plain_.emplace(ioc_);
    }
  }

  const ClusterAccess& access_;
  ssl::context* ssl_context_of_tls_;
  asio::io_context ioc_;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls_;
  std::optional<beast::tcp_stream> plain_;
  beast::flat_buffer buffer_;
  bool open_ = false;
  std::atomic<bool> cancelled_{false};
};

// ---- ApiClient ----

ApiClient::ApiClient(ClusterAccess access, ClientOptions options)
    : access_(std::move(access)),
      options_(std::move(options)),
      limiter_(options_.qps, options_.burst) {
  if (access_.tls) ssl_ = MakeSslContext(access_);
}

ApiClient::~ApiClient() { Cancel(); }

void ApiClient::Cancel() {
  cancelled_.store(true);
  limiter_.Cancel();
  std::lock_guard lock(mu_);
  for (Connection* c : busy_) c->Cancel();
  idle_.clear();
}

std::unique_ptr<Connection> ApiClient::Take() {
  std::lock_guard lock(mu_);
  if (cancelled_.load()) throw ApiError(0, "", "the client is shut down");
  std::unique_ptr<Connection> c;
  if (!idle_.empty()) {
    c = std::move(idle_.back());
    idle_.pop_back();
  } else {
    c = std::make_unique<Connection>(access_, ssl_.get());
  }
  busy_.push_back(c.get());
  return c;
}

void ApiClient::Give(std::unique_ptr<Connection> c, bool reuse) {
  std::lock_guard lock(mu_);
  busy_.erase(std::remove(busy_.begin(), busy_.end(), c.get()), busy_.end());
  // Enough idle connections for the writer's lanes at full pace (bindings, event senders);
  // the rest close.
  constexpr size_t kMaxIdle = 64;
  if (reuse && !cancelled_.load() && idle_.size() < kMaxIdle) idle_.push_back(std::move(c));
}

namespace {

http::request<http::string_body> MakeRequest(const ClusterAccess& access,
                                             const ClientOptions& options, http::verb verb,
                                             std::string_view target, std::string_view body,
                                             std::string_view content_type,
                                             std::string_view accept) {
  http::request<http::string_body> request{verb, access.base_path + std::string(target), 11};
  const bool default_port =
      (access.tls && access.port == "443") || (!access.tls && access.port == "80");
  // An IPv6 literal goes in brackets (RFC 7230 Host, as in a URL).
  const std::string host =
      access.host.find(':') != std::string::npos ? "[" + access.host + "]" : access.host;
  request.set(http::field::host, default_port ? host : host + ":" + access.port);
  request.set(http::field::user_agent, options.user_agent);
  request.set(http::field::accept, beast::string_view(accept.data(), accept.size()));
  if (std::string token = access.BearerToken(); !token.empty()) {
    request.set(http::field::authorization, "Bearer " + token);
  }
  if (!body.empty()) {
    request.set(http::field::content_type,
                beast::string_view(content_type.data(), content_type.size()));
    request.body() = std::string(body);
  }
  request.keep_alive(true);
  request.prepare_payload();
  return request;
}

}  // namespace

Response ApiClient::Call(std::string_view method, std::string_view target, std::string_view body,
                         std::string_view content_type, const std::function<bool()>& may_send,
                         std::string_view accept) {
  const http::verb verb = http::string_to_verb(beast::string_view(method.data(), method.size()));
  if (verb == http::verb::unknown) {
    throw ApiError(0, "", "unknown HTTP method " + std::string(method));
  }
  for (int retry = 0;; ++retry) {
    if (!limiter_.Acquire()) throw ApiError(0, "", "the client is shut down");
    auto request = MakeRequest(access_, options_, verb, target, body, content_type, accept);
    std::unique_ptr<Connection> c = Take();
    requests_.fetch_add(1);
    Response r;
    try {
      r = c->Exchange(request, options_.timeout, may_send);
      Give(std::move(c), /*reuse=*/true);
    } catch (...) {
      Give(std::move(c), /*reuse=*/false);
      throw;
    }
    // As client-go: 429 and 5xx answers that say when to come back are retried then, at most
    // kMaxRetries times; the request went through the server's admission of requests only.
    const std::optional<std::chrono::seconds> wait = RetryAfter(r);
    if (!wait || retry >= kMaxRetries) return r;
    retried_.fetch_add(1);
    if (!SleepUnlessCancelled(*wait)) return r;
  }
}

std::optional<std::chrono::seconds> ApiClient::RetryAfter(const Response& r) {
  if (r.status != 429 && r.status < 500) return std::nullopt;
  if (r.retry_after.empty() || r.retry_after.size() > 6 ||
      !std::all_of(r.retry_after.begin(), r.retry_after.end(),
                   [](char ch) { return ch >= '0' && ch <= '9'; })) {
    return std::nullopt;
  }
  return std::chrono::seconds(std::stoi(r.retry_after));
}

bool ApiClient::SleepUnlessCancelled(std::chrono::seconds wait) {
  const auto until = std::chrono::steady_clock::now() + wait;
  while (std::chrono::steady_clock::now() < until) {
    if (cancelled_.load()) return false;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(100), until - std::chrono::steady_clock::now()));
  }
  return !cancelled_.load();
}

int ApiClient::Watch(std::string_view target, const std::function<bool(std::string_view)>& on_data,
                     std::chrono::milliseconds idle_timeout, std::string* error_body,
                     std::string_view accept, std::string* content_type) {
  if (!limiter_.Acquire()) throw ApiError(0, "", "the client is shut down");
  auto request = MakeRequest(access_, options_, http::verb::get, target, {}, {}, accept);
  std::unique_ptr<Connection> c = Take();
  requests_.fetch_add(1);
  // A watch's connection is not reused: its stream may have ended anywhere.
  try {
    const int status =
        c->Stream(request, on_data, options_.timeout, idle_timeout, error_body, content_type);
    Give(std::move(c), /*reuse=*/false);
    return status;
  } catch (...) {
    Give(std::move(c), /*reuse=*/false);
    throw;
  }
}

std::string UrlEscape(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char ch : value) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string CollectionPath(const store::KindInfo& kind, std::string_view namespace_name) {
  return (kind.group.empty() ? "/api/" + kind.version : "/apis/" + kind.group + "/" + kind.version) +
         (namespace_name.empty() ? "" : "/namespaces/" + UrlEscape(namespace_name)) + "/" +
         kind.resource;
}

std::string_view ListAccept(const ApiClient& client, std::string_view api_version,
                            std::string_view kind) {
  return client.protobuf() && proto::Supports(api_version, kind)
             ? proto::kAccept
             : std::string_view("application/json");
}

std::string ListPages(ApiClient& client, std::string_view path, std::string_view field_selector,
                      std::string_view accept, std::string_view what,
                      const std::function<bool(nlohmann::json& page)>& on_page) {
  std::string cont;
  std::string rv;
  do {
    std::string target = std::string(path) + "?limit=" + std::to_string(kListPageSize);
    if (!field_selector.empty()) target += "&fieldSelector=" + UrlEscape(field_selector);
    if (!cont.empty()) target += "&continue=" + UrlEscape(cont);
    Response r = client.Call("GET", target, {}, "application/json", {}, accept);
    if (r.status != 200) throw ApiError::From(r, "listing " + std::string(what));
    nlohmann::json list = proto::IsProtobuf(r.content_type) ? proto::DecodeObject(r.body)
                                                             : nlohmann::json::parse(r.body);
    r.body.clear();
    const nlohmann::json* metadata = nullptr;
    if (auto m = list.find("metadata"); m != list.end() && m->is_object()) metadata = &*m;
    rv = metadata ? metadata->value("resourceVersion", std::string()) : std::string();
    cont = metadata ? metadata->value("continue", std::string()) : std::string();
    if (!on_page(list)) break;
  } while (!cont.empty());
  return rv;
}

}  // namespace schedhost::kube
