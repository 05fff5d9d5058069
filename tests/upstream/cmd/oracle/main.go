// oracle runs upstream kube-scheduler's framework in-process on Kubernetes manifests and prints,
// for each pending pod, one scheduling cycle as the explain document of docs/conformance.md:
//
//	oracle -f cluster.yaml [-f more.yaml ...]
//
// The manifests hold Namespaces, Nodes, Pods, PersistentVolumeClaims, PersistentVolumes (v1),
// PodDisruptionBudgets (policy/v1), PriorityClasses (scheduling.k8s.io/v1), StorageClasses,
// CSINodes, CSIDrivers, CSIStorageCapacities and VolumeAttachments (storage.k8s.io/v1), or
// Lists of them, read as kube-apiserver would create them (a stated status is kept). The
// document goes to stdout as indented JSON; errors go to stderr with exit status 1.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"k8s.io/klog/v2"

	"schedhost.test/upstream/oracle"
)

type files []string

func (f *files) String() string     { return fmt.Sprint(*f) }
func (f *files) Set(v string) error { *f = append(*f, v); return nil }

func main() {
	var paths files
	flags := flag.NewFlagSet("oracle", flag.ContinueOnError)
	flags.Var(&paths, "f", "manifest `FILE` (multi-document YAML or JSON); repeatable, read in order")
	flags.SetOutput(os.Stderr)
	if err := flags.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if len(paths) == 0 || flags.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: oracle -f FILE [-f FILE ...]")
		os.Exit(2)
	}
	// Upstream's packages log through klog, which writes to stderr at verbosity 0 (Explain
	// discards the scheduling cycles' contextual logs): stdout carries the document alone.
	klog.LogToStderr(true)

	if err := run(paths, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "oracle: %v\n", err)
		os.Exit(1)
	}
}

func run(paths []string, out io.Writer) error {
	objs, err := oracle.Decode(paths)
	if err != nil {
		return err
	}
	doc, err := oracle.Explain(objs)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}
