// Command difftest compares schedhost with upstream kube-scheduler on random clusters.
//
//	difftest --count N --seed S [--parallel P] [--schedctl PATH] [--plugin-dir DIR]
//	         [--cases DIR] [--keep N] [--storage] [-v]
//
// For each seed S..S+N-1 it generates a scenario (package scenario), writes it to a YAML file,
// has schedctl (`simulate --explain -o json --batch`, one process per scenario compared at once,
// each explaining scenario after scenario on a fresh host) and the oracle (upstream's framework
// in-process, package oracle) explain every pending pod of that same file, and compares the two
// explain documents field by field (docs/conformance.md). Every difference is printed as one
// line.
//
// A scenario with a difference is then shrunk to a minimal one whose first difference is still
// of the same kind (one scenario per kind, at most --keep): objects are dropped by delta
// debugging, then fields of the remaining ones one at a time. With --cases DIR the minimal
// case goes to DIR/<seed>-<slug>/: cluster.yaml, expected.json (upstream's document) and
// difference.txt, the layout tests/conformance/cases replays.
//
// Exit status: 0 without differences, 1 with some, 2 when a side failed (schedctl crashed or
// refused the input, the oracle refused it or panicked) or on a usage error.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"schedhost.test/upstream/scenario"
)

// defaultParams are the scenario sizes without --nodes, --bound and --pending.
var defaultParams = scenario.Params{MinNodes: 3, MaxNodes: 20, MinBound: 0, MaxBound: 40, MinPending: 1, MaxPending: 12}

type options struct {
	count, parallel, keep, budget int
	seed                          int64
	schedctl, pluginDir, cases    string
	cpuProfile                    string
	timeout                       time.Duration
	params                        scenario.Params
	verbose                       bool
}

func main() {
	opts, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "difftest: %v\n", err)
		os.Exit(2)
	}
	os.Exit(runMain(opts))
}

// runMain is main past the flags, apart so that its deferred calls (the end of the profile
// among them) run before os.Exit.
func runMain(opts *options) int {
	// Collect when the heap has grown to five times what is live, not twice: difftest allocates
	// much and keeps little (a scenario's objects and documents go once it is compared), and
	// the collector took a fifth of its time at the default. GOGC, when set, decides.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if opts.cpuProfile != "" {
		stopProfile, err := startCPUProfile(opts.cpuProfile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "difftest: %v\n", err)
			return 2
		}
		defer stopProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ours := newSchedctlBatch(opts.schedctl, opts.pluginDir, opts.timeout)
	defer ours.Close()
	return run(ctx, opts, ours.Explain, oracleSide, os.Stdout, os.Stderr)
}

// startCPUProfile profiles difftest's own process (the oracle, the comparison, the scenario
// generation; schedctl runs in processes of its own) into path until the returned stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

func parseFlags(args []string) (*options, error) {
	fs := flag.NewFlagSet("difftest", flag.ContinueOnError)
	o := &options{}
	fs.IntVar(&o.count, "count", 100, "number of scenarios")
	fs.Int64Var(&o.seed, "seed", 1, "first seed")
	fs.IntVar(&o.parallel, "parallel", runtime.NumCPU(), "scenarios compared at once")
	fs.StringVar(&o.schedctl, "schedctl", "", "schedctl binary (default: schedctl on PATH, else build/dev/bin/schedctl above the working directory)")
	fs.StringVar(&o.pluginDir, "plugin-dir", "", "passed to schedctl as --plugin-dir")
	fs.StringVar(&o.cases, "cases", "", "write each minimal case to DIR/<seed>-<slug>/")
	fs.IntVar(&o.keep, "keep", 10, "shrink at most N scenarios (one per kind of difference); 0: none")
	fs.IntVar(&o.budget, "shrink-budget", 400, "candidate scenarios one shrink may run")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "how long schedctl may take over one scenario")
	d := defaultParams
	nodes := fs.String("nodes", fmt.Sprintf("%d-%d", d.MinNodes, d.MaxNodes), "nodes per scenario, MIN-MAX")
	bound := fs.String("bound", fmt.Sprintf("%d-%d", d.MinBound, d.MaxBound), "bound pods per scenario, MIN-MAX (fewer when nodes are full)")
	pending := fs.String("pending", fmt.Sprintf("%d-%d", d.MinPending, d.MaxPending), "pending pods per scenario, MIN-MAX")
	fs.BoolVar(&o.params.AlwaysStorage, "storage", false, "give every scenario storage (default: about 40% of the seeds; a seed with storage generates the same scenario either way)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write difftest's CPU profile (go tool pprof) to FILE")
	fs.BoolVar(&o.verbose, "v", false, "print each scenario's result and the shrinker's steps")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: difftest --count N --seed S [--parallel P] [--schedctl PATH] [--plugin-dir DIR] [--cases DIR] [--keep N] [--storage] [-v]\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if o.params.MinNodes, o.params.MaxNodes, err = parseRange("nodes", *nodes, 1); err != nil {
		return nil, err
	}
	if o.params.MinBound, o.params.MaxBound, err = parseRange("bound", *bound, 0); err != nil {
		return nil, err
	}
	if o.params.MinPending, o.params.MaxPending, err = parseRange("pending", *pending, 1); err != nil {
		return nil, err
	}
	if o.count < 1 || o.parallel < 1 || o.keep < 0 || o.budget < 1 {
		return nil, errors.New("--count, --parallel and --shrink-budget must be positive, --keep not negative")
	}
	if o.schedctl == "" {
		if o.schedctl, err = findSchedctl(); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// reproduce is the difftest command line that generates the scenario of seed again.
func (o *options) reproduce(seed int64) string {
	s := fmt.Sprintf("--seed %d --count 1", seed)
	if o.params != defaultParams {
		p := o.params
		if p.MinNodes != defaultParams.MinNodes || p.MaxNodes != defaultParams.MaxNodes ||
			p.MinBound != defaultParams.MinBound || p.MaxBound != defaultParams.MaxBound ||
			p.MinPending != defaultParams.MinPending || p.MaxPending != defaultParams.MaxPending {
			s += fmt.Sprintf(" --nodes %d-%d --bound %d-%d --pending %d-%d", p.MinNodes, p.MaxNodes, p.MinBound, p.MaxBound, p.MinPending, p.MaxPending)
		}
		if p.AlwaysStorage {
			s += " --storage"
		}
	}
	return s
}

// parseRange reads MIN-MAX (or a single number) with MIN >= lowest.
func parseRange(name, s string, lowest int) (int, int, error) {
	lo, hi, found := strings.Cut(s, "-")
	if !found {
		hi = lo
	}
	a, err1 := strconv.Atoi(lo)
	b, err2 := strconv.Atoi(hi)
	if err1 != nil || err2 != nil || a < lowest || b < a {
		return 0, 0, fmt.Errorf("--%s %q: want MIN-MAX with %d <= MIN <= MAX", name, s, lowest)
	}
	return a, b, nil
}

func findSchedctl() (string, error) {
	if p, err := exec.LookPath("schedctl"); err == nil {
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "build", "dev", "bin", "schedctl")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no schedctl on PATH nor build/dev/bin/schedctl above the working directory; pass --schedctl")
		}
		dir = parent
	}
}

// result is one scenario's comparison. Only a scenario with a difference keeps its objects and
// documents (the shrinker starts from them): the others' would hold gigabytes by the end of a
// long run.
type result struct {
	seed    int64
	objs    []k8sruntime.Object
	objects int // len(objs) before it was let go
	storage bool
	pods    int
	cycles  int
	out     *Outcome
	err     error
}

// run compares the scenarios of o on the two sides and prints the report; it returns the exit
// status.
func run(ctx context.Context, o *options, ours, upstream Side, stdout, stderr io.Writer) int {
	dir, err := os.MkdirTemp("", "difftest-")
	if err != nil {
		fmt.Fprintf(stderr, "difftest: %v\n", err)
		return 2
	}
	defer os.RemoveAll(dir)
	pair := &Pair{Ours: ours, Upstream: upstream, Dir: dir}

	results := make([]result, o.count)
	var mu sync.Mutex // orders the -v lines
	parallelFor(ctx, o.count, o.parallel, func(i int) {
		seed := o.seed + int64(i)
		r := result{seed: seed, objs: scenario.Generate(seed, o.params)}
		r.objects, r.storage, r.pods = len(r.objs), HasStorage(r.objs), PendingPods(r.objs)
		r.out, r.err = pair.Run(ctx, fmt.Sprintf("seed-%d", seed), r.objs)
		if r.err == nil {
			r.cycles = ComparedCycles(r.out.Ours, r.out.Theirs)
		}
		if r.err != nil {
			r.objs = nil
		} else if len(r.out.Diffs) == 0 {
			r.objs, r.out = nil, &Outcome{}
		}
		results[i] = r
		if o.verbose {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case r.err != nil:
				fmt.Fprintf(stderr, "seed %d: %d objects, %d pending pods: failed\n", seed, r.objects, r.pods)
			default:
				fmt.Fprintf(stderr, "seed %d: %d objects, %d pending pods, %d cycles, %d differences\n", seed, r.objects, r.pods, r.cycles, len(r.out.Diffs))
			}
		}
	})
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "difftest: interrupted\n")
		return 2
	}

	var pods, cycles, diffs, diffScenarios, failures, storage int
	for _, r := range results {
		pods += r.pods
		if r.storage {
			storage++
		}
		cycles += r.cycles
		if r.err != nil {
			failures++
			fmt.Fprintf(stdout, "seed %d: FAILED: %v\n", r.seed, r.err)
			continue
		}
		if len(r.out.Diffs) > 0 {
			diffScenarios++
			diffs += len(r.out.Diffs)
		}
		for _, d := range r.out.Diffs {
			fmt.Fprintf(stdout, "seed %d: %s\n", r.seed, d)
		}
	}

	printKinds(results, stdout)
	shrinkAll(ctx, o, pair, results, stdout, stderr)
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "difftest: interrupted while shrinking\n")
		return 2
	}

	summary := fmt.Sprintf("difftest: %s scenarios (%s with storage), %s pods, %s cycles, %s differences",
		thousands(o.count), thousands(storage), thousands(pods), thousands(cycles), thousands(diffs))
	if diffs > 0 {
		summary += fmt.Sprintf(" in %s scenarios", thousands(diffScenarios))
	}
	if failures > 0 {
		summary += fmt.Sprintf(", %s tool failures", thousands(failures))
	}
	fmt.Fprintf(stdout, "%s (seed %d..%d)\n", summary, o.seed, o.seed+int64(o.count)-1)
	switch {
	case failures > 0:
		return 2
	case diffs > 0:
		return 1
	}
	return 0
}

// printKinds prints how often each kind of difference occurred, most frequent first, with
// the first scenario that has it.
func printKinds(results []result, w io.Writer) {
	type tally struct {
		kind             string
		diffs, scenarios int
		first            int64
		example          Difference
	}
	byKind := map[string]*tally{}
	var order []*tally
	for _, r := range results {
		if r.err != nil {
			continue
		}
		counted := map[string]bool{}
		for _, d := range r.out.Diffs {
			k := d.Kind()
			t := byKind[k]
			if t == nil {
				t = &tally{kind: k, first: r.seed, example: d}
				byKind[k] = t
				order = append(order, t)
			}
			t.diffs++
			if !counted[k] {
				counted[k] = true
				t.scenarios++
			}
		}
	}
	if len(order) == 0 {
		return
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].diffs > order[j].diffs })
	fmt.Fprintf(w, "differences by kind:\n")
	for _, t := range order {
		fmt.Fprintf(w, "  %s: %s in %s scenarios, e.g. seed %d: %s\n", t.kind, thousands(t.diffs), thousands(t.scenarios), t.first, t.example)
	}
}

// shrinkAll shrinks the first scenario of each kind of difference (the kind of its first
// difference: the first pod that differs is where the two sides part, what follows may be its
// consequence), at most --keep of them, and writes the cases.
func shrinkAll(ctx context.Context, o *options, pair *Pair, results []result, stdout, stderr io.Writer) {
	var chosen []*result
	seen := map[string]bool{}
	for i := range results {
		r := &results[i]
		if r.err != nil || len(r.out.Diffs) == 0 || len(chosen) >= o.keep {
			continue
		}
		if kind := r.out.Diffs[0].Kind(); !seen[kind] {
			seen[kind] = true
			chosen = append(chosen, r)
		}
	}
	type shrunk struct {
		objs  []k8sruntime.Object
		s     *Shrinker
		lines []string
	}
	done := make([]shrunk, len(chosen))
	parallelFor(ctx, len(chosen), o.parallel, func(i int) {
		r := chosen[i]
		s := &Shrinker{
			Kind:   r.out.Diffs[0].Kind(),
			Budget: o.budget,
			Last:   r.out,
			Run: func(objs []k8sruntime.Object) (*Outcome, error) {
				return pair.Run(ctx, fmt.Sprintf("shrink-%d", r.seed), objs)
			},
		}
		if o.verbose {
			s.Log = func(format string, args ...any) {
				fmt.Fprintf(stderr, "seed %d: shrink: %s\n", r.seed, fmt.Sprintf(format, args...))
			}
		}
		objs := s.Shrink(r.objs)
		var lines []string
		for _, d := range s.Last.Diffs {
			lines = append(lines, d.String())
		}
		done[i] = shrunk{objs, s, lines}
	})
	for i, r := range chosen {
		d := done[i]
		if d.s == nil {
			continue // interrupted
		}
		var names []string
		for _, obj := range d.objs {
			names = append(names, describe(obj))
		}
		fmt.Fprintf(stdout, "seed %d: minimal case for %s: %d of %d objects after %d runs: %s\n",
			r.seed, d.s.Kind, len(d.objs), r.objects, d.s.Tests, strings.Join(names, ", "))
		for _, l := range d.lines {
			fmt.Fprintf(stdout, "  %s\n", l)
		}
		if o.cases == "" {
			continue
		}
		path, err := writeCase(o.cases, r.seed, o.reproduce(r.seed), d.s.Kind, d.objs, d.s.Last, d.lines)
		if err != nil {
			fmt.Fprintf(stderr, "difftest: seed %d: writing the case: %v\n", r.seed, err)
			continue
		}
		fmt.Fprintf(stdout, "  written to %s\n", path)
	}
}

// writeCase writes a minimal case in tests/conformance/cases' layout.
func writeCase(root string, seed int64, reproduce, kind string, objs []k8sruntime.Object, out *Outcome, lines []string) (string, error) {
	dir := filepath.Join(root, fmt.Sprintf("%d-%s", seed, slug(kind)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	yaml, err := scenario.Marshal(objs)
	if err != nil {
		return "", err
	}
	header := fmt.Sprintf("# Shrunk from difftest %s: a difference in %s.\n", reproduce, kind)
	expected, err := json.MarshalIndent(out.Theirs, "", "  ")
	if err != nil {
		return "", err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{
		{"cluster.yaml", append([]byte(header), yaml...)},
		{"expected.json", append(expected, '\n')},
		{"difference.txt", []byte(strings.Join(lines, "\n") + "\n")},
	} {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// slug is a difference kind as a short directory name: nodes[].reasons@NodePorts ->
// nodes-reasons-nodeports.
func slug(kind string) string {
	s := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(kind), "-"), "-")
	if len(s) > 48 {
		s = strings.TrimRight(s[:48], "-")
	}
	return s
}

// parallelFor calls fn(0..n-1) on at most p goroutines; it stops handing out work once ctx is
// done.
func parallelFor(ctx context.Context, n, p int, fn func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(p, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
}

// thousands formats n with commas: 1,234.
func thousands(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
