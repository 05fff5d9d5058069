package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicksPerSecond is USER_HZ, the unit of /proc/PID/stat's times: 100 on every Linux
// architecture Go supports.
const clockTicksPerSecond = 100

// snapshot is what `loadgen metrics` records at one moment: cumulative counters, to be
// subtracted from a later snapshot.
type snapshot struct {
	Time time.Time `json:"time"`
	// CPUSeconds is user + system time per process named with --pid, from /proc, and under
	// "machine" the busy time of every CPU (/proc/stat): what other processes took is the rest.
	CPUSeconds map[string]float64 `json:"cpu_seconds"`
	// APIServerCPUSeconds is kube-apiserver's process_cpu_seconds_total.
	APIServerCPUSeconds float64 `json:"apiserver_cpu_seconds"`
	// RequestsByFlowSchema is apiserver_flowcontrol_dispatched_requests_total per flow schema:
	// API Priority and Fairness classifies each request by its user, so this is the one
	// per-client count /metrics has (the admin is "exempt"; a user with kube-scheduler's
	// roles that is not system:kube-scheduler is "global-default").
	RequestsByFlowSchema map[string]float64 `json:"requests_by_flow_schema"`
	// Requests is apiserver_request_total summed over response codes, per request kind
	// ("POST pods/binding", "LIST nodes", "POST events.events.k8s.io").
	Requests map[string]float64 `json:"requests"`
	// Failures is apiserver_request_total for codes other than 2xx, per "kind code".
	Failures map[string]float64 `json:"failures,omitempty"`
	// DurationSum and DurationCount are apiserver_request_duration_seconds' sum and count per
	// request kind (long-running requests such as watches are not in it).
	DurationSum   map[string]float64 `json:"duration_sum,omitempty"`
	DurationCount map[string]float64 `json:"duration_count,omitempty"`
	// TerminatedWatchers is apiserver_terminated_watchers_total per resource: watches the
	// API server closed because their client did not take events fast enough.
	TerminatedWatchers map[string]float64 `json:"terminated_watchers,omitempty"`
}

// delta is the difference of two snapshots, as `loadgen metrics --since` prints it.
type delta struct {
	Seconds              float64            `json:"seconds"`
	CPUSeconds           map[string]float64 `json:"cpu_seconds"`
	APIServerCPUSeconds  float64            `json:"apiserver_cpu_seconds"`
	RequestsByFlowSchema map[string]float64 `json:"requests_by_flow_schema"`
	Requests             map[string]float64 `json:"requests"`
	Failures             map[string]float64 `json:"failures,omitempty"`
	TerminatedWatchers   map[string]float64 `json:"terminated_watchers,omitempty"`
	// LatencyMeanMs is the mean time the API server took per request kind, over the span.
	LatencyMeanMs map[string]float64 `json:"latency_mean_ms,omitempty"`
}

// pidFlags collects repeated --pid NAME=PID flags.
type pidFlags map[string]int

func (p pidFlags) String() string { return fmt.Sprint(map[string]int(p)) }

func (p pidFlags) Set(value string) error {
	name, pid, ok := strings.Cut(value, "=")
	n, err := strconv.Atoi(pid)
	if !ok || name == "" || err != nil || n <= 0 {
		return fmt.Errorf("want NAME=PID, got %q", value)
	}
	p[name] = n
	return nil
}

func runMetrics(ctx context.Context, args []string) error {
	fs := newFlagSet("metrics", "--kubeconfig K [--pid NAME=PID]... [-o FILE] [--since FILE]")
	var cf clientFlags
	cf.register(fs)
	pids := pidFlags{}
	fs.Var(pids, "pid", "NAME=PID: record the CPU time of process PID under NAME (repeatable)")
	output := fs.String("o", "", "write the snapshot to FILE instead of stdout")
	since := fs.String("since", "", "print the difference from the snapshot in FILE (taken with the same --pid names) instead of a snapshot")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	now, err := takeSnapshot(ctx, &cf, pids)
	if err != nil {
		return err
	}
	var result any = now
	if *since != "" {
		data, err := os.ReadFile(*since)
		if err != nil {
			return err
		}
		var before snapshot
		if err := json.Unmarshal(data, &before); err != nil {
			return fmt.Errorf("%s: %w", *since, err)
		}
		result = now.since(&before)
	}
	data, err := json.Marshal(result)
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if *output == "" {
		_, err = os.Stdout.Write(data)
		return err
	}
	return os.WriteFile(*output, data, 0o644)
}

// takeSnapshot reads the API server's /metrics with cf's credentials and the CPU time of pids.
func takeSnapshot(ctx context.Context, cf *clientFlags, pids pidFlags) (*snapshot, error) {
	s := newSnapshot()
	client, err := cf.clientset()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	body, err := client.CoreV1().RESTClient().Get().AbsPath("/metrics").
		SetHeader("Accept", "text/plain;version=0.0.4").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the API server's /metrics: %w", err)
	}
	// The processes' times are read at the moment of the API server's answer.
	s.Time = time.Now()
	for name, pid := range pids {
		cpu, err := processCPUSeconds(pid)
		if err != nil {
			return nil, fmt.Errorf("--pid %s=%d: %w", name, pid, err)
		}
		s.CPUSeconds[name] = cpu
	}
	machine, err := machineBusySeconds()
	if err != nil {
		return nil, fmt.Errorf("/proc/stat: %w", err)
	}
	s.CPUSeconds["machine"] = machine
	if err := parseMetrics(body, s.add); err != nil {
		return nil, fmt.Errorf("the API server's /metrics: %w", err)
	}
	return s, nil
}

func newSnapshot() *snapshot {
	return &snapshot{
		CPUSeconds:           map[string]float64{},
		RequestsByFlowSchema: map[string]float64{},
		Requests:             map[string]float64{},
		Failures:             map[string]float64{},
		DurationSum:          map[string]float64{},
		DurationCount:        map[string]float64{},
		TerminatedWatchers:   map[string]float64{},
	}
}

// add records one sample of the API server's /metrics when it is one the snapshot keeps.
func (s *snapshot) add(name string, labels map[string]string, value float64) {
	switch name {
	case "process_cpu_seconds_total":
		s.APIServerCPUSeconds = value
	case "apiserver_flowcontrol_dispatched_requests_total":
		s.RequestsByFlowSchema[labels["flow_schema"]] += value
	case "apiserver_request_total":
		kind := requestKind(labels)
		s.Requests[kind] += value
		if code := labels["code"]; !strings.HasPrefix(code, "2") {
			s.Failures[kind+" "+code] += value
		}
	case "apiserver_request_duration_seconds_sum":
		s.DurationSum[requestKind(labels)] += value
	case "apiserver_request_duration_seconds_count":
		s.DurationCount[requestKind(labels)] += value
	case "apiserver_terminated_watchers_total":
		s.TerminatedWatchers[resourceName(labels)] += value
	}
}

// requestKind names a request by verb and resource: "POST pods/binding", "WATCH
// leases.coordination.k8s.io".
func requestKind(labels map[string]string) string {
	return labels["verb"] + " " + resourceName(labels)
}

// resourceName names a resource as kubectl does, group and subresource included.
func resourceName(labels map[string]string) string {
	resource := labels["resource"]
	if g := labels["group"]; g != "" {
		resource += "." + g
	}
	if sub := labels["subresource"]; sub != "" {
		resource += "/" + sub
	}
	if resource == "" {
		resource = "(non-resource)"
	}
	return resource
}

// since is the change from before to s.
func (s *snapshot) since(before *snapshot) *delta {
	d := &delta{
		Seconds:              s.Time.Sub(before.Time).Seconds(),
		CPUSeconds:           subtract(s.CPUSeconds, before.CPUSeconds),
		APIServerCPUSeconds:  s.APIServerCPUSeconds - before.APIServerCPUSeconds,
		RequestsByFlowSchema: subtract(s.RequestsByFlowSchema, before.RequestsByFlowSchema),
		Requests:             subtract(s.Requests, before.Requests),
		Failures:             subtract(s.Failures, before.Failures),
		TerminatedWatchers:   subtract(s.TerminatedWatchers, before.TerminatedWatchers),
		LatencyMeanMs:        map[string]float64{},
	}
	sum := subtract(s.DurationSum, before.DurationSum)
	for kind, n := range subtract(s.DurationCount, before.DurationCount) {
		d.LatencyMeanMs[kind] = sum[kind] / n * 1000
	}
	return d
}

// subtract returns after − before per key, leaving out keys that did not grow.
func subtract(after, before map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if diff := v - before[k]; diff > 0 {
			out[k] = diff
		}
	}
	return out
}

// processCPUSeconds is the user + system time of process pid (its threads, not its children).
func processCPUSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces: count from after it.
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return 0, errors.New("unexpected /proc stat format")
	}
	fields := strings.Fields(string(data[end+1:]))
	// fields[0] is the state (field 3); utime and stime are fields 14 and 15.
	if len(fields) < 13 {
		return 0, errors.New("unexpected /proc stat format")
	}
	utime, err1 := strconv.ParseUint(fields[11], 10, 64)
	stime, err2 := strconv.ParseUint(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("unexpected /proc stat format")
	}
	return float64(utime+stime) / clockTicksPerSecond, nil
}

// machineBusySeconds is the time all CPUs spent on anything but idling and waiting for I/O
// since boot.
func machineBusySeconds() (float64, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)
	if len(fields) < 8 || fields[0] != "cpu" {
		return 0, errors.New("unexpected format")
	}
	var busy uint64
	// user nice system idle iowait irq softirq steal ...; guest time is already in user.
	for i, f := range fields[1:min(9, len(fields))] {
		if i == 3 || i == 4 {
			continue
		}
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, errors.New("unexpected format")
		}
		busy += v
	}
	return float64(busy) / clockTicksPerSecond, nil
}

// parseMetrics calls sample for every sample of a Prometheus text exposition (version 0.0.4).
func parseMetrics(text []byte, sample func(name string, labels map[string]string, value float64)) error {
	scanner := bufio.NewScanner(bytes.NewReader(text))
	scanner.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for line := 1; scanner.Scan(); line++ {
		s := strings.TrimSpace(scanner.Text())
		if s == "" || s[0] == '#' {
			continue
		}
		name, labels, rest, err := splitSample(s)
		if err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return fmt.Errorf("line %d: no value", line)
		}
		value, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return fmt.Errorf("line %d: value %q: %w", line, fields[0], err)
		}
		sample(name, labels, value)
	}
	return scanner.Err()
}

// splitSample splits `name{a="x",b="y"} rest` into its name, labels and the rest.
func splitSample(s string) (string, map[string]string, string, error) {
	i := strings.IndexAny(s, "{ \t")
	if i < 0 {
		return "", nil, "", errors.New("no value")
	}
	name := s[:i]
	labels := map[string]string{}
	if s[i] != '{' {
		return name, labels, s[i:], nil
	}
	s = s[i+1:]
	for {
		s = strings.TrimLeft(s, " \t,")
		if strings.HasPrefix(s, "}") {
			return name, labels, s[1:], nil
		}
		eq := strings.IndexByte(s, '=')
		if eq < 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			return "", nil, "", fmt.Errorf("metric %s: malformed labels", name)
		}
		key := strings.TrimSpace(s[:eq])
		s = s[eq+2:]
		var value strings.Builder
		closed := false
		for j := 0; j < len(s); j++ {
			c := s[j]
			if c == '\\' && j+1 < len(s) {
				j++
				switch s[j] {
				case 'n':
					value.WriteByte('\n')
				default:
					value.WriteByte(s[j])
				}
				continue
			}
			if c == '"' {
				s = s[j+1:]
				closed = true
				break
			}
			value.WriteByte(c)
		}
		if !closed {
			return "", nil, "", fmt.Errorf("metric %s: unterminated label value", name)
		}
		labels[key] = value.String()
	}
}

var _ flag.Value = pidFlags{}
