package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// edit is one simplification of an object: it removes a field or a list item, or resets a
// field to its default. apply changes the object it is given (a copy of the one the edit was
// listed for).
type edit struct {
	name  string
	apply func(runtime.Object)
}

// describe names an object for the shrinker's log and the case summary.
func describe(o runtime.Object) string {
	switch t := o.(type) {
	case *corev1.Pod:
		if t.Spec.NodeName != "" {
			return fmt.Sprintf("pod %s/%s (on %s)", t.Namespace, t.Name, t.Spec.NodeName)
		}
		return fmt.Sprintf("pod %s/%s", t.Namespace, t.Name)
	case *corev1.Node:
		return "node " + t.Name
	case *corev1.Namespace:
		return "namespace " + t.Name
	case *policyv1.PodDisruptionBudget:
		return fmt.Sprintf("pdb %s/%s", t.Namespace, t.Name)
	case *schedulingv1.PriorityClass:
		return "priorityclass " + t.Name
	case *corev1.PersistentVolumeClaim:
		return fmt.Sprintf("pvc %s/%s", t.Namespace, t.Name)
	case *corev1.PersistentVolume:
		return "pv " + t.Name
	case *storagev1.StorageClass:
		return "storageclass " + t.Name
	}
	if m, err := meta.Accessor(o); err == nil {
		kind := strings.ToLower(o.GetObjectKind().GroupVersionKind().Kind)
		if m.GetNamespace() != "" {
			return fmt.Sprintf("%s %s/%s", kind, m.GetNamespace(), m.GetName())
		}
		return kind + " " + m.GetName()
	}
	return fmt.Sprintf("%T", o)
}

// editsFor lists an object's simplifications, coarse ones (a whole affinity) before fine ones
// (one term), so that a field that does not matter goes in one run.
func editsFor(o runtime.Object) []edit {
	switch t := o.(type) {
	case *corev1.Pod:
		return podEdits(t)
	case *corev1.Node:
		return nodeEdits(t)
	case *corev1.Namespace:
		return labelEdits(t.Labels, func(o runtime.Object) map[string]string { return o.(*corev1.Namespace).Labels })
	case *schedulingv1.PriorityClass:
		var out []edit
		if t.GlobalDefault {
			out = append(out, edit{"globalDefault", func(o runtime.Object) { o.(*schedulingv1.PriorityClass).GlobalDefault = false }})
		}
		if t.PreemptionPolicy != nil {
			out = append(out, edit{"preemptionPolicy", func(o runtime.Object) { o.(*schedulingv1.PriorityClass).PreemptionPolicy = nil }})
		}
		return out
	case *corev1.PersistentVolume:
		pv := func(o runtime.Object) *corev1.PersistentVolume { return o.(*corev1.PersistentVolume) }
		var out []edit
		if t.Spec.NodeAffinity != nil {
			out = append(out, edit{"nodeAffinity", func(o runtime.Object) { pv(o).Spec.NodeAffinity = nil }})
		}
		return append(out, labelEdits(t.Labels, func(o runtime.Object) map[string]string { return pv(o).Labels })...)
	case *corev1.PersistentVolumeClaim:
		if t.Spec.Selector != nil {
			return []edit{{"selector", func(o runtime.Object) { o.(*corev1.PersistentVolumeClaim).Spec.Selector = nil }}}
		}
	case *storagev1.StorageClass:
		if len(t.AllowedTopologies) > 0 {
			return []edit{{"allowedTopologies", func(o runtime.Object) { o.(*storagev1.StorageClass).AllowedTopologies = nil }}}
		}
	case *storagev1.CSINode:
		return listEdits("drivers", t.Spec.Drivers, func(o runtime.Object) *[]storagev1.CSINodeDriver { return &o.(*storagev1.CSINode).Spec.Drivers })
	}
	return nil
}

func sortedKeys[K ~string, V any](m map[K]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	return keys
}

func labelEdits(labels map[string]string, get func(runtime.Object) map[string]string) []edit {
	var out []edit
	for _, k := range sortedKeys(labels) {
		out = append(out, edit{"label " + k, func(o runtime.Object) { delete(get(o), k) }})
	}
	return out
}

// listEdits removes a whole list, then each of its items.
func listEdits[T any](name string, list []T, get func(runtime.Object) *[]T) []edit {
	if len(list) == 0 {
		return nil
	}
	out := []edit{{name, func(o runtime.Object) { *get(o) = nil }}}
	if len(list) > 1 {
		for i := range list {
			out = append(out, edit{fmt.Sprintf("%s[%d]", name, i), func(o runtime.Object) {
				l := get(o)
				*l = slices.Delete(slices.Clone(*l), i, i+1)
			}})
		}
	}
	return out
}

func podEdits(p *corev1.Pod) []edit {
	pod := func(o runtime.Object) *corev1.Pod { return o.(*corev1.Pod) }
	var out []edit
	if a := p.Spec.Affinity; a != nil {
		aff := func(o runtime.Object) *corev1.Affinity { return pod(o).Spec.Affinity }
		out = append(out, edit{"affinity", func(o runtime.Object) { pod(o).Spec.Affinity = nil }})
		if na := a.NodeAffinity; na != nil {
			out = append(out, edit{"nodeAffinity", func(o runtime.Object) { aff(o).NodeAffinity = nil }})
			if na.RequiredDuringSchedulingIgnoredDuringExecution != nil {
				out = append(out, edit{"nodeAffinity.required", func(o runtime.Object) {
					aff(o).NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = nil
				}})
				terms := na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
				if len(terms) > 1 {
					out = append(out, listEdits("nodeAffinity.required.terms", terms, func(o runtime.Object) *[]corev1.NodeSelectorTerm {
						return &aff(o).NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
					})[1:]...)
				}
			}
			out = append(out, listEdits("nodeAffinity.preferred", na.PreferredDuringSchedulingIgnoredDuringExecution, func(o runtime.Object) *[]corev1.PreferredSchedulingTerm {
				return &aff(o).NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
			})...)
		}
		for _, side := range []struct {
			name string
			get  func(*corev1.Affinity) (*[]corev1.PodAffinityTerm, *[]corev1.WeightedPodAffinityTerm, bool)
			drop func(*corev1.Affinity)
		}{
			{"podAffinity", func(a *corev1.Affinity) (*[]corev1.PodAffinityTerm, *[]corev1.WeightedPodAffinityTerm, bool) {
				if a.PodAffinity == nil {
					return nil, nil, false
				}
				return &a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, &a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution, true
			}, func(a *corev1.Affinity) { a.PodAffinity = nil }},
			{"podAntiAffinity", func(a *corev1.Affinity) (*[]corev1.PodAffinityTerm, *[]corev1.WeightedPodAffinityTerm, bool) {
				if a.PodAntiAffinity == nil {
					return nil, nil, false
				}
				return &a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, &a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, true
			}, func(a *corev1.Affinity) { a.PodAntiAffinity = nil }},
		} {
			req, pref, ok := side.get(a)
			if !ok {
				continue
			}
			out = append(out, edit{side.name, func(o runtime.Object) { side.drop(aff(o)) }})
			out = append(out, listEdits(side.name+".required", *req, func(o runtime.Object) *[]corev1.PodAffinityTerm {
				r, _, _ := side.get(aff(o))
				return r
			})...)
			out = append(out, listEdits(side.name+".preferred", *pref, func(o runtime.Object) *[]corev1.WeightedPodAffinityTerm {
				_, p, _ := side.get(aff(o))
				return p
			})...)
		}
	}
	out = append(out, listEdits("volumes", p.Spec.Volumes, func(o runtime.Object) *[]corev1.Volume { return &pod(o).Spec.Volumes })...)
	out = append(out, listEdits("tolerations", p.Spec.Tolerations, func(o runtime.Object) *[]corev1.Toleration { return &pod(o).Spec.Tolerations })...)
	out = append(out, listEdits("topologySpreadConstraints", p.Spec.TopologySpreadConstraints, func(o runtime.Object) *[]corev1.TopologySpreadConstraint {
		return &pod(o).Spec.TopologySpreadConstraints
	})...)
	for i, c := range p.Spec.TopologySpreadConstraints {
		tsc := func(o runtime.Object) *corev1.TopologySpreadConstraint {
			return &pod(o).Spec.TopologySpreadConstraints[i]
		}
		prefix := fmt.Sprintf("topologySpreadConstraints[%d].", i)
		if c.MinDomains != nil {
			out = append(out, edit{prefix + "minDomains", func(o runtime.Object) { tsc(o).MinDomains = nil }})
		}
		if c.NodeAffinityPolicy != nil {
			out = append(out, edit{prefix + "nodeAffinityPolicy", func(o runtime.Object) { tsc(o).NodeAffinityPolicy = nil }})
		}
		if c.NodeTaintsPolicy != nil {
			out = append(out, edit{prefix + "nodeTaintsPolicy", func(o runtime.Object) { tsc(o).NodeTaintsPolicy = nil }})
		}
		if len(c.MatchLabelKeys) > 0 {
			out = append(out, edit{prefix + "matchLabelKeys", func(o runtime.Object) { tsc(o).MatchLabelKeys = nil }})
		}
	}
	if len(p.Spec.NodeSelector) > 0 {
		out = append(out, edit{"nodeSelector", func(o runtime.Object) { pod(o).Spec.NodeSelector = nil }})
	}
	out = append(out, listEdits("schedulingGates", p.Spec.SchedulingGates, func(o runtime.Object) *[]corev1.PodSchedulingGate {
		return &pod(o).Spec.SchedulingGates
	})...)
	if p.Spec.PriorityClassName != "" {
		out = append(out, edit{"priorityClassName", func(o runtime.Object) {
			pod(o).Spec.PriorityClassName = ""
			pod(o).Spec.Priority = nil // it must agree with the class
			pod(o).Spec.PreemptionPolicy = nil
		}})
	}
	if p.Spec.PreemptionPolicy != nil {
		out = append(out, edit{"preemptionPolicy", func(o runtime.Object) { pod(o).Spec.PreemptionPolicy = nil }})
	}
	if p.Spec.Priority != nil {
		out = append(out, edit{"priority", func(o runtime.Object) { pod(o).Spec.Priority = nil }})
	}
	if len(p.Spec.Overhead) > 0 {
		out = append(out, edit{"overhead", func(o runtime.Object) { pod(o).Spec.Overhead = nil }})
	}
	out = append(out, listEdits("initContainers", p.Spec.InitContainers, func(o runtime.Object) *[]corev1.Container { return &pod(o).Spec.InitContainers })...)
	if len(p.Spec.Containers) > 1 {
		// A pod needs a container: only the items go, never the whole list.
		out = append(out, listEdits("containers", p.Spec.Containers, func(o runtime.Object) *[]corev1.Container { return &pod(o).Spec.Containers })[1:]...)
	}
	for _, list := range []struct {
		name string
		get  func(*corev1.Pod) []corev1.Container
	}{
		{"initContainers", func(p *corev1.Pod) []corev1.Container { return p.Spec.InitContainers }},
		{"containers", func(p *corev1.Pod) []corev1.Container { return p.Spec.Containers }},
	} {
		for i, c := range list.get(p) {
			ctr := func(o runtime.Object) *corev1.Container { return &list.get(pod(o))[i] }
			prefix := fmt.Sprintf("%s[%d].", list.name, i)
			if len(c.Ports) > 0 {
				out = append(out, edit{prefix + "ports", func(o runtime.Object) { ctr(o).Ports = nil }})
			}
			if c.RestartPolicy != nil {
				out = append(out, edit{prefix + "restartPolicy", func(o runtime.Object) { ctr(o).RestartPolicy = nil }})
			}
			for _, r := range sortedKeys(c.Resources.Limits) {
				out = append(out, edit{prefix + "limits." + r, func(o runtime.Object) {
					delete(ctr(o).Resources.Limits, corev1.ResourceName(r))
				}})
			}
			for _, r := range sortedKeys(c.Resources.Requests) {
				out = append(out, edit{prefix + "requests." + r, func(o runtime.Object) {
					delete(ctr(o).Resources.Requests, corev1.ResourceName(r))
					// An extended resource's limit must equal its request, and a limit alone
					// would be defaulted back into the request.
					delete(ctr(o).Resources.Limits, corev1.ResourceName(r))
				}})
			}
		}
	}
	out = append(out, labelEdits(p.Labels, func(o runtime.Object) map[string]string { return pod(o).Labels })...)
	return out
}

func nodeEdits(n *corev1.Node) []edit {
	node := func(o runtime.Object) *corev1.Node { return o.(*corev1.Node) }
	var out []edit
	out = append(out, listEdits("taints", n.Spec.Taints, func(o runtime.Object) *[]corev1.Taint { return &node(o).Spec.Taints })...)
	if n.Spec.Unschedulable {
		out = append(out, edit{"unschedulable", func(o runtime.Object) { node(o).Spec.Unschedulable = false }})
	}
	out = append(out, listEdits("images", n.Status.Images, func(o runtime.Object) *[]corev1.ContainerImage { return &node(o).Status.Images })...)
	for _, r := range sortedKeys(n.Status.Allocatable) {
		if r == string(corev1.ResourceCPU) || r == string(corev1.ResourceMemory) || r == string(corev1.ResourcePods) {
			continue // what every node has
		}
		out = append(out, edit{"resource " + r, func(o runtime.Object) {
			delete(node(o).Status.Allocatable, corev1.ResourceName(r))
			delete(node(o).Status.Capacity, corev1.ResourceName(r))
		}})
	}
	if !equalResources(n.Status.Allocatable, n.Status.Capacity) {
		out = append(out, edit{"allocatable = capacity", func(o runtime.Object) {
			node(o).Status.Allocatable = node(o).Status.Capacity.DeepCopy()
		}})
	}
	out = append(out, labelEdits(n.Labels, func(o runtime.Object) map[string]string { return node(o).Labels })...)
	return out
}

func equalResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}
