package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// podsResult is the JSON line `loadgen pods` and `loadgen wait` print.
type podsResult struct {
	// Mode is "create" (loadgen pods: the pods were created while the scheduler ran) or
	// "backlog" (loadgen wait: they were all there before it started).
	Mode          string `json:"mode"`
	Pods          int    `json:"pods"`
	Bound         int    `json:"bound"`
	SchedulerName string `json:"scheduler_name,omitempty"`
	// Start is where Seconds counts from: the first creation request ("create"), or the moment
	// the watch on the pending pods began, just before the scheduler is started ("backlog").
	Start       string `json:"start"`
	FirstCreate string `json:"first_create,omitempty"`
	LastCreate  string `json:"last_create,omitempty"`
	// CreateSeconds is from the first creation request to the last creation's answer: the
	// rate pods reached the scheduler at.
	CreateSeconds float64 `json:"create_seconds,omitempty"`
	FirstBound    string  `json:"first_bound,omitempty"`
	LastBound     string  `json:"last_bound,omitempty"`
	// Seconds is from Start to the last binding; PodsPerSecond is Pods over it (0 unless every
	// pod was bound).
	Seconds       float64 `json:"seconds"`
	PodsPerSecond float64 `json:"pods_per_second"`
	// BindSeconds is from the first binding to the last; BindPodsPerSecond is Pods over it.
	BindSeconds       float64 `json:"bind_seconds"`
	BindPodsPerSecond float64 `json:"bind_pods_per_second"`
	// LatencyMs is per pod, from its creation request to its binding seen in the watch
	// ("create" only).
	LatencyMs map[string]float64 `json:"latency_ms,omitempty"`
	// LoadgenCPUSeconds is this process's own CPU time (user + system) over the run: it
	// shares the machine with the API server and the scheduler.
	LoadgenCPUSeconds float64 `json:"loadgen_cpu_seconds"`
	// Watches is how many watch requests loadgen made: more than one means the API server
	// ended a watch early and loadgen resumed it.
	Watches int    `json:"watches"`
	Error   string `json:"error,omitempty"`
}

// podRun follows a set of pods by name and records when each was sent (created) and bound.
type podRun struct {
	names   map[string]int // pod name → index
	mu      sync.Mutex
	sent    []time.Time
	bound   []time.Time
	nBound  int
	first   time.Time
	last    time.Time
	allDone chan struct{}
	watches atomic.Int32
}

func newPodRun(names []string) *podRun {
	r := &podRun{
		names:   make(map[string]int, len(names)),
		sent:    make([]time.Time, len(names)),
		bound:   make([]time.Time, len(names)),
		allDone: make(chan struct{}),
	}
	for i, n := range names {
		r.names[n] = i
	}
	return r
}

// markBound records pod i bound at t unless it was already; the caller holds mu.
func (r *podRun) markBound(i int, t time.Time) {
	if !r.bound[i].IsZero() {
		return
	}
	r.bound[i] = t
	if r.nBound == 0 {
		r.first = t
	}
	r.last = t
	r.nBound++
	if r.nBound == len(r.bound) {
		close(r.allDone)
	}
}

// watch follows the namespace's pods from resourceVersion rv (so nothing after a list at rv
// is missed) until ctx ends; the returned channel gets the reason a watch failed for good.
func (r *podRun) watch(ctx context.Context, client kubernetes.Interface, namespace, rv string) (<-chan error, error) {
	w, err := watchtools.NewRetryWatcherWithContext(ctx, rv, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			r.watches.Add(1)
			return client.CoreV1().Pods(namespace).Watch(ctx, options)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("watching pods in %s: %w", namespace, err)
	}
	errs := make(chan error, 1)
	go func() {
		defer w.Stop()
		errs <- r.follow(w)
	}()
	return errs, nil
}

// follow records the first time each pod of the run is seen with a node, until the watcher
// stops.
func (r *podRun) follow(w watch.Interface) error {
	for event := range w.ResultChan() {
		switch event.Type {
		case watch.Error:
			return apierrors.FromObject(event.Object)
		case watch.Added, watch.Modified:
		default:
			continue
		}
		pod, ok := event.Object.(*corev1.Pod)
		if !ok || pod.Spec.NodeName == "" {
			continue
		}
		now := time.Now()
		if i, ok := r.names[pod.Name]; ok {
			r.mu.Lock()
			r.markBound(i, now)
			r.mu.Unlock()
		}
	}
	return errors.New("watcher stopped")
}

// wait returns once every pod is bound, the watch failed, deadline passed or ctx ended.
func (r *podRun) wait(ctx context.Context, deadline time.Time, watchErr <-chan error) error {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-r.allDone:
		return nil
	case err := <-watchErr:
		return fmt.Errorf("watch on pods ended: %w", err)
	case <-timer.C:
		return errors.New("timed out")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fill sets the binding figures of result, counting Seconds from start.
func (r *podRun) fill(result *podsResult, start time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	result.Pods = len(r.bound)
	result.Bound = r.nBound
	result.Start = start.UTC().Format(time.RFC3339Nano)
	result.Watches = int(r.watches.Load())
	if r.nBound == 0 {
		return
	}
	result.FirstBound = r.first.UTC().Format(time.RFC3339Nano)
	result.LastBound = r.last.UTC().Format(time.RFC3339Nano)
	result.Seconds = r.last.Sub(start).Seconds()
	result.BindSeconds = r.last.Sub(r.first).Seconds()
	if r.nBound == len(r.bound) {
		if result.Seconds > 0 {
			result.PodsPerSecond = float64(r.nBound) / result.Seconds
		}
		if result.BindSeconds > 0 {
			result.BindPodsPerSecond = float64(r.nBound) / result.BindSeconds
		}
	}
	result.LatencyMs = r.latencies()
}

// latencies summarises sent → bound over the pods with both (p50, p90, p99, max), in ms; the
// caller holds mu.
func (r *podRun) latencies() map[string]float64 {
	var ms []float64
	for i, b := range r.bound {
		if !b.IsZero() && !r.sent[i].IsZero() {
			ms = append(ms, float64(b.Sub(r.sent[i]).Microseconds())/1000)
		}
	}
	if len(ms) == 0 {
		return nil
	}
	sort.Float64s(ms)
	at := func(q float64) float64 { return ms[min(len(ms)-1, int(q*float64(len(ms))))] }
	return map[string]float64{"p50": at(0.50), "p90": at(0.90), "p99": at(0.99), "max": ms[len(ms)-1]}
}

func runPods(ctx context.Context, args []string) error {
	fs := newFlagSet("pods", "--kubeconfig K --count N --scheduler-name NAME [--namespace bench] [--cpu 100m --memory 128Mi] [--parallel 32] [--no-wait]")
	var cf clientFlags
	cf.register(fs)
	count := fs.Int("count", 0, "number of pods to create (required)")
	schedulerName := fs.String("scheduler-name", "", "spec.schedulerName of the pods (required)")
	namespace := fs.String("namespace", "bench", "namespace of the pods, created when missing; it must hold no pods yet")
	prefix := fs.String("prefix", "pod-", "pod names are PREFIX followed by a zero-padded index")
	cpu := fs.String("cpu", "100m", "each pod's cpu request")
	memory := fs.String("memory", "128Mi", "each pod's memory request")
	parallel := fs.Int("parallel", 32, "creation requests in flight")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up when not every pod is bound this long after the first creation")
	noWait := fs.Bool("no-wait", false, "only create the pods (for `loadgen wait` to time a scheduler started afterwards)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *count <= 0 || *schedulerName == "" {
		return errors.New("--count (positive) and --scheduler-name are required")
	}
	requests := corev1.ResourceList{}
	for name, value := range map[corev1.ResourceName]string{corev1.ResourceCPU: *cpu, corev1.ResourceMemory: *memory} {
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return fmt.Errorf("--%s %q: %w", name, value, err)
		}
		requests[name] = q
	}
	client, err := cf.clientset()
	if err != nil {
		return err
	}
	if err := ensureNamespace(ctx, client, *namespace); err != nil {
		return err
	}
	existing, err := client.CoreV1().Pods(*namespace).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return fmt.Errorf("listing pods in %s: %w", *namespace, err)
	}
	if len(existing.Items) != 0 {
		return fmt.Errorf("namespace %s already holds pods: use a fresh namespace", *namespace)
	}

	width := len(fmt.Sprint(*count - 1))
	names := make([]string, *count)
	pods := make([]*corev1.Pod, *count)
	for i := range pods {
		names[i] = fmt.Sprintf("%s%0*d", *prefix, width, i)
		pods[i] = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: names[i], Namespace: *namespace, Labels: map[string]string{"app": "loadgen"}},
			Spec: corev1.PodSpec{
				SchedulerName: *schedulerName,
				Containers: []corev1.Container{{
					Name:      "pause",
					Image:     "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Requests: requests.DeepCopy()},
				}},
			},
		}
	}
	run := newPodRun(names)

	// The watch starts at the empty namespace's list, before the first pod exists, so no
	// binding can be missed.
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	var watchErr <-chan error
	if !*noWait {
		if watchErr, err = run.watch(watchCtx, client, *namespace, existing.ResourceVersion); err != nil {
			return err
		}
	}

	cpuBefore := selfCPUSeconds()
	firstCreate := time.Now()
	var lastCreate time.Time
	var createMu sync.Mutex
	runErr := forEach(ctx, *count, *parallel, func(ctx context.Context, i int) error {
		run.mu.Lock()
		run.sent[i] = time.Now()
		run.mu.Unlock()
		if err := createOne(ctx, func(ctx context.Context) error {
			_, err := client.CoreV1().Pods(*namespace).Create(ctx, pods[i], metav1.CreateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("pod %s/%s: %w", *namespace, pods[i].Name, err)
		}
		now := time.Now()
		createMu.Lock()
		if now.After(lastCreate) {
			lastCreate = now
		}
		createMu.Unlock()
		return nil
	})

	result := podsResult{
		Mode:          "create",
		SchedulerName: *schedulerName,
		FirstCreate:   firstCreate.UTC().Format(time.RFC3339Nano),
		LastCreate:    lastCreate.UTC().Format(time.RFC3339Nano),
		CreateSeconds: lastCreate.Sub(firstCreate).Seconds(),
	}
	if runErr == nil && !*noWait {
		log.Printf("loadgen pods: %d pods created in %.2fs; waiting for %s to bind them", *count, result.CreateSeconds, *schedulerName)
		if err := run.wait(ctx, firstCreate.Add(*timeout), watchErr); err != nil {
			runErr = fmt.Errorf("%w after %v", err, time.Since(firstCreate).Round(time.Millisecond))
		}
	}
	stopWatch()
	run.fill(&result, firstCreate)
	result.LoadgenCPUSeconds = selfCPUSeconds() - cpuBefore
	if runErr != nil {
		result.Error = runErr.Error()
	}
	if err := json.NewEncoder(os.Stdout).Encode(result); err != nil {
		return err
	}
	if runErr != nil {
		return fmt.Errorf("%d of %d pods bound: %w", result.Bound, *count, runErr)
	}
	return nil
}

func runWait(ctx context.Context, args []string) error {
	fs := newFlagSet("wait", "--kubeconfig K [--namespace bench] [--timeout 10m]")
	var cf clientFlags
	cf.register(fs)
	namespace := fs.String("namespace", "bench", "namespace whose pods to wait for")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up when not every pod is bound this long after the start")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	client, err := cf.clientset()
	if err != nil {
		return err
	}
	list, err := client.CoreV1().Pods(*namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing pods in %s: %w", *namespace, err)
	}
	if len(list.Items) == 0 {
		return fmt.Errorf("no pods in namespace %s", *namespace)
	}
	names := make([]string, len(list.Items))
	for i, p := range list.Items {
		names[i] = p.Name
	}
	run := newPodRun(names)
	start := time.Now()
	for i, p := range list.Items {
		if p.Spec.NodeName != "" {
			run.markBound(i, start)
		}
	}
	alreadyBound := run.nBound
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	watchErr, err := run.watch(watchCtx, client, *namespace, list.ResourceVersion)
	if err != nil {
		return err
	}
	cpuBefore := selfCPUSeconds()
	// kube_bench.sh starts the scheduler when it reads this line.
	log.Printf("loadgen wait: watching %d pods in %s (%d bound)", len(names), *namespace, alreadyBound)

	runErr := run.wait(ctx, start.Add(*timeout), watchErr)
	stopWatch()
	result := podsResult{Mode: "backlog"}
	run.fill(&result, start)
	result.LatencyMs = nil
	result.LoadgenCPUSeconds = selfCPUSeconds() - cpuBefore
	if runErr != nil {
		result.Error = runErr.Error()
	}
	if err := json.NewEncoder(os.Stdout).Encode(result); err != nil {
		return err
	}
	if runErr != nil {
		return fmt.Errorf("%d of %d pods bound: %w", result.Bound, result.Pods, runErr)
	}
	return nil
}

// ensureNamespace creates the namespace unless it exists.
func ensureNamespace(ctx context.Context, client kubernetes.Interface, name string) error {
	_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	return nil
}

// selfCPUSeconds is this process's user + system CPU time so far.
func selfCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
