// The gRPC API end to end: a ServiceHost on a temporary Unix socket with the builtin plugins,
// driven through the generated client stubs; and schedhostd itself (TLS rule, clean SIGTERM).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "host/api/service_host.h"
#include "host/config/host_config.h"
#include "host/framework/testing/harness.h"
#include "schedhost/v1/cluster.grpc.pb.h"

namespace schedhost::api {
namespace {

using ::testing::HasSubstr;
namespace v1 = schedhost::v1;

constexpr const char* kNodes[] = {
    R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{"zone":"a"}},
        "status":{"capacity":{"cpu":"2","memory":"4Gi","pods":"10"}}})",
    R"(apiVersion: v1
kind: Node
metadata: {name: n2, labels: {zone: b}}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "10"}}
)"};
constexpr const char* kPod = R"(apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  containers:
  - name: app
    image: nginx
    resources: {requests: {cpu: "3", memory: 1Gi}}
)";

// TempDir is a fresh directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "schedhost-api-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

config::HostConfig ConfigFor(const std::string& listen) {
  // Metrics on a free port: tests run side by side (and a real schedhostd may hold 10259).
  return config::ParseConfig(
      "[api]\nlisten = \"" + listen + "\"\n[metrics]\nlisten = \"127.0.0.1:0\"\n", "test.toml", {});
}

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    socket_ = dir_.path() / "run" / "schedhost.sock";  // "run" does not exist yet
    host_ = std::make_unique<ServiceHost>(ConfigFor("unix://" + socket_.string()),
                                          framework::testing::PluginDir());
    host_->Start();
    channel_ = grpc::CreateChannel("unix://" + socket_.string(), grpc::InsecureChannelCredentials());
    cluster_ = v1::Cluster::NewStub(channel_);
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
};

TEST_F(ApiTest, SocketIsPrivate) {
  struct stat st {};
  ASSERT_EQ(::stat(socket_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600);
}

TEST_F(ApiTest, AppliesNodesAndPodWatchesTheBindingAndLists) {
  for (const char* node : kNodes) EXPECT_EQ(MustApply(node), v1::CREATED);
  EXPECT_EQ(MustApply(kPod), v1::CREATED);

  // Only n2 has 3 cpus free; the binding comes back as a pod update.
  grpc::ClientContext watch_context;
  watch_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::WatchRequest watch;
  watch.add_kinds(v1::POD);
  auto reader = cluster_->Watch(&watch_context, watch);
  v1::WatchEvent event;
  std::string bound_to;
  uint64_t last_rv = 0;
  while (bound_to.empty() && reader->Read(&event)) {
    EXPECT_GT(event.resource_version(), last_rv);
    last_rv = event.resource_version();
    EXPECT_EQ(event.object().kind(), v1::POD);
    auto manifest = nlohmann::json::parse(event.object().manifest());
    bound_to = manifest["spec"].value("nodeName", "");
    if (!bound_to.empty()) {
      EXPECT_EQ(event.type(), v1::MODIFIED);
    }
  }
  watch_context.TryCancel();
  EXPECT_EQ(bound_to, "n2");

  grpc::ClientContext list_context;
  v1::ListRequest list;
  list.set_kind(v1::POD);
  list.set_label_selector("app=web");
  v1::ListResponse pods;
  ASSERT_TRUE(cluster_->List(&list_context, list, &pods).ok());
  ASSERT_EQ(pods.items_size(), 1);
  EXPECT_EQ(pods.items(0).name(), "web");
  EXPECT_EQ(pods.items(0).namespace_(), "default");
  EXPECT_EQ(nlohmann::json::parse(pods.items(0).manifest())["spec"]["nodeName"], "n2");
  EXPECT_GE(pods.resource_version(), last_rv);

  grpc::ClientContext nodes_context;
  list.set_kind(v1::NODE);
  list.set_label_selector("zone in (a)");
  v1::ListResponse nodes;
  ASSERT_TRUE(cluster_->List(&nodes_context, list, &nodes).ok());
  ASSERT_EQ(nodes.items_size(), 1);
  EXPECT_EQ(nodes.items(0).name(), "n1");

  // Re-applying the original manifest changes nothing: nodeName belongs to the scheduler.
  EXPECT_EQ(MustApply(kPod), v1::UNCHANGED);
  EXPECT_EQ(MustApply(kNodes[0]), v1::UNCHANGED);
  std::string relabelled = kNodes[1];
  relabelled.replace(relabelled.find("zone: b"), 7, "zone: c");
  EXPECT_EQ(MustApply(relabelled), v1::CONFIGURED);
}

TEST_F(ApiTest, ApplyWithAStaleResourceVersionIsAborted) {
  v1::ApplyResponse created;
  ASSERT_TRUE(Apply(kNodes[0], &created).ok());
  const std::string rv = std::to_string(created.object().resource_version());
  auto with_rv = [&](const std::string& version, const std::string& zone) {
    return "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\","
           "\"resourceVersion\":\"" + version + "\",\"labels\":{\"zone\":\"" + zone + "\"}}}";
  };
  v1::ApplyResponse updated;
  ASSERT_TRUE(Apply(with_rv(rv, "b"), &updated).ok());
  EXPECT_EQ(updated.result(), v1::CONFIGURED);
  v1::ApplyResponse stale;
  grpc::Status s = Apply(with_rv(rv, "c"), &stale);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("is stale"));
}

TEST_F(ApiTest, MalformedRequestsAreInvalidArgumentNamingTheFieldAndChangeNothing) {
  for (const char* node : kNodes) MustApply(node);
  const uint64_t rv_before = host_->store().resource_version();
  struct Case {
    std::string name;
    std::function<grpc::Status()> call;
    std::string field;
  };
  auto apply = [&](std::string manifest) {
    return [this, manifest] {
      v1::ApplyResponse r;
      return Apply(manifest, &r);
    };
  };
  std::string bad_cpu = kPod;
  bad_cpu.replace(bad_cpu.find("cpu: \"3\""), 8, "cpu: \"3x\"");
  std::string bad_name = kPod;
  bad_name.replace(bad_name.find("name: web,"), 10, "name: Web_1,");
  const std::vector<Case> cases = {
      {"empty manifest", apply(""), "manifest: required"},
      {"bad quantity", apply(bad_cpu), "spec.containers[0].resources.requests.cpu"},
      {"bad name", apply(bad_name), "metadata.name"},
      {"two objects", apply(std::string(kNodes[1]) + "---\n" + kPod), "manifest: holds 2 objects"},
      {"not yaml", apply("{a: [}"), "manifest"},
      {"get without kind",
       [this] {
         grpc::ClientContext c;
         v1::GetRequest r;
         r.set_name("n1");
         v1::GetResponse out;
         return cluster_->Get(&c, r, &out);
       },
       "kind: required"},
      {"get without name",
       [this] {
         grpc::ClientContext c;
         v1::GetRequest r;
         r.set_kind(v1::NODE);
         v1::GetResponse out;
         return cluster_->Get(&c, r, &out);
       },
       "name: required"},
      {"list bad selector",
       [this] {
         grpc::ClientContext c;
         v1::ListRequest r;
         r.set_kind(v1::NODE);
         r.set_label_selector("zone in (a");
         v1::ListResponse out;
         return cluster_->List(&c, r, &out);
       },
       "label_selector:"},
      {"delete unknown kind",
       [this] {
         grpc::ClientContext c;
         v1::DeleteRequest r;
         r.set_kind(static_cast<v1::Kind>(42));
         r.set_name("n1");
         v1::DeleteResponse out;
         return cluster_->Delete(&c, r, &out);
       },
       "kind: unknown value 42"},
      {"delete bad namespace",
       [this] {
         grpc::ClientContext c;
         v1::DeleteRequest r;
         r.set_kind(v1::POD);
         r.set_namespace_("Bad_NS");
         r.set_name("web");
         v1::DeleteResponse out;
         return cluster_->Delete(&c, r, &out);
       },
       "namespace: invalid value \"Bad_NS\""},
  };
  for (const Case& c : cases) {
    grpc::Status s = c.call();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.name << ": " << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr(c.field)) << c.name;
  }
  EXPECT_EQ(host_->store().resource_version(), rv_before);
}

TEST_F(ApiTest, WatchResumesFromTheLastVersionWithoutLossOrRepeats) {
  auto pc = [](const std::string& name) {
    return "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\",\"metadata\":{"
           "\"name\":\"" + name + "\"},\"value\":10}";
  };
  MustApply(pc("first"));
  uint64_t last_rv = 0;
  {
    grpc::ClientContext context;
    v1::WatchRequest request;
    request.add_kinds(v1::PRIORITY_CLASS);
    auto reader = cluster_->Watch(&context, request);
    v1::WatchEvent event;
    while (reader->Read(&event)) {
      last_rv = event.resource_version();
      if (event.object().name() == "first") break;
    }
    context.TryCancel();  // The watcher disconnects.
  }
  ASSERT_GT(last_rv, 0u);
  MustApply(pc("second"));
  MustApply(pc("third"));
  {
    grpc::ClientContext c;
    v1::DeleteRequest r;
    r.set_kind(v1::PRIORITY_CLASS);
    r.set_name("first");
    v1::DeleteResponse out;
    ASSERT_TRUE(cluster_->Delete(&c, r, &out).ok());
  }
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  v1::WatchRequest request;
  request.add_kinds(v1::PRIORITY_CLASS);
  request.set_resource_version(last_rv);
  auto reader = cluster_->Watch(&context, request);
  std::vector<std::string> seen;
  v1::WatchEvent event;
  while (seen.size() < 4 && reader->Read(&event)) {  // a 4th event would be a repeat
    seen.push_back(v1::EventType_Name(event.type()) + " " + event.object().name());
  }
  EXPECT_THAT(seen, ::testing::ElementsAre("ADDED second", "ADDED third", "DELETED first"));

  // A version from the future is refused up front.
  grpc::ClientContext future_context;
  request.set_resource_version(1'000'000);
  auto future = cluster_->Watch(&future_context, request);
  while (future->Read(&event)) {
  }
  grpc::Status s = future->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("resource_version"));
}

// --- schedhostd, the binary ---

std::filesystem::path Schedhostd() {
  return std::filesystem::path(framework::testing::PluginDir()).parent_path() / "bin" / "schedhostd";
}

TEST(SchedhostdTest, RefusesTcpWithoutTls) {
  if (!std::filesystem::exists(Schedhostd())) GTEST_SKIP() << "not built: " << Schedhostd();
  TempDir dir;
  const auto config = dir.path() / "schedhost.toml";
  std::ofstream(config) << "[api]\nlisten = \"127.0.0.1:0\"\n";
  std::string cmd = Schedhostd().string() + " --config " + config.string() + " 2>&1";
  FILE* f = ::popen(cmd.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string out;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof(buf), f)) out.append(buf, n);
  int status = ::pclose(f);
  EXPECT_EQ(WEXITSTATUS(status), 1) << out;
  EXPECT_THAT(out, HasSubstr("schedhost.toml:2:10: api.listen \"127.0.0.1:0\" is a TCP address, "
                             "which schedhost serves only over TLS"));
}

TEST(SchedhostdTest, ServesOnTheConfiguredSocketAndExitsZeroOnSigterm) {
  if (!std::filesystem::exists(Schedhostd())) GTEST_SKIP() << "not built: " << Schedhostd();
  TempDir dir;
  const auto socket = dir.path() / "sock" / "s.sock";
  const auto config = dir.path() / "schedhost.toml";
  // Only [api] and [metrics]: the default profile and the builtin plugins beside the binary.
  std::ofstream(config) << "[api]\nlisten = \"unix://" << socket.string()
                        << "\"\n[metrics]\nlisten = \"127.0.0.1:0\"\n";
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::execl(Schedhostd().c_str(), "schedhostd", "--config", config.c_str(), "--log-level", "warn",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!std::filesystem::exists(socket) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(std::filesystem::exists(socket));
  auto stub = v1::Cluster::NewStub(
      grpc::CreateChannel("unix://" + socket.string(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  context.set_wait_for_ready(true);
  v1::ApplyRequest request;
  request.set_manifest(kNodes[0]);
  v1::ApplyResponse response;
  grpc::Status s = stub->Apply(&context, request, &response);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(response.result(), v1::CREATED);

  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_FALSE(std::filesystem::exists(socket));
}

}  // namespace
}  // namespace schedhost::api
