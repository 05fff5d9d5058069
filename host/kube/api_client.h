// ApiClient: HTTP/1.1 to a Kubernetes API server over TLS (Boost.Beast on Asio SSL and
// OpenSSL), with the credentials of a ClusterAccess, keep-alive connections, a client-side
// rate limit (QPS and burst, as client-go's token bucket) and timeouts on every request.
// Watches stream their body through a callback; the stream of JSON values is split by
// JsonStream, whatever the chunking.
//
//   ApiClient client(access, {.qps = 50, .burst = 100});
//   Response r = client.Call("GET", "/api/v1/nodes?limit=500");
//   if (r.status != 200) throw ApiError::From(r, "listing nodes");
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "host/kube/kubeconfig.h"
#include "host/store/object_store.h"

namespace boost::asio::ssl {
class context;
}

namespace schedhost::kube {

// Response is one answer of the API server.
struct Response {
  int status = 0;
  std::string body;
  std::string retry_after;  // the Retry-After header, when sent (429, 503)
  std::string content_type;
};

// ApiError is a request the server refused or could not be made; status 0 means no answer
// (connection refused, TLS failure, timeout).
class ApiError : public std::runtime_error {
  static constexpr std::string_view kNotSentReason = "NotSent";

 public:
  ApiError(int status, std::string reason, const std::string& message)
      : std::runtime_error(message), status_(status), reason_(std::move(reason)) {}
  // From describes a failed response: "<what>: 403 Forbidden: pods \"x\" is forbidden: ...",
  // with the reason and message of the Status object the server sent.
  static ApiError From(const Response& response, std::string_view what);

  // NotSent is a request a Call's `may_send` refused: not a byte of it went out.
  static ApiError NotSent(const std::string& what) {
    return ApiError(0, std::string(kNotSentReason), what + ": not sent");
  }

  int status() const { return status_; }
  // reason is the Status object's reason ("NotFound", "Conflict", "Expired", ...), or "".
  const std::string& reason() const { return reason_; }
  // not_sent is true for NotSent.
  bool not_sent() const { return reason_ == kNotSentReason; }

 private:
  int status_;
  std::string reason_;
};

// ClientOptions tune one client.
struct ClientOptions {
  // qps and burst bound the request rate (client-go's flowcontrol token bucket); qps <= 0 lifts
  // the limit. Watches are not counted once started.
  double qps = 50;
  int burst = 100;
  // timeout bounds one request from connect to the last byte of the answer.
  std::chrono::milliseconds timeout{30'000};
  std::string user_agent = "schedhost";
  // protobuf: lists and watches of the built-in kinds, bindings and events speak protobuf
  // (application/vnd.kubernetes.protobuf), as kube-scheduler's client does; false: JSON.
  bool protobuf = true;
};

// RateLimiter is a token bucket: `burst` tokens, refilled at `qps` per second; thread-safe.
class RateLimiter {
 public:
  RateLimiter(double qps, int burst);
  // Acquire waits for a token; returns false when Cancel was called meanwhile.
  bool Acquire();
  void Cancel();

 private:
  const double qps_;
  const double burst_;
  std::mutex mu_;
  std::condition_variable cv_;
  double tokens_;
  std::chrono::steady_clock::time_point last_;
  bool cancelled_ = false;
};

// JsonStream splits a byte stream into the JSON values it carries (a watch body), however the
// bytes arrive: Feed appends bytes, Next returns the next complete value.
class JsonStream {
 public:
  void Feed(std::string_view bytes);
  // Next moves the next complete value into *out; false when none is complete yet. Throws
  // nlohmann::json::parse_error when the bytes are not JSON.
  bool Next(nlohmann::json* out);
  // pending returns how many bytes wait for the rest of their value.
  size_t pending() const { return buffer_.size() - start_; }

 private:
  std::string buffer_;
  size_t start_ = 0;
  bool incomplete_ = false;  // the last Next found only part of a value; wait for more bytes
};

class Connection;

// ApiClient is thread-safe: each request takes an idle connection or opens one.
class ApiClient {
 public:
  // ApiClient checks the access (TLS context, server address); throws KubeconfigError.
  ApiClient(ClusterAccess access, ClientOptions options);
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // Call sends one request and returns the answer, whatever its status; throws ApiError
  // (status 0) when no answer came, or when Cancel was called. `target` is the path and query.
  // An answer of 429 or 5xx with Retry-After is retried after that many seconds (see
  // RetryAfter), up to kMaxRetries times, each retry under the rate limit again.
  // `may_send`, when set, is asked last, once the rate limiter has let the request go and the
  // connection is open: false sends nothing and throws ApiError::NotSent (the
  // writer's leadership fence: no write starts after this replica stopped leading).
  // `accept` is the Accept header: proto::kAccept asks for protobuf (see Response::content_type
  // for what came).
  Response Call(std::string_view method, std::string_view target, std::string_view body = {},
                std::string_view content_type = "application/json",
                const std::function<bool()>& may_send = {},
                std::string_view accept = "application/json");

  // Watch is a stream request: GET `target`, then `on_data` for every piece of body until the
  // server ends it, `on_data` returns false, `idle_timeout` passes without a byte, or Cancel.
  // Returns the status; a non-200 answer's body is in *error_body. Throws ApiError (status 0)
  // on connection failures. Not rate limited after it starts. `accept` as for Call; the answer's
  // Content-Type is in *content_type (when given) before the first on_data.
  int Watch(std::string_view target, const std::function<bool(std::string_view)>& on_data,
            std::chrono::milliseconds idle_timeout, std::string* error_body,
            std::string_view accept = "application/json", std::string* content_type = nullptr);

  // Cancel makes every request in flight and every later one fail at once (shutdown).
  void Cancel();
  bool cancelled() const { return cancelled_.load(); }

  const ClusterAccess& access() const { return access_; }
  bool protobuf() const { return options_.protobuf; }
  // requests counts the requests sent, by method ("GET", ...) and total.
  uint64_t requests() const { return requests_.load(); }
  // retried counts the answers that were 429 or 5xx with a Retry-After, and retried.
  uint64_t retried() const { return retried_.load(); }

  // kMaxRetries bounds the retries of one Call after 429/5xx answers (client-go's default).
  static constexpr int kMaxRetries = 10;
  // RetryAfter is how long to wait before sending again when `r` asks for it: a 429 or 5xx with
  // a Retry-After in whole seconds; nullopt otherwise (an HTTP date is not honoured).
  static std::optional<std::chrono::seconds> RetryAfter(const Response& r);

 private:
  // Take hands a request an idle connection or a new one; Give takes it back, keeping it for
  // the next request when `reuse`, else closing it.
  std::unique_ptr<Connection> Take();
  void Give(std::unique_ptr<Connection> c, bool reuse);
  // SleepUnlessCancelled waits `wait`; false when Cancel was called meanwhile.
  bool SleepUnlessCancelled(std::chrono::seconds wait);

  const ClusterAccess access_;
  const ClientOptions options_;
  std::shared_ptr<boost::asio::ssl::context> ssl_;
  RateLimiter limiter_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_;
  std::vector<Connection*> busy_;
  std::atomic<bool> cancelled_{false};
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> retried_{0};
};

// kListPageSize is the page size of ListPages (client-go's default for informers).
inline constexpr int kListPageSize = 500;

// ListAccept is the Accept header for lists of `kind` of `api_version` through `client`:
// protobuf when the client speaks it and the kind has a message (proto::Supports), else JSON.
std::string_view ListAccept(const ApiClient& client, std::string_view api_version,
                            std::string_view kind);

// ListPages lists the collection at `path` (see CollectionPath) kListPageSize objects a page,
// following continue tokens, as client-go's pager: each page, decoded to JSON whether protobuf
// or JSON came, goes to `on_page`, which returns false to stop there. `field_selector` ("" for
// none) filters on the server; `accept` as for ApiClient::Call. Returns the list's
// resourceVersion. Throws ApiError::From(answer, "listing <what>") for an answer other than 200
// (410 when a continue token expired) and ApiError (status 0) when no answer came.
std::string ListPages(ApiClient& client, std::string_view path, std::string_view field_selector,
                      std::string_view accept, std::string_view what,
                      const std::function<bool(nlohmann::json& page)>& on_page);

// UrlEscape percent-encodes a query value.
std::string UrlEscape(std::string_view value);

// CollectionPath is the API path of `kind`'s objects: in namespace `namespace_name`, or across
// namespaces (and for a cluster-scoped kind) when it is "" — "/apis/<group>/<version>[/namespaces/
// <ns>]/<resource>", "/api/<version>/..." for the core group.
std::string CollectionPath(const store::KindInfo& kind, std::string_view namespace_name);

}  // namespace schedhost::kube
