package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	goyaml "go.yaml.in/yaml/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"schedhost.test/upstream/oracle"
)

const seeds = 200

func TestGenerateIsDeterministicPerSeed(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		a, err := Marshal(Generate(seed, Params{}))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Marshal(Generate(seed, Params{}))
		if !bytes.Equal(a, b) {
			t.Fatalf("seed %d: two generations differ", seed)
		}
		c, _ := Marshal(Generate(seed+1000, Params{}))
		if bytes.Equal(a, c) {
			t.Fatalf("seeds %d and %d generate the same scenario", seed, seed+1000)
		}
	}
}

// features lists what a scenario exercises, one name per feature the generator promises.
func features(objs []runtime.Object) map[string]bool {
	f := map[string]bool{}
	nsCount := 0
	for _, o := range objs {
		switch t := o.(type) {
		case *corev1.Namespace:
			nsCount++
			if t.Labels["team"] != "" || t.Labels["env"] != "" {
				f["namespace labels"] = true
			}
		case *schedulingv1.PriorityClass:
			f["priority class"] = true
			if t.GlobalDefault {
				f["class globalDefault"] = true
			}
			if t.PreemptionPolicy != nil && *t.PreemptionPolicy == corev1.PreemptNever {
				f["class preemptionPolicy Never"] = true
			}
		case *policyv1.PodDisruptionBudget:
			f["pdb"] = true
			if t.Spec.MinAvailable != nil {
				f["pdb minAvailable"] = true
			}
			if t.Spec.MaxUnavailable != nil {
				f["pdb maxUnavailable"] = true
			}
		case *corev1.Node:
			nodeFeatures(t, f)
		case *corev1.Pod:
			podFeatures(t, f)
		default:
			storageFeatures(o, f)
		}
	}
	if nsCount > 1 {
		f["several namespaces"] = true
	}
	return f
}

func storageFeatures(o runtime.Object, f map[string]bool) {
	switch t := o.(type) {
	case *storagev1.StorageClass:
		mode := "Immediate (default)"
		if t.VolumeBindingMode != nil {
			mode = string(*t.VolumeBindingMode)
		}
		f["storage class "+mode] = true
		f["storage class provisioner "+t.Provisioner] = true
		if len(t.AllowedTopologies) > 0 {
			f["storage class allowedTopologies"] = true
		}
	case *corev1.PersistentVolume:
		f["pv phase "+string(t.Status.Phase)] = true
		for _, m := range t.Spec.AccessModes {
			f["pv access mode "+string(m)] = true
		}
		switch {
		case t.Spec.CSI != nil:
			f["pv csi"] = true
		case t.Spec.Local != nil:
			f["pv local"] = true
		case t.Spec.HostPath != nil:
			f["pv hostPath"] = true
		}
		if t.Spec.NodeAffinity != nil {
			f["pv node affinity on "+t.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Key] = true
		}
		for k, v := range t.Labels {
			f["pv label "+k] = true
			if strings.Contains(v, "__") {
				f["pv in several zones"] = true
			}
		}
		if t.Spec.ClaimRef != nil && t.Status.Phase == corev1.VolumeAvailable {
			f["pv pre-bound by claimRef"] = true
		}
		if t.Spec.VolumeMode != nil && *t.Spec.VolumeMode == corev1.PersistentVolumeBlock {
			f["pv volumeMode Block"] = true
		}
	case *corev1.PersistentVolumeClaim:
		f["pvc phase "+string(t.Status.Phase)] = true
		switch {
		case len(t.OwnerReferences) > 0:
			f["pvc of an ephemeral volume"] = true
		case t.Spec.VolumeName != "" && t.Annotations[AnnBindCompleted] == "":
			f["pvc pre-bound by volumeName"] = true
		}
		if t.Spec.Selector != nil {
			f["pvc selector"] = true
		}
		if t.Spec.StorageClassName == nil {
			f["pvc without storageClassName"] = true
		}
	case *storagev1.CSINode:
		f["csinode"] = true
		for _, d := range t.Spec.Drivers {
			if d.Allocatable != nil {
				f["csinode driver with a limit"] = true
			}
		}
	case *storagev1.CSIDriver:
		f["csidriver"] = true
		if t.Spec.StorageCapacity != nil && *t.Spec.StorageCapacity {
			f["csidriver storageCapacity"] = true
		}
		if t.Spec.PreventPodSchedulingIfMissing != nil {
			f["csidriver preventPodSchedulingIfMissing"] = true
		}
	case *storagev1.CSIStorageCapacity:
		f["csistoragecapacity"] = true
		if t.MaximumVolumeSize != nil {
			f["csistoragecapacity maximumVolumeSize"] = true
		}
	case *storagev1.VolumeAttachment:
		f["volumeattachment"] = true
	}
}

func nodeFeatures(n *corev1.Node, f map[string]bool) {
	for k := range n.Labels {
		switch k {
		case LabelZone, LabelRegion, LabelHostname, LabelZoneBeta, LabelRegionBeta:
			f["node label "+k] = true
		default:
			f["node custom label"] = true
		}
	}
	for _, t := range n.Spec.Taints {
		f["taint "+string(t.Effect)] = true
	}
	if n.Spec.Unschedulable {
		f["unschedulable node"] = true
	}
	if len(n.Status.Images) > 0 {
		f["node images"] = true
	}
	if _, ok := n.Status.Allocatable[ResourceGPU]; ok {
		f["extended resource capacity"] = true
	}
	if p := n.Status.Allocatable[corev1.ResourcePods]; p.Value() < 110 {
		f["small pods capacity"] = true
	}
	c, a := n.Status.Capacity[corev1.ResourceCPU], n.Status.Allocatable[corev1.ResourceCPU]
	if a.Cmp(c) < 0 {
		f["allocatable below capacity"] = true
	}
}

func podFeatures(p *corev1.Pod, f map[string]bool) {
	s := &p.Spec
	if s.NodeName != "" {
		f["bound pod"] = true
	} else {
		f["pending pod"] = true
	}
	if p.Namespace != "default" {
		f["pod in another namespace"] = true
	}
	for _, c := range s.Containers {
		if len(c.Resources.Requests) > 0 {
			f["requests"] = true
		}
		if len(c.Resources.Limits) > 0 {
			f["limits"] = true
			if len(c.Resources.Requests) == 0 {
				f["limits only"] = true
			}
		}
		if len(c.Resources.Requests) == 0 && len(c.Resources.Limits) == 0 {
			f["best effort container"] = true
		}
		if _, ok := c.Resources.Requests[ResourceGPU]; ok {
			f["extended resource request"] = true
		}
		for _, port := range c.Ports {
			if port.HostPort != 0 {
				f["host port"] = true
			}
		}
	}
	for _, c := range s.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			f["sidecar"] = true
		} else {
			f["init container"] = true
		}
	}
	if len(s.Overhead) > 0 {
		f["overhead"] = true
	}
	if len(s.NodeSelector) > 0 {
		f["nodeSelector"] = true
	}
	if a := s.Affinity; a != nil {
		if na := a.NodeAffinity; na != nil {
			var terms []corev1.NodeSelectorTerm
			if na.RequiredDuringSchedulingIgnoredDuringExecution != nil {
				f["node affinity required"] = true
				terms = na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
			}
			for _, pt := range na.PreferredDuringSchedulingIgnoredDuringExecution {
				f["node affinity preferred"] = true
				terms = append(terms, pt.Preference)
			}
			for _, term := range terms {
				for _, r := range term.MatchExpressions {
					f["node affinity "+string(r.Operator)] = true
				}
				if len(term.MatchFields) > 0 {
					f["node affinity matchFields"] = true
				}
			}
		}
		podTerms := func(name string, req []corev1.PodAffinityTerm, pref []corev1.WeightedPodAffinityTerm) {
			if len(req) > 0 {
				f[name+" required"] = true
			}
			if len(pref) > 0 {
				f[name+" preferred"] = true
			}
			for _, w := range pref {
				req = append(req, w.PodAffinityTerm)
			}
			for _, term := range req {
				if len(term.Namespaces) > 0 {
					f["affinity term namespaces"] = true
				}
				if term.NamespaceSelector != nil {
					f["affinity term namespaceSelector"] = true
				}
				if len(term.MatchLabelKeys) > 0 {
					f["affinity term matchLabelKeys"] = true
				}
				if len(term.MismatchLabelKeys) > 0 {
					f["affinity term mismatchLabelKeys"] = true
				}
			}
		}
		if a.PodAffinity != nil {
			podTerms("pod affinity", a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
		}
		if a.PodAntiAffinity != nil {
			podTerms("pod anti-affinity", a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
		}
	}
	for _, t := range s.Tolerations {
		op := t.Operator
		if op == "" {
			op = "Equal (default)"
		}
		f["toleration operator "+string(op)] = true
		effect := string(t.Effect)
		if effect == "" {
			effect = "all effects"
		}
		f["toleration effect "+effect] = true
		if t.TolerationSeconds != nil {
			f["tolerationSeconds"] = true
		}
		if t.Key == "" {
			f["toleration of every key"] = true
		}
	}
	for _, c := range s.TopologySpreadConstraints {
		f["spread "+string(c.WhenUnsatisfiable)] = true
		f["spread over "+c.TopologyKey] = true
		if c.MinDomains != nil {
			f["spread minDomains"] = true
		}
		if c.NodeAffinityPolicy != nil {
			f["spread nodeAffinityPolicy "+string(*c.NodeAffinityPolicy)] = true
		}
		if c.NodeTaintsPolicy != nil {
			f["spread nodeTaintsPolicy "+string(*c.NodeTaintsPolicy)] = true
		}
		if len(c.MatchLabelKeys) > 0 {
			f["spread matchLabelKeys"] = true
		}
	}
	if s.PriorityClassName != "" {
		f["pod priorityClassName"] = true
	}
	for _, v := range s.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			f["volume persistentVolumeClaim"] = true
			if v.PersistentVolumeClaim.ClaimName == "missing" {
				f["volume of a missing claim"] = true
			}
		case v.Ephemeral != nil:
			f["volume ephemeral"] = true
		case v.GCEPersistentDisk != nil:
			f["volume gcePersistentDisk"] = true
		case v.AWSElasticBlockStore != nil:
			f["volume awsElasticBlockStore"] = true
		case v.RBD != nil:
			f["volume rbd"] = true
		case v.ISCSI != nil:
			f["volume iscsi"] = true
		case v.EmptyDir != nil:
			f["volume emptyDir"] = true
		default:
			f["volume of another source"] = true
		}
	}
	if len(s.SchedulingGates) > 0 {
		f["scheduling gates"] = true
	}
}

// TestGenerateCoversEveryFeature: across 200 seeds every promised feature appears, and a
// typical scenario combines many of them.
func TestGenerateCoversEveryFeature(t *testing.T) {
	want := []string{
		"node label " + LabelZone, "node label " + LabelRegion, "node label " + LabelHostname,
		"node custom label", "taint NoSchedule", "taint PreferNoSchedule", "taint NoExecute",
		"unschedulable node", "node images", "extended resource capacity", "small pods capacity",
		"allocatable below capacity",
		"namespace labels", "several namespaces", "pod in another namespace",
		"priority class", "class globalDefault", "class preemptionPolicy Never", "pod priorityClassName",
		"pdb", "pdb minAvailable", "pdb maxUnavailable",
		"bound pod", "pending pod", "requests", "limits", "limits only", "best effort container",
		"extended resource request", "host port", "init container", "sidecar", "overhead",
		"nodeSelector", "node affinity required", "node affinity preferred",
		"node affinity In", "node affinity NotIn", "node affinity Exists", "node affinity DoesNotExist",
		"node affinity Gt", "node affinity Lt", "node affinity matchFields",
		"toleration operator Equal", "toleration operator Exists", "toleration operator Equal (default)",
		"toleration effect NoSchedule", "toleration effect PreferNoSchedule", "toleration effect NoExecute",
		"toleration effect all effects", "tolerationSeconds", "toleration of every key",
		"pod affinity required", "pod affinity preferred", "pod anti-affinity required", "pod anti-affinity preferred",
		"affinity term namespaces", "affinity term namespaceSelector", "affinity term matchLabelKeys",
		"affinity term mismatchLabelKeys",
		"spread DoNotSchedule", "spread ScheduleAnyway", "spread minDomains",
		"spread over " + LabelZone, "spread over " + LabelHostname, "spread over " + LabelRegion,
		"spread nodeAffinityPolicy Honor", "spread nodeAffinityPolicy Ignore",
		"spread nodeTaintsPolicy Honor", "spread nodeTaintsPolicy Ignore", "spread matchLabelKeys",
		"scheduling gates",
		"node label " + LabelZoneBeta, "node label " + LabelRegionBeta,
		"storage class Immediate", "storage class Immediate (default)", "storage class WaitForFirstConsumer",
		"storage class provisioner " + ProvisionerNone, "storage class provisioner " + DriverCSI,
		"storage class provisioner " + ProvisionerGCEPD, "storage class allowedTopologies",
		"pv phase Available", "pv phase Bound", "pv access mode ReadWriteOnce", "pv access mode ReadWriteOncePod",
		"pv access mode ReadOnlyMany", "pv access mode ReadWriteMany", "pv csi", "pv local", "pv hostPath",
		"pv node affinity on " + LabelHostname, "pv node affinity on " + LabelZone,
		"pv label " + LabelZone, "pv label " + LabelZoneBeta, "pv label " + LabelRegion, "pv label " + LabelRegionBeta,
		"pv in several zones", "pv pre-bound by claimRef", "pv volumeMode Block",
		"pvc phase Bound", "pvc phase Pending", "pvc phase Lost", "pvc of an ephemeral volume",
		"pvc pre-bound by volumeName", "pvc selector", "pvc without storageClassName",
		"csinode", "csinode driver with a limit", "csidriver", "csidriver storageCapacity",
		"csidriver preventPodSchedulingIfMissing", "csistoragecapacity", "csistoragecapacity maximumVolumeSize",
		"volumeattachment",
		"volume persistentVolumeClaim", "volume of a missing claim", "volume ephemeral", "volume gcePersistentDisk",
		"volume awsElasticBlockStore", "volume rbd", "volume iscsi", "volume emptyDir",
	}
	seen := map[string]int{}
	var perScenario []int
	for seed := int64(1); seed <= seeds; seed++ {
		f := features(Generate(seed, Params{}))
		for k := range f {
			seen[k]++
		}
		perScenario = append(perScenario, len(f))
	}
	var missing []string
	for _, w := range want {
		if seen[w] == 0 {
			missing = append(missing, w)
		}
	}
	for k := range seen {
		if k == "volume of another source" {
			t.Errorf("a pod has a volume source no plugin evaluates or the generator does not promise")
		}
	}
	if len(missing) > 0 {
		t.Errorf("features never generated in %d seeds: %s", seeds, strings.Join(missing, "; "))
	}
	sort.Ints(perScenario)
	if median := perScenario[len(perScenario)/2]; median < 25 {
		t.Errorf("the median scenario exercises %d features; want them to combine (>= 25)", median)
	}
	if testing.Verbose() {
		for _, w := range want {
			t.Logf("%4d/%d %s", seen[w], seeds, w)
		}
	}
}

// TestGenerateRespectsParams: sizes stay in the bounds, and the defaults are the documented
// ones.
func TestGenerateRespectsParams(t *testing.T) {
	count := func(objs []runtime.Object) (nodes, bound, pending int) {
		for _, o := range objs {
			switch t := o.(type) {
			case *corev1.Node:
				nodes++
			case *corev1.Pod:
				if t.Spec.NodeName != "" {
					bound++
				} else {
					pending++
				}
			}
		}
		return
	}
	p := Params{MinNodes: 2, MaxNodes: 4, MinBound: 0, MaxBound: 3, MinPending: 5, MaxPending: 6}
	for seed := int64(1); seed <= 50; seed++ {
		n, b, pe := count(Generate(seed, p))
		if n < 2 || n > 4 || b > 3 || pe < 5 || pe > 6 {
			t.Fatalf("seed %d: %d nodes, %d bound, %d pending; want 2-4, 0-3, 5-6", seed, n, b, pe)
		}
	}
	maxNodes, maxBound, maxPending := 0, 0, 0
	for seed := int64(1); seed <= seeds; seed++ {
		n, b, pe := count(Generate(seed, Params{}))
		if n < 3 || n > 20 || b > 40 || pe < 1 || pe > 12 {
			t.Fatalf("seed %d: %d nodes, %d bound, %d pending; want 3-20, 0-40, 1-12", seed, n, b, pe)
		}
		maxNodes, maxBound, maxPending = max(maxNodes, n), max(maxBound, b), max(maxPending, pe)
	}
	if maxNodes < 15 || maxBound < 25 || maxPending < 10 {
		t.Errorf("over %d seeds at most %d nodes, %d bound and %d pending pods: the ranges are not used", seeds, maxNodes, maxBound, maxPending)
	}
}

// TestBoundPodsMostlyFit: bound pods respect their node's allocatable, bar the rare
// deliberate overcommitment, and a priorityClassName always names a generated class.
func TestBoundPodsMostlyFit(t *testing.T) {
	overcommitted, nodes := 0, 0
	for seed := int64(1); seed <= seeds; seed++ {
		objs := Generate(seed, Params{})
		used := map[string]corev1.ResourceList{}
		count := map[string]int64{}
		classes := map[string]bool{}
		defaults := 0
		for _, o := range objs {
			if pc, ok := o.(*schedulingv1.PriorityClass); ok {
				classes[pc.Name] = true
				if pc.GlobalDefault {
					defaults++
				}
			}
		}
		if defaults > 1 {
			t.Fatalf("seed %d: %d global default classes", seed, defaults)
		}
		for _, o := range objs {
			p, ok := o.(*corev1.Pod)
			if !ok {
				continue
			}
			if p.Spec.PriorityClassName != "" && !classes[p.Spec.PriorityClassName] {
				t.Fatalf("seed %d: pod %s names the missing class %q", seed, p.Name, p.Spec.PriorityClassName)
			}
			if p.Spec.NodeName == "" {
				continue
			}
			if len(p.Spec.SchedulingGates) > 0 {
				t.Fatalf("seed %d: bound pod %s has scheduling gates", seed, p.Name)
			}
			if used[p.Spec.NodeName] == nil {
				used[p.Spec.NodeName] = corev1.ResourceList{}
			}
			for k, v := range requests(&p.Spec) {
				u := used[p.Spec.NodeName][k]
				u.Add(v)
				used[p.Spec.NodeName][k] = u
			}
			count[p.Spec.NodeName]++
		}
		for _, o := range objs {
			n, ok := o.(*corev1.Node)
			if !ok {
				continue
			}
			nodes++
			over := count[n.Name] > n.Status.Allocatable.Pods().Value()
			for k, v := range used[n.Name] {
				a := n.Status.Allocatable[k]
				over = over || v.Cmp(a) > 0
			}
			if over {
				overcommitted++
			}
		}
	}
	if overcommitted*50 > nodes {
		t.Errorf("%d of %d nodes are overcommitted; want under 2%%", overcommitted, nodes)
	}
}

// TestYAMLRoundTrip: what WriteYAML writes reads back as the same objects (so pruning the
// empty fields lost nothing, such as an empty label selector), without empty status noise.
func TestYAMLRoundTrip(t *testing.T) {
	for seed := int64(1); seed <= 50; seed++ {
		objs := Generate(seed, Params{})
		data, err := Marshal(objs)
		if err != nil {
			t.Fatal(err)
		}
		for _, noise := range []string{"creationTimestamp: null", "status: {}", "daemonEndpoints", "nodeInfo", "resources: {}"} {
			if bytes.Contains(data, []byte(noise)) {
				t.Fatalf("seed %d: the YAML holds %q", seed, noise)
			}
		}
		back, err := ReadYAML(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if len(back) != len(objs) {
			t.Fatalf("seed %d: wrote %d objects, read %d", seed, len(objs), len(back))
		}
		for i := range objs {
			if !apiequality.Semantic.DeepEqual(objs[i], back[i]) {
				t.Fatalf("seed %d: object %d changed in the round trip:\nwrote %#v\nread  %#v", seed, i, objs[i], back[i])
			}
		}
	}
}

// TestYAMLIsSigsYAML: WriteYAML writes what sigs.k8s.io/yaml.Marshal writes for each top-level
// field of the pruned tree, byte for byte (yamlValue skips its JSON round trip), with storage
// and without, and for the numbers a round trip turns into something else than an int.
func TestYAMLIsSigsYAML(t *testing.T) {
	reference := func(objs []runtime.Object) []byte {
		var out bytes.Buffer
		for i, o := range objs {
			o = o.DeepCopyObject()
			SetTypeMeta(o)
			raw, err := json.Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			var tree map[string]any
			if err := json.Unmarshal(raw, &tree); err != nil {
				t.Fatal(err)
			}
			prune(tree)
			if status, ok := tree["status"].(map[string]any); ok {
				if de, ok := status["daemonEndpoints"].(map[string]any); ok && isZeroTree(de) {
					delete(status, "daemonEndpoints")
				}
				if ni, ok := status["nodeInfo"].(map[string]any); ok && isZeroTree(ni) {
					delete(status, "nodeInfo")
				}
				if len(status) == 0 {
					delete(tree, "status")
				}
			}
			if i > 0 {
				out.WriteString("---\n")
			}
			for _, k := range topLevelOrder(tree) {
				b, err := yaml.Marshal(map[string]any{k: tree[k]})
				if err != nil {
					t.Fatal(err)
				}
				out.Write(b)
			}
		}
		return out.Bytes()
	}
	for seed := int64(1); seed <= seeds/2; seed++ {
		for _, p := range []Params{{}, {AlwaysStorage: true}} {
			objs := Generate(seed, p)
			got, err := Marshal(objs)
			if err != nil {
				t.Fatal(err)
			}
			if want := reference(objs); !bytes.Equal(got, want) {
				t.Fatalf("seed %d %+v: WriteYAML wrote\n%s\nsigs.k8s.io/yaml writes\n%s", seed, p, got, want)
			}
		}
	}
	for _, n := range []float64{0, -3, 1.5, 1e-7, 1 << 53, 1<<63 + 4096, 1e21, -1e300} {
		got, err := goyaml.Marshal(map[string]any{"n": yamlValue(n)})
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := yaml.Marshal(map[string]any{"n": n}); !bytes.Equal(got, want) {
			t.Errorf("%v: wrote %q, sigs.k8s.io/yaml writes %q", n, got, want)
		}
	}
}

// TestEmptySelectorSurvives: an empty selector means "everything"; dropping it as noise
// would make it mean "nothing".
func TestEmptySelectorSurvives(t *testing.T) {
	data, err := Marshal([]runtime.Object{&corev1.Pod{
		Spec: corev1.PodSpec{Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: nil, NamespaceSelector: &metav1.LabelSelector{}, TopologyKey: LabelHostname,
			}},
		}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("namespaceSelector: {}")) {
		t.Fatalf("the empty namespaceSelector is gone:\n%s", data)
	}
	if bytes.Contains(data, []byte("labelSelector")) {
		t.Fatalf("a nil labelSelector was written:\n%s", data)
	}
	if !strings.HasPrefix(string(data), "apiVersion: v1\nkind: Pod\n") {
		t.Fatalf("a document does not start with apiVersion and kind:\n%s", data)
	}
}

// TestOracleAcceptsScenarios: the oracle decodes every scenario (its decoder runs the API
// server's validation and admission), so nothing the generator writes is refused.
func TestOracleAcceptsScenarios(t *testing.T) {
	dir := t.TempDir()
	for seed := int64(1); seed <= seeds; seed++ {
		objs := Generate(seed, Params{})
		data, err := Marshal(objs)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("%d.yaml", seed))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		decoded, err := oracle.Decode([]string{path})
		if err != nil {
			t.Fatalf("seed %d: the oracle refuses the scenario: %v", seed, err)
		}
		if len(decoded) != len(objs) {
			t.Fatalf("seed %d: wrote %d objects, the oracle decoded %d", seed, len(objs), len(decoded))
		}
	}
}

// TestNamesAreUnique: two objects of a kind never share a namespace and name.
func TestNamesAreUnique(t *testing.T) {
	for seed := int64(1); seed <= seeds; seed++ {
		var keys []string
		for _, o := range Generate(seed, Params{}) {
			m, err := meta.Accessor(o)
			if err != nil {
				t.Fatal(err)
			}
			key := fmt.Sprintf("%s %s/%s", o.GetObjectKind().GroupVersionKind().Kind, m.GetNamespace(), m.GetName())
			if slices.Contains(keys, key) {
				t.Fatalf("seed %d: %s twice", seed, key)
			}
			keys = append(keys, key)
		}
	}
}

// Two running pods never hold conflicting host ports on a node (the kubelet refuses the second).
func TestBoundPodsNeverShareAHostPort(t *testing.T) {
	withPorts := 0
	for seed := int64(1); seed <= 300; seed++ {
		held := map[string][]string{} // node + port -> the addresses held
		for _, obj := range Generate(seed, Params{}) {
			pod, ok := obj.(*corev1.Pod)
			if !ok || pod.Spec.NodeName == "" {
				continue
			}
			for _, p := range hostPorts(&pod.Spec) {
				key := pod.Spec.NodeName + " " + p.key
				for _, ip := range held[key] {
					if ip == p.ip || ip == "0.0.0.0" || p.ip == "0.0.0.0" {
						t.Fatalf("seed %d: %s holds %s on %s, already held on %s", seed, pod.Name, key, p.ip, ip)
					}
				}
				held[key] = append(held[key], p.ip)
				withPorts++
			}
		}
	}
	if withPorts == 0 {
		t.Fatal("no bound pod held a host port in 300 seeds: the check checked nothing")
	}
}

// TestStorageInvariants: about 40% of the scenarios have storage, and its objects tell one
// story: every volume states its phase, a Bound one's claimRef names a claim that names it back
// (and is Bound), a claim the PV controller bound names a volume or one that is gone, a bound
// pod's claims are bound to volumes that reach its node, and an ephemeral volume's claim is
// controlled by a pod.
func TestStorageInvariants(t *testing.T) {
	withStorage := 0
	for seed := int64(1); seed <= seeds; seed++ {
		objs := Generate(seed, Params{})
		pvs := map[string]*corev1.PersistentVolume{}
		pvcs := map[string]*corev1.PersistentVolumeClaim{}
		nodes := map[string]*corev1.Node{}
		for _, o := range objs {
			switch v := o.(type) {
			case *corev1.PersistentVolume:
				pvs[v.Name] = v
			case *corev1.PersistentVolumeClaim:
				pvcs[v.Namespace+"/"+v.Name] = v
			case *corev1.Node:
				nodes[v.Name] = v
			}
		}
		if len(pvs)+len(pvcs) > 0 {
			withStorage++
		}
		for _, pv := range pvs {
			switch pv.Status.Phase {
			case corev1.VolumeAvailable:
			case corev1.VolumeBound:
				claim := pvcs[pv.Spec.ClaimRef.Namespace+"/"+pv.Spec.ClaimRef.Name]
				if claim == nil || claim.Spec.VolumeName != pv.Name || claim.Status.Phase != corev1.ClaimBound {
					t.Fatalf("seed %d: volume %s is Bound, but its claim does not name it back", seed, pv.Name)
				}
			default:
				t.Fatalf("seed %d: volume %s has phase %q", seed, pv.Name, pv.Status.Phase)
			}
		}
		for key, pvc := range pvcs {
			if pvc.Annotations[AnnBindCompleted] == "" {
				continue
			}
			if pv := pvs[pvc.Spec.VolumeName]; pv != nil && (pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Namespace+"/"+pv.Spec.ClaimRef.Name != key) {
				t.Fatalf("seed %d: claim %s is bound to %s, which is not bound to it", seed, key, pv.Name)
			}
		}
		for _, o := range objs {
			pod, ok := o.(*corev1.Pod)
			if !ok {
				continue
			}
			for _, v := range pod.Spec.Volumes {
				if v.Ephemeral != nil {
					if claim := pvcs[pod.Namespace+"/"+pod.Name+"-"+v.Name]; claim != nil && pod.UID == "" {
						t.Fatalf("seed %d: pod %s has an ephemeral claim but states no uid", seed, pod.Name)
					}
				}
				if v.PersistentVolumeClaim == nil || pod.Spec.NodeName == "" {
					continue
				}
				claim := pvcs[pod.Namespace+"/"+v.PersistentVolumeClaim.ClaimName]
				if claim == nil || claim.Status.Phase != corev1.ClaimBound || pvs[claim.Spec.VolumeName] == nil {
					t.Fatalf("seed %d: bound pod %s uses claim %s, which is not bound to a volume", seed, pod.Name, v.PersistentVolumeClaim.ClaimName)
				}
				if !reaches(pvs[claim.Spec.VolumeName], nodes[pod.Spec.NodeName]) {
					t.Fatalf("seed %d: bound pod %s runs where its volume %s does not reach", seed, pod.Name, claim.Spec.VolumeName)
				}
			}
		}
	}
	if withStorage < seeds/4 || withStorage > seeds*3/5 {
		t.Errorf("%d of %d scenarios have storage; want about 40%%", withStorage, seeds)
	}
}

func TestAlwaysStorageGivesEverySeedStorageAndKeepsTheOthers(t *testing.T) {
	storageOf := func(objs []runtime.Object) int {
		n := 0
		for _, o := range objs {
			switch o.(type) {
			case *corev1.PersistentVolume, *corev1.PersistentVolumeClaim, *storagev1.StorageClass:
				n++
			}
		}
		return n
	}
	for seed := int64(1); seed <= 40; seed++ {
		some := Generate(seed, Params{})
		always := Generate(seed, Params{AlwaysStorage: true})
		if storageOf(always) == 0 {
			t.Fatalf("seed %d: AlwaysStorage made no storage", seed)
		}
		if storageOf(some) > 0 && !apiequality.Semantic.DeepEqual(some, always) {
			t.Fatalf("seed %d: a seed with storage generates another scenario under AlwaysStorage", seed)
		}
	}
}

// Upstream takes the first volume pre-bound to a claim in a Go map's order: two would make its
// choice random, so a claim has at most one.
func TestAtMostOneVolumeRefersToAClaim(t *testing.T) {
	for seed := int64(1); seed <= 300; seed++ {
		owner := map[string]string{}
		for _, o := range Generate(seed, Params{AlwaysStorage: true}) {
			pv, ok := o.(*corev1.PersistentVolume)
			if !ok || pv.Spec.ClaimRef == nil {
				continue
			}
			key := pv.Spec.ClaimRef.Namespace + "/" + pv.Spec.ClaimRef.Name
			if other, taken := owner[key]; taken {
				t.Fatalf("seed %d: volumes %s and %s both refer to claim %s", seed, other, pv.Name, key)
			}
			owner[key] = pv.Name
		}
	}
}
