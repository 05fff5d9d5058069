package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"schedhost.test/upstream/oracle"
	"schedhost.test/upstream/scenario"
)

func testOptions(t *testing.T) *options {
	return &options{count: 25, seed: 1, parallel: 4, keep: 3, budget: 500, cases: t.TempDir(), timeout: time.Minute}
}

// TestRunReportsDifferencesAndWritesCases: a side with a planted bug makes difftest exit 1,
// print each difference with its seed and the summary, and write one minimal case for the
// one kind of difference, whose expected.json is upstream's document of that case.
func TestRunReportsDifferencesAndWritesCases(t *testing.T) {
	o := testOptions(t)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), o, toySide(tolerationBug), toySide(nil), &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	if !regexp.MustCompile(`(?m)^seed \d+: \S+/\S+ nodes\[node-\d+\]\.feasible \(Broken\): schedhost Broken Unschedulable \["broken"\] vs upstream feasible$`).MatchString(out) {
		t.Errorf("no difference line for the planted bug:\n%s", out)
	}
	summary := regexp.MustCompile(`(?m)^difftest: 25 scenarios \([\d,]+ with storage\), [\d,]+ pods, [\d,]+ cycles, [1-9][\d,]* differences in [1-9]\d* scenarios \(seed 1\.\.25\)$`)
	if !summary.MatchString(out) {
		t.Errorf("no summary line:\n%s", out)
	}
	entries, err := os.ReadDir(o.cases)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || !regexp.MustCompile(`^\d+-nodes-feasible-broken$`).MatchString(entries[0].Name()) {
		t.Fatalf("cases %v, want one <seed>-nodes-feasible-broken", entries)
	}
	dir := filepath.Join(o.cases, entries[0].Name())
	cluster := filepath.Join(dir, "cluster.yaml")
	objs := readBack(t, cluster)
	if len(objs) != 2 {
		t.Errorf("the case has %d objects, want 2 (a node and a pod)", len(objs))
	}
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var expected oracle.Document
	if err := json.Unmarshal(raw, &expected); err != nil {
		t.Fatal(err)
	}
	upstream, _ := toySide(nil)(context.Background(), cluster)
	if d := Compare(&expected, upstream); len(d) != 0 {
		t.Errorf("expected.json is not upstream's document of the case: %v", d)
	}
	if !strings.HasPrefix(string(raw), "{\n  \"pods\": [\n    {") {
		t.Errorf("expected.json is not indented by 2 spaces:\n%s", raw)
	}
	diff, err := os.ReadFile(filepath.Join(dir, "difference.txt"))
	if err != nil || !strings.Contains(string(diff), "(Broken): schedhost Broken") {
		t.Errorf("difference.txt: %q, %v", diff, err)
	}
	if !strings.Contains(out, "minimal case for nodes[].feasible@Broken: 2 of ") {
		t.Errorf("no minimal case summary:\n%s", out)
	}
}

func TestRunWithoutDifferences(t *testing.T) {
	o := testOptions(t)
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), o, toySide(nil), toySide(nil), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", code, stdout.String(), stderr.String())
	}
	if !regexp.MustCompile(`^difftest: 25 scenarios \([\d,]+ with storage\), [\d,]+ pods, [\d,]+ cycles, 0 differences \(seed 1\.\.25\)\n$`).MatchString(stdout.String()) {
		t.Errorf("output:\n%s", stdout.String())
	}
	if entries, _ := os.ReadDir(o.cases); len(entries) != 0 {
		t.Errorf("cases written without a difference: %v", entries)
	}
}

// TestRunToolFailure: a side that fails is reported with its error, counted apart, and makes
// the exit status 2 even though nothing differed.
func TestRunToolFailure(t *testing.T) {
	o := testOptions(t)
	failing := func(ctx context.Context, path string) (*oracle.Document, error) {
		if strings.Contains(filepath.Base(path), "seed-3-") {
			return nil, errors.New("exit status 1\n  schedctl: cluster.yaml: document 4: spec.foo: bad")
		}
		return toySide(nil)(ctx, path)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), o, failing, toySide(nil), &stdout, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2\n%s", code, stdout.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "seed 3: FAILED: schedhost: exit status 1\n  schedctl: cluster.yaml: document 4: spec.foo: bad\n") {
		t.Errorf("the failure is not reported with its output:\n%s", out)
	}
	if !strings.Contains(out, " 0 differences, 1 tool failures (seed 1..25)") {
		t.Errorf("summary does not count the failure:\n%s", out)
	}
}

// fakeBatch writes a stand-in for `schedctl simulate --batch` into dir: it records its
// arguments and each start, and answers each path by its name: ok (a document naming the
// process), refused (an error object), unknown (a document with a field difftest does not
// know), garbage (a line that is not JSON), crash (dies saying why) or hang.
func fakeBatch(t *testing.T, dir string) string {
	script := filepath.Join(dir, "schedctl")
	body := `#!/bin/sh
echo "$@" > "` + dir + `/args"
echo $$ >> "` + dir + `/starts"
while IFS= read -r path; do
	case "$path" in
	*ok*) echo '{"pods":[{"namespace":"default","name":"p-'$$'","best":["n"],"placed":"n"}]}' ;;
	*refused*) echo '{"error":"schedctl simulate: '"$path"': document 3 (Pod default/p): spec.containers: required"}' ;;
	*unknown*) echo '{"pods":[],"extra":1}' ;;
	*garbage*) echo 'warning: something'; echo '{"pods":[]}' ;;
	*crash*) echo "schedctl: out of luck" >&2; exit 3 ;;
	*hang*) exec sleep 30 ;;
	esac
done
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// starts counts the fake's processes started so far.
func starts(t *testing.T, dir string) int {
	b, _ := os.ReadFile(filepath.Join(dir, "starts"))
	return strings.Count(string(b), "\n")
}

// TestSchedctlBatch: one process explains scenario after scenario with the arguments difftest
// passes; a refusal or a document difftest cannot read is that scenario's failure and the
// process goes on, while one that crashes, prints what is not JSON or hangs is reported with
// what it said and replaced by a new one for the next scenario.
func TestSchedctlBatch(t *testing.T) {
	dir := t.TempDir()
	b := newSchedctlBatch(fakeBatch(t, dir), "/plugins", time.Minute)
	defer b.Close()
	ctx := context.Background()
	explain := func(path string) (string, error) {
		doc, err := b.Explain(ctx, path)
		if err != nil {
			return "", err
		}
		if len(doc.Pods) != 1 || doc.Pods[0].Placed != "n" {
			t.Fatalf("decoded %+v", doc)
		}
		return doc.Pods[0].Name, nil
	}

	first, err := explain("/tmp/ok-1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	args, _ := os.ReadFile(filepath.Join(dir, "args"))
	if got := strings.TrimSpace(string(args)); got != "simulate --explain -o json --batch --plugin-dir /plugins" {
		t.Errorf("schedctl ran with %q", got)
	}
	if _, err := b.Explain(ctx, "/tmp/refused.yaml"); err == nil ||
		!strings.Contains(err.Error(), "given /tmp/refused.yaml: refused\n  schedctl simulate: /tmp/refused.yaml: document 3 (Pod default/p): spec.containers: required") {
		t.Errorf("a refusal is not reported with its message: %v", err)
	}
	if _, err := b.Explain(ctx, "/tmp/unknown.yaml"); err == nil || !strings.Contains(err.Error(), `unknown field "extra"`) {
		t.Errorf("a document with an unknown field: %v", err)
	}
	if again, err := explain("/tmp/ok-2.yaml"); err != nil || again != first || starts(t, dir) != 1 {
		t.Errorf("after two failed scenarios: %q, %v, %d starts; want %q from the first process", again, err, starts(t, dir), first)
	}

	if _, err := b.Explain(ctx, "/tmp/crash.yaml"); err == nil || !strings.Contains(err.Error(), "exit status 3\n  schedctl: out of luck") {
		t.Errorf("a crash is not reported with its exit and stderr: %v", err)
	}
	second, err := explain("/tmp/ok-3.yaml")
	if err != nil || second == first || starts(t, dir) != 2 {
		t.Errorf("after a crash: %q, %v, %d starts; want a second process", second, err, starts(t, dir))
	}

	if _, err := b.Explain(ctx, "/tmp/garbage.yaml"); err == nil || !strings.Contains(err.Error(), "not one line of JSON: warning: something") {
		t.Errorf("a line that is not JSON: %v", err)
	}
	if third, err := explain("/tmp/ok-4.yaml"); err != nil || third == second || starts(t, dir) != 3 {
		t.Errorf("after a stray line: %q, %v, %d starts; want a third process", third, err, starts(t, dir))
	}

	b.timeout = 200 * time.Millisecond
	if _, err := b.Explain(ctx, "/tmp/hang.yaml"); err == nil || !strings.Contains(err.Error(), "timed out after 200ms") {
		t.Errorf("a scenario that hangs: %v", err)
	}
	if _, err := explain("/tmp/ok-5.yaml"); err != nil || starts(t, dir) != 4 {
		t.Errorf("after a timeout: %v, %d starts; want a fourth process", err, starts(t, dir))
	}
}

// TestSchedctlBatchParallel: scenarios explained at once get a process each, and no more
// processes than that are started however many scenarios follow.
func TestSchedctlBatchParallel(t *testing.T) {
	dir := t.TempDir()
	b := newSchedctlBatch(fakeBatch(t, dir), "", time.Minute)
	var mu sync.Mutex
	seen := map[string]int{}
	parallelFor(context.Background(), 40, 3, func(i int) {
		doc, err := b.Explain(context.Background(), fmt.Sprintf("/tmp/ok-%d.yaml", i))
		if err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		seen[doc.Pods[0].Name]++
		mu.Unlock()
	})
	b.Close()
	if n := starts(t, dir); n > 3 || len(seen) != n {
		t.Errorf("%d processes started, %d answered (%v); want at most 3", n, len(seen), seen)
	}
}

func TestSlugAndThousands(t *testing.T) {
	for in, want := range map[string]string{
		"nodes[].reasons@NodeResourcesFit":       "nodes-reasons-noderesourcesfit",
		"scores[].plugins[ImageLocality].raw":    "scores-plugins-imagelocality-raw",
		"postFilter.victims":                     "postfilter-victims",
		"gated@SchedulingGates":                  "gated-schedulinggates",
		strings.Repeat("scores[].plugins[X]", 9): "scores-plugins-x-scores-plugins-x-scores-plugins",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"--count", "7", "--seed", "40", "--schedctl", "/bin/true", "--nodes", "2-5", "--pending", "3", "--keep", "0"})
	if err != nil {
		t.Fatal(err)
	}
	want := scenario.Params{MinNodes: 2, MaxNodes: 5, MinBound: 0, MaxBound: 40, MinPending: 3, MaxPending: 3}
	if o.count != 7 || o.seed != 40 || o.keep != 0 || o.params != want {
		t.Errorf("parsed %+v", o)
	}
	for _, bad := range [][]string{{"--nodes", "5-2", "--schedctl", "x"}, {"--pending", "0", "--schedctl", "x"}, {"--count", "0", "--schedctl", "x"}, {"--schedctl", "x", "stray"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
