// Command loadgen loads a Kubernetes API server the way a cluster would and measures how fast a
// scheduler binds what it creates. It is the client side of tests/bench/kube_bench.sh and of
// demos that load example manifests into a real control plane.
//
//	loadgen nodes   --kubeconfig K --count N [--cpu 32 --memory 128Gi --pods 110 --zones 3]
//	loadgen apply   --kubeconfig K -f FILE [--scheduler-name NAME]
//	loadgen pods    --kubeconfig K --count N --scheduler-name NAME [--namespace bench] [--no-wait]
//	loadgen wait    --kubeconfig K [--namespace bench]
//	loadgen null    --kubeconfig K [--scheduler-name default-scheduler] [--parallel 64]
//	loadgen events  --kubeconfig K [--namespace bench] [--reason Scheduled] [--expect N]
//	loadgen metrics --kubeconfig K [--pid NAME=PID]... [-o FILE] [--since FILE]
//	loadgen report  NAME=DIR NAME=DIR
//
// Nodes are registered as a kubelet registers them (the object, then its status, then without
// the not-ready taint the API server's admission put on it). Every client it makes has its
// rate limit lifted and speaks protobuf, so the API server, not loadgen, sets the pace.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// subcommand is one of loadgen's verbs.
type subcommand struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string) error
}

var subcommands = []subcommand{
	{"nodes", "create N ready nodes over zones, as kubelets register them", runNodes},
	{"apply", "create every object of a multi-document YAML file (nodes the kubelet way)", runApply},
	{"pods", "create N pods for a scheduler, wait until all are bound, print one JSON line", runPods},
	{"wait", "wait until every pod of a namespace is bound (a scheduler started afterwards), print one JSON line", runWait},
	{"null", "the null scheduler: bind each pending pod to the nodes in turn and write its Scheduled event", runNull},
	{"events", "count the events of a reason (a series by its count), waiting for the last ones, print one JSON line", runEvents},
	{"metrics", "snapshot the API server's request counts and the CPU time of processes", runMetrics},
	{"report", "print the table comparing benchmark runs (directories with pods.json, metrics.json)", runReport},
}

func usage() {
	fmt.Fprintf(os.Stderr, "usage: loadgen COMMAND [flags]\n\ncommands:\n")
	for _, c := range subcommands {
		fmt.Fprintf(os.Stderr, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(os.Stderr, "\n`loadgen COMMAND -h` lists a command's flags.\n")
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	for _, c := range subcommands {
		if c.name != os.Args[1] {
			continue
		}
		if err := c.run(ctx, os.Args[2:]); err != nil {
			fmt.Fprintf(os.Stderr, "loadgen %s: %v\n", c.name, err)
			os.Exit(1)
		}
		return
	}
	fmt.Fprintf(os.Stderr, "loadgen: unknown command %q\n\n", os.Args[1])
	usage()
	os.Exit(2)
}

// newFlagSet is a subcommand's flag set; parse errors exit 2 as the flag package does.
func newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("loadgen "+name, flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: loadgen %s %s\n\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and refuses positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return nil
}
