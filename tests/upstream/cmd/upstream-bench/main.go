// Command upstream-bench runs one of schedhost-bench's workloads (tests/bench/workloads/*.toml)
// once through upstream kube-scheduler, in-process, and prints the same figures, so that the
// C++ bench can show both sides:
//
//	upstream-bench [--scale F] [--json] [--timeout S] [-q] WORKLOAD.toml
//
// The scheduler is k8s.io/kubernetes/pkg/scheduler at the release go.mod pins, built as
// kube-scheduler builds it with its default configuration, running on its own goroutines
// against client-go's fake clientset (apiServer adds what the scheduler needs of a real API
// server). There is no network, serialization or etcd in the path, as there is no API server in
// schedhost-bench's.
//
// Exit status: 0; 1 when the workload failed (bad file, a barrier timed out, a create was
// refused); 2 for bad arguments; 3 when measured pods were left unbound.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/klog/v2"
)

func usage(fs *flag.FlagSet) func() {
	return func() {
		fmt.Fprintf(fs.Output(), "usage: upstream-bench [--scale F] [--json] [--timeout S] [-q] WORKLOAD.toml\n\n")
		fs.PrintDefaults()
	}
}

func main() {
	os.Exit(run(os.Args[1:]))
}

// run is main without the exit, for the test.
func run(args []string) int {
	fs := flag.NewFlagSet("upstream-bench", flag.ContinueOnError)
	fs.Usage = usage(fs)
	scale := fs.Float64("scale", 1, "multiplies every createNodes/createPods count (rounded, at least 1)")
	asJSON := fs.Bool("json", false, "print one JSON object on stdout instead of a line of text")
	timeout := fs.Float64("timeout", 600, "seconds a barrier may wait before the run fails")
	quiet := fs.Bool("q", false, "no progress line on stderr (default: one a second)")
	fs.BoolVar(quiet, "quiet", false, "same as -q")
	// Flags may come after the workload too, as schedhost-bench takes them.
	var positional []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(positional) != 1 {
		fmt.Fprintln(os.Stderr, "upstream-bench: exactly one WORKLOAD.toml")
		fs.Usage()
		return 2
	}
	if !(*timeout > 0) {
		fmt.Fprintln(os.Stderr, "upstream-bench: --timeout must be > 0")
		return 2
	}
	quietKlog()

	w, err := loadWorkload(positional[0], *scale)
	if err != nil {
		fmt.Fprintf(os.Stderr, "upstream-bench: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	r, err := runWorkload(ctx, w, options{
		scale:    *scale,
		timeout:  time.Duration(*timeout * float64(time.Second)),
		progress: !*quiet,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "upstream-bench: %s: %v\n", w.name, err)
		return 1
	}
	if *asJSON {
		out, err := json.Marshal(r)
		if err != nil {
			fmt.Fprintf(os.Stderr, "upstream-bench: %v\n", err)
			return 1
		}
		fmt.Println(string(out))
	} else {
		fmt.Println(humanLine(r))
	}
	if r.MeasuredBound < r.MeasuredPods {
		fmt.Fprintf(os.Stderr, "upstream-bench: %s: %d of %d measured pods left unbound\n",
			w.name, r.MeasuredPods-r.MeasuredBound, r.MeasuredPods)
		if r.gatedByPreemption > 0 {
			fmt.Fprintf(os.Stderr, "upstream-bench: %s: %d of them parked gated by DefaultPreemption after their preemption ended (upstream's async preemption race; see tests/upstream/README.md)\n",
				w.name, r.gatedByPreemption)
		}
		return 3
	}
	return 0
}

// humanLine is the figures in one line of text.
func humanLine(r *result) string {
	line := fmt.Sprintf("%s (upstream %s, scale %g): %d nodes, %d/%d measured pods bound, %.0f pods/s over %.2f s, p50/p90/p99 %.1f/%.1f/%.1f ms, peak RSS %.0f MiB",
		r.Name, r.UpstreamVersion, r.Scale, r.Nodes, r.MeasuredBound, r.MeasuredPods, r.PodsPerSecond, r.Seconds,
		r.P50Ms, r.P90Ms, r.P99Ms, r.PeakRSSMiB)
	if r.NominatedOrBoundPerSecond > 0 {
		line += fmt.Sprintf(", %.0f nominated or bound/s", r.NominatedOrBoundPerSecond)
	}
	return line
}

// quietKlog sends only errors to stderr: the scheduler logs through klog (contextual logging
// falls back to it), and its info lines would drown the progress line and cost time.
func quietKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for name, value := range map[string]string{
		"logtostderr":                      "true",
		"legacy_stderr_threshold_behavior": "false",
		"stderrthreshold":                  "ERROR",
		"v":                                "0",
	} {
		if err := fs.Set(name, value); err != nil {
			panic(fmt.Sprintf("klog flag %s: %v", name, err))
		}
	}
}
