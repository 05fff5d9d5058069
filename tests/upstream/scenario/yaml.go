package scenario

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	goyaml "go.yaml.in/yaml/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// WriteYAML writes objs as a multi-document YAML stream, each with its apiVersion and kind,
// without the empty fields Go's encoding of API types leaves behind (creationTimestamp: null,
// status: {}, a node's zero daemonEndpoints and nodeInfo).
func WriteYAML(w io.Writer, objs []runtime.Object) error {
	bw := bufio.NewWriter(w)
	for i, o := range objs {
		o = o.DeepCopyObject()
		SetTypeMeta(o)
		raw, err := json.Marshal(o)
		if err != nil {
			return fmt.Errorf("object %d: %w", i, err)
		}
		var tree map[string]any
		if err := json.Unmarshal(raw, &tree); err != nil {
			return fmt.Errorf("object %d: %w", i, err)
		}
		prune(tree)
		if status, ok := tree["status"].(map[string]any); ok {
			// Zero-valued structs that have no omitempty effect in encoding/json.
			if de, ok := status["daemonEndpoints"].(map[string]any); ok && isZeroTree(de) {
				delete(status, "daemonEndpoints")
			}
			if ni, ok := status["nodeInfo"].(map[string]any); ok && isZeroTree(ni) {
				delete(status, "nodeInfo")
			}
			if len(status) == 0 {
				delete(tree, "status")
			}
		}
		if i > 0 {
			bw.WriteString("---\n")
		}
		// One top-level field at a time, so that a document reads apiVersion, kind, metadata,
		// spec and status in that order (go-yaml sorts keys).
		for _, k := range topLevelOrder(tree) {
			out, err := goyaml.Marshal(map[string]any{k: yamlValue(tree[k])})
			if err != nil {
				return fmt.Errorf("object %d: %w", i, err)
			}
			bw.Write(out)
		}
	}
	return bw.Flush()
}

// yamlValue is v, a tree encoding/json decoded, as go-yaml decodes the JSON text of it: whole
// numbers are ints (encoding/json made every number a float64). go-yaml then writes the same
// bytes sigs.k8s.io/yaml.Marshal does, which encodes the tree to JSON and has go-yaml read
// that back first: a third of difftest's time per scenario went to that round trip.
func yamlValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = yamlValue(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = yamlValue(x)
		}
		return out
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1<<53 {
			return int(t)
		}
		// A fraction or a number too large to be exact: the round trip itself, rare.
		var back any
		if raw, err := json.Marshal(t); err == nil && goyaml.Unmarshal(raw, &back) == nil {
			return back
		}
	}
	return v
}

// topLevelOrder is apiVersion, kind, metadata first, status last, the rest sorted between.
func topLevelOrder(tree map[string]any) []string {
	rank := func(k string) int {
		switch k {
		case "apiVersion":
			return 0
		case "kind":
			return 1
		case "metadata":
			return 2
		case "status":
			return 4
		}
		return 3
	}
	keys := make([]string, 0, len(tree))
	for k := range tree {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(rank(a), rank(b)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return keys
}

// keepEmpty are the fields whose empty object means something: an empty label selector
// selects everything, an absent one nothing (or the pod's own namespace); an empty emptyDir is
// the volume's source.
var keepEmpty = map[string]bool{"labelSelector": true, "namespaceSelector": true, "selector": true, "nodeTopology": true, "emptyDir": true}

// prune removes null fields and empty objects and lists, except the meaningful empty ones.
func prune(m map[string]any) {
	for k, v := range m {
		switch t := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			prune(t)
			if len(t) == 0 && !keepEmpty[k] {
				delete(m, k)
			}
		case []any:
			for _, item := range t {
				if im, ok := item.(map[string]any); ok {
					prune(im)
				}
			}
			if len(t) == 0 {
				delete(m, k)
			}
		}
	}
}

// isZeroTree reports whether a decoded JSON tree holds only zeros, empty strings and false.
func isZeroTree(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, x := range t {
			if !isZeroTree(x) {
				return false
			}
		}
		return true
	case []any:
		return len(t) == 0
	case string:
		return t == ""
	case float64:
		return t == 0
	case bool:
		return !t
	}
	return false
}

// scheme knows the kinds a scenario holds.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, policyv1.AddToScheme, schedulingv1.AddToScheme, storagev1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

// ReadYAML decodes a multi-document YAML stream of the kinds a scenario holds (the inverse of
// WriteYAML; no defaulting). Empty documents are skipped.
func ReadYAML(r io.Reader) ([]runtime.Object, error) {
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var out []runtime.Object
	for doc := 1; ; doc++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
		var probe any
		if err := yaml.Unmarshal(raw, &probe); err == nil && probe == nil {
			continue // empty, or only comments
		}
		obj, _, err := decoder.Decode(raw, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
		out = append(out, obj)
	}
}

// Marshal is WriteYAML into a byte slice.
func Marshal(objs []runtime.Object) ([]byte, error) {
	var buf bytes.Buffer
	err := WriteYAML(&buf, objs)
	return buf.Bytes(), err
}
