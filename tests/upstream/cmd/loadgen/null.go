package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"sort"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// runNull is the null scheduler: the least any scheduler must send the API server per pod. It
// binds every pending pod of its scheduler name to the nodes in turn (--parallel bindings in
// flight) and writes the pod's Scheduled event (events.k8s.io/v1, as kube-scheduler writes it;
// --events-parallel writes in flight, the rest queued), with no filtering, scoring or cache:
// what the control plane can take on this machine is then the only limit.
func runNull(ctx context.Context, args []string) error {
	fs := newFlagSet("null", "--kubeconfig K [--scheduler-name default-scheduler] [--parallel 64]")
	var cf clientFlags
	cf.register(fs)
	schedulerName := fs.String("scheduler-name", "default-scheduler", "bind the pending pods with this spec.schedulerName")
	parallel := fs.Int("parallel", 64, "bindings in flight")
	eventsParallel := fs.Int("events-parallel", 32, "event writes in flight (the events wait in a queue of their own)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	client, err := cf.clientset()
	if err != nil {
		return err
	}
	nodeList, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	nodes := make([]string, 0, len(nodeList.Items))
	for _, n := range nodeList.Items {
		nodes = append(nodes, n.Name)
	}
	if len(nodes) == 0 {
		return fmt.Errorf("no nodes to bind to")
	}
	sort.Strings(nodes)
	hostname, _ := os.Hostname()
	s := &nullScheduler{client: client, nodes: nodes, instance: "null-scheduler-" + hostname,
		pending: make(chan *corev1.Pod, 1<<20), scheduled: make(chan scheduledEvent, 1<<20)}

	// Pending pods of this scheduler: those listed now, then those the watch adds. The queue
	// never fills, so the watch is always read: a watch left unread stalls every request on the
	// client's HTTP/2 connection, the bindings included.
	selector := fields.AndSelectors(fields.OneTermEqualSelector("spec.nodeName", ""),
		fields.OneTermEqualSelector("spec.schedulerName", *schedulerName)).String()
	list, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: selector})
	if err != nil {
		return fmt.Errorf("listing pending pods: %w", err)
	}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			options.FieldSelector = selector
			return client.CoreV1().Pods("").Watch(ctx, options)
		},
	})
	if err != nil {
		return fmt.Errorf("watching pending pods: %w", err)
	}
	defer w.Stop()
	for range *parallel {
		go s.work(ctx)
	}
	for range *eventsParallel {
		go s.recordEvents(ctx)
	}
	log.Printf("loadgen null: binding the pods of %s to %d nodes (%d pending)", *schedulerName, len(nodes), len(list.Items))
	for i := range list.Items {
		s.pending <- &list.Items[i]
	}
	for {
		select {
		case <-ctx.Done():
			log.Printf("loadgen null: %d bound, %d events, %d failed", s.bound.Load(), s.events.Load(), s.failed.Load())
			return nil
		case event, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("the watch on pending pods ended")
			}
			if event.Type == watch.Error {
				return fmt.Errorf("watching pending pods: %w", apierrors.FromObject(event.Object))
			}
			if pod, ok := event.Object.(*corev1.Pod); ok && event.Type == watch.Added {
				s.pending <- pod
			}
		}
	}
}

type nullScheduler struct {
	client    kubernetes.Interface
	nodes     []string
	instance  string
	next      atomic.Uint64
	pending   chan *corev1.Pod
	scheduled chan scheduledEvent
	bound     atomic.Int64
	events    atomic.Int64
	failed    atomic.Int64
}

// scheduledEvent is a Scheduled event waiting to be written.
type scheduledEvent struct {
	pod  *corev1.Pod
	node string
}

func (s *nullScheduler) work(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case pod := <-s.pending:
			node := s.nodes[s.next.Add(1)%uint64(len(s.nodes))]
			if err := s.bind(ctx, pod, node); err != nil {
				s.failed.Add(1)
				if ctx.Err() == nil {
					log.Printf("loadgen null: %v", err)
				}
			}
		}
	}
}

func (s *nullScheduler) bind(ctx context.Context, pod *corev1.Pod, node string) error {
	binding := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}
	err := withRetry(ctx, func(ctx context.Context) error {
		return s.client.CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{})
	})
	if apierrors.IsConflict(err) {
		return nil // bound already
	}
	if err != nil {
		return fmt.Errorf("binding %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	s.bound.Add(1)
	// The event waits in a queue of its own: the next binding does not wait for it, and the
	// event writes in flight are bounded so that they never crowd the bindings out of the API
	// server's queue for this user (API Priority and Fairness).
	s.scheduled <- scheduledEvent{pod, node}
	return nil
}

func (s *nullScheduler) recordEvents(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-s.scheduled:
			s.recordScheduled(ctx, e.pod, e.node)
		}
	}
}

func (s *nullScheduler) recordScheduled(ctx context.Context, pod *corev1.Pod, node string) {
	now := time.Now()
	event := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", pod.Name, now.UnixNano()), Namespace: pod.Namespace},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: "null-scheduler",
		ReportingInstance:   s.instance,
		Action:              "Binding",
		Reason:              "Scheduled",
		Regarding:           corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Note:                fmt.Sprintf("Successfully assigned %s/%s to %s", pod.Namespace, pod.Name, node),
		Type:                corev1.EventTypeNormal,
	}
	err := withRetry(ctx, func(ctx context.Context) error {
		_, err := s.client.EventsV1().Events(pod.Namespace).Create(ctx, event, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		s.failed.Add(1)
		if ctx.Err() == nil {
			log.Printf("loadgen null: event for %s/%s: %v", pod.Namespace, pod.Name, err)
		}
		return
	}
	s.events.Add(1)
}

// eventsResult is the JSON line `loadgen events` prints.
type eventsResult struct {
	Reason string `json:"reason"`
	// Events counts the events with the reason, a series by its count; Objects the Event
	// objects they are in.
	Events  int `json:"events"`
	Objects int `json:"objects"`
	// Pods is how many distinct pods they are about.
	Pods int `json:"pods"`
}

// runEvents counts the events of a reason in a namespace. With --wait it counts nothing but
// waits until the namespace holds --expect Event objects or their number has not grown for
// --settle (schedulers write events after the binding, so the last ones arrive after the last
// pod is bound), asking only for the count (a list of one item and the number remaining), so
// that the waiting costs the API server next to nothing in a measured span.
func runEvents(ctx context.Context, args []string) error {
	fs := newFlagSet("events", "--kubeconfig K [--namespace bench] [--reason Scheduled] [--wait --expect N --settle 5s]")
	var cf clientFlags
	cf.register(fs)
	namespace := fs.String("namespace", "bench", "namespace of the events")
	reason := fs.String("reason", "Scheduled", "count the events with this reason")
	wait := fs.Bool("wait", false, "wait for the events instead of counting them")
	expect := fs.Int("expect", 0, "with --wait: stop once the namespace holds this many Event objects")
	settle := fs.Duration("settle", 5*time.Second, "with --wait: stop once their number has not grown for this long")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	client, err := cf.clientset()
	if err != nil {
		return err
	}
	var result any
	if *wait {
		n, last, err := waitForEvents(ctx, client, *namespace, *expect, *settle)
		if err != nil {
			return err
		}
		result = eventsWaitResult{Objects: n, LastGrowth: last.UTC().Format(time.RFC3339Nano)}
	} else {
		counted, err := countEvents(ctx, client, *namespace, *reason)
		if err != nil {
			return err
		}
		result = counted
	}
	data, err := json.Marshal(result)
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(append(data, '\n'))
	return err
}

// eventsWaitResult is the JSON line `loadgen events --wait` prints: the Event objects counted
// last, and when their number last grew (the last event written, to the 250 ms poll).
type eventsWaitResult struct {
	Objects    int64  `json:"objects"`
	LastGrowth string `json:"last_growth"`
}

func waitForEvents(ctx context.Context, client kubernetes.Interface, namespace string, expect int, settle time.Duration) (int64, time.Time, error) {
	last, lastGrowth := int64(-1), time.Now()
	for {
		list, err := client.EventsV1().Events(namespace).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return 0, time.Time{}, fmt.Errorf("listing events in %s: %w", namespace, err)
		}
		n := int64(len(list.Items))
		if list.RemainingItemCount != nil {
			n += *list.RemainingItemCount
		}
		if n > last {
			last, lastGrowth = n, time.Now()
		}
		if (expect > 0 && n >= int64(expect)) || time.Since(lastGrowth) >= settle {
			return last, lastGrowth, nil
		}
		select {
		case <-ctx.Done():
			return 0, time.Time{}, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
func countEvents(ctx context.Context, client kubernetes.Interface, namespace, reason string) (eventsResult, error) {
	r := eventsResult{Reason: reason}
	pods := map[string]bool{}
	options := metav1.ListOptions{Limit: 5000}
	for {
		list, err := client.EventsV1().Events(namespace).List(ctx, options)
		if err != nil {
			return r, fmt.Errorf("listing events in %s: %w", namespace, err)
		}
		for i := range list.Items {
			e := &list.Items[i]
			if e.Reason != reason {
				continue
			}
			r.Objects++
			if e.Series != nil {
				r.Events += int(e.Series.Count)
			} else {
				r.Events++
			}
			pods[string(e.Regarding.UID)] = true
		}
		if list.Continue == "" {
			break
		}
		options.Continue = list.Continue
	}
	r.Pods = len(pods)
	return r, nil
}
