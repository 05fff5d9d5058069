// Invalid manifests and the exact errors they produce (document index, object, path, reason).
#include <gtest/gtest.h>

#include <string>

#include "host/model/decode.h"

namespace schedhost::model {
namespace {

std::string ErrorOf(std::string_view text) {
  try {
    DecodeManifests(text, "t.yaml");
  } catch (const DecodeError& e) {
    return e.what();
  }
  return "<no error>";
}

// A pod named "p" whose spec is `spec` (flow or block YAML indented by two spaces).
std::string Pod(std::string_view spec) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + std::string(spec);
}

std::string PodWithContainer(std::string_view container_fields) {
  return Pod("  containers:\n  - name: c\n" + std::string(container_fields));
}

constexpr std::string_view kSubdomain =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character";

struct Case {
  std::string name;
  std::string text;
  std::string error;
};

TEST(DecodeErrorsTest, ExactMessages) {
  const std::string pod = "t.yaml: document 1 (Pod default/p): ";
  const Case cases[] = {
      {"brief example: document index, identity, path and reason",
       "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\napiVersion: v1\nkind: Node\n"
       "metadata: {name: n2}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: web-1}\nspec:\n"
       "  containers:\n  - name: app\n    resources: {requests: {cpu: abc}}\n",
       "t.yaml: document 3 (Pod default/web-1): spec.containers[0].resources.requests.cpu: "
       "invalid quantity \"abc\": unexpected character 'a' at offset 0"},
      {"quantity overflow", PodWithContainer("    resources: {limits: {memory: 1e30}}"),
       pod + "spec.containers[0].resources.limits.memory: invalid quantity \"1e30\": value out of "
             "range (magnitude above 9223372036854775807 units)"},
      {"missing kind", "apiVersion: v1\nmetadata: {name: x}\n",
       "t.yaml: document 1: kind: required"},
      {"unknown kind", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n",
       "t.yaml: document 1: kind: unsupported kind \"Deployment\"; supported: v1 Pod, v1 Node, "
       "policy/v1 PodDisruptionBudget, scheduling.k8s.io/v1 PriorityClass, v1 Namespace, or a "
       "v1 List of them"},
      {"wrong apiVersion", "apiVersion: apps/v1\nkind: Pod\nmetadata: {name: x, namespace: ns}\n",
       "t.yaml: document 1 (Pod ns/x): apiVersion: unsupported apiVersion \"apps/v1\" for kind Pod "
       "(want \"v1\")"},
      {"missing apiVersion", "kind: Node\nmetadata: {name: n}\n",
       "t.yaml: document 1 (Node n): apiVersion: required"},
      {"not an object", "- a\n- b\n",
       "t.yaml: document 1: expected an object (a Kubernetes manifest), got a list"},
      {"yaml syntax error", "apiVersion: v1\nkind: [Pod\n",
       "t.yaml: document 1: line 3: YAML syntax error: end of sequence flow not found"},
      {"syntax error in a later document",
       "kind: Node\napiVersion: v1\nmetadata: {name: a}\n---\n"
       "a: b: c\n",
       "t.yaml: document 2: line 5: YAML syntax error: illegal map value"},
      {"recursive alias", "a: &x [*x]\n",
       "t.yaml: document 1: line 1: alias refers to an enclosing node (recursive alias)"},
      {"missing name", "apiVersion: v1\nkind: Pod\nspec: {containers: [{name: c}]}\n",
       "t.yaml: document 1 (Pod): metadata.name: required"},
      {"invalid name", "apiVersion: v1\nkind: Pod\nmetadata: {name: Web_1}\n",
       "t.yaml: document 1 (Pod default/Web_1): metadata.name: invalid value \"Web_1\": " +
           std::string(kSubdomain)},
      {"invalid namespace",
       "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: Prod}\n"
       "spec: {containers: [{name: c}]}\n",
       "t.yaml: document 1 (Pod Prod/p): metadata.namespace: invalid value \"Prod\": a lowercase "
       "RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
       "and end with an alphanumeric character"},
      {"invalid label key",
       "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels: {\"bad key\": x}\n",
       "t.yaml: document 1 (Node n): metadata.labels.bad key: invalid label key \"bad key\": name "
       "part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
       "with an alphanumeric character"},
      {"invalid label value",
       "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels: {a: -x}\n",
       "t.yaml: document 1 (Node n): metadata.labels.a: invalid value \"-x\": a valid label value "
       "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
       "alphanumeric character"},
      {"duplicate key", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  name: q\n",
       "t.yaml: document 1 (Pod default/p): metadata.name: duplicate key"},
      {"bad timestamp",
       "apiVersion: v1\nkind: Node\nmetadata: {name: n, creationTimestamp: yesterday}\n",
       "t.yaml: document 1 (Node n): metadata.creationTimestamp: invalid timestamp \"yesterday\": "
       "want RFC 3339 like \"2024-01-02T15:04:05Z\""},
      {"bad resourceVersion",
       "apiVersion: v1\nkind: Node\nmetadata: {name: n, resourceVersion: x1}\n",
       "t.yaml: document 1 (Node n): metadata.resourceVersion: invalid value \"x1\": must be a "
       "decimal unsigned 64-bit integer"},
      {"spec is a string", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: hello\n",
       pod + "spec: expected an object, got \"hello\""},
      {"containers is an object", Pod("  containers: {name: c}\n"),
       pod + "spec.containers: expected a list, got an object"},
      {"no containers", Pod("  nodeName: n1\n"),
       pod + "spec.containers: must have at least one container"},
      {"container without a name", Pod("  containers: [{image: nginx}]\n"),
       pod + "spec.containers[0].name: required"},
      {"duplicate container name",
       Pod("  initContainers: [{name: c}]\n  containers: [{name: c}]\n"),
       pod + "spec.containers[0].name: duplicate container name \"c\""},
      {"quoted integer", Pod("  priority: \"10\"\n  containers: [{name: c}]\n"),
       pod + "spec.priority: expected an integer, got string \"10\""},
      {"fractional integer", Pod("  priority: 1.5\n  containers: [{name: c}]\n"),
       pod + "spec.priority: expected an integer, got \"1.5\""},
      {"int32 overflow", Pod("  priority: 3000000000\n  containers: [{name: c}]\n"),
       pod + "spec.priority: value 3000000000 is out of range [-2147483648, 2147483647]"},
      {"bad preemptionPolicy", Pod("  preemptionPolicy: Always\n  containers: [{name: c}]\n"),
       pod + "spec.preemptionPolicy: unsupported value \"Always\": supported values: "
             "\"PreemptLowerPriority\", \"Never\""},
      {"bad schedulerName", Pod("  schedulerName: My_Scheduler\n  containers: [{name: c}]\n"),
       pod + "spec.schedulerName: invalid value \"My_Scheduler\": " + std::string(kSubdomain)},
      {"negative request", PodWithContainer("    resources: {requests: {memory: -1Mi}}"),
       pod + "spec.containers[0].resources.requests.memory: must be greater than or equal to 0, "
             "got -1Mi"},
      {"request above limit",
       PodWithContainer("    resources: {requests: {cpu: \"2\"}, limits: {cpu: 1500m}}"),
       pod + "spec.containers[0].resources.requests.cpu: must be less than or equal to cpu limit "
             "of 1500m, got 2"},
      {"negative overhead", Pod("  containers: [{name: c}]\n  overhead: {cpu: -1}\n"),
       pod + "spec.overhead.cpu: must be greater than or equal to 0, got -1"},
      {"containerPort missing", PodWithContainer("    ports: [{hostPort: 80}]"),
       pod + "spec.containers[0].ports[0].containerPort: must be between 1 and 65535, inclusive, "
             "got 0"},
      {"hostPort out of range",
       PodWithContainer("    ports: [{containerPort: 80, hostPort: 70000}]"),
       pod + "spec.containers[0].ports[0].hostPort: must be between 1 and 65535, inclusive, got "
             "70000"},
      {"bad protocol", PodWithContainer("    ports: [{containerPort: 80, protocol: HTTP}]"),
       pod + "spec.containers[0].ports[0].protocol: unsupported value \"HTTP\": supported values: "
             "\"TCP\", \"UDP\", \"SCTP\""},
      {"bad hostIP", PodWithContainer("    ports: [{containerPort: 80, hostIP: 1.2.3}]"),
       pod + "spec.containers[0].ports[0].hostIP: must be a valid IP address, got \"1.2.3\""},
      {"restartPolicy on an app container", PodWithContainer("    restartPolicy: Always"),
       pod + "spec.containers[0].restartPolicy: may only be set on init containers"},
      {"bad toleration operator",
       Pod("  containers: [{name: c}]\n  tolerations: [{key: k, operator: Equals}]\n"),
       pod + "spec.tolerations[0].operator: unsupported value \"Equals\": supported values: "
             "\"Equal\", \"Exists\""},
      {"bad toleration effect",
       Pod("  containers: [{name: c}]\n  tolerations: [{key: k, effect: NoScheduleX}]\n"),
       pod + "spec.tolerations[0].effect: unsupported value \"NoScheduleX\": supported values: "
             "\"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""},
      {"Exists with a value",
       Pod("  containers: [{name: c}]\n  tolerations: [{key: k, operator: Exists, value: v}]\n"),
       pod + "spec.tolerations[0].operator: value must be empty when `operator` is 'Exists'"},
      {"empty key with Equal", Pod("  containers: [{name: c}]\n  tolerations: [{value: v}]\n"),
       pod + "spec.tolerations[0].operator: must be Exists when `key` is empty, which means "
             "\"match all values and all keys\""},
      {"tolerationSeconds without NoExecute",
       Pod("  containers: [{name: c}]\n  tolerations: [{operator: Exists, tolerationSeconds: "
           "5}]\n"),
       pod + "spec.tolerations[0].effect: effect must be 'NoExecute' when `tolerationSeconds` is "
             "set"},
      {"maxSkew zero",
       Pod("  containers: [{name: c}]\n  topologySpreadConstraints:\n  - {maxSkew: 0, "
           "topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"),
       pod + "spec.topologySpreadConstraints[0].maxSkew: must be greater than zero, got 0"},
      {"whenUnsatisfiable missing",
       Pod("  containers: [{name: c}]\n  topologySpreadConstraints:\n  - {maxSkew: 1, "
           "topologyKey: zone}\n"),
       pod + "spec.topologySpreadConstraints[0].whenUnsatisfiable: required"},
      {"bad whenUnsatisfiable",
       Pod("  containers: [{name: c}]\n  topologySpreadConstraints:\n  - {maxSkew: 1, "
           "topologyKey: zone, whenUnsatisfiable: Sometimes}\n"),
       pod + "spec.topologySpreadConstraints[0].whenUnsatisfiable: unsupported value "
             "\"Sometimes\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\""},
      {"missing topologyKey",
       Pod("  containers: [{name: c}]\n  topologySpreadConstraints:\n  - {maxSkew: 1, "
           "whenUnsatisfiable: DoNotSchedule}\n"),
       pod + "spec.topologySpreadConstraints[0].topologyKey: can not be empty"},
      {"minDomains with ScheduleAnyway",
       Pod("  containers: [{name: c}]\n  topologySpreadConstraints:\n  - {maxSkew: 1, "
           "topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}\n"),
       pod + "spec.topologySpreadConstraints[0].minDomains: can only use minDomains if "
             "whenUnsatisfiable=DoNotSchedule"},
      {"bad nodeTaintsPolicy",
       Pod("  containers: [{name: c}]\n  topologySpreadConstraints:\n  - {maxSkew: 1, "
           "topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, nodeTaintsPolicy: Maybe}\n"),
       pod + "spec.topologySpreadConstraints[0].nodeTaintsPolicy: unsupported value \"Maybe\": "
             "supported values: \"Honor\", \"Ignore\""},
      {"duplicate spread constraint",
       Pod("  containers: [{name: c}]\n  topologySpreadConstraints:\n  - {maxSkew: 1, "
           "topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n  - {maxSkew: 2, "
           "topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"),
       pod + "spec.topologySpreadConstraints[1]: duplicate constraint for topologyKey \"zone\" "
             "and whenUnsatisfiable DoNotSchedule"},
      {"empty required node selector",
       Pod("  containers: [{name: c}]\n  affinity: {nodeAffinity: "
           "{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: []}}}\n"),
       pod + "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
             "nodeSelectorTerms: must have at least one node selector term"},
      {"node affinity weight zero",
       Pod("  containers: [{name: c}]\n  affinity:\n    nodeAffinity:\n      "
           "preferredDuringSchedulingIgnoredDuringExecution:\n      - weight: 0\n        "
           "preference: {matchExpressions: [{key: a, operator: Exists}]}\n"),
       pod + "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
             "weight: must be in the range 1-100, got 0"},
      {"Gt with two values",
       Pod("  containers: [{name: c}]\n  affinity: {nodeAffinity: "
           "{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
           "[{matchExpressions: [{key: n, operator: Gt, values: [\"1\", \"2\"]}]}]}}}\n"),
       pod + "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
             "nodeSelectorTerms[0].matchExpressions[0].values: must be specified single value "
             "when `operator` is 'Lt' or 'Gt'"},
      {"Lt with a non-integer",
       Pod("  containers: [{name: c}]\n  affinity: {nodeAffinity: "
           "{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
           "[{matchExpressions: [{key: n, operator: Lt, values: [abc]}]}]}}}\n"),
       pod + "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
             "nodeSelectorTerms[0].matchExpressions[0].values[0]: invalid value \"abc\": must be "
             "an integer when `operator` is 'Lt' or 'Gt'"},
      {"In without values",
       Pod("  containers: [{name: c}]\n  affinity: {nodeAffinity: "
           "{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
           "[{matchExpressions: [{key: n, operator: In}]}]}}}\n"),
       pod + "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
             "nodeSelectorTerms[0].matchExpressions[0].values: must be specified when `operator` "
             "is 'In' or 'NotIn'"},
      {"Exists with values",
       Pod("  containers: [{name: c}]\n  affinity: {nodeAffinity: "
           "{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
           "[{matchExpressions: [{key: n, operator: Exists, values: [x]}]}]}}}\n"),
       pod + "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
             "nodeSelectorTerms[0].matchExpressions[0].values: may not be specified when "
             "`operator` is 'Exists' or 'DoesNotExist'"},
      {"matchFields on a label",
       Pod("  containers: [{name: c}]\n  affinity: {nodeAffinity: "
           "{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
           "[{matchFields: [{key: metadata.labels, operator: In, values: [x]}]}]}}}\n"),
       pod + "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
             "nodeSelectorTerms[0].matchFields[0].key: not a valid field selector key: "
             "\"metadata.labels\" (only \"metadata.name\" is supported)"},
      {"operator missing",
       Pod("  containers: [{name: c}]\n  affinity: {podAffinity: "
           "{requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: zone, labelSelector: "
           "{matchExpressions: [{key: app}]}}]}}\n"),
       pod + "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
             "labelSelector.matchExpressions[0].operator: required"},
      {"Gt in a label selector",
       Pod("  containers: [{name: c}]\n  affinity: {podAffinity: "
           "{requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: zone, labelSelector: "
           "{matchExpressions: [{key: app, operator: Gt, values: [\"1\"]}]}}]}}\n"),
       pod + "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
             "labelSelector.matchExpressions[0].operator: unsupported value \"Gt\": supported "
             "values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\""},
      {"pod affinity without topologyKey",
       Pod("  containers: [{name: c}]\n  affinity: {podAntiAffinity: "
           "{requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {}}]}}\n"),
       pod + "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
             "topologyKey: can not be empty"},
      {"pod affinity weight 101",
       Pod("  containers: [{name: c}]\n  affinity: {podAffinity: "
           "{preferredDuringSchedulingIgnoredDuringExecution: [{weight: 101, podAffinityTerm: "
           "{topologyKey: zone}}]}}\n"),
       pod + "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
             "weight: must be in the range 1-100, got 101"},
      {"matchLabelKeys without labelSelector",
       Pod("  containers: [{name: c}]\n  affinity: {podAffinity: "
           "{requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: zone, "
           "matchLabelKeys: [app]}]}}\n"),
       pod + "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
             "matchLabelKeys: must not be specified when labelSelector is not set"},
      {"bad scheduling gate",
       Pod("  containers: [{name: c}]\n  schedulingGates: [{name: \"a b\"}]\n"),
       pod + "spec.schedulingGates[0].name: invalid value \"a b\": name part must consist of "
             "alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character"},
      {"taint without effect",
       "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
       "spec: {taints: [{key: k}]}\n",
       "t.yaml: document 1 (Node n1): spec.taints[0].effect: required"},
      {"taint with a bad effect",
       "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
       "spec: {taints: [{key: k, effect: Never}]}\n",
       "t.yaml: document 1 (Node n1): spec.taints[0].effect: unsupported value \"Never\": "
       "supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""},
      {"duplicate taint",
       "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {taints: "
       "[{key: k, effect: NoSchedule}, {key: k, value: v, effect: NoSchedule}]}\n",
       "t.yaml: document 1 (Node n1): spec.taints[1]: taints must be unique by key and effect "
       "pair, duplicate \"k\" with effect NoSchedule"},
      {"bad capacity",
       "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
       "status: {capacity: {cpu: 1.2.3}}\n",
       "t.yaml: document 1 (Node n1): status.capacity.cpu: invalid quantity \"1.2.3\": unexpected "
       "character '.' at offset 3"},
      {"non-boolean unschedulable",
       "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
       "spec: {unschedulable: yes}\n",
       "t.yaml: document 1 (Node n1): spec.unschedulable: expected a boolean (true or false), got "
       "\"yes\""},
      {"PDB with both bounds",
       "apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
       "metadata: {name: b}\nspec: {minAvailable: 1, maxUnavailable: 1}\n",
       "t.yaml: document 1 (PodDisruptionBudget default/b): spec: minAvailable and "
       "maxUnavailable cannot be both set"},
      {"PDB above 100%",
       "apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
       "metadata: {name: b}\nspec: {minAvailable: 150%}\n",
       "t.yaml: document 1 (PodDisruptionBudget default/b): spec.minAvailable: invalid value "
       "\"150%\": must not be greater than 100%"},
      {"PDB quoted number",
       "apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
       "metadata: {name: b}\nspec: {maxUnavailable: \"2\"}\n",
       "t.yaml: document 1 (PodDisruptionBudget default/b): spec.maxUnavailable: invalid value "
       "\"2\": a string value must be a percentage between 0% and 100%, like \"50%\""},
      {"PDB negative",
       "apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
       "metadata: {name: b}\nspec: {minAvailable: -1}\n",
       "t.yaml: document 1 (PodDisruptionBudget default/b): spec.minAvailable: must be greater "
       "than or equal to 0, got -1"},
      {"PDB wrong apiVersion",
       "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\n"
       "metadata: {name: b}\n",
       "t.yaml: document 1 (PodDisruptionBudget default/b): apiVersion: unsupported apiVersion "
       "\"policy/v1beta1\" for kind PodDisruptionBudget (want \"policy/v1\")"},
      {"PriorityClass too high",
       "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
       "metadata: {name: big}\nvalue: 2000000000\n",
       "t.yaml: document 1 (PriorityClass big): value: maximum allowed value of a user defined "
       "priority is 1000000000, got 2000000000"},
      {"PriorityClass reserved name",
       "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
       "metadata: {name: system-mine}\nvalue: 5\n",
       "t.yaml: document 1 (PriorityClass system-mine): metadata.name: priority class names with "
       "'system-' prefix are reserved for system use only: \"system-mine\" with value 5 is not a "
       "built-in class"},
      {"error inside a List item",
       "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: p1}, "
       "spec: {containers: [{name: c}]}}\n- {apiVersion: v1, kind: Pod, metadata: {name: p2}, "
       "spec: {containers: [{image: x}]}}\n",
       "t.yaml: document 1 (Pod default/p2): items[1].spec.containers[0].name: required"},
      {"List item without kind", "apiVersion: v1\nkind: List\nitems:\n- {metadata: {name: x}}\n",
       "t.yaml: document 1: items[0].kind: required"},
      {"nested List", "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: List}\n",
       "t.yaml: document 1: items[0].kind: a List may not contain another List"},
      {"List with a bad apiVersion", "apiVersion: v2\nkind: List\nitems: []\n",
       "t.yaml: document 1: apiVersion: unsupported apiVersion \"v2\" for kind List (want \"v1\")"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ErrorOf(c.text), c.error) << c.name;
  }
}

TEST(DecodeErrorsTest, ErrorParts) {
  try {
    DecodeManifests(Pod("  containers: [{name: c}]\n  priority: x\n"), "demo.yaml");
    FAIL() << "expected a DecodeError";
  } catch (const DecodeError& e) {
    EXPECT_EQ(e.source(), "demo.yaml");
    EXPECT_EQ(e.document(), 1);
    EXPECT_EQ(e.object(), "Pod default/p");
    EXPECT_EQ(e.path(), "spec.priority");
    EXPECT_EQ(e.reason(), "expected an integer, got \"x\"");
    EXPECT_EQ(e.line(), 0);
  }
  try {
    DecodeManifests("a: [", "demo.yaml");
    FAIL() << "expected a DecodeError";
  } catch (const DecodeError& e) {
    EXPECT_EQ(e.line(), 1);
    EXPECT_EQ(e.path(), "");
  }
}

}  // namespace
}  // namespace schedhost::model
