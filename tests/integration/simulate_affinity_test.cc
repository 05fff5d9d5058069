// InterPodAffinity through `schedctl simulate` (scenarios/affinity): Namespace objects applied
// first and matched by namespaceSelector, required affinity and anti-affinity in both
// directions, the first pod of a group, preferred terms deciding between feasible nodes, and
// upstream's failure messages for pods left pending.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "host/cli/simulate.h"
#include "host/framework/testing/harness.h"

namespace schedhost::cli {
namespace {

std::string Scenario(const std::string& file) {
  const char* dir = std::getenv("SCHEDHOST_SOURCE_DIR");
  return std::string(dir ? dir : ".") + "/tests/integration/scenarios/affinity/" + file;
}

struct Expected {
  const char* ns;
  const char* name;
  std::optional<std::string> node;
  const char* message;
};

TEST(SimulateAffinityTest, PlacesPodsByAffinityAcrossNamespaces) {
  SimulateOptions o;
  o.config_path = Scenario("config.toml");
  o.manifest_paths = {Scenario("cluster.yaml")};
  o.output = "json";
  o.plugin_dir = framework::testing::PluginDir();
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(RunSimulate(o, out, err), 0) << err.str();
  const nlohmann::json j = nlohmann::json::parse(out.str());
  const std::vector<Expected> want = {
      {"team-b", "cache-0", "zone-b-1", ""},
      {"team-b", "db-guard", "zone-a-1", ""},
      // The cache's namespace is selected by its label team=backend.
      {"team-a", "web-1", "zone-b-1", ""},
      // Zone a and no-zone lack a cache (no-zone even the key), zone-b-1 already runs web-1.
      {"team-a", "web-2", std::nullopt,
       "0/4 nodes are available: 1 node(s) didn't match pod anti-affinity rules, 3 node(s) "
       "didn't match pod affinity rules. preemption: 0/4 nodes are available: 1 No preemption "
       "victims found for incoming pod, 3 Preemption is not helpful for scheduling."},
      // The guard's anti-affinity rules out zone a; the preferred cache zone wins.
      {"team-b", "db-1", "zone-b-1", ""},
      // First of its group: any zoned node; away from the guard's zone by preference.
      {"default", "solo", "zone-b-1", ""},
      {"default", "lonely", std::nullopt,
       "0/4 nodes are available: 4 node(s) didn't match pod affinity rules. preemption: 0/4 "
       "nodes are available: 4 Preemption is not helpful for scheduling."},
  };
  const nlohmann::json& pods = j["pods"];
  ASSERT_EQ(pods.size(), want.size()) << out.str();
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].name);
    const nlohmann::json& p = pods[i];
    EXPECT_EQ(p["namespace"], want[i].ns);
    EXPECT_EQ(p["name"], want[i].name);
    if (want[i].node) {
      EXPECT_EQ(p["node"], *want[i].node);
      EXPECT_EQ(p["status"], "Bound");
    } else {
      EXPECT_TRUE(p["node"].is_null()) << p["node"];
      EXPECT_EQ(p["status"], "Pending");
    }
    EXPECT_EQ(p["message"], want[i].message);
  }
}

TEST(SimulateAffinityTest, WithoutNamespaceObjectsTheSelectorSelectsNothing) {
  // The same cluster minus its Namespace objects: web-1's namespaceSelector selects nothing,
  // so no cache pod counts and web-1 stays pending like web-2.
  std::ifstream in(Scenario("cluster.yaml"));
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  yaml = yaml.substr(0, yaml.find("# Namespaces last in the file"));
  const std::string path = ::testing::TempDir() + "/affinity_no_namespaces.yaml";
  std::ofstream(path) << yaml;
  SimulateOptions o;
  o.config_path = Scenario("config.toml");
  o.manifest_paths = {path};
  o.output = "json";
  o.plugin_dir = framework::testing::PluginDir();
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(RunSimulate(o, out, err), 0) << err.str();
  const nlohmann::json j = nlohmann::json::parse(out.str());
  ASSERT_GE(j["pods"].size(), 3u);
  EXPECT_EQ(j["pods"][2]["name"], "web-1");
  EXPECT_TRUE(j["pods"][2]["node"].is_null());
  EXPECT_EQ(j["pods"][2]["message"],
            "0/4 nodes are available: 4 node(s) didn't match pod affinity rules. preemption: 0/4 "
            "nodes are available: 4 Preemption is not helpful for scheduling.");
}

}  // namespace
}  // namespace schedhost::cli
