// ControlPlane (control_plane.h): runs the `controlplane` program with its stdin and stdout as
// a command channel and its stderr drained into a buffer quoted in errors; kubectl runs as a
// child whose input and output go through a poll loop.
#include "tests/kube/control_plane.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

#include "control_plane_config.h"  // SCHEDHOST_KUBE_BIN_DIR, SCHEDHOST_KUBE_UNAVAILABLE

namespace schedhost::testing {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::seconds kStopTimeout{30};
constexpr std::chrono::seconds kTermGrace{10};
constexpr std::chrono::seconds kRestartTimeout{150};
constexpr std::chrono::seconds kCompactTimeout{60};
constexpr std::chrono::seconds kKubectlTimeout{120};
constexpr size_t kStderrKept = 64 * 1024;   // bytes of controlplane's stderr kept for errors
constexpr size_t kStderrQuoted = 6 * 1024;  // of which an error quotes the end

// Fd owns one file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    Reset(std::exchange(other.fd_, -1));
    return *this;
  }
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  void Reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// ChildFds are a child's ends (stdin, stdout, stderr) and the parent's ends of the same three
// channels. stdin is a socket pair, so writing to a child that has died fails with EPIPE
// (MSG_NOSIGNAL) instead of raising SIGPIPE in the test.
struct ChildFds {
  std::array<Fd, 3> child;
  std::array<Fd, 3> parent;
};

ChildFds MakeChildFds() {
  ChildFds fds;
  int in[2], out[2], err[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0 ||
      ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("control plane: pipes: ") + std::strerror(errno));
  }
  fds.child = {Fd(in[0]), Fd(out[1]), Fd(err[1])};
  fds.parent = {Fd(in[1]), Fd(out[0]), Fd(err[0])};
  return fds;
}

// Spawn starts argv[0] in its own process group with the child ends of `fds` as its standard
// streams; `death_signal` reaches it if the spawning thread dies first.
pid_t Spawn(const std::vector<std::string>& args, ChildFds& fds, int death_signal) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Only async-signal-safe calls until exec: the test process has threads.
    if (::prctl(PR_SET_PDEATHSIG, death_signal) != 0 || ::getppid() != parent) ::_exit(126);
    ::setpgid(0, 0);
    for (int i = 0; i < 3; ++i) {
      if (::dup2(fds.child[i].get(), i) < 0) ::_exit(126);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  if (pid < 0) throw std::runtime_error(args[0] + ": fork: " + std::strerror(errno));
  for (Fd& fd : fds.child) fd.Reset();
  return pid;
}

// KillAndReap gives pid `timeout` to exit, then SIGTERM and kTermGrace more, then kills its
// process group and reaps it, returning its wait status. The group is killed before pid is
// reaped, so its id cannot have been reused.
int KillAndReap(pid_t pid, std::chrono::milliseconds timeout) {
  auto exited_within = [pid](std::chrono::milliseconds wait) {
    const auto deadline = Clock::now() + wait;
    for (;;) {
      siginfo_t info{};
      if (::waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == pid) {
        return true;
      }
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  };
  if (!exited_within(timeout)) {
    ::kill(pid, SIGTERM);  // controlplane stops its children and cleans up, even mid-start
    exited_within(kTermGrace);
  }
  ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

std::string DescribeStatus(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "wait status " + std::to_string(status);
}

bool IsExecutable(const fs::path& path) { return ::access(path.c_str(), X_OK) == 0; }

// Binaries are where the programs Start and Kubectl run are: SCHEDHOST_KUBE_BINARIES first,
// then the build's upstream/bin. etcd and kube-apiserver must share one directory (controlplane's
// --bin-dir).
struct Binaries {
  fs::path controlplane, kubectl, bin_dir;
  std::vector<std::string> missing;
  std::string searched;
};

Binaries FindBinaries() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("SCHEDHOST_KUBE_BINARIES"); env != nullptr && *env != '\0') {
    dirs.emplace_back(env);
  }
  dirs.emplace_back(SCHEDHOST_KUBE_BIN_DIR);
  Binaries b;
  auto find = [&](const std::string& name) -> fs::path {
    for (const fs::path& dir : dirs) {
      if (IsExecutable(dir / name)) return dir / name;
    }
    b.missing.push_back(name);
    return {};
  };
  b.controlplane = find("controlplane");
  b.kubectl = find("kubectl");
  for (const fs::path& dir : dirs) {
    if (IsExecutable(dir / "etcd") && IsExecutable(dir / "kube-apiserver")) {
      b.bin_dir = dir;
      break;
    }
  }
  if (b.bin_dir.empty()) b.missing.emplace_back("etcd and kube-apiserver (in one directory)");
  for (const fs::path& dir : dirs) b.searched += (b.searched.empty() ? "" : ", ") + dir.string();
  return b;
}

}  // namespace

// Process is the running controlplane: its command channel and the drained stderr.
struct ControlPlane::Process {
  pid_t pid = -1;
  Fd in, out;
  std::string out_buffer;  // stdout read past the last returned line

  Fd err;
  std::thread drain;
  std::atomic<bool> stopping{false};
  std::mutex mu;
  std::string err_text;  // the last kStderrKept bytes of stderr, guarded by mu

  Process(const std::vector<std::string>& args, bool verbose) {
    ChildFds fds = MakeChildFds();
    // SIGTERM, not SIGKILL: controlplane then stops its children and removes its directory.
    pid = Spawn(args, fds, SIGTERM);
    in = std::move(fds.parent[0]);
    out = std::move(fds.parent[1]);
    err = std::move(fds.parent[2]);
    drain = std::thread([this, verbose] { Drain(verbose); });
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process() { Stop(); }

  // Drain copies stderr into err_text (and to the test's stderr when verbose) until EOF, or
  // until Stop asks and nothing more is buffered.
  void Drain(bool verbose) {
    std::array<char, 4096> buf{};
    for (;;) {
      pollfd p{err.get(), POLLIN, 0};
      const int ready = ::poll(&p, 1, 100);
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) {
        if (stopping) return;
        continue;
      }
      const ssize_t n = ready < 0 ? 0 : ::read(err.get(), buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      if (verbose) std::cerr.write(buf.data(), n);
      const std::lock_guard lock(mu);
      err_text.append(buf.data(), static_cast<size_t>(n));
      if (err_text.size() > kStderrKept) err_text.erase(0, err_text.size() - kStderrKept);
    }
  }

  std::string ErrTail() {
    const std::lock_guard lock(mu);
    const size_t from = err_text.size() > kStderrQuoted ? err_text.size() - kStderrQuoted : 0;
    return err_text.substr(from);
  }

  bool Send(const std::string& line) {
    for (size_t sent = 0; sent < line.size();) {
      const ssize_t n = ::send(in.get(), line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }

  // ReadLine returns the next stdout line, or nullopt at EOF or at `deadline`.
  std::optional<std::string> ReadLine(Clock::time_point deadline) {
    std::array<char, 4096> buf{};
    for (;;) {
      if (const size_t nl = out_buffer.find('\n'); nl != std::string::npos) {
        std::string line = out_buffer.substr(0, nl);
        out_buffer.erase(0, nl + 1);
        return line;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{out.get(), POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      const ssize_t n = ::read(out.get(), buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      out_buffer.append(buf.data(), static_cast<size_t>(n));
    }
  }

  // Stop closes stdin (controlplane's signal to stop and clean up), waits for it, kills its
  // group if it lingers and returns how it ended ("" when already stopped).
  std::string Stop(std::chrono::milliseconds timeout = kStopTimeout) {
    if (pid < 0) return "";
    in.Reset();
    const int status = KillAndReap(std::exchange(pid, -1), timeout);
    stopping = true;
    if (drain.joinable()) drain.join();
    return DescribeStatus(status);
  }
};

ControlPlane::ControlPlane(std::unique_ptr<Process> process) : process_(std::move(process)) {}

ControlPlane::~ControlPlane() {
  process_->Stop();
  if (!keep_dir_ && !dir_.empty()) {
    // controlplane removes it itself; this covers a controlplane that had to be killed.
    std::error_code ec;
    for (int attempt = 0; attempt < 3 && fs::exists(dir_, ec); ++attempt) {
      fs::remove_all(dir_, ec);
      if (ec) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

bool ControlPlane::Required() {
  const char* env = std::getenv("SCHEDHOST_REQUIRE_KUBE");
  return env != nullptr && std::string_view(env) == "1";
}

std::filesystem::path ControlPlane::Program(const std::string& name) {
  if (const char* env = std::getenv("SCHEDHOST_KUBE_BINARIES"); env != nullptr && *env != '\0') {
    if (IsExecutable(fs::path(env) / name)) return fs::path(env) / name;
  }
  if (IsExecutable(fs::path(SCHEDHOST_KUBE_BIN_DIR) / name)) {
    return fs::path(SCHEDHOST_KUBE_BIN_DIR) / name;
  }
  return {};
}

std::string ControlPlane::Unavailable() {
  const Binaries b = FindBinaries();
  if (b.missing.empty()) return "";
  std::string why = "no Kubernetes control plane: missing ";
  for (size_t i = 0; i < b.missing.size(); ++i) why += (i > 0 ? ", " : "") + b.missing[i];
  why += " in " + b.searched;
  const std::string_view reason = SCHEDHOST_KUBE_UNAVAILABLE;
  why +=
      reason.empty() ? " (build the upstream_binaries target)" : " (" + std::string(reason) + ")";
  return why;
}

std::unique_ptr<ControlPlane> ControlPlane::Start(const Options& options) {
  if (std::string why = Unavailable(); !why.empty()) throw std::runtime_error(why);
  const Binaries bins = FindBinaries();
  std::vector<std::string> args = {bins.controlplane.string(),
                                   "--bin-dir",
                                   bins.bin_dir.string(),
                                   "--user",
                                   options.user,
                                   "--lease-name",
                                   options.lease_name};
  if (options.keep_dir) args.emplace_back("--keep");
  for (const std::string& arg : options.apiserver_args) args.push_back("--apiserver-arg=" + arg);
  if (!options.controllers.empty()) {
    std::string list;
    for (const std::string& c : options.controllers) list += (list.empty() ? "" : ",") + c;
    args.push_back("--controllers=" + list);
  }
  if (options.kube_scheduler) args.emplace_back("--kube-scheduler");
  const char* verbose = std::getenv("SCHEDHOST_KUBE_VERBOSE");
  auto process = std::make_unique<Process>(args, verbose != nullptr && *verbose == '1');

  const auto started = Clock::now();
  const std::optional<std::string> line = process->ReadLine(started + options.start_timeout);
  auto fail = [&](const std::string& what) {
    // At once: a controlplane still starting ignores EOF, SIGTERM makes it clean up.
    const std::string status = process->Stop(std::chrono::milliseconds(0));
    throw std::runtime_error("controlplane " + what + " (" + status + "); its stderr ends:\n" +
                             process->ErrTail());
  };
  if (!line)
    fail("did not become ready within " + std::to_string(options.start_timeout.count()) + " s");
  const nlohmann::json ready = nlohmann::json::parse(*line, nullptr, /*allow_exceptions=*/false);
  if (!ready.is_object() || !ready.contains("server")) fail("printed no ready line but: " + *line);

  std::unique_ptr<ControlPlane> cp(new ControlPlane(std::move(process)));
  cp->keep_dir_ = options.keep_dir;
  cp->user_ = options.user;
  cp->dir_ = ready.value("dir", "");
  cp->server_ = ready.value("server", "");
  cp->admin_kubeconfig_ = ready.value("admin_kubeconfig", "");
  cp->user_kubeconfig_ = ready.value("user_kubeconfig", "");
  cp->ca_file_ = ready.value("ca", "");
  cp->etcd_ = ready.value("etcd", "");
  cp->apiserver_pid_ = ready.value("apiserver_pid", -1);
  cp->etcd_pid_ = ready.value("etcd_pid", -1);
  return cp;
}

std::string ControlPlane::Command(std::string_view command, std::chrono::seconds timeout) {
  const std::string name(command);
  if (!process_->Send(name + "\n")) {
    throw std::runtime_error(name + ": controlplane is gone; its stderr ends:\n" +
                             process_->ErrTail());
  }
  const std::optional<std::string> line = process_->ReadLine(Clock::now() + timeout);
  if (!line) {
    throw std::runtime_error(name + ": no reply from controlplane within " +
                             std::to_string(timeout.count()) + " s; its stderr ends:\n" +
                             process_->ErrTail());
  }
  const nlohmann::json reply = nlohmann::json::parse(*line, nullptr, /*allow_exceptions=*/false);
  if (!reply.is_object() || !reply.value("ok", false)) {
    const std::string error = reply.is_object() ? reply.value("error", *line) : *line;
    throw std::runtime_error(name + " failed: " + error);
  }
  return *line;
}

void ControlPlane::RestartApiServer() {
  const nlohmann::json reply = nlohmann::json::parse(Command("restart-apiserver", kRestartTimeout));
  apiserver_pid_ = reply.value("apiserver_pid", -1);
}

int64_t ControlPlane::Compact() {
  return nlohmann::json::parse(Command("compact", kCompactTimeout)).value("revision", int64_t{0});
}

int64_t ControlPlane::EtcdPut(const std::string& key, const std::string& value) {
  if (key.find_first_of(" \n") != std::string::npos || value.find('\n') != std::string::npos) {
    throw std::invalid_argument("EtcdPut: the key may hold no space and the value no newline");
  }
  return nlohmann::json::parse(Command("etcd-put " + key + " " + value, kCompactTimeout))
      .value("revision", int64_t{0});
}

ControlPlane::Result ControlPlane::Kubectl(const std::vector<std::string>& args,
                                           std::string_view input) const {
  std::vector<std::string> argv = {FindBinaries().kubectl.string(),
                                   "--kubeconfig=" + admin_kubeconfig_,
                                   "--cache-dir=" + dir_ + "/kubectl-cache"};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildFds fds = MakeChildFds();
  const pid_t pid = Spawn(argv, fds, SIGKILL);

  // One poll loop feeds stdin and drains stdout and stderr, so no pipe can fill and block both.
  Result result;
  Fd& in = fds.parent[0];
  if (input.empty()) in.Reset();
  size_t fed = 0;
  std::array<std::string*, 3> sinks = {nullptr, &result.out, &result.err};
  const auto deadline = Clock::now() + kKubectlTimeout;
  bool timed_out = false;
  while (fds.parent[1].get() >= 0 || fds.parent[2].get() >= 0) {
    std::array<pollfd, 3> p{};
    for (int i = 0; i < 3; ++i)
      p[i] = {fds.parent[i].get(), static_cast<short>(i == 0 ? POLLOUT : POLLIN), 0};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    if (::poll(p.data(), p.size(), static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    if (in.get() >= 0 && p[0].revents != 0) {
      const ssize_t n =
          ::send(in.get(), input.data() + fed, input.size() - fed, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) fed += static_cast<size_t>(n);
      if ((n < 0 && errno != EAGAIN && errno != EINTR) || fed == input.size()) in.Reset();
    }
    for (int i = 1; i < 3; ++i) {
      if (fds.parent[i].get() < 0 || p[i].revents == 0) continue;
      std::array<char, 4096> buf{};
      const ssize_t n = ::read(fds.parent[i].get(), buf.data(), buf.size());
      if (n > 0) {
        sinks[i]->append(buf.data(), static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds.parent[i].Reset();
      }
    }
  }
  const int status = KillAndReap(pid, timed_out ? std::chrono::milliseconds(0) : kKubectlTimeout);
  if (timed_out)
    result.err += "\n(kubectl killed after " + std::to_string(kKubectlTimeout.count()) + " s)";
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace schedhost::testing
