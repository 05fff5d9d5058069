// Command provisioner is a dynamic volume provisioner for the kube tests, built on
// sigs.k8s.io/sig-storage-lib-external-provisioner (the library external provisioners are
// built on): for each claim of a StorageClass naming --name, once the scheduler has chosen a
// node (the claim's volume.kubernetes.io/selected-node annotation), it creates a hostPath
// PersistentVolume of the requested size, access modes and class with node affinity for that
// node's kubernetes.io/hostname. No storage exists behind it.
//
//	provisioner --kubeconfig FILE --name PROVISIONER [--reschedule-first N]
//
// --reschedule-first N refuses the first N provisionings of each claim with the library's
// ProvisioningReschedule, as a provisioner does when the chosen node cannot have the volume:
// the library then removes the selected-node annotation and the scheduler must choose again.
// Each refusal and each volume made is logged on stderr, one line each ("rescheduled
// NAMESPACE/CLAIM from NODE", "provisioned PV for NAMESPACE/CLAIM on NODE").
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"sync"
	"syscall"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

// hostPathProvisioner makes hostPath volumes on the selected node.
type hostPathProvisioner struct {
	rescheduleFirst int
	mu              sync.Mutex
	refused         map[string]int // claim uid -> refusals so far
}

func (p *hostPathProvisioner) Provision(_ context.Context, o controller.ProvisionOptions) (*v1.PersistentVolume, controller.ProvisioningState, error) {
	claim := o.PVC.Namespace + "/" + o.PVC.Name
	if o.SelectedNodeName == "" {
		return nil, controller.ProvisioningFinished, errors.New("no selected node: this provisioner serves WaitForFirstConsumer classes only")
	}
	p.mu.Lock()
	refuse := p.refused[string(o.PVC.UID)] < p.rescheduleFirst
	if refuse {
		p.refused[string(o.PVC.UID)]++
	}
	p.mu.Unlock()
	if refuse {
		log.Printf("rescheduled %s from %s", claim, o.SelectedNodeName)
		return nil, controller.ProvisioningReschedule, fmt.Errorf("node %s cannot have the volume of %s now", o.SelectedNodeName, claim)
	}
	size := o.PVC.Spec.Resources.Requests[v1.ResourceStorage]
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: o.PVName},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: size},
			AccessModes:                   o.PVC.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
			StorageClassName:              o.StorageClass.Name,
			VolumeMode:                    o.PVC.Spec.VolumeMode,
			PersistentVolumeSource: v1.PersistentVolumeSource{
				HostPath: &v1.HostPathVolumeSource{Path: "/tmp/provisioned/" + o.PVName},
			},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{
				NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{
					Key: "kubernetes.io/hostname", Operator: v1.NodeSelectorOpIn, Values: []string{o.SelectedNodeName},
				}}}},
			}},
		},
	}
	log.Printf("provisioned %s for %s on %s", o.PVName, claim, o.SelectedNodeName)
	return pv, controller.ProvisioningFinished, nil
}

func (p *hostPathProvisioner) Delete(context.Context, *v1.PersistentVolume) error { return nil }

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of a user that may read claims and classes and write volumes and events")
	name := flag.String("name", "", "the provisioner's name, as StorageClasses name it")
	rescheduleFirst := flag.Int("reschedule-first", 0, "refuse the first N provisionings of each claim with ProvisioningReschedule")
	flag.Parse()
	if *kubeconfig == "" || *name == "" {
		fmt.Fprintln(os.Stderr, "usage: provisioner --kubeconfig FILE --name PROVISIONER [--reschedule-first N]")
		os.Exit(2)
	}
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatalf("provisioner: %v", err)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		log.Fatalf("provisioner: %v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	p := &hostPathProvisioner{rescheduleFirst: *rescheduleFirst, refused: map[string]int{}}
	pc := controller.NewProvisionController(ctx, client, *name, p,
		controller.LeaderElection(false),
		controller.ExponentialBackOffOnError(false),
		controller.Threadiness(2))
	log.Printf("provisioner %s running", *name)
	pc.Run(ctx)
}
