package oracle

import (
	"strings"
	"testing"
)

// twoZones are two nodes in two zones, each with a CSINode whose csi.example.com driver can
// attach one volume.
const twoZones = `
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1, topology.kubernetes.io/zone: zone-a}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2, topology.kubernetes.io/zone: zone-b}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec: {drivers: [{name: csi.example.com, nodeID: n1, allocatable: {count: 1}}]}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n2}
spec: {drivers: [{name: csi.example.com, nodeID: n2, allocatable: {count: 1}}]}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: csi.example.com
`

// boundClaim is a claim `name` bound to the volume `name`, which spec (lines of a volume's
// spec) describes. The claim carries the annotation the PV controller writes when it completes a
// binding: without it VolumeBinding takes the claim for one still being bound.
func boundClaim(name, class, spec string) string {
	return `
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: ` + name + `}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: ` + class + `
  claimRef: {namespace: default, name: ` + name + `}
` + spec + `
status: {phase: Bound}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: ` + name + `, annotations: {pv.kubernetes.io/bind-completed: "yes"}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ` + class + `
  volumeName: ` + name + `
  resources: {requests: {storage: 1Gi}}
status: {phase: Bound, capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce]}
`
}

// podWithClaims is a pending pod (or one bound to node) using the claims.
func podWithClaims(name, node string, claims ...string) string {
	out := `
---
apiVersion: v1
kind: Pod
metadata: {name: ` + name + `}
spec:
  containers: [{name: c, image: app}]
`
	if node != "" {
		out += "  nodeName: " + node + "\n"
	}
	out += "  volumes:\n"
	for _, c := range claims {
		out += "  - {name: " + c + ", persistentVolumeClaim: {claimName: " + c + "}}\n"
	}
	return out
}

func TestVolumeNodeAffinity(t *testing.T) {
	doc := explain(t, twoZones+boundClaim("data", "local", `
  local: {path: /mnt/data}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n1]}]`)+
		podWithClaims("db", "", "data"))
	equal(t, "nodes", cycle(t, doc, "db").Nodes, []NodeVerdict{
		{Name: "n1", Feasible: true},
		{Name: "n2", Plugin: "VolumeBinding", Code: "UnschedulableAndUnresolvable", Reasons: []string{"node(s) didn't match PersistentVolume's node affinity"}},
	})
}

// VolumeRestrictions' PreFilter runs before VolumeBinding's and is the first to miss the claim.
func TestMissingClaim(t *testing.T) {
	doc := explain(t, twoZones+podWithClaims("db", "", "x"))
	status := PluginStatus{Plugin: "VolumeRestrictions", Code: "UnschedulableAndUnresolvable", Reasons: []string{`persistentvolumeclaim "x" not found`}}
	equal(t, "preFilter", cycle(t, doc, "db").PreFilter, &status)
}

func TestUnboundImmediateClaim(t *testing.T) {
	doc := explain(t, twoZones+`
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: later}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  resources: {requests: {storage: 1Gi}}
status: {phase: Pending}
`+podWithClaims("db", "", "later"))
	status := PluginStatus{Plugin: "VolumeBinding", Code: "UnschedulableAndUnresolvable", Reasons: []string{"pod has unbound immediate PersistentVolumeClaims"}}
	equal(t, "preFilter", cycle(t, doc, "db").PreFilter, &status)
}

// A WaitForFirstConsumer claim is matched against available volumes node by node; a cycle does
// not bind it, so the next pod with the same claim matches the same volume again.
func TestWaitForFirstConsumerClaim(t *testing.T) {
	doc := explain(t, twoZones+`
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: local-n2}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  local: {path: /mnt/disk}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n2]}]
status: {phase: Available}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: small}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: local
  resources: {requests: {storage: 2Gi}}
status: {phase: Pending}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: huge}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: local
  resources: {requests: {storage: 50Gi}}
status: {phase: Pending}
`+podWithClaims("first", "", "small")+podWithClaims("second", "", "small")+podWithClaims("third", "", "huge"))
	noVolume := NodeVerdict{Plugin: "VolumeBinding", Code: "UnschedulableAndUnresolvable", Reasons: []string{"node(s) didn't find available persistent volumes to bind"}}
	n1 := noVolume
	n1.Name = "n1"
	for _, name := range []string{"first", "second"} {
		equal(t, name+" nodes", cycle(t, doc, name).Nodes, []NodeVerdict{n1, {Name: "n2", Feasible: true}})
	}
	n2 := noVolume
	n2.Name = "n2"
	equal(t, "third nodes", cycle(t, doc, "third").Nodes, []NodeVerdict{n1, n2})
}

func TestVolumeZone(t *testing.T) {
	doc := explain(t, twoZones+boundClaim("data", "fast", `
  csi: {driver: csi.example.com, volumeHandle: vol-1}`)+`
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: zoned, labels: {topology.kubernetes.io/zone: zone-b}}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  hostPath: {path: /data}
  claimRef: {namespace: default, name: zoned}
status: {phase: Bound}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: zoned, annotations: {pv.kubernetes.io/bind-completed: "yes"}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  volumeName: zoned
  resources: {requests: {storage: 1Gi}}
status: {phase: Bound}
`+podWithClaims("db", "", "zoned"))
	equal(t, "nodes", cycle(t, doc, "db").Nodes, []NodeVerdict{
		{Name: "n1", Plugin: "VolumeZone", Code: "UnschedulableAndUnresolvable", Reasons: []string{"node(s) had no available volume zone"}},
		{Name: "n2", Feasible: true},
	})
}

// n1's CSI driver attaches one volume, which a bound pod's volume takes; n2's driver has room
// for one, and a VolumeAttachment of the same volume does not count twice.
func TestCSIAttachLimit(t *testing.T) {
	doc := explain(t, twoZones+
		boundClaim("one", "fast", "  csi: {driver: csi.example.com, volumeHandle: vol-1}")+
		boundClaim("two", "fast", "  csi: {driver: csi.example.com, volumeHandle: vol-2}")+
		podWithClaims("running", "n1", "one")+
		podWithClaims("new", "", "two"))
	equal(t, "nodes", cycle(t, doc, "new").Nodes, []NodeVerdict{
		{Name: "n1", Plugin: "NodeVolumeLimits", Code: "Unschedulable", Reasons: []string{"node(s) exceed max volume count"}},
		{Name: "n2", Feasible: true},
	})
}

func TestReadWriteOncePodInUse(t *testing.T) {
	manifest := twoZones + boundClaim("solo", "fast", "  csi: {driver: csi.example.com, volumeHandle: vol-1}") +
		podWithClaims("running", "n1", "solo") + podWithClaims("new", "", "solo")
	manifest = strings.ReplaceAll(manifest, "accessModes: [ReadWriteOnce]", "accessModes: [ReadWriteOncePod]")
	doc := explain(t, manifest)
	// The pod using the claim counts wherever it runs: every node rejects the new one.
	reason := []string{"node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"}
	equal(t, "nodes", cycle(t, doc, "new").Nodes, []NodeVerdict{
		{Name: "n1", Plugin: "VolumeRestrictions", Code: "Unschedulable", Reasons: reason},
		{Name: "n2", Plugin: "VolumeRestrictions", Code: "Unschedulable", Reasons: reason},
	})
}
