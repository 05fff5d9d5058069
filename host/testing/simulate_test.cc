// schedhost::testing::Simulate and Explain: the real host (`schedctl simulate`) in-process with
// the Probe plugin loaded from its .so next to the default profile.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <schedhost/testing.hpp>

namespace {

using schedhost::testing::Code;
using schedhost::testing::NodeYaml;
using schedhost::testing::PodYaml;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The default profile plus Probe (at most one pod of an app per node).
constexpr std::string_view kConfig = R"(
[host]
parallelism = 2
libraries = [{ path = "/installed/elsewhere/probe.so" }]

[[profile]]
name = "default-scheduler"
[profile.plugins.multi_point]
enabled = [{ name = "Probe", weight = 3 }]
)";

std::string Cluster() {
  return NodeYaml("n1") + "---\n" + NodeYaml("n2") + "---\n" +
         PodYaml("web-1", {{"app", "web"}}, {{"cpu", "100m"}}) + "---\n" +
         PodYaml("web-2", {{"app", "web"}}, {{"cpu", "100m"}}) + "---\n" +
         PodYaml("web-3", {{"app", "web"}}, {{"cpu", "100m"}}) + "---\n" +
         PodYaml("db", {{"app", "db"}}, {{"cpu", "100m"}});
}

schedhost::testing::SimulateOptions Options() { return {.libraries = {PROBE_PLUGIN}}; }

TEST(Simulate, PlacesPodsWithThePluginInTheRealHost) {
  const auto r = schedhost::testing::Simulate(kConfig, Cluster(), Options());
  EXPECT_TRUE(r.idle);
  ASSERT_EQ(r.pods.size(), 4u);
  const auto* web1 = r.Find("web-1");
  const auto* web2 = r.Find("default/web-2");
  ASSERT_NE(web1, nullptr);
  ASSERT_NE(web2, nullptr);
  ASSERT_TRUE(web1->node && web2->node);
  EXPECT_NE(*web1->node, *web2->node) << "Probe spreads the app";
  EXPECT_EQ(web1->status, "Bound");

  const auto* web3 = r.Find("web-3");
  ASSERT_NE(web3, nullptr);
  EXPECT_EQ(web3->status, "Pending");
  EXPECT_EQ(web3->node, std::nullopt);
  EXPECT_THAT(web3->message, HasSubstr("2 node(s) already run 1 pod(s) of app web"));
  // DefaultPreemption finds no victim (equal priority); Probe's PostFilter then nominates.
  EXPECT_EQ(web3->nominated_node, "n1");

  const auto* db = r.Find("db");
  ASSERT_NE(db, nullptr);
  EXPECT_TRUE(db->node.has_value());
  EXPECT_TRUE(r.evicted.empty());
}

TEST(Simulate, WithoutThePluginEveryPodFits) {
  const auto r = schedhost::testing::Simulate("", Cluster());
  for (const auto& p : r.pods) EXPECT_EQ(p.status, "Bound") << p.name;
}

TEST(Simulate, RefusedInputsSayWhy) {
  EXPECT_THAT([] { schedhost::testing::Simulate(kConfig, "kind: Nonsense\n", Options()); },
              ::testing::ThrowsMessage<schedhost::testing::Error>(HasSubstr("Nonsense")));
  // The config's own library path, not replaced: the loader names it.
  EXPECT_THAT([] { schedhost::testing::Simulate(kConfig, Cluster()); },
              ::testing::ThrowsMessage<schedhost::testing::Error>(
                  HasSubstr("/installed/elsewhere/probe.so")));
}

TEST(Explain, ExplainsEachPendingPodsCycle) {
  const auto r = schedhost::testing::Explain(kConfig, Cluster(), Options());
  ASSERT_EQ(r.pods.size(), 4u);
  const auto* web1 = r.Find("web-1");
  ASSERT_NE(web1, nullptr);
  ASSERT_EQ(web1->nodes.size(), 2u);
  EXPECT_TRUE(web1->nodes[0].feasible);
  ASSERT_EQ(web1->scores.size(), 2u);
  bool saw_probe = false;
  for (const auto& p : web1->scores[0].plugins) {
    if (p.plugin != "Probe") continue;
    saw_probe = true;
    EXPECT_EQ(p.raw, 0);
    EXPECT_EQ(p.normalized, 100);
    EXPECT_EQ(p.weighted, 300);
  }
  EXPECT_TRUE(saw_probe);
  ASSERT_TRUE(web1->placed.has_value());

  const auto* web3 = r.Find("web-3");
  ASSERT_NE(web3, nullptr);
  EXPECT_EQ(web3->placed, std::nullopt);
  ASSERT_EQ(web3->nodes.size(), 2u);
  for (const auto& n : web3->nodes) {
    EXPECT_FALSE(n.feasible);
    EXPECT_EQ(n.result.plugin, "Probe");
    EXPECT_EQ(n.result.code, Code::kUnschedulable);
    EXPECT_THAT(n.result.reasons, ElementsAre("node(s) already run 1 pod(s) of app web"));
  }
  EXPECT_THAT(web3->message, HasSubstr("0/2 nodes are available"));
  EXPECT_EQ(web3->nominated_node, "n1");
  EXPECT_THAT(r.json, HasSubstr("\"placed\""));
}

}  // namespace
