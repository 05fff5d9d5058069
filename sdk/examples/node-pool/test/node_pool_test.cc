// NodePool inside the real host, in-process (schedhost::testing, libschedhost-testing.so): the
// built node_pool.so is loaded through the host's loader exactly as schedhostd loads it, then
// driven extension point by extension point on a cluster, asked for queueing hints, and once run
// by the whole host on example/cluster.yaml with example/schedhost.toml.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <schedhost/plugin.h>

#include <fstream>
#include <schedhost/testing.hpp>
#include <sstream>
#include <string>

namespace {

using schedhost::testing::Code;
using schedhost::testing::Cycle;
using schedhost::testing::Event;
using schedhost::testing::Harness;
using schedhost::testing::NodeYaml;
using schedhost::testing::PodYaml;
using schedhost::testing::QueueingHint;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kPool = "example.com/pool";

// A profile of NodePool alone (plus the queue sort and binder every profile needs), on a gpu
// pool node, a batch pool node and a node in no pool.
class NodePoolTest : public ::testing::Test {
 protected:
  NodePoolTest() : h_({.libraries = {NODE_POOL_LIBRARY}}) {
    h_.UsePlugins({"NodePool"});
    h_.AddObjects(NodeYaml("gpu-1", {{kPool, "gpu"}}) + "---\n" +
                  NodeYaml("batch-1", {{kPool, "batch"}}) + "---\n" + NodeYaml("general-1"));
  }

  Harness h_;
};

TEST_F(NodePoolTest, PodWithPoolLabelFitsOnlyItsPool) {
  Cycle c = h_.StartCycle(PodYaml("trainer", {{kPool, "gpu"}}));
  ASSERT_TRUE(c.PreFilter().ok());  // NodePool's PreFilter narrows no node set
  EXPECT_EQ(c.PreFilterNodes(), std::nullopt);
  const auto results = c.FilterAll();  // by node name
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].node, "batch-1");
  EXPECT_EQ(results[0].result.code, Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(results[0].result.plugin, "NodePool");
  EXPECT_THAT(results[0].result.reasons, ElementsAre("node(s) not in pool gpu"));
  EXPECT_EQ(results[1].node, "general-1");
  EXPECT_EQ(results[1].result.code, Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(results[2].node, "gpu-1");
  EXPECT_TRUE(results[2].result.ok());
  EXPECT_EQ(h_.ScheduleOne(PodYaml("trainer", {{kPool, "gpu"}})).node, "gpu-1");
}

TEST_F(NodePoolTest, PodWithoutPoolLabelFitsEverywhereAndPrefersGeneralNodes) {
  Cycle c = h_.StartCycle(PodYaml("web", {{"app", "web"}}));
  ASSERT_TRUE(c.PreFilter().ok());
  for (const auto& r : c.FilterAll()) EXPECT_TRUE(r.result.ok()) << r.node;
  ASSERT_TRUE(c.PreScore().ok());
  const auto scores = c.Score();
  ASSERT_EQ(scores.size(), 3u);
  for (const auto& s : scores) {
    ASSERT_EQ(s.plugins.size(), 1u);
    EXPECT_EQ(s.plugins[0].plugin, "NodePool");
    // No NormalizeScore: the normalised score is the raw one.
    EXPECT_EQ(s.plugins[0].normalized, s.plugins[0].raw);
    EXPECT_EQ(s.total, s.node == "general-1" ? SCHEDHOST_MAX_NODE_SCORE : SCHEDHOST_MIN_NODE_SCORE)
        << s.node;
  }
  EXPECT_EQ(h_.ScheduleOne(PodYaml("web", {{"app", "web"}})).node, "general-1");
}

TEST_F(NodePoolTest, PodOfAPoolWithoutNodesFitsNowhere) {
  const auto r = h_.ScheduleOne(PodYaml("analytics", {{kPool, "spark"}}));
  EXPECT_EQ(r.node, "");
  EXPECT_EQ(r.message, "0/3 nodes are available: 3 node(s) not in pool spark.");
}

// max_pods is a rule across nodes: PreFilter counts the pool's pods over the whole snapshot,
// Filter reads the count, and AddPod/RemovePod change it in the cycle's copy of the state the
// way the host asks when it weighs nominated pods and preemption victims.
TEST_F(NodePoolTest, MaxPodsCountsThePoolAcrossNodes) {
  h_.UsePlugins({"NodePool"}, "[profile.plugin_config.NodePool]\nmax_pods = 2\n");
  h_.AddObjects(NodeYaml("gpu-2", {{kPool, "gpu"}}) + "---\n" +
                PodYaml("t1", {{kPool, "gpu"}}, {}, "gpu-1") + "---\n" +
                PodYaml("other", {{"app", "web"}}, {}, "gpu-2"));
  // One pod of the pool runs (on gpu-1); "other" has no pool label and does not count.
  Cycle c = h_.StartCycle(PodYaml("t2", {{kPool, "gpu"}}));
  ASSERT_TRUE(c.PreFilter().ok());
  EXPECT_TRUE(c.Filter("gpu-2").ok());
  // A pod of the pool added on gpu-2 (the host does this for a pod nominated there before it
  // filters gpu-2) fills the pool: the count is the pool's, not the node's.
  ASSERT_TRUE(c.AddPod(PodYaml("t3", {{kPool, "gpu"}}), "gpu-2").ok());
  for (const char* node : {"gpu-1", "gpu-2"}) {
    const auto r = c.Filter(node);
    EXPECT_EQ(r.code, Code::kUnschedulable) << node;  // not Unresolvable: preemption can help
    EXPECT_THAT(r.reasons, ElementsAre("node pool is full: gpu")) << node;
  }
  // A victim removed from gpu-1 makes room again, on every node of the pool.
  ASSERT_TRUE(c.RemovePod("default/t1", "gpu-1").ok());
  EXPECT_TRUE(c.Filter("gpu-1").ok());
  EXPECT_TRUE(c.Filter("gpu-2").ok());
  // A pod of another pool, or on a node outside the pool, changes nothing.
  ASSERT_TRUE(c.AddPod(PodYaml("b1", {{kPool, "batch"}}), "batch-1").ok());
  ASSERT_TRUE(c.AddPod(PodYaml("t4", {{kPool, "gpu"}}), "general-1").ok());
  EXPECT_TRUE(c.Filter("gpu-1").ok());
  // The pool's nodes still score 100 for the pod, the others are filtered out.
  EXPECT_EQ(c.FilterAll().size(), 4u);
  ASSERT_TRUE(c.PreScore().ok());
  for (const auto& s : c.Score()) EXPECT_EQ(s.total, 100 * 1) << s.node;
  // A fresh cycle sees the cluster as it is: two pool pods would be one too many.
  h_.AddObjects(PodYaml("t5", {{kPool, "gpu"}}, {}, "gpu-2"));
  EXPECT_EQ(h_.ScheduleOne(PodYaml("t6", {{kPool, "gpu"}})).node, "");
}

TEST_F(NodePoolTest, WithoutMaxPodsThePoolHasNoLimit) {
  h_.AddObjects(PodYaml("t1", {{kPool, "gpu"}}, {}, "gpu-1") + "---\n" +
                PodYaml("t2", {{kPool, "gpu"}}, {}, "gpu-1"));
  EXPECT_EQ(h_.ScheduleOne(PodYaml("t3", {{kPool, "gpu"}})).node, "gpu-1");
}

TEST_F(NodePoolTest, LabelIsConfigurable) {
  h_.UsePlugins({"NodePool"}, "[profile.plugin_config.NodePool]\nlabel = \"team\"\n");
  h_.AddObjects(NodeYaml("red-1", {{"team", "red"}}));
  Cycle c = h_.StartCycle(PodYaml("p", {{"team", "red"}}));
  ASSERT_TRUE(c.PreFilter().ok());
  EXPECT_TRUE(c.Filter("red-1").ok());
  EXPECT_EQ(c.Filter("gpu-1").code, Code::kUnschedulableAndUnresolvable);
}

TEST_F(NodePoolTest, BadArgumentsFailTheProfileWithTheirLocation) {
  struct Case {
    const char* args;
    const char* want;
  };
  for (const Case& c : {
           Case{"label = \"not a label!\"",
                "plugin_config.NodePool.label: \"not a label!\" is not a valid label name"},
           Case{"lable = \"x\"", "plugin_config.NodePool.lable: unknown key"},
           Case{"label = 3", "expected a string"},
           Case{"max_pods = -1", "plugin_config.NodePool.max_pods"},
       }) {
    h_.UsePlugins({"NodePool"}, std::string("[profile.plugin_config.NodePool]\n") + c.args + "\n");
    EXPECT_THAT([&] { h_.PluginNames(); },
                ::testing::ThrowsMessage<schedhost::testing::Error>(::testing::AllOf(
                    HasSubstr(c.want),
                    ::testing::ContainsRegex("\\.toml:[0-9]+:[0-9]+: plugin_config\\.NodePool"))))
        << c.args;
  }
}

TEST_F(NodePoolTest, RequeuesOnlyForItsPool) {
  const auto regs = h_.EventsToRegister();
  ASSERT_EQ(regs.size(), 3u);
  EXPECT_EQ(regs[0].plugin, "NodePool");
  EXPECT_EQ(regs[0].resource, SCHEDHOST_RESOURCE_NODE);
  EXPECT_EQ(regs[0].actions, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE_NODE_LABEL);
  EXPECT_TRUE(regs[0].has_hint);
  EXPECT_EQ(regs[1].resource, SCHEDHOST_RESOURCE_ASSIGNED_POD);
  EXPECT_EQ(regs[1].actions, SCHEDHOST_ACTION_DELETE);
  EXPECT_TRUE(regs[1].has_hint);
  EXPECT_EQ(regs[2].resource, SCHEDHOST_KIND_EVENT(0));  // NodePool objects
  EXPECT_EQ(regs[2].actions, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE);
  EXPECT_TRUE(regs[2].has_hint);

  const std::string pod = PodYaml("trainer", {{kPool, "gpu"}});
  const std::string plain = NodeYaml("n");
  struct Case {
    const char* name;
    Event event;
    QueueingHint want;
  };
  for (const Case& c : {
           Case{"node of its pool added", Event::NodeAdd(NodeYaml("gpu-2", {{kPool, "gpu"}})),
                QueueingHint::kQueue},
           Case{"node of another pool added",
                Event::NodeAdd(NodeYaml("batch-2", {{kPool, "batch"}})), QueueingHint::kSkip},
           Case{"node relabelled into its pool",
                Event::NodeUpdate(plain, NodeYaml("n", {{kPool, "gpu"}})), QueueingHint::kQueue},
           Case{"node relabelled into another pool",
                Event::NodeUpdate(plain, NodeYaml("n", {{kPool, "batch"}})), QueueingHint::kSkip},
           Case{"node resized", Event::NodeUpdate(plain, NodeYaml("n", {}, {{"cpu", "64"}})),
                QueueingHint::kSkip},
           Case{"node deleted", Event::NodeDelete(plain), QueueingHint::kSkip},
           // A pod leaving its pool may make room (a limit may come from a NodePool object).
           Case{"pod of its pool deleted",
                Event::AssignedPodDelete(PodYaml("t1", {{kPool, "gpu"}}, {}, "gpu-1")),
                QueueingHint::kQueue},
       }) {
    EXPECT_EQ(h_.Hint("NodePool", pod, c.event), c.want) << c.name;
  }
  h_.UsePlugins({"NodePool"}, "[profile.plugin_config.NodePool]\nmax_pods = 1\n");
  EXPECT_EQ(h_.Hint("NodePool", pod,
                    Event::AssignedPodDelete(PodYaml("t1", {{kPool, "gpu"}}, {}, "gpu-1"))),
            QueueingHint::kQueue);
  EXPECT_EQ(h_.Hint("NodePool", pod,
                    Event::AssignedPodDelete(PodYaml("b1", {{kPool, "batch"}}, {}, "batch-1"))),
            QueueingHint::kSkip);
}

// A NodePool object sets its pool's limit, over max_pods; one that does not decode leaves the
// pod pending naming the field.
TEST_F(NodePoolTest, ANodePoolObjectSetsItsPoolsLimit) {
  h_.AddObjects(NodeYaml("gpu-2", {{kPool, "gpu"}}) + "---\n" +
                PodYaml("t1", {{kPool, "gpu"}}, {}, "gpu-1") + "---\n" +
                "apiVersion: example.com/v1\nkind: NodePool\nmetadata: {name: gpu}\n"
                "spec: {maxPods: 1}\n---\n"
                "apiVersion: example.com/v1\nkind: NodePool\nmetadata: {name: batch}\n"
                "spec: {maxPods: many}\n");
  // No max_pods in the config: the object's limit alone fills the gpu pool.
  const auto full = h_.ScheduleOne(PodYaml("t2", {{kPool, "gpu"}}));
  EXPECT_EQ(full.node, "");
  EXPECT_THAT(full.message, HasSubstr("node pool is full: gpu"));
  const auto bad = h_.ScheduleOne(PodYaml("b1", {{kPool, "batch"}}));
  EXPECT_EQ(bad.node, "");
  EXPECT_THAT(bad.message, HasSubstr("NodePool batch: spec.maxPods"));
  // A pool without an object has max_pods' limit: none here.
  EXPECT_EQ(h_.ScheduleOne(PodYaml("g1", {{kPool, "general"}})).node, "");
  h_.AddObjects(NodeYaml("general-2", {{kPool, "general"}}));
  EXPECT_EQ(h_.ScheduleOne(PodYaml("g1", {{kPool, "general"}})).node, "general-2");
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The whole host on the example: the config as shipped, its library path replaced by the file
// this build made.
TEST(NodePoolInTheHost, SchedulesTheExampleCluster) {
  const auto r = schedhost::testing::Simulate(Read(NODE_POOL_EXAMPLE_DIR "/schedhost.toml"),
                                              Read(NODE_POOL_EXAMPLE_DIR "/cluster.yaml"),
                                              {.libraries = {NODE_POOL_LIBRARY}});
  ASSERT_NE(r.Find("trainer"), nullptr);
  EXPECT_EQ(r.Find("trainer")->node, "gpu-1");
  // Without NodePool the roomier gpu-1 would win.
  EXPECT_EQ(r.Find("web")->node, "general-1");
  const auto* analytics = r.Find("analytics");
  EXPECT_EQ(analytics->status, "Pending");
  EXPECT_THAT(analytics->message, HasSubstr("2 node(s) not in pool batch"));

  const auto explained = schedhost::testing::Explain(Read(NODE_POOL_EXAMPLE_DIR "/schedhost.toml"),
                                                     Read(NODE_POOL_EXAMPLE_DIR "/cluster.yaml"),
                                                     {.libraries = {NODE_POOL_LIBRARY}});
  const auto* web = explained.Find("web");
  ASSERT_NE(web, nullptr);
  EXPECT_THAT(web->best, ElementsAre("general-1"));
}

}  // namespace
