// CapacityScheduling through a running schedhostd: the daemon started on the example profile
// (the contrib library found by name beside the builtins), the example cluster applied with
// schedctl, pods watched with `schedctl get`; and an ElasticQuota changed with `schedctl apply`
// while the daemon runs. Real time, so only outcomes are asserted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "tests/integration/schedctl_fixture.h"

namespace schedhost::testing {
namespace {

fs::path ExampleDir() {
  const char* dir = std::getenv("SCHEDHOST_SOURCE_DIR");
  return fs::path(dir ? dir : ".") / "plugins" / "contrib" / "capacity_scheduling" / "examples";
}

// The example profile, as shipped.
class CapacitySchedulingDaemonTest : public SchedctlTest {
 protected:
  std::string Profile() override {
    std::ifstream example(ExampleDir() / "capacity.toml");
    std::ostringstream profile;
    profile << example.rdbuf();
    return profile.str();
  }
  std::map<std::string, std::string> Nodes() { return PodNodes(); }

  // WaitFor polls `done` (every 200 ms, up to 60 s); false on timeout.
  bool WaitFor(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return done();
  }
};

TEST_F(CapacitySchedulingDaemonTest, OverMaxIsRefusedAndTeamBReclaimsItsMin) {
  Result applied = Ctl({"apply", "-f", (ExampleDir() / "quotas.yaml").string()});
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  std::map<std::string, std::string> nodes;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool done = false;
  while (!done && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    nodes = Nodes();
    done =
        !nodes["team-b/b1"].empty() && !nodes["team-b/b2"].empty() && !nodes["team-b/b3"].empty();
  }
  ASSERT_TRUE(done) << Ctl({"get", "pods", "-A"}).out;
  // team-b's third pod took back its min from team-a's borrowing: one batch pod went, the
  // service pods stayed.
  int batch = 0;
  for (const char* a : {"team-a/a-batch-1", "team-a/a-batch-2", "team-a/a-batch-3"}) {
    batch += nodes.count(a) != 0 ? 1 : 0;
  }
  EXPECT_EQ(batch, 2) << Ctl({"get", "pods", "-A"}).out;
  for (const char* a : {"team-a/a-service-1", "team-a/a-service-2", "team-a/a-service-3"}) {
    EXPECT_FALSE(nodes[a].empty()) << a;
  }
  EXPECT_EQ(nodes["team-a/a-big"], "");
  const Result described = Ctl({"describe", "pod", "-n", "team-a", "a-big"});
  EXPECT_THAT(described.out, ::testing::HasSubstr("exceeded quota: namespace team-a would use cpu"))
      << described.out << described.err;
}

// Manifest returns a node of `cpu` cpus, or a one-cpu pod of namespace team-a.
std::string NodeManifest(const std::string& name, const std::string& cpu) {
  return "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels: {kubernetes.io/hostname: " + name + "}\nstatus:\n  allocatable: {cpu: \"" +
         cpu + "\", memory: 16Gi, pods: \"110\"}\n";
}
std::string TeamAPod(const std::string& name) {
  return "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: team-a\nspec:\n  containers:\n  - name: c\n    image: busybox\n"
         "    resources:\n      requests: {cpu: \"1\"}\n";
}

class CapacitySchedulingQuotaChangeDaemonTest : public CapacitySchedulingDaemonTest {
 protected:
  static std::string Quota(const std::string& max) {
    return "---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: ElasticQuota\nmetadata:\n"
           "  name: quota\n  namespace: team-a\nspec:\n  max: {cpu: \"" + max + "\"}\n";
  }
  Result Apply(const std::string& yaml) {
    const fs::path f = dir_.path() / ("apply-" + std::to_string(applied_++) + ".yaml");
    std::ofstream(f) << yaml;
    return Ctl({"apply", "-f", f.string()});
  }
  std::string Describe(const std::string& pod) {
    return Ctl({"describe", "pod", "-n", "team-a", pod}).out;
  }

  int applied_ = 0;
};

TEST_F(CapacitySchedulingQuotaChangeDaemonTest, AnElasticQuotaChangedWhileRunningApplies) {
  ASSERT_EQ(Apply(Quota("2")).exit_code, 0);
  ASSERT_EQ(
      Apply(NodeManifest("n1", "8") + TeamAPod("a1") + TeamAPod("a2") + TeamAPod("a3")).exit_code,
      0);
  ASSERT_TRUE(WaitFor([&] {
    auto nodes = Nodes();
    return !nodes["team-a/a1"].empty() && !nodes["team-a/a2"].empty() &&
           Describe("a3").find("more than its max 2") != std::string::npos;
  })) << Ctl({"get", "pods", "-A"}).out
      << Describe("a3");
  // max 3 while running: the update is an event of the kind, and a3 binds without a nudge.
  ASSERT_EQ(Apply(Quota("3")).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return !Nodes()["team-a/a3"].empty(); })) << Describe("a3");
  // A quota the plugin cannot use holds its namespace, saying why; the daemon goes on.
  ASSERT_EQ(Apply(Quota("lots") + TeamAPod("a4")).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] {
    return Describe("a4").find("ElasticQuota team-a/quota: spec.max.cpu: \"lots\" is not a "
                               "quantity") != std::string::npos;
  })) << Describe("a4");
  EXPECT_EQ(Nodes()["team-a/a4"], "");
  const Result listed = Ctl({"get", "elasticquotas", "-n", "team-a"});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_THAT(listed.out, ::testing::HasSubstr("quota"));
}

}  // namespace
}  // namespace schedhost::testing
