// DecodeApiObject reads objects as an API server sends them: kind-less list items, fields the
// model does not know, managedFields and an opaque resourceVersion are all fine; what the
// model cannot hold is a DecodeError naming the object and the field.
#include "host/model/decode_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace schedhost::model {
namespace {

using ::testing::HasSubstr;

TEST(DecodeApiTest, PodAsTheApiServerSendsIt) {
  const nlohmann::json pod = nlohmann::json::parse(R"({
    "metadata": {"name": "web", "namespace": "prod", "uid": "u-1",
                 "resourceVersion": "opaque-token-7", "generation": 3,
                 "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
                 "labels": {"app": "web"}, "creationTimestamp": "2026-11-30T10:00:00Z"},
    "spec": {"schedulerName": "schedhost", "priority": 1000, "enableServiceLinks": true,
             "containers": [{"name": "c", "image": "i", "terminationMessagePolicy": "File",
                             "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}}}],
             "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                              "effect": "NoExecute", "tolerationSeconds": 300}]},
    "status": {"phase": "Pending", "qosClass": "Burstable", "nominatedNodeName": "n2"}
  })");
  const PodData data = std::get<PodData>(DecodeApiObject(pod, ApiKind::kPod));
  EXPECT_EQ(data.metadata.name, "web");
  EXPECT_EQ(data.metadata.namespace_name, "prod");
  EXPECT_EQ(data.metadata.uid, "u-1");
  EXPECT_EQ(data.metadata.resource_version, 0u);  // opaque: the caller keeps it
  EXPECT_EQ(data.spec.scheduler_name, "schedhost");
  ASSERT_TRUE(data.spec.priority.has_value());
  EXPECT_EQ(*data.spec.priority, 1000);
  EXPECT_EQ(data.status.nominated_node_name, "n2");
  ASSERT_EQ(data.spec.tolerations.size(), 1u);
}

TEST(DecodeApiTest, APreemptionVictimStillTerminating) {
  nlohmann::json pod = nlohmann::json::parse(R"({
    "metadata": {"name": "victim", "namespace": "prod", "uid": "u-3"},
    "spec": {"nodeName": "n1", "containers": [{"name": "c"}]},
    "status": {"conditions": [{"type": "DisruptionTarget", "status": "True",
                               "reason": "PreemptionByScheduler"}]}
  })");
  // Marked, but not being deleted (yet): not terminating.
  EXPECT_FALSE(std::get<PodData>(DecodeApiObject(pod, ApiKind::kPod))
                   .status.terminating_by_preemption);
  pod["metadata"]["deletionTimestamp"] = "2026-12-01T10:00:00Z";
  const PodData data = std::get<PodData>(DecodeApiObject(pod, ApiKind::kPod));
  EXPECT_TRUE(data.status.terminating_by_preemption);
  // It survives a made Pod (packed with the status).
  EXPECT_TRUE(Pod::Make(data)->data().status.terminating_by_preemption);
  // Deleted for another reason: not a preemption victim.
  pod["status"]["conditions"][0]["reason"] = "EvictionByEvictionAPI";
  EXPECT_FALSE(std::get<PodData>(DecodeApiObject(pod, ApiKind::kPod))
                   .status.terminating_by_preemption);
}

TEST(DecodeApiTest, NodeWithoutKindOrApiVersion) {
  const nlohmann::json node = nlohmann::json::parse(R"({
    "metadata": {"name": "n1", "uid": "u-n1", "resourceVersion": "5"},
    "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
               "conditions": [{"type": "Ready", "status": "True"}],
               "nodeInfo": {"kubeletVersion": "v1.37.2"}}
  })");
  const NodeData data = std::get<NodeData>(DecodeApiObject(node, ApiKind::kNode));
  EXPECT_EQ(data.metadata.name, "n1");
  ASSERT_EQ(data.spec.taints.size(), 1u);
  EXPECT_EQ(data.spec.taints[0].key, "k");
}

TEST(DecodeApiTest, WhatTheModelCannotHoldNamesObjectAndField) {
  const nlohmann::json pod = nlohmann::json::parse(R"({
    "metadata": {"name": "bad", "namespace": "prod", "uid": "u-2"},
    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}]}
  })");
  try {
    DecodeApiObject(pod, ApiKind::kPod);
    FAIL() << "decoded";
  } catch (const DecodeError& e) {
    EXPECT_EQ(e.object(), "Pod prod/bad");
    EXPECT_THAT(e.path(), HasSubstr("requests.cpu"));
  }
  EXPECT_THROW(DecodeApiObject(nlohmann::json::array(), ApiKind::kNode), DecodeError);
}

}  // namespace
}  // namespace schedhost::model
