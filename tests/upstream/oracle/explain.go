package oracle

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	kubescheduler "k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// Explain runs one upstream scheduling cycle for each pending pod of objs, in input order, as
// docs/conformance.md describes, and returns the explain document. objs are objects as the API
// server stores them (Decode's or Admit's result); they are not modified.
//
// The cluster is the objects' Nodes, PodDisruptionBudgets, bound pods and storage objects
// (PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes, CSIDrivers,
// CSIStorageCapacities, VolumeAttachments), which the volume plugins read. A cycle ends at
// choosing a node: a placed pod is bound for later cycles in the scheduler's cache and pod
// store, but nothing is reserved or pre-bound, so its claims stay as the input states them (an
// unbound WaitForFirstConsumer claim stays unbound, and VolumeBinding may match the same
// volume for a later pod). Pods in a terminal phase (Succeeded, Failed) are left out, as the
// scheduler's informer leaves them out. A pending pod is one without spec.nodeName; those naming
// another scheduler than default-scheduler are not this profile's and get no entry. A bound pod without status.startTime started at its creation
// (preemption compares start times; upstream takes "now" for a pod without one, which would make
// its choices depend on the clock). A pending pod's status.nominatedNodeName is ignored: the
// explain semantics keep no nominations, and every node is evaluated (no nominated-node or
// OpportunisticBatching hint shortcut). Without nodes a cycle ends, as upstream's does, with
// ErrNoNodesAvailable's message and no PostFilter. A PDB that no disruption controller has observed
// (status.observedGeneration 0) gets, before each cycle, the disruptionsAllowed the controller
// would compute were the bound pods it selects healthy and the pods it selects the expected count:
// healthy minus the desired healthy count from minAvailable or maxUnavailable (percentages of the
// expected count, rounded up), at least 0.
func Explain(objs []runtime.Object) (*Document, error) {
	c, err := newCluster(objs)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logr.Discard()))
	defer cancel()
	s, err := newScheduler(ctx, c.objects())
	if err != nil {
		return nil, err
	}
	if err := c.load(ctx, s); err != nil {
		return nil, err
	}
	doc := &Document{Pods: []PodCycle{}}
	for _, pod := range c.pending {
		if pod.Spec.SchedulerName != s.fw.ProfileName() {
			continue
		}
		if err := c.refreshPDBs(s); err != nil {
			return nil, err
		}
		cycle, err := s.explainPod(ctx, pod)
		if err != nil {
			return nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		doc.Pods = append(doc.Pods, cycle)
		if cycle.Placed != "" {
			if err := c.bind(s, pod, cycle.Placed); err != nil {
				return nil, err
			}
		}
	}
	return doc, nil
}

// explainPod runs one scheduling cycle for pod against the cache's current state: what
// upstream's ScheduleOne does up to choosing a node (schedulePod and, when no node fits, the
// PostFilter plugins), with every node evaluated and every step's outcome recorded.
func (s *scheduler) explainPod(ctx context.Context, pod *v1.Pod) (PodCycle, error) {
	cycle := PodCycle{Namespace: pod.Namespace, Name: pod.Name}
	for _, pl := range s.fw.PreEnqueuePlugins() {
		if st := pl.PreEnqueue(ctx, pod); !st.IsSuccess() {
			cycle.Gated = pluginStatus(pl.Name(), st)
			return cycle, nil
		}
	}

	logger := klog.FromContext(ctx)
	if err := s.cache.UpdateSnapshot(logger, s.snapshot); err != nil {
		return cycle, err
	}
	nodes, err := s.snapshot.NodeInfos().List()
	if err != nil {
		return cycle, err
	}
	nodes = append([]fwk.NodeInfo(nil), nodes...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Node().Name < nodes[j].Node().Name })
	if len(nodes) == 0 {
		cycle.Message = kubescheduler.ErrNoNodesAvailable.Error()
		return cycle, nil
	}

	state := framework.NewCycleState()
	state.Write(framework.PodsToActivateKey, framework.NewPodsToActivate())
	diagnosis := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}
	preResult, st, unschedulablePlugins := s.fw.RunPreFilterPlugins(ctx, state, pod)
	diagnosis.UnschedulablePlugins = unschedulablePlugins
	var feasible []fwk.NodeInfo
	switch {
	case !st.IsSuccess() && !st.IsRejected():
		return cycle, st.AsError()
	case !st.IsSuccess():
		// PreFilter rejected the pod: every node carries its status (findNodesThatFitPod).
		cycle.PreFilter = pluginStatus(st.Plugin(), st)
		diagnosis.NodeToStatus.SetAbsentNodesStatus(st)
		diagnosis.PreFilterMsg = st.Message()
		diagnosis.AddPluginStatus(st)
		for _, n := range nodes {
			cycle.Nodes = append(cycle.Nodes, rejected(n, st))
		}
	default:
		if !preResult.AllNodes() {
			// The status upstream's findNodesThatFitPod gives the nodes a PreFilterResult
			// leaves out; it is built there, so its wording is repeated here.
			diagnosis.NodeToStatus.SetAbsentNodesStatus(fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
				fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unschedulablePlugins))))
		}
		for _, n := range nodes {
			if !preResult.AllNodes() && !preResult.NodeNames.Has(n.Node().Name) {
				cycle.Nodes = append(cycle.Nodes, rejected(n, diagnosis.NodeToStatus.AbsentNodesStatus()))
				continue
			}
			st := s.fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, n)
			switch {
			case st.IsSuccess():
				feasible = append(feasible, n)
				cycle.Nodes = append(cycle.Nodes, NodeVerdict{Name: n.Node().Name, Feasible: true})
			case st.IsRejected():
				diagnosis.NodeToStatus.Set(n.Node().Name, st)
				diagnosis.AddPluginStatus(st)
				cycle.Nodes = append(cycle.Nodes, rejected(n, st))
			default:
				return cycle, st.AsError()
			}
		}
	}

	switch len(feasible) {
	case 0:
		return cycle, s.postFilter(ctx, state, pod, &cycle, diagnosis, len(nodes))
	case 1:
		// schedulePod takes the only feasible node without scoring.
		cycle.Best = []string{feasible[0].Node().Name}
	default:
		if err := s.score(ctx, state, pod, &cycle, feasible); err != nil {
			return cycle, err
		}
	}
	cycle.Placed = cycle.Best[0]
	return cycle, nil
}

// postFilter runs the PostFilter plugins for a pod no node fits and records their verdict and
// upstream's FitError message, as schedulingAlgorithm does.
func (s *scheduler) postFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, cycle *PodCycle, diagnosis framework.Diagnosis, numNodes int) error {
	s.victims.take()
	result, st := s.fw.RunPostFilterPlugins(ctx, state, pod, diagnosis.NodeToStatus)
	diagnosis.PostFilterMsg = st.Message()
	fitError := &framework.FitError{Pod: pod, NumAllNodes: numNodes, Diagnosis: diagnosis}
	cycle.Message = fitError.Error()
	cycle.PostFilter = &PostFilterEntry{Victims: s.victims.take()}
	if result != nil && result.NominatingInfo != nil {
		cycle.PostFilter.NominatedNode = result.NominatingInfo.NominatedNodeName
	}
	return nil
}

// score runs PreScore and Score on the feasible nodes (two or more) and records each plugin's
// raw, normalized and weighted score per node and the best nodes. The normalized scores are
// computed here from RunScorePlugins' raw scores with each plugin's own NormalizeScore, and
// must give the weighted scores and totals RunScorePlugins computed.
func (s *scheduler) score(ctx context.Context, state fwk.CycleState, pod *v1.Pod, cycle *PodCycle, nodes []fwk.NodeInfo) error {
	if st := s.fw.RunPreScorePlugins(ctx, state, pod, nodes); !st.IsSuccess() {
		return st.AsError()
	}
	results, st := s.fw.RunScorePlugins(ctx, state, pod, nodes)
	if !st.IsSuccess() {
		return st.AsError()
	}

	scores := make([]NodeScore, len(nodes))
	for i, n := range nodes {
		scores[i] = NodeScore{Name: n.Node().Name, Plugins: make([]PluginScore, len(s.scorers))}
	}
	for p, sc := range s.scorers {
		list := make(fwk.NodeScoreList, len(nodes))
		ran := false
		for i, r := range results {
			list[i].Name = r.Name
			for _, raw := range r.RawScores {
				if raw.Name == sc.name {
					list[i].Score = raw.Score
					ran = true
				}
			}
		}
		raw := make([]int64, len(list))
		for i := range list {
			raw[i] = list[i].Score
		}
		if ran && sc.plugin.ScoreExtensions() != nil {
			if st := sc.plugin.ScoreExtensions().NormalizeScore(ctx, state, pod, list); !st.IsSuccess() {
				return fmt.Errorf("%s NormalizeScore: %w", sc.name, st.AsError())
			}
		}
		for i := range list {
			scores[i].Plugins[p] = PluginScore{Plugin: sc.name, Raw: raw[i], Normalized: list[i].Score, Weighted: list[i].Score * sc.weight}
			scores[i].Total += list[i].Score * sc.weight
		}
	}

	for i, r := range results {
		upstream := map[string]int64{}
		for _, ps := range r.Scores {
			upstream[ps.Name] = ps.Score
		}
		for _, ps := range scores[i].Plugins {
			if got, ok := upstream[ps.Plugin]; (ok || ps.Weighted != 0) && got != ps.Weighted {
				return fmt.Errorf("node %s: %s weighted score %d, RunScorePlugins has %d", r.Name, ps.Plugin, ps.Weighted, got)
			}
		}
		if scores[i].Total != r.TotalScore {
			return fmt.Errorf("node %s: total score %d, RunScorePlugins has %d", r.Name, scores[i].Total, r.TotalScore)
		}
	}

	sort.Slice(scores, func(i, j int) bool { return scores[i].Name < scores[j].Name })
	cycle.Scores = scores
	best := scores[0].Total
	for _, sc := range scores {
		best = max(best, sc.Total)
	}
	for _, sc := range scores {
		if sc.Total == best {
			cycle.Best = append(cycle.Best, sc.Name)
		}
	}
	return nil
}

// pluginStatus is a non-success status as the document shows it.
func pluginStatus(plugin string, st *fwk.Status) *PluginStatus {
	return &PluginStatus{Plugin: plugin, Code: st.Code().String(), Reasons: reasons(st)}
}

// rejected is a node's verdict under a non-success status.
func rejected(n fwk.NodeInfo, st *fwk.Status) NodeVerdict {
	return NodeVerdict{Name: n.Node().Name, Plugin: st.Plugin(), Code: st.Code().String(), Reasons: reasons(st)}
}

func reasons(st *fwk.Status) []string {
	return append([]string{}, st.Reasons()...)
}

// cluster is the oracle's copy of the input, by kind.
type cluster struct {
	namespaces []*v1.Namespace
	nodes      []*v1.Node
	pdbs       []*policyv1.PodDisruptionBudget
	pods       []*v1.Pod // every pod the scheduler sees: bound, then pending, each in input order
	pending    []*v1.Pod // the pods without a node, in input order
	// storage holds the PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes,
	// CSIDrivers, CSIStorageCapacities and VolumeAttachments, in input order.
	storage []runtime.Object
}

// newCluster sorts copies of objs by kind and prepares the pods as Explain describes.
func newCluster(objs []runtime.Object) (*cluster, error) {
	c := &cluster{}
	var bound []*v1.Pod
	for i, obj := range objs {
		switch o := obj.DeepCopyObject().(type) {
		case *v1.Namespace:
			c.namespaces = append(c.namespaces, o)
		case *v1.Node:
			c.nodes = append(c.nodes, o)
		case *policyv1.PodDisruptionBudget:
			c.pdbs = append(c.pdbs, o)
		case *v1.Pod:
			if o.Status.Phase == v1.PodSucceeded || o.Status.Phase == v1.PodFailed {
				continue
			}
			if o.Spec.NodeName != "" {
				if o.Status.StartTime == nil {
					o.Status.StartTime = o.CreationTimestamp.DeepCopy()
				}
				bound = append(bound, o)
			} else {
				o.Status.NominatedNodeName = ""
				c.pending = append(c.pending, o)
			}
		case *schedulingv1.PriorityClass:
			// Admission resolved the pods' priorities; the scheduler does not read classes.
		case *v1.PersistentVolumeClaim, *v1.PersistentVolume, *storagev1.StorageClass, *storagev1.CSINode,
			*storagev1.CSIDriver, *storagev1.CSIStorageCapacity, *storagev1.VolumeAttachment:
			c.storage = append(c.storage, o)
		default:
			return nil, fmt.Errorf("object %d: %T is not a kind the oracle reads", i+1, obj)
		}
	}
	c.pods = append(bound, c.pending...)
	return c, nil
}

// objects are the cluster's objects, for the fake clientset.
func (c *cluster) objects() []runtime.Object {
	var out []runtime.Object
	for _, o := range c.namespaces {
		out = append(out, o)
	}
	for _, o := range c.nodes {
		out = append(out, o)
	}
	for _, o := range c.pdbs {
		out = append(out, o)
	}
	for _, o := range c.pods {
		out = append(out, o)
	}
	return append(out, c.storage...)
}

// load puts the cluster into the scheduler: nodes and bound pods into the cache, Namespaces,
// Nodes, Pods and PDBs into the informer stores the plugins list from. The storage kinds come
// through their informers, run over the fake clientset (which holds every object) until they
// have synced: VolumeBinding's claim and volume caches hang on those informers' event
// handlers, so a store filled directly would be seen by the listers alone. Nothing changes
// the storage objects afterwards (a cycle binds no claim), so the informers stay in step.
func (c *cluster) load(ctx context.Context, s *scheduler) error {
	logger := klog.Background()
	for _, n := range c.nodes {
		s.cache.AddNode(logger, n)
	}
	for _, p := range c.pods {
		if p.Spec.NodeName != "" {
			if err := s.cache.AddPod(logger, p); err != nil {
				return err
			}
		}
	}
	stores := s.informer.Core().V1()
	for _, o := range c.namespaces {
		if err := stores.Namespaces().Informer().GetStore().Add(o); err != nil {
			return err
		}
	}
	for _, o := range c.nodes {
		if err := stores.Nodes().Informer().GetStore().Add(o); err != nil {
			return err
		}
	}
	for _, o := range c.pods {
		if err := stores.Pods().Informer().GetStore().Add(o); err != nil {
			return err
		}
	}
	for _, o := range c.pdbs {
		if err := s.informer.Policy().V1().PodDisruptionBudgets().Informer().GetStore().Add(o); err != nil {
			return err
		}
	}
	storage := s.informer.Storage().V1()
	informers := []cache.SharedIndexInformer{
		stores.PersistentVolumeClaims().Informer(),
		stores.PersistentVolumes().Informer(),
		storage.StorageClasses().Informer(),
		storage.CSINodes().Informer(),
		storage.CSIDrivers().Informer(),
		storage.CSIStorageCapacities().Informer(),
		storage.VolumeAttachments().Informer(),
	}
	for _, inf := range informers {
		go inf.RunWithContext(ctx)
	}
	// Polled every millisecond: cache.WaitForCacheSync looks every 100 ms, most of a small
	// scenario's time, when the fake clientset's lists answer at once. Synced is all the
	// plugins need: VolumeBinding's caches read the informers' stores, and its event handlers
	// only expire what a cycle assumed, which no cycle here does.
	err := wait.PollUntilContextCancel(ctx, time.Millisecond, true, func(context.Context) (bool, error) {
		for _, inf := range informers {
			if !inf.HasSynced() {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("the storage informers did not sync: %w", err)
	}
	return nil
}

// bind makes pod bound to node for the cycles that follow: a copy in the cache and the pod
// store, as the binding's informer event would put it there.
func (c *cluster) bind(s *scheduler, pod *v1.Pod, node string) error {
	bound := pod.DeepCopy()
	bound.Spec.NodeName = node
	bound.Status.StartTime = bound.CreationTimestamp.DeepCopy()
	if err := s.cache.AddPod(klog.Background(), bound); err != nil {
		return err
	}
	for i, p := range c.pods {
		if p == pod {
			c.pods[i] = bound
		}
	}
	return s.informer.Core().V1().Pods().Informer().GetStore().Update(bound)
}

// refreshPDBs gives each PDB no disruption controller has observed the status Explain
// describes, from the pods as they are now.
func (c *cluster) refreshPDBs(s *scheduler) error {
	store := s.informer.Policy().V1().PodDisruptionBudgets().Informer().GetStore()
	for _, pdb := range c.pdbs {
		if pdb.Status.ObservedGeneration != 0 {
			continue
		}
		selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil {
			return fmt.Errorf("PodDisruptionBudget %s/%s: %w", pdb.Namespace, pdb.Name, err)
		}
		var expected, healthy int
		for _, p := range c.pods {
			if p.Namespace == pdb.Namespace && !selector.Empty() && selector.Matches(labels.Set(p.Labels)) {
				expected++
				if p.Spec.NodeName != "" {
					healthy++
				}
			}
		}
		desired := 0
		switch {
		case pdb.Spec.MaxUnavailable != nil:
			unavailable, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, expected, true)
			if err != nil {
				return err
			}
			desired = max(0, expected-unavailable)
		case pdb.Spec.MinAvailable != nil:
			desired, err = intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, expected, true)
			if err != nil {
				return err
			}
		}
		updated := pdb.DeepCopy()
		updated.Status.DisruptionsAllowed = int32(max(0, healthy-desired))
		updated.Status.CurrentHealthy = int32(healthy)
		updated.Status.DesiredHealthy = int32(desired)
		updated.Status.ExpectedPods = int32(expected)
		if err := store.Update(updated); err != nil {
			return err
		}
	}
	return nil
}
