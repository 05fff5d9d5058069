package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// notReadyTaint is the taint kube-apiserver's TaintNodesByCondition admission puts on every
// new node; the node lifecycle controller removes it once the node is Ready, and no such
// controller runs beside a bare API server.
const notReadyTaint = "node.kubernetes.io/not-ready"

func runNodes(ctx context.Context, args []string) error {
	fs := newFlagSet("nodes", "--kubeconfig K --count N [--cpu 32 --memory 128Gi --pods 110] [--zones 3]")
	var cf clientFlags
	cf.register(fs)
	count := fs.Int("count", 0, "number of nodes to create (required)")
	prefix := fs.String("prefix", "node-", "node names are PREFIX followed by a zero-padded index")
	cpu := fs.String("cpu", "32", "each node's cpu capacity and allocatable")
	memory := fs.String("memory", "128Gi", "each node's memory capacity and allocatable")
	pods := fs.String("pods", "110", "each node's pod capacity and allocatable")
	zones := fs.Int("zones", 3, "nodes are spread round-robin over this many zones (topology.kubernetes.io/zone=zone-K); 0: no zone label")
	parallel := fs.Int("parallel", 32, "nodes registered at once")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *count <= 0 {
		return errors.New("--count must be positive")
	}
	resources := corev1.ResourceList{}
	for name, value := range map[corev1.ResourceName]string{
		corev1.ResourceCPU: *cpu, corev1.ResourceMemory: *memory, corev1.ResourcePods: *pods} {
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return fmt.Errorf("--%s %q: %w", name, value, err)
		}
		resources[name] = q
	}
	client, err := cf.clientset()
	if err != nil {
		return err
	}

	width := len(fmt.Sprint(*count - 1))
	start := time.Now()
	err = forEach(ctx, *count, *parallel, func(ctx context.Context, i int) error {
		name := fmt.Sprintf("%s%0*d", *prefix, width, i)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: map[string]string{corev1.LabelHostname: name},
		}}
		if *zones > 0 {
			node.Labels[corev1.LabelTopologyZone] = fmt.Sprintf("zone-%d", i%*zones)
		}
		node.Status.Capacity = resources.DeepCopy()
		node.Status.Allocatable = resources.DeepCopy()
		return registerNode(ctx, client, node)
	})
	if err != nil {
		return err
	}
	log.Printf("loadgen nodes: %d nodes registered in %.1fs", *count, time.Since(start).Seconds())
	return nil
}

// registerNode creates node as a kubelet registers itself: the object, then its status (the
// given capacity and allocatable, capacity defaulting to allocatable and the reverse, and a
// Ready condition unless the status has one), then the object again without the not-ready
// taint. The taints and unschedulable flag node's spec asks for are kept.
func registerNode(ctx context.Context, client kubernetes.Interface, node *corev1.Node) error {
	status := *node.Status.DeepCopy()
	if status.Capacity == nil {
		status.Capacity = status.Allocatable.DeepCopy()
	}
	if status.Allocatable == nil {
		status.Allocatable = status.Capacity.DeepCopy()
	}
	hasReady := false
	for _, c := range status.Conditions {
		hasReady = hasReady || c.Type == corev1.NodeReady
	}
	if !hasReady {
		now := metav1.Now()
		status.Conditions = append(status.Conditions, corev1.NodeCondition{
			Type:               corev1.NodeReady,
			Status:             corev1.ConditionTrue,
			Reason:             "KubeletReady",
			Message:            "kubelet is posting ready status",
			LastHeartbeatTime:  now,
			LastTransitionTime: now,
		})
	}

	object := node.DeepCopy()
	object.Status = corev1.NodeStatus{}
	object.ResourceVersion = ""
	var created *corev1.Node
	err := withRetry(ctx, func(ctx context.Context) error {
		var err error
		created, err = client.CoreV1().Nodes().Create(ctx, object, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			// A retried create whose first try went through, or a node of an earlier run.
			created, err = client.CoreV1().Nodes().Get(ctx, object.Name, metav1.GetOptions{})
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("node %s: create: %w", node.Name, err)
	}

	current := created
	err = retryOnConflict(ctx, func(ctx context.Context) error {
		if current == nil {
			var err error
			if current, err = client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		next := current.DeepCopy()
		next.Status = *status.DeepCopy()
		updated, err := client.CoreV1().Nodes().UpdateStatus(ctx, next, metav1.UpdateOptions{})
		if err != nil {
			current = nil
			return err
		}
		current = updated
		return nil
	})
	if err != nil {
		return fmt.Errorf("node %s: status: %w", node.Name, err)
	}

	err = retryOnConflict(ctx, func(ctx context.Context) error {
		if current == nil {
			var err error
			if current, err = client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		kept := make([]corev1.Taint, 0, len(current.Spec.Taints))
		for _, t := range current.Spec.Taints {
			if t.Key != notReadyTaint {
				kept = append(kept, t)
			}
		}
		if len(kept) == len(current.Spec.Taints) {
			return nil
		}
		next := current.DeepCopy()
		next.Spec.Taints = kept
		if _, err := client.CoreV1().Nodes().Update(ctx, next, metav1.UpdateOptions{}); err != nil {
			current = nil
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("node %s: removing the %s taint: %w", node.Name, notReadyTaint, err)
	}
	return nil
}

// retryOnConflict runs call again after a 409 (it must then read the object afresh) and after
// transient errors.
func retryOnConflict(ctx context.Context, call func(context.Context) error) error {
	return withRetry(ctx, func(ctx context.Context) error {
		return retry.RetryOnConflict(retry.DefaultBackoff, func() error { return call(ctx) })
	})
}
