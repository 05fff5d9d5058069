// NodeUnschedulable through the real framework: a cordoned node (spec.unschedulable) takes only
// pods tolerating {node.kubernetes.io/unschedulable, NoSchedule}
// (upstream pkg/scheduler/framework/plugins/nodeunschedulable behaviour).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "host/framework/testing/harness.h"

namespace schedhost::plugins {
namespace {

using framework::Code;
using framework::testing::Harness;

constexpr char kReason[] = "node(s) were unschedulable";

constexpr char kCluster[] = R"(
apiVersion: v1
kind: Node
metadata: {name: open}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: cordoned}
spec: {unschedulable: true}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
)";

std::string PodWithTolerations(const std::string& tolerations) {
  std::string yaml =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
      "  containers: [{name: c, image: busybox}]\n";
  if (!tolerations.empty()) yaml += "  tolerations: " + tolerations + "\n";
  return yaml;
}

struct Case {
  std::string name;
  std::string tolerations;  // YAML flow sequence, "" for none
  bool fits_cordoned;

  friend void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }
};

class NodeUnschedulableFilterTest : public ::testing::TestWithParam<Case> {};

TEST_P(NodeUnschedulableFilterTest, CordonedNodeNeedsToleration) {
  const Case& c = GetParam();
  Harness h;
  h.OnlyPlugins({"NodeUnschedulable"});
  h.AddObjects(kCluster);
  auto results = h.RunFilter(*h.MakePod(PodWithTolerations(c.tolerations)));
  ASSERT_EQ(results.size(), 2u);
  for (const auto& r : results) {
    SCOPED_TRACE(r.node);
    if (r.node == "open" || c.fits_cordoned) {
      EXPECT_EQ(r.status.code, Code::kSuccess) << r.status.Message();
    } else {
      EXPECT_EQ(r.status.code, Code::kUnschedulableAndUnresolvable);
      EXPECT_EQ(r.status.reasons, schedhost::framework::Reasons{kReason});
      EXPECT_EQ(r.status.plugin, "NodeUnschedulable");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, NodeUnschedulableFilterTest,
    ::testing::Values(
        Case{"no_tolerations", "", false},
        Case{"exists_with_no_schedule",
             "[{key: node.kubernetes.io/unschedulable, operator: Exists, effect: NoSchedule}]",
             true},
        // The taint carries no value, so Equal with an empty value matches it.
        Case{"equal_empty_value",
             "[{key: node.kubernetes.io/unschedulable, operator: Equal, effect: NoSchedule}]",
             true},
        // An empty operator means Equal.
        Case{"default_operator", "[{key: node.kubernetes.io/unschedulable, effect: NoSchedule}]",
             true},
        Case{"equal_other_value",
             "[{key: node.kubernetes.io/unschedulable, operator: Equal, value: \"true\", "
             "effect: NoSchedule}]",
             false},
        // An empty effect matches every effect.
        Case{"exists_any_effect", "[{key: node.kubernetes.io/unschedulable, operator: Exists}]",
             true},
        // An empty key with Exists tolerates every taint.
        Case{"tolerate_everything", "[{operator: Exists}]", true},
        Case{"wrong_effect_no_execute",
             "[{key: node.kubernetes.io/unschedulable, operator: Exists, effect: NoExecute}]",
             false},
        Case{"wrong_effect_prefer",
             "[{key: node.kubernetes.io/unschedulable, operator: Exists, "
             "effect: PreferNoSchedule}]",
             false},
        Case{"other_key", "[{key: node.kubernetes.io/not-ready, operator: Exists}]", false},
        // One matching toleration among others is enough.
        Case{"second_toleration_matches",
             "[{key: dedicated, operator: Equal, value: gpu}, "
             "{key: node.kubernetes.io/unschedulable, operator: Exists}]",
             true}),
    [](const auto& info) { return info.param.name; });

TEST(NodeUnschedulableTest, ScheduleAvoidsCordonedNodeAndReportsIt) {
  Harness h;
  h.OnlyPlugins({"NodeUnschedulable"});
  h.AddObjects(kCluster);
  EXPECT_EQ(h.Schedule(*h.MakePod(PodWithTolerations(""))), "open");

  Harness only_cordoned;
  only_cordoned.OnlyPlugins({"NodeUnschedulable"});
  only_cordoned.AddObjects(R"(
apiVersion: v1
kind: Node
metadata: {name: cordoned}
spec: {unschedulable: true}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
)");
  std::string failure;
  EXPECT_EQ(only_cordoned.Schedule(*only_cordoned.MakePod(PodWithTolerations("")), &failure), "");
  EXPECT_EQ(failure, "0/1 nodes are available: 1 node(s) were unschedulable.");
}

TEST(NodeUnschedulableTest, RegistersNodeAddAndTaintUpdate) {
  Harness h;
  h.OnlyPlugins({"NodeUnschedulable"});
  bool found = false;
  for (const auto& [plugin, events] : h.framework().EventsToRegister()) {
    if (plugin != "NodeUnschedulable") continue;
    found = true;
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].event.resource, SCHEDHOST_RESOURCE_NODE);
    EXPECT_EQ(events[0].event.actions, SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE_NODE_TAINT);
  }
  EXPECT_TRUE(found);
}

TEST(NodeUnschedulableTest, RejectsArguments) {
  Harness h;
  h.OnlyPlugins({"NodeUnschedulable"},
                "[profile.plugin_config.NodeUnschedulable]\nstrict = true\n");
  try {
    h.framework();
    FAIL() << "a profile with NodeUnschedulable arguments was accepted";
  } catch (const std::exception& e) {
    // The error names the TOML location, the key and why it is refused.
    EXPECT_THAT(e.what(),
                ::testing::ContainsRegex(
                    R"(test\.toml:[0-9]+:[0-9]+: plugin_config\.NodeUnschedulable\.strict: )"
                    R"(NodeUnschedulable takes no arguments)"));
  }
}

}  // namespace
}  // namespace schedhost::plugins
