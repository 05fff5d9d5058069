package main

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseMetricsAndDelta(t *testing.T) {
	exposition := func(bindings, exempt int, cpu string) []byte {
		return []byte(strings.Join([]string{
			`# HELP apiserver_request_total Counter of apiserver requests.`,
			`# TYPE apiserver_request_total counter`,
			`apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="binding",verb="POST",version="v1"} ` + strconv.Itoa(bindings),
			`apiserver_request_total{code="409",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="binding",verb="POST",version="v1"} 2`,
			`apiserver_request_total{code="201",component="apiserver",dry_run="",group="events.k8s.io",resource="events",scope="namespace",subresource="",verb="POST",version="v1"} 7`,
			`apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="binding",verb="POST",version="v1"} ` + strconv.Itoa(bindings/100),
			`apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="binding",verb="POST",version="v1"} ` + strconv.Itoa(bindings+2),
			`apiserver_flowcontrol_dispatched_requests_total{flow_schema="exempt",priority_level="exempt"} ` + strconv.Itoa(exempt),
			`apiserver_flowcontrol_dispatched_requests_total{flow_schema="global-default",priority_level="global-default"} 42`,
			`weird_metric{path="a \"quoted\\\" value, with }",x="y"} 1e3`,
			`process_cpu_seconds_total ` + cpu,
		}, "\n"))
	}
	parse := func(text []byte) *snapshot {
		s := newSnapshot()
		err := parseMetrics(text, func(name string, labels map[string]string, value float64) {
			if name == "weird_metric" &&
				(labels["path"] != `a "quoted\" value, with }` || labels["x"] != "y" || value != 1000) {
				t.Errorf("weird_metric: labels %q value %v", labels, value)
			}
			s.add(name, labels, value)
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := parse(exposition(100, 10, "1.5"))
	before.Time = time.Unix(100, 0)
	after := parse(exposition(1100, 25, "4"))
	after.Time = time.Unix(110, 0)

	if got := before.Requests["POST pods/binding"]; got != 102 {
		t.Errorf("POST pods/binding = %v, want 102 (codes summed)", got)
	}
	if got := before.Requests["POST events.events.k8s.io"]; got != 7 {
		t.Errorf("POST events.events.k8s.io = %v, want 7", got)
	}
	d := after.since(before)
	if d.Seconds != 10 || d.APIServerCPUSeconds != 2.5 {
		t.Errorf("seconds %v cpu %v, want 10 and 2.5", d.Seconds, d.APIServerCPUSeconds)
	}
	if d.Requests["POST pods/binding"] != 1000 || len(d.Requests) != 1 {
		t.Errorf("requests delta %v, want only POST pods/binding 1000", d.Requests)
	}
	if d.RequestsByFlowSchema["exempt"] != 15 || d.RequestsByFlowSchema["global-default"] != 0 {
		t.Errorf("flow schema delta %v", d.RequestsByFlowSchema)
	}
	if got := d.LatencyMeanMs["POST pods/binding"]; got != 10 {
		t.Errorf("binding latency %v ms, want 10", got)
	}
}

func TestSplitSampleRejectsBrokenLabels(t *testing.T) {
	for _, line := range []string{`m{a="x} 1`, `m{a=x} 1`, `m`} {
		if _, _, _, err := splitSample(line); err == nil {
			t.Errorf("%q: no error", line)
		}
	}
}

func TestRequestKind(t *testing.T) {
	for _, tc := range []struct {
		labels map[string]string
		want   string
	}{
		{map[string]string{"verb": "LIST", "resource": "nodes"}, "LIST nodes"},
		{map[string]string{"verb": "PATCH", "resource": "pods", "subresource": "status"}, "PATCH pods/status"},
		{map[string]string{"verb": "WATCH", "resource": "leases", "group": "coordination.k8s.io"}, "WATCH leases.coordination.k8s.io"},
		{map[string]string{"verb": "GET"}, "GET (non-resource)"},
	} {
		if got := requestKind(tc.labels); got != tc.want {
			t.Errorf("requestKind(%v) = %q, want %q", tc.labels, got, tc.want)
		}
	}
}
