// The Admin commands' output, against an in-process fake of schedhost.v1.Admin (and of
// Cluster.Get, for describe) on a temporary Unix socket: explain's nodes x plugins tables,
// describe's attempt and events, plugins, profiles, stats, and reload's exit code when the
// server refuses. schedctl_test runs the same commands against the real schedhostd.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <tuple>

#include "host/cli/commands.h"

namespace schedhost::cli {
namespace {

using ::testing::HasSubstr;

class FakeAdmin final : public v1::Admin::Service {
 public:
  bool reload_ok = true;

  grpc::Status Explain(grpc::ServerContext*, const v1::ExplainRequest* request,
                       v1::ExplainResponse* response) override {
    if (request->name() == "huge") {
      response->set_profile("default-scheduler");
      response->set_attempts(3);
      response->set_message("0/2 nodes are available: 2 Insufficient cpu.");
      return grpc::Status::OK;
    }
    if (request->name() != "web-1" || request->namespace_() != "default") {
      return {grpc::StatusCode::NOT_FOUND,
              "pod " + request->namespace_() + "/" + request->name() + " not found"};
    }
    response->set_profile("default-scheduler");
    response->set_attempts(2);
    response->set_node("n2");
    auto add = [response](const char* node, bool feasible, int64_t total) {
      v1::NodeExplanation* n = response->add_nodes();
      n->set_node(node);
      n->set_feasible(feasible);
      n->set_total_score(total);
      return n;
    };
    auto verdict = [](v1::NodeExplanation* n, const char* plugin, const char* code,
                      const char* reason, int64_t weighted) {
      v1::PluginVerdict* v = n->add_plugins();
      v->set_plugin(plugin);
      v->set_filter_code(code);
      v->set_filter_reason(reason);
      v->set_score(weighted);
      v->set_normalized_score(weighted);
      v->set_weighted_score(weighted);
    };
    v1::NodeExplanation* n1 = add("n1", false, 0);
    verdict(n1, "NodeResourcesFit", "Unschedulable", "Insufficient cpu", 0);
    verdict(n1, "TaintToleration", "Success", "", 0);
    v1::NodeExplanation* n2 = add("n2", true, 150);
    verdict(n2, "NodeResourcesFit", "Success", "", 50);
    verdict(n2, "TaintToleration", "Success", "", 0);
    verdict(n2, "ImageLocality", "", "", 100);
    return grpc::Status::OK;
  }

  grpc::Status ListPlugins(grpc::ServerContext*, const v1::ListPluginsRequest*,
                           v1::ListPluginsResponse* response) override {
    v1::Plugin* p = response->add_plugins();
    p->set_name("NodeResourcesFit");
    p->set_version("1.0.0");
    p->set_library_path("/usr/lib/schedhost/plugins/node_resources_fit.so");
    p->set_sha256("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
    p->set_abi_version("1.1");
    p->add_extension_points("PreFilter");
    p->add_extension_points("Filter");
    p->add_profiles("default-scheduler");
    for (const auto& [sha, state, generation] : {std::tuple{"aaaaaaaaaaaa1111", "draining", 2},
                                                 std::tuple{"bbbbbbbbbbbb2222", "live", 3}}) {
      v1::LibraryVersion* v = response->add_library_versions();
      v->set_path("/opt/quota.so");
      v->set_sha256(sha);
      v->set_state(state);
      v->set_generation(generation);
      v->set_loaded_path(std::string("/var/lib/schedhost/plugins/quota-") + sha + ".so");
    }
    return grpc::Status::OK;
  }

  grpc::Status ListProfiles(grpc::ServerContext*, const v1::ListProfilesRequest*,
                            v1::ListProfilesResponse* response) override {
    response->set_generation(3);
    v1::Profile* profile = response->add_profiles();
    profile->set_scheduler_name("default-scheduler");
    v1::ExtensionPointPlugins* filter = profile->add_extension_points();
    filter->set_extension_point("Filter");
    filter->add_plugins()->set_name("NodeResourcesFit");
    filter->add_plugins()->set_name("TaintToleration");
    v1::ExtensionPointPlugins* score = profile->add_extension_points();
    score->set_extension_point("Score");
    v1::PluginRef* ref = score->add_plugins();
    ref->set_name("TaintToleration");
    ref->set_weight(3);
    return grpc::Status::OK;
  }

  grpc::Status Stats(grpc::ServerContext*, const v1::StatsRequest*,
                     v1::StatsResponse* response) override {
    response->set_active_pods(3);
    response->set_bound_pods(12);
    response->set_pods_per_second(2.5);
    response->set_resource_version(40);
    response->set_config_generation(3);
    response->set_last_reload_result("failure");
    response->set_last_reload_message("schedhost.toml:3:1: unknown plugin \"Nope\"");
    response->set_last_reload_unix_seconds(1700000000);
    return grpc::Status::OK;
  }

  grpc::Status Reload(grpc::ServerContext*, const v1::ReloadRequest*,
                      v1::ReloadResponse* response) override {
    response->set_ok(reload_ok);
    response->set_message(reload_ok ? "reloaded 1 profile"
                                    : "schedhost.toml:3:1: unknown plugin \"Nope\"");
    return grpc::Status::OK;
  }
};

// FakeCluster serves Get for describe: web-1 bound to n2, huge pending.
class FakeCluster final : public v1::Cluster::Service {
 public:
  grpc::Status Get(grpc::ServerContext*, const v1::GetRequest* request,
                   v1::GetResponse* response) override {
    const std::string node = request->name() == "web-1" ? R"("nodeName":"n2",)" : "";
    if (request->name() != "web-1" && request->name() != "huge") {
      return {grpc::StatusCode::NOT_FOUND, "not found"};
    }
    v1::Object* o = response->mutable_object();
    o->set_kind(v1::POD);
    o->set_namespace_(request->namespace_());
    o->set_name(request->name());
    o->set_manifest(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + request->name() +
                    R"(","namespace":"default","labels":{"app":"web","tier":"front"}},)" +
                    R"("spec":{"schedulerName":"default-scheduler",)" + node +
                    R"("priority":10,"containers":[{"name":"c","image":"nginx",)" +
                    R"("resources":{"requests":{"cpu":"2","memory":"1Gi"}}}]},"status":{}})");
    return grpc::Status::OK;
  }
};

class AdminCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "schedctl-XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
    address_ = "unix://" + (dir_ / "admin.sock").string();
    grpc::ServerBuilder builder;
    builder.AddListeningPort(address_, grpc::InsecureServerCredentials());
    builder.RegisterService(&admin_);
    builder.RegisterService(&cluster_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    client_ = std::make_unique<Client>(ClientOptions{.server = address_});
  }
  void TearDown() override {
    server_->Shutdown();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::filesystem::path dir_;
  std::string address_;
  FakeAdmin admin_;
  FakeCluster cluster_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<Client> client_;
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(AdminCommandsTest, ExplainPrintsFilterVerdictsAndWeightedScoresPerNode) {
  ASSERT_EQ(RunExplain(*client_, "pod", "web-1", {}, out_, err_), 0) << err_.str();
  EXPECT_EQ(out_.str(),
            "Pod:              default/web-1\n"
            "Profile:          default-scheduler\n"
            "Attempts:         2\n"
            "Node:             n2\n"
            "Nominated Node:   <none>\n"
            "Message:          <none>\n"
            "\n"
            "Filter:\n"
            "NODE   NodeResourcesFit     TaintToleration   FEASIBLE\n"
            "n1     x Insufficient cpu   ok                no\n"
            "n2     ok                   ok                yes\n"
            "\n"
            "Score (weighted):\n"
            "NODE   NodeResourcesFit   ImageLocality   TOTAL\n"
            "n2     50                 100             150\n");
}

TEST_F(AdminCommandsTest, ExplainOfAMissingPodIsTheServersNotFound) {
  EXPECT_EQ(RunExplain(*client_, "pod", "nope", {.namespace_name = "ml"}, out_, err_), 1);
  EXPECT_EQ(err_.str(), "Error from server (NotFound): pod ml/nope not found\n");
  EXPECT_EQ(RunExplain(*client_, "node", "n1", {}, out_, err_), 1);
  EXPECT_THAT(err_.str(), HasSubstr("explains pods only"));
}

TEST_F(AdminCommandsTest, DescribeJoinsThePodAndItsLastAttempt) {
  ASSERT_EQ(RunDescribe(*client_, "pod", "web-1", {}, out_, err_), 0) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("Name:                  web-1\n"
                                    "Namespace:             default\n"
                                    "Priority:              10\n"));
  EXPECT_THAT(out_.str(), HasSubstr("Labels:                app=web,tier=front\n"));
  EXPECT_THAT(out_.str(), HasSubstr("Profile:               default-scheduler\n"
                                    "Attempts:              2\n"
                                    "Last Failure:          <none>\n"));
  EXPECT_THAT(out_.str(),
              HasSubstr("Events:\n"
                        "  Type     Reason      From                Message\n"
                        "  ----     ------      ----                -------\n"
                        "  Normal   Scheduled   default-scheduler   Successfully assigned "
                        "default/web-1 to n2\n"));
  out_.str("");
  ASSERT_EQ(RunDescribe(*client_, "pod", "huge", {}, out_, err_), 0) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("Status:                Pending\n"));
  EXPECT_THAT(out_.str(), HasSubstr("Last Failure:          0/2 nodes are available: 2 "
                                    "Insufficient cpu.\n"));
  EXPECT_THAT(out_.str(), HasSubstr("  Warning   FailedScheduling   default-scheduler   0/2 nodes "
                                    "are available: 2 Insufficient cpu.\n"));
}

TEST_F(AdminCommandsTest, PluginsProfilesAndStats) {
  ASSERT_EQ(RunPlugins(*client_, out_, err_), 0) << err_.str();
  EXPECT_EQ(out_.str(),
            "NAME               VERSION   ABI   POINTS             PROFILES            LIBRARY"
            "                                            SHA256\n"
            "NodeResourcesFit   1.0.0     1.1   PreFilter,Filter   default-scheduler   "
            "/usr/lib/schedhost/plugins/node_resources_fit.so   0123456789ab\n"
            "\n"
            "Library versions:\n"
            "LIBRARY         SHA256         STATE      GENERATION\n"
            "/opt/quota.so   aaaaaaaaaaaa   draining   2\n"
            "/opt/quota.so   bbbbbbbbbbbb   live       3\n");
  out_.str("");
  ASSERT_EQ(RunProfiles(*client_, out_, err_), 0) << err_.str();
  EXPECT_EQ(out_.str(),
            "Config generation: 3\n"
            "PROFILE             EXTENSION POINT              PLUGINS\n"
            "default-scheduler   (percentageOfNodesToScore)   0 (adaptive)\n"
            "                    Filter                       NodeResourcesFit, TaintToleration\n"
            "                    Score                        TaintToleration(3)\n");
  out_.str("");
  ASSERT_EQ(RunStats(*client_, out_, err_), 0) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("active_pods: 3\nbackoff_pods: 0\n"));
  EXPECT_THAT(out_.str(),
              HasSubstr("bound_pods: 12\npods_per_second: 2.50\nresource_version: 40\n"));
  EXPECT_THAT(out_.str(), HasSubstr("config_generation: 3\ndraining_profile_sets: 0\n"
                                    "last_reload: failure\nlast_reload_message: schedhost.toml:"
                                    "3:1: unknown plugin \"Nope\"\n"
                                    "last_reload_unix_seconds: 1700000000\n"));
}

TEST_F(AdminCommandsTest, ReloadExitsOneWhenRefused) {
  ASSERT_EQ(RunReload(*client_, out_, err_), 0) << err_.str();
  EXPECT_EQ(out_.str(), "reloaded 1 profile\n");
  admin_.reload_ok = false;
  out_.str("");
  EXPECT_EQ(RunReload(*client_, out_, err_), 1);
  EXPECT_EQ(out_.str(), "");
  EXPECT_THAT(err_.str(), HasSubstr("reload refused, the running profiles are unchanged: "
                                    "schedhost.toml:3:1: unknown plugin \"Nope\""));
}

}  // namespace
}  // namespace schedhost::cli
