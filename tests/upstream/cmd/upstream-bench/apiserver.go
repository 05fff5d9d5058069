package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/meta/testrestmapper"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	k8stesting "k8s.io/client-go/testing"
)

// apiServer stands in for kube-apiserver in this process: client-go's fake clientset, with the
// parts of the API server's behaviour the scheduler depends on that the fake lacks.
//
//   - Watches. The fake tracker's watchers hold 100 events and panic when a reader falls
//     behind, which creating objects as fast as the bench does would hit at once. apiServer
//     serves every watch itself from an unbounded queue (watcher) and gives every object a
//     resourceVersion from one counter, so that a reflector's List and Watch line up; a Watch
//     from a resourceVersion older than the last write to its resource is answered "too old",
//     and the reflector lists again, as with a real API server.
//   - What kube-apiserver fills in on create: uid, creationTimestamp, generation, namespace
//     (default), generateName; for a pod status.phase Pending and the Priority admission plugin's
//     spec.priority and spec.preemptionPolicy from its PriorityClass (the scheduler reads only
//     spec.priority, so a pod naming a class without this would never preempt).
//   - pods/binding. The fake answers a binding create without storing anything; here it sets
//     spec.nodeName and the PodScheduled condition, as kube-apiserver's binding storage does,
//     so the update reaches the informers and the scheduler's cache.
//   - Events are accepted and dropped: the scheduler writes them and never reads them, and
//     kube-apiserver keeps them in etcd, not in the scheduler's process (whose RSS is measured).
//
// Status patches (nominatedNodeName, the PodScheduled condition) and deletes (preemption's
// victims) go through the fake's own object reaction, which applies strategic merge patches
// against the typed object; apiServer adds the resourceVersion and the watch event.
//
// Every request holds the fake clientset's lock while it runs its reactors (testing.Fake's
// Invokes), so writes are serialized and their watch events are queued in write order.
type apiServer struct {
	client *fake.Clientset
	// store is the fake's own object tracker: storage, copies and patch semantics.
	store  k8stesting.ObjectTracker
	mapper meta.RESTMapper

	mu              sync.Mutex
	resourceVersion int64
	lastWrite       map[schema.GroupVersionResource]int64
	watchers        map[schema.GroupVersionResource][]*watcher
	priorityClasses map[string]*schedulingv1.PriorityClass
}

var (
	podsResource            = corev1.SchemeGroupVersion.WithResource("pods")
	priorityClassesResource = schedulingv1.SchemeGroupVersion.WithResource("priorityclasses")
)

// newAPIServer builds the clientset. Until ctx ends it clears the actions the fake records
// (testing.Fake keeps a deep copy of every request for tests to inspect) every 100 ms, so
// they neither grow without bound nor count in the peak RSS.
func newAPIServer(ctx context.Context) *apiServer {
	client := fake.NewSimpleClientset()
	s := &apiServer{
		client:          client,
		store:           client.Tracker(),
		mapper:          testrestmapper.TestOnlyStaticRESTMapper(scheme.Scheme),
		resourceVersion: 1,
		lastWrite:       map[schema.GroupVersionResource]int64{},
		watchers:        map[schema.GroupVersionResource][]*watcher{},
		priorityClasses: map[string]*schedulingv1.PriorityClass{},
	}
	client.ReactionChain = nil
	client.WatchReactionChain = nil
	client.AddReactor("create", "pods", s.bind)
	client.AddReactor("*", "events", dropEvent)
	client.AddReactor("*", "*", k8stesting.ObjectReaction(s))
	client.AddWatchReactor("*", func(action k8stesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if w, ok := action.(k8stesting.WatchActionImpl); ok {
			opts = w.ListOptions
		}
		w, err := s.Watch(action.GetResource(), action.GetNamespace(), opts)
		return true, w, err
	})
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				client.ClearActions()
			}
		}
	}()
	return s
}

// create sends a create request for obj through the clientset, as a typed client's Create
// does, so it runs the same reactors; namespaced objects without a namespace go to "default".
func (s *apiServer) create(obj runtime.Object) error {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Empty() {
		kinds, _, err := scheme.Scheme.ObjectKinds(obj)
		if err != nil {
			return err
		}
		gvk = kinds[0]
	}
	mapping, err := s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	ns := ""
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		m, err := meta.Accessor(obj)
		if err != nil {
			return err
		}
		ns = m.GetNamespace()
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
	}
	_, err = s.client.Invokes(k8stesting.NewCreateAction(mapping.Resource, ns, obj), nil)
	return err
}

// nextResourceVersion is the resourceVersion of the next write; s.mu is held.
func (s *apiServer) nextResourceVersion() string {
	s.resourceVersion++
	return strconv.FormatInt(s.resourceVersion, 10)
}

// notify queues an event for every watcher of gvr in the object's namespace; s.mu is held. The
// first watcher gets obj itself, which the caller no longer uses, the others copies.
func (s *apiServer) notify(gvr schema.GroupVersionResource, t watch.EventType, obj runtime.Object, ns string) {
	s.lastWrite[gvr] = s.resourceVersion
	first := true
	for _, w := range s.watchers[gvr] {
		if w.namespace != metav1.NamespaceAll && w.namespace != ns {
			continue
		}
		o := obj
		if !first {
			o = obj.DeepCopyObject()
		}
		first = false
		w.send(watch.Event{Type: t, Object: o})
	}
}

// Add implements ObjectTracker; only tests preload objects, and this server is never preloaded.
func (s *apiServer) Add(obj runtime.Object) error {
	return fmt.Errorf("upstream-bench's API server is not preloaded")
}

// Get implements ObjectTracker: a copy of the stored object.
func (s *apiServer) Get(gvr schema.GroupVersionResource, ns, name string, opts ...metav1.GetOptions) (runtime.Object, error) {
	return s.store.Get(gvr, ns, name, opts...)
}

// Create implements ObjectTracker: what kube-apiserver fills in, then the store and the event.
func (s *apiServer) Create(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.CreateOptions) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.GetName() == "" && m.GetGenerateName() != "" {
		m.SetName(m.GetGenerateName() + utilrand.String(5))
	}
	if m.GetNamespace() == "" {
		m.SetNamespace(ns)
	}
	m.SetUID(uuid.NewUUID())
	m.SetCreationTimestamp(metav1.Now())
	m.SetGeneration(1)
	switch o := obj.(type) {
	case *corev1.Pod:
		if err := s.admitPod(o); err != nil {
			return err
		}
		// kube-apiserver ignores the status a pod is created with.
		o.Status = corev1.PodStatus{Phase: corev1.PodPending}
	}
	m.SetResourceVersion(s.nextResourceVersion())
	if err := s.store.Create(gvr, obj, ns, opts...); err != nil {
		return err
	}
	if pc, ok := obj.(*schedulingv1.PriorityClass); ok {
		s.priorityClasses[pc.Name] = pc.DeepCopy()
	}
	s.notify(gvr, watch.Added, obj, m.GetNamespace())
	return nil
}

// admitPod does what kube-apiserver's Priority admission plugin does: spec.priority and
// spec.preemptionPolicy from the pod's PriorityClass, or from the global default class, or 0.
// A pod that sets spec.priority without a class keeps it (scheduler_perf's templates do that,
// with the plugin off). s.mu is held.
func (s *apiServer) admitPod(pod *corev1.Pod) error {
	var class *schedulingv1.PriorityClass
	if name := pod.Spec.PriorityClassName; name != "" {
		class = s.priorityClasses[name]
		if class == nil {
			return apierrors.NewForbidden(podsResource.GroupResource(), pod.Name,
				fmt.Errorf("no PriorityClass with name %s was found", name))
		}
	} else if pod.Spec.Priority != nil {
		return nil
	} else {
		for _, pc := range s.priorityClasses {
			if pc.GlobalDefault && (class == nil || pc.Value > class.Value) {
				class = pc
			}
		}
	}
	if class == nil {
		pod.Spec.Priority = new(int32)
		return nil
	}
	if pod.Spec.Priority != nil && *pod.Spec.Priority != class.Value {
		return apierrors.NewForbidden(podsResource.GroupResource(), pod.Name,
			fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name",
				*pod.Spec.Priority, class.Value))
	}
	value := class.Value
	pod.Spec.Priority = &value
	pod.Spec.PriorityClassName = class.Name
	if class.PreemptionPolicy != nil {
		policy := *class.PreemptionPolicy
		pod.Spec.PreemptionPolicy = &policy
	}
	return nil
}

// Update implements ObjectTracker. obj is the request's own copy (or bind's), not kept by the
// caller, so the watch event carries it.
func (s *apiServer) Update(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.UpdateOptions) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m.SetResourceVersion(s.nextResourceVersion())
	if err := s.store.Update(gvr, obj, ns, opts...); err != nil {
		return err
	}
	s.notify(gvr, watch.Modified, obj, m.GetNamespace())
	return nil
}

// Patch implements ObjectTracker: obj is the patched object, which the fake's reaction also
// returns to the client, so the watch event gets a copy.
func (s *apiServer) Patch(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m.SetResourceVersion(s.nextResourceVersion())
	if err := s.store.Patch(gvr, obj, ns, opts...); err != nil {
		return err
	}
	s.notify(gvr, watch.Modified, obj.DeepCopyObject(), m.GetNamespace())
	return nil
}

// Apply implements ObjectTracker; the scheduler does not use server-side apply.
func (s *apiServer) Apply(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	return apierrors.NewMethodNotSupported(gvr.GroupResource(), "apply")
}

// List implements ObjectTracker: the store's list, at the current resourceVersion.
func (s *apiServer) List(gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, ns string, opts ...metav1.ListOptions) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list, err := s.store.List(gvr, gvk, ns, opts...)
	if err != nil {
		return nil, err
	}
	if lm, err := meta.ListAccessor(list); err == nil {
		lm.SetResourceVersion(strconv.FormatInt(s.resourceVersion, 10))
	}
	return list, nil
}

// Delete implements ObjectTracker: the stored object goes, its last state in the event, as
// kube-apiserver deletes a pod with no grace period (the templates' victims have
// terminationGracePeriodSeconds 0, and no kubelet runs) or an unbound pod.
func (s *apiServer) Delete(gvr schema.GroupVersionResource, ns, name string, opts ...metav1.DeleteOptions) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, err := s.store.Get(gvr, ns, name)
	if err != nil {
		return err
	}
	m, err := meta.Accessor(old)
	if err != nil {
		return err
	}
	if len(opts) > 0 && opts[0].Preconditions != nil {
		if p := opts[0].Preconditions; (p.UID != nil && *p.UID != m.GetUID()) ||
			(p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion()) {
			return apierrors.NewConflict(gvr.GroupResource(), name, fmt.Errorf("precondition failed"))
		}
	}
	if err := s.store.Delete(gvr, ns, name, opts...); err != nil {
		return err
	}
	if gvr == priorityClassesResource {
		delete(s.priorityClasses, name)
	}
	m.SetResourceVersion(s.nextResourceVersion())
	s.notify(gvr, watch.Deleted, old, ns)
	return nil
}

// Watch implements ObjectTracker. A watch from resourceVersion "" or "0" starts with every
// stored object as an ADDED event, as kube-apiserver does; from an older resourceVersion than
// the last write to the resource it fails "too old", which makes a reflector list again.
func (s *apiServer) Watch(gvr schema.GroupVersionResource, ns string, opts ...metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var existing []runtime.Object
	rv := ""
	if len(opts) > 0 {
		rv = opts[0].ResourceVersion
	}
	if rv == "" || rv == "0" {
		gvk, err := s.mapper.KindFor(gvr)
		if err != nil {
			return nil, err
		}
		list, err := s.store.List(gvr, gvk, ns)
		if err != nil {
			return nil, err
		}
		if existing, err = meta.ExtractList(list); err != nil {
			return nil, err
		}
	} else {
		from, err := strconv.ParseInt(rv, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q", rv))
		}
		if from < s.lastWrite[gvr] {
			return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, s.lastWrite[gvr]))
		}
	}
	w := newWatcher(ns, func(w *watcher) { s.removeWatcher(gvr, w) })
	for _, obj := range existing {
		w.send(watch.Event{Type: watch.Added, Object: obj})
	}
	s.watchers[gvr] = append(s.watchers[gvr], w)
	return w, nil
}

// removeWatcher forgets a stopped watcher.
func (s *apiServer) removeWatcher(gvr schema.GroupVersionResource, w *watcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.watchers[gvr]
	for i, x := range list {
		if x == w {
			s.watchers[gvr] = append(list[:i:i], list[i+1:]...)
			return
		}
	}
}

// bind handles create on pods/binding (other pod creates go on down the chain): spec.nodeName
// and condition PodScheduled=True, as kube-apiserver's BindingREST does, refusing a pod that is
// already bound, being deleted or not the UID the binding names.
func (s *apiServer) bind(action k8stesting.Action) (bool, runtime.Object, error) {
	create, ok := action.(k8stesting.CreateActionImpl)
	if !ok || create.GetSubresource() != "binding" {
		return false, nil, nil
	}
	binding, ok := create.GetObject().(*corev1.Binding)
	if !ok {
		return true, nil, apierrors.NewBadRequest(fmt.Sprintf("a binding must be a v1.Binding, not %T", create.GetObject()))
	}
	ns := create.GetNamespace()
	obj, err := s.store.Get(podsResource, ns, binding.Name)
	if err != nil {
		return true, nil, err
	}
	pod := obj.(*corev1.Pod)
	switch {
	case binding.UID != "" && binding.UID != pod.UID:
		return true, nil, apierrors.NewConflict(podsResource.GroupResource(), pod.Name,
			fmt.Errorf("the UID in the binding (%s) does not match the pod's (%s)", binding.UID, pod.UID))
	case pod.DeletionTimestamp != nil:
		return true, nil, apierrors.NewConflict(podsResource.GroupResource(), pod.Name,
			fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", pod.Name))
	case pod.Spec.NodeName != "":
		return true, nil, apierrors.NewConflict(podsResource.GroupResource(), pod.Name,
			fmt.Errorf("pod %v is already assigned to node %q", pod.Name, pod.Spec.NodeName))
	}
	pod.Spec.NodeName = binding.Target.Name
	for k, v := range binding.Annotations {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[k] = v
	}
	setPodScheduled(&pod.Status)
	if err := s.Update(podsResource, pod, ns); err != nil {
		return true, nil, err
	}
	return true, binding, nil
}

// setPodScheduled sets condition PodScheduled to True.
func setPodScheduled(status *corev1.PodStatus) {
	now := metav1.Now()
	for i := range status.Conditions {
		c := &status.Conditions[i]
		if c.Type != corev1.PodScheduled {
			continue
		}
		if c.Status != corev1.ConditionTrue {
			c.Status = corev1.ConditionTrue
			c.LastTransitionTime = now
		}
		c.Reason, c.Message = "", ""
		return
	}
	status.Conditions = append(status.Conditions, corev1.PodCondition{
		Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now,
	})
}

// dropEvent answers event writes without storing them (see apiServer).
func dropEvent(action k8stesting.Action) (bool, runtime.Object, error) {
	switch a := action.(type) {
	case k8stesting.CreateActionImpl:
		return true, a.GetObject(), nil
	case k8stesting.UpdateActionImpl:
		return true, a.GetObject(), nil
	case k8stesting.PatchActionImpl:
		meta := metav1.ObjectMeta{Name: a.GetName(), Namespace: a.GetNamespace()}
		if a.GetResource().Group == eventsv1.GroupName {
			return true, &eventsv1.Event{ObjectMeta: meta}, nil
		}
		return true, &corev1.Event{ObjectMeta: meta}, nil
	}
	return false, nil, nil
}
