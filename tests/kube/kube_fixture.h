// The fixture of the Kubernetes-mode suites (kube_mode_test, kube_ha_test, kube_faults_test):
// a ServiceHost with a [kubernetes] table against a real control plane (upstream kube-apiserver
// and etcd, tests/kube/control_plane.h), started once per test process. Objects go in with
// kubectl as the admin; schedhost authenticates as the `schedhost` user, who holds exactly
// kube-scheduler's permissions. No kubelet runs: nodes are Node objects whose status the test
// patches, and the test deletes terminating pods as a kubelet would.
#pragma once

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
#include <optional>
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

namespace schedhost::kube::kubetest {

using ::schedhost::testing::ControlPlane;
using ::schedhost::testing::TcpProxy;
using Json = nlohmann::json;

// HttpGet returns the status and body of GET `path` on 127.0.0.1:`port` (the metrics endpoint).
inline std::pair<int, std::string> HttpGet(uint16_t port, const std::string& path) {
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
inline int Readyz(uint16_t port) { return HttpGet(port, "/readyz").first; }

// WaitFor polls `done` every 50 ms for up to `timeout`; true once it holds.
inline bool WaitFor(const std::function<bool()>& done,
             std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

// SpawnSchedhostd runs the built schedhostd with `config`, its output in `log`; returns its pid.
inline pid_t SpawnSchedhostd(const std::filesystem::path& config,
                             const std::filesystem::path& log);

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
    // No schedhostd of the test outlives it (a stopped one is woken to die).
    for (const pid_t pid : replica_pids_) {
      if (::waitpid(pid, nullptr, WNOHANG) != 0) continue;  // gone, or reaped already
      ::kill(pid, SIGCONT);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    replica_pids_.clear();
    replica_dirs_.clear();
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
  // SpawnReplica runs the built schedhostd (SpawnSchedhostd) as a replica named `identity`, in a
  // directory of its own (ReplicaDir), with the short election timings; returns its pid.
  // TearDown kills what is left of the test's replicas.
  pid_t SpawnReplica(const std::string& identity) {
    replica_dirs_.push_back(std::make_unique<framework::testing::TempDir>());
    const std::filesystem::path dir = replica_dirs_.back()->path();
    std::ofstream(dir / "schedhost.toml")
        << ConfigIn(dir, cp_->user_kubeconfig(), Election(identity));
    replica_pids_.push_back(SpawnSchedhostd(dir / "schedhost.toml", dir / "schedhostd.log"));
    return replica_pids_.back();
  }
  // ReplicaDir is the directory of the test's last spawned replica (its schedhostd.log).
  std::filesystem::path ReplicaDir() const { return replica_dirs_.back()->path(); }
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

  // SeriesCount is how many occurrences an Event object stands for: its series' count, else 1.
  static int SeriesCount(const Json& event) {
    return event.contains("series") ? event["series"].value("count", 1) : 1;
  }
  // ScheduledEvents counts the Scheduled events (events.k8s.io/v1) of the test's namespace per
  // pod, a series by its count: more than one for a pod means it was bound twice.
  std::map<std::string, int> ScheduledEvents() {
    const std::string out = Kubectl({"get", "events.v1.events.k8s.io", "-n", ns_, "-o", "json"});
    std::map<std::string, int> counts;
    const Json events = Json::parse(out, nullptr, /*allow_exceptions=*/false);
    if (!events.is_object()) return counts;
    for (const Json& e : events.value("items", Json::array())) {
      if (e.value("reason", "") == "Scheduled") {
        counts[e["regarding"].value("name", "")] += SeriesCount(e);
      }
    }
    return counts;
  }
  // PodList is `count` copies of `pod` named `prefix`0, `prefix`1, ... as one List, for one
  // kubectl create.
  static Json PodList(const std::string& prefix, int count, const Json& pod) {
    Json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", Json::array()}};
    for (int i = 0; i < count; ++i) {
      Json p = pod;
      p["metadata"]["name"] = prefix + std::to_string(i);
      list["items"].push_back(std::move(p));
    }
    return list;
  }

  // MirroredPods is every pod of the test's namespace in the host's mirror, by name, and its
  // node ("" when pending): to compare with what the API server lists.
  std::map<std::string, std::string> MirroredPods() {
    std::map<std::string, std::string> out;
    for (const auto& p : host_->store().List<model::Pod>()) {
      if (p->namespace_name() == ns_) out[std::string(p->name())] = std::string(p->node_name());
    }
    return out;
  }

  // One control plane per test process (ctest runs each test as a process of its own).
  inline static std::unique_ptr<ControlPlane> cp_;
  framework::testing::TempDir dir_;
  // An in-process plugin a test registers: declared before host_, so it outlives the host.
  framework::testing::FakePlugin plugin_;
  std::string ns_;
  std::unique_ptr<api::ServiceHost> host_;
  KubeMode* kube_ = nullptr;
  std::vector<std::unique_ptr<framework::testing::TempDir>> replica_dirs_;
  std::vector<pid_t> replica_pids_;
};

// Every pod of the test's namespace as the API server lists it, by name, and its node ("" while
// pending); nullopt when the list fails (the API server restarting, say).
inline std::optional<std::map<std::string, std::string>> ListedPods(const ControlPlane& cp,
                                                                    const std::string& ns) {
  const ControlPlane::Result r = cp.Kubectl({"get", "pods", "-n", ns, "-o", "json"});
  if (r.exit_code != 0) return std::nullopt;
  const Json list = Json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  if (!list.is_object()) return std::nullopt;
  std::map<std::string, std::string> out;
  for (const Json& p : list.value("items", Json::array())) {
    out[p["metadata"].value("name", "")] = p["spec"].value("nodeName", "");
  }
  return out;
}

// Every pod of the test's namespace that is bound, by name, and its node.
inline std::map<std::string, std::string> BoundPods(const ControlPlane& cp, const std::string& ns) {
  std::map<std::string, std::string> out = ListedPods(cp, ns).value_or(decltype(out){});
  std::erase_if(out, [](const auto& entry) { return entry.second.empty(); });
  return out;
}

// SpawnLogged runs `argv` (argv[0] the program's path) with stdout and stderr appended to
// `log`, and nothing of the test's open but stdio (an inherited socket, a proxy's, would keep
// connections open that the test closes); returns its pid.
inline pid_t SpawnLogged(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close_range(3, ~0U, 0);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

inline pid_t SpawnSchedhostd(const std::filesystem::path& config,
                             const std::filesystem::path& log) {
  return SpawnLogged({(framework::testing::BinDir() / "schedhostd").string(), "--config",
                      config.string(), "--log-level", "info", "--plugin-dir",
                      framework::testing::PluginDir()},
                     log);
}

// ExitStatus waits up to `timeout` for `pid` and returns its exit status (-1: killed by a
// signal, -2: still running, then killed).
inline int ExitStatus(pid_t pid, std::chrono::seconds timeout) {
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

}  // namespace schedhost::kube::kubetest
