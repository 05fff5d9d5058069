// Preemption end to end through `schedctl simulate` (library API): manifests under
// scenarios/preemption/ with a config enabling DefaultPreemption at post_filter. Each scenario
// asserts placements, nominations, messages and the "evicted" entries of the JSON output.
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

using ::testing::HasSubstr;

std::string ScenarioDir() {
  const char* dir = std::getenv("SCHEDHOST_SOURCE_DIR");
  return std::string(dir ? dir : ".") + "/tests/integration/scenarios/preemption/";
}

nlohmann::json RunScenario(const std::string& scenario) {
  SimulateOptions o;
  o.config_path = ScenarioDir() + "preemption.toml";
  o.manifest_paths = {ScenarioDir() + "classes.yaml", ScenarioDir() + scenario};
  o.output = "json";
  o.plugin_dir = framework::testing::PluginDir();
  std::ostringstream out;
  std::ostringstream err;
  const int code = RunSimulate(o, out, err);
  EXPECT_EQ(code, 0) << err.str();
  EXPECT_EQ(err.str(), "");
  return nlohmann::json::parse(out.str());
}

struct PodOutcome {
  std::optional<std::string> node;
  std::optional<std::string> nominated;
  std::string status;
  std::string message;
};

std::map<std::string, PodOutcome> Pods(const nlohmann::json& j) {
  std::map<std::string, PodOutcome> out;
  for (const auto& p : j["pods"]) {
    PodOutcome o;
    if (!p["node"].is_null()) o.node = p["node"].get<std::string>();
    if (!p["nominatedNode"].is_null()) o.nominated = p["nominatedNode"].get<std::string>();
    o.status = p["status"].get<std::string>();
    o.message = p["message"].get<std::string>();
    out[p["name"].get<std::string>()] = o;
  }
  return out;
}

// Evicted lists "name by namespace/preemptor" for every eviction, in order.
std::vector<std::string> Evicted(const nlohmann::json& j) {
  std::vector<std::string> out;
  for (const auto& e : j["evicted"]) {
    EXPECT_EQ(e["namespace"], "default");
    out.push_back(e["name"].get<std::string>() + " by " + e["by"].get<std::string>());
  }
  return out;
}

TEST(SimulatePreemptionTest, BasicEvictsTheLowerPriorityPod) {
  nlohmann::json j = RunScenario("basic.yaml");
  auto pods = Pods(j);
  EXPECT_EQ(Evicted(j), std::vector<std::string>{"victim by default/preemptor"});
  EXPECT_EQ(pods["preemptor"].node, "n1");
  EXPECT_EQ(pods["preemptor"].status, "Bound");
  EXPECT_EQ(pods["preemptor"].nominated, std::nullopt) << "binding clears the nomination";
  EXPECT_EQ(pods["victim"].node, std::nullopt);
  EXPECT_EQ(pods["victim"].message, "preempted by default/preemptor");
}

TEST(SimulatePreemptionTest, PdbProtectedVictimsAreAvoided) {
  nlohmann::json j = RunScenario("pdb.yaml");
  auto pods = Pods(j);
  // "guard" allows no disruption (minAvailable 1 of 1 healthy): n2's unprotected pod goes.
  EXPECT_EQ(Evicted(j), std::vector<std::string>{"free by default/preemptor"});
  EXPECT_EQ(pods["preemptor"].node, "n2");
  EXPECT_EQ(pods["guarded"].node, "n1");
}

TEST(SimulatePreemptionTest, LowestPriorityVictimsArePreferred) {
  nlohmann::json j = RunScenario("lowest-priority.yaml");
  auto pods = Pods(j);
  EXPECT_EQ(Evicted(j), std::vector<std::string>{"low-pod by default/preemptor"});
  EXPECT_EQ(pods["preemptor"].node, "n2");
  EXPECT_EQ(pods["mid-pod"].node, "n1");
}

TEST(SimulatePreemptionTest, FewestVictimsArePreferred) {
  nlohmann::json j = RunScenario("fewest-victims.yaml");
  auto pods = Pods(j);
  EXPECT_EQ(Evicted(j), std::vector<std::string>{"b1 by default/preemptor"});
  EXPECT_EQ(pods["preemptor"].node, "n2");
  EXPECT_EQ(pods["a1"].node, "n1");
  EXPECT_EQ(pods["a2"].node, "n1");
}

TEST(SimulatePreemptionTest, PreemptionNotHelpfulWhenTheSelectorMatchesNoNode) {
  nlohmann::json j = RunScenario("not-helpful.yaml");
  auto pods = Pods(j);
  EXPECT_EQ(Evicted(j), std::vector<std::string>{});
  EXPECT_EQ(pods["victim"].node, "n1");
  EXPECT_EQ(pods["preemptor"].status, "Pending");
  EXPECT_EQ(pods["preemptor"].nominated, std::nullopt);
  // upstream: unresolvable nodes are "not helpful", and FitError's separator doubles the period.
  EXPECT_THAT(pods["preemptor"].message,
              HasSubstr(". preemption: 0/1 nodes are available: 1 Preemption is not helpful for "
                        "scheduling."));
}

TEST(SimulatePreemptionTest, NoPreemptionByLowerPriorityOrPolicyNever) {
  nlohmann::json j = RunScenario("lower-priority.yaml");
  auto pods = Pods(j);
  EXPECT_EQ(Evicted(j), std::vector<std::string>{});
  EXPECT_EQ(pods["important"].node, "n1");
  EXPECT_EQ(pods["lesser"].status, "Pending");
  EXPECT_EQ(pods["lesser"].message,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 "
            "No preemption victims found for incoming pod.");
  // upstream: only pods of strictly lower priority are victims; an equal one is not.
  EXPECT_EQ(pods["peer"].status, "Pending");
  EXPECT_EQ(pods["peer"].message,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 "
            "No preemption victims found for incoming pod.");
  EXPECT_EQ(pods["polite"].status, "Pending");
  EXPECT_EQ(pods["polite"].message,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to "
            "preemptionPolicy=Never.");
}

TEST(SimulatePreemptionTest, ReprieveKeepsTheMostImportantVictims) {
  nlohmann::json j = RunScenario("reprieve.yaml");
  auto pods = Pods(j);
  // upstream: all lower pods removed, then added back most important first while the pod fits:
  // "mid" stays, both "low" pods go (equal priority: reported in start order).
  EXPECT_EQ(Evicted(j),
            (std::vector<std::string>{"low-a by default/preemptor", "low-b by default/preemptor"}));
  EXPECT_EQ(pods["mid"].node, "n1");
  EXPECT_EQ(pods["preemptor"].node, "n1");
  EXPECT_EQ(pods["low-a"].message, "preempted by default/preemptor");
}

TEST(SimulatePreemptionTest, SameSeedSameChoice) {
  EXPECT_EQ(RunScenario("fewest-victims.yaml"), RunScenario("fewest-victims.yaml"));
}

}  // namespace
}  // namespace schedhost::cli
