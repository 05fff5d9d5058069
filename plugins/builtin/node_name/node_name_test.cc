// NodeName through the real framework: spec.nodeName restricts a pod to that one node
// (upstream pkg/scheduler/framework/plugins/nodename behaviour).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "host/framework/testing/harness.h"

namespace schedhost::plugins {
namespace {

using framework::Code;
using framework::testing::Harness;

constexpr char kReason[] = "node(s) didn't match the requested node name";

constexpr char kCluster[] = R"(
apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-c}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
)";

std::string PodNamed(const std::string& node_name) {
  std::string yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n";
  if (!node_name.empty()) yaml += "  nodeName: " + node_name + "\n";
  yaml += "  containers: [{name: c, image: busybox}]\n";
  return yaml;
}

struct FilterCase {
  std::string name;
  std::string node_name;            // the pod's spec.nodeName
  std::vector<std::string> passes;  // nodes that must pass; every other node is rejected

  friend void PrintTo(const FilterCase& c, std::ostream* os) { *os << c.name; }
};

class NodeNameFilterTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(NodeNameFilterTest, FiltersByRequestedNodeName) {
  const FilterCase& c = GetParam();
  Harness h;
  h.OnlyPlugins({"NodeName"});
  h.AddObjects(kCluster);
  auto pod = h.MakePod(PodNamed(c.node_name));
  auto results = h.RunFilter(*pod);
  ASSERT_EQ(results.size(), 3u);
  for (const auto& r : results) {
    SCOPED_TRACE(r.node);
    bool passes = std::find(c.passes.begin(), c.passes.end(), r.node) != c.passes.end();
    if (passes) {
      EXPECT_EQ(r.status.code, Code::kSuccess) << r.status.Message();
    } else {
      EXPECT_EQ(r.status.code, Code::kUnschedulableAndUnresolvable);
      EXPECT_EQ(r.status.reasons, schedhost::framework::Reasons{kReason});
      EXPECT_EQ(r.status.plugin, "NodeName");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, NodeNameFilterTest,
                         ::testing::Values(
                             // No nodeName: every node fits.
                             FilterCase{"no_node_name", "", {"node-a", "node-b", "node-c"}},
                             // nodeName of an existing node: only that node fits.
                             FilterCase{"names_node_b", "node-b", {"node-b"}},
                             // nodeName of a node not in the cluster: nothing fits.
                             FilterCase{"names_missing_node", "node-z", {}},
                             // Names are compared exactly, not by prefix or case.
                             FilterCase{"prefix_is_not_a_match", "node", {}},
                             FilterCase{"longer_name_is_not_a_match", "node-b2", {}}),
                         [](const auto& info) { return info.param.name; });

TEST(NodeNameTest, ScheduleReportsUpstreamFailureMessage) {
  Harness h;
  h.OnlyPlugins({"NodeName"});
  h.AddObjects(kCluster);
  std::string failure;
  EXPECT_EQ(h.Schedule(*h.MakePod(PodNamed("node-z")), &failure), "");
  EXPECT_EQ(failure, "0/3 nodes are available: 3 node(s) didn't match the requested node name.");
  EXPECT_EQ(h.Schedule(*h.MakePod(PodNamed("node-c"))), "node-c");
}

TEST(NodeNameTest, RegistersNodeAddAndUpdate) {
  Harness h;
  h.OnlyPlugins({"NodeName"});
  bool found = false;
  for (const auto& [plugin, events] : h.framework().EventsToRegister()) {
    if (plugin != "NodeName") continue;
    found = true;
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].event.resource, SCHEDHOST_RESOURCE_NODE);
    EXPECT_EQ(events[0].event.actions, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE);
    EXPECT_EQ(events[0].hint, nullptr);
  }
  EXPECT_TRUE(found);
}

TEST(NodeNameTest, AcceptsAnEmptyArgumentTable) {
  Harness h;
  h.OnlyPlugins({"NodeName"}, "[profile.plugin_config.NodeName]\n");
  EXPECT_NO_THROW(h.framework());
}

TEST(NodeNameTest, RejectsArguments) {
  Harness h;
  h.OnlyPlugins({"NodeName"}, "[profile.plugin_config.NodeName]\nnode = \"x\"\n");
  try {
    h.framework();
    FAIL() << "a profile with NodeName arguments was accepted";
  } catch (const std::exception& e) {
    // The error names the TOML location, the key and why it is refused.
    EXPECT_THAT(e.what(), ::testing::ContainsRegex(
                              R"(test\.toml:[0-9]+:[0-9]+: plugin_config\.NodeName\.node: )"
                              R"(NodeName takes no arguments)"));
  }
}

}  // namespace
}  // namespace schedhost::plugins
