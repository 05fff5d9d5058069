package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

// manifest is the objects of one file by kind, each kind in file order.
type manifest struct {
	namespaces      []*corev1.Namespace
	priorityClasses []*schedulingv1.PriorityClass
	nodes           []*corev1.Node
	pdbs            []*policyv1.PodDisruptionBudget
	storageClasses  []*storagev1.StorageClass
	volumes         []*corev1.PersistentVolume
	claims          []*corev1.PersistentVolumeClaim
	pods            []*corev1.Pod
}

func runApply(ctx context.Context, args []string) error {
	fs := newFlagSet("apply", "--kubeconfig K -f FILE [--scheduler-name NAME]")
	var cf clientFlags
	cf.register(fs)
	file := fs.String("f", "", "multi-document YAML file of Namespaces, PriorityClasses, Nodes, PodDisruptionBudgets and Pods (required; - for stdin)")
	schedulerName := fs.String("scheduler-name", "", "set every pod's spec.schedulerName to this (default: as the file says)")
	parallel := fs.Int("parallel", 32, "nodes registered at once")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *file == "" {
		return errors.New("-f is required")
	}
	var in io.Reader = os.Stdin
	if *file != "-" {
		f, err := os.Open(*file)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	m, err := decodeManifest(in)
	if err != nil {
		return fmt.Errorf("%s: %w", *file, err)
	}
	if *schedulerName != "" {
		for _, p := range m.pods {
			p.Spec.SchedulerName = *schedulerName
		}
	}
	client, err := cf.clientset()
	if err != nil {
		return err
	}
	return m.create(ctx, client, *parallel, os.Stdout)
}

// decodeManifest reads every document of a multi-document YAML (or JSON) stream; empty
// documents are skipped and any other kind is an error naming the document.
func decodeManifest(in io.Reader) (*manifest, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(in))
	decoder := scheme.Codecs.UniversalDeserializer()
	m := &manifest{}
	for doc := 1; ; doc++ {
		data, err := reader.Read()
		if err == io.EOF {
			return m, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
		jsonData, err := utilyaml.ToJSON(data)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
		if t := bytes.TrimSpace(jsonData); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			continue // only comments
		}
		obj, gvk, err := decoder.Decode(jsonData, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
		if err := m.add(obj); err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", doc, gvk.Kind, err)
		}
	}
}

func (m *manifest) add(obj runtime.Object) error {
	switch o := obj.(type) {
	case *corev1.Namespace:
		m.namespaces = append(m.namespaces, o)
	case *schedulingv1.PriorityClass:
		m.priorityClasses = append(m.priorityClasses, o)
	case *corev1.Node:
		m.nodes = append(m.nodes, o)
	case *policyv1.PodDisruptionBudget:
		if o.Namespace == "" {
			o.Namespace = metav1.NamespaceDefault
		}
		m.pdbs = append(m.pdbs, o)
	case *storagev1.StorageClass:
		m.storageClasses = append(m.storageClasses, o)
	case *corev1.PersistentVolume:
		m.volumes = append(m.volumes, o)
	case *corev1.PersistentVolumeClaim:
		if o.Namespace == "" {
			o.Namespace = metav1.NamespaceDefault
		}
		m.claims = append(m.claims, o)
	case *corev1.Pod:
		if o.Namespace == "" {
			o.Namespace = metav1.NamespaceDefault
		}
		m.pods = append(m.pods, o)
	default:
		return fmt.Errorf("unsupported kind %T (Namespace, PriorityClass, Node, PodDisruptionBudget, StorageClass, PersistentVolume, PersistentVolumeClaim, Pod)", obj)
	}
	return nil
}

// create creates the objects in dependency order: namespaces (those the file declares, then
// those its pods, PDBs and claims name that do not exist yet), PriorityClasses (admission
// resolves a pod's priority from them), nodes, PDBs, StorageClasses, PersistentVolumes,
// PersistentVolumeClaims, then pods in file order. It prints kubectl's
// "kind/name created" per object.
func (m *manifest) create(ctx context.Context, client kubernetes.Interface, parallel int, out io.Writer) error {
	declared := map[string]bool{}
	for _, ns := range m.namespaces {
		declared[ns.Name] = true
		if err := createOne(ctx, func(ctx context.Context) error {
			_, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("namespace/%s: %w", ns.Name, err)
		}
		fmt.Fprintf(out, "namespace/%s created\n", ns.Name)
	}
	implied := map[string]bool{}
	for _, p := range m.pods {
		implied[p.Namespace] = true
	}
	for _, p := range m.pdbs {
		implied[p.Namespace] = true
	}
	for _, c := range m.claims {
		implied[c.Namespace] = true
	}
	names := make([]string, 0, len(implied))
	for ns := range implied {
		if !declared[ns] {
			names = append(names, ns)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		_, err := client.CoreV1().Namespaces().Create(ctx,
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		switch {
		case err == nil:
			fmt.Fprintf(out, "namespace/%s created\n", name)
		case apierrors.IsAlreadyExists(err):
		default:
			return fmt.Errorf("namespace/%s: %w", name, err)
		}
	}

	for _, pc := range m.priorityClasses {
		if err := createOne(ctx, func(ctx context.Context) error {
			_, err := client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("priorityclass/%s: %w", pc.Name, err)
		}
		fmt.Fprintf(out, "priorityclass.scheduling.k8s.io/%s created\n", pc.Name)
	}

	if err := forEach(ctx, len(m.nodes), parallel, func(ctx context.Context, i int) error {
		return registerNode(ctx, client, m.nodes[i])
	}); err != nil {
		return err
	}
	for _, n := range m.nodes {
		fmt.Fprintf(out, "node/%s created\n", n.Name)
	}

	for _, pdb := range m.pdbs {
		if err := createOne(ctx, func(ctx context.Context) error {
			_, err := client.PolicyV1().PodDisruptionBudgets(pdb.Namespace).Create(ctx, pdb, metav1.CreateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("poddisruptionbudget/%s -n %s: %w", pdb.Name, pdb.Namespace, err)
		}
		fmt.Fprintf(out, "poddisruptionbudget.policy/%s created\n", pdb.Name)
	}

	for _, sc := range m.storageClasses {
		if err := createOne(ctx, func(ctx context.Context) error {
			_, err := client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("storageclass/%s: %w", sc.Name, err)
		}
		fmt.Fprintf(out, "storageclass.storage.k8s.io/%s created\n", sc.Name)
	}
	for _, pv := range m.volumes {
		if err := createOne(ctx, func(ctx context.Context) error {
			_, err := client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("persistentvolume/%s: %w", pv.Name, err)
		}
		fmt.Fprintf(out, "persistentvolume/%s created\n", pv.Name)
	}
	for _, pvc := range m.claims {
		if err := createOne(ctx, func(ctx context.Context) error {
			_, err := client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Create(ctx, pvc, metav1.CreateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("persistentvolumeclaim/%s -n %s: %w", pvc.Name, pvc.Namespace, err)
		}
		fmt.Fprintf(out, "persistentvolumeclaim/%s created\n", pvc.Name)
	}

	for _, pod := range m.pods {
		if err := createOne(ctx, func(ctx context.Context) error {
			_, err := client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("pod/%s -n %s: %w", pod.Name, pod.Namespace, err)
		}
		fmt.Fprintf(out, "pod/%s created\n", pod.Name)
	}
	return nil
}

// createOne runs a create with retries; "already exists" after a retry means the first try
// went through, while on the first try it is an error (the object predates this run).
func createOne(ctx context.Context, call func(context.Context) error) error {
	tries := 0
	return withRetry(ctx, func(ctx context.Context) error {
		tries++
		err := call(ctx)
		if tries > 1 && apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
}
