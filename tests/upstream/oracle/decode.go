package oracle

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/informers"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	policyapi "k8s.io/kubernetes/pkg/apis/policy"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	schedulingapi "k8s.io/kubernetes/pkg/apis/scheduling"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	schedulingapiv1 "k8s.io/kubernetes/pkg/apis/scheduling/v1"
	storageapi "k8s.io/kubernetes/pkg/apis/storage"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	"k8s.io/kubernetes/pkg/registry/core/namespace"
	"k8s.io/kubernetes/pkg/registry/core/node"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolume"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolumeclaim"
	"k8s.io/kubernetes/pkg/registry/core/pod"
	"k8s.io/kubernetes/pkg/registry/policy/poddisruptionbudget"
	"k8s.io/kubernetes/pkg/registry/scheduling/priorityclass"
	"k8s.io/kubernetes/pkg/registry/storage/csidriver"
	"k8s.io/kubernetes/pkg/registry/storage/csinode"
	"k8s.io/kubernetes/pkg/registry/storage/csistoragecapacity"
	"k8s.io/kubernetes/pkg/registry/storage/storageclass"
	"k8s.io/kubernetes/pkg/registry/storage/volumeattachment"
	"k8s.io/kubernetes/plugin/pkg/admission/priority"
)

// CreationEpoch is the creationTimestamp of the first input object that has none; each later
// object without one is a second younger, so input order is age order (preemption prefers to
// evict the youngest of equal-priority pods and treats a bound pod's creation as its start).
var CreationEpoch = time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)

// strictDecoder decodes one document into the versioned type its apiVersion and kind name,
// refusing unknown and duplicate fields as kube-apiserver does for `kubectl apply`
// (fieldValidation=Strict). It neither converts nor defaults.
var strictDecoder = serializer.NewCodecFactory(legacyscheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// kinds are the object kinds the oracle reads, each with the API server's create strategy and
// its internal (unversioned) type, which the strategies and admission work on.
var kinds = map[schema.GroupVersionKind]struct {
	strategy rest.RESTCreateStrategy
	internal func() runtime.Object
}{
	corev1.SchemeGroupVersion.WithKind("Namespace"):             {namespace.Strategy, func() runtime.Object { return &api.Namespace{} }},
	corev1.SchemeGroupVersion.WithKind("Node"):                  {node.Strategy, func() runtime.Object { return &api.Node{} }},
	corev1.SchemeGroupVersion.WithKind("Pod"):                   {pod.Strategy, func() runtime.Object { return &api.Pod{} }},
	policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"): {poddisruptionbudget.Strategy, func() runtime.Object { return &policyapi.PodDisruptionBudget{} }},
	schedulingv1.SchemeGroupVersion.WithKind("PriorityClass"):   {priorityclass.Strategy, func() runtime.Object { return &schedulingapi.PriorityClass{} }},

	corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"): {persistentvolumeclaim.Strategy, func() runtime.Object { return &api.PersistentVolumeClaim{} }},
	corev1.SchemeGroupVersion.WithKind("PersistentVolume"):      {persistentvolume.Strategy, func() runtime.Object { return &api.PersistentVolume{} }},
	storagev1.SchemeGroupVersion.WithKind("StorageClass"):       {storageclass.Strategy, func() runtime.Object { return &storageapi.StorageClass{} }},
	storagev1.SchemeGroupVersion.WithKind("CSINode"):            {csinode.Strategy, func() runtime.Object { return &storageapi.CSINode{} }},
	storagev1.SchemeGroupVersion.WithKind("CSIDriver"):          {csidriver.Strategy, func() runtime.Object { return &storageapi.CSIDriver{} }},
	storagev1.SchemeGroupVersion.WithKind("CSIStorageCapacity"): {csistoragecapacity.Strategy, func() runtime.Object { return &storageapi.CSIStorageCapacity{} }},
	storagev1.SchemeGroupVersion.WithKind("VolumeAttachment"):   {volumeattachment.Strategy, func() runtime.Object { return &storageapi.VolumeAttachment{} }},
}

// listKinds are the list wrappers the oracle unpacks: v1 List and each kind's own list.
var listKinds = map[schema.GroupVersionKind]bool{
	corev1.SchemeGroupVersion.WithKind("List"):                      true,
	corev1.SchemeGroupVersion.WithKind("NamespaceList"):             true,
	corev1.SchemeGroupVersion.WithKind("NodeList"):                  true,
	corev1.SchemeGroupVersion.WithKind("PodList"):                   true,
	policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudgetList"): true,
	schedulingv1.SchemeGroupVersion.WithKind("PriorityClassList"):   true,
	corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaimList"): true,
	corev1.SchemeGroupVersion.WithKind("PersistentVolumeList"):      true,
	storagev1.SchemeGroupVersion.WithKind("StorageClassList"):       true,
	storagev1.SchemeGroupVersion.WithKind("CSINodeList"):            true,
	storagev1.SchemeGroupVersion.WithKind("CSIDriverList"):          true,
	storagev1.SchemeGroupVersion.WithKind("CSIStorageCapacityList"): true,
	storagev1.SchemeGroupVersion.WithKind("VolumeAttachmentList"):   true,
}

const supportedKinds = "Namespace, Node, Pod, PersistentVolumeClaim, PersistentVolume (v1), " +
	"PodDisruptionBudget (policy/v1), PriorityClass (scheduling.k8s.io/v1), " +
	"StorageClass, CSINode, CSIDriver, CSIStorageCapacity, VolumeAttachment (storage.k8s.io/v1) or a List of them"

// sourced is an object with where it came from, for error messages.
type sourced struct {
	obj   runtime.Object
	where string
}

// Decode reads the manifests at paths (multi-document YAML or JSON) and returns their objects
// in input order as kube-apiserver would store them: see Admit.
func Decode(paths []string) ([]runtime.Object, error) {
	var all []sourced
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		objs, err := decodeStream(f, path)
		f.Close()
		if err != nil {
			return nil, err
		}
		all = append(all, objs...)
	}
	return admit(all)
}

// DecodeReader is Decode for one stream; name labels it in error messages.
func DecodeReader(r io.Reader, name string) ([]runtime.Object, error) {
	objs, err := decodeStream(r, name)
	if err != nil {
		return nil, err
	}
	return admit(objs)
}

// Admit applies to objects (of the kinds Decode reads, typed as the versioned API, in creation
// order) what kube-apiserver does to each on create: see admit.
// The objects are not modified; the result holds copies. A typed PDB has no "absent" status:
// its status counts as stated (see Explain) when its status.observedGeneration is set.
func Admit(objs []runtime.Object) ([]runtime.Object, error) {
	in := make([]sourced, len(objs))
	for i, obj := range objs {
		in[i] = sourced{obj.DeepCopyObject(), fmt.Sprintf("object %d", i+1)}
	}
	return admit(in)
}

// decodeStream splits r into documents and decodes each, unpacking lists.
func decodeStream(r io.Reader, name string) ([]sourced, error) {
	docs := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var out []sourced
	for index := 1; ; index++ {
		var raw json.RawMessage
		if err := docs.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: document %d: %w", name, index, err)
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			continue // an empty document, e.g. a trailing "---"
		}
		objs, err := decodeDocument(raw, fmt.Sprintf("%s: document %d", name, index))
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
}

// decodeDocument decodes one JSON document: an object of a supported kind or a list of them.
func decodeDocument(raw []byte, where string) ([]sourced, error) {
	var tm metav1.TypeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	gvk := tm.GroupVersionKind()
	_, known := kinds[gvk]
	if !known && !listKinds[gvk] {
		return nil, fmt.Errorf("%s: kind %q of apiVersion %q is not supported (want %s)", where, tm.Kind, tm.APIVersion, supportedKinds)
	}
	obj, _, err := strictDecoder.Decode(raw, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if known {
		if pdb, ok := obj.(*policyv1.PodDisruptionBudget); ok {
			markObservedStatus(pdb, raw)
		}
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		return []sourced{{obj, where}}, nil
	}
	if list, ok := obj.(*corev1.List); ok {
		var out []sourced
		for i, item := range list.Items {
			objs, err := decodeDocument(item.Raw, fmt.Sprintf("%s, item %d", where, i+1))
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
		return out, nil
	}
	items, err := meta.ExtractList(obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	itemGVK := gvk.GroupVersion().WithKind(tm.Kind[:len(tm.Kind)-len("List")])
	out := make([]sourced, len(items))
	for i, item := range items {
		item.GetObjectKind().SetGroupVersionKind(itemGVK)
		out[i] = sourced{item, fmt.Sprintf("%s, item %d", where, i+1)}
	}
	return out, nil
}

// markObservedStatus records that a manifest states a PDB's status.disruptionsAllowed, even 0,
// by giving it an observedGeneration: Explain computes the status of a PDB no disruption
// controller has observed (observedGeneration 0), and a stated 0 is not "never observed".
func markObservedStatus(pdb *policyv1.PodDisruptionBudget, raw []byte) {
	var stated struct {
		Status struct {
			DisruptionsAllowed *int32 `json:"disruptionsAllowed"`
		} `json:"status"`
	}
	if json.Unmarshal(raw, &stated) == nil && stated.Status.DisruptionsAllowed != nil && pdb.Status.ObservedGeneration == 0 {
		pdb.Status.ObservedGeneration = max(pdb.Generation, 1)
	}
}

// admit does to each object what kube-apiserver does on create, PriorityClasses first (a pod's
// priority comes from them), then the rest in input order:
//   - the namespace of a namespaced object (Pod, PDB, PersistentVolumeClaim, CSIStorageCapacity)
//     defaults to "default"; a cluster-scoped object has none;
//   - the v1 defaulting functions (requests from limits, container port protocol, schedulerName,
//     a node's allocatable from its capacity, a namespace's kubernetes.io/metadata.name label, a
//     claim's and a volume's volumeMode, a volume's reclaim policy, a class's volumeBindingMode
//     and reclaim policy, a CSIDriver's attachRequired, ...);
//   - for a Pod, the Priority admission plugin (priorityClassName, else the global default class,
//     else priority 0 and PreemptLowerPriority; an unknown class is an error), and for a
//     PriorityClass its check that at most one class is the global default;
//   - the create strategy: PrepareForCreate (for a Pod e.g. matchLabelKeys merged into the label
//     selectors of affinity terms and spread constraints), Validate, Canonicalize;
//   - uid and creationTimestamp when missing, deterministic: the uid hashes kind, namespace and
//     name, the timestamp is CreationEpoch plus the object's input position in seconds.
//
// Unlike a create, a stated status is kept: the manifests describe a cluster's state, so a bound
// pod's phase and startTime, a PDB's disruptionsAllowed, a claim's or a volume's phase (Bound,
// Available, ...) or a VolumeAttachment's attached stand as given. The built-in
// PriorityClasses system-cluster-critical and system-node-critical exist, as kube-apiserver
// creates them at start-up; they are not returned.
func admit(objs []sourced) ([]runtime.Object, error) {
	// The plugin's PriorityClass lister reads an informer store that admit fills directly:
	// nothing is listed or watched.
	factory := informers.NewSharedInformerFactory(nil, 0)
	plugin := priority.NewPlugin()
	plugin.SetExternalKubeInformerFactory(factory)
	classes := factory.Scheduling().V1().PriorityClasses().Informer().GetIndexer()
	for _, pc := range schedulingapiv1.SystemPriorityClasses() {
		if err := classes.Add(pc.DeepCopy()); err != nil {
			return nil, err
		}
	}

	out := make([]runtime.Object, len(objs))
	seen := map[string]string{}
	add := func(i int) error {
		obj, err := create(objs[i], i, plugin)
		if err != nil {
			return err
		}
		m, _ := meta.Accessor(obj)
		key := obj.GetObjectKind().GroupVersionKind().Kind + " " + m.GetName()
		if m.GetNamespace() != "" {
			key = obj.GetObjectKind().GroupVersionKind().Kind + " " + m.GetNamespace() + "/" + m.GetName()
		}
		if first, dup := seen[key]; dup {
			return fmt.Errorf("%s: %s already exists (%s)", objs[i].where, key, first)
		}
		seen[key] = objs[i].where
		if pc, ok := obj.(*schedulingv1.PriorityClass); ok {
			if _, exists, _ := classes.Get(pc); exists {
				return fmt.Errorf("%s: PriorityClass %q already exists (built in)", objs[i].where, pc.Name)
			}
			if err := classes.Add(pc); err != nil {
				return err
			}
		}
		out[i] = obj
		return nil
	}
	for i := range objs {
		if _, ok := objs[i].obj.(*schedulingv1.PriorityClass); ok {
			if err := add(i); err != nil {
				return nil, err
			}
		}
	}
	for i := range objs {
		if _, ok := objs[i].obj.(*schedulingv1.PriorityClass); !ok {
			if err := add(i); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// create runs one object through kube-apiserver's create path (see admit); index is its input
// position.
func create(in sourced, index int, plugin *priority.Plugin) (runtime.Object, error) {
	gvks, _, err := legacyscheme.Scheme.ObjectKinds(in.obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.where, err)
	}
	gvk := gvks[0]
	kind, ok := kinds[gvk]
	if !ok {
		return nil, fmt.Errorf("%s: %s is not supported (want %s)", in.where, gvk, supportedKinds)
	}
	obj := in.obj.DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.where, err)
	}
	if m.GetName() == "" {
		// generateName would need the API server's random suffix; the oracle is deterministic.
		return nil, fmt.Errorf("%s: %s has no metadata.name", in.where, gvk.Kind)
	}
	where := fmt.Sprintf("%s (%s %s)", in.where, gvk.Kind, m.GetName())
	if kind.strategy.NamespaceScoped() {
		if m.GetNamespace() == "" {
			m.SetNamespace(metav1.NamespaceDefault)
		}
	} else {
		m.SetNamespace("")
	}
	legacyscheme.Scheme.Default(obj)

	internal := kind.internal()
	if err := legacyscheme.Scheme.Convert(obj, internal, nil); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	ctx := context.Background()
	if err := admitPriority(ctx, plugin, internal, gvk); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	kind.strategy.PrepareForCreate(ctx, internal)
	if errs := kind.strategy.Validate(ctx, internal); len(errs) > 0 {
		return nil, fmt.Errorf("%s: invalid: %w", where, errs.ToAggregate())
	}
	kind.strategy.Canonicalize(internal)

	stored, err := legacyscheme.Scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	if err := legacyscheme.Scheme.Convert(internal, stored, nil); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	keepStatedStatus(in.obj, stored)
	// Reading an object back from storage defaults it again.
	legacyscheme.Scheme.Default(stored)
	stored.GetObjectKind().SetGroupVersionKind(gvk)

	sm, _ := meta.Accessor(stored)
	if sm.GetUID() == "" {
		sum := sha1.Sum([]byte(gvk.Kind + "/" + sm.GetNamespace() + "/" + sm.GetName()))
		sum[6] = sum[6]&0x0f | 0x50 // a name-based (SHA-1) UUID, RFC 4122 version 5
		sum[8] = sum[8]&0x3f | 0x80
		sm.SetUID(types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])))
	}
	if ts := sm.GetCreationTimestamp(); ts.IsZero() {
		sm.SetCreationTimestamp(metav1.NewTime(CreationEpoch.Add(time.Duration(index) * time.Second)))
	}
	return stored, nil
}

// admitPriority runs the Priority admission plugin on a new Pod or PriorityClass (internal
// types): it resolves a pod's priority and preemption policy and checks a class's globalDefault.
func admitPriority(ctx context.Context, plugin *priority.Plugin, obj runtime.Object, gvk schema.GroupVersionKind) error {
	m, _ := meta.Accessor(obj)
	attributes := func(resource schema.GroupVersionResource) admission.Attributes {
		return admission.NewAttributesRecord(obj, nil, gvk, m.GetNamespace(), m.GetName(), resource, "",
			admission.Create, &metav1.CreateOptions{}, false, nil)
	}
	switch obj.(type) {
	case *api.Pod:
		return plugin.Admit(ctx, attributes(corev1.SchemeGroupVersion.WithResource("pods")), nil)
	case *schedulingapi.PriorityClass:
		return plugin.Validate(ctx, attributes(schedulingv1.SchemeGroupVersion.WithResource("priorityclasses")), nil)
	}
	return nil
}

// keepStatedStatus puts the input's status back on a created Pod, PDB, PersistentVolumeClaim,
// PersistentVolume or VolumeAttachment when the input states one (PrepareForCreate resets it):
// see admit.
func keepStatedStatus(input, stored runtime.Object) {
	switch s := stored.(type) {
	case *corev1.Pod:
		if in := input.(*corev1.Pod); !apiequality.Semantic.DeepEqual(in.Status, corev1.PodStatus{}) {
			s.Status = *in.Status.DeepCopy()
		}
	case *policyv1.PodDisruptionBudget:
		s.Status = *input.(*policyv1.PodDisruptionBudget).Status.DeepCopy()
	case *corev1.PersistentVolumeClaim:
		if in := input.(*corev1.PersistentVolumeClaim); !apiequality.Semantic.DeepEqual(in.Status, corev1.PersistentVolumeClaimStatus{}) {
			s.Status = *in.Status.DeepCopy()
		}
	case *corev1.PersistentVolume:
		if in := input.(*corev1.PersistentVolume); !apiequality.Semantic.DeepEqual(in.Status, corev1.PersistentVolumeStatus{}) {
			s.Status = *in.Status.DeepCopy()
		} else {
			// The create stamps the phase Pending with the wall clock's time; the oracle is
			// deterministic and leaves that time out (no scheduler reads it).
			s.Status.LastPhaseTransitionTime = nil
		}
	case *storagev1.VolumeAttachment:
		if in := input.(*storagev1.VolumeAttachment); !apiequality.Semantic.DeepEqual(in.Status, storagev1.VolumeAttachmentStatus{}) {
			s.Status = *in.Status.DeepCopy()
		}
	}
}
