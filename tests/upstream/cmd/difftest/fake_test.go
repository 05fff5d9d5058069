package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"schedhost.test/upstream/oracle"
	"schedhost.test/upstream/scenario"
)

// toyExplain explains a scenario as a toy scheduler would: a node is feasible unless it has a
// NoSchedule taint no toleration of the pod names by key (or tolerates all keys). broken, when
// set, marks nodes the side wrongly finds infeasible for a pod, with the plugin "Broken".
func toyExplain(objs []runtime.Object, broken func(*corev1.Pod, *corev1.Node) bool) *oracle.Document {
	var nodes []*corev1.Node
	var pending []*corev1.Pod
	for _, o := range objs {
		switch t := o.(type) {
		case *corev1.Node:
			nodes = append(nodes, t)
		case *corev1.Pod:
			if t.Spec.NodeName == "" {
				pending = append(pending, t)
			}
		}
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	doc := &oracle.Document{}
	for _, p := range pending {
		c := oracle.PodCycle{Namespace: p.Namespace, Name: p.Name}
		if len(p.Spec.SchedulingGates) > 0 {
			c.Gated = &oracle.PluginStatus{Plugin: "SchedulingGates", Code: "UnschedulableAndUnresolvable", Reasons: []string{"gated"}}
			doc.Pods = append(doc.Pods, c)
			continue
		}
		for _, n := range nodes {
			v := oracle.NodeVerdict{Name: n.Name, Feasible: true}
			for _, t := range n.Spec.Taints {
				if t.Effect == corev1.TaintEffectNoSchedule && !slices.ContainsFunc(p.Spec.Tolerations, func(tol corev1.Toleration) bool {
					return tol.Key == t.Key || (tol.Key == "" && tol.Operator == corev1.TolerationOpExists)
				}) {
					v = oracle.NodeVerdict{Name: n.Name, Plugin: "TaintToleration", Code: "UnschedulableAndUnresolvable", Reasons: []string{"untolerated taint " + t.Key}}
					break
				}
			}
			if v.Feasible && broken != nil && broken(p, n) {
				v = oracle.NodeVerdict{Name: n.Name, Plugin: "Broken", Code: "Unschedulable", Reasons: []string{"broken"}}
			}
			c.Nodes = append(c.Nodes, v)
			if v.Feasible {
				c.Best = append(c.Best, n.Name)
			}
		}
		if len(c.Best) > 0 {
			c.Placed = c.Best[0]
		} else {
			c.Message = fmt.Sprintf("0/%d nodes are available", len(nodes))
			c.PostFilter = &oracle.PostFilterEntry{Victims: []string{}}
		}
		doc.Pods = append(doc.Pods, c)
	}
	return doc
}

// toySide is toyExplain as a Side: it reads the scenario file like the real sides do.
func toySide(broken func(*corev1.Pod, *corev1.Node) bool) Side {
	return func(_ context.Context, path string) (*oracle.Document, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		objs, err := scenario.ReadYAML(f)
		if err != nil {
			return nil, err
		}
		return toyExplain(objs, broken), nil
	}
}

// tolerationBug is the planted bug: a pod that tolerates every taint (an empty key with
// Exists) is refused by nodes labelled disk=ssd.
func tolerationBug(p *corev1.Pod, n *corev1.Node) bool {
	return n.Labels[scenario.LabelDisk] == "ssd" && slices.ContainsFunc(p.Spec.Tolerations, func(t corev1.Toleration) bool {
		return t.Key == "" && t.Operator == corev1.TolerationOpExists
	})
}

// readBack reads a scenario file.
func readBack(t interface{ Fatal(...any) }, path string) []runtime.Object {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	objs, err := scenario.ReadYAML(f)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}
