package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"schedhost.test/upstream/oracle"
	"schedhost.test/upstream/scenario"
)

// firstDiffering returns the first seed whose scenario the pair finds a difference in.
func firstDiffering(t *testing.T, pair *Pair) (int64, []runtime.Object, *Outcome) {
	t.Helper()
	for seed := int64(1); seed <= 300; seed++ {
		objs := scenario.Generate(seed, scenario.Params{})
		out, err := pair.Run(context.Background(), "t", objs)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Diffs) > 0 {
			return seed, objs, out
		}
	}
	t.Fatal("no seed in 1..300 shows the planted bug")
	return 0, nil, nil
}

func newShrinker(pair *Pair, out *Outcome) *Shrinker {
	return &Shrinker{
		Kind:   out.Diffs[0].Kind(),
		Budget: 1000,
		Last:   out,
		Run: func(objs []runtime.Object) (*Outcome, error) {
			return pair.Run(context.Background(), "shrink", objs)
		},
	}
}

// TestShrinkToTheObjectsNeeded: a bug that needs one pod with one toleration and one node
// with one label shrinks to exactly those, with every other field of theirs gone.
func TestShrinkToTheObjectsNeeded(t *testing.T) {
	pair := &Pair{Ours: toySide(tolerationBug), Upstream: toySide(nil), Dir: t.TempDir()}
	seed, objs, out := firstDiffering(t, pair)
	s := newShrinker(pair, out)
	if s.Kind != "nodes[].feasible@Broken" {
		t.Fatalf("seed %d: the first difference is %q, want the planted one", seed, s.Kind)
	}
	min := s.Shrink(objs)

	if len(min) != 2 {
		t.Fatalf("seed %d: shrunk from %d to %d objects, want a node and a pod: %v", seed, len(objs), len(min), names(min))
	}
	node, ok1 := min[0].(*corev1.Node)
	pod, ok2 := min[1].(*corev1.Pod)
	if !ok1 || !ok2 {
		t.Fatalf("seed %d: shrunk to %v, want a node then a pod", seed, names(min))
	}
	if len(node.Labels) != 1 || node.Labels[scenario.LabelDisk] != "ssd" {
		t.Errorf("node labels %v, want only disk=ssd", node.Labels)
	}
	if len(node.Spec.Taints) != 0 || len(node.Status.Images) != 0 || node.Spec.Unschedulable {
		t.Errorf("node keeps fields the bug does not need: %+v", node.Spec)
	}
	want := []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	got := slices.Clone(pod.Spec.Tolerations)
	for i := range got {
		got[i].Effect = "" // the effect does not matter to the bug, and is not an edit
		got[i].TolerationSeconds = nil
	}
	if !slices.Equal(got, want) || len(pod.Spec.Tolerations) != 1 {
		t.Errorf("pod tolerations %+v, want only the one of every key", pod.Spec.Tolerations)
	}
	if pod.Spec.Affinity != nil || len(pod.Spec.TopologySpreadConstraints) != 0 || len(pod.Spec.InitContainers) != 0 ||
		len(pod.Spec.Containers) != 1 || pod.Spec.PriorityClassName != "" || len(pod.Labels) != 0 || len(pod.Spec.NodeSelector) != 0 {
		t.Errorf("pod keeps fields the bug does not need: %+v", pod.Spec)
	}
	// The outcome kept is the minimal scenario's, and has the difference.
	if s.Last == out || len(s.Last.Diffs) == 0 || s.Last.Diffs[0].Kind() != s.Kind {
		t.Errorf("the shrinker's last outcome is not the minimal scenario's: %+v", s.Last.Diffs)
	}
	if s.Tests >= s.Budget {
		t.Errorf("used its whole budget (%d runs)", s.Tests)
	}
	t.Logf("seed %d: %d objects -> %v in %d runs", seed, len(objs), names(min), s.Tests)
}

// TestShrinkKeepsWhatASideNeeds: a candidate a side refuses is not a smaller case. Here
// "schedhost" refuses a scenario without the default Namespace, so it stays.
func TestShrinkKeepsWhatASideNeeds(t *testing.T) {
	buggy := toySide(tolerationBug)
	picky := func(ctx context.Context, path string) (*oracle.Document, error) {
		doc, err := buggy(ctx, path)
		if err != nil {
			return nil, err
		}
		objs := readBack(t, path)
		if !slices.ContainsFunc(objs, func(o runtime.Object) bool {
			ns, ok := o.(*corev1.Namespace)
			return ok && ns.Name == "default"
		}) {
			return nil, errors.New("refused: no default namespace")
		}
		return doc, nil
	}
	pair := &Pair{Ours: picky, Upstream: toySide(nil), Dir: t.TempDir()}
	seed, objs, out := firstDiffering(t, pair)
	min := newShrinker(pair, out).Shrink(objs)
	if len(min) != 3 {
		t.Fatalf("seed %d: shrunk to %v, want the default namespace, a node and a pod", seed, names(min))
	}
	if ns, ok := min[0].(*corev1.Namespace); !ok || ns.Name != "default" {
		t.Fatalf("seed %d: shrunk to %v, want the default namespace first", seed, names(min))
	}
}

// TestShrinkKeepsTheKind: of two bugs that both show in the message, shrinking the one whose
// first difference is the message (bug A, which needs a node) does not wander off to the other
// (bug B, which needs none and whose first difference is a PreFilter verdict), although B's
// message difference is of the same kind and survives dropping the nodes.
func TestShrinkKeepsTheKind(t *testing.T) {
	hasInit := func(p *corev1.Pod) bool { return len(p.Spec.InitContainers) > 0 }
	hdd := func(o runtime.Object) bool {
		n, ok := o.(*corev1.Node)
		return ok && n.Labels[scenario.LabelDisk] == "hdd"
	}
	ours := func(ctx context.Context, path string) (*oracle.Document, error) {
		objs := readBack(t, path)
		doc := toyExplain(objs, nil)
		pods := map[string]*corev1.Pod{}
		for _, o := range objs {
			if p, ok := o.(*corev1.Pod); ok {
				pods[p.Namespace+"/"+p.Name] = p
			}
		}
		for i := range doc.Pods {
			c := &doc.Pods[i]
			switch p := pods[c.Namespace+"/"+c.Name]; {
			case len(p.Spec.Tolerations) > 0:
				c.PreFilter = &oracle.PluginStatus{Plugin: "Broken", Code: "Unschedulable", Reasons: []string{"b"}}
				c.Message += " (B)"
			case hasInit(p) && slices.ContainsFunc(objs, hdd):
				c.Message += " (A)"
			}
		}
		return doc, nil
	}
	pair := &Pair{Ours: ours, Upstream: toySide(nil), Dir: t.TempDir()}
	shrunk := 0
	for seed := int64(1); seed <= 300 && shrunk < 5; seed++ {
		objs := scenario.Generate(seed, scenario.Params{})
		out, err := pair.Run(context.Background(), "t", objs)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Diffs) == 0 || out.Diffs[0].Kind() != "message" ||
			!slices.ContainsFunc(out.Diffs, func(d Difference) bool { return d.Kind() == "preFilter@Broken" }) {
			continue // not bug A first with bug B after it
		}
		s := newShrinker(pair, out)
		min := s.Shrink(objs)
		for _, d := range s.Last.Diffs {
			if d.Kind() != "message" || !strings.HasSuffix(d.Ours, ` (A)"`) {
				t.Fatalf("seed %d: shrinking bug A ended at another difference: %v", seed, d)
			}
		}
		if len(min) != 2 || !hdd(min[0]) || !hasInit(min[1].(*corev1.Pod)) {
			t.Fatalf("seed %d: shrunk to %v, want an hdd node and the pod with init containers", seed, names(min))
		}
		shrunk++
	}
	if shrunk == 0 {
		t.Fatal("no seed in 1..300 has bug A first and bug B after it")
	}
}

// TestShrinkDropsBoundPodsWithTheirNode: dropping a node never leaves pods bound to nothing.
func TestShrinkDropsBoundPodsWithTheirNode(t *testing.T) {
	objs := []runtime.Object{
		&corev1.Node{},
		&corev1.Pod{Spec: corev1.PodSpec{NodeName: "gone"}},
		&corev1.Pod{Spec: corev1.PodSpec{NodeName: ""}},
	}
	objs[0].(*corev1.Node).Name = "here"
	objs = append(objs, &corev1.Pod{Spec: corev1.PodSpec{NodeName: "here"}})
	got := withoutOrphans(objs)
	if len(got) != 3 || got[1] != objs[2] || got[2] != objs[3] {
		t.Fatalf("withoutOrphans kept %v", names(got))
	}
	if consistent([]runtime.Object{&corev1.Pod{Spec: corev1.PodSpec{NodeName: "here"}}}) {
		t.Error("a scenario without a pending pod is consistent")
	}
	if consistent([]runtime.Object{&corev1.Pod{Spec: corev1.PodSpec{PriorityClassName: "gone"}}}) {
		t.Error("a pod naming a missing class is consistent")
	}
}

func names(objs []runtime.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, describe(o))
	}
	return out
}
