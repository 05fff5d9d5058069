package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
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

// TestSchedctlSide runs a stand-in schedctl: the arguments difftest passes, its document read
// strictly, and its failures reported with stderr.
func TestSchedctlSide(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "schedctl")
	body := `#!/bin/sh
echo "$@" > "` + dir + `/args"
case "$MODE" in
ok) echo '{"pods":[{"namespace":"default","name":"p","best":["n"],"placed":"n"}]}' ;;
unknown) echo '{"pods":[],"extra":1}' ;;
fail) echo "document 3 (Pod default/p): spec.containers: required" >&2; exit 1 ;;
esac
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	side := schedctlSide(script, "/plugins", time.Minute)

	t.Setenv("MODE", "ok")
	doc, err := side(context.Background(), "/tmp/x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Pods) != 1 || doc.Pods[0].Placed != "n" {
		t.Errorf("decoded %+v", doc)
	}
	args, _ := os.ReadFile(filepath.Join(dir, "args"))
	if got := strings.TrimSpace(string(args)); got != "simulate --explain -o json -f /tmp/x.yaml --plugin-dir /plugins" {
		t.Errorf("schedctl ran with %q", got)
	}

	t.Setenv("MODE", "unknown")
	if _, err := side(context.Background(), "/tmp/x.yaml"); err == nil || !strings.Contains(err.Error(), `unknown field "extra"`) {
		t.Errorf("a document with an unknown field: %v", err)
	}

	t.Setenv("MODE", "fail")
	if _, err := side(context.Background(), "/tmp/x.yaml"); err == nil || !strings.Contains(err.Error(), "spec.containers: required") {
		t.Errorf("a refusal is not reported with stderr: %v", err)
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
