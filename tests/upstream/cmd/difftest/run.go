package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"schedhost.test/upstream/oracle"
	"schedhost.test/upstream/scenario"
)

// Pair runs both sides on a scenario. Each run writes the objects to a file of its own in Dir,
// which both sides then read, and removes it afterwards.
type Pair struct {
	Ours, Upstream Side
	Dir            string
	files          atomic.Int64
}

// Outcome is what both sides said about one scenario.
type Outcome struct {
	Ours, Theirs *oracle.Document
	Diffs        []Difference
}

// Run writes objs, has both sides explain them and compares the documents. A side that fails
// returns a *ToolError.
func (p *Pair) Run(ctx context.Context, name string, objs []runtime.Object) (*Outcome, error) {
	data, err := scenario.Marshal(objs)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(p.Dir, fmt.Sprintf("%s-%d.yaml", name, p.files.Add(1)))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return nil, err
	}
	defer os.Remove(path)
	ours, err := p.Ours(ctx, path)
	if err != nil {
		return nil, &ToolError{Side: "schedhost", Err: err}
	}
	theirs, err := p.Upstream(ctx, path)
	if err != nil {
		return nil, &ToolError{Side: "upstream", Err: err}
	}
	return &Outcome{Ours: ours, Theirs: theirs, Diffs: Compare(ours, theirs)}, nil
}

// ComparedCycles is how many pods ran a scheduling cycle on both sides (were gated on neither).
func ComparedCycles(ours, theirs *oracle.Document) int {
	ran := map[string]bool{}
	for _, p := range ours.Pods {
		if p.Gated == nil {
			ran[p.Namespace+"/"+p.Name] = true
		}
	}
	n := 0
	for _, p := range theirs.Pods {
		if p.Gated == nil && ran[p.Namespace+"/"+p.Name] {
			n++
		}
	}
	return n
}

// PendingPods counts the pods without a node.
func PendingPods(objs []runtime.Object) int {
	n := 0
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok && p.Spec.NodeName == "" {
			n++
		}
	}
	return n
}

// HasStorage reports whether a scenario holds storage objects (claims, volumes, classes, CSI
// objects) or a pod with a volume.
func HasStorage(objs []runtime.Object) bool {
	for _, o := range objs {
		switch t := o.(type) {
		case *corev1.PersistentVolumeClaim, *corev1.PersistentVolume, *storagev1.StorageClass, *storagev1.CSINode,
			*storagev1.CSIDriver, *storagev1.CSIStorageCapacity, *storagev1.VolumeAttachment:
			return true
		case *corev1.Pod:
			if len(t.Spec.Volumes) > 0 {
				return true
			}
		}
	}
	return false
}
