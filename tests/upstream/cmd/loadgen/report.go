package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// benchRun is one scheduler's run as kube_bench.sh leaves it: DIR/pods.json (loadgen pods'
// line), DIR/events.json (loadgen events' line: the Scheduled events it wrote, optional) and
// DIR/metrics.json (loadgen metrics --since over the same span, with --pid scheduler=,
// apiserver= and etcd=).
type benchRun struct {
	name   string
	pods   podsResult
	events *eventsResult
	// eventsDone is when the last Scheduled event was written, from DIR/events_wait.json.
	eventsDone time.Time
	metrics    delta
}

func runReport(_ context.Context, args []string) error {
	fs := newFlagSet("report", "[--flow-schema global-default] NAME=DIR NAME=DIR...")
	flowSchema := fs.String("flow-schema", "global-default", "the API Priority and Fairness flow schema the schedulers' user falls in")
	top := fs.Int("top", 6, "request kinds listed per run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("want at least one NAME=DIR")
	}
	var runs []benchRun
	for _, arg := range fs.Args() {
		name, dir, ok := strings.Cut(arg, "=")
		if !ok || name == "" || dir == "" {
			return fmt.Errorf("want NAME=DIR, got %q", arg)
		}
		r := benchRun{name: name}
		if err := readJSON(filepath.Join(dir, "pods.json"), &r.pods); err != nil {
			return err
		}
		if err := readJSON(filepath.Join(dir, "metrics.json"), &r.metrics); err != nil {
			return err
		}
		if path := filepath.Join(dir, "events_wait.json"); fileExists(path) {
			var w eventsWaitResult
			if err := readJSON(path, &w); err != nil {
				return err
			}
			r.eventsDone, _ = time.Parse(time.RFC3339Nano, w.LastGrowth)
		}
		if path := filepath.Join(dir, "events.json"); fileExists(path) {
			r.events = &eventsResult{}
			if err := readJSON(path, r.events); err != nil {
				return err
			}
		}
		runs = append(runs, r)
	}
	printReport(os.Stdout, runs, *flowSchema, *top)
	return nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// apiserverCPU prefers /proc's figure (the whole span) and falls back to /metrics'.
func (r *benchRun) apiserverCPU() float64 {
	if v, ok := r.metrics.CPUSeconds["apiserver"]; ok {
		return v
	}
	return r.metrics.APIServerCPUSeconds
}

// printReport writes the comparison table, the ratios of the first run to the last, and each
// run's busiest request kinds with the API server's mean latency for them.
func printReport(out io.Writer, runs []benchRun, flowSchema string, top int) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "scheduler\tbound\tpods/s\tseconds\tevents done s\tbind pods/s\tcreate s\tp50 ms\tp99 ms\tAPI requests\tbindings\tevent writes\tScheduled events\tscheduler CPU-s\tapiserver CPU-s\t(cores)\tapiserver ms/pod\tetcd CPU-s\tloadgen CPU-s\tother CPU-s\t")
	for _, r := range runs {
		m := &r.metrics
		cores := 0.0
		if m.Seconds > 0 {
			cores = r.apiserverCPU() / m.Seconds
		}
		events := m.Requests["POST events.events.k8s.io"] + m.Requests["POST events"] +
			m.Requests["PATCH events.events.k8s.io"] + m.Requests["PATCH events"]
		// What neither the control plane, the scheduler nor loadgen used: other work on the
		// machine, which the figures share it with.
		other := m.CPUSeconds["machine"] - m.CPUSeconds["scheduler"] - r.apiserverCPU() -
			m.CPUSeconds["etcd"] - r.pods.LoadgenCPUSeconds
		create, p50, p99 := "-", "-", "-"
		if r.pods.Mode != "backlog" {
			create = fmt.Sprintf("%.2f", r.pods.CreateSeconds)
			p50 = fmt.Sprintf("%.0f", r.pods.LatencyMs["p50"])
			p99 = fmt.Sprintf("%.0f", r.pods.LatencyMs["p99"])
		}
		scheduled := "-"
		if r.events != nil {
			scheduled = fmt.Sprintf("%d", r.events.Events)
		}
		perPod := 0.0
		if r.pods.Pods > 0 {
			perPod = 1000 * r.apiserverCPU() / float64(r.pods.Pods)
		}
		eventsDone := "-"
		if start, err := time.Parse(time.RFC3339Nano, r.pods.Start); err == nil && !r.eventsDone.IsZero() {
			eventsDone = fmt.Sprintf("%.2f", r.eventsDone.Sub(start).Seconds())
		}
		fmt.Fprintf(w, "%s\t%d/%d\t%.0f\t%.2f\t%s\t%.0f\t%s\t%s\t%s\t%.0f\t%.0f\t%.0f\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n",
			r.name, r.pods.Bound, r.pods.Pods, r.pods.PodsPerSecond, r.pods.Seconds, eventsDone, r.pods.BindPodsPerSecond,
			create, p50, p99, m.RequestsByFlowSchema[flowSchema],
			m.Requests["POST pods/binding"], events, scheduled, m.CPUSeconds["scheduler"], r.apiserverCPU(), cores,
			perPod, m.CPUSeconds["etcd"], r.pods.LoadgenCPUSeconds, max(0, other))
	}
	w.Flush()

	// Ratios of the first run to each other one: schedhostd to the null scheduler (how close
	// it comes to the control plane's limit) and to kube-scheduler.
	for _, b := range runs[min(1, len(runs)):] {
		a := runs[0]
		ratio := func(x, y float64) string {
			if y == 0 {
				return "-"
			}
			return fmt.Sprintf("%.2fx", x/y)
		}
		fmt.Fprintf(out, "\n%s / %s: pods/s %s, seconds %s, bind pods/s %s, API requests %s, scheduler CPU %s, apiserver CPU %s\n",
			a.name, b.name, ratio(a.pods.PodsPerSecond, b.pods.PodsPerSecond), ratio(a.pods.Seconds, b.pods.Seconds),
			ratio(a.pods.BindPodsPerSecond, b.pods.BindPodsPerSecond),
			ratio(a.metrics.RequestsByFlowSchema[flowSchema], b.metrics.RequestsByFlowSchema[flowSchema]),
			ratio(a.metrics.CPUSeconds["scheduler"], b.metrics.CPUSeconds["scheduler"]), ratio(a.apiserverCPU(), b.apiserverCPU()))
	}

	for _, r := range runs {
		kinds := make([]string, 0, len(r.metrics.Requests))
		for k := range r.metrics.Requests {
			kinds = append(kinds, k)
		}
		sort.Slice(kinds, func(i, j int) bool {
			if r.metrics.Requests[kinds[i]] != r.metrics.Requests[kinds[j]] {
				return r.metrics.Requests[kinds[i]] > r.metrics.Requests[kinds[j]]
			}
			return kinds[i] < kinds[j]
		})
		parts := make([]string, 0, top)
		for _, k := range kinds[:min(top, len(kinds))] {
			part := fmt.Sprintf("%s %.0f", k, r.metrics.Requests[k])
			if ms, ok := r.metrics.LatencyMeanMs[k]; ok {
				part += fmt.Sprintf(" (%.1f ms)", ms)
			}
			parts = append(parts, part)
		}
		fmt.Fprintf(out, "\n%s, all clients' requests (API server mean latency): %s\n", r.name, strings.Join(parts, ", "))
		if len(r.metrics.Failures) > 0 {
			failures := make([]string, 0, len(r.metrics.Failures))
			for k, v := range r.metrics.Failures {
				failures = append(failures, fmt.Sprintf("%s: %.0f", k, v))
			}
			sort.Strings(failures)
			fmt.Fprintf(out, "%s, failed requests: %s\n", r.name, strings.Join(failures, ", "))
		}
		schemas := make([]string, 0, len(r.metrics.RequestsByFlowSchema))
		for k, v := range r.metrics.RequestsByFlowSchema {
			schemas = append(schemas, fmt.Sprintf("%s %.0f", k, v))
		}
		sort.Strings(schemas)
		fmt.Fprintf(out, "%s, requests by flow schema: %s\n", r.name, strings.Join(schemas, ", "))
		if len(r.metrics.TerminatedWatchers) > 0 {
			closed := make([]string, 0, len(r.metrics.TerminatedWatchers))
			for k, v := range r.metrics.TerminatedWatchers {
				closed = append(closed, fmt.Sprintf("%s %.0f", k, v))
			}
			sort.Strings(closed)
			fmt.Fprintf(out, "%s, watches the API server closed as too slow (apiserver_terminated_watchers_total): %s\n", r.name, strings.Join(closed, ", "))
		}
		if r.pods.Watches > 1 {
			fmt.Fprintf(out, "%s, loadgen's watch on pods was ended by the API server and resumed: %d watch requests\n", r.name, r.pods.Watches)
		}
	}
}
