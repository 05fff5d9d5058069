package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"schedhost.test/upstream/oracle"
)

// Difference is one field on which schedhost's explain document and upstream's disagree.
type Difference struct {
	Pod  string // namespace/name of the pending pod; "" for the document's pod list itself
	Node string // the node the field is about, "" when none
	// Path locates the field in the pod's entry, with the node and plugin names in brackets:
	// nodes[node-03].reasons, scores[node-01].plugins[ImageLocality].raw, postFilter.victims.
	Path string
	// Plugin is the plugin whose verdict the field is part of (upstream's, else schedhost's),
	// for the fields of a node's Filter verdict, gated and preFilter; "" otherwise.
	Plugin string
	Ours   string // schedhost's value as JSON, or "<absent>"
	Theirs string // upstream's value as JSON, or "<absent>"
}

const absent = "<absent>"

// Kind is the difference's shape: its path without the node names (plugin names stay, they
// tell one bug from another), qualified by the plugin of a verdict. Two differences of the
// same kind are taken to be the same bug in different clothes.
func (d Difference) Kind() string {
	k := d.Path
	if d.Node != "" {
		k = strings.ReplaceAll(k, "["+d.Node+"]", "[]")
	}
	if d.Plugin != "" {
		k += "@" + d.Plugin
	}
	return k
}

func (d Difference) String() string {
	var b strings.Builder
	if d.Pod != "" {
		b.WriteString(d.Pod)
		b.WriteString(" ")
	}
	b.WriteString(d.Path)
	if d.Plugin != "" {
		fmt.Fprintf(&b, " (%s)", d.Plugin)
	}
	fmt.Fprintf(&b, ": schedhost %s vs upstream %s", d.Ours, d.Theirs)
	return b.String()
}

// render is a value as the difference lines show it.
func render(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

// Compare lists every difference between schedhost's document (ours) and upstream's, pods in
// upstream's order and, within a pod, in the document's field order. Lists compare exactly:
// both sides sort them, and ties are canonical (best is a sorted set).
func Compare(ours, theirs *oracle.Document) []Difference {
	var diffs []Difference
	key := func(p *oracle.PodCycle) string { return p.Namespace + "/" + p.Name }
	keys := func(d *oracle.Document) []string {
		var out []string
		for i := range d.Pods {
			out = append(out, key(&d.Pods[i]))
		}
		return out
	}
	ourKeys, theirKeys := keys(ours), keys(theirs)
	if !slices.Equal(ourKeys, theirKeys) {
		diffs = append(diffs, Difference{Path: "pods", Ours: render(ourKeys), Theirs: render(theirKeys)})
	}
	ourByKey := map[string]*oracle.PodCycle{}
	for i := range ours.Pods {
		ourByKey[key(&ours.Pods[i])] = &ours.Pods[i]
	}
	for i := range theirs.Pods {
		t := &theirs.Pods[i]
		if o := ourByKey[key(t)]; o != nil {
			diffs = append(diffs, comparePod(key(t), o, t)...)
		}
	}
	return diffs
}

// podDiffer collects one pod's differences.
type podDiffer struct {
	pod   string
	diffs []Difference
}

func (p *podDiffer) add(node, path, plugin string, ours, theirs any) {
	p.diffs = append(p.diffs, Difference{Pod: p.pod, Node: node, Path: path, Plugin: plugin, Ours: render(ours), Theirs: render(theirs)})
}

func (p *podDiffer) addRaw(node, path, plugin, ours, theirs string) {
	p.diffs = append(p.diffs, Difference{Pod: p.pod, Node: node, Path: path, Plugin: plugin, Ours: ours, Theirs: theirs})
}

// eq compares two values of a field; nil and empty lists are equal, as JSON's omitempty
// makes them.
func eq[T comparable](a, b []T) bool { return slices.Equal(a, b) }

func comparePod(pod string, o, t *oracle.PodCycle) []Difference {
	p := &podDiffer{pod: pod}
	p.status("gated", o.Gated, t.Gated)
	p.status("preFilter", o.PreFilter, t.PreFilter)
	p.nodes(o.Nodes, t.Nodes)
	p.scores(o.Scores, t.Scores)
	if !eq(o.Best, t.Best) {
		p.add("", "best", "", nonNil(o.Best), nonNil(t.Best))
	}
	if o.Placed != t.Placed {
		p.add("", "placed", "", o.Placed, t.Placed)
	}
	if o.Message != t.Message {
		p.add("", "message", "", o.Message, t.Message)
	}
	switch {
	case o.PostFilter == nil && t.PostFilter == nil:
	case o.PostFilter == nil || t.PostFilter == nil:
		p.addRaw("", "postFilter", "", optional(o.PostFilter), optional(t.PostFilter))
	default:
		if o.PostFilter.NominatedNode != t.PostFilter.NominatedNode {
			p.add("", "postFilter.nominatedNode", "", o.PostFilter.NominatedNode, t.PostFilter.NominatedNode)
		}
		if !eq(o.PostFilter.Victims, t.PostFilter.Victims) {
			p.add("", "postFilter.victims", "", nonNil(o.PostFilter.Victims), nonNil(t.PostFilter.Victims))
		}
	}
	return p.diffs
}

// nonNil makes a nil list render as [] rather than null.
func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// optional renders a pointer field: its JSON, or <absent>.
func optional[T any](v *T) string {
	if v == nil {
		return absent
	}
	return render(v)
}

func pluginOf(o, t *oracle.PluginStatus) string {
	if t != nil {
		return t.Plugin
	}
	return o.Plugin
}

func (p *podDiffer) status(field string, o, t *oracle.PluginStatus) {
	switch {
	case o == nil && t == nil:
	case o == nil || t == nil:
		p.addRaw("", field, pluginOf(o, t), optional(o), optional(t))
	default:
		plugin := t.Plugin
		if o.Plugin != t.Plugin {
			p.add("", field+".plugin", plugin, o.Plugin, t.Plugin)
		}
		if o.Code != t.Code {
			p.add("", field+".code", plugin, o.Code, t.Code)
		}
		if !eq(o.Reasons, t.Reasons) {
			p.add("", field+".reasons", plugin, nonNil(o.Reasons), nonNil(t.Reasons))
		}
	}
}

// verdict renders a node's Filter verdict in one line, for a node one side finds feasible and
// the other does not.
func verdict(v *oracle.NodeVerdict) string {
	if v.Feasible {
		return "feasible"
	}
	plugin := v.Plugin
	if plugin == "" {
		plugin = `""` // PreFilter's node set left the node out
	}
	return fmt.Sprintf("%s %s %s", plugin, v.Code, render(nonNil(v.Reasons)))
}

// byName indexes a list by a name and returns the union of both lists' names, sorted.
func byName[T any](ours, theirs []T, name func(*T) string) (map[string]*T, map[string]*T, []string) {
	om, tm := map[string]*T{}, map[string]*T{}
	var names []string
	for i := range ours {
		om[name(&ours[i])] = &ours[i]
		names = append(names, name(&ours[i]))
	}
	for i := range theirs {
		n := name(&theirs[i])
		tm[n] = &theirs[i]
		if _, ok := om[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return om, tm, slices.Compact(names)
}

func (p *podDiffer) nodes(ours, theirs []oracle.NodeVerdict) {
	om, tm, names := byName(ours, theirs, func(v *oracle.NodeVerdict) string { return v.Name })
	for _, n := range names {
		o, t := om[n], tm[n]
		path := "nodes[" + n + "]"
		switch {
		case o == nil:
			p.addRaw(n, path, t.Plugin, absent, verdict(t))
		case t == nil:
			p.addRaw(n, path, o.Plugin, verdict(o), absent)
		case o.Feasible != t.Feasible:
			plugin := t.Plugin
			if plugin == "" {
				plugin = o.Plugin
			}
			p.addRaw(n, path+".feasible", plugin, verdict(o), verdict(t))
		default:
			if o.Plugin != t.Plugin {
				p.add(n, path+".plugin", t.Plugin, o.Plugin, t.Plugin)
			}
			if o.Code != t.Code {
				p.add(n, path+".code", t.Plugin, o.Code, t.Code)
			}
			if !eq(o.Reasons, t.Reasons) {
				p.add(n, path+".reasons", t.Plugin, nonNil(o.Reasons), nonNil(t.Reasons))
			}
		}
	}
}

func (p *podDiffer) scores(ours, theirs []oracle.NodeScore) {
	om, tm, names := byName(ours, theirs, func(s *oracle.NodeScore) string { return s.Name })
	for _, n := range names {
		o, t := om[n], tm[n]
		path := "scores[" + n + "]"
		switch {
		case o == nil:
			p.addRaw(n, path, "", absent, render(t.Total))
			continue
		case t == nil:
			p.addRaw(n, path, "", render(o.Total), absent)
			continue
		}
		// The plugins before the total: a plugin's score is the cause, the total its sum, and
		// the shrinker keeps the kind of a pod's first difference.
		opm, tpm, plugins := byName(o.Plugins, t.Plugins, func(s *oracle.PluginScore) string { return s.Plugin })
		for _, name := range plugins {
			op, tp := opm[name], tpm[name]
			ppath := path + ".plugins[" + name + "]"
			switch {
			case op == nil:
				p.addRaw(n, ppath, "", absent, render(tp))
			case tp == nil:
				p.addRaw(n, ppath, "", render(op), absent)
			default:
				if op.Raw != tp.Raw {
					p.add(n, ppath+".raw", "", op.Raw, tp.Raw)
				}
				if op.Normalized != tp.Normalized {
					p.add(n, ppath+".normalized", "", op.Normalized, tp.Normalized)
				}
				if op.Weighted != tp.Weighted {
					p.add(n, ppath+".weighted", "", op.Weighted, tp.Weighted)
				}
			}
		}
		if o.Total != t.Total {
			p.add(n, path+".total", "", o.Total, t.Total)
		}
	}
}

// CountCycles is how many pods of the document ran a scheduling cycle (were not gated).
func CountCycles(d *oracle.Document) int {
	n := 0
	for i := range d.Pods {
		if d.Pods[i].Gated == nil {
			n++
		}
	}
	return n
}
