//! Read-only views of pods and nodes, borrowed from the host for the call that handed them out
//! (a scheduling cycle's pods and node infos live until the cycle ends; the lifetime `'a`
//! keeps a view from outliving the call in safe code).

use std::marker::PhantomData;

use crate::args::Args;
use crate::export::api;
use crate::{ids, slice_of, str_of, sys, Id};

/// A label set: (key, value) pairs of interned ids, sorted by key.
#[derive(Clone, Copy)]
pub struct Labels<'a> {
    items: &'a [sys::schedhost_label],
}

impl<'a> Labels<'a> {
    #[inline]
    pub(crate) fn new(raw: sys::schedhost_labels) -> Labels<'a> {
        // SAFETY: the host's label arrays live as long as the view that holds them.
        Labels { items: unsafe { slice_of(raw.items, raw.len) } }
    }
    /// The value id under `key`.
    #[inline]
    pub fn get(&self, key: Id) -> Option<Id> {
        // A lower bound by hand: label sets are a handful of entries, and this is what Filter
        // and Score ask per node.
        let items = self.items;
        let (mut lo, mut n) = (0usize, items.len());
        while n > 0 {
            let half = n / 2;
            if items[lo + half].key < key {
                lo += half + 1;
                n -= half + 1;
            } else {
                n = half;
            }
        }
        match items.get(lo) {
            Some(l) if l.key == key => Some(l.value),
            _ => None,
        }
    }
    /// Whether `key` is set.
    #[inline]
    pub fn has(&self, key: Id) -> bool {
        self.get(key).is_some()
    }
    /// The number of labels.
    #[inline]
    pub fn len(&self) -> usize {
        self.items.len()
    }
    /// Whether there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    /// The (key, value) pairs, sorted by key.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = (Id, Id)> + 'a {
        self.items.iter().map(|l| (l.key, l.value))
    }
    /// The raw set, for host calls that take one.
    #[inline]
    pub fn raw(&self) -> sys::schedhost_labels {
        sys::schedhost_labels { items: self.items.as_ptr(), len: self.items.len() }
    }
}

/// A resource list (cpu in millicores, memory and storage in bytes), sorted by name id.
#[derive(Clone, Copy)]
pub struct Resources<'a> {
    items: &'a [sys::schedhost_resource],
}

impl<'a> Resources<'a> {
    #[inline]
    pub(crate) fn new(raw: sys::schedhost_resources) -> Resources<'a> {
        // SAFETY: as Labels::new.
        Resources { items: unsafe { slice_of(raw.items, raw.len) } }
    }
    /// The quantity of `name`, 0 when absent.
    #[inline]
    pub fn get(&self, name: Id) -> i64 {
        for r in self.items {
            if r.name == name {
                return r.value;
            }
            if r.name > name {
                break;
            }
        }
        0
    }
    /// Whether `name` is listed.
    #[inline]
    pub fn has(&self, name: Id) -> bool {
        self.items.iter().any(|r| r.name == name)
    }
    /// The (name, quantity) pairs.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = (Id, i64)> + 'a {
        self.items.iter().map(|r| (r.name, r.value))
    }
}

/// A node.
#[derive(Clone, Copy)]
pub struct Node<'a> {
    v: &'a sys::schedhost_node_view,
}

impl<'a> Node<'a> {
    /// A view of a raw node view.
    ///
    /// # Safety
    /// `v` must be a node view the host handed out, valid for `'a`.
    #[inline]
    pub unsafe fn from_raw(v: *const sys::schedhost_node_view) -> Option<Node<'a>> {
        v.as_ref().map(|v| Node { v })
    }
    /// The node's name.
    #[inline]
    pub fn name(&self) -> &'a str {
        // SAFETY: host strings live as long as the view.
        unsafe { str_of(self.v.name) }
    }
    /// The node's name, interned.
    #[inline]
    pub fn name_id(&self) -> Id {
        self.v.name_id
    }
    /// spec.unschedulable.
    #[inline]
    pub fn unschedulable(&self) -> bool {
        self.v.unschedulable != 0
    }
    /// The node's labels.
    #[inline]
    pub fn labels(&self) -> Labels<'a> {
        Labels::new(self.v.labels)
    }
    /// The node's taints.
    #[inline]
    pub fn taints(&self) -> &'a [sys::schedhost_taint] {
        // SAFETY: as name().
        unsafe { slice_of(self.v.taints, self.v.taints_len) }
    }
    /// status.allocatable.
    #[inline]
    pub fn allocatable(&self) -> Resources<'a> {
        Resources::new(self.v.allocatable)
    }
    /// status.capacity.
    #[inline]
    pub fn capacity(&self) -> Resources<'a> {
        Resources::new(self.v.capacity)
    }
    /// The raw view.
    #[inline]
    pub fn raw(&self) -> &'a sys::schedhost_node_view {
        self.v
    }
}

/// A pod.
#[derive(Clone, Copy)]
pub struct Pod<'a> {
    v: &'a sys::schedhost_pod_view,
}

impl<'a> Pod<'a> {
    /// A view of a raw pod view.
    ///
    /// # Safety
    /// `v` must be a pod view the host handed out, valid for `'a`.
    #[inline]
    pub unsafe fn from_raw(v: *const sys::schedhost_pod_view) -> Option<Pod<'a>> {
        v.as_ref().map(|v| Pod { v })
    }
    fn s(&self, s: sys::schedhost_str) -> &'a str {
        // SAFETY: host strings live as long as the view.
        unsafe { str_of(s) }
    }
    /// metadata.name.
    #[inline]
    pub fn name(&self) -> &'a str {
        self.s(self.v.name)
    }
    /// metadata.namespace.
    #[inline]
    pub fn namespace(&self) -> &'a str {
        self.s(self.v.namespace_name)
    }
    /// metadata.namespace, interned.
    #[inline]
    pub fn namespace_id(&self) -> Id {
        self.v.namespace_id
    }
    /// metadata.uid.
    #[inline]
    pub fn uid(&self) -> &'a str {
        self.s(self.v.uid)
    }
    /// The priority resolved from priorityClassName (0 without one).
    #[inline]
    pub fn priority(&self) -> i32 {
        self.v.priority
    }
    /// spec.schedulerName.
    #[inline]
    pub fn scheduler_name(&self) -> &'a str {
        self.s(self.v.scheduler_name)
    }
    /// spec.nodeName ("" while pending).
    #[inline]
    pub fn node_name(&self) -> &'a str {
        self.s(self.v.node_name)
    }
    /// status.nominatedNodeName.
    #[inline]
    pub fn nominated_node_name(&self) -> &'a str {
        self.s(self.v.nominated_node_name)
    }
    /// metadata.labels.
    #[inline]
    pub fn labels(&self) -> Labels<'a> {
        Labels::new(self.v.labels)
    }
    /// The annotation under `key`.
    #[inline]
    pub fn annotation(&self, key: &str) -> Option<&'a str> {
        self.annotations().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
    /// metadata.annotations, (key, value).
    #[inline]
    pub fn annotations(&self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        // SAFETY: as s().
        let items = unsafe { slice_of(self.v.annotations, self.v.annotations_len) };
        items.iter().map(|a| unsafe { (str_of(a.key), str_of(a.value)) })
    }
    /// spec.nodeSelector.
    #[inline]
    pub fn node_selector(&self) -> Labels<'a> {
        Labels::new(self.v.node_selector)
    }
    /// spec.affinity, when set.
    #[inline]
    pub fn affinity(&self) -> Option<&'a sys::schedhost_affinity> {
        // SAFETY: as s().
        unsafe { self.v.affinity.as_ref() }
    }
    /// spec.tolerations.
    #[inline]
    pub fn tolerations(&self) -> &'a [sys::schedhost_toleration] {
        // SAFETY: as s().
        unsafe { slice_of(self.v.tolerations, self.v.tolerations_len) }
    }
    /// spec.topologySpreadConstraints.
    #[inline]
    pub fn spread_constraints(&self) -> &'a [sys::schedhost_spread_constraint] {
        // SAFETY: as s().
        unsafe { slice_of(self.v.spread_constraints, self.v.spread_constraints_len) }
    }
    /// The effective requests: max(init containers, sum of containers) plus overhead.
    #[inline]
    pub fn requests(&self) -> Resources<'a> {
        Resources::new(self.v.requests)
    }
    /// The cpu request with upstream's non-zero default (100m) when unset.
    #[inline]
    pub fn non_zero_milli_cpu(&self) -> i64 {
        self.v.non_zero_milli_cpu
    }
    /// The memory request with upstream's non-zero default (200Mi) when unset.
    #[inline]
    pub fn non_zero_memory(&self) -> i64 {
        self.v.non_zero_memory
    }
    /// The container images, init containers first.
    #[inline]
    pub fn images(&self) -> impl Iterator<Item = &'a str> + 'a {
        // SAFETY: as s().
        let items = unsafe { slice_of(self.v.images, self.v.images_len) };
        items.iter().map(|s| unsafe { str_of(*s) })
    }
    /// The pod's owner references: (kind, name, uid, controller).
    #[inline]
    pub fn owner_refs(&self) -> &'a [sys::schedhost_owner_ref] {
        // SAFETY: as s().
        unsafe { slice_of(self.v.owner_refs, self.v.owner_refs_len) }
    }
    /// The volumes with a meaning for scheduling (host abi 1.8), as a tree; absent when the
    /// pod has none or the host is older.
    #[inline]
    pub fn volumes(&self) -> Args<'a> {
        let has = self.v.struct_size
            >= std::mem::offset_of!(sys::schedhost_pod_view, volumes)
                + std::mem::size_of::<*const sys::schedhost_config>();
        Args::from_raw(if has { self.v.volumes } else { std::ptr::null() })
    }
    /// The raw view.
    #[inline]
    pub fn raw(&self) -> &'a sys::schedhost_pod_view {
        self.v
    }
}

/// A list of pods (a node's pods).
#[derive(Clone, Copy)]
pub struct PodList<'a> {
    items: &'a [*const sys::schedhost_pod_view],
}

impl<'a> PodList<'a> {
    #[inline]
    pub(crate) fn new(p: *const *const sys::schedhost_pod_view, len: usize) -> PodList<'a> {
        // SAFETY: host arrays live as long as the view that holds them.
        PodList { items: unsafe { slice_of(p, len) } }
    }
    /// The number of pods.
    #[inline]
    pub fn len(&self) -> usize {
        self.items.len()
    }
    /// Whether there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    /// The pods.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = Pod<'a>> + 'a {
        self.items.iter().filter_map(|p| unsafe { Pod::from_raw(*p) })
    }
}

/// What Filter and Score read of nearly every node, in one or two cache lines (host abi 1.3).
pub type Summary = sys::schedhost_node_summary;

/// A node with the pods on it and what they use.
#[derive(Clone, Copy)]
pub struct NodeInfo<'a> {
    v: &'a sys::schedhost_node_info_view,
}

impl<'a> NodeInfo<'a> {
    /// A view of a raw node info view.
    ///
    /// # Safety
    /// `v` must be a node info view the host handed out, valid for `'a`.
    #[inline]
    pub unsafe fn from_raw(v: *const sys::schedhost_node_info_view) -> Option<NodeInfo<'a>> {
        v.as_ref().map(|v| NodeInfo { v })
    }
    /// Whether the node info holds a node (a node info of pods whose node was deleted does not).
    #[inline]
    pub fn has_node(&self) -> bool {
        !self.v.node.is_null()
    }
    /// The node, when there is one.
    #[inline]
    pub fn node(&self) -> Option<Node<'a>> {
        // SAFETY: the host's node view lives as long as its node info.
        unsafe { Node::from_raw(self.v.node) }
    }
    /// The node's name ("" without a node).
    #[inline]
    pub fn name(&self) -> &'a str {
        self.node().map(|n| n.name()).unwrap_or("")
    }
    /// The pods on the node.
    #[inline]
    pub fn pods(&self) -> PodList<'a> {
        PodList::new(self.v.pods, self.v.pods_len)
    }
    /// What the node's pods request.
    #[inline]
    pub fn requested(&self) -> Resources<'a> {
        Resources::new(self.v.requested)
    }
    /// The summary, when the host filled one (abi 1.3 and the VALID flag).
    #[inline]
    pub fn summary(&self) -> Option<&'a Summary> {
        if api().abi_minor < 3
            || self.v.struct_size < std::mem::size_of::<sys::schedhost_node_info_view>()
        {
            return None;
        }
        let s = &self.v.summary;
        (s.flags & sys::SCHEDHOST_NODE_SUMMARY_VALID != 0).then_some(s)
    }
    /// The node's allocatable quantity of `name` (0 without a node).
    #[inline]
    pub fn allocatable(&self, name: Id) -> i64 {
        if let Some(s) = self.summary() {
            match name {
                ids::CPU => return s.allocatable_milli_cpu,
                ids::MEMORY => return s.allocatable_memory,
                ids::PODS => return s.allocatable_pods,
                _ => {}
            }
        }
        self.node().map(|n| n.allocatable().get(name)).unwrap_or(0)
    }
    /// What the node's pods request of `name`.
    #[inline]
    pub fn requested_of(&self, name: Id) -> i64 {
        if let Some(s) = self.summary() {
            match name {
                ids::CPU => return s.requested_milli_cpu,
                ids::MEMORY => return s.requested_memory,
                _ => {}
            }
        }
        self.requested().get(name)
    }
    /// The number of pods on the node.
    #[inline]
    pub fn pod_count(&self) -> usize {
        self.summary().map(|s| s.pods_len as usize).unwrap_or(self.v.pods_len)
    }
    /// The node info's generation (changes whenever the node or its pods change).
    #[inline]
    pub fn generation(&self) -> u64 {
        self.v.generation
    }
    /// The raw view.
    #[inline]
    pub fn raw(&self) -> &'a sys::schedhost_node_info_view {
        self.v
    }
}

/// PreScore's feasible nodes.
#[derive(Clone, Copy)]
pub struct NodeInfoList<'a> {
    items: &'a [*const sys::schedhost_node_info_view],
}

impl<'a> NodeInfoList<'a> {
    #[inline]
    pub(crate) fn new(
        p: *const *const sys::schedhost_node_info_view,
        len: usize,
    ) -> NodeInfoList<'a> {
        // SAFETY: the host's array lives for the call.
        NodeInfoList { items: unsafe { slice_of(p, len) } }
    }
    /// The number of nodes.
    #[inline]
    pub fn len(&self) -> usize {
        self.items.len()
    }
    /// Whether there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    /// The nodes.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = NodeInfo<'a>> + 'a {
        self.items.iter().filter_map(|p| unsafe { NodeInfo::from_raw(*p) })
    }
}

/// A pod in the scheduling queue, as QueueSort sees it.
#[derive(Clone, Copy)]
pub struct QueuedPod<'a> {
    q: &'a sys::schedhost_queued_pod,
    _p: PhantomData<&'a ()>,
}

impl<'a> QueuedPod<'a> {
    #[inline]
    pub(crate) fn new(q: &'a sys::schedhost_queued_pod) -> QueuedPod<'a> {
        QueuedPod { q, _p: PhantomData }
    }
    /// The pod.
    #[inline]
    pub fn pod(&self) -> Option<Pod<'a>> {
        // SAFETY: the queued pod's view lives for the comparison.
        unsafe { Pod::from_raw(self.q.pod) }
    }
    /// When the pod was last added to the queue (monotonic nanoseconds).
    #[inline]
    pub fn timestamp_ns(&self) -> i64 {
        self.q.timestamp_ns
    }
    /// How many times the pod was tried.
    #[inline]
    pub fn attempts(&self) -> i32 {
        self.q.attempts
    }
}
