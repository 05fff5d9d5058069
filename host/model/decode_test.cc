#include "host/model/decode.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>

#include "host/model/interner.h"

namespace schedhost::model {
namespace {

template <class T>
std::shared_ptr<const T> As(const Object& o) {
  auto* p = std::get_if<std::shared_ptr<const T>>(&o);
  return p == nullptr ? nullptr : *p;
}

constexpr std::string_view kFullPod = R"(
apiVersion: v1
kind: Pod
metadata:
  name: web-1
  namespace: prod
  uid: 1234-abcd
  labels:
    app: web
    version: 1.0        # a plain scalar still reads as a string here
  annotations:
    note: "hello"
  ownerReferences:
  - apiVersion: apps/v1
    kind: ReplicaSet
    name: web-abc
    uid: rs-1
    controller: true
  creationTimestamp: "2024-01-02T03:04:05Z"
  resourceVersion: "77"
  managedFields: [{manager: kubectl}]   # unknown fields are ignored
spec:
  schedulerName: my-scheduler
  priority: 1000
  priorityClassName: high
  preemptionPolicy: Never
  nodeSelector:
    disktype: ssd
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: topology.kubernetes.io/zone, operator: In, values: [z1, z2]}
          - {key: cpu-count, operator: Gt, values: ["4"]}
          matchFields:
          - {key: metadata.name, operator: NotIn, values: [bad-node]}
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 10
        preference:
          matchExpressions:
          - {key: disktype, operator: Exists}
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchLabels: {app: cache}
        topologyKey: kubernetes.io/hostname
        namespaces: [prod, staging]
        matchLabelKeys: [pod-template-hash]
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          labelSelector:
            matchExpressions:
            - {key: app, operator: In, values: [web]}
          namespaceSelector: {}
          topologyKey: topology.kubernetes.io/zone
  tolerations:
  - key: dedicated
    operator: Equal
    value: gpu
    effect: NoSchedule
  - operator: Exists
  - key: node.kubernetes.io/unreachable
    operator: Exists
    effect: NoExecute
    tolerationSeconds: 300
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: web}}
    minDomains: 3
    nodeAffinityPolicy: Honor
    nodeTaintsPolicy: Ignore
    matchLabelKeys: [pod-template-hash]
  initContainers:
  - name: init
    image: busybox
    resources:
      requests: {cpu: "1", memory: 64Mi}
  containers:
  - name: app
    image: nginx:1.25
    ports:
    - containerPort: 80
      hostPort: 8080
    - containerPort: 53
      protocol: UDP
    resources:
      requests:
        cpu: 250m
        memory: 128Mi
      limits:
        cpu: 500m
        memory: 256Mi
        nvidia.com/gpu: 1
  overhead:
    cpu: 10m
  schedulingGates:
  - name: example.com/wait
status:
  nominatedNodeName: node-9
  phase: Pending
)";

TEST(DecodeTest, FullPod) {
  auto objects = DecodeManifests(kFullPod, "pod.yaml");
  ASSERT_EQ(objects.size(), 1u);
  auto pod = As<Pod>(objects[0]);
  ASSERT_NE(pod, nullptr);
  const PodData& d = pod->data();
  EXPECT_EQ(d.metadata.name, "web-1");
  EXPECT_EQ(d.metadata.namespace_name, "prod");
  EXPECT_EQ(d.metadata.uid, "1234-abcd");
  EXPECT_EQ(*FindLabel(d.metadata.labels, "version"), "1.0");
  EXPECT_EQ(*FindLabel(d.metadata.annotations, "note"), "hello");
  ASSERT_EQ(d.metadata.owner_references.size(), 1u);
  EXPECT_TRUE(d.metadata.owner_references[0].controller);
  EXPECT_EQ(d.metadata.creation_timestamp_ns, 1704164645LL * 1000000000);
  EXPECT_EQ(d.metadata.resource_version, 77u);
  EXPECT_EQ(d.spec.scheduler_name, "my-scheduler");
  EXPECT_EQ(pod->priority(), 1000);
  EXPECT_EQ(d.spec.preemption_policy, PreemptionPolicy::kNever);
  EXPECT_EQ(d.spec.node_selector.at("disktype"), "ssd");
  ASSERT_TRUE(d.spec.affinity.has_value());
  const NodeAffinity& na = *d.spec.affinity->node_affinity;
  ASSERT_EQ(na.required->node_selector_terms.size(), 1u);
  EXPECT_EQ(na.required->node_selector_terms[0].match_expressions[1].op, SelectorOp::kGt);
  EXPECT_EQ(na.required->node_selector_terms[0].match_fields[0].values[0], "bad-node");
  EXPECT_EQ(na.preferred[0].weight, 10);
  EXPECT_EQ(d.spec.affinity->pod_affinity->required[0].namespaces.size(), 2u);
  const auto& anti = d.spec.affinity->pod_anti_affinity->preferred[0];
  EXPECT_EQ(anti.weight, 100);
  EXPECT_TRUE(anti.pod_affinity_term.namespace_selector.has_value());
  ASSERT_EQ(d.spec.tolerations.size(), 3u);
  EXPECT_EQ(d.spec.tolerations[1].op, TolerationOperator::kExists);
  EXPECT_EQ(d.spec.tolerations[1].effect, TaintEffect::kNone);
  EXPECT_EQ(d.spec.tolerations[2].toleration_seconds, 300);
  ASSERT_EQ(d.spec.topology_spread_constraints.size(), 1u);
  EXPECT_EQ(d.spec.topology_spread_constraints[0].min_domains, 3);
  EXPECT_EQ(d.spec.topology_spread_constraints[0].node_taints_policy, NodeInclusionPolicy::kIgnore);
  ASSERT_EQ(d.spec.containers[0].ports.size(), 2u);
  EXPECT_EQ(d.spec.containers[0].ports[1].protocol, Protocol::kUDP);
  EXPECT_EQ(d.spec.scheduling_gates, std::vector<std::string>{"example.com/wait"});
  EXPECT_EQ(d.status.nominated_node_name, "node-9");

  // Requests: max(250m, init 1) + 10m overhead; the gpu request is defaulted from its limit.
  const schedhost_pod_view* v = pod->view();
  ASSERT_EQ(v->requests.len, 3u);
  EXPECT_EQ(v->requests.items[0].value, 1010);
  EXPECT_EQ(v->requests.items[1].value, 128 * 1024 * 1024);
  EXPECT_EQ(Interner::Global().Str(v->requests.items[2].name), "nvidia.com/gpu");
  EXPECT_EQ(v->requests.items[2].value, 1);
  EXPECT_EQ(v->host_ports_len, 1u);
  EXPECT_NE(v->affinity, nullptr);
}

TEST(DecodeTest, VolumesAndClaimsAPluginMustEvaluateAreKeptAsNeeds) {
  auto objects = DecodeManifests(R"(
apiVersion: v1
kind: Pod
metadata: {name: stateful}
spec:
  containers: [{name: c, image: busybox}]
  volumes:
  - {name: scratch, emptyDir: {}}
  - {name: conf, configMap: {name: conf}}
  - {name: inline, csi: {driver: example.com}}
  - {name: data, persistentVolumeClaim: {claimName: data-0}}
  - {name: tmp, ephemeral: {volumeClaimTemplate: {spec: {}}}}
  - {name: disk, gcePersistentDisk: {pdName: d}}
  - {name: odd, someFutureSource: {}}
  resourceClaims:
  - {name: gpu, resourceClaimName: gpu-claim}
)", "pod.yaml");
  auto pod = As<Pod>(objects.at(0));
  ASSERT_NE(pod, nullptr);
  EXPECT_TRUE(pod->HasNeeds());
  // Each volume's JSON is kept with its first need (keys in the decoder's order).
  const std::vector<PodNeed> want = {
      {"spec.volumes.persistentVolumeClaim", "spec.volumes[3].persistentVolumeClaim",
       "volume \"data\" (claim \"data-0\")",
       R"({"name":"data","persistentVolumeClaim":{"claimName":"data-0"}})"},
      {"spec.volumes.ephemeral", "spec.volumes[4].ephemeral", "volume \"tmp\"",
       R"({"ephemeral":{"volumeClaimTemplate":{"spec":{}}},"name":"tmp"})"},
      {"spec.volumes.gcePersistentDisk", "spec.volumes[5].gcePersistentDisk", "volume \"disk\"",
       R"({"gcePersistentDisk":{"pdName":"d"},"name":"disk"})"},
      {"spec.volumes.someFutureSource", "spec.volumes[6].someFutureSource", "volume \"odd\"",
       R"({"name":"odd","someFutureSource":{}})"},
      {"spec.resourceClaims", "spec.resourceClaims[0]", "resource claim \"gpu\"",
       R"({"name":"gpu","resourceClaimName":"gpu-claim"})"},
  };
  EXPECT_EQ(pod->data().spec.needs, want);
  // Kept through a pod made again from its data (an update of its status, an assumed copy).
  PodData again = pod->Decode();
  again.status.nominated_node_name = "n1";
  const auto remade = Pod::Make(std::move(again));
  EXPECT_TRUE(remade->HasNeeds());
  EXPECT_EQ(remade->data().spec.needs, want);
  // Plugins see those volumes, and only those, in the view (abi 1.8), located at the pod.
  for (const Pod* p : {pod.get(), remade.get()}) {
    const auto* volumes = reinterpret_cast<const ValueNode*>(p->view()->volumes);
    ASSERT_NE(volumes, nullptr);
    ASSERT_EQ(volumes->children.size(), 4u);
    EXPECT_EQ(volumes->location, "Pod default/stateful");
    EXPECT_EQ(ValueTreeToJson(volumes->children[0]), want[0].source);
    EXPECT_EQ(volumes->children[3].Find("name")->string_value, "odd");
  }

  auto plain = DecodeManifests(R"(
apiVersion: v1
kind: Pod
metadata: {name: plain}
spec:
  containers: [{name: c, image: busybox}]
  volumes: [{name: scratch, emptyDir: {}}, {name: s, secret: {secretName: s}}]
)", "plain.yaml");
  EXPECT_FALSE(As<Pod>(plain.at(0))->HasNeeds());
  EXPECT_EQ(As<Pod>(plain.at(0))->view()->volumes, nullptr);
}

TEST(DecodeTest, NodeFeaturesThePodRequiresAreNeedsOncePerFeature) {
  auto objects = DecodeManifests(R"(
apiVersion: v1
kind: Pod
metadata: {name: featured}
spec:
  hostNetwork: true
  hostUsers: false
  containers:
  - name: a
    image: busybox
    restartPolicyRules: [{action: RestartAllContainers, exitCodes: {operator: In, values: [42]}}]
    volumeMounts: [{name: v, mountPath: /v, bindMountOptions: [nosuid]}]
  - name: b
    image: busybox
    restartPolicyRules: [{action: RestartAllContainers, exitCodes: {operator: In, values: [7]}}]
)", "pod.yaml");
  auto pod = As<Pod>(objects.at(0));
  ASSERT_NE(pod, nullptr);
  // Each need keeps, as JSON, what requires the feature (the pod's JSON carries it back).
  const std::vector<PodNeed> want = {
      {"nodeDeclaredFeatures", "spec.containers[0].restartPolicyRules[0].action",
       "node declared feature RestartAllContainersOnContainerExits",
       R"({"action":"RestartAllContainers","exitCodes":{"operator":"In","values":[42]}})"},
      {"nodeDeclaredFeatures", "spec.containers[0].volumeMounts[0].bindMountOptions",
       "node declared feature VolumeBindMountOptions",
       R"({"bindMountOptions":["nosuid"],"mountPath":"/v","name":"v"})"},
      {"nodeDeclaredFeatures", "spec.hostUsers",
       "node declared feature UserNamespacesHostNetworkSupport",
       R"({"hostNetwork":true,"hostUsers":false})"},
  };
  EXPECT_EQ(pod->data().spec.needs, want);
  // Host network alone, or a user namespace alone, requires nothing.
  auto plain = DecodeManifests(R"(
apiVersion: v1
kind: Pod
metadata: {name: plain}
spec:
  hostNetwork: true
  containers: [{name: c, image: busybox, restartPolicyRules: [{action: Restart}]}]
)", "plain.yaml");
  EXPECT_FALSE(As<Pod>(plain.at(0))->HasNeeds());
}

TEST(DecodeTest, NodeSelectorKeysInAnyOrderAreAllKeptAndFound) {
  auto objects = DecodeManifests(R"(
apiVersion: v1
kind: Pod
metadata: {name: picky}
spec:
  nodeSelector: {zz: "3", aa: "1", mm: "2"}
  containers: [{name: c, image: i}]
)",
                                 "pod.yaml");
  ASSERT_EQ(objects.size(), 1u);
  auto pod = As<Pod>(objects[0]);
  ASSERT_NE(pod, nullptr);
  const StringMap& selector = pod->data().spec.node_selector;
  ASSERT_EQ(selector.size(), 3u);
  EXPECT_EQ(selector.begin()->first, "aa");  // sorted by key, whatever the manifest's order
  EXPECT_EQ(selector.at("mm"), "2");
  EXPECT_EQ(selector.count("zz"), 1u);
  EXPECT_EQ(selector.count("absent"), 0u);
  const schedhost_pod_view* v = pod->view();
  ASSERT_EQ(v->node_selector.len, 3u);
  Interner& names = Interner::Global();
  std::map<std::string, std::string> seen;
  for (size_t i = 0; i < v->node_selector.len; ++i) {
    seen[std::string(names.Str(v->node_selector.items[i].key))] =
        names.Str(v->node_selector.items[i].value);
  }
  EXPECT_EQ(seen, (std::map<std::string, std::string>{{"aa", "1"}, {"mm", "2"}, {"zz", "3"}}));
}

TEST(DecodeTest, MultiDocumentYamlWithEveryKind) {
  constexpr std::string_view kText = R"(
---
# an empty document is skipped
---
apiVersion: v1
kind: Node
metadata:
  name: node-1
  labels: {kubernetes.io/hostname: node-1}
spec:
  unschedulable: false
  taints:
  - {key: dedicated, value: infra, effect: NoSchedule, timeAdded: "2024-01-01T00:00:00Z"}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
  allocatable: {cpu: 7500m, memory: 30Gi, pods: 110}
  images:
  - names: [nginx:1.25]
    sizeBytes: 123456
  conditions:
  - {type: Ready, status: "True"}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web-pdb, namespace: prod}
spec:
  maxUnavailable: 25%
  selector: {matchLabels: {app: web}}
status: {disruptionsAllowed: 1}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000000
globalDefault: false
preemptionPolicy: PreemptLowerPriority
description: important
...
---
apiVersion: v1
kind: Pod
metadata: {name: minimal}
spec:
  containers: [{name: c}]
)";
  auto objects = DecodeManifests(kText, "all.yaml");
  ASSERT_EQ(objects.size(), 4u);
  auto node = As<Node>(objects[0]);
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->allocatable()[0].value, 7500);
  EXPECT_EQ(node->data().spec.taints[0].value, "infra");
  EXPECT_EQ(node->data().status.images[0].size_bytes, 123456);
  EXPECT_EQ(node->data().status.conditions[0].status, "True");
  auto pdb = As<PodDisruptionBudget>(objects[1]);
  ASSERT_NE(pdb, nullptr);
  EXPECT_EQ(pdb->namespace_name(), "prod");
  EXPECT_TRUE(pdb->data().spec.max_unavailable->is_string);
  EXPECT_EQ(pdb->data().spec.max_unavailable->string_value, "25%");
  EXPECT_EQ(pdb->view()->disruptions_allowed, 1);
  auto pc = As<PriorityClass>(objects[2]);
  ASSERT_NE(pc, nullptr);
  EXPECT_EQ(pc->value(), 1000000);
  EXPECT_EQ(pc->data().description, "important");
  auto pod = As<Pod>(objects[3]);
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(pod->namespace_name(), "default");
  EXPECT_EQ(pod->data().spec.scheduler_name, "default-scheduler");
}

TEST(DecodeTest, JsonAndLists) {
  constexpr std::string_view kJson = R"({
	"apiVersion": "v1",
	"kind": "List",
	"items": [
		{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
		 "status": {"capacity": {"cpu": 4, "memory": "8Gi"}}},
		{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "ns"},
		 "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": 0.5}}}],
		          "priority": -5}},
		{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
		 "metadata": {"name": "b"}, "spec": {"minAvailable": 2}}
	]
})";
  auto objects = DecodeManifests(kJson, "list.json");
  ASSERT_EQ(objects.size(), 3u);
  EXPECT_EQ(As<Node>(objects[0])->allocatable()[0].value, 4000);
  auto pod = As<Pod>(objects[1]);
  EXPECT_EQ(pod->requests()[0].value, 500);
  EXPECT_EQ(pod->priority(), -5);
  auto pdb = As<PodDisruptionBudget>(objects[2]);
  EXPECT_FALSE(pdb->data().spec.min_available->is_string);
  EXPECT_EQ(pdb->data().spec.min_available->int_value, 2);

  // Items of a typed list may omit apiVersion and kind.
  constexpr std::string_view kTyped = R"(
apiVersion: v1
kind: PodList
items:
- metadata: {name: a}
  spec: {containers: [{name: c}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: b}
  spec: {containers: [{name: c}]}
)";
  objects = DecodeManifests(kTyped, "typed.yaml");
  ASSERT_EQ(objects.size(), 2u);
  EXPECT_EQ(As<Pod>(objects[0])->name(), "a");
  EXPECT_EQ(As<Pod>(objects[1])->name(), "b");
}

TEST(DecodeTest, EmptyInputsAndMergeKeys) {
  EXPECT_TRUE(DecodeManifests("", "empty").empty());
  EXPECT_TRUE(DecodeManifests("---\n---\n# nothing\n", "empty").empty());
  constexpr std::string_view kMerge = R"(
apiVersion: v1
kind: Pod
metadata: {name: merged}
spec:
  containers:
  - &base
    name: a
    resources: {requests: {cpu: 100m}}
  - <<: *base
    name: b
)";
  auto objects = DecodeManifests(kMerge, "merge.yaml");
  ASSERT_EQ(objects.size(), 1u);
  auto pod = As<Pod>(objects[0]);
  ASSERT_EQ(pod->data().spec.containers.size(), 2u);
  EXPECT_EQ(pod->data().spec.containers[1].name, "b");
  EXPECT_EQ(pod->requests()[0].value, 200);
}

TEST(DecodeTest, DecodeFileUsesThePathAsSource) {
  std::string path = ::testing::TempDir() + "/decode_file_test.yaml";
  {
    std::ofstream out(path);
    out << "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\nkind: Deployment\n";
  }
  try {
    DecodeFile(path);
    FAIL() << "expected a DecodeError";
  } catch (const DecodeError& e) {
    EXPECT_EQ(e.source(), path);
    EXPECT_EQ(e.document(), 2);
    EXPECT_EQ(std::string(e.what()),
              path +
                  ": document 2: kind: unsupported kind \"Deployment\"; supported: v1 Pod, "
                  "v1 Node, policy/v1 PodDisruptionBudget, scheduling.k8s.io/v1 "
                  "PriorityClass, v1 Namespace, or a v1 List of them");
  }
  {
    std::ofstream out(path);
    out << "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n";
  }
  EXPECT_EQ(DecodeFile(path).size(), 1u);
  std::remove(path.c_str());
  try {
    DecodeFile(path);
    FAIL() << "expected a DecodeError";
  } catch (const DecodeError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": cannot read file: No such file or directory");
  }
}

}  // namespace
}  // namespace schedhost::model
