package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/profile"
)

// upstreamVersion is the k8s.io/kubernetes release go.mod pins, reported with the figures.
const upstreamVersion = "v1.37.2"

// options are the command line's run settings.
type options struct {
	scale float64
	// timeout is how long one barrier may wait.
	timeout time.Duration
	// progress prints a line on stderr once a second.
	progress bool
}

// result is one run's figures, with the JSON names schedhost-bench reads (tests/bench/README.md
// defines each figure; they are computed the same way here).
type result struct {
	Name                      string  `json:"name"`
	Scale                     float64 `json:"scale"`
	Nodes                     int     `json:"nodes"`
	MeasuredPods              int     `json:"measured_pods"`
	MeasuredBound             int     `json:"measured_bound"`
	PodsPerSecond             float64 `json:"pods_per_second"`
	NominatedOrBoundPerSecond float64 `json:"nominated_or_bound_per_second"`
	Seconds                   float64 `json:"seconds"`
	P50Ms                     float64 `json:"p50_ms"`
	P90Ms                     float64 `json:"p90_ms"`
	P99Ms                     float64 `json:"p99_ms"`
	PeakRSSMiB                float64 `json:"peak_rss_mib"`
	// FirstBindingMs is from the process's start (its start time in /proc/self/stat, at the
	// kernel's 10 ms tick) to the first binding of any pod: what a fresh process pays before it
	// schedules, loading and setup included.
	FirstBindingMs  float64 `json:"first_binding_ms"`
	UpstreamVersion string  `json:"upstream_version"`
	// gatedByPreemption counts measured pods left unbound that the queue holds gated by
	// DefaultPreemption's PreEnqueue (see runWorkload), for the message on stderr.
	gatedByPreemption int
}

// errBarrierTimeout marks a barrier that waited longer than --timeout.
var errBarrierTimeout = errors.New("barrier timed out")

// runWorkload runs w once through upstream's scheduler with its default configuration
// (kube-scheduler's own: the default profile with every default plugin, parallelism 16,
// adaptive percentageOfNodesToScore, default backoff, feature gates at their defaults) against
// an in-process fake API server, and measures it.
func runWorkload(ctx context.Context, w *workload, opt options) (*result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	api := newAPIServer(ctx)
	client := api.client
	// The pods' namespace exists, as in any cluster (plugins may look namespaces up).
	if err := api.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: metav1.NamespaceDefault}}); err != nil {
		return nil, err
	}

	// As kube-scheduler's Setup (cmd/kube-scheduler/app/server.go) builds it, less what needs a
	// real API server (leader election, serving, the kubeconfig no in-tree plugin reads).
	cfg, err := latest.Default()
	if err != nil {
		return nil, err
	}
	informerFactory := scheduler.NewInformerFactory(client, 0, nil)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	broadcaster.StartRecordingToSink(ctx.Done())
	defer broadcaster.Shutdown()
	sched, err := scheduler.New(ctx, client, informerFactory, nil, profile.NewRecorderFactory(broadcaster),
		scheduler.WithComponentConfigVersion(cfg.TypeMeta.APIVersion),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithExtenders(cfg.Extenders...),
		scheduler.WithParallelism(cfg.Parallelism),
	)
	if err != nil {
		return nil, fmt.Errorf("creating the scheduler: %w", err)
	}
	queue, ok := sched.SchedulingQueue.(*internalqueue.PriorityQueue)
	if !ok {
		return nil, fmt.Errorf("the scheduler's queue is a %T, not the PriorityQueue the barrier reads", sched.SchedulingQueue)
	}

	// The bench follows pods through the scheduler's own pod informer (what it sees is what the
	// scheduler's cache sees), with a handler of its own, which runs on its own goroutine.
	tracker := newPodTracker()
	if _, err := informerFactory.Core().V1().Pods().Informer().AddEventHandler(tracker.handler()); err != nil {
		return nil, err
	}
	informerFactory.Start(ctx.Done())
	informerFactory.WaitForCacheSync(ctx.Done())
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		return nil, fmt.Errorf("waiting for the scheduler's handlers: %w", err)
	}
	schedDone := make(chan struct{})
	go func() {
		defer close(schedDone)
		sched.Run(ctx)
	}()
	defer func() {
		cancel()
		<-schedDone
	}()

	progress := newProgress(opt.progress, w.name, len(w.ops), tracker)
	defer progress.stop()

	r := &result{Name: w.name, Scale: opt.scale, UpstreamVersion: upstreamVersion}
	for i := range w.ops {
		o := &w.ops[i]
		if o.kind == opBarrier {
			progress.set(i, "barrier")
			if err := barrier(ctx, queue, tracker, opt.timeout, i); err != nil {
				return nil, err
			}
			continue
		}
		// Every object of the operation is rendered and decoded before the first is created, so
		// that YAML decoding stays out of the measured time; the objects go when it ends.
		objects := make([]runtime.Object, o.count)
		for k := range objects {
			if objects[k], err = decodeOne(o, k); err != nil {
				return nil, fmt.Errorf("ops[%d]: %w", i, err)
			}
		}
		first := -1
		if o.measured {
			names := make([]string, len(objects))
			for k, obj := range objects {
				if pod, ok := obj.(*corev1.Pod); ok {
					names[k] = pod.Name
				}
			}
			first = tracker.expect(names)
		}
		switch o.kind {
		case opCreateNodes:
			progress.set(i, "creating nodes")
		case opCreatePods:
			progress.set(i, "creating pods")
		default:
			progress.set(i, "creating objects")
		}
		for k, obj := range objects {
			switch obj.(type) {
			case *corev1.Pod:
				if o.measured {
					tracker.created(first + k)
					r.MeasuredPods++
				} else {
					tracker.createdUnmeasured()
				}
			case *corev1.Node:
				r.Nodes++
			}
			if err := api.create(obj); err != nil {
				return nil, fmt.Errorf("ops[%d]: %s was refused: %w", i, describe(obj), err)
			}
		}
	}
	tracker.fill(r)
	// A measured pod left unbound may be one that upstream's async preemption left parked,
	// gated by DefaultPreemption's PreEnqueue after a retry that "preempted" victims already
	// deleted, so that no deletion event re-runs the check (in a cluster the 5-minute flush of
	// unschedulablePods would). The in-process API answers in microseconds, which makes that race
	// common (tests/upstream/README.md); say so.
	for _, name := range tracker.unbound() {
		if qi, ok := queue.GetPod(name, metav1.NamespaceDefault, nil); ok && qi.GatingPlugin == "DefaultPreemption" {
			r.gatedByPreemption++
		}
	}
	if start, err := processStart(); err == nil && tracker.firstBound > 0 {
		r.FirstBindingMs = float64(tracker.firstBound-start) / float64(time.Millisecond)
	}
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err == nil {
		r.PeakRSSMiB = float64(usage.Maxrss) / 1024 // ru_maxrss is in KiB on Linux
	}
	return r, nil
}

// describe names an object for messages: "Node node-3", "Pod pod-3" (as decoded: the namespace
// is the API server's to fill in).
func describe(obj runtime.Object) string {
	kind := fmt.Sprintf("%T", obj)
	if kinds, _, err := scheme.Scheme.ObjectKinds(obj); err == nil && len(kinds) > 0 {
		kind = kinds[0].Kind
	}
	if m, ok := obj.(metav1.Object); ok {
		if m.GetNamespace() != "" {
			return kind + " " + m.GetNamespace() + "/" + m.GetName()
		}
		return kind + " " + m.GetName()
	}
	return kind
}

// queueState is what the barrier reads of the scheduling queue.
type queueState struct {
	active, backoff, inFlight, unschedulable int
	cycle                                    int64
}

func readQueue(q *internalqueue.PriorityQueue) queueState {
	return queueState{
		active:        len(q.PodsInActiveQ()),
		backoff:       len(q.PodsInBackoffQ()),
		inFlight:      len(q.InFlightPods()),
		unschedulable: len(q.UnschedulablePods()), // gated pods are kept there too
		cycle:         q.SchedulingCycle(),
	}
}

// Barrier timing. The pod counts are the bench's own and cheap, read every barrierPoll; the
// queue is read every queuePoll, because listing it takes its locks and allocates.
const (
	barrierPoll = 2 * time.Millisecond
	queuePoll   = 50 * time.Millisecond
	// quietPeriod is how long the queue must stay quiet, with no pod bound, deleted or popped,
	// before a barrier gives up on the pods left: see barrier.
	quietPeriod = 500 * time.Millisecond
)

// barrier waits until every pod created so far is bound (or was deleted while pending), or
// nothing more can progress, and fails after timeout.
//
// "Nothing more can progress" is the rule schedhost-bench applies (nothing in activeQ, backoffQ
// or in flight, and the pods not yet bound all parked as unschedulable), read from upstream's
// PriorityQueue, and held for quietPeriod with no binding, deletion or scheduling cycle in
// between. The bench sees pods through its own informer handler, which may run ahead of the
// scheduler's: the preemption's victims can be gone for the bench while the preemptor still sits
// in unschedulablePods, waiting for the scheduler's handler to requeue it, and with async
// preemption (on by default) the preemptor stays parked while its victims are being deleted.
// A pod between its scheduling cycle and its binding is in none of the queues (the scheduler
// marks it done before binding), so it keeps the counts short of "all parked" meanwhile.
func barrier(ctx context.Context, queue *internalqueue.PriorityQueue, tracker *podTracker, timeout time.Duration, op int) error {
	start := time.Now()
	deadline := start.Add(timeout)
	var nextProbe, quietSince time.Time
	last := queueState{cycle: -1}
	lastResolved := -1
	for {
		created, resolved := tracker.counts()
		if resolved >= created {
			return nil
		}
		now := time.Now()
		if !now.Before(nextProbe) {
			nextProbe = now.Add(queuePoll)
			q := readQueue(queue)
			quiet := q.active == 0 && q.backoff == 0 && q.inFlight == 0 && resolved+q.unschedulable >= created
			if quiet && resolved == lastResolved && q.cycle == last.cycle {
				if now.Sub(quietSince) >= quietPeriod {
					return nil
				}
			} else {
				quietSince = now
			}
			last, lastResolved = q, resolved
			if now.After(deadline) {
				return fmt.Errorf("%w: barrier (ops[%d]) timed out after %s: %d of %d pods bound; queue: %d active, %d backing off, %d in flight, %d unschedulable",
					errBarrierTimeout, op, timeout, resolved, created, q.active, q.backoff, q.inFlight, q.unschedulable)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(barrierPoll):
		}
	}
}

// podTracker follows the pods the workload creates, as tests/bench/runner.cc's Tracker does:
// each measured pod's creation time (taken right before its create request) and the times the
// informer saw it bound and first nominated; unmeasured pods are only counted.
type podTracker struct {
	mu             sync.Mutex
	slots          map[string]int
	pods           []podTimes
	createdCount   int // measured and unmeasured
	bound          int
	firstBound     time.Duration // CLOCK_BOOTTIME at the first binding
	deletedPending int
}

type podTimes struct {
	created, bound, nominated time.Time
}

func newPodTracker() *podTracker {
	return &podTracker{slots: map[string]int{}}
}

// expect makes room for measured pods about to be created, by name, and returns the index of
// the first; it runs before the operation's first create, so the map grows outside the timing.
func (t *podTracker) expect(names []string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	first := len(t.pods)
	t.pods = slices.Grow(t.pods, len(names))
	for i, name := range names {
		t.slots[name] = first + i
		t.pods = append(t.pods, podTimes{})
	}
	return first
}

// created stamps measured pod slot as created now.
func (t *podTracker) created(slot int) {
	now := time.Now()
	t.mu.Lock()
	t.pods[slot].created = now
	t.createdCount++
	t.mu.Unlock()
}

// createdUnmeasured counts an unmeasured pod about to be created.
func (t *podTracker) createdUnmeasured() {
	t.mu.Lock()
	t.createdCount++
	t.mu.Unlock()
}

// counts returns the pods created so far and those bound or deleted while pending.
func (t *podTracker) counts() (created, resolved int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.createdCount, t.bound + t.deletedPending
}

// boundCount is how many pods have been bound.
func (t *podTracker) boundCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.bound
}

// unbound lists the measured pods created and not bound.
func (t *podTracker) unbound() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var names []string
	for name, i := range t.slots {
		if !t.pods[i].created.IsZero() && t.pods[i].bound.IsZero() {
			names = append(names, name)
		}
	}
	return names
}

func (t *podTracker) onBound(name string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bound == 0 {
		t.firstBound = bootTime()
	}
	t.bound++
	if i, ok := t.slots[name]; ok && t.pods[i].bound.IsZero() {
		t.pods[i].bound = now
	}
}

func (t *podTracker) onNominated(name string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := t.slots[name]; ok && t.pods[i].nominated.IsZero() {
		t.pods[i].nominated = now
	}
}

func (t *podTracker) onDeletedPending() {
	t.mu.Lock()
	t.deletedPending++
	t.mu.Unlock()
}

// handler watches the pod informer: a pod whose spec.nodeName goes from empty to set is bound
// (one created bound counts too), one still unbound with status.nominatedNodeName set was
// nominated by preemption, and a pod deleted unbound no longer waits to be scheduled.
func (t *podTracker) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pod, ok := obj.(*corev1.Pod); ok && pod.Spec.NodeName != "" {
				t.onBound(pod.Name, time.Now())
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*corev1.Pod)
			pod, ok2 := newObj.(*corev1.Pod)
			if !ok1 || !ok2 {
				return
			}
			switch {
			case old.Spec.NodeName == "" && pod.Spec.NodeName != "":
				t.onBound(pod.Name, time.Now())
			case pod.Spec.NodeName == "" && pod.Status.NominatedNodeName != "":
				t.onNominated(pod.Name, time.Now())
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok && pod.Spec.NodeName == "" {
				t.onDeletedPending()
			}
		},
	}
}

// fill sets r's measured figures the way runner.cc's Tracker::Fill does: pods/s over first
// measured creation to last measured binding; latency percentiles by the nearest rank below
// (index q·(n−1)); nominated-or-bound only when some measured pod was nominated before it was
// bound.
func (t *podTracker) fill(r *result) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var first, last time.Time
	var latencies []time.Duration
	for _, p := range t.pods {
		if p.created.IsZero() {
			continue
		}
		if first.IsZero() || p.created.Before(first) {
			first = p.created
		}
		if p.bound.IsZero() {
			continue
		}
		if p.bound.After(last) {
			last = p.bound
		}
		latencies = append(latencies, p.bound.Sub(p.created))
	}
	r.MeasuredBound = len(latencies)
	if len(latencies) == 0 {
		return
	}
	r.Seconds = last.Sub(first).Seconds()
	if r.Seconds > 0 {
		r.PodsPerSecond = float64(len(latencies)) / r.Seconds
	}
	slices.Sort(latencies)
	pct := func(q float64) float64 {
		return float64(latencies[int(q*float64(len(latencies)-1))]) / float64(time.Millisecond)
	}
	r.P50Ms, r.P90Ms, r.P99Ms = pct(0.50), pct(0.90), pct(0.99)

	nominated, settled := 0, 0
	var lastSettled time.Time
	for _, p := range t.pods {
		if !p.nominated.IsZero() && (p.bound.IsZero() || p.nominated.Before(p.bound)) {
			nominated++
		}
		at := p.bound
		if !p.nominated.IsZero() && (at.IsZero() || p.nominated.Before(at)) {
			at = p.nominated
		}
		if at.IsZero() {
			continue
		}
		settled++
		if at.After(lastSettled) {
			lastSettled = at
		}
	}
	if nominated > 0 && lastSettled.After(first) {
		r.NominatedOrBoundPerSecond = float64(settled) / lastSettled.Sub(first).Seconds()
	}
}

// progress prints one line a second on stderr (rewritten in place on a terminal): the
// operation, the pods bound and the rate since the last line.
type progress struct {
	mu   sync.Mutex
	op   int
	what string
	done chan struct{}
	wg   sync.WaitGroup
}

func newProgress(enabled bool, name string, ops int, tracker *podTracker) *progress {
	p := &progress{done: make(chan struct{})}
	if !enabled {
		return p
	}
	tty := false
	if fi, err := os.Stderr.Stat(); err == nil {
		tty = fi.Mode()&os.ModeCharDevice != 0
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		lastAt, lastBound, printed := time.Now(), 0, false
		for {
			select {
			case <-p.done:
				if printed && tty {
					fmt.Fprintln(os.Stderr)
				}
				return
			case now := <-tick.C:
				bound := tracker.boundCount()
				rate := float64(bound-lastBound) / now.Sub(lastAt).Seconds()
				p.mu.Lock()
				op, what := p.op, p.what
				p.mu.Unlock()
				if tty {
					fmt.Fprintf(os.Stderr, "\r%s: op %d/%d %s, %d pods bound, %.0f pods/s\033[K", name, op+1, ops, what, bound, rate)
				} else {
					fmt.Fprintf(os.Stderr, "%s: op %d/%d %s, %d pods bound, %.0f pods/s\n", name, op+1, ops, what, bound, rate)
				}
				lastAt, lastBound, printed = now, bound, true
			}
		}
	}()
	return p
}

// set records the operation under way.
func (p *progress) set(op int, what string) {
	p.mu.Lock()
	p.op, p.what = op, what
	p.mu.Unlock()
}

func (p *progress) stop() {
	close(p.done)
	p.wg.Wait()
}

// bootTime is CLOCK_BOOTTIME now: the clock /proc/self/stat's start time counts on.
func bootTime() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// processStart is when this process started, on CLOCK_BOOTTIME: /proc/self/stat's field 22
// in clock ticks (USER_HZ, 100 on Linux).
func processStart() (time.Duration, error) {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; the fields after it are plain.
	rest := string(data[bytes.LastIndexByte(data, ')')+2:])
	fields := strings.Fields(rest)
	if len(fields) < 20 {
		return 0, fmt.Errorf("/proc/self/stat: %d fields", len(fields))
	}
	ticks, err := strconv.ParseInt(fields[19], 10, 64)
	if err != nil {
		return 0, err
	}
	return time.Duration(ticks) * (time.Second / 100), nil
}
