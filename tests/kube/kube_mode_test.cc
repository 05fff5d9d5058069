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
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "host/api/service_host.h"
#include "host/config/host_config.h"
#include "host/framework/testing/fake_plugin.h"
#include "host/framework/testing/harness.h"
#include "host/framework/testing/temp_dir.h"
#include "host/kube/kube_mode.h"
#include "schedhost/v1/cluster.grpc.pb.h"
#include "tests/kube/control_plane.h"

namespace schedhost::kube {
namespace {

using ::schedhost::testing::ControlPlane;
using ::testing::HasSubstr;
using Json = nlohmann::json;

// Readyz returns the HTTP status of GET /readyz on the host's metrics port.
int Readyz(uint16_t port) {
  namespace beast = boost::beast;
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket socket(ioc);
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  beast::http::request<beast::http::empty_body> request{beast::http::verb::get, "/readyz", 11};
  request.set(beast::http::field::host, "127.0.0.1");
  beast::http::write(socket, request);
  beast::flat_buffer buffer;
  beast::http::response<beast::http::string_body> response;
  beast::http::read(socket, buffer, response);
  return static_cast<int>(response.result_int());
}

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
    return "[api]\nlisten = \"unix://" + (dir_.path() / "s.sock").string() +
           "\"\n[metrics]\nlisten = \"127.0.0.1:0\"\n[host]\nstate_dir = \"" +
           (dir_.path() / "state").string() + "\"\npod_initial_backoff = \"100ms\"\n" +
           "pod_max_backoff = \"1s\"\n[kubernetes]\nkubeconfig = \"" + cp_->user_kubeconfig() +
           "\"\nsync_timeout = \"20s\"\n" + kubernetes_extra + profiles;
  }

  // StartHost runs schedhost in Kubernetes mode with `config_text`.
  void StartHost(const std::string& config_text,
                 const std::vector<const schedhost_plugin_descriptor*>& in_process = {}) {
    const std::filesystem::path file = dir_.path() / "schedhost.toml";
    std::ofstream(file) << config_text;
    config::HostConfig config = config::LoadConfigFile(file);
    auto kube = std::make_unique<KubeMode>(*config.kubernetes);
    kube_ = kube.get();
    host_ = std::make_unique<api::ServiceHost>(std::move(config),
                                               framework::testing::PluginDir(), file);
    for (const auto* d : in_process) host_->RegisterInProcess(d);
    host_->SetClusterSource(std::move(kube));
    host_->Start();
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
  StartHost(Config());
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

}  // namespace
}  // namespace schedhost::kube
