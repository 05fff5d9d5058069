#include "host/api/encode.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace schedhost::api {
namespace {

constexpr const char* kManifests = R"(
apiVersion: v1
kind: Pod
metadata:
  name: web-1
  namespace: shop
  uid: 0e9b6c1a-1111-4222-8333-444455556666
  resourceVersion: "12"
  creationTimestamp: "2024-05-01T12:00:00Z"
  labels: {app: web, tier: front}
  annotations: {note: "x"}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: u1, controller: true}]
spec:
  schedulerName: my-scheduler
  priorityClassName: high
  priority: 1000
  preemptionPolicy: Never
  nodeSelector: {disk: ssd}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: zone, operator: In, values: [a, b]}]
          matchFields: [{key: metadata.name, operator: NotIn, values: [n9]}]
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 5
        preference: {matchExpressions: [{key: cores, operator: Gt, values: ["4"]}]}
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: web}}
        topologyKey: kubernetes.io/hostname
        namespaces: [shop]
        matchLabelKeys: [pod-template-hash]
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 10
        podAffinityTerm:
          labelSelector: {matchExpressions: [{key: app, operator: Exists}]}
          topologyKey: zone
          namespaceSelector: {}
  tolerations:
  - {key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}
  - {operator: Exists, effect: NoExecute, tolerationSeconds: 30}
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: web}}
    minDomains: 2
    nodeAffinityPolicy: Honor
    nodeTaintsPolicy: Ignore
    matchLabelKeys: [version]
  initContainers:
  - name: sidecar
    image: envoy
    restartPolicy: Always
    resources: {requests: {cpu: 50m}}
  containers:
  - name: app
    image: nginx
    resources:
      requests: {cpu: 500m, memory: 1Gi}
      limits: {cpu: "1", memory: 2Gi, nvidia.com/gpu: "1"}
    ports: [{name: http, containerPort: 8080, hostPort: 80, protocol: UDP, hostIP: 10.0.0.1}]
  overhead: {cpu: 10m}
  schedulingGates: [{name: wait}]
status:
  nominatedNodeName: n2
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {zone: a}}
spec:
  unschedulable: true
  taints: [{key: dedicated, value: gpu, effect: NoSchedule}, {key: x, effect: NoExecute}]
status:
  capacity: {cpu: "4", memory: 16Gi, pods: "110"}
  allocatable: {cpu: 3800m, memory: 15Gi, pods: "110"}
  images: [{names: [nginx:1.25], sizeBytes: 1000000}]
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: shop}
spec: {minAvailable: 50%, selector: {matchLabels: {app: web}}}
status: {disruptionsAllowed: 1}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db}
spec: {maxUnavailable: 1}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
globalDefault: true
preemptionPolicy: Never
description: important
---
apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {team: a}}
)";

// Encoding is the decoder's inverse: decode(encode(x)) encodes to the same text.
TEST(EncodeTest, RoundTripsEveryKind) {
  std::vector<model::Object> objects = model::DecodeManifests(kManifests, "test");
  ASSERT_EQ(objects.size(), 6u);
  for (const model::Object& object : objects) {
    const std::string json = EncodeJson(object);
    std::vector<model::Object> again = model::DecodeManifests(json, "encoded");
    ASSERT_EQ(again.size(), 1u) << json;
    EXPECT_EQ(EncodeJson(again.front()), json);
  }
}

TEST(EncodeTest, UsesKubernetesFieldNames) {
  std::vector<model::Object> objects = model::DecodeManifests(kManifests, "test");
  auto pod = nlohmann::json::parse(EncodeJson(objects[0]));
  EXPECT_EQ(pod["apiVersion"], "v1");
  EXPECT_EQ(pod["kind"], "Pod");
  EXPECT_EQ(pod["metadata"]["resourceVersion"], "12");
  EXPECT_EQ(pod["metadata"]["uid"], "0e9b6c1a-1111-4222-8333-444455556666");
  EXPECT_EQ(pod["metadata"]["creationTimestamp"], "2024-05-01T12:00:00Z");
  EXPECT_EQ(pod["spec"]["containers"][0]["resources"]["requests"]["cpu"], "500m");
  EXPECT_EQ(pod["spec"]["containers"][0]["resources"]["limits"]["memory"], "2Gi");
  EXPECT_EQ(pod["spec"]["tolerations"][1]["tolerationSeconds"], 30);
  EXPECT_EQ(pod["status"]["nominatedNodeName"], "n2");
  auto pdb = nlohmann::json::parse(EncodeJson(objects[2]));
  EXPECT_EQ(pdb["spec"]["minAvailable"], "50%");
  EXPECT_EQ(nlohmann::json::parse(EncodeJson(objects[3]))["spec"]["maxUnavailable"], 1);
}

// What a plugin must evaluate (claims, ephemeral volumes, DRA claims) travels with the pod, so
// a pod sent on (schedctl apply) is held or placed as the original; other volumes do not.
TEST(EncodeTest, KeepsTheVolumesAndClaimsPluginsEvaluate) {
  const auto objects = model::DecodeManifests(R"(
apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  containers: [{name: c, image: busybox}]
  volumes:
  - {name: scratch, emptyDir: {}}
  - {name: data, persistentVolumeClaim: {claimName: data-0}}
  resourceClaims: [{name: gpu, resourceClaimName: gpu-0}]
)", "test");
  const auto pod = nlohmann::json::parse(EncodeJson(objects.at(0)));
  EXPECT_EQ(pod["spec"]["volumes"],
            nlohmann::json::parse(R"([{"name":"data","persistentVolumeClaim":{"claimName":"data-0"}}])"));
  EXPECT_EQ(pod["spec"]["resourceClaims"],
            nlohmann::json::parse(R"([{"name":"gpu","resourceClaimName":"gpu-0"}])"));
  const auto again = model::DecodeManifests(pod.dump(), "encoded");
  const auto* p = std::get_if<std::shared_ptr<const model::Pod>>(&again.at(0));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ((*p)->data().spec.needs.size(), 2u);
  EXPECT_NE((*p)->view()->volumes, nullptr);
}

// What requires a node declared feature travels too: a pod sent on is held where the features
// are missing as the original is.
TEST(EncodeTest, KeepsWhatRequiresNodeDeclaredFeatures) {
  const auto objects = model::DecodeManifests(R"(
apiVersion: v1
kind: Pod
metadata: {name: job}
spec:
  hostNetwork: true
  hostUsers: false
  containers:
  - {name: a, image: busybox}
  - name: b
    image: busybox
    restartPolicyRules:
    - action: RestartAllContainers
      exitCodes: {operator: In, values: [42]}
    volumeMounts:
    - {name: data, mountPath: /data, bindMountOptions: [noexec]}
)", "test");
  const auto* original = std::get_if<std::shared_ptr<const model::Pod>>(&objects.at(0));
  ASSERT_NE(original, nullptr);
  ASSERT_EQ((*original)->data().spec.needs.size(), 3u);
  const auto pod = nlohmann::json::parse(EncodeJson(objects.at(0)));
  EXPECT_EQ(pod["spec"]["hostUsers"], false);
  EXPECT_EQ(pod["spec"]["containers"][1]["restartPolicyRules"][0]["action"],
            "RestartAllContainers");
  const auto again = model::DecodeManifests(pod.dump(), "encoded");
  const auto* p = std::get_if<std::shared_ptr<const model::Pod>>(&again.at(0));
  ASSERT_NE(p, nullptr);
  std::vector<std::string> want;
  std::vector<std::string> got;
  for (const auto& n : (*original)->data().spec.needs) want.push_back(n.what + " at " + n.path);
  for (const auto& n : (*p)->data().spec.needs) got.push_back(n.what + " at " + n.path);
  EXPECT_EQ(got, want);
}

TEST(EncodeTest, WithoutIdentityIgnoresVersionUidAndTime) {
  auto a = model::DecodeManifests(
      "{apiVersion: v1, kind: Node, metadata: {name: n, uid: a, resourceVersion: '3'}}", "a");
  auto b = model::DecodeManifests(
      "{apiVersion: v1, kind: Node, metadata: {name: n, uid: b, resourceVersion: '9'}}", "b");
  EXPECT_NE(EncodeJson(a[0]), EncodeJson(b[0]));
  EXPECT_EQ(EncodeJsonWithoutIdentity(a[0]), EncodeJsonWithoutIdentity(b[0]));
}

}  // namespace
}  // namespace schedhost::api
