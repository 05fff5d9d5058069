package oracle

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/utils/ptr"
)

// Excluded are the plugins of upstream's default profile that schedhost's default profile does
// not have yet: DynamicResources, and NodeDeclaredFeatures, which v1.37 adds to the default
// profile (its feature gate is GA and locked on).
var Excluded = []string{
	names.DynamicResources,
	names.NodeDeclaredFeatures,
}

var (
	defaultsOnce sync.Once
	defaults     *config.KubeSchedulerConfiguration
	defaultsErr  error
)

// DefaultConfiguration is upstream's default KubeSchedulerConfiguration (v1 defaults converted
// to the internal type), computed once; callers must not modify it.
func DefaultConfiguration() (*config.KubeSchedulerConfiguration, error) {
	defaultsOnce.Do(func() {
		// The framework and preemption record metrics; their collectors exist once registered.
		metrics.Register()
		defaults, defaultsErr = latest.Default()
	})
	return defaults, defaultsErr
}

// Profile is the profile the oracle runs: upstream's default profile without Excluded, every
// node scored (percentageOfNodesToScore = 100).
func Profile() (*config.KubeSchedulerProfile, error) {
	cfg, err := DefaultConfiguration()
	if err != nil {
		return nil, err
	}
	if len(cfg.Profiles) != 1 {
		return nil, fmt.Errorf("upstream's default configuration has %d profiles, want 1", len(cfg.Profiles))
	}
	profile := cfg.Profiles[0].DeepCopy()
	profile.PercentageOfNodesToScore = ptr.To[int32](100)
	profile.Plugins.MultiPoint.Enabled = slices.DeleteFunc(profile.Plugins.MultiPoint.Enabled, func(p config.Plugin) bool {
		return slices.Contains(Excluded, p.Name)
	})
	return profile, nil
}

// scheduler is one upstream framework over one cluster: the scheduler cache the cycles'
// snapshots come from, the informer stores the plugins list objects from, and what the oracle
// needs to look into the plugins.
type scheduler struct {
	fw       framework.Framework
	cache    internalcache.Cache
	snapshot *internalcache.Snapshot
	informer informers.SharedInformerFactory
	scorers  []scorer // every Score plugin of the profile, by name
	victims  *victimLog
}

// scorer is a Score plugin with its weight.
type scorer struct {
	name   string
	weight int64
	plugin fwk.ScorePlugin
}

// newScheduler builds the framework the way upstream's scheduler and its tests do: the in-tree
// registry, an informer factory over a fake clientset holding objs, a cache whose snapshot the
// framework lists nodes from, a scheduling queue as the pod nominator. The informers are not
// started here: the caller fills the stores of the kinds a cycle changes (nodes, pods, PDBs)
// directly, so what the plugins list is exactly the oracle's state, with no watch in between,
// and runs the storage informers, which nothing changes (see cluster.load).
func newScheduler(ctx context.Context, objs []runtime.Object) (*scheduler, error) {
	cfg, err := DefaultConfiguration()
	if err != nil {
		return nil, err
	}
	profile, err := Profile()
	if err != nil {
		return nil, err
	}
	s := &scheduler{
		snapshot: internalcache.NewEmptySnapshot(),
		victims:  &victimLog{},
	}
	client := fake.NewClientset(objs...)
	s.informer = informers.NewSharedInformerFactory(client, 0)
	s.cache = internalcache.New(ctx, nil,
		utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload),
		utilfeature.DefaultFeatureGate.Enabled(features.CompositePodGroup))

	built := map[string]fwk.Plugin{}
	registry := plugins.NewInTreeRegistry()
	for name, factory := range registry {
		registry[name] = func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			p, err := factory(ctx, args, h)
			if err == nil {
				built[name] = p
			}
			return p, err
		}
	}
	// DefaultPreemption preempts synchronously (SchedulerAsyncPreemption off for it alone) and
	// only records its victims: the choice of node and victims is the same either way, but a
	// synchronous PostFilter has called PreemptPod for every victim before it returns, and
	// nothing is deleted, so later cycles see the cluster unchanged.
	registry[defaultpreemption.Name] = func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		fts := plfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
		fts.EnableAsyncPreemption = false
		p, err := defaultpreemption.New(ctx, args, h, fts)
		if err != nil {
			return nil, err
		}
		p.Executor.PreemptPod = s.victims.preempt
		built[defaultpreemption.Name] = p
		return p, nil
	}

	s.fw, err = frameworkruntime.NewFramework(ctx, registry, profile,
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(s.informer),
		// NodeVolumeLimits reads CSINodes through the shared CSI manager, as in upstream's
		// scheduler, over the same CSINode informer.
		frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(s.informer.Storage().V1().CSINodes().Lister())),
		frameworkruntime.WithEventRecorder(&events.FakeRecorder{}),
		frameworkruntime.WithSnapshotSharedLister(s.snapshot),
		frameworkruntime.WithMutableSnapshotLister(s.snapshot),
		frameworkruntime.WithPodNominator(internalqueue.NewSchedulingQueue(nil, s.informer)),
		frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
		frameworkruntime.WithPodsInPreBind(frameworkruntime.NewPodsInPreBindMap()),
		frameworkruntime.WithPodGroupManager(s.cache),
		frameworkruntime.WithParallelism(int(cfg.Parallelism)),
		frameworkruntime.WithLogger(klog.FromContext(ctx)),
	)
	if err != nil {
		return nil, fmt.Errorf("building upstream's framework: %w", err)
	}

	for _, p := range s.fw.ListPlugins().Score.Enabled {
		plugin, ok := built[p.Name].(fwk.ScorePlugin)
		if !ok {
			return nil, fmt.Errorf("score plugin %s was not built by the registry", p.Name)
		}
		s.scorers = append(s.scorers, scorer{p.Name, int64(p.Weight), plugin})
	}
	sort.Slice(s.scorers, func(i, j int) bool { return s.scorers[i].name < s.scorers[j].name })
	return s, nil
}

// victimLog records the pods DefaultPreemption would evict, in place of evicting them.
type victimLog struct {
	mu   sync.Mutex
	pods []string // namespace/name
}

// preempt is the preemption Executor's PreemptPod: it only records the victim. It may be
// called from several goroutines at once.
func (l *victimLog) preempt(_ context.Context, _ preemption.Candidate, _ preemption.ExecutorPreemptor, victim *v1.Pod, _ string) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pods = append(l.pods, victim.Namespace+"/"+victim.Name)
	return false, nil
}

// take returns the recorded victims, sorted, and forgets them.
func (l *victimLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.pods
	l.pods = nil
	sort.Strings(out)
	if out == nil {
		out = []string{}
	}
	return out
}
