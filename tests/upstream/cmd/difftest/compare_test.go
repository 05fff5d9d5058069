package main

import (
	"strings"
	"testing"

	"schedhost.test/upstream/oracle"
)

// doc is a two-pod document both sides agree on; tests change copies of it.
func doc() *oracle.Document {
	return &oracle.Document{Pods: []oracle.PodCycle{
		{
			Namespace: "default", Name: "web-1",
			Nodes: []oracle.NodeVerdict{
				{Name: "node-01", Feasible: true},
				{Name: "node-02", Feasible: false, Plugin: "NodeResourcesFit", Code: "Unschedulable", Reasons: []string{"Insufficient cpu"}},
				{Name: "node-03", Feasible: true},
			},
			Scores: []oracle.NodeScore{
				{Name: "node-01", Total: 150, Plugins: []oracle.PluginScore{{Plugin: "ImageLocality", Raw: 0, Normalized: 0, Weighted: 0}, {Plugin: "NodeResourcesFit", Raw: 50, Normalized: 50, Weighted: 150}}},
				{Name: "node-03", Total: 150, Plugins: []oracle.PluginScore{{Plugin: "ImageLocality", Raw: 0, Normalized: 0, Weighted: 0}, {Plugin: "NodeResourcesFit", Raw: 50, Normalized: 50, Weighted: 150}}},
			},
			Best:   []string{"node-01", "node-03"},
			Placed: "node-01",
		},
		{
			Namespace: "team-a", Name: "batch-2",
			Nodes: []oracle.NodeVerdict{
				{Name: "node-01", Feasible: false, Plugin: "NodeResourcesFit", Code: "Unschedulable", Reasons: []string{"Insufficient cpu"}},
			},
			Message:    "0/1 nodes are available: 1 Insufficient cpu.",
			PostFilter: &oracle.PostFilterEntry{NominatedNode: "node-01", Victims: []string{"default/old-1"}},
		},
	}}
}

func TestCompareEqualDocuments(t *testing.T) {
	if d := Compare(doc(), doc()); len(d) != 0 {
		t.Fatalf("identical documents differ: %v", d)
	}
	// nil and empty lists are the same document: JSON omits both.
	a, b := doc(), doc()
	a.Pods[1].Scores = []oracle.NodeScore{}
	b.Pods[1].Best = nil
	a.Pods[1].Best = []string{}
	if d := Compare(a, b); len(d) != 0 {
		t.Fatalf("nil and empty lists differ: %v", d)
	}
}

func TestCompareReportsEachField(t *testing.T) {
	tests := []struct {
		name   string
		change func(ours *oracle.Document)
		want   []string // Difference.String() of each difference, in order
		kinds  []string
	}{
		{
			name: "reasons of one node",
			change: func(d *oracle.Document) {
				d.Pods[0].Nodes[1].Reasons = []string{"Insufficient cpu", "Insufficient memory"}
			},
			want:  []string{`default/web-1 nodes[node-02].reasons (NodeResourcesFit): schedhost ["Insufficient cpu","Insufficient memory"] vs upstream ["Insufficient cpu"]`},
			kinds: []string{"nodes[].reasons@NodeResourcesFit"},
		},
		{
			name: "a node feasible on one side only, and what follows from it",
			change: func(d *oracle.Document) {
				d.Pods[0].Nodes[0] = oracle.NodeVerdict{Name: "node-01", Plugin: "TaintToleration", Code: "UnschedulableAndUnresolvable", Reasons: []string{"node(s) had untolerated taint {a: b}"}}
				d.Pods[0].Scores = d.Pods[0].Scores[1:]
				d.Pods[0].Best = []string{"node-03"}
				d.Pods[0].Placed = "node-03"
			},
			want: []string{
				`default/web-1 nodes[node-01].feasible (TaintToleration): schedhost TaintToleration UnschedulableAndUnresolvable ["node(s) had untolerated taint {a: b}"] vs upstream feasible`,
				`default/web-1 scores[node-01]: schedhost <absent> vs upstream 150`,
				`default/web-1 best: schedhost ["node-03"] vs upstream ["node-01","node-03"]`,
				`default/web-1 placed: schedhost "node-03" vs upstream "node-01"`,
			},
			kinds: []string{"nodes[].feasible@TaintToleration", "scores[]", "best", "placed"},
		},
		{
			name: "one plugin's score",
			change: func(d *oracle.Document) {
				d.Pods[0].Scores[1].Plugins[0].Raw = 7
				d.Pods[0].Scores[1].Plugins[0].Normalized = 14
			},
			want: []string{
				`default/web-1 scores[node-03].plugins[ImageLocality].raw: schedhost 7 vs upstream 0`,
				`default/web-1 scores[node-03].plugins[ImageLocality].normalized: schedhost 14 vs upstream 0`,
			},
			kinds: []string{"scores[].plugins[ImageLocality].raw", "scores[].plugins[ImageLocality].normalized"},
		},
		{
			name: "gated on one side",
			change: func(d *oracle.Document) {
				d.Pods[1] = oracle.PodCycle{Namespace: "team-a", Name: "batch-2", Gated: &oracle.PluginStatus{Plugin: "SchedulingGates", Code: "UnschedulableAndUnresolvable", Reasons: []string{"waiting"}}}
			},
			want: []string{
				`team-a/batch-2 gated (SchedulingGates): schedhost {"plugin":"SchedulingGates","code":"UnschedulableAndUnresolvable","reasons":["waiting"]} vs upstream <absent>`,
				`team-a/batch-2 nodes[node-01] (NodeResourcesFit): schedhost <absent> vs upstream NodeResourcesFit Unschedulable ["Insufficient cpu"]`,
				`team-a/batch-2 message: schedhost "" vs upstream "0/1 nodes are available: 1 Insufficient cpu."`,
				`team-a/batch-2 postFilter: schedhost <absent> vs upstream {"nominatedNode":"node-01","victims":["default/old-1"]}`,
			},
			kinds: []string{"gated@SchedulingGates", "nodes[]@NodeResourcesFit", "message", "postFilter"},
		},
		{
			name: "preemption victims",
			change: func(d *oracle.Document) {
				d.Pods[1].PostFilter.Victims = nil
				d.Pods[1].PostFilter.NominatedNode = ""
			},
			want: []string{
				`team-a/batch-2 postFilter.nominatedNode: schedhost "" vs upstream "node-01"`,
				`team-a/batch-2 postFilter.victims: schedhost [] vs upstream ["default/old-1"]`,
			},
			kinds: []string{"postFilter.nominatedNode", "postFilter.victims"},
		},
		{
			name: "pods in another order",
			change: func(d *oracle.Document) {
				d.Pods[0], d.Pods[1] = d.Pods[1], d.Pods[0]
			},
			want:  []string{`pods: schedhost ["team-a/batch-2","default/web-1"] vs upstream ["default/web-1","team-a/batch-2"]`},
			kinds: []string{"pods"},
		},
		{
			name: "a pod missing",
			change: func(d *oracle.Document) {
				d.Pods = d.Pods[:1]
			},
			want:  []string{`pods: schedhost ["default/web-1"] vs upstream ["default/web-1","team-a/batch-2"]`},
			kinds: []string{"pods"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ours := doc()
			tc.change(ours)
			diffs := Compare(ours, doc())
			var got, kinds []string
			for _, d := range diffs {
				got = append(got, d.String())
				kinds = append(kinds, d.Kind())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("differences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if strings.Join(kinds, " ") != strings.Join(tc.kinds, " ") {
				t.Errorf("kinds %q, want %q", kinds, tc.kinds)
			}
		})
	}
}

func TestComparedCycles(t *testing.T) {
	ours, theirs := doc(), doc()
	if n := ComparedCycles(ours, theirs); n != 2 {
		t.Fatalf("%d cycles, want 2", n)
	}
	ours.Pods[1].Gated = &oracle.PluginStatus{Plugin: "SchedulingGates"}
	if n := ComparedCycles(ours, theirs); n != 1 {
		t.Fatalf("%d cycles with one pod gated on one side, want 1", n)
	}
}
