// ControlPlane: a real Kubernetes control plane for tests — upstream etcd and kube-apiserver
// on loopback, started and supervised by the `controlplane` program (tests/upstream), with an
// admin kubeconfig and one for the scheduler user, who holds kube-scheduler's permissions and
// the leader-election lease. The upstream binaries come from the `upstream_binaries` target.
//
//   TEST(Kube, Lists) {
//     SCHEDHOST_SKIP_WITHOUT_KUBE();
//     auto cp = ControlPlane::Start();
//     ControlPlane::Result r = cp->Kubectl({"get", "namespaces"});
//     ASSERT_EQ(r.exit_code, 0) << r.err;
//   }
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace schedhost::testing {

class ControlPlane {
 public:
  // Options of one control plane.
  struct Options {
    // The scheduler user: the CN of user_kubeconfig()'s client certificate.
    std::string user = "schedhost";
    // The lease in kube-system the user may get, create, update and patch.
    std::string lease_name = "schedhost";
    // Keep dir() (credentials, etcd data, component logs) after the control plane stops.
    bool keep_dir = false;
    // How long Start waits for the API server to serve with the user's permissions in effect.
    std::chrono::seconds start_timeout{120};
    // More kube-apiserver flags ("--max-requests-inflight=1"), after controlplane's own: a flag
    // given twice takes the later value.
    std::vector<std::string> apiserver_args;
    // kube-controller-manager controllers to run beside it, as the admin (none: no
    // kube-controller-manager), e.g. "persistentvolume-binder-controller".
    std::vector<std::string> controllers;
    // Run upstream kube-scheduler beside it (default profile, for pods of schedulerName
    // default-scheduler), to compare with schedhost on one control plane.
    bool kube_scheduler = false;
  };

  // Result is how one finished kubectl run ended.
  struct Result {
    int exit_code = -1;  // -1 when it did not exit normally (killed, or could not start)
    std::string out;
    std::string err;
  };

  // Start runs a control plane and returns once it serves; throws std::runtime_error, quoting
  // the end of controlplane's stderr (which quotes the failing component's log), on failure.
  // Stop it from the thread that started it: its processes die with that thread.
  static std::unique_ptr<ControlPlane> Start(const Options& options);
  static std::unique_ptr<ControlPlane> Start() { return Start(Options{}); }

  // Unavailable returns "" when every binary Start and Kubectl need is built, else one line
  // saying what is missing. SCHEDHOST_KUBE_BINARIES, when set, is searched before the build's
  // own upstream/bin.
  static std::string Unavailable();
  // Required reports whether SCHEDHOST_REQUIRE_KUBE=1 turns an unavailable control plane into a
  // test failure instead of a skip (CI sets it).
  static bool Required();
  // Program returns the path of another test program built beside controlplane (the
  // provisioner), searched as Unavailable searches; empty when it is not built.
  static std::filesystem::path Program(const std::string& name);

  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;
  // Stops the control plane (EOF on its stdin; SIGTERM if it has not exited within 30 s, its
  // process group killed 10 s later) and removes dir() unless Options::keep_dir; never throws.
  ~ControlPlane();

  // The API server's URL, https://127.0.0.1:PORT; it keeps its port across RestartApiServer.
  const std::string& server() const { return server_; }
  // A kubeconfig for the admin (group system:masters).
  const std::string& admin_kubeconfig() const { return admin_kubeconfig_; }
  // A kubeconfig for Options::user; its context is named after the user.
  const std::string& user_kubeconfig() const { return user_kubeconfig_; }
  // The CA that signed the API server's certificate and every client certificate.
  const std::string& ca_file() const { return ca_file_; }
  // The work directory: the files above, etcd's data and the components' logs.
  const std::string& dir() const { return dir_; }
  // etcd's client URL, http://127.0.0.1:PORT.
  const std::string& etcd() const { return etcd_; }
  // The scheduler user's name (Options::user).
  const std::string& user() const { return user_; }
  // The running kube-apiserver's process id.
  pid_t apiserver_pid() const { return apiserver_pid_; }
  // etcd's process id (a test may SIGSTOP it to make the API server's storage hang; the
  // control plane kills it with SIGKILL at the end, stopped or not).
  pid_t etcd_pid() const { return etcd_pid_; }

  // RestartApiServer kills kube-apiserver and returns once a new one serves on the same port;
  // throws std::runtime_error on failure.
  void RestartApiServer();
  // Compact compacts etcd's history at its current revision and returns that revision; throws
  // std::runtime_error on failure.
  int64_t Compact();
  // EtcdPut writes `value` under `key` in etcd, behind kube-apiserver's back (no validation):
  // an object as another API server version might have written it. Returns the revision.
  int64_t EtcdPut(const std::string& key, const std::string& value);
  // Kubectl runs the built kubectl with the admin kubeconfig, `args` and `input` on its stdin,
  // and waits for it (killed after 120 s). A later `--kubeconfig` in `args` wins, so
  // {"--kubeconfig", user_kubeconfig(), ...} runs it as the user.
  Result Kubectl(const std::vector<std::string>& args, std::string_view input = {}) const;

 private:
  struct Process;
  explicit ControlPlane(std::unique_ptr<Process> process);
  // Command sends one command line and returns its reply's JSON text; throws when the reply is
  // not {"ok":true,...} or does not come within `timeout`.
  std::string Command(std::string_view command, std::chrono::seconds timeout);

  std::unique_ptr<Process> process_;
  bool keep_dir_ = false;
  std::string server_;
  std::string admin_kubeconfig_;
  std::string user_kubeconfig_;
  std::string ca_file_;
  std::string dir_;
  std::string etcd_;
  std::string user_;
  pid_t apiserver_pid_ = -1;
  pid_t etcd_pid_ = -1;
};

}  // namespace schedhost::testing

// SCHEDHOST_SKIP_WITHOUT_KUBE(), in a test body, SetUp or SetUpTestSuite, skips when
// ControlPlane::Unavailable() says why, or fails instead when ControlPlane::Required().
#define SCHEDHOST_SKIP_WITHOUT_KUBE()                                                             \
  do {                                                                                            \
    if (const std::string schedhost_kube_why = ::schedhost::testing::ControlPlane::Unavailable(); \
        !schedhost_kube_why.empty()) {                                                            \
      if (::schedhost::testing::ControlPlane::Required()) {                                       \
        FAIL() << schedhost_kube_why << " (and SCHEDHOST_REQUIRE_KUBE=1)";                        \
      }                                                                                           \
      GTEST_SKIP() << schedhost_kube_why;                                                         \
    }                                                                                             \
  } while (false)
