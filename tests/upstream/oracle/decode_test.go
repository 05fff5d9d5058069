package oracle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func decode(t *testing.T, manifest string) []runtime.Object {
	t.Helper()
	objs, err := DecodeReader(strings.NewReader(manifest), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func TestDecodeAppliesWhatTheAPIServerDoes(t *testing.T) {
	objs := decode(t, `
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: c
    image: app
    ports: [{containerPort: 80, hostPort: 8080}]
    resources: {limits: {cpu: "1"}}
  tolerations: [{key: k, effect: NoSchedule}]
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: web}}
    matchLabelKeys: [version]
  nodeName: ""
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: standard}
value: 7
globalDefault: true
---
apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "2"}}
`)
	pod := objs[0].(*v1.Pod)
	spec := pod.Spec
	equal(t, "namespace", pod.Namespace, "default")
	equal(t, "schedulerName", spec.SchedulerName, "default-scheduler")
	equal(t, "port protocol", spec.Containers[0].Ports[0].Protocol, v1.ProtocolTCP)
	// No defaulting function touches tolerations: an empty operator stays empty (and means Equal).
	equal(t, "toleration operator", spec.Tolerations[0].Operator, v1.TolerationOperator(""))
	equal(t, "requests from limits", spec.Containers[0].Resources.Requests[v1.ResourceCPU], resource.MustParse("1"))
	// The PriorityClass comes later in the input, yet admission sees it: classes are created first.
	equal(t, "priority", *spec.Priority, int32(7))
	equal(t, "priorityClassName", spec.PriorityClassName, "standard")
	equal(t, "preemptionPolicy", *spec.PreemptionPolicy, v1.PreemptLowerPriority)
	// matchLabelKeys of a pod without that label add nothing to the selector.
	equal(t, "spread selector", spec.TopologySpreadConstraints[0].LabelSelector, &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}})
	equal(t, "uid", pod.UID != "", true)
	equal(t, "creationTimestamp", pod.CreationTimestamp.Time, CreationEpoch)
	equal(t, "node's creationTimestamp", objs[3].(*v1.Node).CreationTimestamp.Time, CreationEpoch.Add(3e9))
	equal(t, "namespace label", objs[2].(*v1.Namespace).Labels, map[string]string{"kubernetes.io/metadata.name": "team"})
	equal(t, "allocatable", objs[3].(*v1.Node).Status.Allocatable, v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")})
	equal(t, "PriorityClass preemptionPolicy", *objs[1].(*schedulingv1.PriorityClass).PreemptionPolicy, v1.PreemptLowerPriority)

	again := decode(t, `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": {"containers": [{"name": "c", "image": "app"}]}}`)
	equal(t, "uid is a function of the name", again[0].(*v1.Pod).UID, pod.UID)
	equal(t, "priority without classes", *again[0].(*v1.Pod).Spec.Priority, int32(0))
}

func TestDecodeMergesMatchLabelKeys(t *testing.T) {
	objs := decode(t, `
apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web, version: v2}}
spec:
  containers: [{name: c, image: app}]
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: web}}
        matchLabelKeys: [version]
        topologyKey: kubernetes.io/hostname
`)
	term := objs[0].(*v1.Pod).Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
	equal(t, "selector", term.LabelSelector, &metav1.LabelSelector{
		MatchLabels:      map[string]string{"app": "web"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "version", Operator: metav1.LabelSelectorOpIn, Values: []string{"v2"}}},
	})
}

func TestDecodeLists(t *testing.T) {
	objs := decode(t, `
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
- apiVersion: policy/v1
  kind: PodDisruptionBudget
  metadata: {name: guard, namespace: team}
  spec: {maxUnavailable: 1, selector: {matchLabels: {app: db}}}
---
apiVersion: v1
kind: PodList
items:
- metadata: {name: a}
  spec: {containers: [{name: c, image: app}]}
- metadata: {name: b}
  spec: {containers: [{name: c, image: app}]}
`)
	var got []string
	for _, o := range objs {
		got = append(got, o.GetObjectKind().GroupVersionKind().Kind)
	}
	equal(t, "kinds", got, []string{"Node", "PodDisruptionBudget", "Pod", "Pod"})
	equal(t, "PDB namespace", objs[1].(*policyv1.PodDisruptionBudget).Namespace, "team")
	equal(t, "second pod", objs[3].(*v1.Pod).Name, "b")
}

func TestDecodeStorageKinds(t *testing.T) {
	objs := decode(t, `
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: plain}
provisioner: csi.example.com
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
status: {phase: Bound}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /data}
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: csi.example.com}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacityList
items:
- metadata: {name: cap}
  storageClassName: plain
  capacity: 10Gi
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va}
spec: {attacher: csi.example.com, nodeName: n1, source: {persistentVolumeName: pv}}
status: {attached: true}
`)
	equal(t, "volumeBindingMode", *objs[0].(*storagev1.StorageClass).VolumeBindingMode, storagev1.VolumeBindingImmediate)
	claim := objs[1].(*v1.PersistentVolumeClaim)
	equal(t, "claim namespace", claim.Namespace, "default")
	equal(t, "claim volumeMode", *claim.Spec.VolumeMode, v1.PersistentVolumeFilesystem)
	equal(t, "claim phase kept", claim.Status.Phase, v1.ClaimBound)
	pv := objs[2].(*v1.PersistentVolume)
	equal(t, "reclaim policy", pv.Spec.PersistentVolumeReclaimPolicy, v1.PersistentVolumeReclaimRetain)
	equal(t, "volume phase of a create", pv.Status.Phase, v1.VolumePending)
	equal(t, "attachRequired", *objs[3].(*storagev1.CSIDriver).Spec.AttachRequired, true)
	equal(t, "capacity namespace", objs[4].(*storagev1.CSIStorageCapacity).Namespace, "default")
	equal(t, "attached kept", objs[5].(*storagev1.VolumeAttachment).Status.Attached, true)
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ name, manifest, want string }{
		{"unsupported kind", `
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}`, `test.yaml: document 2: kind "Deployment" of apiVersion "apps/v1" is not supported`},
		{"unsupported kind in a list", `
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Service, metadata: {name: s}}`, `test.yaml: document 1, item 1: kind "Service"`},
		{"unknown field", `
apiVersion: v1
kind: Node
metadata: {name: n1}
spec: {unschedulabel: true}`, `test.yaml: document 1: strict decoding error: unknown field "spec.unschedulabel"`},
		{"unknown PriorityClass", `
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {priorityClassName: gold, containers: [{name: c, image: app}]}`, `test.yaml: document 1 (Pod p): pods "p" is forbidden: no PriorityClass with name gold was found`},
		{"priority given with its class", `
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {priority: 5, containers: [{name: c, image: app}]}`, `the integer value of priority (5) must not be provided in pod spec`},
		{"two default classes", `
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: a}
value: 1
globalDefault: true
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: b}
value: 2
globalDefault: true`, `test.yaml: document 2 (PriorityClass b): priorityclasses.scheduling.k8s.io "b" is forbidden: PriorityClass a is already marked as default`},
		{"invalid object", `
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c}]}`, `test.yaml: document 1 (Pod p): invalid: spec.containers[0].image: Required value`},
		{"duplicate", `
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: v1
kind: Node
metadata: {name: n1}`, `test.yaml: document 2: Node n1 already exists (test.yaml: document 1)`},
		{"local volume without node affinity", `
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv}
spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], local: {path: /mnt}}`, `test.yaml: document 1 (PersistentVolume pv): invalid: spec.nodeAffinity: Required value: Local volume requires node affinity`},
		{"class without provisioner", `
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: sc}
provisioner: ""`, `test.yaml: document 1 (StorageClass sc): invalid: provisioner: Required value`},
		{"claim without a size", `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: c}
spec: {accessModes: [ReadWriteOnce]}`, `spec.resources[storage]: Required value`},
		{"no name", `
apiVersion: v1
kind: Pod
metadata: {generateName: p-}
spec: {containers: [{name: c, image: app}]}`, `test.yaml: document 1: Pod has no metadata.name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeReader(strings.NewReader(tc.manifest), "test.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestDecodeFilesInOrder(t *testing.T) {
	dir := t.TempDir()
	classes := filepath.Join(dir, "classes.yaml")
	pods := filepath.Join(dir, "pods.json")
	if err := os.WriteFile(classes, []byte("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: gold}\nvalue: 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pods, []byte(`{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
		"spec": {"priorityClassName": "gold", "containers": [{"name": "c", "image": "app"}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	objs, err := Decode([]string{classes, pods})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "priority", *objs[1].(*v1.Pod).Spec.Priority, int32(100))
	_, err = Decode([]string{pods})
	if err == nil || !strings.HasPrefix(err.Error(), pods+": document 1 (Pod p):") {
		t.Errorf("got error %v, want one naming %s", err, pods)
	}
}
