// Helpers for the schedctl integration tests (see schedctl_fixture.h).
#include "schedctl_fixture.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace schedhost::testing {

namespace {

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

fs::path DemoCluster() {
  return fs::path(std::getenv("SCHEDHOST_SOURCE_DIR")) / "config/examples/demo-cluster.yaml";
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// RunSchedctl runs schedctl with `args` (stdout and stderr through files, so neither pipe can
// fill), `stdin_file` as its input when given, and SCHEDHOST_SERVER set to `server_env` unless
// empty.
Result RunSchedctl(const TempDir& dir, const std::vector<std::string>& args,
                   const std::string& server_env, const std::string& stdin_file) {
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

// StartSchedhostd runs schedhostd with `config` (quiet logs); returns its pid.
pid_t StartSchedhostd(const fs::path& config, const fs::path& log) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (!log.empty()) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);  // the log lines go to stdout
      ::dup2(fd, 2);
    }
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

void SchedctlTest::SetUp() {
  if (!fs::exists(BinDir() / "schedctl") || !fs::exists(BinDir() / "schedhostd")) {
    GTEST_SKIP() << "schedctl and schedhostd are not built in " << BinDir();
  }
  socket_ = dir_.path() / "run" / "schedhost.sock";
  server_ = "unix://" + socket_.string();
  const fs::path config = dir_.path() / "schedhost.toml";
  // state_dir beside the config (relative paths resolve there), never /var/lib/schedhost.
  std::ofstream(config) << "[host]\nstate_dir = \"state\"\n" << HostKeys() << "[api]\nlisten = \"" << server_
                        << "\"\n[metrics]\nlisten = \"127.0.0.1:0\"\n"
                        << Profile();
  pid_ = StartSchedhostd(config, log_);
  ASSERT_GE(pid_, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!fs::exists(socket_) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(fs::exists(socket_)) << "schedhostd did not create " << socket_;
}

Result SchedctlTest::Ctl(std::vector<std::string> args) {
  args.insert(args.begin(), {"--server", server_});
  return RunSchedctl(dir_, args);
}

nlohmann::json SchedctlTest::PodsJson() {
  Result r = Ctl({"get", "pods", "-A", "-o", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out, nullptr, false);
}

std::map<std::string, std::string> SchedctlTest::PodNodes() {
  std::map<std::string, std::string> out;
  const nlohmann::json list = PodsJson();
  if (!list.is_object()) return out;
  for (const auto& pod : list["items"]) {
    out[pod["metadata"].value("namespace", "default") + "/" +
        pod["metadata"]["name"].get<std::string>()] = pod["spec"].value("nodeName", "");
  }
  return out;
}

std::map<std::string, std::string> SchedctlTest::WaitForNodes(const std::set<std::string>& names) {
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
  std::string missing;
  for (const std::string& n : names) {
    if (nodes.count(n) == 0) missing += " " + n;
  }
  ADD_FAILURE() << "not bound within 30 s:" << missing << "\n" << Ctl({"get", "pods", "-A"}).out;
  return nodes;
}

}  // namespace schedhost::testing
