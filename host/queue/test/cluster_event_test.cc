// Cluster events: registration matching, what counts as a pod update that may help, and the
// fine-grained update bits computed for pods and nodes.
#include "host/queue/cluster_event.h"

#include <gtest/gtest.h>

#include <functional>

#include "host/queue/test/queue_test_util.h"

namespace schedhost::queue {
namespace {

using testing::MakePod;
using testing::TestPod;
using testing::With;

model::Quantity Q(std::string_view text) { return *model::Quantity::Parse(text); }

TEST(EventMatchesTest, Table) {
  struct Case {
    const char* name;
    schedhost_cluster_event registered;
    schedhost_event_resource resource;
    int32_t actions;
    bool want;
  };
  const Case cases[] = {
      {"same resource and action",
       {SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ADD},
       SCHEDHOST_RESOURCE_NODE,
       SCHEDHOST_ACTION_ADD,
       true},
      {"action bits must intersect",
       {SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ADD},
       SCHEDHOST_RESOURCE_NODE,
       SCHEDHOST_ACTION_UPDATE_NODE_LABEL,
       false},
      {"update mask covers a label update",
       {SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_UPDATE},
       SCHEDHOST_RESOURCE_NODE,
       SCHEDHOST_ACTION_UPDATE_NODE_LABEL,
       true},
      {"other resource",
       {SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ALL},
       SCHEDHOST_RESOURCE_ASSIGNED_POD,
       SCHEDHOST_ACTION_ADD,
       false},
      {"Pod covers assigned pods",
       {SCHEDHOST_RESOURCE_POD, SCHEDHOST_ACTION_DELETE},
       SCHEDHOST_RESOURCE_ASSIGNED_POD,
       SCHEDHOST_ACTION_DELETE,
       true},
      {"Pod covers unscheduled pods",
       {SCHEDHOST_RESOURCE_POD, SCHEDHOST_ACTION_UPDATE},
       SCHEDHOST_RESOURCE_UNSCHEDULED_POD,
       SCHEDHOST_ACTION_UPDATE_POD_LABEL,
       true},
      {"AssignedPod does not cover Pod events",
       {SCHEDHOST_RESOURCE_ASSIGNED_POD, SCHEDHOST_ACTION_ADD},
       SCHEDHOST_RESOURCE_UNSCHEDULED_POD,
       SCHEDHOST_ACTION_ADD,
       false},
      {"wildcard resource with matching action",
       {SCHEDHOST_RESOURCE_WILDCARD, SCHEDHOST_ACTION_DELETE},
       SCHEDHOST_RESOURCE_PDB,
       SCHEDHOST_ACTION_DELETE,
       true},
      {"wildcard resource, other action",
       {SCHEDHOST_RESOURCE_WILDCARD, SCHEDHOST_ACTION_DELETE},
       SCHEDHOST_RESOURCE_PDB,
       SCHEDHOST_ACTION_ADD,
       false},
      {"full wildcard registration",
       {SCHEDHOST_RESOURCE_WILDCARD, SCHEDHOST_ACTION_ALL},
       SCHEDHOST_RESOURCE_PRIORITY_CLASS,
       SCHEDHOST_ACTION_ADD,
       true},
      {"wildcard event matches anything",
       {SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ADD},
       SCHEDHOST_RESOURCE_WILDCARD,
       SCHEDHOST_ACTION_ALL,
       true},
  };
  for (const Case& c : cases) {
    ClusterEvent ev;
    ev.resource = c.resource;
    ev.actions = c.actions;
    EXPECT_EQ(EventMatches(EventRegistration{c.registered, nullptr, ""}, ev), c.want) << c.name;
  }
}

TEST(EventMatchesTest, DeclaredKindsMatchByKey) {
  const std::string kGroups = "podgroups.scheduling.x-k8s.io";
  const ClusterEvent add = MakeObjectEvent(kGroups, "PodGroup", nullptr,
                                           std::make_shared<model::ValueNode>());
  const ClusterEvent update = MakeObjectEvent(kGroups, "PodGroup",
                                              std::make_shared<model::ValueNode>(),
                                              std::make_shared<model::ValueNode>());
  const ClusterEvent del = MakeObjectEvent(kGroups, "PodGroup",
                                           std::make_shared<model::ValueNode>(), nullptr);
  EXPECT_EQ(add.label, "PodGroupAdd");
  EXPECT_EQ(update.label, "PodGroupUpdate");
  EXPECT_EQ(update.actions, SCHEDHOST_ACTION_UPDATE);
  EXPECT_EQ(del.label, "PodGroupDelete");
  EXPECT_EQ(del.new_obj.object, nullptr);

  const EventRegistration groups_add{{SCHEDHOST_KIND_EVENT(1), SCHEDHOST_ACTION_ADD}, nullptr,
                                     kGroups};
  EXPECT_TRUE(EventMatches(groups_add, add));
  EXPECT_FALSE(EventMatches(groups_add, update)) << "actions must intersect";
  const EventRegistration quotas{{SCHEDHOST_KIND_EVENT(0), SCHEDHOST_ACTION_ALL}, nullptr,
                                 "elasticquotas.scheduling.x-k8s.io"};
  EXPECT_FALSE(EventMatches(quotas, add)) << "another declared kind";
  const EventRegistration wildcard_delete{{SCHEDHOST_RESOURCE_WILDCARD, SCHEDHOST_ACTION_DELETE},
                                          nullptr, ""};
  EXPECT_TRUE(EventMatches(wildcard_delete, del));
  EXPECT_FALSE(EventMatches(wildcard_delete, add));
  // No built-in registration hears a declared kind, and no declared one a built-in event.
  const EventRegistration node_all{{SCHEDHOST_RESOURCE_NODE, SCHEDHOST_ACTION_ALL}, nullptr, ""};
  EXPECT_FALSE(EventMatches(node_all, add));
  ClusterEvent node_add;
  node_add.resource = SCHEDHOST_RESOURCE_NODE;
  node_add.actions = SCHEDHOST_ACTION_ADD;
  EXPECT_FALSE(EventMatches(groups_add, node_add));
  EXPECT_TRUE(EventMatches(groups_add, MakeWildcardEvent("flush")));
}

TEST(PodUpdateTest, WhatMayMakeAPodSchedulable) {
  auto base = MakePod(TestPod{.name = "p", .labels = {{"app", "web"}}});
  struct Case {
    const char* name;
    std::function<void(model::PodData&)> edit;
    bool want;
  };
  const Case cases[] = {
      {"nothing", [](model::PodData&) {}, false},
      {"status only", [](model::PodData& d) { d.status.nominated_node_name = "n1"; }, false},
      {"resource version only", [](model::PodData& d) { d.metadata.resource_version = 42; }, false},
      {"label",
       [](model::PodData& d) {
         d.metadata.labels = {{"app", "db"}};
       },
       true},
      {"annotation",
       [](model::PodData& d) {
         d.metadata.annotations = {{"a", "b"}};
       },
       true},
      {"node selector", [](model::PodData& d) { d.spec.node_selector["zone"] = "a"; }, true},
      {"toleration", [](model::PodData& d) { d.spec.tolerations.push_back({.key = "k"}); }, true},
      {"gates", [](model::PodData& d) { d.spec.scheduling_gates = {"g"}; }, true},
      {"container request",
       [](model::PodData& d) { d.spec.containers[0].resources.requests["cpu"] = Q("1"); }, true},
      {"affinity",
       [](model::PodData& d) {
         d.spec.affinity.emplace().node_affinity.emplace().preferred.push_back({.weight = 1});
       },
       true},
  };
  for (const Case& c : cases) {
    auto updated = With(base, c.edit);
    EXPECT_EQ(PodUpdateMayMakeSchedulable(*base, *updated), c.want) << c.name;
    // The new version stays queued: comparing must not leave a decoded copy with it.
    EXPECT_FALSE(updated->decoded()) << c.name;
  }
  // The same request in another notation is no change (the packed bytes differ, the values do
  // not).
  auto binary = With(base, [](model::PodData& d) {
    d.spec.containers[0].resources.requests["memory"] = Q("1Gi");
  });
  auto decimal = With(base, [](model::PodData& d) {
    d.spec.containers[0].resources.requests["memory"] = Q("1073741824");
  });
  EXPECT_FALSE(binary->SameSpecAndStatus(*decimal));
  EXPECT_FALSE(PodUpdateMayMakeSchedulable(*binary, *decimal));
}

TEST(PodUpdateTest, ActionBits) {
  auto base = With(MakePod(TestPod{.name = "p", .gates = {"g"}, .labels = {{"app", "web"}}}),
                   [](model::PodData& d) {
                     d.spec.containers[0].resources.requests["cpu"] = Q("500m");
                     d.spec.containers[0].resources.requests["memory"] = Q("1Gi");
                   });
  struct Case {
    const char* name;
    std::function<void(model::PodData&)> edit;
    int32_t want;
  };
  const Case cases[] = {
      {"labels",
       [](model::PodData& d) {
         d.metadata.labels = {{"app", "db"}};
       },
       SCHEDHOST_ACTION_UPDATE_POD_LABEL},
      {"cpu scaled down",
       [](model::PodData& d) { d.spec.containers[0].resources.requests["cpu"] = Q("250m"); },
       SCHEDHOST_ACTION_UPDATE_POD_SCALE_DOWN},
      {"memory request dropped",
       [](model::PodData& d) { d.spec.containers[0].resources.requests.erase("memory"); },
       SCHEDHOST_ACTION_UPDATE_POD_SCALE_DOWN},
      {"scaled up is no specific change",
       [](model::PodData& d) { d.spec.containers[0].resources.requests["cpu"] = Q("2"); },
       SCHEDHOST_ACTION_UPDATE},
      {"tolerations", [](model::PodData& d) { d.spec.tolerations.push_back({.key = "k"}); },
       SCHEDHOST_ACTION_UPDATE_POD_TOLERATIONS},
      {"gates removed", [](model::PodData& d) { d.spec.scheduling_gates.clear(); },
       SCHEDHOST_ACTION_UPDATE_POD_SCHEDULING_GATES_ELIMINATED},
      {"labels and gates",
       [](model::PodData& d) {
         d.metadata.labels = {};
         d.spec.scheduling_gates.clear();
       },
       SCHEDHOST_ACTION_UPDATE_POD_LABEL | SCHEDHOST_ACTION_UPDATE_POD_SCHEDULING_GATES_ELIMINATED},
      {"annotation only",
       [](model::PodData& d) {
         d.metadata.annotations = {{"a", "b"}};
       },
       SCHEDHOST_ACTION_UPDATE},
  };
  for (const Case& c : cases) {
    auto updated = With(base, c.edit);
    EXPECT_EQ(PodUpdateActions(*base, *updated), c.want) << c.name;
    EXPECT_FALSE(updated->decoded()) << c.name;
  }
  ClusterEvent ev = MakeAssignedPodUpdateEvent(base, With(base, cases[0].edit));
  EXPECT_EQ(ev.resource, SCHEDHOST_RESOURCE_ASSIGNED_POD);
  EXPECT_EQ(ev.actions, SCHEDHOST_ACTION_UPDATE_POD_LABEL);
  EXPECT_EQ(ev.old_obj.pod, base);
  EXPECT_EQ(ev.label, "AssignedPodUpdate");
}

std::shared_ptr<const model::Node> MakeNode(const std::function<void(model::NodeData&)>& edit) {
  model::NodeData d;
  d.metadata.name = "n1";
  d.metadata.uid = "uid-n1";
  d.metadata.labels = {{"zone", "a"}};
  d.status.allocatable = {{"cpu", Q("4")}, {"memory", Q("8Gi")}};
  d.status.conditions = {{"Ready", "True"}, {"DiskPressure", "False"}};
  edit(d);
  return model::Node::Make(std::move(d));
}

TEST(NodeUpdateTest, ActionBits) {
  auto base = MakeNode([](model::NodeData&) {});
  struct Case {
    const char* name;
    std::function<void(model::NodeData&)> edit;
    int32_t want;
  };
  const Case cases[] = {
      {"nothing", [](model::NodeData&) {}, 0},
      {"resource version only", [](model::NodeData& d) { d.metadata.resource_version = 7; }, 0},
      {"allocatable", [](model::NodeData& d) { d.status.allocatable["cpu"] = Q("8"); },
       SCHEDHOST_ACTION_UPDATE_NODE_ALLOCATABLE},
      {"labels",
       [](model::NodeData& d) {
         d.metadata.labels = {{"zone", "b"}};
       },
       SCHEDHOST_ACTION_UPDATE_NODE_LABEL},
      {"taints", [](model::NodeData& d) { d.spec.taints.push_back({.key = "k"}); },
       SCHEDHOST_ACTION_UPDATE_NODE_TAINT},
      {"unschedulable counts as taint", [](model::NodeData& d) { d.spec.unschedulable = true; },
       SCHEDHOST_ACTION_UPDATE_NODE_TAINT},
      {"condition status", [](model::NodeData& d) { d.status.conditions[0].status = "False"; },
       SCHEDHOST_ACTION_UPDATE_NODE_CONDITION},
      {"condition order is not a change",
       [](model::NodeData& d) { std::swap(d.status.conditions[0], d.status.conditions[1]); }, 0},
      {"annotations",
       [](model::NodeData& d) {
         d.metadata.annotations = {{"a", "b"}};
       },
       SCHEDHOST_ACTION_UPDATE_NODE_ANNOTATION},
      {"labels and allocatable",
       [](model::NodeData& d) {
         d.metadata.labels = {};
         d.status.allocatable.erase("memory");
       },
       SCHEDHOST_ACTION_UPDATE_NODE_LABEL | SCHEDHOST_ACTION_UPDATE_NODE_ALLOCATABLE},
  };
  for (const Case& c : cases) {
    auto updated = MakeNode(c.edit);
    EXPECT_EQ(NodeUpdateActions(*base, *updated), c.want) << c.name;
    auto ev = MakeNodeUpdateEvent(base, updated);
    EXPECT_EQ(ev.has_value(), c.want != 0) << c.name;
    if (ev) {
      EXPECT_EQ(ev->resource, SCHEDHOST_RESOURCE_NODE);
      EXPECT_EQ(ev->actions, c.want);
      EXPECT_EQ(ev->new_obj.node, updated);
    }
  }
}

TEST(ClusterEventTest, FactoriesFillResourceActionObjectsAndLabel) {
  auto pod = MakePod("p");
  auto node = MakeNode([](model::NodeData&) {});
  ClusterEvent add = MakeAssignedPodAddEvent(pod);
  EXPECT_EQ(add.resource, SCHEDHOST_RESOURCE_ASSIGNED_POD);
  EXPECT_EQ(add.actions, SCHEDHOST_ACTION_ADD);
  EXPECT_EQ(add.new_obj.pod, pod);
  EXPECT_EQ(add.old_obj.pod, nullptr);
  ClusterEvent del = MakeAssignedPodDeleteEvent(pod);
  EXPECT_EQ(del.actions, SCHEDHOST_ACTION_DELETE);
  EXPECT_EQ(del.old_obj.pod, pod);
  EXPECT_EQ(del.new_obj.pod, nullptr);
  ClusterEvent node_add = MakeNodeAddEvent(node);
  EXPECT_EQ(node_add.resource, SCHEDHOST_RESOURCE_NODE);
  EXPECT_EQ(node_add.new_obj.node, node);
  EXPECT_EQ(node_add.label, "NodeAdd");
  ClusterEvent node_del = MakeNodeDeleteEvent(node);
  EXPECT_EQ(node_del.old_obj.node, node);
  EXPECT_FALSE(node_del.IsWildcard());
  ClusterEvent wild = MakeWildcardEvent("UnschedulableTimeout");
  EXPECT_TRUE(wild.IsWildcard());
  EXPECT_EQ(wild.actions, SCHEDHOST_ACTION_ALL);
  EXPECT_FALSE(MakeNodeUpdateEvent(nullptr, node).has_value());
}

}  // namespace
}  // namespace schedhost::queue
