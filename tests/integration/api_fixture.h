// ApiTest: a ServiceHost with the builtin plugins on a temporary Unix socket, and the generated
// client stubs for it (Cluster and Admin); shared by the API integration tests.
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "host/api/service_host.h"
#include "host/config/host_config.h"
#include "host/framework/testing/harness.h"
#include "host/framework/testing/temp_dir.h"
#include "schedhost/v1/admin.grpc.pb.h"
#include "schedhost/v1/cluster.grpc.pb.h"

namespace schedhost::api {

namespace v1 = schedhost::v1;

using framework::testing::TempDir;

/// ConfigFor returns a config that sets api.listen, and metrics on a free port (tests run side
/// by side, and a real schedhostd may hold 10259).
inline config::HostConfig ConfigFor(const std::string& listen) {
  return config::ParseConfig(
      "[api]\nlisten = \"" + listen + "\"\n[metrics]\nlisten = \"127.0.0.1:0\"\n", "test.toml", {});
}

/// ApiTest serves a ServiceHost (default profile, builtin plugins, no config file) on a
/// temporary Unix socket and holds client stubs for it.
class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    socket_ = dir_.path() / "run" / "schedhost.sock";  // "run" does not exist yet
    config::HostConfig config = ConfigFor("unix://" + socket_.string());
    config.state_dir = dir_.path() / "state";  // never the machine's /var/lib/schedhost
    host_ = std::make_unique<ServiceHost>(std::move(config), framework::testing::PluginDir());
    host_->Start();
    channel_ =
        grpc::CreateChannel("unix://" + socket_.string(), grpc::InsecureChannelCredentials());
    cluster_ = v1::Cluster::NewStub(channel_);
    admin_ = v1::Admin::NewStub(channel_);
  }

  grpc::Status Apply(const std::string& manifest, v1::ApplyResponse* response) {
    grpc::ClientContext context;
    v1::ApplyRequest request;
    request.set_manifest(manifest);
    return cluster_->Apply(&context, request, response);
  }

  v1::ApplyResult MustApply(const std::string& manifest) {
    v1::ApplyResponse response;
    grpc::Status s = Apply(manifest, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response.result();
  }

  TempDir dir_;
  std::filesystem::path socket_;
  std::unique_ptr<ServiceHost> host_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Cluster::Stub> cluster_;
  std::unique_ptr<v1::Admin::Stub> admin_;
};

}  // namespace schedhost::api
