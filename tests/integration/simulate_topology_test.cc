// PodTopologySpread end to end through `schedctl simulate` (the library entry point): the
// scenarios of reference/001 (single constraint, two constraints, conflicting constraints),
// ScheduleAnyway scoring against resource scoring, and cluster default constraints. Manifests
// and profiles live in tests/integration/scenarios/topology/; the profile enables
// PodTopologySpread explicitly, so the scenarios do not depend on the built-in default profile.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "host/cli/simulate.h"
#include "host/framework/testing/harness.h"

namespace schedhost::cli {
namespace {

using ::testing::AnyOf;
using ::testing::Eq;

std::string Scenario(const std::string& file) {
  const char* dir = std::getenv("SCHEDHOST_SOURCE_DIR");
  return std::string(dir ? dir : ".") + "/tests/integration/scenarios/topology/" + file;
}

struct PodOutcome {
  std::optional<std::string> node;
  std::string status;
  std::string message;
};

// SimulateScenario simulates `manifest` with `profile` (seed 0) and returns each pod's outcome by
// name.
std::map<std::string, PodOutcome> SimulateScenario(const std::string& manifest,
                                                   const std::string& profile = "profile.toml") {
  SimulateOptions o;
  o.config_path = Scenario(profile);
  o.manifest_paths = {Scenario(manifest)};
  o.output = "json";
  o.plugin_dir = framework::testing::PluginDir();
  std::ostringstream out;
  std::ostringstream err;
  const int code = RunSimulate(o, out, err);
  EXPECT_EQ(code, 0) << err.str();
  EXPECT_EQ(err.str(), "");
  std::map<std::string, PodOutcome> pods;
  if (code != 0) return pods;
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["evicted"], nlohmann::json::array());
  for (const auto& p : j["pods"]) {
    PodOutcome r;
    if (!p["node"].is_null()) r.node = p["node"].get<std::string>();
    r.status = p["status"].get<std::string>();
    r.message = p["message"].get<std::string>();
    pods[p["name"].get<std::string>()] = r;
  }
  return pods;
}

TEST(SimulateTopologyTest, SingleConstraintPlacesInEmptierZone) {
  auto pods = SimulateScenario("single-constraint.yaml");
  ASSERT_TRUE(pods.count("mypod"));
  EXPECT_EQ(pods["mypod"].status, "Bound");
  // zoneA would become 3 vs 1 (skew 2 > maxSkew 1): only zoneB's nodes are feasible.
  EXPECT_THAT(pods["mypod"].node, AnyOf(Eq("node3"), Eq("node4")));
}

TEST(SimulateTopologyTest, TwoConstraintsLeaveOneNode) {
  auto pods = SimulateScenario("two-constraints.yaml");
  ASSERT_TRUE(pods.count("mypod"));
  EXPECT_EQ(pods["mypod"].status, "Bound");
  EXPECT_EQ(pods["mypod"].node, "node4");
}

TEST(SimulateTopologyTest, ConflictingConstraintsStayPending) {
  auto pods = SimulateScenario("conflicting-constraints.yaml");
  ASSERT_TRUE(pods.count("mypod"));
  EXPECT_EQ(pods["mypod"].status, "Pending");
  EXPECT_EQ(pods["mypod"].node, std::nullopt);
  // upstream: the missing topology key is UnschedulableAndUnresolvable with its own reason.
  EXPECT_EQ(pods["mypod"].message,
            "0/4 nodes are available: 1 node(s) didn't match pod topology spread constraints "
            "(missing required label), 3 node(s) didn't match pod topology spread constraints.");
}

TEST(SimulateTopologyTest, ScheduleAnywayOutweighsResourceScoring) {
  auto pods = SimulateScenario("schedule-anyway.yaml");
  ASSERT_TRUE(pods.count("spread") && pods.count("plain"));
  EXPECT_EQ(pods["spread"].status, "Bound");
  EXPECT_EQ(pods["spread"].node, "node-c");
  // The control pod without constraints follows resources alone.
  EXPECT_EQ(pods["plain"].status, "Bound");
  EXPECT_EQ(pods["plain"].node, "node-b");
}

TEST(SimulateTopologyTest, ClusterDefaultConstraintsSpreadAController) {
  auto pods = SimulateScenario("default-constraints.yaml", "defaults.toml");
  for (const char* name : {"web-1", "web-2", "web-3", "web-4", "solo"}) {
    ASSERT_TRUE(pods.count(name)) << name;
    EXPECT_EQ(pods[name].status, "Bound") << name << ": " << pods[name].message;
  }
  EXPECT_THAT(pods["web-1"].node, AnyOf(Eq("a1"), Eq("a2")));
  EXPECT_EQ(pods["web-2"].node, "b1");
  EXPECT_THAT(pods["web-3"].node, AnyOf(Eq("a1"), Eq("a2")));
  EXPECT_NE(pods["web-3"].node, pods["web-1"].node) << "the emptier node of zone a";
  EXPECT_EQ(pods["web-4"].node, "b1");
  EXPECT_THAT(pods["solo"].node, AnyOf(Eq("a1"), Eq("a2")));
}

}  // namespace
}  // namespace schedhost::cli
