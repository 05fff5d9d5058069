// CapacityScheduling through a running schedhostd: the daemon started on the example profile
// (the contrib library found by name beside the builtins), the example cluster applied with
// schedctl, pods watched with `schedctl get`. Real time, so only outcomes are asserted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
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

}  // namespace
}  // namespace schedhost::testing
