package oracle

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// cluster20 is a typical comparer-sized cluster: 20 nodes in 4 zones, 20 bound pods, 15 pending
// pods with resources, spreading, anti-affinity and a priority mix that makes some preempt.
func cluster20() string {
	var b strings.Builder
	b.WriteString(priorityClasses)
	for i := range 20 {
		fmt.Fprintf(&b, `
---
apiVersion: v1
kind: Node
metadata: {name: node-%02d, labels: {kubernetes.io/hostname: node-%02d, zone: z%d}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "20"}}
`, i, i, i%4)
	}
	for i := range 35 {
		node, class := "", "high"
		if i < 20 {
			node, class = fmt.Sprintf("node-%02d", i), "low"
		}
		fmt.Fprintf(&b, `
---
apiVersion: v1
kind: Pod
metadata: {name: pod-%02d, labels: {app: app-%d}}
spec:
  nodeName: "%s"
  priorityClassName: %s
  containers: [{name: c, image: img-%d, resources: {requests: {cpu: "%dm", memory: 1Gi}}}]
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: app-%d}}}
  affinity:
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 10
        podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: app-%d}}}
`, i, i%3, node, class, i%5, 1500+100*(i%7), i%3, i%3)
	}
	return b.String()
}

func BenchmarkExplain(b *testing.B) {
	objs, err := DecodeReader(strings.NewReader(cluster20()), "cluster20.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Explain(objs); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	manifest := cluster20()
	for b.Loop() {
		if _, err := DecodeReader(strings.NewReader(manifest), "cluster20.yaml"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestExplainConcurrently: independent Explain calls may run at once (the comparer's workers).
func TestExplainConcurrently(t *testing.T) {
	objs, err := DecodeReader(strings.NewReader(cluster20()), "cluster20.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := Explain(objs)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, want)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			got, err := Explain(objs)
			if err != nil {
				t.Error(err)
				return
			}
			equal(t, "concurrent run", got, want)
		})
	}
	wg.Wait()
}
