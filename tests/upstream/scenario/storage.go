package scenario

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Storage names: provisioners and CSI drivers, the beta topology labels volumes (and some nodes)
// carry beside the GA ones, and the annotation the PV controller writes on a claim whose binding
// it completed (without it VolumeBinding takes a claim with a volumeName for one still being
// bound).
const (
	ProvisionerNone  = "kubernetes.io/no-provisioner"
	ProvisionerGCEPD = "kubernetes.io/gce-pd"
	DriverCSI        = "csi.example.com"
	DriverGCEPD      = "pd.csi.storage.gke.io"
	LabelZoneBeta    = "failure-domain.beta.kubernetes.io/zone"
	LabelRegionBeta  = "failure-domain.beta.kubernetes.io/region"
	AnnBindCompleted = "pv.kubernetes.io/bind-completed"
	// labelMedia is a volume label claims' selectors match on.
	labelMedia = "media"
)

// storageClassPool: the StorageClasses a scenario with storage draws from. "local" and "manual"
// hold pre-made volumes only (no provisioner); "csi-fast" and "gce-pd" provision when a pod
// is scheduled, "csi-standard" at once.
var storageClassPool = []struct {
	name, provisioner string
	mode              storagev1.VolumeBindingMode
	chance            float64
}{
	{"local", ProvisionerNone, storagev1.VolumeBindingWaitForFirstConsumer, 0.85},
	{"manual", ProvisionerNone, storagev1.VolumeBindingImmediate, 0.5},
	{"csi-fast", DriverCSI, storagev1.VolumeBindingWaitForFirstConsumer, 0.6},
	{"csi-standard", DriverCSI, storagev1.VolumeBindingImmediate, 0.4},
	{"gce-pd", ProvisionerGCEPD, storagev1.VolumeBindingWaitForFirstConsumer, 0.2},
}

// storageState is what the storage pass generated.
type storageState struct {
	classes     []*storagev1.StorageClass
	drivers     []*storagev1.CSIDriver
	csiNodes    []*storagev1.CSINode
	pvs         []*corev1.PersistentVolume
	pvcs        []*corev1.PersistentVolumeClaim
	capacities  []*storagev1.CSIStorageCapacity
	attachments []*storagev1.VolumeAttachment

	rwopUsed map[string]bool            // ReadWriteOncePod claims a bound pod uses, namespace/name
	disks    map[string][]corev1.Volume // in-tree disks bound pods hold, per node
}

// objects are the storage objects in the order a scenario lists them.
func (st *storageState) objects() []runtime.Object {
	var out []runtime.Object
	for _, o := range st.classes {
		out = append(out, o)
	}
	for _, o := range st.drivers {
		out = append(out, o)
	}
	for _, o := range st.csiNodes {
		out = append(out, o)
	}
	for _, o := range st.pvs {
		out = append(out, o)
	}
	for _, o := range st.pvcs {
		out = append(out, o)
	}
	for _, o := range st.capacities {
		out = append(out, o)
	}
	for _, o := range st.attachments {
		out = append(out, o)
	}
	return out
}

// storage gives some scenarios storage: classes, CSI drivers and CSINodes, volumes, claims,
// capacities and attachments, and volumes to some bound and pending pods. It draws from a random
// source of its own, after everything else is generated, so a scenario without storage is the
// one its seed made before storage existed.
func (g *gen) storage() {
	main := g.r
	g.r = g.sr
	defer func() { g.r = main }()
	if hit := g.chance(0.4); !hit && !g.p.AlwaysStorage {
		return
	}
	g.st = &storageState{rwopUsed: map[string]bool{}, disks: map[string][]corev1.Volume{}}
	g.storageClasses()
	g.csiObjects()
	g.persistentVolumes()
	g.claims()
	for _, pod := range g.bound {
		if g.chance(0.35) {
			g.boundPodVolumes(pod)
		}
	}
	for _, pod := range g.pending {
		if g.chance(0.5) {
			g.pendingPodVolumes(pod)
		}
	}
	g.volumeAttachments()
	g.storageCapacities()
}

func (g *gen) class(name string) *storagev1.StorageClass {
	for _, c := range g.st.classes {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// classNames are the generated classes' names whose binding mode is mode.
func (g *gen) classNames(mode storagev1.VolumeBindingMode) []string {
	var out []string
	for _, c := range g.st.classes {
		m := storagev1.VolumeBindingImmediate
		if c.VolumeBindingMode != nil {
			m = *c.VolumeBindingMode
		}
		if m == mode {
			out = append(out, c.Name)
		}
	}
	return out
}

func (g *gen) storageClasses() {
	for _, c := range storageClassPool {
		if !g.chance(c.chance) {
			continue
		}
		sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: c.name}, Provisioner: c.provisioner}
		// Immediate is the default: sometimes it is left for the API server to write.
		if c.mode != storagev1.VolumeBindingImmediate || g.chance(0.6) {
			sc.VolumeBindingMode = ptr(c.mode)
		}
		if c.provisioner != ProvisionerNone && g.chance(0.35) {
			// Provisioning only reaches some zones (sometimes one no node is in).
			zones := pickSome(g, append(slices.Clone(g.zones), "zone-x"), g.between(1, 2))
			sc.AllowedTopologies = []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{
				{Key: LabelZone, Values: zones},
			}}}
		}
		g.st.classes = append(g.st.classes, sc)
	}
}

// csiObjects makes the CSI driver's CSIDriver, each node's CSINode, and gives some nodes the
// beta topology labels too.
func (g *gen) csiObjects() {
	if g.chance(0.75) {
		d := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: DriverCSI}}
		if g.chance(0.3) {
			d.Spec.AttachRequired = ptr(false)
		}
		if g.chance(0.5) {
			// VolumeBinding then checks the CSIStorageCapacities before provisioning.
			d.Spec.StorageCapacity = ptr(true)
		}
		if g.chance(0.3) {
			d.Spec.PreventPodSchedulingIfMissing = ptr(true)
		}
		g.st.drivers = append(g.st.drivers, d)
	}
	for _, n := range g.nodeObjs {
		if zone, ok := n.Labels[LabelZone]; ok && g.chance(0.35) {
			n.Labels[LabelZoneBeta] = zone
			if region, ok := n.Labels[LabelRegion]; ok {
				n.Labels[LabelRegionBeta] = region
			}
		}
		if g.chance(0.2) {
			continue // no CSINode: no limits (and no migration) on this node
		}
		cn := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: n.Name}}
		if g.chance(0.85) {
			d := storagev1.CSINodeDriver{Name: DriverCSI, NodeID: n.Name}
			if g.chance(0.8) {
				d.Allocatable = &storagev1.VolumeNodeResources{Count: ptr(int32(g.between(1, 4)))}
			}
			cn.Spec.Drivers = append(cn.Spec.Drivers, d)
		}
		if g.chance(0.3) {
			d := storagev1.CSINodeDriver{Name: DriverGCEPD, NodeID: "projects/p/zones/z/instances/" + n.Name}
			if g.chance(0.8) {
				d.Allocatable = &storagev1.VolumeNodeResources{Count: ptr(int32(g.between(1, 3)))}
			}
			cn.Spec.Drivers = append(cn.Spec.Drivers, d)
		}
		g.st.csiNodes = append(g.st.csiNodes, cn)
	}
}

var (
	storageSizes = []string{"1Gi", "2Gi", "5Gi", "10Gi", "50Gi"}
	accessModes  = [][]corev1.PersistentVolumeAccessMode{
		{corev1.ReadWriteOnce}, {corev1.ReadWriteOnce}, {corev1.ReadWriteOncePod}, {corev1.ReadOnlyMany},
		{corev1.ReadWriteOnce, corev1.ReadOnlyMany}, {corev1.ReadWriteMany},
	}
)

// persistentVolumes makes 2-12 volumes: local and hostPath ones of the classes without a
// provisioner (or of no class), CSI ones of the CSI classes, with node affinity on a node or a
// zone and zone labels, all Available (claims bind some of them later).
func (g *gen) persistentVolumes() {
	candidates := []string{""}
	for _, c := range g.st.classes {
		candidates = append(candidates, c.Name, c.Name)
	}
	// A class no object describes: volumes and claims still match on its name.
	candidates = append(candidates, "archive")
	for i := range g.between(2, 12) {
		class := pick(g, candidates)
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pv-%02d", i+1), Labels: map[string]string{}},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:         corev1.ResourceList{corev1.ResourceStorage: q(pick(g, storageSizes))},
				AccessModes:      pick(g, accessModes),
				StorageClassName: class,
			},
			Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable},
		}
		node := pick(g, g.nodeObjs)
		hostAffinity := func() {
			name := node.Name
			if g.chance(0.05) {
				name = "node-99" // a node that is gone
			}
			pv.Spec.NodeAffinity = pvAffinity(LabelHostname, name)
		}
		zone := pick(g, g.zones)
		if z, ok := node.Labels[LabelZone]; ok && g.chance(0.7) {
			zone = z
		}
		sc := g.class(class)
		switch {
		case sc != nil && sc.Provisioner == DriverCSI, sc != nil && sc.Provisioner == ProvisionerGCEPD:
			driver := DriverCSI
			if sc.Provisioner == ProvisionerGCEPD {
				driver = DriverGCEPD
			}
			pv.Spec.CSI = &corev1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: "vol-" + pv.Name}
			switch x := g.r.Float64(); {
			case x < 0.5:
				pv.Spec.NodeAffinity = pvAffinity(LabelZone, zone)
				g.zoneLabels(pv, zone)
			case x < 0.65:
				hostAffinity()
			case x < 0.8:
				// Labels alone: only VolumeZone keeps the pod in the zone.
				g.zoneLabels(pv, zone)
			}
		case g.chance(0.6):
			pv.Spec.Local = &corev1.LocalVolumeSource{Path: "/mnt/disks/" + pv.Name}
			hostAffinity()
			if g.chance(0.3) {
				g.zoneLabels(pv, zone)
			}
		default:
			pv.Spec.HostPath = &corev1.HostPathVolumeSource{Path: "/data/" + pv.Name}
			switch x := g.r.Float64(); {
			case x < 0.4:
				hostAffinity()
			case x < 0.6:
				pv.Spec.NodeAffinity = pvAffinity(LabelZone, zone)
				g.zoneLabels(pv, zone)
			case x < 0.7:
				g.zoneLabels(pv, zone)
			}
		}
		if g.chance(0.5) {
			pv.Labels[labelMedia] = pick(g, []string{"ssd", "hdd"})
		}
		if g.chance(0.06) {
			pv.Spec.VolumeMode = ptr(corev1.PersistentVolumeBlock)
		}
		g.st.pvs = append(g.st.pvs, pv)
	}
}

func pvAffinity(key, value string) *corev1.VolumeNodeAffinity {
	return &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{value}}},
	}}}}
}

// zoneLabels gives a volume the topology labels of zone: the GA keys, the beta ones or both,
// the region mostly, and sometimes a second zone (a regional disk: "zone-a__zone-b").
func (g *gen) zoneLabels(pv *corev1.PersistentVolume, zone string) {
	value := zone
	if g.chance(0.12) {
		if other := pick(g, zonePool).zone; other != zone {
			value = zone + "__" + other
		}
	}
	ga, beta := true, false
	switch x := g.r.Float64(); {
	case x < 0.3:
		ga, beta = false, true
	case x < 0.45:
		beta = true
	}
	if ga {
		pv.Labels[LabelZone] = value
	}
	if beta {
		pv.Labels[LabelZoneBeta] = value
	}
	if g.chance(0.6) {
		if ga {
			pv.Labels[LabelRegion] = regionOf(zone)
		}
		if beta {
			pv.Labels[LabelRegionBeta] = regionOf(zone)
		}
	}
}

// podNamespaces are the namespaces of the scenario's pods, in first-seen order.
func (g *gen) podNamespaces() []string {
	var out []string
	for _, pods := range [][]*corev1.Pod{g.bound, g.pending} {
		for _, p := range pods {
			if !slices.Contains(out, p.Namespace) {
				out = append(out, p.Namespace)
			}
		}
	}
	if len(out) == 0 {
		out = []string{"default"}
	}
	return out
}

// claims makes 2-12 claims in the pods' namespaces: bound ones (to an Available volume that
// satisfies them, both sides saying so), unbound ones of WaitForFirstConsumer and Immediate
// classes, and now and then one pre-bound by volumeName, one bound to a volume that is gone,
// one Lost. Then some Available volumes are pre-bound to an unbound claim by their claimRef.
func (g *gen) claims() {
	namespaces := g.podNamespaces()
	wffc := g.classNames(storagev1.VolumeBindingWaitForFirstConsumer)
	immediate := append(g.classNames(storagev1.VolumeBindingImmediate), "")
	for i := range g.between(2, 12) {
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("claim-%02d", i+1), Namespace: pick(g, namespaces)},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{pick(g, accessModes)[0]},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q(pick(g, storageSizes))}},
			},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
		}
		x := g.r.Float64()
		if x < 0.55 {
			if pv := g.availableVolume(); pv != nil {
				g.bind(pvc, pv)
				g.st.pvcs = append(g.st.pvcs, pvc)
				continue
			}
		}
		switch {
		case x < 0.86 && len(wffc) > 0:
			pvc.Spec.StorageClassName = ptr(pick(g, wffc))
		case x < 0.93:
			pvc.Spec.StorageClassName = ptr(pick(g, immediate))
			if g.chance(0.1) {
				pvc.Spec.StorageClassName = ptr("gold") // a class that does not exist
			}
		case x < 0.965 && len(g.st.pvs) > 0:
			// Pre-bound by the user: a volumeName, but no binding completed yet.
			pv := pick(g, g.st.pvs)
			pvc.Spec.StorageClassName = ptr(pv.Spec.StorageClassName)
			pvc.Spec.VolumeName = pv.Name
		default:
			// Bound to a volume that no longer exists; Lost when the controller noticed.
			pvc.Spec.StorageClassName = ptr(pick(g, append(wffc, immediate...)))
			pvc.Spec.VolumeName = "pv-gone"
			pvc.Annotations = map[string]string{AnnBindCompleted: "yes"}
			pvc.Status.Phase = corev1.ClaimBound
			if g.chance(0.4) {
				pvc.Status.Phase = corev1.ClaimLost
			}
		}
		if g.chance(0.05) {
			pvc.Spec.StorageClassName = nil // no class at all (no default class is admitted)
		}
		if pvc.Spec.VolumeName == "" && g.chance(0.15) {
			pvc.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{labelMedia: pick(g, []string{"ssd", "hdd"})}}
		}
		if g.chance(0.05) {
			pvc.Spec.VolumeMode = ptr(corev1.PersistentVolumeBlock)
		}
		g.st.pvcs = append(g.st.pvcs, pvc)
	}
	// Volumes set aside for one claim by their claimRef, still Available; at most one per claim:
	// upstream's matching takes the first volume pre-bound to the claim in its cache's order,
	// which is a Go map's, so two would make its choice random.
	setAside := map[string]bool{}
	for _, pv := range g.st.pvs {
		if pv.Spec.ClaimRef != nil || !g.chance(0.15) {
			continue
		}
		for _, pvc := range g.st.pvcs {
			key := pvc.Namespace + "/" + pvc.Name
			if pvc.Spec.VolumeName == "" && !setAside[key] && pvc.Spec.StorageClassName != nil && *pvc.Spec.StorageClassName == pv.Spec.StorageClassName {
				pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: pvc.Namespace, Name: pvc.Name}
				setAside[key] = true
				break
			}
		}
	}
}

// availableVolume picks an Available volume no claim has, nil when there is none.
func (g *gen) availableVolume() *corev1.PersistentVolume {
	var free []*corev1.PersistentVolume
	for _, pv := range g.st.pvs {
		if pv.Spec.ClaimRef == nil {
			free = append(free, pv)
		}
	}
	if len(free) == 0 {
		return nil
	}
	return pick(g, free)
}

// bind makes pvc a claim bound to pv, as the PV controller leaves both: the claim asks for no
// more than the volume has, in one of its access modes and of its class.
func (g *gen) bind(pvc *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume) {
	pvc.Spec.StorageClassName = ptr(pv.Spec.StorageClassName)
	pvc.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{pick(g, pv.Spec.AccessModes)}
	size := pv.Spec.Capacity[corev1.ResourceStorage]
	if g.chance(0.5) {
		size = q("1Gi")
	}
	pvc.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: size}
	pvc.Spec.VolumeMode = pv.Spec.VolumeMode
	pvc.Spec.VolumeName = pv.Name
	pvc.Annotations = map[string]string{AnnBindCompleted: "yes"}
	pvc.Status = corev1.PersistentVolumeClaimStatus{
		Phase:       corev1.ClaimBound,
		AccessModes: slices.Clone(pv.Spec.AccessModes),
		Capacity:    pv.Spec.Capacity.DeepCopy(),
	}
	pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: pvc.Namespace, Name: pvc.Name}
	pv.Status.Phase = corev1.VolumeBound
}

func (g *gen) volume(name string) *corev1.PersistentVolume {
	for _, pv := range g.st.pvs {
		if pv.Name == name {
			return pv
		}
	}
	return nil
}

func (g *gen) node(name string) *corev1.Node {
	for _, n := range g.nodeObjs {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// reaches reports whether a volume's node affinity admits the node (every term is In).
func reaches(pv *corev1.PersistentVolume, node *corev1.Node) bool {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return true
	}
	for _, term := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		ok := true
		for _, r := range term.MatchExpressions {
			v, has := node.Labels[r.Key]
			ok = ok && has && slices.Contains(r.Values, v)
		}
		if ok {
			return true
		}
	}
	return false
}

// boundPodVolumes gives a running pod volumes it could be running with: claims bound to a
// volume that reaches its node (a ReadWriteOncePod claim to one pod only), an in-tree disk
// that conflicts with none on the node, an emptyDir.
func (g *gen) boundPodVolumes(pod *corev1.Pod) {
	node := g.node(pod.Spec.NodeName)
	var usable []*corev1.PersistentVolumeClaim
	for _, pvc := range g.st.pvcs {
		if pvc.Namespace != pod.Namespace || pvc.Status.Phase != corev1.ClaimBound {
			continue
		}
		pv := g.volume(pvc.Spec.VolumeName)
		if pv == nil || !reaches(pv, node) || g.st.rwopUsed[pvc.Namespace+"/"+pvc.Name] {
			continue
		}
		usable = append(usable, pvc)
	}
	for _, pvc := range pickSome(g, usable, g.between(1, 2)) {
		if slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteOncePod) {
			g.st.rwopUsed[pvc.Namespace+"/"+pvc.Name] = true
		}
		pod.Spec.Volumes = append(pod.Spec.Volumes, claimVolume(pvc.Name, g.chance(0.1)))
	}
	if g.chance(0.25) {
		disk := g.inTreeDisk(len(pod.Spec.Volumes))
		if !slices.ContainsFunc(g.st.disks[node.Name], func(v corev1.Volume) bool { return disksConflict(v, disk) }) {
			g.st.disks[node.Name] = append(g.st.disks[node.Name], disk)
			pod.Spec.Volumes = append(pod.Spec.Volumes, disk)
		}
	}
	if g.chance(0.2) {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	}
}

func claimVolume(claim string, readOnly bool) corev1.Volume {
	return corev1.Volume{Name: "vol-" + claim, VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim, ReadOnly: readOnly},
	}}
}

// pendingPodVolumes gives a pending pod 1-3 volumes: claims of its namespace (several pods may
// share one), a claim that does not exist, an ephemeral volume whose claim the ephemeral volume
// controller made (owned by the pod), has not made yet, or that another pod owns, in-tree disks
// from the pool bound pods use, an emptyDir.
func (g *gen) pendingPodVolumes(pod *corev1.Pod) {
	var own []*corev1.PersistentVolumeClaim
	for _, pvc := range g.st.pvcs {
		if pvc.Namespace == pod.Namespace && !strings.HasPrefix(pvc.Name, pod.Name+"-") {
			own = append(own, pvc)
		}
	}
	used := map[string]bool{}
	for i := range pick(g, []int{1, 1, 1, 2, 2, 3}) {
		var v corev1.Volume
		switch x := g.r.Float64(); {
		case x < 0.6 && len(own) > 0:
			pvc := pick(g, own)
			if used[pvc.Name] {
				continue
			}
			used[pvc.Name] = true
			v = claimVolume(pvc.Name, g.chance(0.1))
		case x < 0.63:
			if used["missing"] {
				continue
			}
			used["missing"] = true
			v = claimVolume("missing", false)
		case x < 0.82:
			v = g.ephemeralVolume(pod, i)
		case x < 0.95:
			v = g.inTreeDisk(i)
		default:
			v = corev1.Volume{Name: fmt.Sprintf("cache-%d", i), VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
		}
		pod.Spec.Volumes = append(pod.Spec.Volumes, v)
	}
}

// podUID is the uid a generated pod that owns a claim states, so that both sides read the same
// owner.
func podUID(pod *corev1.Pod) types.UID {
	var sum uint64 = 14695981039346656037
	for _, c := range pod.Namespace + "/" + pod.Name {
		sum = (sum ^ uint64(c)) * 1099511628211
	}
	return types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012x", sum&0xffffffffffff))
}

// ephemeralVolume is a generic ephemeral volume of a WaitForFirstConsumer class (sometimes an
// Immediate one); its claim <pod>-<volume> is made, owned by the pod, most of the time.
func (g *gen) ephemeralVolume(pod *corev1.Pod, i int) corev1.Volume {
	classes := g.classNames(storagev1.VolumeBindingWaitForFirstConsumer)
	if len(classes) == 0 || g.chance(0.15) {
		classes = append(classes, g.classNames(storagev1.VolumeBindingImmediate)...)
	}
	spec := corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q(pick(g, storageSizes))}},
	}
	if len(classes) > 0 {
		spec.StorageClassName = ptr(pick(g, classes))
	}
	v := corev1.Volume{Name: fmt.Sprintf("scratch-%d", i), VolumeSource: corev1.VolumeSource{
		Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: spec}},
	}}
	owner := pod
	switch x := g.r.Float64(); {
	case x < 0.15:
		return v // the controller has not made the claim yet
	case x < 0.2:
		// A claim of that name another pod owns (or a pod of the same name that was replaced).
		owner = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.Name + "-old", Namespace: pod.Namespace}}
	}
	pod.UID = podUID(pod)
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:      pod.Name + "-" + v.Name,
			Namespace: pod.Namespace,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Pod", Name: owner.Name, UID: podUID(owner), Controller: ptr(true), BlockOwnerDeletion: ptr(true),
			}},
		},
		Spec:   *spec.DeepCopy(),
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
	g.st.pvcs = append(g.st.pvcs, claim)
	return v
}

// The in-tree disks pods use: a few of each kind, so that pods share (and conflict on) them.
var (
	gceDisks  = []string{"disk-a", "disk-b", "disk-c"}
	ebsDisks  = []string{"vol-0a1", "vol-0b2"}
	rbdImages = []string{"image-1", "image-2"}
	iscsiIQNs = []string{"iqn.2001-04.com.example:storage.disk1", "iqn.2001-04.com.example:storage.disk2"}
)

// inTreeDisk draws an in-tree disk volume (GCE PD, AWS EBS, RBD or iSCSI), read-only now and
// then.
func (g *gen) inTreeDisk(i int) corev1.Volume {
	v := corev1.Volume{Name: fmt.Sprintf("disk-%d", i)}
	readOnly := g.chance(0.35)
	switch g.r.IntN(4) {
	case 0:
		v.GCEPersistentDisk = &corev1.GCEPersistentDiskVolumeSource{PDName: pick(g, gceDisks), FSType: "ext4", ReadOnly: readOnly}
	case 1:
		v.AWSElasticBlockStore = &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: pick(g, ebsDisks), FSType: "ext4", ReadOnly: readOnly}
	case 2:
		v.RBD = &corev1.RBDVolumeSource{
			CephMonitors: pickSome(g, []string{"10.0.0.1:6789", "10.0.0.2:6789", "10.0.0.3:6789"}, g.between(1, 2)),
			RBDImage:     pick(g, rbdImages),
			RBDPool:      pick(g, []string{"rbd", "fast"}),
			ReadOnly:     readOnly,
		}
	default:
		v.ISCSI = &corev1.ISCSIVolumeSource{
			TargetPortal: "10.0.1.1:3260",
			IQN:          pick(g, iscsiIQNs),
			Lun:          int32(g.between(0, 1)),
			ReadOnly:     readOnly,
		}
	}
	return v
}

// disksConflict is VolumeRestrictions' rule for two in-tree disks on one node: the same disk,
// unless both mount it read-only (EBS: the same volume, always).
func disksConflict(a, b corev1.Volume) bool {
	switch {
	case a.GCEPersistentDisk != nil && b.GCEPersistentDisk != nil:
		return a.GCEPersistentDisk.PDName == b.GCEPersistentDisk.PDName && !(a.GCEPersistentDisk.ReadOnly && b.GCEPersistentDisk.ReadOnly)
	case a.AWSElasticBlockStore != nil && b.AWSElasticBlockStore != nil:
		return a.AWSElasticBlockStore.VolumeID == b.AWSElasticBlockStore.VolumeID
	case a.RBD != nil && b.RBD != nil:
		shared := slices.ContainsFunc(a.RBD.CephMonitors, func(m string) bool { return slices.Contains(b.RBD.CephMonitors, m) })
		return shared && a.RBD.RBDPool == b.RBD.RBDPool && a.RBD.RBDImage == b.RBD.RBDImage && !(a.RBD.ReadOnly && b.RBD.ReadOnly)
	case a.ISCSI != nil && b.ISCSI != nil:
		return a.ISCSI.IQN == b.ISCSI.IQN && !(a.ISCSI.ReadOnly && b.ISCSI.ReadOnly)
	}
	return false
}

// volumeAttachments records the CSI volumes bound pods use as attached to their nodes (mostly:
// an attachment may still be on its way), and now and then one left attached with no pod.
func (g *gen) volumeAttachments() {
	seen := map[string]bool{}
	attach := func(pv *corev1.PersistentVolume, node string) {
		key := pv.Name + "/" + node
		if seen[key] {
			return
		}
		seen[key] = true
		va := &storagev1.VolumeAttachment{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("csi-%s-%s", pv.Name, node)},
			Spec: storagev1.VolumeAttachmentSpec{
				Attacher: pv.Spec.CSI.Driver,
				NodeName: node,
				Source:   storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr(pv.Name)},
			},
			Status: storagev1.VolumeAttachmentStatus{Attached: g.chance(0.85)},
		}
		g.st.attachments = append(g.st.attachments, va)
	}
	for _, pod := range g.bound {
		for _, v := range pod.Spec.Volumes {
			if v.PersistentVolumeClaim == nil {
				continue
			}
			for _, pvc := range g.st.pvcs {
				if pvc.Namespace != pod.Namespace || pvc.Name != v.PersistentVolumeClaim.ClaimName {
					continue
				}
				if pv := g.volume(pvc.Spec.VolumeName); pv != nil && pv.Spec.CSI != nil && g.chance(0.7) {
					attach(pv, pod.Spec.NodeName)
				}
			}
		}
	}
	for _, pv := range g.st.pvs {
		if pv.Spec.CSI != nil && g.chance(0.12) {
			attach(pv, pick(g, g.nodeObjs).Name)
		}
	}
}

// storageCapacities publishes what the CSI driver can still provision for the
// WaitForFirstConsumer CSI class: per zone or per node, sometimes with a largest volume size.
func (g *gen) storageCapacities() {
	class := g.class("csi-fast")
	if class == nil || !g.chance(0.8) {
		return
	}
	add := func(name, key, value string) {
		c := &storagev1.CSIStorageCapacity{
			ObjectMeta:       metav1.ObjectMeta{Name: name, Namespace: "default"},
			NodeTopology:     &metav1.LabelSelector{MatchLabels: map[string]string{key: value}},
			StorageClassName: class.Name,
			Capacity:         ptr(q(pick(g, []string{"1Gi", "4Gi", "10Gi", "100Gi"}))),
		}
		if g.chance(0.3) {
			c.MaximumVolumeSize = ptr(q(pick(g, []string{"2Gi", "10Gi"})))
		}
		if g.chance(0.05) {
			// Not known (yet). Never with a maximumVolumeSize: upstream's VolumeBinding then
			// provisions on the node and its Score reads the missing capacity and panics.
			c.Capacity, c.MaximumVolumeSize = nil, nil
		}
		g.st.capacities = append(g.st.capacities, c)
	}
	if g.chance(0.5) {
		for _, z := range g.zones {
			if g.chance(0.85) {
				add("capacity-"+z, LabelZone, z)
			}
		}
		return
	}
	for _, n := range g.nodeObjs {
		if g.chance(0.7) {
			add("capacity-"+n.Name, LabelHostname, n.Name)
		}
	}
}
