// The HTTP endpoints end to end: a ServiceHost with metrics on an ephemeral port schedules pods,
// then a raw-socket HTTP client scrapes /metrics and probes /healthz, /readyz, unknown paths,
// wrong methods and garbage; HttpServer alone (503, keep-alive, a route that throws); the
// schedhostd binary fed by schedctl, scraped, then stopped with pods in flight; and the web UI's
// JSON API and the pages on [ui] listen.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "host/api/http_server.h"
#include "host/api/service_host.h"
#include "host/config/host_config.h"
#include "host/framework/testing/harness.h"
#include "host/framework/testing/temp_dir.h"
#include "host/model/decode.h"
#include "tests/integration/schedctl_fixture.h"

namespace schedhost::api {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr const char* kCluster = R"(
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: default}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: default}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
)";

// Connect opens a TCP connection to 127.0.0.1:port (-1 on failure).
int Connect(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{.tv_sec = 10, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

void SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the server may close on garbage before reading it all
    sent += static_cast<size_t>(n);
  }
}

// ReadAll reads until the server closes the connection.
std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// Raw sends `request` as is and returns everything the server answers before closing.
std::string Raw(uint16_t port, const std::string& request) {
  int fd = Connect(port);
  if (fd < 0) return "<connect failed>";
  SendAll(fd, request);
  std::string out = ReadAll(fd);
  ::close(fd);
  return out;
}

struct Reply {
  int status = 0;
  std::string headers;
  std::string body;
};

Reply Request(uint16_t port, const std::string& method, const std::string& path) {
  const std::string raw =
      Raw(port, method + " " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
  Reply r;
  const size_t end = raw.find("\r\n\r\n");
  if (!raw.starts_with("HTTP/1.1 ") || end == std::string::npos) return r;
  r.status = std::atoi(raw.c_str() + 9);
  r.headers = raw.substr(0, end);
  r.body = raw.substr(end + 4);
  return r;
}

// Value returns the value of the sample line starting with `series` (name and labels), or -1.
double Value(const std::string& text, const std::string& series) {
  const std::string prefix = series + " ";
  for (size_t pos = 0; pos < text.size();) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string_view line(text.data() + pos, eol - pos);
    if (line.starts_with(prefix)) return std::stod(std::string(line.substr(prefix.size())));
    pos = eol + 1;
  }
  return -1;
}

TEST(MetricsHttp, ServiceHostServesMetricsHealthAndSurvivesGarbage) {
  const framework::testing::TempDir temp;
  const std::filesystem::path& dir = temp.path();
  const std::string toml = "[host]\nstate_dir = \"" + (dir / "state").string() +
                           "\"\n[api]\nlisten = \"unix://" + (dir / "s.sock").string() +
                           "\"\n[metrics]\nlisten = \"127.0.0.1:0\"\n";
  ServiceHost host(config::ParseConfig(toml, "test.toml", {}), framework::testing::PluginDir());
  host.Start();
  const uint16_t port = host.metrics_port();
  ASSERT_NE(port, 0);

  const std::string scheduled =
      R"(scheduler_schedule_attempts_total{result="scheduled",profile="default-scheduler"})";
  const double before = std::max(0.0, Value(Request(port, "GET", "/metrics").body, scheduled));
  for (const model::Object& o : model::DecodeManifests(kCluster, "cluster.yaml")) {
    host.store().CreateObject(o);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  auto bound = [&](const char* name) {
    auto pod = host.store().Get<model::Pod>("default", name);
    return pod && !pod->node_name().empty();
  };
  while (!(bound("a") && bound("b")) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(bound("a") && bound("b"));

  // The binding cycle counts the attempt right after PostBind; give it a moment.
  Reply m;
  for (int i = 0; i < 100; ++i) {
    m = Request(port, "GET", "/metrics");
    if (Value(m.body, scheduled) - before >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(m.status, 200);
  EXPECT_THAT(m.headers, HasSubstr("Content-Type: text/plain; version=0.0.4"));
  EXPECT_EQ(Value(m.body, scheduled) - before, 2) << m.body;
  for (const char* queue : {"active", "backoff", "unschedulable", "gated"}) {
    EXPECT_EQ(Value(m.body, std::string("scheduler_pending_pods{queue=\"") + queue + "\"}"), 0)
        << queue << "\n"
        << m.body;
  }
  EXPECT_GE(Value(m.body,
                  "scheduler_scheduling_attempt_duration_seconds_count{result="
                  "\"scheduled\",profile=\"default-scheduler\"}"),
            2);
  EXPECT_GE(Value(m.body,
                  "scheduler_framework_extension_point_duration_seconds_count{"
                  "extension_point=\"Bind\",status=\"Success\",profile="
                  "\"default-scheduler\"}"),
            2);
  EXPECT_GE(Value(m.body, "scheduler_queue_incoming_pods_total{queue=\"active\",event=\"PodAdd\"}"),
            2);
  EXPECT_GT(Value(m.body, "schedhost_plugin_libraries_loaded"), 0);
  EXPECT_THAT(m.body, HasSubstr("# TYPE scheduler_plugin_execution_duration_seconds histogram\n"));
  EXPECT_THAT(m.body, HasSubstr("# TYPE scheduler_preemption_victims histogram\n"));
  EXPECT_THAT(m.body, HasSubstr("scheduler_preemption_attempts_total 0\n"));
  EXPECT_TRUE(std::regex_search(
      m.body, std::regex(R"(scheduler_scheduling_attempt_duration_seconds_bucket\{result=)"
                         R"("scheduled",profile="default-scheduler",le="\+Inf"\} \d+)")));

  Reply health = Request(port, "GET", "/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "ok");
  Reply ready = Request(port, "GET", "/readyz");
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(ready.body, "ok");
  EXPECT_EQ(Request(port, "GET", "/nope").status, 404);
  EXPECT_EQ(Request(port, "GET", "/metrics?x=1").status, 200);
  Reply post = Request(port, "POST", "/metrics");
  EXPECT_EQ(post.status, 405);
  EXPECT_THAT(post.headers, HasSubstr("Allow: GET"));

  // Garbage and oversized requests close their own connection, answered with nothing.
  EXPECT_EQ(Raw(port, std::string("\x00\x01\x02 garbage\r\n\r\n", 16)), "");
  EXPECT_EQ(Raw(port, "GET /metrics HTTP/1.1\r\nX: " + std::string(64 * 1024, 'a') + "\r\n\r\n"),
            "");
  EXPECT_EQ(Raw(port, "GET /healthz HTTP/1.1\r\nContent-Length: 999999\r\n\r\n"), "");
  {
    int half_open = Connect(port);  // a client that connects and never sends
    ASSERT_GE(half_open, 0);
    EXPECT_EQ(Request(port, "GET", "/healthz").status, 200);  // does not block others
    ::close(half_open);
  }
  EXPECT_EQ(Request(port, "GET", "/metrics").status, 200);

  // A second host whose metrics port is taken refuses to start and says which setting.
  const std::string clash_toml = "[host]\nstate_dir = \"" + (dir / "state2").string() +
                                 "\"\n[api]\nlisten = \"unix://" + (dir / "t.sock").string() +
                                 "\"\n[metrics]\nlisten = \"127.0.0.1:" + std::to_string(port) +
                                 "\"\n";
  ServiceHost clash(config::ParseConfig(clash_toml, "clash.toml", {}),
                    framework::testing::PluginDir());
  try {
    clash.Start();
    ADD_FAILURE() << "expected Start to fail";
  } catch (const ServiceHostError& e) {
    EXPECT_THAT(e.what(), HasSubstr("metrics.listen \"127.0.0.1:" + std::to_string(port) + "\""));
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "t.sock"));
  EXPECT_EQ(Request(port, "GET", "/readyz").status, 200);  // the first host is unaffected

  host.Stop();
  EXPECT_EQ(Connect(port), -1);  // the endpoint is gone
}

TEST(MetricsHttp, ReadyzIs503UntilReadyAndKeepAliveServesSeveralRequests) {
  std::atomic<bool> ready{false};
  HttpServer server("metrics", "127.0.0.1:0",
                    MetricsRoute({.metrics = [] { return std::string("m 1\n"); },
                                  .ready = [&](std::string*) { return ready.load(); }}));
  server.Start();
  const uint16_t port = server.port();
  ASSERT_NE(port, 0);
  Reply not_ready = Request(port, "GET", "/readyz");
  EXPECT_EQ(not_ready.status, 503);
  ready = true;
  EXPECT_EQ(Request(port, "GET", "/readyz").status, 200);

  int fd = Connect(port);
  ASSERT_GE(fd, 0);
  SendAll(fd,
          "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n"
          "Connection: close\r\n\r\n");
  const std::string both = ReadAll(fd);
  ::close(fd);
  EXPECT_THAT(both, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(both, HasSubstr("\r\n\r\nm 1\nHTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(both, HasSubstr("\r\n\r\nok"));

  // A second server cannot take a port in use, and says which address.
  HttpServer clash("metrics", "127.0.0.1:" + std::to_string(port), MetricsRoute({}));
  try {
    clash.Start();
    ADD_FAILURE() << "expected the bind to fail";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("metrics.listen \"127.0.0.1:" + std::to_string(port)));
  }
  server.Stop();
  server.Stop();  // idempotent
}

TEST(MetricsHttp, ARouteThatThrowsAnswers500AndTheServerGoesOn) {
  HttpServer server("ui", "127.0.0.1:0",
                    [](std::string_view path, std::string_view query) -> std::optional<HttpAnswer> {
                      if (path == "/boom") throw std::runtime_error("no such thing: " +
                                                                    std::string(query));
                      if (path == "/fine") return HttpAnswer{200, "application/json", "{}"};
                      return std::nullopt;
                    });
  server.Start();
  const uint16_t port = server.port();
  Reply boom = Request(port, "GET", "/boom?x=1");
  EXPECT_EQ(boom.status, 500);
  EXPECT_EQ(boom.body, "no such thing: x=1\n");
  Reply fine = Request(port, "GET", "/fine");
  EXPECT_EQ(fine.status, 200);
  EXPECT_THAT(fine.headers, HasSubstr("Content-Type: application/json"));
  EXPECT_EQ(fine.body, "{}");
  EXPECT_EQ(Request(port, "GET", "/other").status, 404);
  EXPECT_EQ(Request(port, "DELETE", "/fine").status, 405);
}

// schedhostd as installed would run it: schedctl applies the demo cluster, /metrics on the
// configured port counts the bindings and the gated pod, /healthz and /readyz answer; then
// SIGTERM arrives while two hundred more pods are being scheduled, and it exits 0.
TEST(MetricsHttp, SchedhostdServesMetricsAndExitsZeroWithPodsInFlight) {
  namespace t = schedhost::testing;
  if (!std::filesystem::exists(t::BinDir() / "schedhostd") ||
      !std::filesystem::exists(t::BinDir() / "schedctl")) {
    GTEST_SKIP() << "schedhostd and schedctl are not built in " << t::BinDir();
  }
  t::TempDir dir;
  const std::filesystem::path socket = dir.path() / "s.sock";
  const std::string server = "unix://" + socket.string();
  const auto port = static_cast<uint16_t>(t::FreePort());
  ASSERT_NE(port, 0);
  const std::filesystem::path config = dir.path() / "schedhost.toml";
  std::ofstream(config) << "[host]\nstate_dir = \"state\"\n[api]\nlisten = \"" << server
                        << "\"\n[metrics]\nlisten = \"127.0.0.1:" << port << "\"\n";
  const pid_t pid = t::StartSchedhostd(config);
  ASSERT_GT(pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (Request(port, "GET", "/readyz").status != 200 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(Request(port, "GET", "/readyz").status, 200);
  Reply healthz = Request(port, "GET", "/healthz");
  EXPECT_EQ(healthz.status, 200);
  EXPECT_EQ(healthz.body, "ok");

  t::Result apply =
      t::RunSchedctl(dir, {"--server", server, "apply", "-f", t::DemoCluster().string()});
  ASSERT_EQ(apply.exit_code, 0) << apply.err;
  // Eight demo pods bind whatever the order (postgres-0 and redis-0 come bound).
  const std::string scheduled =
      R"(scheduler_schedule_attempts_total{result="scheduled",profile="default-scheduler"})";
  std::string text;
  while (Value(text, scheduled) < 8 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    text = Request(port, "GET", "/metrics").body;
  }
  EXPECT_GE(Value(text, scheduled), 8) << text;
  EXPECT_EQ(Value(text, R"(scheduler_pending_pods{queue="gated"})"), 1) << text;
  // 17 pods: 2 come bound, gated-job waits at PreEnqueue, the other 14 enter activeQ.
  const std::string incoming =
      R"(scheduler_queue_incoming_pods_total{queue="active",event="PodAdd"})";
  EXPECT_EQ(Value(text, incoming), 14) << text;
  EXPECT_GT(Value(text, "schedhost_plugin_libraries_loaded"), 0) << text;
  EXPECT_GE(Value(text, "scheduler_preemption_attempts_total"), 1) << text;  // huge at least
  EXPECT_THAT(text, HasSubstr("# TYPE scheduler_scheduling_attempt_duration_seconds histogram"));
  EXPECT_THAT(text, HasSubstr("scheduler_framework_extension_point_duration_seconds_bucket{"));

  // Two hundred more pods, and SIGTERM while the scheduler works through them.
  std::ofstream more(dir.path() / "more.yaml");
  for (int i = 0; i < 200; ++i) {
    more << "---\napiVersion: v1\nkind: Pod\nmetadata: {name: more-" << i
         << "}\nspec: {containers: [{name: c, image: x, resources: {requests: {cpu: 10m}}}]}\n";
  }
  more.close();
  t::Result apply_more =
      t::RunSchedctl(dir, {"--server", server, "apply", "-f", (dir.path() / "more.yaml").string()});
  ASSERT_EQ(apply_more.exit_code, 0) << apply_more.err;
  t::StopSchedhostd(pid);  // expects exit status 0
  EXPECT_FALSE(std::filesystem::exists(socket));
  EXPECT_EQ(Request(port, "GET", "/healthz").status, 0);  // nothing listens any more
}

}  // namespace
// The web UI's JSON API on [ui] listen: the Admin messages as JSON, an explanation paged and
// filtered, and clear errors (bad parameters, unknown pods and paths, the pages not built).
namespace {

// UiToml is a config for a ServiceHost in `dir` with the UI and metrics on free ports.
std::string UiToml(const std::filesystem::path& dir) {
  return "[host]\nstate_dir = \"" + (dir / "state").string() + "\"\n[api]\nlisten = \"unix://" +
         (dir / "s.sock").string() +
         "\"\n[metrics]\nlisten = \"127.0.0.1:0\"\n[ui]\nlisten = \"127.0.0.1:0\"\n";
}

// kBigPod asks for more cpu than any node of kCluster has.
constexpr const char* kBigPod = R"(
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: default}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "8"}}}]}
)";

// CreateClusterAndBigPod stores kCluster's nodes and pods, then kBigPod.
void CreateClusterAndBigPod(ServiceHost& host) {
  for (const char* text : {kCluster, kBigPod}) {
    for (const model::Object& o : model::DecodeManifests(text, "cluster.yaml")) {
      host.store().CreateObject(o);
    }
  }
}

// GetJson GETs `target` from the UI on `port`: the reply and its body as JSON (discarded when
// it is not JSON).
std::pair<Reply, nlohmann::json> GetJson(uint16_t port, const std::string& target) {
  Reply r = Request(port, "GET", target);
  nlohmann::json body = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  return {r, body};
}

}  // namespace

TEST(UiApi, ServesTheAdminApiAsJsonPagedAndFiltered) {
  framework::testing::TempDir temp;
  ServiceHost host(config::ParseConfig(UiToml(temp.path()), "test.toml", {}),
                   framework::testing::PluginDir());
  host.Start();
  const uint16_t port = host.ui_port();
  ASSERT_NE(port, 0);
  ASSERT_NE(port, host.metrics_port());
  CreateClusterAndBigPod(host);
  auto get = [&](const std::string& target) { return GetJson(port, target); };
  // Wait until a and b are bound and big has been tried.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  nlohmann::json explained;
  while (std::chrono::steady_clock::now() < deadline) {
    auto [r, body] = get("/api/v1/explain?namespace=default&name=big");
    const bool bound = host.store().Get<model::Pod>("default", "a")->node_name() != "" &&
                       host.store().Get<model::Pod>("default", "b")->node_name() != "";
    if (r.status == 200 && bound && !body["explanation"].value("message", "").empty()) {
      explained = body;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_FALSE(explained.is_null()) << "big was never explained";
  EXPECT_THAT(explained["explanation"].value("message", ""),
              HasSubstr("0/2 nodes are available: 2 Insufficient cpu"));
  EXPECT_EQ(explained["explanation"].value("node", "x"), "");  // zero values are printed
  EXPECT_EQ(explained.value("nodes_total", -1), 2);
  ASSERT_EQ(explained["explanation"]["nodes"].size(), 2u);
  bool fit_rejected = false;
  for (const auto& verdict : explained["explanation"]["nodes"][0]["plugins"]) {
    if (verdict.value("plugin", "") == "NodeResourcesFit") {
      // 8 cpu is above the nodes' allocatable: no preemption could help.
      fit_rejected = verdict.value("filter_code", "") == "UnschedulableAndUnresolvable" &&
                     verdict.value("filter_reason", "") == "Insufficient cpu";
    }
  }
  EXPECT_TRUE(fit_rejected) << explained.dump();

  // Paged, filtered, percent-decoded.
  auto [page, paged] = get("/api/v1/explain?name=big&limit=1&offset=1");
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_EQ(paged["explanation"]["nodes"].size(), 1u);
  EXPECT_EQ(paged["explanation"]["nodes"][0]["node"], explained["explanation"]["nodes"][1]["node"]);
  EXPECT_EQ(paged.value("nodes_total", -1), 2);
  EXPECT_EQ(paged.value("offset", -1), 1);
  auto [one, only_n2] = get("/api/v1/explain?name=b%69g&node=n2");
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(only_n2.value("nodes_total", -1), 1);
  EXPECT_EQ(only_n2["explanation"]["nodes"][0].value("node", ""), "n2");
  EXPECT_EQ(get("/api/v1/explain?name=big&feasible=true").second.value("nodes_total", -1), 0);
  EXPECT_EQ(get("/api/v1/explain?name=big&feasible=false").second.value("nodes_total", -1), 2);

  // The Admin messages, field names as in admin.proto (64-bit integers as strings, as the
  // protobuf JSON mapping has them).
  auto [stats_reply, stats] = get("/api/v1/stats");
  ASSERT_EQ(stats_reply.status, 200);
  EXPECT_THAT(stats_reply.headers, HasSubstr("Content-Type: application/json"));
  EXPECT_EQ(stats.value("bound_pods", ""), "2");
  // big waits in one of the queues.
  EXPECT_EQ(std::stoi(stats.value("unschedulable_pods", "0")) +
                std::stoi(stats.value("backoff_pods", "0")) +
                std::stoi(stats.value("active_pods", "0")),
            1)
      << stats.dump();
  auto [profiles_reply, profiles] = get("/api/v1/profiles");
  ASSERT_EQ(profiles_reply.status, 200);
  EXPECT_EQ(profiles["profiles"][0].value("scheduler_name", ""), "default-scheduler");
  auto [plugins_reply, plugins] = get("/api/v1/plugins");
  ASSERT_EQ(plugins_reply.status, 200);
  bool fit_listed = false;
  for (const auto& p : plugins["plugins"]) {
    if (p.value("name", "") == "NodeResourcesFit") fit_listed = p.value("sha256", "").size() == 64;
  }
  EXPECT_TRUE(fit_listed) << plugins.dump();

  // Nodes, a page at a time, with what they offer and what the scheduler counts as requested.
  auto [nodes_reply, nodes] = get("/api/v1/nodes");
  ASSERT_EQ(nodes_reply.status, 200) << nodes_reply.body;
  EXPECT_EQ(nodes.value("nodes_total", -1), 2);
  ASSERT_EQ(nodes["nodes"].size(), 2u);
  int64_t requested_cpu = 0;
  size_t pods_on_nodes = 0;
  for (const auto& n : nodes["nodes"]) {
    EXPECT_EQ(n["allocatable"].value("cpu", int64_t{0}), 4000) << n.dump();  // millicores
    EXPECT_EQ(n["allocatable"].value("memory", int64_t{0}), int64_t{8} << 30) << n.dump();
    EXPECT_FALSE(n.value("unschedulable", true));
    EXPECT_TRUE(n["taints"].is_array() && n["taints"].empty());
    requested_cpu += n["requested"].value("cpu", int64_t{0});
    pods_on_nodes += n.value("pods", size_t{0});
  }
  EXPECT_EQ(requested_cpu, 2000);  // a and b, 1 cpu each; big is nowhere
  EXPECT_EQ(pods_on_nodes, 2u);
  auto [second_reply, second] = get("/api/v1/nodes?limit=1&offset=1");
  ASSERT_EQ(second["nodes"].size(), 1u);
  EXPECT_EQ(second["nodes"][0].value("name", ""), "n2");  // by name
  EXPECT_EQ(get("/api/v1/nodes?name=n1").second.value("nodes_total", -1), 1);
  EXPECT_EQ(get("/api/v1/nodes?limit=x").first.status, 400);

  // The queue: big waits, rejected by NodeResourcesFit, with its message.
  auto [queue_reply, queue] = get("/api/v1/queue");
  ASSERT_EQ(queue_reply.status, 200) << queue_reply.body;
  EXPECT_EQ(queue.value("pods_total", -1), 1);
  ASSERT_EQ(queue["pods"].size(), 1u);
  const auto& waiting = queue["pods"][0];
  EXPECT_EQ(waiting.value("name", ""), "big");
  EXPECT_THAT(waiting.value("where", ""), ::testing::AnyOf("unschedulable", "backoff"));
  EXPECT_GE(waiting.value("attempts", 0), 1);
  EXPECT_EQ(waiting["rejected_by"], nlohmann::json::array({"NodeResourcesFit"})) << queue.dump();
  EXPECT_THAT(waiting.value("message", ""), HasSubstr("2 Insufficient cpu"));
  EXPECT_TRUE(waiting["scheduling_gates"].empty());
  EXPECT_GE(waiting.value("backoff_left_ms", -1), 0);
  EXPECT_EQ(get("/api/v1/queue?where=active").second.value("pods_total", -1), 0);
  EXPECT_EQ(get("/api/v1/queue?name=default/b").second.value("pods_total", -1), 1);
  auto [bad_where, bad_where_body] = get("/api/v1/queue?where=somewhere");
  EXPECT_EQ(bad_where.status, 400);
  EXPECT_THAT(bad_where_body.value("message", ""), HasSubstr("\"somewhere\""));

  // Errors say what is wrong, as JSON.
  auto [missing, missing_body] = get("/api/v1/explain?namespace=default&name=nope");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing_body.value("code", ""), "NOT_FOUND");
  EXPECT_THAT(missing_body.value("message", ""), HasSubstr("nope"));
  auto [too_many, too_many_body] = get("/api/v1/explain?name=big&limit=5000");
  EXPECT_EQ(too_many.status, 400);
  EXPECT_EQ(too_many_body.value("message", ""),
            "limit must be a whole number from 0 to 1000, not \"5000\"");
  EXPECT_EQ(get("/api/v1/explain?name=big&feasible=maybe").first.status, 400);
  // A name that is not UTF-8: refused by Explain, and the message quoting it is still JSON.
  auto [not_utf8, not_utf8_body] = get("/api/v1/explain?name=%FF");
  EXPECT_EQ(not_utf8.status, 400);
  EXPECT_EQ(not_utf8_body.value("code", ""), "INVALID_ARGUMENT") << not_utf8.body;
  EXPECT_EQ(get("/api/v1/explain?namespace=default").first.status, 400);
  auto [root, root_body] = get("/");  // no pages directory was given
  EXPECT_EQ(root.status, 404);
  EXPECT_EQ(root_body.value("code", ""), "NOT_IMPLEMENTED");
  EXPECT_THAT(root_body.value("message", ""), HasSubstr("without the web UI's pages"));
  EXPECT_EQ(get("/api/v1/nope").first.status, 404);
  EXPECT_EQ(Request(port, "GET", "/metrics").status, 404);  // the metrics stay on their port
  EXPECT_EQ(Request(port, "POST", "/api/v1/stats").status, 405);
  host.Stop();
  EXPECT_EQ(Connect(port), -1);
}

TEST(UiApi, ServesPodsReloadsLatencyAndThePages) {
  framework::testing::TempDir temp;
  const std::filesystem::path& dir = temp.path();
  const std::string toml = UiToml(dir);
  const std::filesystem::path config_file = dir / "schedhost.toml";
  std::ofstream(config_file) << toml;
  // Pages of our own: what is served is what is in the directory, byte for byte.
  const std::filesystem::path pages = dir / "pages";
  std::filesystem::create_directories(pages);
  std::ofstream(pages / "index.html") << "<!doctype html><title>t</title><p>index</p>\n";
  std::ofstream(pages / "app.js") << "console.log('app');\n";
  ServiceHost host(config::LoadConfigFile(config_file), framework::testing::PluginDir(),
                   config_file);
  host.SetUiPages(pages);
  host.Start();
  const uint16_t port = host.ui_port();
  CreateClusterAndBigPod(host);
  auto get = [&](const std::string& target) { return GetJson(port, target); };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  nlohmann::json pods;
  while (std::chrono::steady_clock::now() < deadline) {
    pods = get("/api/v1/pods").second;
    if (pods["phases"].value("Scheduled", 0) == 2 &&
        !get("/api/v1/explain?name=big").second["explanation"].value("message", "").empty()) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Pods, by namespace/name, with their node and the scheduler's phase.
  EXPECT_EQ(pods["phases"],
            nlohmann::json({{"Scheduled", 2}, {"Pending", 1}, {"Terminating", 0}}))
      << pods.dump();
  ASSERT_EQ(pods.value("pods_total", -1), 3);
  EXPECT_EQ(pods["pods"][0].value("name", ""), "a");
  EXPECT_EQ(pods["pods"][1].value("name", ""), "b");
  EXPECT_EQ(pods["pods"][2].value("name", ""), "big");
  EXPECT_EQ(pods["pods"][2].value("phase", ""), "Pending");
  EXPECT_EQ(pods["pods"][2].value("node", "x"), "");
  const std::string node_of_a = pods["pods"][0].value("node", "");
  EXPECT_THAT(node_of_a, ::testing::AnyOf("n1", "n2"));
  auto on_node = get("/api/v1/pods?node=" + node_of_a).second;
  EXPECT_GE(on_node.value("pods_total", -1), 1);
  for (const auto& p : on_node["pods"]) EXPECT_EQ(p.value("node", ""), node_of_a);
  EXPECT_EQ(on_node["phases"], pods["phases"]);  // phases count every pod
  auto pending = get("/api/v1/pods?phase=Pending&limit=1").second;
  EXPECT_EQ(pending.value("pods_total", -1), 1);
  EXPECT_EQ(pending["pods"][0].value("name", ""), "big");
  EXPECT_EQ(get("/api/v1/pods?name=default/b").second.value("pods_total", -1), 2);  // b, big
  auto [bad_phase, bad_phase_body] = get("/api/v1/pods?phase=Running");
  EXPECT_EQ(bad_phase.status, 400);
  EXPECT_THAT(bad_phase_body.value("message", ""), HasSubstr("\"Running\""));

  // Attempt, extension point and plugin durations: counts and sums since the start.
  auto [latency_reply, latency] = get("/api/v1/latency");
  ASSERT_EQ(latency_reply.status, 200);
  int64_t scheduled = 0;
  double scheduled_seconds = 0;
  for (const auto& a : latency["attempts"]) {
    if (a.value("profile", "") == "default-scheduler" && a.value("result", "") == "scheduled") {
      scheduled = a.value("count", int64_t{0});
      scheduled_seconds = a.value("sum_seconds", 0.0);
    }
  }
  // The registry is the process's: other tests in it may have scheduled too.
  EXPECT_GE(scheduled, 2) << latency.dump();
  EXPECT_GT(scheduled_seconds, 0);
  bool prefilter_timed = false;  // Filter runs per node and is timed per plugin only
  for (const auto& e : latency["extension_points"]) {
    prefilter_timed |= e.value("extension_point", "") == "PreFilter" && e.value("count", 0) > 0;
  }
  EXPECT_TRUE(prefilter_timed) << latency.dump();
  EXPECT_TRUE(latency["plugins"].is_array());

  // Reloads, newest first, with the generation each left live.
  EXPECT_EQ(get("/api/v1/reloads").second, nlohmann::json({{"reloads", nlohmann::json::array()}}));
  ASSERT_TRUE(host.Reload().ok);
  std::ofstream(config_file) << toml << "[[profile]]\nname = 3\n";
  ASSERT_FALSE(host.Reload().ok);
  auto reloads = get("/api/v1/reloads").second["reloads"];
  ASSERT_EQ(reloads.size(), 2u) << reloads.dump();
  EXPECT_EQ(reloads[0].value("result", ""), "failure");
  EXPECT_THAT(reloads[0].value("message", ""), HasSubstr("reload refused"));
  EXPECT_EQ(reloads[0].value("generation", 0), 2);
  EXPECT_EQ(reloads[1].value("result", ""), "success");
  EXPECT_EQ(reloads[1].value("generation", 0), 2);
  EXPECT_GT(reloads[1].value("unix_seconds", int64_t{0}), 1'700'000'000);

  // The pages: read from the directory on each request, typed by name.
  Reply index = Request(port, "GET", "/");
  EXPECT_EQ(index.status, 200);
  EXPECT_THAT(index.headers, HasSubstr("Content-Type: text/html"));
  EXPECT_EQ(index.body, "<!doctype html><title>t</title><p>index</p>\n");
  EXPECT_EQ(Request(port, "GET", "/index.html").body, index.body);
  Reply js = Request(port, "GET", "/app.js");
  EXPECT_EQ(js.status, 200);
  EXPECT_THAT(js.headers, HasSubstr("Content-Type: text/javascript"));
  EXPECT_EQ(js.body, "console.log('app');\n");
  // app.css is not there: the answer names the file.
  auto [css, css_body] = get("/app.css");
  EXPECT_EQ(css.status, 404);
  EXPECT_EQ(css_body.value("code", ""), "NOT_IMPLEMENTED");
  EXPECT_THAT(css_body.value("message", ""), HasSubstr((pages / "app.css").string()));
  EXPECT_EQ(Request(port, "GET", "/../schedhost.toml").status, 404);
  EXPECT_EQ(Request(port, "GET", "/other.js").status, 404);
  host.Stop();
}

}  // namespace schedhost::api
