package scenario

import (
	"crypto/sha256"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// zonePool maps each zone to its region.
var zonePool = []struct{ zone, region string }{
	{"zone-a", "region-1"}, {"zone-b", "region-1"}, {"zone-c", "region-2"}, {"zone-d", "region-2"},
}

func regionOf(zone string) string {
	for _, z := range zonePool {
		if z.zone == zone {
			return z.region
		}
	}
	return ""
}

// nodeShape is a machine size: CPU cores and memory.
type nodeShape struct{ cpu, memory string }

var nodeShapes = []nodeShape{{"2", "4Gi"}, {"4", "8Gi"}, {"4", "16Gi"}, {"8", "16Gi"}, {"16", "32Gi"}}

// taintPool: the taints nodes carry; tolerations are drawn over the same keys and values.
var taintPool = []corev1.Taint{
	{Key: "dedicated", Value: "infra", Effect: corev1.TaintEffectNoSchedule},
	{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectPreferNoSchedule},
	{Key: "maintenance", Effect: corev1.TaintEffectNoExecute},
	{Key: "example.com/flaky", Value: "true", Effect: corev1.TaintEffectPreferNoSchedule},
	{Key: "spot", Value: "true", Effect: corev1.TaintEffectNoSchedule},
	{Key: "spot", Value: "true", Effect: corev1.TaintEffectPreferNoSchedule},
}

// gpuTaint keeps pods that do not ask for the GPU node off it.
var gpuTaint = corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}

// image is a container image with the size nodes report for it. Sizes straddle ImageLocality's
// thresholds (23 MB and 1000 MB per image).
type image struct {
	name string
	size int64
}

const mb = 1024 * 1024

var imagePool = []image{
	{"nginx:1.27", 70 * mb},
	{"redis:7.4", 120 * mb},
	{"postgres:17", 430 * mb},
	// No tag: ImageLocality reads it as busybox:latest.
	{"busybox", 4 * mb},
	{"python:3.13-slim", 150 * mb},
	{"registry.example.com/ml/trainer:2.1", 2600 * mb},
	{"registry.example.com/team/api:v3", 260 * mb},
	{"gcr.io/distroless/static:nonroot", 2 * mb},
}

func (g *gen) nodes() {
	n := g.between(g.p.MinNodes, g.p.MaxNodes)
	g.zones = nil
	for _, z := range pickSome(g, zonePool, g.between(1, len(zonePool))) {
		g.zones = append(g.zones, z.zone)
	}
	gpuNodes := 0
	if g.feature("gpu", 0.35) {
		gpuNodes = g.between(1, max(1, n/4))
	}
	for i := range n {
		name := fmt.Sprintf("node-%02d", i+1)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
		labels := node.Labels
		// Some nodes lack a label a spread constraint or affinity term keys on: they are then
		// outside every domain of that key.
		if !g.chance(0.04) {
			labels[LabelHostname] = name
		}
		zone := g.zones[i%len(g.zones)]
		if g.chance(0.3) {
			zone = pick(g, g.zones)
		}
		if !g.chance(0.05) {
			labels[LabelZone] = zone
			if !g.chance(0.1) {
				labels[LabelRegion] = regionOf(zone)
			}
		}
		if g.chance(0.5) {
			labels[LabelDisk] = pick(g, []string{"ssd", "hdd"})
		}
		if g.chance(0.4) {
			labels[LabelPool] = pick(g, []string{"general", "batch", "edge"})
		}
		if g.chance(0.6) {
			labels[LabelGeneration] = fmt.Sprint(g.between(1, 5))
		}

		shape := pick(g, nodeShapes)
		capacity := corev1.ResourceList{
			corev1.ResourceCPU:    q(shape.cpu),
			corev1.ResourceMemory: q(shape.memory),
			corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
		}
		if g.chance(0.15) {
			// A node that admits only a few pods: "Too many pods".
			capacity[corev1.ResourcePods] = *resource.NewQuantity(int64(g.between(2, 10)), resource.DecimalSI)
		}
		if g.chance(0.9) {
			capacity[corev1.ResourceEphemeralStorage] = q(pick(g, []string{"20Gi", "50Gi", "100Gi"}))
		}
		var taints []corev1.Taint
		if i < gpuNodes {
			capacity = corev1.ResourceList{
				corev1.ResourceCPU:    q("16"),
				corev1.ResourceMemory: q("64Gi"),
				corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
				ResourceGPU:           *resource.NewQuantity(int64(g.between(1, 4)), resource.DecimalSI),
			}
			labels[LabelAccel] = pick(g, []string{"gpu-a", "gpu-b"})
			if g.chance(0.7) {
				taints = append(taints, gpuTaint)
			}
		}
		if g.feature("taint", 0.2) {
			for _, t := range pickSome(g, taintPool, g.between(1, 2)) {
				if !hasTaint(taints, t) {
					taints = append(taints, t)
				}
			}
		}
		node.Spec.Taints = taints
		node.Spec.Unschedulable = g.feature("unschedulable", 0.07)

		allocatable := capacity.DeepCopy()
		if g.chance(0.5) {
			// System reservations, as a kubelet subtracts them.
			reserveCPU := resource.MustParse(pick(g, []string{"100m", "250m"}))
			reserveMem := resource.MustParse(pick(g, []string{"256Mi", "512Mi"}))
			c := allocatable[corev1.ResourceCPU]
			c.Sub(reserveCPU)
			allocatable[corev1.ResourceCPU] = c
			m := allocatable[corev1.ResourceMemory]
			m.Sub(reserveMem)
			allocatable[corev1.ResourceMemory] = m
		}
		// Both are written: a reader that defaults allocatable to capacity and one that does
		// not then see the same node.
		node.Status.Capacity = capacity
		node.Status.Allocatable = allocatable

		if g.feature("images", 0.6) {
			for _, img := range pickSome(g, imagePool, g.between(1, 4)) {
				names := []string{img.name}
				// Real nodes list several names for one image: registry-qualified, by digest.
				if qn := qualified(img.name); qn != img.name && g.chance(0.3) {
					names = append(names, qn)
				}
				if g.chance(0.2) {
					names = append(names, digestName(img.name))
				}
				node.Status.Images = append(node.Status.Images, corev1.ContainerImage{Names: names, SizeBytes: img.size})
			}
		}
		g.nodeObjs = append(g.nodeObjs, node)
		g.free[name] = allocatable.DeepCopy()
		// How full bound pods may make this node: around the scenario's fill, some nodes
		// packed completely (Insufficient ..., preemption), the rest with room for new pods.
		fill := min(1, max(0.05, g.fill+0.4*(g.r.Float64()-0.5)))
		if g.chance(0.15) {
			fill = 1
		}
		g.keepFree[name] = corev1.ResourceList{}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			a := allocatable[r]
			g.keepFree[name][r] = *resource.NewMilliQuantity(int64(float64(a.MilliValue())*(1-fill)), resource.DecimalSI)
		}
		pods := allocatable[corev1.ResourcePods]
		g.podsLeft[name] = pods.Value()
	}
}

func hasTaint(ts []corev1.Taint, t corev1.Taint) bool {
	for _, x := range ts {
		if x.Key == t.Key && x.Effect == t.Effect {
			return true
		}
	}
	return false
}

// qualified is an image name with the registry a runtime reports for a Docker Hub image.
func qualified(name string) string {
	if first, _, ok := strings.Cut(name, "/"); ok && strings.ContainsAny(first, ".:") {
		return name
	}
	if !strings.Contains(name, "/") {
		return "docker.io/library/" + name
	}
	return "docker.io/" + name
}

// digestName is the image's repository by (a made-up but stable) digest.
func digestName(name string) string {
	repo := name
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		repo = name[:i]
	}
	sum := sha256.Sum256([]byte(name))
	return fmt.Sprintf("%s@sha256:%x", repo, sum)
}
