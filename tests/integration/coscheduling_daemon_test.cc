// Coscheduling through a running schedhostd: the daemon started on the example profile (the
// contrib library found by name beside the builtins), the example cluster applied with schedctl,
// pods watched with `schedctl get`. Real time, so only outcomes are asserted, never timings.
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
  return fs::path(dir ? dir : ".") / "plugins" / "contrib" / "coscheduling" / "examples";
}

class CoschedulingDaemonTest : public SchedctlTest {
 protected:
  // The example profile, with a short Permit wait and a grace for members still arriving
  // (one `schedctl apply` creates the pods one after the other while the loop runs).
  std::string Profile() override {
    std::ifstream example(ExampleDir() / "coscheduling.toml");
    std::ostringstream profile;
    profile << example.rdbuf();
    std::string toml = profile.str();
    auto set = [&toml](const std::string& from, const std::string& to) {
      const size_t at = toml.find(from);
      EXPECT_NE(at, std::string::npos) << from;
      if (at != std::string::npos) toml.replace(at, from.size(), to);
    };
    set("permit_waiting_time_seconds = 60", "permit_waiting_time_seconds = 20");
    set("assembly_grace_seconds = 0", "assembly_grace_seconds = 2");
    return toml;
  }

  // Nodes returns pod name -> node ("" while pending); every pod is in "default".
  std::map<std::string, std::string> Nodes() {
    std::map<std::string, std::string> out;
    for (const auto& [key, node] : PodNodes()) out[key.substr(key.find('/') + 1)] = node;
    return out;
  }
};

TEST_F(CoschedulingDaemonTest, OneGangBindsWholeTheOtherHoldsNothingSinglePodsBind) {
  Result applied = Ctl({"apply", "-f", (ExampleDir() / "gangs.yaml").string()});
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  const std::vector<std::string> want = {"training-1", "training-2", "training-3",
                                         "training-4", "web-1",      "web-2"};
  std::map<std::string, std::string> nodes;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool all = false;
  while (!all && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    nodes = Nodes();
    all = true;
    for (const std::string& n : want) all = all && !nodes[n].empty();
  }
  ASSERT_TRUE(all) << Ctl({"get", "pods"}).out;
  // The gang that does not fit holds no node: none of its pods is bound, and the single pods
  // got the room its released members had.
  for (int i = 1; i <= 4; ++i) {
    EXPECT_EQ(nodes["validation-" + std::to_string(i)], "") << "validation-" << i;
  }
  const Result described = Ctl({"describe", "pod", "validation-1"});
  EXPECT_THAT(described.out, ::testing::HasSubstr("pod group default/validation")) << described.out;
}

}  // namespace
}  // namespace schedhost::testing
