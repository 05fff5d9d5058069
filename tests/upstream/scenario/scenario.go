// Package scenario generates random small clusters for the differential comparison of
// schedhost with upstream kube-scheduler (cmd/difftest): Namespaces, PriorityClasses, Nodes,
// bound Pods, PodDisruptionBudgets and pending Pods, as typed Kubernetes API objects, and in
// about 40% of the seeds storage: StorageClasses, CSIDrivers, CSINodes, PersistentVolumes,
// PersistentVolumeClaims, CSIStorageCapacities, VolumeAttachments, and volumes on some pods.
//
// A scenario is a function of its seed alone. Everything is drawn from small pools of label
// keys, values, taints and images so that selectors, tolerations and affinity terms actually
// meet the objects they could match: a random cluster in which nothing selects anything would
// compare only the trivial paths. Pods come from a few "workloads" (a template with labels and
// scheduling constraints), so bound replicas and pending replicas of the same workload interact
// through spreading, (anti-)affinity and host ports the way a Deployment's pods do. Storage is
// drawn last, from a random source of its own, so a seed without storage makes the scenario it
// made before storage was generated.
//
// The generator only writes what schedhost's manifest decoder reads and what the API server
// would accept (the oracle reads the same bytes): names are DNS labels, label values are valid,
// extended resources have requests equal to limits, sidecars are init containers with
// restartPolicy Always, a toleration with tolerationSeconds has effect NoExecute, minDomains
// only comes with DoNotSchedule, matchLabelKeys never repeats a key of the label selector, a
// bound pod has no scheduling gates, every priorityClassName names a generated class and at
// most one class is the global default. Storage states what the controllers would have left:
// every PersistentVolume states its phase (Available, or Bound when its claimRef names a claim
// whose volumeName names it back), a claim the PV controller bound carries its bind-completed
// annotation, a Bound status and the volume's capacity, a local volume has node affinity, a
// ReadWriteOncePod mode stands alone, a bound pod uses only bound claims whose volume reaches
// its node (a ReadWriteOncePod claim one pod at most) and in-tree disks that conflict with
// none on its node, and a pod whose ephemeral volume's claim exists states the uid the claim's
// controller reference names. Pod volumes are claims, ephemeral volumes, in-tree disks
// (gcePersistentDisk, awsElasticBlockStore, rbd, iscsi) and emptyDir: no source a profile needs
// a plugin for and schedhost's has none (schedhost holds such pods deliberately).
package scenario

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Params bounds a scenario's size; a zero field takes its default. Each count is drawn
// uniformly from [Min, Max] per seed.
type Params struct {
	MinNodes, MaxNodes     int // default 3..20
	MinBound, MaxBound     int // bound pods, default 0..40 (fewer when nodes run out of room)
	MinPending, MaxPending int // pending pods, default 1..12
	// AlwaysStorage gives every scenario storage; without it about 40% of the seeds get some.
	// A seed that gets storage either way generates the same scenario.
	AlwaysStorage bool
}

func (p Params) withDefaults() Params {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&p.MinNodes, 3)
	def(&p.MaxNodes, 20)
	def(&p.MaxBound, 40)
	def(&p.MinPending, 1)
	def(&p.MaxPending, 12)
	if p.MinBound < 0 {
		p.MinBound = 0
	}
	p.MaxNodes = max(p.MaxNodes, p.MinNodes)
	p.MaxBound = max(p.MaxBound, p.MinBound)
	p.MaxPending = max(p.MaxPending, p.MinPending)
	return p
}

// Well-known label keys and the resource names the generator uses.
const (
	LabelZone     = "topology.kubernetes.io/zone"
	LabelRegion   = "topology.kubernetes.io/region"
	LabelHostname = "kubernetes.io/hostname"
	LabelDisk     = "disk"
	LabelPool     = "pool"
	// LabelGeneration has integer values, for node affinity's Gt and Lt.
	LabelGeneration = "example.com/generation"
	LabelAccel      = "accelerator"

	ResourceGPU = corev1.ResourceName("example.com/gpu")

	// TaintUnschedulable is the taint NodeUnschedulable lets a toleration override.
	TaintUnschedulable = "node.kubernetes.io/unschedulable"
)

// Time0 is when the generated world begins: creation and start times count from it, so that
// every pod has a distinct, deterministic age (preemption orders victims by it).
var Time0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// Generate returns the scenario of `seed`: Namespaces, PriorityClasses, Nodes, the storage
// objects (StorageClasses, CSIDrivers, CSINodes, PersistentVolumes, PersistentVolumeClaims,
// CSIStorageCapacities, VolumeAttachments), bound Pods, PodDisruptionBudgets and pending Pods,
// in that order (the pending pods' order is the order
// they are scheduled in). The same seed and Params give the same objects.
func Generate(seed int64, p Params) []runtime.Object {
	g := newGen(seed, p.withDefaults())
	g.namespaces()
	g.priorityClasses()
	g.nodes()
	g.workloads()
	g.boundPods()
	g.pdbs()
	g.pendingPods()
	g.storage()

	var out []runtime.Object
	for _, ns := range g.nsObjs {
		out = append(out, ns)
	}
	for _, pc := range g.classes {
		out = append(out, pc)
	}
	for _, n := range g.nodeObjs {
		out = append(out, n)
	}
	if g.st != nil {
		out = append(out, g.st.objects()...)
	}
	for _, pod := range g.bound {
		out = append(out, pod)
	}
	for _, pdb := range g.pdbObjs {
		out = append(out, pdb)
	}
	for _, pod := range g.pending {
		out = append(out, pod)
	}
	for _, o := range out {
		SetTypeMeta(o)
	}
	return out
}

// gen holds one scenario's random source and what has been generated so far.
type gen struct {
	r *rand.Rand
	// sr is the storage pass's random source (see storage), st what it made (nil: no storage).
	sr *rand.Rand
	st *storageState
	p  Params
	// theme scales the probability of each feature for this scenario, so that some scenarios
	// are dense in one feature and others barely use it.
	theme map[string]float64

	zones    []string // the zones this cluster has
	nsNames  []string // namespaces pods may live in; "default" first
	nsObjs   []*corev1.Namespace
	classes  []*schedulingv1.PriorityClass
	nodeObjs []*corev1.Node
	free     map[string]corev1.ResourceList // what is left of each node's allocatable
	podsLeft map[string]int64               // pods each node still admits
	keepFree map[string]corev1.ResourceList // what bound pods leave free of each node
	ports    map[string]map[string][]string // host port -> addresses bound pods hold, per node
	fill     float64                        // how full bound pods make nodes, on average
	works    []*workload
	bound    []*corev1.Pod
	pdbObjs  []*policyv1.PodDisruptionBudget
	pending  []*corev1.Pod
	clock    int // seconds after Time0 of the next pod's creation
	seq      int // pods made so far, for their names
}

func newGen(seed int64, p Params) *gen {
	g := &gen{
		r:        rand.New(rand.NewPCG(uint64(seed), 0x5c4ed0057)),
		sr:       rand.New(rand.NewPCG(uint64(seed), 0x5707a9e)),
		p:        p,
		free:     map[string]corev1.ResourceList{},
		podsLeft: map[string]int64{},
		ports:    map[string]map[string][]string{},
		keepFree: map[string]corev1.ResourceList{},
	}
	g.theme = map[string]float64{}
	// A fixed order of draws keeps the scenario a function of the seed.
	for _, f := range themeFeatures {
		g.theme[f] = 0.4 + 1.2*g.r.Float64()
	}
	g.fill = 0.25 + 0.6*g.r.Float64()
	return g
}

// themeFeatures are the features whose probabilities a scenario scales.
var themeFeatures = []string{
	"taint", "unschedulable", "nodeSelector", "nodeAffinity", "tolerations", "hostPort",
	"podAffinity", "podAntiAffinity", "spread", "gates", "priority", "initContainers", "pdb",
	"images", "limits", "gpu",
}

// chance is true with probability p.
func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// feature is true with probability p scaled by the scenario's theme for `name`.
func (g *gen) feature(name string, p float64) bool {
	s, ok := g.theme[name]
	if !ok {
		panic("scenario: unknown theme feature " + name)
	}
	return g.chance(min(1, p*s))
}

// between returns an integer in [lo, hi].
func (g *gen) between(lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + g.r.IntN(hi-lo+1)
}

func pick[T any](g *gen, xs []T) T { return xs[g.r.IntN(len(xs))] }

// pickSome returns k distinct items of xs (k capped at len(xs)) in xs's order.
func pickSome[T any](g *gen, xs []T, k int) []T {
	k = min(k, len(xs))
	idx := g.r.Perm(len(xs))[:k]
	chosen := make([]bool, len(xs))
	for _, i := range idx {
		chosen[i] = true
	}
	var out []T
	for i, x := range xs {
		if chosen[i] {
			out = append(out, x)
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func q(s string) resource.Quantity { return resource.MustParse(s) }

// SetTypeMeta sets the apiVersion and kind of the object kinds a scenario holds.
func SetTypeMeta(o runtime.Object) {
	switch t := o.(type) {
	case *corev1.Namespace:
		t.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}
	case *corev1.Node:
		t.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}
	case *corev1.Pod:
		t.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	case *policyv1.PodDisruptionBudget:
		t.TypeMeta = metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"}
	case *schedulingv1.PriorityClass:
		t.TypeMeta = metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"}
	case *corev1.PersistentVolumeClaim:
		t.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"}
	case *corev1.PersistentVolume:
		t.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"}
	case *storagev1.StorageClass:
		t.TypeMeta = metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass"}
	case *storagev1.CSINode:
		t.TypeMeta = metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSINode"}
	case *storagev1.CSIDriver:
		t.TypeMeta = metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSIDriver"}
	case *storagev1.CSIStorageCapacity:
		t.TypeMeta = metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSIStorageCapacity"}
	case *storagev1.VolumeAttachment:
		t.TypeMeta = metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "VolumeAttachment"}
	default:
		panic(fmt.Sprintf("scenario: unexpected object %T", o))
	}
}

// --- Namespaces and PriorityClasses -----------------------------------------------------------

// namespacePool: namespaces and the `team` label they may carry. `env` is drawn per scenario.
var namespacePool = []struct{ name, team string }{
	{"team-a", "a"}, {"team-b", "b"}, {"infra", ""},
}

func (g *gen) namespaces() {
	g.nsNames = []string{"default"}
	for _, ns := range pickSome(g, namespacePool, g.between(0, len(namespacePool))) {
		g.nsNames = append(g.nsNames, ns.name)
	}
	for _, name := range g.nsNames {
		// The name label is what the API server sets on every namespace; writing it keeps a
		// reader that does not add it (an in-process oracle) seeing the same labels.
		labels := map[string]string{"kubernetes.io/metadata.name": name}
		for _, ns := range namespacePool {
			if ns.name == name && ns.team != "" {
				labels["team"] = ns.team
			}
		}
		if g.chance(0.7) {
			labels["env"] = pick(g, []string{"prod", "dev"})
		}
		// Sometimes a namespace pods use has no object: namespaceSelector then cannot see it.
		if name != "default" && g.chance(0.1) {
			continue
		}
		g.nsObjs = append(g.nsObjs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}})
	}
}

// classPool: the PriorityClasses a scenario draws from, lowest first.
var classPool = []struct {
	name  string
	value int32
}{
	{"batch-low", -10}, {"standard", 100}, {"high", 10000}, {"critical", 1000000},
}

func (g *gen) priorityClasses() {
	if !g.feature("priority", 0.75) {
		return
	}
	chosen := pickSome(g, classPool, g.between(1, len(classPool)))
	defaultIdx := -1
	if g.chance(0.25) {
		defaultIdx = g.r.IntN(len(chosen))
	}
	for i, c := range chosen {
		pc := &schedulingv1.PriorityClass{
			ObjectMeta:  metav1.ObjectMeta{Name: c.name},
			Value:       c.value,
			Description: "generated",
		}
		if i == defaultIdx {
			pc.GlobalDefault = true
		}
		// A class whose pods never preempt: they wait instead.
		if c.value > 0 && g.chance(0.12) {
			pc.PreemptionPolicy = ptr(corev1.PreemptNever)
		}
		g.classes = append(g.classes, pc)
	}
}

// --- PodDisruptionBudgets ---------------------------------------------------------------------

// pdbs guards some workloads' bound pods. No disruption controller runs, so the status is
// written here: mostly what the controller would compute, sometimes a value of its own.
func (g *gen) pdbs() {
	if !g.feature("pdb", 0.35) {
		return
	}
	// Budgets guard running replicas: workloads with bound pods first.
	var guarded []*workload
	for _, w := range g.works {
		if slices.ContainsFunc(g.bound, func(p *corev1.Pod) bool { return p.Namespace == w.ns && p.Labels["app"] == w.app }) {
			guarded = append(guarded, w)
		}
	}
	if len(guarded) == 0 || g.chance(0.1) {
		guarded = g.works
	}
	for i, w := range pickSome(g, guarded, g.between(1, 3)) {
		pdb := &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-pdb-%d", w.app, i+1), Namespace: w.ns},
		}
		sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": w.app}}
		if g.chance(0.2) {
			sel = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: uniq(w.app, pick(g, appPool))},
			}}
		}
		pdb.Spec.Selector = sel
		var matched int32
		for _, p := range g.bound {
			if p.Namespace == w.ns && selects(sel, p.Labels) {
				matched++
			}
		}
		var desired int32
		switch x := g.r.Float64(); {
		case x < 0.4:
			n := int32(g.between(0, int(matched)+1))
			pdb.Spec.MinAvailable = ptr(intstr.FromInt32(n))
			desired = n
		case x < 0.6:
			pdb.Spec.MinAvailable = ptr(intstr.FromString("50%"))
			desired = (matched + 1) / 2
		case x < 0.9:
			n := int32(g.between(0, 1))
			pdb.Spec.MaxUnavailable = ptr(intstr.FromInt32(n))
			desired = max(0, matched-n)
		default:
			pdb.Spec.MaxUnavailable = ptr(intstr.FromString("25%"))
			desired = matched - (matched+3)/4
		}
		allowed := max(0, matched-desired)
		if g.chance(0.3) {
			allowed = int32(g.between(0, 2))
		}
		pdb.Status = policyv1.PodDisruptionBudgetStatus{
			DisruptionsAllowed: allowed,
			CurrentHealthy:     matched,
			DesiredHealthy:     desired,
			ExpectedPods:       matched,
		}
		g.pdbObjs = append(g.pdbObjs, pdb)
	}
}

// selects reports whether a label selector of the kinds the generator writes matches labels.
func selects(sel *metav1.LabelSelector, labels map[string]string) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	return err == nil && s.Matches(k8slabels.Set(labels))
}
