// The gRPC API end to end: a ServiceHost on a temporary Unix socket with the builtin plugins,
// driven through the generated client stubs; and schedhostd itself (TLS rule, clean SIGTERM).
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "host/framework/testing/command.h"
#include "host/model/node.h"
#include "host/model/pod.h"
#include "host/scheduler/scheduler.h"
#include "tests/integration/api_fixture.h"
#include "tests/integration/test_plugins.h"

namespace schedhost::api {
namespace {

using ::testing::HasSubstr;

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
           "\"resourceVersion\":\"" +
           version + "\",\"labels\":{\"zone\":\"" + zone + "\"}}}";
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
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << c.name << ": " << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr(c.field)) << c.name;
  }
  EXPECT_EQ(host_->store().resource_version(), rv_before);
}

TEST_F(ApiTest, WatchResumesFromTheLastVersionWithoutLossOrRepeats) {
  auto pc = [](const std::string& name) {
    return "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\",\"metadata\":{"
           "\"name\":\"" +
           name + "\"},\"value\":10}";
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

std::filesystem::path Schedhostd() { return framework::testing::BinDir() / "schedhostd"; }

// Stop while pods are still arriving and being scheduled: every pod whose Apply succeeded is in
// the store, bound at most once to a node that exists or pending in the queue; nothing is left in
// flight, and the cache agrees with the store.
TEST_F(ApiTest, StopWithPodsInFlightLosesNothing) {
  for (int i = 0; i < 4; ++i) {
    MustApply("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"big-" +
              std::to_string(i) +
              "\"},\"status\":{\"capacity\":{\"cpu\":\"64\",\"memory\":\"256Gi\",\"pods\":"
              "\"500\"}}}");
  }
  auto pod = [](int i) {
    return "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p-" +
           std::to_string(i) +
           "\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","
           "\"resources\":{\"requests\":{\"cpu\":\"" +
           (i % 3 == 0 ? "100" : "100m") + "\"}}}]}}";  // every third pod fits nowhere
  };
  constexpr int kBefore = 300;
  for (int i = 0; i < kBefore; ++i) MustApply(pod(i));
  // A second client keeps creating pods while the host stops; it ends at the first refusal.
  std::atomic<int> accepted_late{0};
  std::thread feeder([&] {
    for (int i = kBefore; i < kBefore + 5000; ++i) {
      v1::ApplyResponse response;
      if (!Apply(pod(i), &response).ok()) break;
      accepted_late.fetch_add(1);
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  host_->Stop();
  feeder.join();

  const int accepted = kBefore + accepted_late.load();
  std::set<std::string> nodes;
  for (const auto& node : host_->store().List<model::Node>()) nodes.insert(node->name());
  int bound = 0;
  std::set<std::string> names;
  for (const auto& p : host_->store().List<model::Pod>()) {
    names.emplace(p->name());
    if (!p->node_name().empty()) {
      ++bound;
      EXPECT_EQ(nodes.count(std::string(p->node_name())), 1u)
          << p->name() << " on " << p->node_name();
    }
  }
  EXPECT_EQ(static_cast<int>(names.size()), accepted);
  for (int i = 0; i < accepted; ++i) EXPECT_EQ(names.count("p-" + std::to_string(i)), 1u) << i;
  const queue::QueueCounts counts = host_->scheduler()->queue().Counts();
  EXPECT_EQ(counts.in_flight, 0u);
  EXPECT_EQ(static_cast<size_t>(bound) + counts.active + counts.backoff + counts.unschedulable,
            static_cast<size_t>(accepted));
  EXPECT_EQ(host_->scheduler()->CheckInvariants(), "");
  EXPECT_LE(bound, accepted - (accepted + 2) / 3);
  std::printf("accepted %d pods, %d bound before the stop\n", accepted, bound);
}

// Stop with pods waiting at Permit (the Gang test plugin holds pods named g-*): Stop does not
// wait for their timeout, rejects them back into the queue unbound, and leaves nothing in flight.
TEST(ServiceHostStopTest, PodsWaitingAtPermitAreRequeuedUnbound) {
  TempDir dir;
  const std::string listen = "unix://" + (dir.path() / "s.sock").string();
  ServiceHost host(config::ParseConfig("[host]\nstate_dir = \"" + (dir.path() / "state").string() +
                                           "\"\n[api]\nlisten = \"" + listen +
                                           "\"\n[metrics]\nlisten = \"127.0.0.1:0\"\n"
                                           "[[profile]]\nname = \"default-scheduler\"\n"
                                           "[profile.plugins.multi_point]\n"
                                           "enabled = [{ name = \"Gang\" }]\n"
                                           "[profile.plugin_config.Gang]\n"
                                           "quorum = 1000\ntimeout_ms = 600000\n",
                                       "test.toml", {}),
                   framework::testing::PluginDir());
  host.RegisterInProcess(integration::GangDescriptor());
  host.Start();
  auto cluster =
      v1::Cluster::NewStub(grpc::CreateChannel(listen, grpc::InsecureChannelCredentials()));
  auto apply = [&](const std::string& manifest) {
    grpc::ClientContext context;
    v1::ApplyRequest request;
    request.set_manifest(manifest);
    v1::ApplyResponse response;
    ASSERT_TRUE(cluster->Apply(&context, request, &response).ok()) << manifest;
  };
  apply(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},
            "status":{"capacity":{"cpu":"64","memory":"64Gi","pods":"100"}}})");
  auto pod = [](const std::string& name) {
    return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
           R"("},"spec":{"containers":[{"name":"c","image":"busybox",)"
           R"("resources":{"requests":{"cpu":"100m"}}}]}})";
  };
  for (int i = 0; i < 10; ++i) apply(pod("g-" + std::to_string(i)));
  for (int i = 0; i < 20; ++i) apply(pod("p-" + std::to_string(i)));

  auto bound = [&] {
    int n = 0;
    for (const auto& p : host.store().List<model::Pod>()) n += p->node_name().empty() ? 0 : 1;
    return n;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  // A bound pod leaves in_flight only after its binding is written, so wait for exactly the ten.
  while ((bound() < 20 || host.scheduler()->queue().Counts().in_flight != 10) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(bound(), 20);
  ASSERT_EQ(host.scheduler()->queue().Counts().in_flight, 10u);  // the g-* pods, at Permit

  const auto start = std::chrono::steady_clock::now();
  host.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  for (const auto& p : host.store().List<model::Pod>()) {
    EXPECT_EQ(p->node_name().empty(), p->name().starts_with("g-")) << p->name();
  }
  const queue::QueueCounts counts = host.scheduler()->queue().Counts();
  EXPECT_EQ(counts.in_flight, 0u);
  EXPECT_EQ(counts.active + counts.backoff + counts.unschedulable, 10u);
  EXPECT_EQ(host.scheduler()->CheckInvariants(), "");
}

TEST(SchedhostdTest, RefusesTcpWithoutTls) {
  if (!std::filesystem::exists(Schedhostd())) GTEST_SKIP() << "not built: " << Schedhostd();
  TempDir dir;
  const auto config = dir.path() / "schedhost.toml";
  std::ofstream(config) << "[api]\nlisten = \"127.0.0.1:0\"\n";
  const auto r = framework::testing::RunCommand(Schedhostd().string() + " --config " +
                                                config.string() + " 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("schedhost.toml:2:10: api.listen \"127.0.0.1:0\" is a TCP address, "
                        "which schedhost serves only over TLS"));
}

TEST(SchedhostdTest, ServesOnTheConfiguredSocketSurvivesSighupAndExitsZeroOnSigterm) {
  if (!std::filesystem::exists(Schedhostd())) GTEST_SKIP() << "not built: " << Schedhostd();
  TempDir dir;
  const auto socket = dir.path() / "sock" / "s.sock";
  const auto config = dir.path() / "schedhost.toml";
  // Only [api], [metrics] and a state_dir: the default profile and the builtin plugins beside
  // the binary.
  std::ofstream(config) << "[host]\nstate_dir = \"state\"\n[api]\nlisten = \"unix://"
                        << socket.string() << "\"\n[metrics]\nlisten = \"127.0.0.1:0\"\n";
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

  // schedhostd hands its --config file to the host, so Admin.Reload has a file to re-read.
  auto admin = v1::Admin::NewStub(
      grpc::CreateChannel("unix://" + socket.string(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext reload_context;
  reload_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::ReloadResponse reloaded;
  s = admin->Reload(&reload_context, v1::ReloadRequest(), &reloaded);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(reloaded.ok()) << reloaded.message();
  EXPECT_THAT(reloaded.message(), HasSubstr(config.string()));

  // SIGHUP (systemctl reload) validates the config and keeps serving; it used to terminate.
  ASSERT_EQ(::kill(pid, SIGHUP), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  grpc::ClientContext after_hup;
  after_hup.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  request.set_manifest(kNodes[1]);
  s = stub->Apply(&after_hup, request, &response);
  EXPECT_TRUE(s.ok()) << "after SIGHUP: " << s.error_message();

  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_FALSE(std::filesystem::exists(socket));
}

}  // namespace
}  // namespace schedhost::api
