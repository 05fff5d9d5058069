// Client: channel, credentials, connection check and error reports.
#include "host/cli/client.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace schedhost::cli {
namespace {

// ReadFile returns the whole file; throws naming the flag when it cannot be read.
std::string ReadFile(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(std::string(flag) + ": cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::shared_ptr<grpc::ChannelCredentials> Credentials(const ClientOptions& o, bool unix_socket) {
  if (unix_socket) {
    if (!o.tls_ca.empty() || !o.tls_cert.empty() || !o.tls_key.empty()) {
      throw std::runtime_error(
          "--tls-ca, --tls-cert and --tls-key apply to TCP addresses; a unix socket is served "
          "without TLS");
    }
    return grpc::InsecureChannelCredentials();
  }
  if (o.tls_cert.empty() != o.tls_key.empty()) {
    throw std::runtime_error("--tls-cert and --tls-key go together (mutual TLS)");
  }
  grpc::SslCredentialsOptions ssl;
  // Without --tls-ca the system's trusted roots verify the server.
  if (!o.tls_ca.empty()) ssl.pem_root_certs = ReadFile(o.tls_ca, "--tls-ca");
  if (!o.tls_cert.empty()) {
    ssl.pem_cert_chain = ReadFile(o.tls_cert, "--tls-cert");
    ssl.pem_private_key = ReadFile(o.tls_key, "--tls-key");
  }
  return grpc::SslCredentials(ssl);
}

}  // namespace

std::string ResolveServer(const ClientOptions& options) {
  if (!options.server.empty()) return options.server;
  if (const char* env = std::getenv("SCHEDHOST_SERVER"); env != nullptr && *env != '\0') {
    return env;
  }
  return std::string(kDefaultServer);
}

bool IsUnixAddress(std::string_view address) { return address.rfind("unix:", 0) == 0; }

Client::Client(ClientOptions options) : options_(std::move(options)) {}

bool Client::Connect(std::ostream& err) {
  if (channel_) return true;
  address_ = ResolveServer(options_);
  try {
    channel_ = grpc::CreateChannel(address_, Credentials(options_, IsUnixAddress(address_)));
  } catch (const std::exception& e) {
    err << "error: " << e.what() << "\n";
    return false;
  }
  cluster_ = v1::Cluster::NewStub(channel_);
  admin_ = v1::Admin::NewStub(channel_);
  // Follow the channel from idle until it is ready or has failed once: a missing socket fails
  // at once, an address that never answers after connect_timeout.
  const auto deadline = std::chrono::system_clock::now() + options_.connect_timeout;
  grpc_connectivity_state state = channel_->GetState(/*try_to_connect=*/true);
  while (state != GRPC_CHANNEL_READY && state != GRPC_CHANNEL_TRANSIENT_FAILURE &&
         state != GRPC_CHANNEL_SHUTDOWN) {
    if (!channel_->WaitForStateChange(state, deadline)) break;
    state = channel_->GetState(/*try_to_connect=*/true);
  }
  if (state == GRPC_CHANNEL_READY) return true;
  channel_.reset();
  err << "error: cannot connect to schedhostd at " << address_ << ": "
      << (state == GRPC_CHANNEL_TRANSIENT_FAILURE
              ? (IsUnixAddress(address_) ? "connection failed"
                                         : "connection or TLS handshake failed (is --tls-ca the "
                                           "CA that signed the server's certificate?)")
              : "no answer within " + std::to_string(options_.connect_timeout.count()) + " ms")
      << " (is schedhostd running there? set --server or SCHEDHOST_SERVER)\n";
  return false;
}

std::unique_ptr<grpc::ClientContext> Client::Context() const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + options_.request_timeout);
  context->set_wait_for_ready(false);
  return context;
}

std::string CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "Cancelled";
    case grpc::StatusCode::UNKNOWN:
      return "Unknown";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "InvalidArgument";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DeadlineExceeded";
    case grpc::StatusCode::NOT_FOUND:
      return "NotFound";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "AlreadyExists";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PermissionDenied";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "ResourceExhausted";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FailedPrecondition";
    case grpc::StatusCode::ABORTED:
      return "Aborted";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OutOfRange";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "Unimplemented";
    case grpc::StatusCode::INTERNAL:
      return "Internal";
    case grpc::StatusCode::UNAVAILABLE:
      return "Unavailable";
    case grpc::StatusCode::DATA_LOSS:
      return "DataLoss";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "Unauthenticated";
    default:
      return "Code" + std::to_string(static_cast<int>(code));
  }
}

int ReportError(const grpc::Status& status, std::ostream& err, std::string_view method) {
  std::string message = status.error_message();
  if (message.empty() && status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
    message = "the server does not implement " +
              (method.empty() ? std::string("this call") : std::string(method));
  }
  if (message.empty()) message = "(no message)";
  err << "Error from server (" << CodeName(status.error_code()) << "): " << message << "\n";
  return 1;
}

}  // namespace schedhost::cli
