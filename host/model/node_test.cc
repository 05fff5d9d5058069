#include "host/model/node.h"

#include <gtest/gtest.h>

#include "host/model/interner.h"
#include "host/model/pdb.h"
#include "host/model/priority_class.h"

namespace schedhost::model {
namespace {

Quantity Q(std::string_view text) { return *Quantity::Parse(text); }

TEST(NodeTest, ViewAndDefaults) {
  Interner& in = Interner::Global();
  NodeData data;
  data.metadata.name = "node-1";
  data.metadata.namespace_name = "ignored";  // Nodes are cluster-scoped.
  data.metadata.labels = {
      {"topology.kubernetes.io/zone", "z1"}, {"kubernetes.io/hostname", "node-1"}, {"custom", "x"}};
  data.metadata.resource_version = 5;
  data.spec.unschedulable = true;
  data.spec.taints = {{"dedicated", "gpu", TaintEffect::kNoSchedule},
                      {"node.kubernetes.io/not-ready", "", TaintEffect::kNoExecute}};
  data.status.capacity = {{"cpu", Q("4")}, {"memory", Q("16Gi")}, {"pods", Q("110")}};
  data.status.images = {{{"nginx:1.25", "docker.io/library/nginx:1.25"}, 1000}};
  auto node = Node::Make(std::move(data));
  const schedhost_node_view* v = node->view();
  EXPECT_EQ(v->struct_size, sizeof(schedhost_node_view));
  EXPECT_EQ(node->namespace_name(), "");
  EXPECT_EQ(in.Str(v->name_id), "node-1");
  EXPECT_EQ(node->name_id(), v->name_id);
  EXPECT_EQ(v->unschedulable, 1);
  EXPECT_EQ(v->resource_version, 5u);
  ASSERT_EQ(v->labels.len, 3u);
  EXPECT_EQ(v->labels.items[0].key, SCHEDHOST_ID_LABEL_HOSTNAME);
  EXPECT_EQ(v->labels.items[1].key, SCHEDHOST_ID_LABEL_ZONE);
  EXPECT_EQ(in.Str(v->labels.items[1].value), "z1");
  EXPECT_EQ(in.Str(v->labels.items[2].key), "custom");
  ASSERT_EQ(v->taints_len, 2u);
  EXPECT_EQ(in.Str(v->taints[0].key), "dedicated");
  EXPECT_EQ(v->taints[0].effect, SCHEDHOST_EFFECT_NO_SCHEDULE);
  EXPECT_EQ(v->taints[1].key, SCHEDHOST_ID_TAINT_NOT_READY);
  EXPECT_EQ(v->taints[1].value, 0u);
  // Allocatable defaults to capacity.
  ASSERT_EQ(v->allocatable.len, 3u);
  ASSERT_EQ(v->capacity.len, 3u);
  EXPECT_EQ(v->allocatable.items[0].name, SCHEDHOST_ID_CPU);
  EXPECT_EQ(v->allocatable.items[0].value, 4000);
  EXPECT_EQ(v->allocatable.items[1].value, 16LL * 1024 * 1024 * 1024);
  EXPECT_EQ(v->allocatable.items[2].name, SCHEDHOST_ID_PODS);
  EXPECT_EQ(v->allocatable.items[2].value, 110);
  ASSERT_EQ(v->images_len, 1u);
  EXPECT_EQ(v->images[0].names_len, 2u);
  EXPECT_EQ(v->images[0].size_bytes, 1000);
  EXPECT_EQ(std::string_view(v->images[0].names[1].data, v->images[0].names[1].len),
            "docker.io/library/nginx:1.25");
  EXPECT_EQ(Node::FromView(v), node.get());
  EXPECT_EQ(Node::FromView(nullptr), nullptr);
}

TEST(NodeTest, ExplicitAllocatableIsKept) {
  NodeData data;
  data.metadata.name = "n";
  data.status.capacity = {{"cpu", Q("4")}};
  data.status.allocatable = {{"cpu", Q("3500m")}};
  auto node = Node::Make(std::move(data));
  ASSERT_EQ(node->allocatable().size(), 1u);
  EXPECT_EQ(node->allocatable()[0].value, 3500);
  EXPECT_EQ(node->view()->capacity.items[0].value, 4000);
}

TEST(PdbTest, View) {
  PodDisruptionBudgetData data;
  data.metadata.name = "web-pdb";
  data.spec.selector = LabelSelector{{{"app", "web"}}, {}};
  data.spec.min_available = IntOrString{true, 0, "50%"};
  data.status.disruptions_allowed = 2;
  auto pdb = PodDisruptionBudget::Make(std::move(data));
  const schedhost_pdb_view* v = pdb->view();
  EXPECT_EQ(v->struct_size, sizeof(schedhost_pdb_view));
  EXPECT_EQ(pdb->namespace_name(), "default");
  EXPECT_EQ(v->namespace_id, SCHEDHOST_ID_NAMESPACE_DEFAULT);
  EXPECT_EQ(v->disruptions_allowed, 2);
  ASSERT_NE(v->selector, nullptr);
  ASSERT_EQ(v->selector->len, 1u);
  EXPECT_EQ(v->selector->requirements[0].op, SCHEDHOST_OP_IN);
  EXPECT_EQ(PodDisruptionBudget::FromView(v), pdb.get());
  EXPECT_EQ(pdb->data().spec.min_available->ToString(), "50%");

  PodDisruptionBudgetData no_selector;
  no_selector.metadata.name = "none";
  EXPECT_EQ(PodDisruptionBudget::Make(std::move(no_selector))->view()->selector, nullptr);
}

TEST(PriorityClassTest, View) {
  PriorityClassData data;
  data.metadata.name = "high";
  data.value = 1000;
  data.global_default = true;
  data.preemption_policy = PreemptionPolicy::kNever;
  auto pc = PriorityClass::Make(std::move(data));
  const schedhost_priority_class_view* v = pc->view();
  EXPECT_EQ(v->struct_size, sizeof(schedhost_priority_class_view));
  EXPECT_EQ(std::string_view(v->name.data, v->name.len), "high");
  EXPECT_EQ(v->value, 1000);
  EXPECT_EQ(v->global_default, 1);
  EXPECT_EQ(v->preemption_policy, SCHEDHOST_PREEMPT_NEVER);
  EXPECT_EQ(PriorityClass::FromView(v), pc.get());
  EXPECT_FALSE(pc->uid().empty());
}

}  // namespace
}  // namespace schedhost::model
