package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	corev1defaults "k8s.io/kubernetes/pkg/apis/core/v1"
	policyv1defaults "k8s.io/kubernetes/pkg/apis/policy/v1"
	schedulingv1defaults "k8s.io/kubernetes/pkg/apis/scheduling/v1"
)

// The workload files are schedhost-bench's (tests/bench/workloads/*.toml); this file reads them
// with the same rules as tests/bench/workload.cc, so both benches run the same operations and
// refuse the same files.

// opKind is one of scheduler_perf's operations.
type opKind int

const (
	opCreateNodes opKind = iota
	opCreatePods
	opCreateObjects
	opBarrier
)

// op is one validated operation of a workload.
type op struct {
	kind opKind
	// count is how many objects the operation creates, already scaled.
	count int
	// templateText is the manifest template; templateName is its path as the workload names
	// it, for messages.
	templateText string
	templateName string
	// measured marks the pods whose scheduling is timed (createPods).
	measured bool
}

// workload is a parsed, validated workload file.
type workload struct {
	name        string
	description string
	path        string
	ops         []op
}

// workloadFile is the TOML document. Pointers tell a missing key from a zero value, which the
// rules below need (count defaults differ by operation).
type workloadFile struct {
	Name        *string `toml:"name"`
	Description *string `toml:"description"`
	Ops         []struct {
		Op       *string `toml:"op"`
		Count    *int64  `toml:"count"`
		Template *string `toml:"template"`
		Measured *bool   `toml:"measured"`
	} `toml:"ops"`
}

// loadWorkload reads and validates the workload file at path, multiplying every createNodes and
// createPods count by scale (rounded half away from zero, at least 1; createObjects counts are
// not scaled). Each template is rendered and decoded once, for index 0, to check it holds
// exactly one object of the operation's kind.
func loadWorkload(path string, scale float64) (*workload, error) {
	if !(scale > 0) {
		return nil, errors.New("--scale must be > 0")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot be read", path)
	}
	var doc workloadFile
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	w := &workload{path: path}
	w.name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if doc.Name != nil {
		w.name = *doc.Name
	}
	if doc.Description != nil {
		w.description = *doc.Description
	}
	if len(doc.Ops) == 0 {
		return nil, fmt.Errorf("%s: ops: at least one [[ops]]", path)
	}
	for i, t := range doc.Ops {
		field := fmt.Sprintf("%s: ops[%d]", path, i)
		var o op
		kind := ""
		if t.Op != nil {
			kind = *t.Op
		}
		switch kind {
		case "createNodes":
			o.kind = opCreateNodes
		case "createPods":
			o.kind = opCreatePods
		case "createObjects":
			o.kind = opCreateObjects
		case "barrier":
			o.kind = opBarrier
		default:
			return nil, fmt.Errorf("%s.op: must be createNodes, createPods, createObjects or barrier, not %q", field, kind)
		}
		if o.kind != opBarrier {
			scaled := o.kind != opCreateObjects
			count := int64(1)
			if scaled {
				count = -1
			}
			if t.Count != nil {
				count = *t.Count
			}
			if count < 1 {
				return nil, fmt.Errorf("%s.count: must be an integer >= 1", field)
			}
			o.count = int(count)
			if scaled {
				o.count = max(1, int(math.Round(float64(count)*scale)))
			}
			if t.Template != nil {
				o.templateName = *t.Template
			}
			if o.templateName == "" {
				return nil, fmt.Errorf("%s.template: missing", field)
			}
			text, err := os.ReadFile(filepath.Join(filepath.Dir(path), o.templateName))
			if err != nil {
				return nil, fmt.Errorf("%s: cannot be read", filepath.Join(filepath.Dir(path), o.templateName))
			}
			o.templateText = string(text)
			o.measured = t.Measured != nil && *t.Measured
			if o.measured && o.kind != opCreatePods {
				return nil, fmt.Errorf("%s.measured: only createPods operations are measured", field)
			}
			sample, err := decodeOne(&o, 0)
			if err != nil {
				return nil, fmt.Errorf("%s.template: %w", field, err)
			}
			_, isNode := sample.(*corev1.Node)
			_, isPod := sample.(*corev1.Pod)
			if (o.kind == opCreateNodes && !isNode) || (o.kind == opCreatePods && !isPod) {
				want := "Pod"
				if o.kind == opCreateNodes {
					want = "Node"
				}
				return nil, fmt.Errorf("%s.template: %s must hold a %s", field, o.templateName, want)
			}
		}
		w.ops = append(w.ops, o)
	}
	return w, nil
}

// renderTemplate replaces `{{index}}` and `{{index % N}}` (N > 0; spaces allowed inside the
// braces) in text for object index; any other placeholder is an error.
func renderTemplate(text string, index int) (string, error) {
	var out strings.Builder
	out.Grow(len(text) + 16)
	for {
		open := strings.Index(text, "{{")
		if open < 0 {
			break
		}
		closeAt := strings.Index(text[open+2:], "}}")
		if closeAt < 0 {
			return "", errors.New("template has an unclosed {{")
		}
		inner := text[open+2 : open+2+closeAt]
		value, err := placeholder(inner, index)
		if err != nil {
			return "", err
		}
		out.WriteString(text[:open])
		out.WriteString(strconv.Itoa(value))
		text = text[open+2+closeAt+2:]
	}
	out.WriteString(text)
	return out.String(), nil
}

// placeholder is the value of one placeholder's inner text for index. Only spaces are trimmed,
// and N must be plain decimal digits, as workload.cc reads it.
func placeholder(inner string, index int) (int, error) {
	inner = strings.Trim(inner, " ")
	if inner == "index" {
		return index, nil
	}
	const mod = "index %"
	if n, ok := strings.CutPrefix(inner, mod); ok {
		n = strings.Trim(n, " ")
		modulus := 0
		for _, c := range n {
			if c < '0' || c > '9' {
				modulus = 0
				break
			}
			modulus = modulus*10 + int(c-'0')
		}
		if modulus > 0 {
			return index % modulus, nil
		}
	}
	return 0, fmt.Errorf("unknown template placeholder {{%s}}: only {{index}} and {{index %% N}} (N > 0) are supported", inner)
}

// defaulter applies the API server's defaults to a decoded object (the generated defaulters of
// k8s.io/kubernetes/pkg/apis/*, which kube-apiserver runs on every request body): a pod gets
// spec.schedulerName default-scheduler, which the scheduler needs to take it, requests from its
// limits, and the rest of what kube-apiserver would store.
var defaulter = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, register := range []func(*runtime.Scheme) error{
		corev1defaults.RegisterDefaults,
		schedulingv1defaults.RegisterDefaults,
		policyv1defaults.RegisterDefaults,
	} {
		if err := register(s); err != nil {
			panic(err)
		}
	}
	return s
}()

// decodeOne renders o's template for index and decodes it with client-go's scheme into the
// typed object (v1.Pod, v1.Node, ...), with the API server's defaults applied. A template holds
// exactly one object; empty documents (only comments or blanks) are not counted.
func decodeOne(o *op, index int) (runtime.Object, error) {
	text, err := renderTemplate(o.templateText, index)
	if err != nil {
		return nil, err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(text)))
	var objects []runtime.Object
	for {
		doc, err := reader.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if emptyDocument(doc) {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			return nil, err
		}
		objects = append(objects, obj)
	}
	if len(objects) != 1 {
		return nil, fmt.Errorf("%s: a template holds exactly one object, not %d", o.templateName, len(objects))
	}
	defaulter.Default(objects[0])
	return objects[0], nil
}

// emptyDocument reports whether a YAML document has nothing but comments and blank lines.
func emptyDocument(doc []byte) bool {
	for line := range bytes.SplitSeq(doc, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' && !bytes.Equal(line, []byte("---")) {
			return false
		}
	}
	return true
}
