package scenario

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// workload is a pod template: what a Deployment's replicas share. Bound and pending pods are
// mostly its instances, so they select one another.
type workload struct {
	app    string
	ns     string
	labels map[string]string
	spec   corev1.PodSpec
	gpu    bool
}

// appPool: the `app` label values; each workload takes one.
var appPool = []string{"web", "api", "db", "cache", "batch", "worker", "ml", "agent"}

// Pod label keys besides app. pod-template-hash and track differ between a workload's
// generations, which is what matchLabelKeys and mismatchLabelKeys look at.
const (
	labelTier  = "tier"
	labelTrack = "track"
	labelHash  = "pod-template-hash"
)

var hashPool = []string{"5d8f7b9c4", "7c9d4e6f1"}

func (g *gen) workloads() {
	apps := pickSome(g, appPool, g.between(2, 6))
	// Shuffle so that which app gets which features does not follow the pool's order.
	g.r.Shuffle(len(apps), func(i, j int) { apps[i], apps[j] = apps[j], apps[i] })
	for _, app := range apps {
		g.works = append(g.works, &workload{app: app})
	}
	// Labels first, then specs: a spec's affinity terms refer to other workloads' labels.
	for _, w := range g.works {
		w.ns = g.podNamespace()
		w.labels = map[string]string{"app": w.app}
		if g.chance(0.6) {
			w.labels[labelTier] = pick(g, []string{"frontend", "backend"})
		}
		if g.chance(0.4) {
			w.labels[labelTrack] = pick(g, []string{"stable", "canary"})
		}
		if g.chance(0.5) {
			w.labels[labelHash] = pick(g, hashPool)
		}
		w.gpu = g.hasGPU() && ((w.app == "ml" && g.chance(0.7)) || g.chance(0.05))
	}
	for _, w := range g.works {
		w.spec = g.podSpec(w)
	}
}

func (g *gen) podNamespace() string {
	if g.chance(0.55) {
		return "default"
	}
	return pick(g, g.nsNames)
}

func (g *gen) hasGPU() bool {
	for _, n := range g.nodeObjs {
		if _, ok := n.Status.Allocatable[ResourceGPU]; ok {
			return true
		}
	}
	return false
}

// podSpec draws a workload's template: containers, constraints and priority.
func (g *gen) podSpec(w *workload) corev1.PodSpec {
	var spec corev1.PodSpec
	nContainers := 1
	if g.chance(0.25) {
		nContainers = g.between(2, 3)
	}
	for i := range nContainers {
		c := g.container(fmt.Sprintf("%s-%d", w.app, i), w.gpu && i == 0)
		if i > 0 {
			c = g.helper(c)
		}
		spec.Containers = append(spec.Containers, c)
	}
	if g.feature("initContainers", 0.18) {
		for i := range g.between(1, 2) {
			c := g.container(fmt.Sprintf("init-%d", i), false)
			c.Ports = nil
			if g.chance(0.45) {
				// A sidecar: it keeps running beside the app containers.
				c.RestartPolicy = ptr(corev1.ContainerRestartPolicyAlways)
			}
			spec.InitContainers = append(spec.InitContainers, c)
		}
	}
	if g.chance(0.04) {
		// What a RuntimeClass's admission adds.
		spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("64Mi")}
	}
	if g.feature("hostPort", 0.08) || w.app == "agent" && g.chance(0.6) {
		port := corev1.ContainerPort{
			ContainerPort: pick(g, []int32{80, 8080, 9100}),
			Protocol:      corev1.ProtocolTCP,
		}
		port.HostPort = port.ContainerPort
		if g.chance(0.2) {
			port.Protocol = corev1.ProtocolUDP
		}
		if g.chance(0.2) {
			port.HostIP = pick(g, []string{"127.0.0.1", "0.0.0.0", "10.0.0.1"})
		}
		spec.Containers[0].Ports = append(spec.Containers[0].Ports, port)
	}
	if g.feature("nodeSelector", 0.12) {
		spec.NodeSelector = g.nodeSelector(w)
	}
	var aff corev1.Affinity
	if g.feature("nodeAffinity", 0.15) {
		aff.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{}}
		for range g.between(1, 2) {
			aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = append(
				aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms, g.nodeSelectorTerm())
		}
	}
	if g.feature("nodeAffinity", 0.25) {
		if aff.NodeAffinity == nil {
			aff.NodeAffinity = &corev1.NodeAffinity{}
		}
		for range g.between(1, 3) {
			aff.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(
				aff.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
				corev1.PreferredSchedulingTerm{Weight: g.weight(), Preference: g.nodeSelectorTerm()})
		}
	}
	if g.feature("podAffinity", 0.1) {
		aff.PodAffinity = &corev1.PodAffinity{}
		for range g.between(1, 2) {
			aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(
				aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, g.podAffinityTerm(w, false))
		}
	}
	if g.feature("podAffinity", 0.15) {
		if aff.PodAffinity == nil {
			aff.PodAffinity = &corev1.PodAffinity{}
		}
		for range g.between(1, 2) {
			aff.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(
				aff.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
				corev1.WeightedPodAffinityTerm{Weight: g.weight(), PodAffinityTerm: g.podAffinityTerm(w, false)})
		}
	}
	if g.feature("podAntiAffinity", 0.15) {
		aff.PodAntiAffinity = &corev1.PodAntiAffinity{}
		for range g.between(1, 2) {
			aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(
				aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, g.podAffinityTerm(w, true))
		}
	}
	if g.feature("podAntiAffinity", 0.15) {
		if aff.PodAntiAffinity == nil {
			aff.PodAntiAffinity = &corev1.PodAntiAffinity{}
		}
		for range g.between(1, 2) {
			aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(
				aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
				corev1.WeightedPodAffinityTerm{Weight: g.weight(), PodAffinityTerm: g.podAffinityTerm(w, true)})
		}
	}
	if aff.NodeAffinity != nil || aff.PodAffinity != nil || aff.PodAntiAffinity != nil {
		spec.Affinity = &aff
	}
	if g.feature("tolerations", 0.35) || w.gpu && g.chance(0.8) {
		spec.Tolerations = g.tolerations(w)
	}
	if g.feature("spread", 0.3) {
		spec.TopologySpreadConstraints = g.spreadConstraints(w)
	}
	if len(g.classes) > 0 && g.chance(0.65) {
		c := pick(g, g.classes)
		spec.PriorityClassName = c.Name
		if g.chance(0.05) {
			// What the Priority admission plugin writes; it must agree with the class.
			spec.Priority = ptr(c.Value)
		}
	}
	// No pod sets preemptionPolicy itself: the Priority admission plugin refuses one that
	// differs from its class's (PreemptLowerPriority without a class).
	return spec
}

func (g *gen) weight() int32 { return int32(pick(g, []int{1, 5, 10, 50, 100, g.between(1, 100)})) }

// container draws one container: an image and its requests and limits.
func (g *gen) container(name string, gpu bool) corev1.Container {
	c := corev1.Container{Name: name, Image: pick(g, imagePool).name}
	if g.chance(0.08) && !gpu {
		return c // BestEffort: scoring counts it with the non-zero defaults
	}
	requests := corev1.ResourceList{}
	if !g.chance(0.1) {
		requests[corev1.ResourceCPU] = q(pick(g, []string{"50m", "100m", "100m", "250m", "250m", "500m", "500m", "1", "1500m", "2", "3"}))
	}
	if !g.chance(0.1) {
		requests[corev1.ResourceMemory] = q(pick(g, []string{"64Mi", "128Mi", "256Mi", "256Mi", "512Mi", "1Gi", "1Gi", "2Gi", "4Gi"}))
	}
	if g.chance(0.1) {
		requests[corev1.ResourceEphemeralStorage] = q(pick(g, []string{"1Gi", "10Gi", "40Gi"}))
	}
	if g.chance(0.03) {
		// Bigger than most nodes: fits nowhere unless a large node is free.
		requests[corev1.ResourceCPU] = q(pick(g, []string{"6", "12", "20"}))
	}
	limits := corev1.ResourceList{}
	if g.feature("limits", 0.3) {
		// In a fixed order: each resource draws from the random source.
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
			v, ok := requests[name]
			if !ok {
				continue
			}
			l := v.DeepCopy()
			if g.chance(0.5) {
				l.Add(v)
			}
			limits[name] = l
		}
	}
	if gpu {
		n := *resource.NewQuantity(int64(g.between(1, 2)), resource.DecimalSI)
		// The API server requires an extended resource's request to equal its limit.
		requests[ResourceGPU] = n
		limits[ResourceGPU] = n
	}
	if g.feature("limits", 0.05) && !gpu {
		// Limits alone: defaulting copies them into the requests.
		requests, limits = corev1.ResourceList{}, requests
	}
	if len(requests) > 0 {
		c.Resources.Requests = requests
	}
	if len(limits) > 0 {
		c.Resources.Limits = limits
	}
	return c
}

// helper makes c a helper container (a log shipper, a proxy): its cpu and memory requests
// small, limits at least as large.
func (g *gen) helper(c corev1.Container) corev1.Container {
	small := map[corev1.ResourceName][]string{
		corev1.ResourceCPU:    {"10m", "50m", "100m", "200m"},
		corev1.ResourceMemory: {"32Mi", "64Mi", "128Mi"},
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		for _, list := range []corev1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
			if _, ok := list[name]; ok {
				list[name] = q(pick(g, small[name]))
			}
		}
		r, hasR := c.Resources.Requests[name]
		l, hasL := c.Resources.Limits[name]
		if hasR && hasL && l.Cmp(r) < 0 {
			c.Resources.Limits[name] = r
		}
	}
	return c
}

// nodeSelector draws a nodeSelector over the node label pools.
func (g *gen) nodeSelector(w *workload) map[string]string {
	sel := map[string]string{}
	switch x := g.r.Float64(); {
	case x < 0.3:
		sel[LabelZone] = pick(g, g.zones)
	case x < 0.55:
		sel[LabelDisk] = pick(g, []string{"ssd", "hdd"})
	case x < 0.75:
		sel[LabelPool] = pick(g, []string{"general", "batch", "edge"})
	case x < 0.95:
		sel[LabelRegion] = regionOf(pick(g, g.zones))
	default:
		// One node by name: pinned, every other node filtered.
		sel[LabelHostname] = pick(g, g.nodeObjs).Name
	}
	if w.gpu && g.chance(0.5) {
		sel[LabelAccel] = pick(g, []string{"gpu-a", "gpu-b"})
	}
	return sel
}

// nodeSelectorTerm draws 1-2 requirements over node labels with every operator, sometimes a
// matchFields on the node's name.
func (g *gen) nodeSelectorTerm() corev1.NodeSelectorTerm {
	var term corev1.NodeSelectorTerm
	n := 1
	if g.chance(0.3) {
		n = 2 // ANDed: fewer nodes match
	}
	for range n {
		term.MatchExpressions = append(term.MatchExpressions, g.nodeRequirement())
	}
	if g.chance(0.08) {
		op := pick(g, []corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn})
		term.MatchFields = append(term.MatchFields, corev1.NodeSelectorRequirement{
			Key: "metadata.name", Operator: op, Values: []string{pick(g, g.nodeObjs).Name},
		})
		if g.chance(0.5) {
			term.MatchExpressions = nil
		}
	}
	return term
}

func (g *gen) nodeRequirement() corev1.NodeSelectorRequirement {
	setOps := []corev1.NodeSelectorOperator{
		corev1.NodeSelectorOpIn, corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn,
		corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist,
	}
	req := func(key string, values []string) corev1.NodeSelectorRequirement {
		r := corev1.NodeSelectorRequirement{Key: key, Operator: pick(g, setOps)}
		if r.Operator == corev1.NodeSelectorOpIn || r.Operator == corev1.NodeSelectorOpNotIn {
			r.Values = pickSome(g, values, g.between(1, 2))
		}
		return r
	}
	switch g.r.IntN(8) {
	case 0, 1, 7:
		// A zone that does not exist sometimes: In then matches fewer nodes.
		return req(LabelZone, append(slices.Clone(g.zones), "zone-x"))
	case 2:
		return req(LabelDisk, []string{"ssd", "hdd"})
	case 3:
		return req(LabelPool, []string{"general", "batch", "edge"})
	case 4:
		op := pick(g, []corev1.NodeSelectorOperator{corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt})
		key := LabelGeneration
		if g.chance(0.1) {
			// Gt/Lt on a label whose values are not integers match nothing.
			key = LabelDisk
		}
		return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: []string{fmt.Sprint(g.between(0, 5))}}
	case 5:
		return req(LabelRegion, []string{"region-1", "region-2"})
	default:
		names := make([]string, 0, len(g.nodeObjs))
		for _, n := range g.nodeObjs {
			names = append(names, n.Name)
		}
		r := req(LabelHostname, names)
		if len(r.Values) > 0 {
			r.Values = pickSome(g, names, g.between(1, 3))
		}
		return r
	}
}

// podAffinityTerm draws a term selecting a workload's pods: the workload itself (mostly for
// anti-affinity, one replica per domain) or another one (mostly for affinity).
func (g *gen) podAffinityTerm(w *workload, anti bool) corev1.PodAffinityTerm {
	target := w
	if (anti && g.chance(0.4)) || (!anti && g.chance(0.7)) {
		target = pick(g, g.works)
	}
	term := corev1.PodAffinityTerm{TopologyKey: g.topologyKey(0.5, 0.4)}
	switch x := g.r.Float64(); {
	case x < 0.65:
		term.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": target.app}}
	case x < 0.85:
		other := pick(g, appPool)
		term.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: uniq(target.app, other)},
		}}
	case x < 0.95:
		term.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			pick(g, []metav1.LabelSelectorRequirement{
				{Key: labelTier, Operator: metav1.LabelSelectorOpExists},
				{Key: labelTrack, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"canary"}},
				{Key: labelTier, Operator: metav1.LabelSelectorOpDoesNotExist},
				{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{target.app}},
			}),
		}}
	default:
		// {}: every pod in the term's namespaces.
		term.LabelSelector = &metav1.LabelSelector{}
	}
	switch x := g.r.Float64(); {
	case x < 0.2:
		term.Namespaces = uniq(target.ns, pick(g, append(slices.Clone(g.nsNames), "elsewhere")))
	case x < 0.35:
		term.NamespaceSelector = pick(g, []*metav1.LabelSelector{
			{},
			{MatchLabels: map[string]string{"team": "a"}},
			{MatchLabels: map[string]string{"env": "prod"}},
			{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpExists}}},
		})
		if g.chance(0.3) {
			term.Namespaces = []string{target.ns}
		}
	default:
		// Neither: the pod's own namespace. A target elsewhere is then out of reach.
	}
	// matchLabelKeys and mismatchLabelKeys need a selector without the key.
	if g.chance(0.1) {
		key := pick(g, []string{labelTrack, labelHash})
		if !selectorUses(term.LabelSelector, key) {
			if g.chance(0.6) {
				term.MatchLabelKeys = []string{key}
			} else {
				term.MismatchLabelKeys = []string{key}
			}
		}
	}
	return term
}

func selectorUses(sel *metav1.LabelSelector, key string) bool {
	if sel == nil {
		return false
	}
	if _, ok := sel.MatchLabels[key]; ok {
		return true
	}
	for _, r := range sel.MatchExpressions {
		if r.Key == key {
			return true
		}
	}
	return false
}

func uniq(xs ...string) []string {
	var out []string
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// topologyKey is the hostname with probability host, the zone with probability zone, else the
// region.
func (g *gen) topologyKey(host, zone float64) string {
	switch x := g.r.Float64(); {
	case x < host:
		return LabelHostname
	case x < host+zone:
		return LabelZone
	default:
		return LabelRegion
	}
}

// tolerations draws 1-3 tolerations over the taint pool, with every operator and effect.
func (g *gen) tolerations(w *workload) []corev1.Toleration {
	var out []corev1.Toleration
	if w.gpu {
		out = append(out, corev1.Toleration{Key: gpuTaint.Key, Operator: corev1.TolerationOpEqual, Value: gpuTaint.Value, Effect: corev1.TaintEffectNoSchedule})
	}
	candidates := append(slices.Clone(taintPool), gpuTaint,
		corev1.Taint{Key: TaintUnschedulable, Effect: corev1.TaintEffectNoSchedule})
	for range g.between(1, 3) {
		var t corev1.Toleration
		switch x := g.r.Float64(); {
		case x < 0.7:
			taint := pick(g, candidates)
			t.Key = taint.Key
			if taint.Value != "" && g.chance(0.75) {
				t.Operator = corev1.TolerationOpEqual
				t.Value = taint.Value
				if g.chance(0.1) {
					t.Value = "other" // tolerates nothing
				}
			} else {
				t.Operator = corev1.TolerationOpExists
			}
			if g.chance(0.6) {
				t.Effect = taint.Effect
			} else if g.chance(0.2) {
				t.Effect = pick(g, []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute})
			}
		case x < 0.85:
			t = corev1.Toleration{Key: pick(g, candidates).Key, Operator: corev1.TolerationOpExists}
		case x < 0.9:
			// Tolerates every taint.
			t = corev1.Toleration{Operator: corev1.TolerationOpExists}
		default:
			t = corev1.Toleration{Operator: corev1.TolerationOpExists, Effect: pick(g, []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule})}
		}
		if t.Operator == corev1.TolerationOpEqual && g.chance(0.3) {
			t.Operator = "" // Equal is the default
		}
		if t.Effect == corev1.TaintEffectNoExecute && g.chance(0.5) {
			t.TolerationSeconds = ptr(int64(pick(g, []int{0, 60, 300})))
		}
		out = append(out, t)
	}
	return out
}

// spreadConstraints draws 1-2 constraints, distinct by (topologyKey, whenUnsatisfiable).
func (g *gen) spreadConstraints(w *workload) []corev1.TopologySpreadConstraint {
	var out []corev1.TopologySpreadConstraint
	for range g.between(1, 2) {
		c := corev1.TopologySpreadConstraint{
			MaxSkew:           int32(pick(g, []int{1, 1, 1, 2, 3})),
			TopologyKey:       g.topologyKey(0.4, 0.5),
			WhenUnsatisfiable: corev1.DoNotSchedule,
		}
		if g.chance(0.4) {
			c.WhenUnsatisfiable = corev1.ScheduleAnyway
		}
		dup := false
		for _, o := range out {
			dup = dup || (o.TopologyKey == c.TopologyKey && o.WhenUnsatisfiable == c.WhenUnsatisfiable)
		}
		if dup {
			continue
		}
		switch x := g.r.Float64(); {
		case x < 0.8:
			c.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": w.app}}
		case x < 0.97:
			c.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: uniq(w.app, pick(g, appPool))},
			}}
		default:
			// No selector: it counts no pods.
		}
		if c.WhenUnsatisfiable == corev1.DoNotSchedule && g.chance(0.15) {
			c.MinDomains = ptr(int32(g.between(1, 5)))
		}
		policies := []*corev1.NodeInclusionPolicy{nil, nil, nil, ptr(corev1.NodeInclusionPolicyHonor), ptr(corev1.NodeInclusionPolicyIgnore)}
		c.NodeAffinityPolicy = pick(g, policies)
		c.NodeTaintsPolicy = pick(g, policies)
		if c.LabelSelector != nil && g.chance(0.15) {
			c.MatchLabelKeys = []string{labelHash}
		}
		out = append(out, c)
	}
	return out
}

// --- Instances --------------------------------------------------------------------------------

// instance makes a pod of workload w, named after its app and a number unique in the scenario.
func (g *gen) instance(w *workload) *corev1.Pod {
	g.seq++
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:              fmt.Sprintf("%s-%d", w.app, g.seq),
			Namespace:         w.ns,
			Labels:            map[string]string{},
			CreationTimestamp: metav1.NewTime(Time0.Add(time.Duration(g.clock) * time.Second)),
		},
		Spec: *w.spec.DeepCopy(),
	}
	// Distinct ages: preemption orders victims by start time, so ties would let the two
	// sides pick different victims for no reason worth reporting.
	g.clock += g.between(1, 90)
	for k, v := range w.labels {
		pod.Labels[k] = v
	}
	return pod
}

// requests is the pod's effective request as NodeResourcesFit counts it: app containers and
// sidecars together, or the largest init container with the sidecars started before it.
func requests(spec *corev1.PodSpec) corev1.ResourceList {
	total := corev1.ResourceList{}
	add := func(into, r corev1.ResourceList) {
		for k, v := range r {
			cur := into[k]
			cur.Add(v)
			into[k] = cur
		}
	}
	reqs := func(c *corev1.Container) corev1.ResourceList {
		if len(c.Resources.Requests) > 0 {
			return c.Resources.Requests
		}
		return c.Resources.Limits // defaulted from the limits
	}
	for i := range spec.Containers {
		add(total, reqs(&spec.Containers[i]))
	}
	sidecars := corev1.ResourceList{}
	peak := corev1.ResourceList{}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		r := corev1.ResourceList{}
		add(r, reqs(c))
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(total, r)
			add(sidecars, r)
			r = sidecars.DeepCopy()
		} else {
			add(r, sidecars)
		}
		for k, v := range r {
			if cur, ok := peak[k]; !ok || v.Cmp(cur) > 0 {
				peak[k] = v
			}
		}
	}
	for k, v := range peak {
		if cur, ok := total[k]; !ok || v.Cmp(cur) > 0 {
			total[k] = v
		}
	}
	add(total, spec.Overhead)
	return total
}

// fits reports whether r fits in node's free resources and pod count.
func (g *gen) fits(node string, r corev1.ResourceList) bool {
	if g.podsLeft[node] < 1 {
		return false
	}
	free := g.free[node]
	for k, v := range r {
		f := free[k]
		if keep, ok := g.keepFree[node][k]; ok {
			f.Sub(keep)
		}
		if v.Cmp(f) > 0 {
			return false
		}
	}
	return true
}

// hostPort is one host port a pod holds.
type hostPort struct {
	key string // "protocol/port"
	ip  string // "0.0.0.0" for every address
}

// hostPorts lists the host ports a pod holds.
func hostPorts(spec *corev1.PodSpec) []hostPort {
	var out []hostPort
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range cs {
			for _, p := range c.Ports {
				if p.HostPort == 0 {
					continue
				}
				proto := p.Protocol
				if proto == "" {
					proto = corev1.ProtocolTCP
				}
				ip := p.HostIP
				if ip == "" {
					ip = "0.0.0.0"
				}
				out = append(out, hostPort{fmt.Sprintf("%s/%d", proto, p.HostPort), ip})
			}
		}
	}
	return out
}

// portsFree reports whether none of ports conflicts with one held on node already: the same
// protocol and port on the same address, or on every address (0.0.0.0) on either side. Two
// running pods never conflict so (the kubelet refuses the second), and upstream's node info
// keeps host ports as a set, so a state where they did would make removing one pod free the
// port for both: not a state worth comparing.
func (g *gen) portsFree(node string, ports []hostPort) bool {
	for _, p := range ports {
		for _, ip := range g.ports[node][p.key] {
			if ip == p.ip || ip == "0.0.0.0" || p.ip == "0.0.0.0" {
				return false
			}
		}
	}
	return true
}

func (g *gen) take(node string, r corev1.ResourceList) {
	g.podsLeft[node]--
	free := g.free[node]
	for k, v := range r {
		f := free[k]
		f.Sub(v)
		free[k] = f
	}
}

func (g *gen) boundPods() {
	n := g.between(g.p.MinBound, g.p.MaxBound)
	for range n {
		var w *workload
		if g.chance(0.8) {
			w = pick(g, g.works)
		} else {
			// A pod of its own, like a static or one-off pod.
			w = &workload{app: pick(g, appPool), ns: g.podNamespace()}
			w.labels = map[string]string{"app": w.app}
			w.spec = g.podSpec(w)
			w.app += "-solo"
		}
		pod := g.instance(w)
		if len(g.classes) > 0 && g.chance(0.3) {
			// Running work is often the least important: what preemption evicts first.
			pod.Spec.PriorityClassName = g.classes[0].Name
			pod.Spec.Priority = nil
			pod.Spec.PreemptionPolicy = nil
		}
		// The API server refuses a pod created bound and gated; a bound pod is past its gates.
		pod.Spec.SchedulingGates = nil
		r := requests(&pod.Spec)
		ports := hostPorts(&pod.Spec)
		placed := ""
		for range 12 {
			node := pick(g, g.nodeObjs).Name
			if g.fits(node, r) && g.portsFree(node, ports) {
				placed = node
				break
			}
		}
		if placed == "" && g.chance(0.03) {
			// Overcommitted: a node whose pods ask for more than it has (e.g. after a resize).
			if node := pick(g, g.nodeObjs).Name; g.portsFree(node, ports) {
				placed = node
			}
		}
		if placed == "" {
			continue
		}
		g.take(placed, r)
		if g.ports[placed] == nil {
			g.ports[placed] = map[string][]string{}
		}
		for _, p := range ports {
			g.ports[placed][p.key] = append(g.ports[placed][p.key], p.ip)
		}
		pod.Spec.NodeName = placed
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &pod.CreationTimestamp}
		g.bound = append(g.bound, pod)
	}
}

func (g *gen) pendingPods() {
	n := g.between(g.p.MinPending, g.p.MaxPending)
	for range n {
		var w *workload
		if g.chance(0.75) {
			w = pick(g, g.works)
		} else {
			w = &workload{app: pick(g, appPool), ns: g.podNamespace()}
			w.labels = map[string]string{"app": w.app}
			if g.chance(0.5) {
				w.labels[labelTier] = pick(g, []string{"frontend", "backend"})
			}
			w.gpu = g.hasGPU() && g.chance(0.15)
			w.spec = g.podSpec(w)
			w.app += "-solo"
		}
		pod := g.instance(w)
		if g.chance(0.2) {
			// A new generation of the workload (a rollout).
			pod.Labels[labelHash] = pick(g, hashPool)
		}
		if g.chance(0.15) {
			// Replicas differ in size now and then (vertical scaling, a new version).
			for i := range pod.Spec.Containers {
				pod.Spec.Containers[i] = g.resized(pod.Spec.Containers[i])
			}
		}
		if len(g.classes) > 0 && g.feature("priority", 0.2) {
			// An urgent replica: a class of its own, often above what is running, so that
			// preemption has victims to weigh.
			c := g.classes[len(g.classes)-1]
			if g.chance(0.4) {
				c = pick(g, g.classes)
			}
			pod.Spec.PriorityClassName = c.Name
			pod.Spec.Priority = nil
			pod.Spec.PreemptionPolicy = nil
		}
		if g.feature("gates", 0.06) {
			gates := []string{"example.com/quota", "example.com/hold"}
			for _, name := range pickSome(g, gates, g.between(1, 2)) {
				pod.Spec.SchedulingGates = append(pod.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: name})
			}
		}
		g.pending = append(g.pending, pod)
	}
}

// resized draws new cpu and memory requests for c, keeping limits at least as large.
func (g *gen) resized(c corev1.Container) corev1.Container {
	if c.Resources.Requests == nil {
		return c
	}
	fresh := g.container(c.Name, false)
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		v, ok := fresh.Resources.Requests[name]
		if _, had := c.Resources.Requests[name]; !ok || !had {
			continue
		}
		c.Resources.Requests[name] = v
		if l, ok := c.Resources.Limits[name]; ok && l.Cmp(v) < 0 {
			c.Resources.Limits[name] = v
		}
	}
	return c
}
