package oracle

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// explain decodes manifest and explains it, checking the document's invariants.
func explain(t *testing.T, manifest string) *Document {
	t.Helper()
	objs, err := DecodeReader(strings.NewReader(manifest), "test.yaml")
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	doc, err := Explain(objs)
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	checkInvariants(t, doc)
	return doc
}

// checkInvariants checks what docs/conformance.md says of every document.
func checkInvariants(t *testing.T, doc *Document) {
	t.Helper()
	for _, p := range doc.Pods {
		if p.Gated != nil {
			if p.PreFilter != nil || p.Nodes != nil || p.Scores != nil || p.Best != nil || p.Placed != "" || p.Message != "" || p.PostFilter != nil {
				t.Errorf("%s: gated, yet more follows: %+v", p.Name, p)
			}
			continue
		}
		if !sort.SliceIsSorted(p.Nodes, func(i, j int) bool { return p.Nodes[i].Name < p.Nodes[j].Name }) {
			t.Errorf("%s: nodes not sorted by name", p.Name)
		}
		var feasible []string
		for _, n := range p.Nodes {
			if n.Feasible {
				feasible = append(feasible, n.Name)
				if n.Plugin != "" || n.Code != "" || n.Reasons != nil {
					t.Errorf("%s: feasible node %s carries a status", p.Name, n.Name)
				}
			} else if n.Code == "" || len(n.Reasons) == 0 {
				t.Errorf("%s: rejected node %s without code or reasons", p.Name, n.Name)
			}
		}
		if (len(feasible) >= 2) != (p.Scores != nil) {
			t.Errorf("%s: %d feasible nodes but %d scored", p.Name, len(feasible), len(p.Scores))
		}
		for _, s := range p.Scores {
			var total int64
			for _, ps := range s.Plugins {
				total += ps.Weighted
			}
			if total != s.Total {
				t.Errorf("%s: node %s total %d, weighted scores add up to %d", p.Name, s.Name, s.Total, total)
			}
			if !sort.SliceIsSorted(s.Plugins, func(i, j int) bool { return s.Plugins[i].Plugin < s.Plugins[j].Plugin }) {
				t.Errorf("%s: node %s plugins not sorted", p.Name, s.Name)
			}
		}
		for _, b := range p.Best {
			if !slices.Contains(feasible, b) {
				t.Errorf("%s: best node %s is not feasible", p.Name, b)
			}
		}
		if len(p.Nodes) == 0 {
			continue // no nodes: upstream fails the cycle before Filter and PostFilter
		}
		if len(feasible) > 0 {
			if p.Placed != p.Best[0] || p.Message != "" || p.PostFilter != nil {
				t.Errorf("%s: fits, yet placed %q of best %v, message %q, postFilter %+v", p.Name, p.Placed, p.Best, p.Message, p.PostFilter)
			}
		} else if p.Best != nil || p.Placed != "" || p.Message == "" || p.PostFilter == nil || p.PostFilter.Victims == nil {
			t.Errorf("%s: fits nowhere, yet %+v", p.Name, p)
		}
	}
}

// cycle returns the document's entry for the pod named name.
func cycle(t *testing.T, doc *Document, name string) PodCycle {
	t.Helper()
	for _, p := range doc.Pods {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no entry for pod %s in %+v", name, doc.Pods)
	return PodCycle{}
}

func equal(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

const twoNodes = `
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
status: {allocatable: {cpu: "4", memory: 4Gi, pods: "10"}}
`

func TestInsufficientCPUOnOneNode(t *testing.T) {
	doc := explain(t, twoNodes+`
---
apiVersion: v1
kind: Pod
metadata: {name: big}
spec:
  containers: [{name: c, image: app, resources: {requests: {cpu: "3"}}}]
`)
	p := cycle(t, doc, "big")
	equal(t, "nodes", p.Nodes, []NodeVerdict{
		// More than n1 has at all: no preemption could make room.
		{Name: "n1", Plugin: "NodeResourcesFit", Code: "UnschedulableAndUnresolvable", Reasons: []string{"Insufficient cpu"}},
		{Name: "n2", Feasible: true},
	})
	// One feasible node is taken without scoring.
	equal(t, "scores", p.Scores, []NodeScore(nil))
	equal(t, "best", p.Best, []string{"n2"})
	equal(t, "placed", p.Placed, "n2")
}

func TestFitErrorMessage(t *testing.T) {
	doc := explain(t, twoNodes+`
---
apiVersion: v1
kind: Pod
metadata: {name: huge}
spec:
  containers: [{name: c, image: app, resources: {requests: {cpu: "3", memory: 1Gi}}}]
  nodeSelector: {disk: ssd}
---
apiVersion: v1
kind: Pod
metadata: {name: wide}
spec:
  containers: [{name: c, image: app, resources: {requests: {cpu: "3"}}}]
  tolerations: [{key: dedicated, effect: NoSchedule}]
---
apiVersion: v1
kind: Pod
metadata: {name: wider}
spec:
  containers: [{name: c, image: app, resources: {requests: {cpu: "3"}}}]
`)
	huge := cycle(t, doc, "huge")
	equal(t, "huge's message", huge.Message,
		"0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. "+
			"preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
	equal(t, "huge's postFilter", huge.PostFilter, &PostFilterEntry{NominatedNode: "", Victims: []string{}})
	// wide is placed on n2, so wider fits nowhere: n1 is too small (preemption cannot help),
	// n2 is taken by a pod of equal priority (no victims).
	equal(t, "wide placed", cycle(t, doc, "wide").Placed, "n2")
	wider := cycle(t, doc, "wider")
	equal(t, "wider's nodes", wider.Nodes, []NodeVerdict{
		{Name: "n1", Plugin: "NodeResourcesFit", Code: "UnschedulableAndUnresolvable", Reasons: []string{"Insufficient cpu"}},
		{Name: "n2", Plugin: "NodeResourcesFit", Code: "Unschedulable", Reasons: []string{"Insufficient cpu"}},
	})
	equal(t, "wider's message", wider.Message,
		"0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "+
			"1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.")
}

func TestTaintRejectsAndTolerationAdmits(t *testing.T) {
	doc := explain(t, `
apiVersion: v1
kind: Node
metadata: {name: gpu}
spec:
  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
status: {allocatable: {cpu: "4", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: plain}
status: {allocatable: {cpu: "4", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: intolerant}
spec:
  containers: [{name: c, image: app}]
---
apiVersion: v1
kind: Pod
metadata: {name: tolerant}
spec:
  containers: [{name: c, image: app}]
  tolerations: [{key: dedicated, value: gpu, effect: NoSchedule}]
`)
	equal(t, "intolerant's nodes", cycle(t, doc, "intolerant").Nodes, []NodeVerdict{
		{Name: "gpu", Plugin: "TaintToleration", Code: "UnschedulableAndUnresolvable",
			Reasons: []string{"node(s) had untolerated taint(s)"}},
		{Name: "plain", Feasible: true},
	})
	tolerant := cycle(t, doc, "tolerant")
	equal(t, "tolerant's nodes", tolerant.Nodes, []NodeVerdict{{Name: "gpu", Feasible: true}, {Name: "plain", Feasible: true}})
	if len(tolerant.Scores) != 2 {
		t.Fatalf("tolerant: want both nodes scored, got %+v", tolerant.Scores)
	}
}

func TestScoredChoice(t *testing.T) {
	doc := explain(t, twoNodes+`
---
apiVersion: v1
kind: Pod
metadata: {name: busy}
spec:
  nodeName: n2
  containers: [{name: c, image: app, resources: {requests: {cpu: "3", memory: 3Gi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: c, image: app, resources: {requests: {cpu: 500m, memory: 512Mi}}}]
`)
	web := cycle(t, doc, "web")
	if len(web.Scores) != 2 {
		t.Fatalf("want both nodes scored, got %+v", web.Scores)
	}
	want := []string{"ImageLocality", "InterPodAffinity", "NodeAffinity", "NodeResourcesBalancedAllocation",
		"NodeResourcesFit", "PodTopologySpread", "TaintToleration", "VolumeBinding"}
	byPlugin := map[string]map[string]PluginScore{}
	for _, s := range web.Scores {
		var got []string
		for _, ps := range s.Plugins {
			got = append(got, ps.Plugin)
			if byPlugin[ps.Plugin] == nil {
				byPlugin[ps.Plugin] = map[string]PluginScore{}
			}
			byPlugin[ps.Plugin][s.Name] = ps
		}
		equal(t, "score plugins of "+s.Name, got, want)
	}
	// n1 is empty, n2 three-quarters used: least-allocated prefers n1.
	fit := byPlugin["NodeResourcesFit"]
	if fit["n1"].Raw <= fit["n2"].Raw || fit["n1"].Weighted != fit["n1"].Normalized {
		t.Errorf("NodeResourcesFit (weight 1): %+v", fit)
	}
	// TaintToleration normalizes a raw 0 (no intolerable PreferNoSchedule taint) to 100, weight 3.
	equal(t, "TaintToleration on n1", byPlugin["TaintToleration"]["n1"], PluginScore{"TaintToleration", 0, 100, 300})
	// InterPodAffinity's PreScore skips a pod without affinity terms: it scores 0, 0, 0.
	equal(t, "InterPodAffinity on n1", byPlugin["InterPodAffinity"]["n1"], PluginScore{Plugin: "InterPodAffinity"})
	equal(t, "best", web.Best, []string{"n1"})
}

func TestGatedPod(t *testing.T) {
	doc := explain(t, twoNodes+`
---
apiVersion: v1
kind: Pod
metadata: {name: held}
spec:
  schedulingGates: [{name: example.com/hold}]
  containers: [{name: c, image: app}]
`)
	equal(t, "held", cycle(t, doc, "held"), PodCycle{Namespace: "default", Name: "held", Gated: &PluginStatus{
		Plugin: "SchedulingGates", Code: "UnschedulableAndUnresolvable",
		Reasons: []string{"waiting for scheduling gates: [example.com/hold]"}}})
}

const priorityClasses = `
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
`

func TestPreemptionReportsVictimsAndChangesNothing(t *testing.T) {
	doc := explain(t, priorityClasses+`
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: batch}
spec:
  priorityClassName: low
  nodeName: n1
  containers: [{name: c, image: app, resources: {requests: {cpu: "2"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: urgent}
spec:
  priorityClassName: high
  containers: [{name: c, image: app, resources: {requests: {cpu: "2"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: urgent-too}
spec:
  priorityClassName: high
  containers: [{name: c, image: app, resources: {requests: {cpu: "2"}}}]
`)
	urgent := cycle(t, doc, "urgent")
	equal(t, "urgent's postFilter", urgent.PostFilter, &PostFilterEntry{NominatedNode: "n1", Victims: []string{"default/batch"}})
	equal(t, "urgent's message", urgent.Message, "0/1 nodes are available: 1 Insufficient cpu. "+
		"preemption: found a potential placement for pod on node n1, preempting 1 victims")
	// batch was not evicted and urgent not nominated: the same pod meets the same cluster.
	too := cycle(t, doc, "urgent-too")
	equal(t, "urgent-too's postFilter", too.PostFilter, urgent.PostFilter)
	equal(t, "urgent-too's nodes", too.Nodes, urgent.Nodes)
}

func TestPDBProtectsVictims(t *testing.T) {
	cluster := priorityClasses + `
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: mid}
value: 500
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "1", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "1", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: guarded, labels: {app: db}}
spec:
  priorityClassName: low
  nodeName: n1
  containers: [{name: c, image: app, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: free}
spec:
  nodeName: n2
  priorityClassName: mid
  containers: [{name: c, image: app, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: urgent}
spec:
  priorityClassName: high
  containers: [{name: c, image: app, resources: {requests: {cpu: "1"}}}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: guard}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: db}}
`
	// Without the budget, guarded (priority 10) would go rather than free (500).
	doc := explain(t, cluster[:strings.Index(cluster, "---\napiVersion: policy/v1")])
	equal(t, "no budget", cycle(t, doc, "urgent").PostFilter, &PostFilterEntry{NominatedNode: "n1", Victims: []string{"default/guarded"}})
	// The budget's computed status allows no disruption: its one bound pod is the one it needs.
	doc = explain(t, cluster)
	equal(t, "computed budget", cycle(t, doc, "urgent").PostFilter, &PostFilterEntry{NominatedNode: "n2", Victims: []string{"default/free"}})
	// A stated status stands, even where it contradicts the pods.
	doc = explain(t, cluster+"status: {disruptionsAllowed: 1}\n")
	equal(t, "stated budget", cycle(t, doc, "urgent").PostFilter, &PostFilterEntry{NominatedNode: "n1", Victims: []string{"default/guarded"}})
}

func TestSequentialPlacementWithAntiAffinity(t *testing.T) {
	replica := `
---
apiVersion: v1
kind: Pod
metadata: {name: NAME, labels: {app: web}}
spec:
  containers: [{name: c, image: app}]
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: web}}
        topologyKey: kubernetes.io/hostname
`
	manifest := twoNodes
	for _, name := range []string{"web-1", "web-2", "web-3"} {
		manifest += strings.Replace(replica, "NAME", name, 1)
	}
	doc := explain(t, manifest)
	equal(t, "web-1 placed", cycle(t, doc, "web-1").Placed, "n2")
	web2 := cycle(t, doc, "web-2")
	equal(t, "web-2's nodes", web2.Nodes, []NodeVerdict{
		{Name: "n1", Feasible: true},
		{Name: "n2", Plugin: "InterPodAffinity", Code: "Unschedulable", Reasons: []string{"node(s) didn't match pod anti-affinity rules"}},
	})
	equal(t, "web-2 placed", web2.Placed, "n1")
	equal(t, "web-3's message", cycle(t, doc, "web-3").Message,
		"0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. "+
			"preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.")
}

func TestPreFilterRejection(t *testing.T) {
	doc := explain(t, twoNodes+`
---
apiVersion: v1
kind: Pod
metadata: {name: torn}
spec:
  containers: [{name: c, image: app}]
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchFields:
          - {key: metadata.name, operator: In, values: [n1]}
          - {key: metadata.name, operator: In, values: [n2]}
`)
	torn := cycle(t, doc, "torn")
	status := PluginStatus{Plugin: "NodeAffinity", Code: "UnschedulableAndUnresolvable", Reasons: []string{"pod affinity terms conflict"}}
	equal(t, "preFilter", torn.PreFilter, &status)
	equal(t, "nodes", torn.Nodes, []NodeVerdict{
		{Name: "n1", Plugin: status.Plugin, Code: status.Code, Reasons: status.Reasons},
		{Name: "n2", Plugin: status.Plugin, Code: status.Code, Reasons: status.Reasons},
	})
	// FitError gives PreFilter's message instead of counting the nodes' reasons.
	equal(t, "message", torn.Message, "0/2 nodes are available: pod affinity terms conflict. "+
		"preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
}

func TestPreFilterResultLeavesNodesOut(t *testing.T) {
	doc := explain(t, twoNodes+`
---
apiVersion: v1
kind: Pod
metadata: {name: pinned}
spec:
  containers: [{name: c, image: app}]
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchFields: [{key: metadata.name, operator: In, values: [n1]}]
`)
	equal(t, "nodes", cycle(t, doc, "pinned").Nodes, []NodeVerdict{
		{Name: "n1", Feasible: true},
		{Name: "n2", Code: "UnschedulableAndUnresolvable", Reasons: []string{"node(s) didn't satisfy plugin(s) [NodeAffinity]"}},
	})
}

func TestWhichPodsAreExplained(t *testing.T) {
	doc := explain(t, twoNodes+`
---
apiVersion: v1
kind: Pod
metadata: {name: done}
spec:
  nodeName: n1
  containers: [{name: c, image: app, resources: {requests: {cpu: "2"}}}]
status: {phase: Succeeded}
---
apiVersion: v1
kind: Pod
metadata: {name: other}
spec:
  schedulerName: someone-else
  containers: [{name: c, image: app}]
---
apiVersion: v1
kind: Pod
metadata: {name: mine, namespace: team}
spec:
  containers: [{name: c, image: app, resources: {requests: {cpu: "2"}}}]
  nodeSelector: {kubernetes.io/hostname: n1}
`)
	equal(t, "explained pods", len(doc.Pods), 1)
	// The succeeded pod no longer holds n1's cpu.
	equal(t, "mine placed", cycle(t, doc, "mine").Placed, "n1")
	equal(t, "mine's namespace", cycle(t, doc, "mine").Namespace, "team")
}

func TestNoNodes(t *testing.T) {
	doc := explain(t, `
apiVersion: v1
kind: Pod
metadata: {name: alone}
spec:
  containers: [{name: c, image: app}]
`)
	equal(t, "alone", cycle(t, doc, "alone"), PodCycle{Namespace: "default", Name: "alone", Message: "no nodes available to schedule pods"})
}

func TestExplainIsRepeatableAndLeavesItsInputAlone(t *testing.T) {
	objs, err := DecodeReader(strings.NewReader(twoNodes+`
---
apiVersion: v1
kind: Pod
metadata: {name: a, labels: {app: a}}
spec:
  containers: [{name: c, image: app, resources: {requests: {cpu: "1"}}}]
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: a}}}
---
apiVersion: v1
kind: Pod
metadata: {name: b, labels: {app: a}}
spec:
  containers: [{name: c, image: app, resources: {requests: {cpu: "1"}}}]
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: a}}}
`), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	before := make([]runtime.Object, len(objs))
	for i, o := range objs {
		before[i] = o.DeepCopyObject()
	}
	first, err := Explain(objs)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Explain(objs)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "second run", second, first)
	equal(t, "input after Explain", objs, before)
	if objs[2].(*v1.Pod).Spec.NodeName != "" {
		t.Error("Explain bound the input's pod")
	}
	// b spreads away from a, which was placed on n2 (its best node: least allocated).
	equal(t, "placements", []string{first.Pods[0].Placed, first.Pods[1].Placed}, []string{"n2", "n1"})
}
