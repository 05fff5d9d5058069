// schedctl as a client of schedhostd, both binaries run as subprocesses: schedhostd on a
// temporary Unix socket, schedctl applying the demo cluster, waiting for the bindings, reading
// them back as tables, JSON and YAML, describing and deleting a pod, re-applying, refusing a
// bad manifest before sending anything, and failing clearly without a server. The Admin
// service is not implemented on this branch's server yet: its commands must say so and exit 1.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using ::testing::AllOf;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

fs::path BinDir() { return fs::path(std::getenv("SCHEDHOST_PLUGIN_DIR")).parent_path() / "bin"; }
fs::path DemoCluster() {
  return fs::path(std::getenv("SCHEDHOST_SOURCE_DIR")) / "config/examples/demo-cluster.yaml";
}

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Result is one finished schedctl run.
struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
  double seconds = 0;
};

// TempDir is a fresh directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "schedctl-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// RunSchedctl runs schedctl with `args` (stdout and stderr through files, so neither pipe can
// fill), `stdin_file` as its input when given, and SCHEDHOST_SERVER set to `server_env` unless
// empty.
Result RunSchedctl(const TempDir& dir, const std::vector<std::string>& args,
                   const std::string& server_env = "", const std::string& stdin_file = "") {
  const fs::path out = dir.path() / "out.txt";
  const fs::path err = dir.path() / "err.txt";
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int i = ::open(stdin_file.empty() ? "/dev/null" : stdin_file.c_str(), O_RDONLY);
    if (o < 0 || e < 0 || i < 0) ::_exit(126);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::dup2(i, 0);
    if (server_env.empty()) {
      ::unsetenv("SCHEDHOST_SERVER");
    } else {
      ::setenv("SCHEDHOST_SERVER", server_env.c_str(), 1);
    }
    const std::string exe = (BinDir() / "schedctl").string();
    std::vector<char*> argv = {const_cast<char*>(exe.c_str())};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  Result r;
  int status = 0;
  if (pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.out = Slurp(out);
  r.err = Slurp(err);
  return r;
}

// StartSchedhostd runs schedhostd with `config` (quiet logs); returns its pid.
pid_t StartSchedhostd(const fs::path& config) {
  pid_t pid = ::fork();
  if (pid == 0) {
    const std::string exe = (BinDir() / "schedhostd").string();
    ::execl(exe.c_str(), "schedhostd", "--config", config.c_str(), "--log-level", "warn",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

// StopSchedhostd sends SIGTERM and expects a clean exit 0.
void StopSchedhostd(pid_t pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "schedhostd status " << status;
}

// SchedctlTest runs schedhostd on a temporary socket for each test.
class SchedctlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(BinDir() / "schedctl") || !fs::exists(BinDir() / "schedhostd")) {
      GTEST_SKIP() << "schedctl and schedhostd are not built in " << BinDir();
    }
    socket_ = dir_.path() / "run" / "schedhost.sock";
    server_ = "unix://" + socket_.string();
    const fs::path config = dir_.path() / "schedhost.toml";
    std::ofstream(config) << "[api]\nlisten = \"" << server_
                          << "\"\n[metrics]\nlisten = \"127.0.0.1:0\"\n";
    pid_ = StartSchedhostd(config);
    ASSERT_GE(pid_, 0);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!fs::exists(socket_) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_TRUE(fs::exists(socket_)) << "schedhostd did not create " << socket_;
  }

  void TearDown() override { StopSchedhostd(pid_); }

  // Ctl runs schedctl against this test's server (--server first, as a global flag).
  Result Ctl(std::vector<std::string> args) {
    args.insert(args.begin(), {"--server", server_});
    return RunSchedctl(dir_, args);
  }

  // PodsJson lists every pod as `get pods -A -o json` prints it.
  nlohmann::json PodsJson() {
    Result r = Ctl({"get", "pods", "-A", "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  }

  // WaitForNodes polls until every pod in `names` has spec.nodeName (30 s at most) and returns
  // the node per pod name.
  std::map<std::string, std::string> WaitForNodes(const std::set<std::string>& names) {
    std::map<std::string, std::string> nodes;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      nodes.clear();
      nlohmann::json list = PodsJson();
      if (list.is_object()) {
        for (const auto& pod : list["items"]) {
          const std::string node = pod["spec"].value("nodeName", "");
          if (!node.empty()) nodes[pod["metadata"]["name"].get<std::string>()] = node;
        }
      }
      bool all = true;
      for (const std::string& n : names) all = all && nodes.count(n) == 1;
      if (all) return nodes;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "pods were not all bound within 30 s";
    return nodes;
  }

  TempDir dir_;
  fs::path socket_;
  std::string server_;
  pid_t pid_ = -1;
};

// Pods of the demo cluster that bind whatever order the live scheduler sees them in.
const std::set<std::string> kBindable = {"postgres-0", "redis-0",   "web-1",     "web-2",
                                         "web-3",      "training",  "ssd-cache", "zone-b-worker",
                                         "postgres-1", "ingress-1", "ingress-2"};

TEST_F(SchedctlTest, AppliesTheDemoClusterAndReadsItBack) {
  Result apply = Ctl({"apply", "-f", DemoCluster().string()});
  ASSERT_EQ(apply.exit_code, 0) << apply.err;
  const std::vector<std::string> lines = Lines(apply.out);
  ASSERT_EQ(lines.size(), 24u) << apply.out;  // 2 PriorityClasses, 6 nodes, 16 pods
  EXPECT_EQ(lines[0], "priorityclass.scheduling.k8s.io/high created");
  EXPECT_EQ(lines[2], "node/zone-a-1 created");
  EXPECT_EQ(lines[8], "pod/postgres-0 created");
  EXPECT_EQ(lines[11], "pod/web-1 created");
  EXPECT_EQ(lines[23], "pod/gated-job created");
  for (const std::string& line : lines) EXPECT_THAT(line, ContainsRegex(" created$"));

  const std::map<std::string, std::string> nodes = WaitForNodes(kBindable);
  EXPECT_EQ(nodes.at("training"), "zone-c-gpu");
  EXPECT_EQ(nodes.at("ssd-cache"), "zone-c-ssd");
  EXPECT_EQ(nodes.at("zone-b-worker"), "zone-b-1");
  for (const char* never : {"huge", "gated-job", "ingress-3"}) EXPECT_EQ(nodes.count(never), 0u);

  Result get_nodes = Ctl({"get", "nodes"});
  ASSERT_EQ(get_nodes.exit_code, 0) << get_nodes.err;
  std::vector<std::string> node_lines = Lines(get_nodes.out);
  ASSERT_EQ(node_lines.size(), 7u) << get_nodes.out;
  EXPECT_THAT(node_lines[0], ContainsRegex("^NAME +STATUS +AGE$"));
  EXPECT_THAT(get_nodes.out, ContainsRegex("\nzone-a-1 +Ready +[0-9]+s\n"));
  EXPECT_THAT(get_nodes.out, ContainsRegex("\nzone-b-2 +Ready,SchedulingDisabled +[0-9]+s\n"));

  Result wide_nodes = Ctl({"get", "nodes", "-o", "wide"});
  EXPECT_THAT(wide_nodes.out, ContainsRegex("\nzone-c-gpu +Ready +[0-9]+s +8 +32Gi +110 +"
                                            "dedicated=gpu:NoSchedule\n"));

  // Default namespace only: the web pods, api-critical, batch-report, ssd-cache, ...
  Result wide = Ctl({"get", "pods", "-o", "wide"});
  ASSERT_EQ(wide.exit_code, 0) << wide.err;
  EXPECT_THAT(Lines(wide.out)[0],
              ContainsRegex("^NAME +STATUS +NODE +NOMINATED NODE +AGE +PRIORITY +SCHEDULER$"));
  EXPECT_THAT(wide.out, ContainsRegex("\nssd-cache +Scheduled +zone-c-ssd +<none> +[0-9]+s +0 +"
                                      "default-scheduler\n"));
  EXPECT_THAT(wide.out, ContainsRegex("\ngated-job +SchedulingGated +<none> +<none> "));
  EXPECT_THAT(wide.out, Not(HasSubstr("postgres-0")));  // namespace data

  Result web = Ctl({"get", "pods", "-l", "app=web"});
  ASSERT_EQ(web.exit_code, 0) << web.err;
  std::vector<std::string> web_lines = Lines(web.out);
  ASSERT_EQ(web_lines.size(), 4u) << web.out;
  for (int i = 1; i <= 3; ++i) {
    EXPECT_THAT(web_lines[i], ContainsRegex("^web-" + std::to_string(i) + " +Scheduled +zone-"));
  }

  Result all = Ctl({"get", "pods", "-A", "-l", "app notin (web,api)", "-o", "name"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_THAT(all.out, HasSubstr("pod/postgres-0\n"));
  EXPECT_THAT(all.out, Not(HasSubstr("pod/web-1\n")));

  Result data = Ctl({"get", "pods", "-n", "data"});
  EXPECT_THAT(data.out, ContainsRegex("^NAME +STATUS +NODE +NOMINATED NODE +AGE\npostgres-0 +"
                                      "Scheduled +zone-a-1 "));

  Result yaml = Ctl({"get", "pod", "web-1", "-o", "yaml"});
  ASSERT_EQ(yaml.exit_code, 0) << yaml.err;
  EXPECT_THAT(yaml.out, AllOf(HasSubstr("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-1\n"),
                              HasSubstr("  nodeName: " + nodes.at("web-1") + "\n"),
                              HasSubstr("        cpu: 500m\n")));

  Result one = Ctl({"get", "priorityclass", "high", "-o", "json"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  auto pc = nlohmann::json::parse(one.out);
  EXPECT_EQ(pc["kind"], "PriorityClass");
  EXPECT_EQ(pc["value"], 100000);
  Result pcs = Ctl({"get", "priorityclasses"});
  EXPECT_THAT(pcs.out, ContainsRegex("\nhigh +100000 +false +[0-9]+s\n"));
  EXPECT_THAT(pcs.out, ContainsRegex("\nlow +-100 +false +[0-9]+s\n"));

  Result no_pdbs = Ctl({"get", "pdbs"});
  EXPECT_EQ(no_pdbs.exit_code, 0);
  EXPECT_EQ(no_pdbs.out, "");
  EXPECT_EQ(no_pdbs.err, "No resources found in default namespace.\n");

  // describe: the object part; Explain is not served yet, so attempts are unavailable.
  Result describe = Ctl({"describe", "pod", "web-1"});
  ASSERT_EQ(describe.exit_code, 0) << describe.err;
  EXPECT_THAT(describe.out,
              AllOf(ContainsRegex("^Name: +web-1\nNamespace: +default\nPriority: +0\n"),
                    ContainsRegex("\nNode: +" + nodes.at("web-1") + "\n"),
                    ContainsRegex("\nLabels: +app=web\n"), ContainsRegex("\nStatus: +Scheduled\n"),
                    HasSubstr("Attempts:"), HasSubstr("Admin/Explain"),
                    HasSubstr("      cpu:     500m\n")));
  Result describe_ns = Ctl({"describe", "pod", "training", "-n", "ml"});
  EXPECT_THAT(describe_ns.out, ContainsRegex("\nTolerations: +dedicated=gpu:NoSchedule\n"));
  Result describe_missing = Ctl({"describe", "pod", "nope"});
  EXPECT_EQ(describe_missing.exit_code, 1);
  EXPECT_EQ(describe_missing.err, "Error from server (NotFound): pods \"nope\" not found\n");

  // delete, then the pod is gone.
  Result del = Ctl({"delete", "pod", "web-1"});
  ASSERT_EQ(del.exit_code, 0) << del.err;
  EXPECT_EQ(del.out, "pod \"web-1\" deleted\n");
  Result gone = Ctl({"get", "pod", "web-1"});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_EQ(gone.err, "Error from server (NotFound): pods \"web-1\" not found\n");
  Result del_again = Ctl({"delete", "pod", "web-1"});
  EXPECT_EQ(del_again.exit_code, 1);
  EXPECT_EQ(del_again.err, "Error from server (NotFound): pods \"web-1\" not found\n");
  Result del_pc = Ctl({"delete", "pc", "low"});
  EXPECT_EQ(del_pc.out, "priorityclass.scheduling.k8s.io \"low\" deleted\n");

  // Re-apply: the deleted objects come back, the rest is unchanged (the scheduler's nodeName and
  // nominations are the server's, so they do not count as a change).
  Result again = Ctl({"apply", "-f", DemoCluster().string()});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const std::vector<std::string> again_lines = Lines(again.out);
  ASSERT_EQ(again_lines.size(), 24u);
  EXPECT_EQ(again_lines[1], "priorityclass.scheduling.k8s.io/low created");
  EXPECT_EQ(again_lines[2], "node/zone-a-1 unchanged");
  EXPECT_EQ(again_lines[8], "pod/postgres-0 unchanged");
  EXPECT_EQ(again_lines[11], "pod/web-1 created");
  EXPECT_EQ(again_lines[21], "pod/ingress-3 unchanged");

  // A changed label is `configured`; the manifest comes on stdin.
  const fs::path relabel = dir_.path() / "relabel.yaml";
  std::ofstream(relabel) << "apiVersion: v1\nkind: Node\nmetadata:\n  name: zone-c-ssd\n"
                            "  labels: {disk: nvme}\nstatus:\n"
                            "  allocatable: {cpu: \"2\", memory: 4Gi, pods: \"110\"}\n";
  Result configured = RunSchedctl(dir_, {"apply", "-f", "-"}, server_, relabel.string());
  EXPECT_EQ(configured.exit_code, 0) << configured.err;
  EXPECT_EQ(configured.out, "node/zone-c-ssd configured\n");
  Result ssd = Ctl({"get", "nodes", "-l", "disk=nvme", "-o", "name"});
  EXPECT_EQ(ssd.out, "node/zone-c-ssd\n");
}

TEST_F(SchedctlTest, WatchPrintsEventsUntilCountOrTimeout) {
  ASSERT_EQ(Ctl({"apply", "-f", DemoCluster().string()}).exit_code, 0);
  WaitForNodes({"training"});
  Result watch = Ctl({"watch", "pods", "-n", "ml", "--count", "2"});
  ASSERT_EQ(watch.exit_code, 0) << watch.err;
  const std::vector<std::string> lines = Lines(watch.out);
  ASSERT_EQ(lines.size(), 2u) << watch.out;
  for (const std::string& line : lines) {
    EXPECT_THAT(line, ContainsRegex("^(ADDED|MODIFIED) pod/(training|huge) namespace=ml rv=[0-9]+ "
                                    "node=[a-z0-9-]* nominated=[a-z0-9-]*$"));
  }

  // List, then watch from the list's version: only later changes; --timeout ends the stream
  // with exit 0.
  WaitForNodes(kBindable);
  Result list = Ctl({"get", "pods", "-n", "edge", "-o", "json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const std::string list_rv =
      nlohmann::json::parse(list.out)["metadata"]["resourceVersion"].get<std::string>();
  ASSERT_FALSE(list_rv.empty());
  Result del = Ctl({"delete", "pod", "ingress-3", "-n", "edge"});
  ASSERT_EQ(del.exit_code, 0) << del.err;
  Result tail = Ctl({"watch", "pods", "-A", "--resource-version", list_rv, "--timeout", "1"});
  EXPECT_EQ(tail.exit_code, 0) << tail.err;
  EXPECT_LT(tail.seconds, 10);
  const std::vector<std::string> events = Lines(tail.out);
  ASSERT_FALSE(events.empty());
  bool deleted = false;
  for (const std::string& line : events) {
    deleted = deleted || line.rfind("DELETED pod/ingress-3 namespace=edge rv=", 0) == 0;
    const std::string rv = line.substr(line.find(" rv=") + 4);
    EXPECT_GT(std::stoull(rv.substr(0, rv.find(' '))), std::stoull(list_rv)) << line;
  }
  EXPECT_TRUE(deleted) << tail.out;
}

TEST_F(SchedctlTest, InvalidManifestNamesTheFieldAndCreatesNothing) {
  const fs::path bad = dir_.path() / "bad.yaml";
  std::ofstream(bad) << "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n"
                        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                        "  - name: c\n    resources: {requests: {cpu: abc}}\n";
  Result r = Ctl({"apply", "-f", bad.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, AllOf(HasSubstr(bad.string() + ": document 2 (Pod default/p): "
                                                    "spec.containers[0].resources.requests.cpu"),
                           HasSubstr("invalid quantity")));
  Result nodes = Ctl({"get", "nodes"});
  EXPECT_EQ(nodes.exit_code, 0);
  EXPECT_EQ(nodes.err, "No resources found.\n");

  // A server-side refusal (a bound pod's node is immutable) is reported per object, and the
  // other objects of the file are still applied, as kubectl does.
  const fs::path first = dir_.path() / "first.yaml";
  std::ofstream(first) << "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeName: a\n"
                          "  containers: [{name: c}]\n";
  ASSERT_EQ(Ctl({"apply", "-f", first.string()}).exit_code, 0);
  const fs::path second = dir_.path() / "second.yaml";
  std::ofstream(second) << "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeName: b\n"
                           "  containers: [{name: c}]\n---\n"
                           "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n";
  Result partial = Ctl({"apply", "-f", second.string()});
  EXPECT_EQ(partial.exit_code, 1);
  EXPECT_THAT(partial.err, ContainsRegex("^Error from server \\(InvalidArgument\\): error when "
                                         "applying pod/p from \"[^\"]*second.yaml\": .*nodeName"));
  EXPECT_EQ(partial.out, "node/n2 created\n");

  Result unknown = Ctl({"get", "deployments"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("the server doesn't have a resource type \"deployments\""));
  Result bad_selector = Ctl({"get", "pods", "-l", "app in (web"});
  EXPECT_EQ(bad_selector.exit_code, 1);
  EXPECT_THAT(bad_selector.err, HasSubstr("Error from server (InvalidArgument): label_selector:"));
  Result bad_output = Ctl({"get", "pods", "-o", "table"});
  EXPECT_EQ(bad_output.exit_code, 1);
  EXPECT_THAT(bad_output.err, HasSubstr("allowed formats are: json, name, wide, yaml"));
}

// Until the Admin service lands (h/admin), every Admin call is UNIMPLEMENTED on this server.
TEST_F(SchedctlTest, AdminCommandsReportUnimplementedAndExitOne) {
  const std::vector<std::vector<std::string>> commands = {
      {"plugins"}, {"profiles"}, {"stats"}, {"reload"}, {"explain", "pod", "web-1"}};
  for (const auto& args : commands) {
    Result r = Ctl(args);
    EXPECT_EQ(r.exit_code, 1) << args[0];
    EXPECT_THAT(r.err, HasSubstr("Error from server (Unimplemented): ")) << args[0];
    EXPECT_EQ(r.out, "") << args[0];
  }
}

TEST_F(SchedctlTest, ServerComesFromTheEnvironmentWhenNoFlagIsGiven) {
  Result r = RunSchedctl(dir_, {"get", "nodes"}, server_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "No resources found.\n");
  // The flag wins over the environment, and may follow the subcommand.
  Result flag_wins =
      RunSchedctl(dir_, {"get", "nodes", "--server", server_}, "unix:///nonexistent/x.sock");
  EXPECT_EQ(flag_wins.exit_code, 0) << flag_wins.err;
}

TEST(SchedctlNoServerTest, NamesTheAddressAndExitsOneQuickly) {
  if (!fs::exists(BinDir() / "schedctl")) GTEST_SKIP() << "schedctl is not built";
  TempDir dir;
  const std::string address = "unix://" + (dir.path() / "absent.sock").string();
  Result r = RunSchedctl(dir, {"--server", address, "get", "pods"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot connect to schedhostd at " + address));
  EXPECT_LT(r.seconds, 6);

  // TCP always means TLS; a port nobody listens on fails the same way.
  Result tcp = RunSchedctl(dir, {"--server", "127.0.0.1:1", "stats"});
  EXPECT_EQ(tcp.exit_code, 1);
  EXPECT_THAT(tcp.err, HasSubstr("cannot connect to schedhostd at 127.0.0.1:1"));
  EXPECT_LT(tcp.seconds, 6);
  Result half = RunSchedctl(dir, {"--server", "127.0.0.1:1", "--tls-cert", "c.pem", "get", "pods"});
  EXPECT_EQ(half.exit_code, 1);
  EXPECT_THAT(half.err, HasSubstr("--tls-cert and --tls-key go together"));
  Result unix_tls = RunSchedctl(dir, {"--server", address, "--tls-ca", "ca.pem", "get", "pods"});
  EXPECT_EQ(unix_tls.exit_code, 1);
  EXPECT_THAT(unix_tls.err, HasSubstr("a unix socket is served without TLS"));

  // Decoding comes first: a bad file is refused without a server.
  Result missing = RunSchedctl(dir, {"--server", address, "apply", "-f", "/nonexistent.yaml"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent.yaml"));
}

// FreePort returns a TCP port on 127.0.0.1 nobody listened on a moment ago.
int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

// Over TCP schedctl speaks TLS: it trusts the server through --tls-ca, and a server its CA did
// not sign is refused.
TEST(SchedctlTlsTest, ConnectsOverTcpWithTheGivenCa) {
  if (!fs::exists(BinDir() / "schedctl") || !fs::exists(BinDir() / "schedhostd")) {
    GTEST_SKIP() << "schedctl and schedhostd are not built";
  }
  if (!fs::exists("/usr/bin/openssl")) GTEST_SKIP() << "openssl is needed to make certificates";
  TempDir dir;
  const fs::path d = dir.path();
  std::ofstream(d / "san.ext") << "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
  const std::string openssl = "cd " + d.string() + " && /usr/bin/openssl ";
  for (const std::string& cmd :
       {openssl + "req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 1 "
                  "-subj /CN=schedctl-test-ca",
        openssl + "req -x509 -newkey rsa:2048 -nodes -keyout other.key -out other.pem -days 1 "
                  "-subj /CN=someone-else",
        openssl + "req -newkey rsa:2048 -nodes -keyout server.key -out server.csr "
                  "-subj /CN=localhost",
        openssl + "x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
                  "-out server.pem -days 1 -extfile san.ext"}) {
    ASSERT_EQ(std::system((cmd + " >/dev/null 2>&1").c_str()), 0) << cmd;
  }
  const int port = FreePort();
  ASSERT_GT(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);
  std::ofstream(d / "schedhost.toml")
      << "[api]\nlisten = \"" << address << "\"\n"
      << "[api.tls]\ncert = \"" << (d / "server.pem").string() << "\"\nkey = \""
      << (d / "server.key").string() << "\"\n[metrics]\nlisten = \"127.0.0.1:0\"\n";
  const pid_t pid = StartSchedhostd(d / "schedhost.toml");
  ASSERT_GT(pid, 0);
  const std::string ca = (d / "ca.pem").string();
  Result r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  do {
    r = RunSchedctl(dir, {"--server", address, "--tls-ca", ca, "get", "nodes"});
  } while (r.exit_code != 0 && std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "No resources found.\n");

  Result untrusted = RunSchedctl(
      dir, {"--server", address, "--tls-ca", (d / "other.pem").string(), "get", "nodes"});
  EXPECT_EQ(untrusted.exit_code, 1);
  EXPECT_THAT(untrusted.err, HasSubstr("cannot connect to schedhostd at " + address));
  StopSchedhostd(pid);
}

}  // namespace
