// Cycles whose Score runs on the host's helper threads, each ended (its CycleState freed, the
// plugin's state destroyed) right after: ThreadSanitizer must see the helpers' work ordered
// before the end although the harness library that joins them is not built with it.
#include <gtest/gtest.h>

#include <schedhost/testing.hpp>
#include <string>

namespace {

using schedhost::testing::Cycle;
using schedhost::testing::Harness;
using schedhost::testing::NodeYaml;
using schedhost::testing::PodYaml;

TEST(TsanHarness, ParallelScoreThenTheCycleEnds) {
  Harness h({.libraries = {PROBE_PLUGIN}});
  h.UsePlugins({"Probe"}, "[profile.plugin_config.Probe]\nmax_per_node = 100\n");
  std::string nodes;
  for (int i = 0; i < 64; ++i) {
    std::string name = "n";
    name += std::to_string(i);
    nodes += NodeYaml(name) + "---\n";
  }
  h.AddObjects(nodes);
  for (int round = 0; round < 20; ++round) {
    Cycle c = h.StartCycle(PodYaml("web", {{"app", "web"}}));
    ASSERT_TRUE(c.PreFilter().ok());
    ASSERT_EQ(c.FilterAll().size(), 64u);
    ASSERT_TRUE(c.PreScore().ok());
    ASSERT_EQ(c.Score().size(), 64u);
  }
}

// A whole simulation with the plugin enabled: Filter and Score on the pool, binding cycles on
// the host's executor, every host thread joined at the end.
TEST(TsanHarness, ASimulationWithThePlugin) {
  std::string manifests;
  for (int i = 0; i < 32; ++i) {
    std::string node = "n";
    node += std::to_string(i);
    std::string pod = "web-";
    pod += std::to_string(i);
    manifests += NodeYaml(node) + "---\n" + PodYaml(pod, {{"app", "web"}}) + "---\n";
  }
  const schedhost::testing::SimulationResult r = schedhost::testing::Simulate(
      "[[profile]]\n[profile.plugins.multi_point]\nenabled = [{ name = \"Probe\" }]\n"
      "[profile.plugin_config.Probe]\nmax_per_node = 1\n",
      manifests, {.libraries = {PROBE_PLUGIN}});
  ASSERT_EQ(r.pods.size(), 32u);
  for (const auto& p : r.pods) EXPECT_TRUE(p.node.has_value()) << p.name << ": " << p.message;
}

}  // namespace
