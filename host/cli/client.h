// The connection schedctl makes to schedhostd: the address (--server, else $SCHEDHOST_SERVER,
// else the default socket), its credentials (a Unix socket is plain; a TCP address always uses
// TLS, as schedhostd serves TCP only over TLS, with --tls-ca and for mutual TLS --tls-cert and
// --tls-key), a bounded connection check that names the address when nothing answers, and the
// kubectl-style report of a failed call (`Error from server (NotFound): ...`).
//
//   Client client(options);
//   if (!client.Connect(err)) return 1;   // names the address when nothing answers
//   auto ctx = client.Context();
//   grpc::Status s = client.cluster().Get(ctx.get(), request, &response);
//   if (!s.ok()) return ReportError(s, err);
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>

#include "schedhost/v1/admin.grpc.pb.h"
#include "schedhost/v1/cluster.grpc.pb.h"

namespace schedhost::cli {

// kDefaultServer is schedhostd's default listen address.
inline constexpr std::string_view kDefaultServer = "unix:///run/schedhost/schedhost.sock";

// ClientOptions are the global connection flags.
struct ClientOptions {
  std::string server;    // "" = $SCHEDHOST_SERVER, else kDefaultServer
  std::string tls_ca;    // PEM file of the CA that signed the server's certificate (TCP only)
  std::string tls_cert;  // client certificate for mutual TLS (with tls_key)
  std::string tls_key;
  // connect_timeout bounds the connection check; request_timeout every unary call.
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds request_timeout{30000};
};

// ResolveServer returns the address `options` select (flag, environment, default).
std::string ResolveServer(const ClientOptions& options);

// IsUnixAddress is true for "unix:" addresses (served without TLS).
bool IsUnixAddress(std::string_view address);

// Client holds one channel to schedhostd and the stubs of its services.
class Client {
 public:
  // Client keeps `options`; nothing is opened until Connect.
  explicit Client(ClientOptions options);

  // Connect builds the channel and waits (at most connect_timeout) until it is ready; on
  // failure it writes an error naming the address to `err` and returns false. Commands call it
  // once their arguments are checked; later calls return true at once.
  bool Connect(std::ostream& err);

  // Context returns a context for a unary call: request_timeout deadline, fail fast.
  std::unique_ptr<grpc::ClientContext> Context() const;

  // address returns the server address in use.
  const std::string& address() const { return address_; }
  // cluster returns the Cluster stub (after Connect).
  v1::Cluster::Stub& cluster() { return *cluster_; }
  // admin returns the Admin stub (after Connect).
  v1::Admin::Stub& admin() { return *admin_; }

 private:
  ClientOptions options_;
  std::string address_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Cluster::Stub> cluster_;
  std::unique_ptr<v1::Admin::Stub> admin_;
};

// CodeName is a gRPC code in kubectl's reason style: "NotFound", "InvalidArgument".
std::string CodeName(grpc::StatusCode code);

// ReportError writes `Error from server (<Code>): <message>` to `err` and returns 1; an empty
// message (a service the server does not implement) names `method` instead.
int ReportError(const grpc::Status& status, std::ostream& err, std::string_view method = "");

}  // namespace schedhost::cli
