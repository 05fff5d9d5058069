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

// podsResult is the JSON line `loadgen pods` prints.
type podsResult struct {
	Pods          int     `json:"pods"`
	Bound         int     `json:"bound"`
	SchedulerName string  `json:"scheduler_name"`
	FirstCreate   string  `json:"first_create"`
	LastCreate    string  `json:"last_create"`
	LastBound     string  `json:"last_bound,omitempty"`
	Seconds       float64 `json:"seconds"`
	PodsPerSecond float64 `json:"pods_per_second"`
	// CreateSeconds is from the first creation request to the last creation's answer: the
	// rate pods reached the scheduler at.
	CreateSeconds float64 `json:"create_seconds"`
	// LatencyMs is per pod, from its creation request to its binding seen in the watch.
	LatencyMs map[string]float64 `json:"latency_ms,omitempty"`
	// LoadgenCPUSeconds is this process's own CPU time (user + system) over the run: it
	// shares the machine with the API server and the scheduler.
	LoadgenCPUSeconds float64 `json:"loadgen_cpu_seconds"`
	Error             string  `json:"error,omitempty"`
}

// podRun is one `loadgen pods` run: the pods it creates and when each was sent and bound.
type podRun struct {
	names   map[string]int // pod name → index
	mu      sync.Mutex
	sent    []time.Time
	bound   []time.Time
	nBound  int
	last    time.Time
	allDone chan struct{}
}

func runPods(ctx context.Context, args []string) error {
	fs := newFlagSet("pods", "--kubeconfig K --count N --scheduler-name NAME [--namespace bench] [--cpu 100m --memory 128Mi] [--parallel 32]")
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

	run := &podRun{
		names:   make(map[string]int, *count),
		sent:    make([]time.Time, *count),
		bound:   make([]time.Time, *count),
		allDone: make(chan struct{}),
	}
	width := len(fmt.Sprint(*count - 1))
	pods := make([]*corev1.Pod, *count)
	for i := range pods {
		name := fmt.Sprintf("%s%0*d", *prefix, width, i)
		run.names[name] = i
		pods[i] = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: *namespace, Labels: map[string]string{"app": "loadgen"}},
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

	// The watch starts at the empty namespace's list, before the first pod exists, so no
	// binding can be missed.
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	watchErr := make(chan error, 1)
	watcher, err := watchtools.NewRetryWatcherWithContext(watchCtx, existing.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().Pods(*namespace).Watch(ctx, options)
		},
	})
	if err != nil {
		return fmt.Errorf("watching pods in %s: %w", *namespace, err)
	}
	defer watcher.Stop()
	go func() { watchErr <- run.follow(watcher) }()

	cpuBefore := selfCPUSeconds()
	firstCreate := time.Now()
	var lastCreate time.Time
	var createMu sync.Mutex
	createErr := forEach(ctx, *count, *parallel, func(ctx context.Context, i int) error {
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
		Pods:          *count,
		SchedulerName: *schedulerName,
		FirstCreate:   firstCreate.UTC().Format(time.RFC3339Nano),
		LastCreate:    lastCreate.UTC().Format(time.RFC3339Nano),
		CreateSeconds: lastCreate.Sub(firstCreate).Seconds(),
	}
	if createErr == nil {
		log.Printf("loadgen pods: %d pods created in %.2fs; waiting for %s to bind them", *count, result.CreateSeconds, *schedulerName)
		deadline := time.NewTimer(time.Until(firstCreate.Add(*timeout)))
		defer deadline.Stop()
		select {
		case <-run.allDone:
		case err := <-watchErr:
			createErr = fmt.Errorf("watch on pods ended: %w", err)
		case <-deadline.C:
			createErr = fmt.Errorf("timed out after %v", *timeout)
		case <-ctx.Done():
			createErr = ctx.Err()
		}
	}
	stopWatch()
	result.LoadgenCPUSeconds = selfCPUSeconds() - cpuBefore

	run.mu.Lock()
	result.Bound = run.nBound
	if run.nBound > 0 {
		result.LastBound = run.last.UTC().Format(time.RFC3339Nano)
		result.Seconds = run.last.Sub(firstCreate).Seconds()
	}
	if run.nBound == *count && result.Seconds > 0 {
		result.PodsPerSecond = float64(*count) / result.Seconds
	}
	result.LatencyMs = run.latencies()
	run.mu.Unlock()
	if createErr != nil {
		result.Error = createErr.Error()
	}
	if err := json.NewEncoder(os.Stdout).Encode(result); err != nil {
		return err
	}
	if createErr != nil {
		return fmt.Errorf("%d of %d pods bound: %w", result.Bound, *count, createErr)
	}
	return nil
}

// follow records the first time each pod of the run is seen with a node, until the watcher
// stops; it closes allDone once every pod is bound.
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
		i, ok := r.names[pod.Name]
		if !ok {
			continue
		}
		r.mu.Lock()
		if r.bound[i].IsZero() {
			r.bound[i] = now
			r.last = now
			r.nBound++
			if r.nBound == len(r.bound) {
				close(r.allDone)
			}
		}
		r.mu.Unlock()
	}
	return errors.New("watcher stopped")
}

// latencies summarises sent → bound over the bound pods (p50, p90, p99, max), in ms; the
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
