// Kubernetes mode end to end: a ServiceHost with a [kubernetes] table schedules the pods of a
// real control plane (upstream kube-apiserver and etcd, tests/kube/control_plane.h). Objects go
// in with kubectl as the admin; schedhost authenticates as the `schedhost` user, who holds
// exactly kube-scheduler's permissions. No kubelet runs: nodes are Node objects whose status
// the test patches, and the test deletes terminating pods as a kubelet would.
#include <grpcpp/grpcpp.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <gmock/gmock.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "host/api/service_host.h"
#include "host/config/host_config.h"
#include "host/framework/testing/command.h"
#include "host/framework/testing/fake_plugin.h"
#include "host/framework/testing/harness.h"
#include "host/framework/testing/temp_dir.h"
#include "host/kube/kube_mode.h"
#include "host/model/meta.h"
#include "host/scheduler/scheduler.h"
#include "schedhost/v1/admin.grpc.pb.h"
#include "schedhost/v1/cluster.grpc.pb.h"
#include "tests/kube/control_plane.h"
#include "tests/kube/tcp_proxy.h"

namespace schedhost::kube {
namespace {

using ::schedhost::testing::ControlPlane;
using ::schedhost::testing::TcpProxy;
using ::testing::HasSubstr;
using Json = nlohmann::json;

// HttpGet returns the status and body of GET `path` on 127.0.0.1:`port` (the metrics endpoint).
std::pair<int, std::string> HttpGet(uint16_t port, const std::string& path) {
  namespace beast = boost::beast;
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket socket(ioc);
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  beast::http::request<beast::http::empty_body> request{beast::http::verb::get, path, 11};
  request.set(beast::http::field::host, "127.0.0.1");
  beast::http::write(socket, request);
  beast::flat_buffer buffer;
  beast::http::response<beast::http::string_body> response;
  beast::http::read(socket, buffer, response);
  return {static_cast<int>(response.result_int()), response.body()};
}

// Readyz returns the HTTP status of GET /readyz on the host's metrics port.
int Readyz(uint16_t port) { return HttpGet(port, "/readyz").first; }

// WaitFor polls `done` every 50 ms for up to `timeout`; true once it holds.
bool WaitFor(const std::function<bool()>& done,
             std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

class KubeModeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!ControlPlane::Unavailable().empty()) return;  // SetUp skips or fails, saying why
    cp_ = ControlPlane::Start();
  }
  static void TearDownTestSuite() { cp_.reset(); }

  void SetUp() override {
    SCHEDHOST_SKIP_WITHOUT_KUBE();
    ASSERT_NE(cp_, nullptr);
    // Each test works in a namespace and on nodes of its own.
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ns_ = "t-";
    for (char c : name) ns_ += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (ns_.size() > 50) ns_.resize(50);
    Kubectl({"create", "namespace", ns_});
  }

  void TearDown() override {
    if (host_) host_->Stop();
    host_.reset();
    if (cp_ == nullptr || ns_.empty()) return;
    cp_->Kubectl({"delete", "nodes", "-l", "schedhost-test=" + ns_, "--wait=false"});
    cp_->Kubectl({"delete", "pods", "--all", "-n", ns_, "--grace-period=0", "--force"});
    cp_->Kubectl({"delete", "namespace", ns_, "--wait=false"});
  }

  // Kubectl runs kubectl as the admin and expects success; returns stdout.
  std::string Kubectl(const std::vector<std::string>& args, std::string_view input = {}) {
    const ControlPlane::Result r = cp_->Kubectl(args, input);
    EXPECT_EQ(r.exit_code, 0) << "kubectl " << ::testing::PrintToString(args) << ": " << r.err;
    return r.out;
  }

  // Config is a host config for the test: a socket and metrics of its own, the scheduler
  // user's kubeconfig, and `profiles` (one profile named schedhost by default).
  std::string Config(const std::string& kubernetes_extra = "",
                     const std::string& profiles = "[[profile]]\nname = \"schedhost\"\n") {
    return ConfigIn(dir_.path(), cp_->user_kubeconfig(), kubernetes_extra, profiles);
  }
  static std::string ConfigIn(const std::filesystem::path& dir, const std::string& kubeconfig,
                              const std::string& kubernetes_extra,
                              const std::string& profiles = "[[profile]]\nname = \"schedhost\"\n") {
    return "[api]\nlisten = \"unix://" + (dir / "s.sock").string() +
           "\"\n[metrics]\nlisten = \"127.0.0.1:0\"\n[host]\nstate_dir = \"" +
           (dir / "state").string() + "\"\npod_initial_backoff = \"100ms\"\n" +
           "pod_max_backoff = \"1s\"\n[kubernetes]\nkubeconfig = \"" + kubeconfig +
           "\"\nsync_timeout = \"20s\"\n" + kubernetes_extra + profiles;
  }

  // MakeHost builds (not starts) a host in Kubernetes mode from `config_text`, written to
  // `dir`/schedhost.toml; *kube is its source.
  static std::unique_ptr<api::ServiceHost> MakeHost(const std::filesystem::path& dir,
                                                    const std::string& config_text,
                                                    KubeMode** kube_out) {
    const std::filesystem::path file = dir / "schedhost.toml";
    std::ofstream(file) << config_text;
    config::HostConfig config = config::LoadConfigFile(file);
    auto kube = std::make_unique<KubeMode>(*config.kubernetes);
    *kube_out = kube.get();
    auto host = std::make_unique<api::ServiceHost>(std::move(config),
                                                   framework::testing::PluginDir(), file);
    host->SetClusterSource(std::move(kube));
    return host;
  }

  // StartHost runs schedhost in Kubernetes mode with `config_text`.
  void StartHost(const std::string& config_text,
                 const std::vector<const schedhost_plugin_descriptor*>& in_process = {}) {
    host_ = MakeHost(dir_.path(), config_text, &kube_);
    for (const auto* d : in_process) host_->RegisterInProcess(d);
    host_->Start();
  }

  // Replica is one more schedhost of the test, with a directory (socket, metrics, state) of its
  // own, electing its leader on kube-system/schedhost with short timings (kElection).
  struct Replica {
    framework::testing::TempDir dir;
    std::unique_ptr<api::ServiceHost> host;
    KubeMode* kube = nullptr;
    // When it lost the lease (wall clock, ns since the epoch; 0: not lost).
    std::atomic<int64_t> lost_at{0};

    bool leading() const { return host->leadership().leading; }
    WriterStats writes() const { return kube->kube_writer()->stats(); }
    ~Replica() {
      if (host) host->Stop();
    }
  };
  // Short election timings for the tests: lease 5 s, renew deadline 4 s (room for a busy,
  // sanitized machine: a leader whose renewals stall that long loses its term), retry 500 ms.
  static constexpr std::chrono::seconds kLeaseDuration{5};
  static std::string Election(const std::string& identity) {
    return "[kubernetes.leader_election]\nidentity = \"" + identity +
           "\"\nlease_duration = \"5s\"\nrenew_deadline = \"4s\"\nretry_period = \"500ms\"\n";
  }
  std::unique_ptr<Replica> StartReplica(const std::string& identity,
                                        const std::string& kubeconfig = "",
                                        const std::string& election_extra = "") {
    auto r = std::make_unique<Replica>();
    const std::string election = Election(identity) + election_extra;
    r->host = MakeHost(r->dir.path(),
                       ConfigIn(r->dir.path(),
                                kubeconfig.empty() ? cp_->user_kubeconfig() : kubeconfig, election),
                       &r->kube);
    r->host->OnLostLeadership([r = r.get()] { r->lost_at.store(model::NowUnixNs()); });
    r->host->Start();
    return r;
  }
  // ApiServerPort is the API server's port on 127.0.0.1.
  uint16_t ApiServerPort() const {
    return static_cast<uint16_t>(std::stoi(cp_->server().substr(cp_->server().rfind(':') + 1)));
  }
  // ProxiedKubeconfig writes `dir`/proxied.kubeconfig: the user's kubeconfig with the API
  // server's address replaced by `proxy`'s; returns its path.
  std::filesystem::path ProxiedKubeconfig(const TcpProxy& proxy,
                                          const std::filesystem::path& dir) const {
    std::ifstream in(cp_->user_kubeconfig());
    std::string kubeconfig((std::istreambuf_iterator<char>(in)),
                           std::istreambuf_iterator<char>());
    const std::string proxied = "https://127.0.0.1:" + std::to_string(proxy.port());
    for (size_t at = kubeconfig.find(cp_->server()); at != std::string::npos;
         at = kubeconfig.find(cp_->server(), at + proxied.size())) {
      kubeconfig.replace(at, cp_->server().size(), proxied);
    }
    const std::filesystem::path file = dir / "proxied.kubeconfig";
    std::ofstream(file) << kubeconfig;
    return file;
  }

  // Lease reads kube-system/schedhost's spec (null when there is none).
  Json Lease() {
    const ControlPlane::Result r =
        cp_->Kubectl({"get", "lease", "schedhost", "-n", "kube-system", "-o", "json"});
    if (r.exit_code != 0) return nullptr;
    return Json::parse(r.out)["spec"];
  }

  // AddNode creates a node as a kubelet would register it: the object, then its status
  // (capacity, allocatable, Ready), then without the not-ready taint the TaintNodesByCondition
  // admission plugin put on it (the node lifecycle controller would remove it).
  void AddNode(const std::string& name, const std::string& cpu, const std::string& memory,
               Json labels = Json::object(), Json spec = Json::object()) {
    labels["schedhost-test"] = ns_;
    labels["kubernetes.io/hostname"] = name;
    Json node = {{"apiVersion", "v1"},
                 {"kind", "Node"},
                 {"metadata", {{"name", name}, {"labels", labels}}},
                 {"spec", spec}};
    Kubectl({"create", "-f", "-"}, node.dump());
    Json resources = {{"cpu", cpu}, {"memory", memory}, {"pods", "110"}};
    Json status = {{"status",
                    {{"capacity", resources},
                     {"allocatable", resources},
                     {"conditions",
                      Json::array({{{"type", "Ready"},
                                    {"status", "True"},
                                    {"reason", "KubeletReady"},
                                    {"message", "ready"}}})}}}};
    Kubectl({"patch", "node", name, "--subresource=status", "--type=merge", "-p", status.dump()});
    Kubectl({"taint", "nodes", name, "node.kubernetes.io/not-ready:NoSchedule-"});
  }

  // Pod returns a pod manifest in the test's namespace.
  Json Pod(const std::string& name, const std::string& cpu,
           const std::string& scheduler = "schedhost") {
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}, {"namespace", ns_}}},
            {"spec",
             {{"schedulerName", scheduler},
              {"containers",
               Json::array({{{"name", "c"},
                             {"image", "registry.k8s.io/pause:3.10"},
                             {"resources", {{"requests", {{"cpu", cpu}}}}}}})}}}};
  }

  void Create(const Json& object) { Kubectl({"create", "-f", "-"}, object.dump()); }

  // Get reads one object of the test's namespace (or a cluster-scoped one) as JSON; null when
  // it is not there.
  Json Get(const std::string& kind, const std::string& name) {
    const ControlPlane::Result r = cp_->Kubectl({"get", kind, name, "-n", ns_, "-o", "json"});
    if (r.exit_code != 0) return nullptr;
    return Json::parse(r.out);
  }
  std::string NodeOf(const std::string& pod) {
    Json p = Get("pod", pod);
    return p.is_null() ? "" : p["spec"].value("nodeName", "");
  }
  // Condition returns the pod's condition of `type`, or null.
  Json Condition(const std::string& pod, const std::string& type) {
    Json p = Get("pod", pod);
    if (p.is_null()) return nullptr;
    for (const Json& c : p["status"].value("conditions", Json::array())) {
      if (c.value("type", "") == type) return c;
    }
    return nullptr;
  }
  // Events returns the events (events.k8s.io/v1) about `pod` with `reason`.
  std::vector<Json> Events(const std::string& pod, const std::string& reason) {
    const ControlPlane::Result r =
        cp_->Kubectl({"get", "events.v1.events.k8s.io", "-n", ns_, "-o", "json"});
    std::vector<Json> out;
    if (r.exit_code != 0) return out;
    for (const Json& e : Json::parse(r.out).value("items", Json::array())) {
      if (e["regarding"].value("name", "") == pod && e.value("reason", "") == reason) {
        out.push_back(e);
      }
    }
    return out;
  }

  static std::unique_ptr<ControlPlane> cp_;
  framework::testing::TempDir dir_;
  // An in-process plugin a test registers: declared before host_, so it outlives the host.
  framework::testing::FakePlugin plugin_;
  std::string ns_;
  std::unique_ptr<api::ServiceHost> host_;
  KubeMode* kube_ = nullptr;
};

std::unique_ptr<ControlPlane> KubeModeTest::cp_;

TEST_F(KubeModeTest, BindsPodsThatOptInAndLeavesOthersAlone) {
  AddNode(ns_ + "-a", "4", "8Gi");
  StartHost(Config());
  Create(Pod("mine", "500m"));
  Create(Pod("theirs", "500m", "default-scheduler"));
  ASSERT_TRUE(WaitFor([&] { return NodeOf("mine") == ns_ + "-a"; })) << Get("pod", "mine").dump();
  // The API server sets PodScheduled=True on binding; schedhost records the event.
  Json scheduled = Condition("mine", "PodScheduled");
  ASSERT_FALSE(scheduled.is_null());
  EXPECT_EQ(scheduled.value("status", ""), "True");
  ASSERT_TRUE(WaitFor([&] { return Events("mine", "Scheduled").size() == 1; }));
  const Json event = Events("mine", "Scheduled")[0];
  EXPECT_EQ(event.value("note", ""), "Successfully assigned " + ns_ + "/mine to " + ns_ + "-a");
  EXPECT_EQ(event.value("action", ""), "Binding");
  EXPECT_EQ(event.value("reportingController", ""), "schedhost");
  // No profile is named default-scheduler: that pod is someone else's.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(NodeOf("theirs"), "");
  EXPECT_TRUE(Condition("theirs", "PodScheduled").is_null());
  EXPECT_TRUE(Events("theirs", "FailedScheduling").empty());

  // The gRPC API reads the mirror and refuses to write the cluster.
  auto cluster = v1::Cluster::NewStub(grpc::CreateChannel(
      "unix://" + (dir_.path() / "s.sock").string(), grpc::InsecureChannelCredentials()));
  {
    grpc::ClientContext context;
    v1::GetRequest request;
    request.set_kind(v1::POD);
    request.set_namespace_(ns_);
    request.set_name("mine");
    v1::GetResponse got;
    ASSERT_TRUE(cluster->Get(&context, request, &got).ok());
    EXPECT_EQ(got.object().uid(), Get("pod", "mine")["metadata"].value("uid", ""));
  }
  {
    grpc::ClientContext context;
    v1::ApplyRequest request;
    request.set_manifest(Pod("via-grpc", "1").dump());
    v1::ApplyResponse out;
    const grpc::Status s = cluster->Apply(&context, request, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_THAT(s.error_message(), HasSubstr(cp_->server()));
  }
  EXPECT_TRUE(Get("pod", "via-grpc").is_null());
}

TEST_F(KubeModeTest, UnschedulablePodIsReportedThenBoundWhenANodeFits) {
  AddNode(ns_ + "-small", "1", "4Gi");
  StartHost(Config());
  Create(Pod("big", "3"));
  ASSERT_TRUE(WaitFor([&] { return !Condition("big", "PodScheduled").is_null(); }));
  const Json c = Condition("big", "PodScheduled");
  EXPECT_EQ(c.value("status", ""), "False");
  EXPECT_EQ(c.value("reason", ""), "Unschedulable");
  // 3 cpu on a 1-cpu node: more than it has at all, which no preemption can fix.
  EXPECT_EQ(c.value("message", ""),
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
            "1 Preemption is not helpful for scheduling.");
  ASSERT_TRUE(WaitFor([&] { return !Events("big", "FailedScheduling").empty(); }));
  EXPECT_EQ(Events("big", "FailedScheduling")[0].value("note", ""), c.value("message", ""));
  EXPECT_EQ(Events("big", "FailedScheduling")[0].value("type", ""), "Warning");

  AddNode(ns_ + "-large", "8", "16Gi");
  ASSERT_TRUE(WaitFor([&] { return NodeOf("big") == ns_ + "-large"; }))
      << Get("pod", "big").dump();
}

TEST_F(KubeModeTest, PodsBoundByAnotherSchedulerCountAtOnce) {
  AddNode(ns_ + "-a", "2", "4Gi");
  AddNode(ns_ + "-b", "2", "4Gi", {{"pool", "b"}});
  StartHost(Config());
  // Placed by someone else on a: 1.5 of its 2 CPUs.
  Json other = Pod("placed-elsewhere", "1500m", "default-scheduler");
  other["spec"]["nodeName"] = ns_ + "-a";
  Create(other);
  // One CPU fits only on b now; ask for a as a preference so the count is what decides.
  Json mine = Pod("mine", "1");
  mine["spec"]["affinity"] = {
      {"nodeAffinity",
       {{"preferredDuringSchedulingIgnoredDuringExecution",
         Json::array({{{"weight", 100},
                       {"preference",
                        {{"matchExpressions",
                          Json::array({{{"key", "kubernetes.io/hostname"},
                                        {"operator", "In"},
                                        {"values", Json::array({ns_ + "-a"})}}})}}}}})}}}};
  Create(mine);
  ASSERT_TRUE(WaitFor([&] { return !NodeOf("mine").empty(); }));
  EXPECT_EQ(NodeOf("mine"), ns_ + "-b");
}

TEST_F(KubeModeTest, PreemptionMarksDeletesAndThenBinds) {
  AddNode(ns_ + "-a", "2", "4Gi");
  Create({{"apiVersion", "scheduling.k8s.io/v1"},
          {"kind", "PriorityClass"},
          {"metadata", {{"name", ns_ + "-high"}}},
          {"value", 1000}});
  StartHost(Config());
  Create(Pod("low", "1500m"));
  ASSERT_TRUE(WaitFor([&] { return NodeOf("low") == ns_ + "-a"; }));
  const std::string low_uid = Get("pod", "low")["metadata"].value("uid", "");
  Json high = Pod("high", "1500m");
  high["spec"]["priorityClassName"] = ns_ + "-high";
  Create(high);
  // The victim is marked and deleted with the default grace period: without a kubelet it
  // stays, terminating, until the test finishes it as the kubelet would.
  ASSERT_TRUE(WaitFor([&] {
    Json low = Get("pod", "low");
    return !low.is_null() && low["metadata"].contains("deletionTimestamp");
  }));
  const Json disruption = Condition("low", "DisruptionTarget");
  ASSERT_FALSE(disruption.is_null());
  EXPECT_EQ(disruption.value("status", ""), "True");
  EXPECT_EQ(disruption.value("reason", ""), "PreemptionByScheduler");
  EXPECT_EQ(disruption.value("message", ""),
            "schedhost: preempting to accommodate a higher priority pod");
  ASSERT_TRUE(WaitFor([&] {
    Json h = Get("pod", "high");
    return h["status"].value("nominatedNodeName", "") == ns_ + "-a";
  })) << Get("pod", "high").dump();
  EXPECT_EQ(NodeOf("high"), "");  // the victim still holds the node
  ASSERT_TRUE(WaitFor([&] { return !Events("low", "Preempted").empty(); }));
  // While the victim terminates, the preemptor's retries wait for it instead of preempting
  // again (upstream's terminating-victim rule): one eviction, one event. A node with room but
  // a taint it does not tolerate makes it try again meanwhile.
  AddNode(ns_ + "-tainted", "8", "16Gi", Json::object(),
          {{"taints", Json::array({{{"key", "dedicated"}, {"value", "other"},
                                    {"effect", "NoSchedule"}}})}});
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(kube_->kube_writer()->stats().evictions, 1u);
  EXPECT_EQ(Events("low", "Preempted").size(), 1u);
  EXPECT_EQ(Events("low", "Preempted")[0].value("note", ""),
            "Preempted by pod " + Get("pod", "high")["metadata"].value("uid", "") +
                " on node " + ns_ + "-a");
  Kubectl({"delete", "pod", "low", "-n", ns_, "--grace-period=0", "--force"});
  ASSERT_TRUE(WaitFor([&] { return NodeOf("high") == ns_ + "-a"; })) << Get("pod", "high").dump();
  EXPECT_FALSE(low_uid.empty());
}

TEST_F(KubeModeTest, SurvivesAnApiServerRestartAndACompactedHistory) {
  AddNode(ns_ + "-a", "64", "64Gi");
  // One replica, no election: an API server down for longer than the renew deadline would
  // (rightly) end a leader's term, and this host has no supervisor to start it again.
  StartHost(Config("[kubernetes.leader_election]\nenabled = false\n"));
  for (int i = 0; i < 5; ++i) Create(Pod("before-" + std::to_string(i), "100m"));
  ASSERT_TRUE(WaitFor([&] {
    for (int i = 0; i < 5; ++i) {
      if (NodeOf("before-" + std::to_string(i)).empty()) return false;
    }
    return true;
  }));
  cp_->RestartApiServer();
  for (int i = 0; i < 5; ++i) Create(Pod("between-" + std::to_string(i), "100m"));
  // History compacted past every watch's position: resuming gets 410 and relists.
  for (int i = 0; i < 20; ++i) {
    Kubectl({"annotate", "namespace", ns_, "churn=" + std::to_string(i), "--overwrite"});
  }
  cp_->Compact();
  cp_->RestartApiServer();
  for (int i = 0; i < 5; ++i) Create(Pod("after-" + std::to_string(i), "100m"));
  for (const char* prefix : {"before-", "between-", "after-"}) {
    for (int i = 0; i < 5; ++i) {
      const std::string name = prefix + std::to_string(i);
      ASSERT_TRUE(WaitFor([&] { return !NodeOf(name).empty(); }, std::chrono::seconds(60)))
          << name;
    }
  }
  // Each pod was bound once: one Scheduled event each, and no binding conflict.
  for (const char* prefix : {"before-", "between-", "after-"}) {
    for (int i = 0; i < 5; ++i) {
      const std::string name = prefix + std::to_string(i);
      ASSERT_TRUE(WaitFor([&] { return !Events(name, "Scheduled").empty(); })) << name;
      EXPECT_EQ(Events(name, "Scheduled").size(), 1u) << name;
    }
  }
  EXPECT_EQ(kube_->kube_writer()->stats().binding_conflicts, 0u);
  uint64_t relists = 0;
  for (const auto& r : kube_->reflectors()) relists += r->stats().lists;
  EXPECT_GT(relists, kube_->reflectors().size());  // the restarts made them list again
}

TEST_F(KubeModeTest, APodBoundBehindItsBackIsForgottenNotRetried) {
  AddNode(ns_ + "-a", "4", "8Gi");
  AddNode(ns_ + "-b", "4", "8Gi");
  // A PreBind plugin that holds the binding cycle until the test has bound the pod itself.
  // Shared with the plugin, which may still run after a failed assertion ends the test body.
  auto held = std::make_shared<std::atomic<bool>>(false);
  auto release = std::make_shared<std::atomic<bool>>(false);
  framework::testing::FakePlugin& hold = plugin_;
  hold.name = "HoldBinding";
  hold.pre_bind = [held, release](std::string_view, framework::testing::Reasons&) {
    held->store(true);
    WaitFor([&] { return release->load(); });
    return SCHEDHOST_SUCCESS;
  };
  StartHost(Config("", "[[profile]]\nname = \"schedhost\"\n[profile.plugins.pre_bind]\n"
                       "enabled = [{ name = \"HoldBinding\" }]\n"),
            {hold.descriptor()});
  Create(Pod("contested", "1"));
  ASSERT_TRUE(WaitFor([&] { return held->load(); }));
  const Json pod = Get("pod", "contested");
  const std::string uid = pod["metadata"].value("uid", "");
  // Someone else binds it meanwhile (to b; were b schedhost's choice too, its binding would
  // still conflict: the pod is bound already).
  const std::string theirs = ns_ + "-b";
  Json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", "contested"}, {"namespace", ns_}, {"uid", uid}}},
                  {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", theirs}}}};
  Kubectl({"create", "--raw", "/api/v1/namespaces/" + ns_ + "/pods/contested/binding", "-f", "-"},
          binding.dump());
  release->store(true);
  ASSERT_TRUE(WaitFor([&] { return kube_->kube_writer()->stats().binding_conflicts == 1; }));
  EXPECT_EQ(NodeOf("contested"), theirs);
  // Not retried: no second attempt, no FailedScheduling, and the scheduler's cache holds the
  // pod once, on the node it was really bound to.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(kube_->kube_writer()->stats().binding_conflicts, 1u);
  EXPECT_EQ(kube_->kube_writer()->stats().bindings, 0u);
  EXPECT_TRUE(Events("contested", "FailedScheduling").empty());
  EXPECT_TRUE(Events("contested", "Scheduled").empty());
}

TEST_F(KubeModeTest, BadConfigurationIsASpecificError) {
  // No kubeconfig file.
  {
    config::KubernetesConfig k;
    k.kubeconfig = (dir_.path() / "missing.kubeconfig").string();
    try {
      KubeMode mode(k);
      FAIL() << "a missing kubeconfig was accepted";
    } catch (const KubeconfigError& e) {
      EXPECT_THAT(e.what(), HasSubstr("missing.kubeconfig"));
    }
  }
  // A context the kubeconfig does not have.
  {
    config::KubernetesConfig k;
    k.kubeconfig = cp_->user_kubeconfig();
    k.context = "nope";
    try {
      KubeMode mode(k);
      FAIL() << "an unknown context was accepted";
    } catch (const KubeconfigError& e) {
      EXPECT_THAT(e.what(), HasSubstr("\"nope\""));
    }
  }
  // A CA that did not sign the server's certificate: the start fails naming TLS.
  {
    std::ifstream in(cp_->user_kubeconfig());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string key = "certificate-authority-data: ";
    const size_t at = text.find(key);
    ASSERT_NE(at, std::string::npos);
    const size_t end = text.find('\n', at);
    // Another CA: the client certificate's own bytes are not a CA for the server.
    const std::string other = dir_.path() / "other.kubeconfig";
    const size_t cert_at = text.find("client-certificate-data: ");
    ASSERT_NE(cert_at, std::string::npos);
    const size_t cert_end = text.find('\n', cert_at);
    const std::string cert = text.substr(cert_at + 25, cert_end - cert_at - 25);
    std::ofstream(other) << text.substr(0, at) << key << cert << text.substr(end);
    const std::filesystem::path file = dir_.path() / "wrong-ca.toml";
    std::string config = Config();
    config.replace(config.find(cp_->user_kubeconfig()), cp_->user_kubeconfig().size(), other);
    std::ofstream(file) << config;
    config::HostConfig parsed = config::LoadConfigFile(file);
    parsed.kubernetes->sync_timeout = std::chrono::seconds(3);
    api::ServiceHost host(parsed, framework::testing::PluginDir(), file);
    host.SetClusterSource(std::make_unique<KubeMode>(*parsed.kubernetes));
    try {
      host.Start();
      FAIL() << "a wrong CA was accepted";
    } catch (const api::ServiceHostError& e) {
      EXPECT_THAT(e.what(), HasSubstr("certificate verify failed"));
    }
  }
}

TEST_F(KubeModeTest, ForbiddenBindingIsReportedAndTheHostNotReady) {
  AddNode(ns_ + "-a", "4", "8Gi");
  // Take kube-scheduler's role away; give back only what reading the cluster needs.
  const ControlPlane::Result roles = cp_->Kubectl({"get", "clusterrolebindings", "-o", "json"});
  ASSERT_EQ(roles.exit_code, 0);
  std::vector<std::string> removed;
  const Json bindings = Json::parse(roles.out);
  for (const Json& b : bindings["items"]) {
    for (const Json& s : b.value("subjects", Json::array())) {
      if (s.value("name", "") == cp_->user() &&
          b["roleRef"].value("name", "") == "system:kube-scheduler") {
        removed.push_back(b.dump());
        Kubectl({"delete", "clusterrolebinding", b["metadata"].value("name", "")});
      }
    }
  }
  ASSERT_FALSE(removed.empty());
  Kubectl({"create", "clusterrole", ns_ + "-read", "--verb=get,list,watch",
           "--resource=pods,nodes,namespaces,poddisruptionbudgets.policy,"
           "priorityclasses.scheduling.k8s.io"});
  Kubectl({"create", "clusterrolebinding", ns_ + "-read", "--clusterrole=" + ns_ + "-read",
           "--user=" + cp_->user()});
  auto restore = [&] {
    cp_->Kubectl({"delete", "clusterrolebinding", ns_ + "-read"});
    cp_->Kubectl({"delete", "clusterrole", ns_ + "-read"});
    for (const std::string& b : removed) {
      Json binding = Json::parse(b);
      binding["metadata"] = {{"name", binding["metadata"]["name"]}};
      cp_->Kubectl({"create", "-f", "-"}, binding.dump());
    }
  };
  // RBAC changes take effect at once on the API server, no sleep needed.
  StartHost(Config());
  Create(Pod("denied", "1"));
  ASSERT_TRUE(WaitFor([&] { return kube_->kube_writer()->stats().binding_errors > 0; }));
  std::string why;
  EXPECT_FALSE(kube_->Healthy(&why));
  EXPECT_THAT(why, HasSubstr("403"));
  EXPECT_EQ(Readyz(host_->metrics_port()), 503);
  EXPECT_EQ(NodeOf("denied"), "");
  // Retried with backoff, not in a hot loop: at most a few attempts a second.
  const uint64_t before = kube_->kube_writer()->stats().binding_errors;
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_LE(kube_->kube_writer()->stats().binding_errors - before, 6u);
  restore();
  ASSERT_TRUE(WaitFor([&] { return NodeOf("denied") == ns_ + "-a"; }, std::chrono::seconds(30)));
  EXPECT_TRUE(kube_->Healthy(&why)) << why;
  EXPECT_EQ(Readyz(host_->metrics_port()), 200);
}

// config/kubernetes/: the API server accepts the manifests as shipped, the service account they
// create may do what scheduling needs, and the ConfigMap's config is one schedhost reads.
TEST_F(KubeModeTest, ShippedManifestsGiveTheServiceAccountWhatSchedulingNeeds) {
  const std::filesystem::path dir =
      std::filesystem::path(std::getenv("SCHEDHOST_SOURCE_DIR")) / "config" / "kubernetes";
  Kubectl({"apply", "-f", (dir / "rbac.yaml").string()});
  Kubectl({"apply", "--dry-run=server", "-f", (dir / "deployment.yaml").string()});
  const std::string as = "--as=system:serviceaccount:kube-system:schedhost";
  for (const std::vector<std::string>& what :
       {std::vector<std::string>{"create", "pods", "--subresource=binding"},
        {"patch", "pods", "--subresource=status"},
        {"delete", "pods"},
        {"watch", "nodes"},
        {"list", "poddisruptionbudgets.policy"},
        {"create", "events.events.k8s.io"},
        {"update", "leases.coordination.k8s.io/schedhost", "-n", "kube-system"}}) {
    std::vector<std::string> args = {"auth", "can-i", as};
    args.insert(args.end(), what.begin(), what.end());
    const ControlPlane::Result r = cp_->Kubectl(args);
    EXPECT_EQ(r.exit_code, 0) << ::testing::PrintToString(what) << ": " << r.out << r.err;
  }
  // The config inside the ConfigMap parses and asks for in-cluster credentials.
  // kubectl prints one JSON object per document.
  std::istringstream objects(Kubectl(
      {"create", "--dry-run=client", "-o", "json", "-f", (dir / "deployment.yaml").string()}));
  std::string toml;
  for (Json item; objects >> std::ws && !objects.eof() && (objects >> item);) {
    if (item.value("kind", "") == "ConfigMap") toml = item["data"].value("schedhost.toml", "");
  }
  ASSERT_FALSE(toml.empty());
  const config::HostConfig parsed = config::ParseConfig(toml, "deployment.yaml", "/");
  ASSERT_TRUE(parsed.kubernetes.has_value());
  EXPECT_TRUE(parsed.kubernetes->in_cluster);
  ASSERT_EQ(parsed.profiles.size(), 1u);
  EXPECT_EQ(parsed.profiles[0].name, "schedhost");
}

// --- leader election -------------------------------------------------------------------------

// Every pod of the test's namespace that is bound, by name, and its node.
std::map<std::string, std::string> BoundPods(const ControlPlane& cp, const std::string& ns) {
  std::map<std::string, std::string> out;
  const ControlPlane::Result r = cp.Kubectl({"get", "pods", "-n", ns, "-o", "json"});
  if (r.exit_code != 0) return out;
  for (const Json& p : Json::parse(r.out).value("items", Json::array())) {
    const std::string node = p["spec"].value("nodeName", "");
    if (!node.empty()) out[p["metadata"].value("name", "")] = node;
  }
  return out;
}

TEST_F(KubeModeTest, OneReplicaLeadsAndTheStandbyTakesOverWhenItStops) {
  AddNode(ns_ + "-a", "8", "16Gi");
  auto a = StartReplica("replica-a");
  ASSERT_TRUE(WaitFor([&] { return a->leading(); }, std::chrono::seconds(10)));
  auto b = StartReplica("replica-b");
  ASSERT_TRUE(WaitFor([&] { return b->host->leadership().holder == "replica-a"; }));
  EXPECT_FALSE(b->leading());
  // Both are ready (a standby's mirror is warm); /readyz says which one leads.
  const auto [a_status, a_body] = HttpGet(a->host->metrics_port(), "/readyz");
  EXPECT_EQ(a_status, 200);
  EXPECT_THAT(a_body, HasSubstr("ok: leading (lease kube-system/schedhost, identity replica-a)"));
  const auto [b_status, b_body] = HttpGet(b->host->metrics_port(), "/readyz");
  EXPECT_EQ(b_status, 200);
  EXPECT_THAT(b_body, HasSubstr("ok: standby (lease kube-system/schedhost held by replica-a"));
  Json lease = Lease();
  EXPECT_EQ(lease.value("holderIdentity", ""), "replica-a");
  EXPECT_EQ(lease.value("leaseDurationSeconds", 0), 5);
  EXPECT_EQ(lease.value("leaseTransitions", -1), 0);

  for (int i = 0; i < 5; ++i) Create(Pod("p" + std::to_string(i), "100m"));
  ASSERT_TRUE(WaitFor([&] { return BoundPods(*cp_, ns_).size() == 5; }));
  EXPECT_EQ(a->writes().bindings, 5u);
  EXPECT_EQ(b->writes().bindings, 0u);
  // The standby saw every pod and its binding through its own watch.
  auto mirrored_bound = [&](Replica& r, const std::string& prefix, int n) {
    for (int i = 0; i < n; ++i) {
      auto pod = r.host->store().Get<model::Pod>(ns_, prefix + std::to_string(i));
      if (pod == nullptr || pod->node_name().empty()) return false;
    }
    return true;
  };
  ASSERT_TRUE(WaitFor([&] { return mirrored_bound(*b, "p", 5); }));
  EXPECT_EQ(b->host->scheduler()->Stats().queue.active, 0u);

  // The leader stops as on SIGTERM: the lease is released, and the standby takes over at its
  // next retry instead of waiting for the lease to run out.
  const auto stopped = std::chrono::steady_clock::now();
  a->host->Stop();
  lease = Lease();
  EXPECT_EQ(lease.value("holderIdentity", ""), "");
  EXPECT_EQ(lease.value("leaseDurationSeconds", 0), 1);
  ASSERT_TRUE(WaitFor([&] { return b->leading(); }, std::chrono::seconds(10)));
  EXPECT_LT(std::chrono::steady_clock::now() - stopped, kLeaseDuration);
  EXPECT_EQ(a->lost_at.load(), 0) << "a replica that stops has not lost its lease";
  lease = Lease();
  EXPECT_EQ(lease.value("holderIdentity", ""), "replica-b");
  EXPECT_EQ(lease.value("leaseTransitions", -1), 1);

  for (int i = 0; i < 5; ++i) Create(Pod("q" + std::to_string(i), "100m"));
  ASSERT_TRUE(WaitFor([&] { return BoundPods(*cp_, ns_).size() == 10; }));
  EXPECT_EQ(b->writes().bindings, 5u);
  ASSERT_TRUE(WaitFor([&] { return mirrored_bound(*b, "q", 5); }));

  // schedctl stats reads the same through Admin.Stats.
  auto admin = v1::Admin::NewStub(grpc::CreateChannel(
      "unix://" + (b->dir.path() / "s.sock").string(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  v1::StatsResponse stats;
  ASSERT_TRUE(admin->Stats(&context, v1::StatsRequest(), &stats).ok());
  ASSERT_TRUE(stats.has_leader_election());
  EXPECT_TRUE(stats.leader_election().leading());
  EXPECT_EQ(stats.leader_election().identity(), "replica-b");
  EXPECT_EQ(stats.leader_election().holder(), "replica-b");
  EXPECT_EQ(stats.leader_election().lease(), "kube-system/schedhost");
  EXPECT_EQ(stats.leader_election().transitions(), 1);
}

// delay_cache_until_active: the standby reads nothing but the Lease, is not ready, and lists the
// cluster once it leads.
TEST_F(KubeModeTest, AStandbyThatDelaysItsMirrorListsTheClusterOnlyOnceElected) {
  AddNode(ns_ + "-a", "8", "16Gi");
  auto a = StartReplica("replica-a");
  ASSERT_TRUE(WaitFor([&] { return a->leading(); }, std::chrono::seconds(10)));
  auto b = StartReplica("replica-b", "", "delay_cache_until_active = true\n");
  for (int i = 0; i < 3; ++i) Create(Pod("p" + std::to_string(i), "100m"));
  ASSERT_TRUE(WaitFor([&] { return BoundPods(*cp_, ns_).size() == 3; }));
  ASSERT_TRUE(WaitFor([&] { return b->host->leadership().holder == "replica-a"; }));
  EXPECT_EQ(b->host->store().Get<model::Node>("", ns_ + "-a"), nullptr);
  EXPECT_EQ(b->host->store().Get<model::Pod>(ns_, "p0"), nullptr);
  const auto [status, body] = HttpGet(b->host->metrics_port(), "/readyz");
  EXPECT_EQ(status, 503);
  EXPECT_THAT(body, HasSubstr("delay_cache_until_active"));

  a->host->Stop();
  ASSERT_TRUE(WaitFor([&] { return b->leading(); }, std::chrono::seconds(10)));
  ASSERT_TRUE(WaitFor([&] {
    auto pod = b->host->store().Get<model::Pod>(ns_, "p2");
    return pod != nullptr && pod->node_name() == ns_ + "-a";
  }));
  Create(Pod("q0", "100m"));
  ASSERT_TRUE(WaitFor([&] { return NodeOf("q0") == ns_ + "-a"; }));
  EXPECT_EQ(b->writes().bindings, 1u);
  EXPECT_EQ(HttpGet(b->host->metrics_port(), "/readyz").first, 200);
}

// The leader reaches the API server through a proxy the test cuts: it stops writing before the
// standby may take the lease, and writes nothing when the network comes back.
TEST_F(KubeModeTest, ALeaderCutOffStopsWritingBeforeTheStandbyTakesOver) {
  AddNode(ns_ + "-a", "8", "16Gi");
  TcpProxy proxy(ApiServerPort());
  const std::filesystem::path proxied_file = ProxiedKubeconfig(proxy, dir_.path());

  auto a = StartReplica("replica-a", proxied_file.string());
  ASSERT_TRUE(WaitFor([&] { return a->leading(); }, std::chrono::seconds(10)));
  auto b = StartReplica("replica-b");
  ASSERT_TRUE(WaitFor([&] { return b->host->leadership().holder == "replica-a"; }));
  for (int i = 0; i < 3; ++i) Create(Pod("p" + std::to_string(i), "100m"));
  ASSERT_TRUE(WaitFor([&] { return BoundPods(*cp_, ns_).size() == 3; }));
  ASSERT_EQ(a->writes().bindings, 3u);

  proxy.Cut();
  // The leader's renewals go unanswered: at the renew deadline its writes stop and it says so.
  ASSERT_TRUE(WaitFor([&] { return a->lost_at.load() != 0; }, std::chrono::seconds(10)));
  EXPECT_FALSE(a->leading());
  ASSERT_TRUE(WaitFor([&] { return b->leading(); }, std::chrono::seconds(15)));
  // The standby took the lease only after the old leader's writes had stopped (both clocks are
  // this machine's): the new acquireTime is later than the end of the old term, by the lease
  // duration less the renew deadline at least.
  const Json lease = Lease();
  EXPECT_EQ(lease.value("holderIdentity", ""), "replica-b");
  const std::optional<int64_t> acquired = model::ParseRfc3339(lease.value("acquireTime", ""));
  ASSERT_TRUE(acquired.has_value()) << lease.dump();
  const int64_t term_end = a->host->leadership().term_end_unix_ns;
  ASSERT_GT(term_end, 0);
  EXPECT_GE(*acquired - term_end, std::chrono::nanoseconds(std::chrono::seconds(1)).count())
      << "the standby acquired " << (*acquired - term_end) / 1'000'000
      << " ms after the old leader's term ended";
  for (int i = 0; i < 3; ++i) Create(Pod("q" + std::to_string(i), "100m"));
  ASSERT_TRUE(WaitFor([&] { return BoundPods(*cp_, ns_).size() == 6; }));

  // The network comes back while nobody leads: the old leader's mirror catches up and its loop
  // still runs, but its fence holds. Pods stay pending; it sends no binding, status or event.
  proxy.Heal();
  b->host->Stop();
  for (int i = 0; i < 3; ++i) Create(Pod("r" + std::to_string(i), "100m"));
  ASSERT_TRUE(WaitFor(
      [&] {
        return a->host->store().Get<model::Pod>(ns_, "r2") != nullptr &&
               a->writes().not_leading > 0;
      },
      std::chrono::seconds(30)))
      << "the old leader's mirror never saw the new pods, or it never tried them";
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_EQ(BoundPods(*cp_, ns_).size(), 6u);
  EXPECT_EQ(a->writes().bindings, 3u);
  EXPECT_EQ(b->writes().bindings, 3u);
  EXPECT_EQ(Events("r0", "FailedScheduling").size(), 0u);
  EXPECT_FALSE(a->leading());
}

// SpawnSchedhostd runs the built schedhostd with `config`, its output in `log`; returns its pid.
pid_t SpawnSchedhostd(const std::filesystem::path& config, const std::filesystem::path& log) {
  const std::string exe = (framework::testing::BinDir() / "schedhostd").string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Nothing of the test's but stdio: an inherited socket (a proxy's) would keep connections
    // open that the test closes.
    ::close_range(3, ~0U, 0);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    const std::string plugins = framework::testing::PluginDir();
    ::execl(exe.c_str(), "schedhostd", "--config", config.c_str(), "--log-level", "info",
            "--plugin-dir", plugins.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

// ExitStatus waits up to `timeout` for `pid` and returns its exit status (-1: killed by a
// signal, -2: still running, then killed).
int ExitStatus(pid_t pid, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -2;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Replicas as processes: the leader is killed with SIGKILL while pods arrive, and a standby
// binds them; then a leader frozen past its lease (SIGSTOP) is replaced, and when it thaws it
// finds its lease lost and exits 1 without writing. Every pod is bound once.
TEST_F(KubeModeTest, KilledOrFrozenLeaderIsReplacedAndNoPodIsBoundTwice) {
  if (!std::filesystem::exists(framework::testing::BinDir() / "schedhostd")) {
    GTEST_SKIP() << "schedhostd is not built in " << framework::testing::BinDir();
  }
  AddNode(ns_ + "-a", "64", "128Gi");
  std::vector<std::unique_ptr<framework::testing::TempDir>> dirs;
  std::vector<pid_t> spawned;
  // Whatever happens, no replica outlives the test.
  struct Reap {
    std::vector<pid_t>& pids;
    ~Reap() {
      for (const pid_t pid : pids) {
        if (::waitpid(pid, nullptr, WNOHANG) != 0) continue;  // gone, or reaped already
        ::kill(pid, SIGCONT);
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
      }
    }
  } reap{spawned};
  auto spawn = [&](const std::string& identity) {
    dirs.push_back(std::make_unique<framework::testing::TempDir>());
    const std::filesystem::path dir = dirs.back()->path();
    const std::string election = Election(identity);
    std::ofstream(dir / "schedhost.toml") << ConfigIn(dir, cp_->user_kubeconfig(), election);
    spawned.push_back(SpawnSchedhostd(dir / "schedhost.toml", dir / "schedhostd.log"));
    return spawned.back();
  };
  auto holder = [&] {
    const Json lease = Lease();
    return lease.is_null() ? std::string() : lease.value("holderIdentity", "");
  };
  const pid_t a = spawn("proc-a");
  ASSERT_TRUE(WaitFor([&] { return holder() == "proc-a"; }, std::chrono::seconds(60)));
  const pid_t b = spawn("proc-b");
  for (int i = 0; i < 5; ++i) Create(Pod("p" + std::to_string(i), "100m"));
  ASSERT_TRUE(WaitFor([&] { return BoundPods(*cp_, ns_).size() == 5; }));

  // kill -9 of the leader while pods arrive.
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(a, SIGKILL), 0);
  EXPECT_EQ(ExitStatus(a, std::chrono::seconds(10)), -1);
  for (int i = 0; i < 5; ++i) Create(Pod("q" + std::to_string(i), "100m"));
  std::chrono::steady_clock::duration first_binding{};
  ASSERT_TRUE(WaitFor(
      [&] {
        const auto bound = BoundPods(*cp_, ns_);
        if (first_binding == decltype(first_binding){} && bound.contains("q0")) {
          first_binding = std::chrono::steady_clock::now() - killed;
        }
        return bound.size() == 10;
      },
      std::chrono::seconds(30)));
  EXPECT_EQ(holder(), "proc-b");
  // The lease runs out 5 s after the last renewal the standby saw; it retries every 0.5-1.1 s.
  EXPECT_LT(first_binding, std::chrono::seconds(15));
  std::cout << "failover after kill -9: "
            << std::chrono::duration_cast<std::chrono::milliseconds>(first_binding).count()
            << " ms from the kill to the new leader's first binding\n";

  // A new standby, then the leader frozen for longer than its lease.
  const pid_t c = spawn("proc-c");
  // Once it campaigns, its mirror is synced (the log says so).
  ASSERT_TRUE(WaitFor([&] {
    std::ifstream log(dirs.back()->path() / "schedhostd.log");
    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    return text.find("campaigns for lease") != std::string::npos;
  }));
  ASSERT_EQ(::kill(b, SIGSTOP), 0);
  ASSERT_TRUE(WaitFor([&] { return holder() == "proc-c"; }, std::chrono::seconds(30)));
  for (int i = 0; i < 5; ++i) Create(Pod("r" + std::to_string(i), "100m"));
  ASSERT_TRUE(WaitFor([&] { return BoundPods(*cp_, ns_).size() == 15; }, std::chrono::seconds(30)));
  ASSERT_EQ(::kill(b, SIGCONT), 0);
  // It thaws, finds its renew deadline long past, stops and exits 1, as kube-scheduler does.
  EXPECT_EQ(ExitStatus(b, std::chrono::seconds(30)), 1);
  EXPECT_EQ(holder(), "proc-c");

  // Every pod bound once: one Scheduled event each, none from a replica that had lost the lease.
  for (const auto& [pod, node] : BoundPods(*cp_, ns_)) {
    EXPECT_EQ(node, ns_ + "-a");
    EXPECT_EQ(Events(pod, "Scheduled").size(), 1u) << pod;
  }
  ::kill(c, SIGTERM);
  EXPECT_EQ(ExitStatus(c, std::chrono::seconds(30)), 0);
  EXPECT_EQ(holder(), "") << "SIGTERM releases the lease";
}

// The soak: three replicas as processes, each reaching the API server through a proxy of its
// own, while pods arrive without pause; each round takes down whoever leads with one fault, in
// turn: kill -9, SIGSTOP past the lease, a network cut past the lease, SIGTERM, and a
// kube-apiserver restart. The fallen replica is started again as a standby. At the end every pod
// is bound, once (one Scheduled event each, and no replica that lost its lease wrote after it),
// and the last leader's mirror lists what the API server lists. SCHEDHOST_SOAK_ROUNDS sets the
// rounds (5 here; scripts/soak.sh runs more); figures go to stdout.
TEST_F(KubeModeTest, SoakFailoversUnderFaultsLoseAndDoubleBindNothing) {
  if (!std::filesystem::exists(framework::testing::BinDir() / "schedhostd")) {
    GTEST_SKIP() << "schedhostd is not built in " << framework::testing::BinDir();
  }
  const char* rounds_env = std::getenv("SCHEDHOST_SOAK_ROUNDS");
  const int rounds = rounds_env != nullptr ? std::max(1, std::atoi(rounds_env)) : 5;
  // About 12 pods a second arrive; a round lasts about 10 s.
  const int nodes = 2 + rounds * 130 / 100;
  for (int i = 0; i < nodes; ++i) AddNode(ns_ + "-n" + std::to_string(i), "64", "256Gi");

  struct Slot {
    std::unique_ptr<framework::testing::TempDir> dir;
    std::unique_ptr<TcpProxy> proxy;
    pid_t pid = -1;
    std::string identity;
    int generation = 0;
  };
  std::vector<Slot> slots(3);
  auto start = [&](size_t i) {
    Slot& slot = slots[i];
    if (!slot.dir) {
      slot.dir = std::make_unique<framework::testing::TempDir>();
      slot.proxy = std::make_unique<TcpProxy>(ApiServerPort());
      ProxiedKubeconfig(*slot.proxy, slot.dir->path());
    }
    slot.identity = "r" + std::to_string(i) + "-g" + std::to_string(++slot.generation);
    const std::filesystem::path dir = slot.dir->path();
    std::ofstream(dir / "schedhost.toml")
        << ConfigIn(dir, (dir / "proxied.kubeconfig").string(), Election(slot.identity));
    slot.pid = SpawnSchedhostd(dir / "schedhost.toml", dir / "schedhostd.log");
  };
  auto holder = [&] {
    const Json lease = Lease();
    return lease.is_null() ? std::string() : lease.value("holderIdentity", "");
  };
  auto leader_slot = [&]() -> int {
    const std::string h = holder();
    for (size_t i = 0; i < slots.size(); ++i) {
      if (!h.empty() && slots[i].identity == h) return static_cast<int>(i);
    }
    return -1;
  };
  for (size_t i = 0; i < slots.size(); ++i) start(i);
  // On failure, the end of every replica's log says what it was doing; whatever happened, no
  // replica outlives the test.
  struct DumpLogs {
    std::vector<Slot>& slots;
    ~DumpLogs() {
      if (::testing::Test::HasFailure()) Dump();
      for (const Slot& slot : slots) {
        if (slot.pid > 0 && ::waitpid(slot.pid, nullptr, WNOHANG) == 0) {
          ::kill(slot.pid, SIGCONT);
          ::kill(slot.pid, SIGKILL);
          ::waitpid(slot.pid, nullptr, 0);
        }
      }
    }
    void Dump() const {
      for (const Slot& slot : slots) {
        if (!slot.dir) continue;
        std::ifstream log(slot.dir->path() / "schedhostd.log");
        std::vector<std::string> lines;
        for (std::string line; std::getline(log, line);) lines.push_back(line);
        const framework::testing::CommandResult stats = framework::testing::RunCommand(
            (framework::testing::BinDir() / "schedctl").string() + " --server unix://" +
            (slot.dir->path() / "s.sock").string() + " stats 2>&1");
        std::cout << "--- " << slot.identity << " (pid " << slot.pid << "): schedctl stats:\n"
                  << stats.output << "last lines of its log:\n";
        for (size_t i = lines.size() > 40 ? lines.size() - 40 : 0; i < lines.size(); ++i) {
          std::cout << lines[i] << "\n";
        }
      }
    }
  } dump_logs{slots};

  // Pods arrive in batches of six every half second, from a thread of their own.
  std::atomic<bool> arriving{true};
  std::atomic<int> created{0};
  std::atomic<int> create_failures{0};
  std::thread creator([&] {
    for (int batch = 0; arriving.load(); ++batch) {
      Json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", Json::array()}};
      for (int k = 0; k < 6; ++k) {
        list["items"].push_back(Pod("p" + std::to_string(batch) + "-" + std::to_string(k), "10m"));
      }
      if (cp_->Kubectl({"create", "-f", "-"}, list.dump()).exit_code == 0) {
        created += 6;
      } else {
        ++create_failures;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  });
  struct Stop {
    std::atomic<bool>& flag;
    std::thread& t;
    ~Stop() {
      flag = false;
      if (t.joinable()) t.join();
    }
  } stop_creator{arriving, creator};

  const char* kFaults[] = {"kill -9", "SIGSTOP past the lease", "network cut past the lease",
                           "SIGTERM", "kube-apiserver restart"};
  std::vector<int64_t> takeover_ms;
  int failovers = 0;
  for (int round = 0; round < rounds; ++round) {
    int leader = -1;
    ASSERT_TRUE(WaitFor([&] { return (leader = leader_slot()) >= 0; }, std::chrono::seconds(60)))
        << "round " << round << ": nobody leads";
    std::this_thread::sleep_for(std::chrono::seconds(2));  // it binds for a while
    Slot& slot = slots[static_cast<size_t>(leader)];
    const std::string fallen = slot.identity;
    const int fault = round % 5;
    const auto injected = std::chrono::steady_clock::now();
    int expected_exit = 1;
    switch (fault) {
      case 0:
        ::kill(slot.pid, SIGKILL);
        expected_exit = -1;
        break;
      case 1:
        ::kill(slot.pid, SIGSTOP);
        break;
      case 2:
        slot.proxy->Cut();
        break;
      case 3:
        ::kill(slot.pid, SIGTERM);
        expected_exit = 0;
        break;
      case 4:
        cp_->RestartApiServer();
        break;
    }
    if (fault == 4) {
      // A restart longer than the renew deadline ends the leader's term (it exits 1 and is
      // started again); a shorter one does not. Either way pods are bound again after it.
      const size_t bound_before = BoundPods(*cp_, ns_).size();
      ASSERT_TRUE(WaitFor([&] { return BoundPods(*cp_, ns_).size() > bound_before; },
                          std::chrono::seconds(60)))
          << "round " << round << ": nothing bound after the kube-apiserver restart; "
          << created.load() << " pods created (" << create_failures.load()
          << " batches failed), " << BoundPods(*cp_, ns_).size() << " bound, lease holder \""
          << holder() << "\"";
      int status = 0;
      const bool exited = ::waitpid(slot.pid, &status, WNOHANG) == slot.pid;
      if (exited) {
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << "status " << status;
        start(static_cast<size_t>(leader));
        ++failovers;
      }
      std::cout << "round " << round << ": " << kFaults[fault] << ", the leader "
                << (exited ? "lost its lease and exited 1" : "kept its lease") << "\n";
      continue;
    }
    // Somebody else leads and binds; the time is from the fault to the first pod bound after.
    const size_t bound_before = BoundPods(*cp_, ns_).size();
    ASSERT_TRUE(WaitFor(
        [&] {
          const std::string h = holder();
          return !h.empty() && h != fallen && BoundPods(*cp_, ns_).size() > bound_before;
        },
        std::chrono::seconds(30)))
        << "round " << round << " (" << kFaults[fault] << "): no new leader bound anything";
    takeover_ms.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - injected)
                              .count());
    if (fault == 1) ::kill(slot.pid, SIGCONT);
    if (fault == 2) slot.proxy->Heal();
    EXPECT_EQ(ExitStatus(slot.pid, std::chrono::seconds(30)), expected_exit)
        << "round " << round << ": " << kFaults[fault] << " of " << fallen;
    ++failovers;
    std::cout << "round " << round << ": " << kFaults[fault] << " of " << fallen << ", "
              << takeover_ms.back() << " ms to the next leader's first binding\n";
    start(static_cast<size_t>(leader));
  }
  arriving = false;
  creator.join();

  // Every pod bound, once.
  ASSERT_TRUE(WaitFor([&] { return BoundPods(*cp_, ns_).size() == static_cast<size_t>(created); },
                      std::chrono::seconds(60)))
      << BoundPods(*cp_, ns_).size() << " of " << created.load() << " bound";
  const ControlPlane::Result events =
      cp_->Kubectl({"get", "events.v1.events.k8s.io", "-n", ns_, "-o", "json"});
  ASSERT_EQ(events.exit_code, 0);
  std::map<std::string, int> scheduled;
  for (const Json& e : Json::parse(events.out).value("items", Json::array())) {
    if (e.value("reason", "") == "Scheduled") ++scheduled[e["regarding"].value("name", "")];
  }
  int doubles = 0;
  for (const auto& [pod, count] : scheduled) doubles += count > 1 ? 1 : 0;
  EXPECT_EQ(doubles, 0);
  // The leader's mirror lists what the API server lists.
  const int leader = leader_slot();
  ASSERT_GE(leader, 0);
  const framework::testing::CommandResult mirror = framework::testing::RunCommand(
      (framework::testing::BinDir() / "schedctl").string() + " --server unix://" +
      (slots[static_cast<size_t>(leader)].dir->path() / "s.sock").string() +
      " get pods -n " + ns_ + " -o json");
  ASSERT_EQ(mirror.exit_code, 0) << mirror.output;
  std::map<std::string, std::string> mirrored;
  for (const Json& p : Json::parse(mirror.output).value("items", Json::array())) {
    mirrored[p["metadata"].value("name", "")] = p["spec"].value("nodeName", "");
  }
  EXPECT_EQ(mirrored, BoundPods(*cp_, ns_));

  std::sort(takeover_ms.begin(), takeover_ms.end());
  std::cout << "soak: " << rounds << " faults injected, " << failovers << " failovers survived, "
            << created.load() << " pods created and bound, " << doubles
            << " bound twice, " << created.load() - static_cast<int>(BoundPods(*cp_, ns_).size())
            << " lost";
  if (!takeover_ms.empty()) {
    std::cout << "; takeover ms min/median/max " << takeover_ms.front() << "/"
              << takeover_ms[takeover_ms.size() / 2] << "/" << takeover_ms.back();
  }
  std::cout << "\n";
  for (Slot& slot : slots) {
    ::kill(slot.pid, SIGTERM);
    ExitStatus(slot.pid, std::chrono::seconds(30));
  }
}

// A watch whose connection goes silent without closing (the proxy stalls it) is taken for dead
// after watch_idle_timeout and replaced: the mirror catches up.
TEST_F(KubeModeTest, AWatchThatHangsWithoutClosingIsReplaced) {
  AddNode(ns_ + "-a", "8", "16Gi");
  TcpProxy proxy(ApiServerPort());
  const std::filesystem::path proxied_file = ProxiedKubeconfig(proxy, dir_.path());
  StartHost(ConfigIn(dir_.path(), proxied_file.string(),
                     "watch_idle_timeout = \"3s\"\n"
                     "[kubernetes.leader_election]\nenabled = false\n"));
  Create(Pod("before", "100m"));
  ASSERT_TRUE(WaitFor([&] { return NodeOf("before") == ns_ + "-a"; }));
  const uint64_t watches = kube_->reflectors().back()->stats().watches;  // pods
  proxy.Stall();  // every open connection goes silent; new ones pass
  Create(Pod("after", "100m"));
  // Pooled connections were stalled too: a request that takes one waits for its 30 s timeout
  // and is then sent again on a new connection.
  ASSERT_TRUE(WaitFor([&] { return host_->store().Get<model::Pod>(ns_, "after") != nullptr; },
                      std::chrono::seconds(60)))
      << "the mirror never saw the pod created after the stall";
  EXPECT_GT(kube_->reflectors().back()->stats().watches, watches);
  ASSERT_TRUE(WaitFor([&] { return NodeOf("after") == ns_ + "-a"; }, std::chrono::seconds(90)));
}

}  // namespace
}  // namespace schedhost::kube
