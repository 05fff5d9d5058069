package main

import (
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Shrinker reduces a scenario with a difference to a minimal one whose first difference is of
// the same kind: first whole objects (delta debugging), then fields of what remains.
type Shrinker struct {
	// Run has both sides explain a candidate; an error means a side refused it.
	Run func(objs []runtime.Object) (*Outcome, error)
	// Kind is the difference kind (Difference.Kind) a candidate must keep.
	Kind string
	// Budget caps the candidates run; shrinking stops with what it has when it is spent.
	Budget int
	// Log, when set, is told about each step that made the scenario smaller.
	Log func(format string, args ...any)

	Tests int      // candidates run so far
	Last  *Outcome // the outcome of the smallest scenario that kept the difference
}

func (s *Shrinker) logf(format string, args ...any) {
	if s.Log != nil {
		s.Log(format, args...)
	}
}

func (s *Shrinker) spent() bool { return s.Tests >= s.Budget }

// holds runs a candidate and reports whether it is accepted by both sides and its first
// difference is still of the kind. The first, not any: a broad kind (message, best) also
// follows from other bugs, and a candidate whose first difference is another one has
// wandered off to that bug.
func (s *Shrinker) holds(objs []runtime.Object) bool {
	if s.spent() || !consistent(objs) {
		return false
	}
	s.Tests++
	out, err := s.Run(objs)
	if err != nil || len(out.Diffs) == 0 || out.Diffs[0].Kind() != s.Kind {
		return false
	}
	s.Last = out
	return true
}

// Shrink returns the smallest scenario it found; objs itself must have the difference.
func (s *Shrinker) Shrink(objs []runtime.Object) []runtime.Object {
	for !s.spent() {
		before := size(objs)
		objs = s.dropObjects(objs)
		objs = s.simplify(objs)
		if size(objs) == before {
			break
		}
	}
	return objs
}

// size orders scenarios by how much they hold: objects first, then fields.
func size(objs []runtime.Object) [2]int {
	fields := 0
	for _, o := range objs {
		fields += len(editsFor(o))
	}
	return [2]int{len(objs), fields}
}

// dropObjects is ddmin over the objects (complements only: what is kept is always the
// candidate's rest). Dropping a node drops the pods bound to it too.
func (s *Shrinker) dropObjects(objs []runtime.Object) []runtime.Object {
	n := 2
	for len(objs) >= 2 && !s.spent() {
		chunk := (len(objs) + n - 1) / n
		reduced := false
		for start := 0; start < len(objs) && !s.spent(); start += chunk {
			end := min(start+chunk, len(objs))
			cand := withoutOrphans(append(append([]runtime.Object{}, objs[:start]...), objs[end:]...))
			if s.holds(cand) {
				s.logf("dropped %d objects: %d left", len(objs)-len(cand), len(cand))
				objs = cand
				n = max(n-1, 2)
				reduced = true
				break
			}
		}
		if !reduced {
			if n >= len(objs) {
				break
			}
			n = min(2*n, len(objs))
		}
	}
	return objs
}

// simplify tries each field edit of each object, keeping those that keep the difference.
func (s *Shrinker) simplify(objs []runtime.Object) []runtime.Object {
	objs = append([]runtime.Object{}, objs...)
	for i := 0; i < len(objs) && !s.spent(); i++ {
		// After a kept edit the object's edits are listed anew (indexes shift); those before
		// the kept one failed already and are not retried.
		for k := 0; !s.spent(); {
			edits := editsFor(objs[i])
			if k >= len(edits) {
				break
			}
			cand := append([]runtime.Object{}, objs...)
			cand[i] = objs[i].DeepCopyObject()
			edits[k].apply(cand[i])
			if s.holds(cand) {
				s.logf("%s: %s", describe(objs[i]), edits[k].name)
				objs = cand
				continue
			}
			k++
		}
	}
	return objs
}

// withoutOrphans drops the pods bound to a node the scenario no longer has.
func withoutOrphans(objs []runtime.Object) []runtime.Object {
	nodes := map[string]bool{}
	for _, o := range objs {
		if n, ok := o.(*corev1.Node); ok {
			nodes[n.Name] = true
		}
	}
	out := objs[:0:0]
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok && p.Spec.NodeName != "" && !nodes[p.Spec.NodeName] {
			continue
		}
		out = append(out, o)
	}
	return out
}

// consistent is what a candidate needs before it is worth running: a pending pod to explain,
// and every PriorityClass a pod names (admission refuses a pod whose class does not exist).
func consistent(objs []runtime.Object) bool {
	classes := map[string]bool{}
	for _, o := range objs {
		if pc, ok := o.(*schedulingv1.PriorityClass); ok {
			classes[pc.Name] = true
		}
	}
	pending := false
	for _, o := range objs {
		p, ok := o.(*corev1.Pod)
		if !ok {
			continue
		}
		if p.Spec.PriorityClassName != "" && !classes[p.Spec.PriorityClassName] {
			return false
		}
		pending = pending || p.Spec.NodeName == ""
	}
	return pending
}
