package scenario

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

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
		}
	}
	if nsCount > 1 {
		f["several namespaces"] = true
	}
	return f
}

func nodeFeatures(n *corev1.Node, f map[string]bool) {
	for k := range n.Labels {
		switch k {
		case LabelZone, LabelRegion, LabelHostname:
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
			var key string
			switch t := o.(type) {
			case *corev1.Pod:
				key = "pod " + t.Namespace + "/" + t.Name
			case *corev1.Node:
				key = "node " + t.Name
			case *corev1.Namespace:
				key = "ns " + t.Name
			case *policyv1.PodDisruptionBudget:
				key = "pdb " + t.Namespace + "/" + t.Name
			case *schedulingv1.PriorityClass:
				key = "pc " + t.Name
			}
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
