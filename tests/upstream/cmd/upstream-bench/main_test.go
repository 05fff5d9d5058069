package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

func TestRenderTemplate(t *testing.T) {
	for _, tc := range []struct {
		text  string
		index int
		want  string
	}{
		{"name: node-{{index}}", 7, "name: node-7"},
		{"zone-{{index % 3}}", 7, "zone-1"},
		{"zone-{{ index %3 }}", 8, "zone-2"},
		{"{{index}}-{{index % 10}}-{{index}}", 123, "123-3-123"},
		{"no placeholder", 5, "no placeholder"},
		{"a { b } {c}", 1, "a { b } {c}"},
	} {
		got, err := renderTemplate(tc.text, tc.index)
		if err != nil || got != tc.want {
			t.Errorf("renderTemplate(%q, %d) = %q, %v; want %q", tc.text, tc.index, got, err, tc.want)
		}
	}
	for _, bad := range []string{
		"{{index", "{{name}}", "{{index % 0}}", "{{index % }}", "{{index % -2}}", "{{index % 3x}}",
		"{{index\t}}", "{{index + 1}}",
	} {
		if got, err := renderTemplate(bad, 1); err == nil {
			t.Errorf("renderTemplate(%q) = %q, want an error", bad, got)
		}
	}
}

const (
	nodeTemplate = `apiVersion: v1
kind: Node
metadata:
  name: node-{{index}}
  labels:
    kubernetes.io/hostname: node-{{index}}
    topology.kubernetes.io/zone: zone-{{index % 3}}
status:
  capacity: {cpu: "4", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 32Gi, pods: "110"}
`
	podTemplate = `# a comment before the object
apiVersion: v1
kind: Pod
metadata:
  name: %s-{{index}}
spec:
  containers:
  - name: pause
    image: registry.k8s.io/pause:3.9
    resources:
      requests: {cpu: 100m, memory: 500Mi}
      limits: {cpu: 100m, memory: 500Mi}
`
	priorityTemplate = `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: high
value: 10
`
)

// writeWorkload writes a workload file and its templates into a new directory.
func writeWorkload(t *testing.T, toml string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"w.toml":                      toml,
		"templates/node.yaml":         nodeTemplate,
		"templates/pod.yaml":          fmt.Sprintf(podTemplate, "pod"),
		"templates/pod-measured.yaml": fmt.Sprintf(podTemplate, "measured"),
		"templates/priority.yaml":     priorityTemplate,
		"templates/two.yaml":          nodeTemplate + "---\n" + nodeTemplate,
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "w.toml")
}

const tinyWorkload = `
name = "tiny"
[[ops]]
op = "createObjects"
count = 1
template = "templates/priority.yaml"
[[ops]]
op = "createNodes"
count = 10
template = "templates/node.yaml"
[[ops]]
op = "createPods"
count = 5
template = "templates/pod.yaml"
[[ops]]
op = "barrier"
[[ops]]
op = "createPods"
count = 20
template = "templates/pod-measured.yaml"
measured = true
[[ops]]
op = "barrier"
`

func TestLoadWorkload(t *testing.T) {
	path := writeWorkload(t, tinyWorkload)
	w, err := loadWorkload(path, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	if w.name != "tiny" || len(w.ops) != 6 {
		t.Fatalf("name %q, %d ops", w.name, len(w.ops))
	}
	// createObjects is not scaled; 10 × 0.25 = 2.5 rounds half away from zero; 5 × 0.25 = 1.25
	// rounds to 1; 20 × 0.25 = 5.
	for i, want := range []int{1, 3, 1, 0, 5, 0} {
		if w.ops[i].count != want {
			t.Errorf("ops[%d].count = %d, want %d", i, w.ops[i].count, want)
		}
	}
	if !w.ops[4].measured || w.ops[2].measured {
		t.Errorf("measured: %v %v", w.ops[4].measured, w.ops[2].measured)
	}
	if w, err := loadWorkload(path, 0.001); err != nil || w.ops[1].count != 1 {
		t.Errorf("a tiny scale leaves at least 1 object: %v", err)
	}
	if _, err := loadWorkload(path, 0); err == nil {
		t.Error("scale 0 accepted")
	}

	for _, tc := range []struct{ toml, want string }{
		{`name = "x"`, "at least one [[ops]]"},
		{"[[ops]]\nop = \"sleep\"", `must be createNodes, createPods, createObjects or barrier, not "sleep"`},
		{"[[ops]]\nop = \"createPods\"\ntemplate = \"templates/pod.yaml\"", "count: must be an integer >= 1"},
		{"[[ops]]\nop = \"createPods\"\ncount = 0\ntemplate = \"templates/pod.yaml\"", "count: must be an integer >= 1"},
		{"[[ops]]\nop = \"createPods\"\ncount = 2", "template: missing"},
		{"[[ops]]\nop = \"createPods\"\ncount = 2\ntemplate = \"templates/none.yaml\"", "cannot be read"},
		{"[[ops]]\nop = \"createNodes\"\ncount = 2\ntemplate = \"templates/pod.yaml\"", "must hold a Node"},
		{"[[ops]]\nop = \"createNodes\"\ncount = 2\ntemplate = \"templates/two.yaml\"", "exactly one object, not 2"},
		{"[[ops]]\nop = \"createNodes\"\ncount = 2\ntemplate = \"templates/node.yaml\"\nmeasured = true", "only createPods operations are measured"},
	} {
		_, err := loadWorkload(writeWorkload(t, tc.toml), 1)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.toml, err, tc.want)
		}
	}
	// createObjects defaults to one object; the name defaults to the file's.
	w, err = loadWorkload(writeWorkload(t, "[[ops]]\nop = \"createObjects\"\ntemplate = \"templates/priority.yaml\""), 3)
	if err != nil || w.ops[0].count != 1 || w.name != "w" {
		t.Errorf("createObjects default count: %+v, %v", w, err)
	}
}

// TestWatchDoesNotDropOrBlock checks that apiServer's watches hold more than client-go's fake
// watchers do (100 events, then a panic) and deliver them in order.
func TestWatchDoesNotDropOrBlock(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	api := newAPIServer(ctx)
	w, err := api.client.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const n = 1000
	for i := range n {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i)}}
		if err := api.create(node); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		select {
		case e := <-w.ResultChan():
			node := e.Object.(*corev1.Node)
			if e.Type != watch.Added || node.Name != fmt.Sprintf("n%d", i) || node.UID == "" {
				t.Fatalf("event %d: %s %s uid %q", i, e.Type, node.Name, node.UID)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("event %d never came", i)
		}
	}
	// A watch from before the last write is too old, as a real API server answers.
	if _, err := api.client.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{ResourceVersion: "2"}); err == nil {
		t.Error("a watch from an old resourceVersion was accepted")
	}
}

// TestTinyWorkload runs a workload end to end through the real scheduler: every pod is bound.
func TestTinyWorkload(t *testing.T) {
	w, err := loadWorkload(writeWorkload(t, tinyWorkload), 1)
	if err != nil {
		t.Fatal(err)
	}
	r, err := runWorkload(context.Background(), w, options{scale: 1, timeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r.Nodes != 10 || r.MeasuredPods != 20 || r.MeasuredBound != 20 {
		t.Fatalf("nodes %d, measured %d, bound %d", r.Nodes, r.MeasuredPods, r.MeasuredBound)
	}
	if !(r.PodsPerSecond > 0 && r.Seconds > 0 && r.P50Ms > 0 && r.P50Ms <= r.P90Ms && r.P90Ms <= r.P99Ms && r.PeakRSSMiB > 0) {
		t.Errorf("figures: %+v", r)
	}
	if r.NominatedOrBoundPerSecond != 0 {
		t.Errorf("nothing preempts, yet nominated or bound/s = %v", r.NominatedOrBoundPerSecond)
	}
}

// TestPreemptionBasic runs the repository's preemption_basic at 1 %: the measured pods bind
// only after preemption deleted victims and nominated them, which exercises the status patch,
// the delete and the binding of apiServer.
func TestPreemptionBasic(t *testing.T) {
	path := filepath.Join("..", "..", "..", "bench", "workloads", "preemption_basic.toml")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no %s: %v", path, err)
	}
	w, err := loadWorkload(path, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	r, err := runWorkload(context.Background(), w, options{scale: 0.01, timeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Upstream's async preemption sometimes leaves a preemptor parked (README.md): the others
	// bind, and every measured pod left unbound must be one of those.
	if r.MeasuredPods != 5 || r.MeasuredBound == 0 || r.MeasuredBound+r.gatedByPreemption != 5 {
		t.Fatalf("measured %d, bound %d, parked by preemption %d", r.MeasuredPods, r.MeasuredBound, r.gatedByPreemption)
	}
	if r.gatedByPreemption > 0 {
		t.Logf("%d preemptors parked by upstream's async preemption race", r.gatedByPreemption)
	}
	if !(r.NominatedOrBoundPerSecond > 0) {
		t.Errorf("no measured pod was nominated before its binding: %+v", r)
	}
}

// TestUnschedulableBarrier checks the barrier's other way out: pods that fit nowhere are
// parked as unschedulable, the barrier ends, and the exit status says pods were left unbound.
func TestUnschedulableBarrier(t *testing.T) {
	path := writeWorkload(t, `
[[ops]]
op = "createNodes"
count = 2
template = "templates/node.yaml"
[[ops]]
op = "createPods"
count = 300
template = "templates/pod-measured.yaml"
measured = true
[[ops]]
op = "barrier"
`)
	start := time.Now()
	if code := run([]string{"-q", "--json", "--timeout", "60", path}); code != 3 {
		t.Errorf("exit status %d, want 3 (2 nodes of 4 CPUs hold 80 of the 300 pods)", code)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the barrier took %s to see the rest were unschedulable", d)
	}
}
