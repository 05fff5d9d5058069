// ControlPlane serves a real API server: kubectl reads and writes through it, the scheduler
// user holds exactly kube-scheduler's permissions plus its lease, and objects survive an API
// server restart and an etcd compaction.
#include "tests/kube/control_plane.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace schedhost::testing {
namespace {

constexpr std::string_view kNode = R"({
  "apiVersion": "v1", "kind": "Node",
  "metadata": {"name": "node-a", "labels": {"topology.kubernetes.io/zone": "zone-1"}},
  "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
             "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
})";

constexpr std::string_view kLease = R"({
  "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
  "metadata": {"name": "schedhost", "namespace": "kube-system"},
  "spec": {"holderIdentity": "test", "leaseDurationSeconds": 15}
})";

// Ok runs kubectl and expects it to succeed, returning its stdout.
std::string Ok(const ControlPlane& cp, const std::vector<std::string>& args,
               std::string_view input = {}) {
  const ControlPlane::Result r = cp.Kubectl(args, input);
  EXPECT_EQ(r.exit_code, 0) << "kubectl " << ::testing::PrintToString(args) << ": " << r.err;
  return r.out;
}

// CanI asks the API server whether the scheduler user may do `what` (kubectl auth can-i
// arguments), authenticating with the user's own kubeconfig.
bool CanI(const ControlPlane& cp, std::vector<std::string> what) {
  what.insert(what.begin(), {"--kubeconfig", cp.user_kubeconfig(), "auth", "can-i"});
  const ControlPlane::Result r = cp.Kubectl(what);
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  return r.exit_code == 0;
}

class ControlPlaneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SCHEDHOST_SKIP_WITHOUT_KUBE();
    cp_ = ControlPlane::Start();
  }
  std::unique_ptr<ControlPlane> cp_;
};

TEST_F(ControlPlaneTest, ServesNamespacesAndNodes) {
  const ControlPlane& cp = *cp_;
  EXPECT_TRUE(cp.server().starts_with("https://127.0.0.1:")) << cp.server();
  EXPECT_TRUE(cp.etcd().starts_with("http://127.0.0.1:")) << cp.etcd();
  for (const std::string& file : {cp.admin_kubeconfig(), cp.user_kubeconfig(), cp.ca_file()}) {
    EXPECT_TRUE(std::filesystem::exists(file)) << file;
  }

  const nlohmann::json version = nlohmann::json::parse(Ok(cp, {"version", "-o", "json"}));
  EXPECT_EQ(version["serverVersion"]["gitVersion"], "v1.37.2");

  const std::string namespaces = Ok(cp, {"get", "namespaces", "-o", "name"});
  EXPECT_NE(namespaces.find("namespace/default\n"), std::string::npos) << namespaces;
  EXPECT_NE(namespaces.find("namespace/kube-system\n"), std::string::npos) << namespaces;

  Ok(cp, {"create", "-f", "-"}, kNode);
  const nlohmann::json node =
      nlohmann::json::parse(Ok(cp, {"get", "node", "node-a", "-o", "json"}));
  EXPECT_EQ(node["metadata"]["labels"]["topology.kubernetes.io/zone"], "zone-1");
  EXPECT_EQ(node["status"]["allocatable"]["cpu"], "4");
  // The scheduler user reads nodes with its own credentials.
  EXPECT_EQ(Ok(cp, {"--kubeconfig", cp.user_kubeconfig(), "get", "nodes", "-o", "name"}),
            "node/node-a\n");
}

TEST_F(ControlPlaneTest, UserHasTheSchedulersPermissionsAndLease) {
  const ControlPlane& cp = *cp_;
  EXPECT_TRUE(CanI(cp, {"create", "pods", "--subresource=binding"}));
  EXPECT_TRUE(CanI(cp, {"patch", "pods", "--subresource=status"}));
  EXPECT_TRUE(CanI(cp, {"watch", "nodes"}));
  EXPECT_TRUE(CanI(cp, {"list", "persistentvolumeclaims", "-A"}));
  EXPECT_TRUE(CanI(cp, {"create", "events.events.k8s.io", "-n", "default"}));
  EXPECT_TRUE(CanI(cp, {"update", "leases/schedhost", "-n", "kube-system"}));
  EXPECT_TRUE(CanI(cp, {"patch", "leases/schedhost", "-n", "kube-system"}));
  // Only what a scheduler needs: no pod creation, no secrets, no other lease by name.
  EXPECT_FALSE(CanI(cp, {"create", "pods", "-n", "default"}));
  EXPECT_FALSE(CanI(cp, {"get", "secrets", "-n", "kube-system"}));
  EXPECT_FALSE(CanI(cp, {"update", "leases/kube-controller-manager", "-n", "kube-system"}));

  // The lease for real: created, then renewed (a patch), as the user.
  const std::vector<std::string> as_user = {"--kubeconfig", cp.user_kubeconfig()};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin(), as_user.begin(), as_user.end());
    return args;
  };
  Ok(cp, with({"create", "-f", "-"}), kLease);
  Ok(cp, with({"-n", "kube-system", "patch", "lease", "schedhost", "--type=merge", "-p",
               R"({"spec":{"holderIdentity":"renewed"}})"}));
  EXPECT_EQ(Ok(cp, with({"-n", "kube-system", "get", "lease", "schedhost", "-o",
                         "jsonpath={.spec.holderIdentity}"})),
            "renewed");
}

TEST_F(ControlPlaneTest, KeepsObjectsAcrossRestartAndCompaction) {
  ControlPlane& cp = *cp_;
  Ok(cp, {"create", "-f", "-"}, kNode);
  const std::string server = cp.server();
  const pid_t before = cp.apiserver_pid();

  cp.RestartApiServer();
  EXPECT_EQ(cp.server(), server);
  EXPECT_NE(cp.apiserver_pid(), before);
  EXPECT_EQ(Ok(cp, {"get", "nodes", "-o", "name"}), "node/node-a\n");

  const int64_t revision = cp.Compact();
  EXPECT_GT(revision, 0);
  Ok(cp, {"label", "node", "node-a", "compacted=yes"});
  EXPECT_GT(cp.Compact(), revision);
  EXPECT_EQ(Ok(cp, {"get", "nodes", "-l", "compacted=yes", "-o", "name"}), "node/node-a\n");
}

TEST(ControlPlaneStartTest, FailsWithControlplanesStderrWhenNotReadyInTime) {
  SCHEDHOST_SKIP_WITHOUT_KUBE();
  ControlPlane::Options options;
  options.start_timeout = std::chrono::seconds(0);
  try {
    ControlPlane::Start(options);
    FAIL() << "Start returned without a ready control plane";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("controlplane did not become ready within 0 s"));
  }
}

}  // namespace
}  // namespace schedhost::testing
