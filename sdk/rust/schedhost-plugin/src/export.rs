//! The plugin side: the traits a plugin implements, and the machinery [`export_plugins!`](crate::export_plugins)
//! expands to (descriptors, trampolines that catch panics, the manifest, the negotiation).

use std::any::Any;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::time::Duration;

use crate::args::Args;
use crate::host::{Host, LogLevel, NodeStatusMap, PreFilterResult};
use crate::state::CycleState;
use crate::status::Status;
use crate::views::{Node, NodeInfo, NodeInfoList, Pod, QueuedPod};
use crate::{abi_str, str_of, sys};

// ---------------------------------------------------------------------------------------------
// The traits
// ---------------------------------------------------------------------------------------------

/// An API kind a plugin reads through [`Host::get_object`], named there by its index in
/// [`Plugin::KINDS`].
#[derive(Clone, Copy, Debug)]
pub struct Kind {
    /// The API group ("" for the core group).
    pub group: &'static str,
    /// The version, "v1alpha1".
    pub version: &'static str,
    /// The plural resource, "podgroups".
    pub resource: &'static str,
    /// The kind, "PodGroup".
    pub kind: &'static str,
    /// Namespaced (true) or cluster-scoped.
    pub namespaced: bool,
}

/// A scheduler plugin: its name, version, arguments and declarations. Implement the trait of
/// each extension point it takes part in as well, and list those in [`export_plugins!`](crate::export_plugins).
///
/// A plugin is shared by the host's threads: Filter and Score run concurrently across nodes,
/// so the type is `Send + Sync` and keeps mutable state behind a lock or an atomic.
pub trait Plugin: Sized + Send + Sync + 'static {
    /// The plugin's name, unique across every library a host loads ("TargetLoadPacking").
    const NAME: &'static str;
    /// The plugin's own semver.
    const VERSION: &'static str;
    /// The API kinds it reads (abi 1.5).
    const KINDS: &'static [Kind] = &[];
    /// The parts of a pod's spec it evaluates (abi 1.7), e.g.
    /// "spec.volumes.persistentVolumeClaim".
    const EVALUATES: &'static [&'static str] = &[];

    /// Makes an instance for one profile from its `plugin_config.<NAME>` table (absent when the
    /// profile has none). An `Err` refuses the profile with that message; read arguments with
    /// [`Args::reader`] for errors that name the key and where it is written.
    fn new(host: Host, args: &Args<'_>) -> Result<Self, String>;
}

/// PreEnqueue: whether a pod may enter the active queue.
pub trait PreEnqueuePlugin: Plugin {
    /// Success admits the pod; anything else keeps it gated.
    fn pre_enqueue(&self, pod: &Pod<'_>) -> Status;
}

/// QueueSort: the order of the active queue.
pub trait QueueSortPlugin: Plugin {
    /// Whether `a` pops before `b`. Runs under the queue's lock: a pure comparison.
    fn less(&self, a: &QueuedPod<'_>, b: &QueuedPod<'_>) -> bool;
}

/// A cluster event: an object kind (`sys::SCHEDHOST_RESOURCE_*`, or
/// `sys::SCHEDHOST_RESOURCE_DECLARED_KIND + i` for the plugin's declared kind i) and action bits
/// (`sys::SCHEDHOST_ACTION_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClusterEvent {
    /// The resource.
    pub resource: i32,
    /// The action bits.
    pub actions: i32,
}

/// An event registration: the event, and whether [`EnqueueExtensions::queueing_hint`] decides
/// for it (false: every matching event requeues the pod).
#[derive(Clone, Copy, Debug)]
pub struct Registration {
    /// The event.
    pub event: ClusterEvent,
    /// Ask the plugin's hint.
    pub hint: bool,
}

/// A queueing hint's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueingHint {
    /// The event cannot make the pod schedulable.
    Skip,
    /// Retry the pod.
    Queue,
}

/// The object an event is about.
pub struct EventObject<'a> {
    raw: Option<&'a sys::schedhost_event_object>,
}

impl<'a> EventObject<'a> {
    /// The pod, for pod events.
    pub fn pod(&self) -> Option<Pod<'a>> {
        // SAFETY: the views live for the hint.
        self.raw.and_then(|o| unsafe { Pod::from_raw(o.pod) })
    }
    /// The node, for node events.
    pub fn node(&self) -> Option<Node<'a>> {
        // SAFETY: as pod.
        self.raw.and_then(|o| unsafe { Node::from_raw(o.node) })
    }
    /// The object, for events of a declared kind (host abi 1.6).
    pub fn object(&self) -> Args<'a> {
        match self.raw {
            Some(o) if api().abi_minor >= 6 => Args::from_raw(o.object),
            _ => Args::from_raw(std::ptr::null()),
        }
    }
}

/// EnqueueExtensions: the events that may make a pod this plugin rejected schedulable.
pub trait EnqueueExtensions: Plugin {
    /// The registrations; asked once per instance.
    fn events_to_register(&self) -> Vec<Registration>;
    /// Whether `event` may make `pod` schedulable, for registrations with `hint: true`. Runs on
    /// the queue's thread.
    fn queueing_hint(
        &self,
        _pod: &Pod<'_>,
        _event: ClusterEvent,
        _old: &EventObject<'_>,
        _new: &EventObject<'_>,
    ) -> QueueingHint {
        QueueingHint::Queue
    }
}

/// PreFilter: checks and precomputes once per pod; may narrow the nodes.
pub trait PreFilterPlugin: Plugin {
    /// Skip skips this plugin's Filter for the pod.
    fn pre_filter(
        &self,
        state: &mut CycleState<'_>,
        pod: &Pod<'_>,
        result: &mut PreFilterResult<'_>,
    ) -> Status;
}

/// PreFilter's extensions: what PreFilter computed, updated for a pod added to or removed from a
/// node (preemption, nominated pods). Runs concurrently across nodes.
pub trait PreFilterExtensions: PreFilterPlugin {
    /// `to_add` is now considered on `ni`.
    fn add_pod(
        &self,
        state: &mut CycleState<'_>,
        pod: &Pod<'_>,
        to_add: &Pod<'_>,
        ni: &NodeInfo<'_>,
    ) -> Status;
    /// `to_remove` is no longer considered on `ni`.
    fn remove_pod(
        &self,
        state: &mut CycleState<'_>,
        pod: &Pod<'_>,
        to_remove: &Pod<'_>,
        ni: &NodeInfo<'_>,
    ) -> Status;
}

/// Filter: whether the pod fits on a node. Runs concurrently across nodes.
pub trait FilterPlugin: Plugin {
    /// The verdict for `ni`.
    fn filter(&self, state: &CycleState<'_>, pod: &Pod<'_>, ni: &NodeInfo<'_>) -> Status;
}

/// PostFilter: runs when no node fits (preemption).
pub trait PostFilterPlugin: Plugin {
    /// May nominate a node by returning Success with `Some(node)`.
    fn post_filter(
        &self,
        state: &mut CycleState<'_>,
        pod: &Pod<'_>,
        statuses: &NodeStatusMap<'_>,
    ) -> (Status, Option<String>);
}

/// PreScore: sees the feasible nodes once before Score.
pub trait PreScorePlugin: Plugin {
    /// Skip skips this plugin's Score for the pod.
    fn pre_score(
        &self,
        state: &mut CycleState<'_>,
        pod: &Pod<'_>,
        nodes: &NodeInfoList<'_>,
    ) -> Status;
}

/// Score: ranks a feasible node. Runs concurrently across nodes.
pub trait ScorePlugin: Plugin {
    /// The node's score (within [0, 100] unless NormalizeScore rescales it).
    fn score(
        &self,
        state: &CycleState<'_>,
        pod: &Pod<'_>,
        ni: &NodeInfo<'_>,
    ) -> Result<i64, Status>;
}

/// A node and its score, as NormalizeScore sees them.
#[repr(transparent)]
pub struct NodeScore(sys::schedhost_node_score);

impl NodeScore {
    /// The node.
    pub fn node_info(&self) -> Option<NodeInfo<'_>> {
        // SAFETY: the node info lives for the cycle.
        unsafe { NodeInfo::from_raw(self.0.node_info) }
    }
    /// The score.
    pub fn score(&self) -> i64 {
        self.0.score
    }
    /// Sets the score.
    pub fn set_score(&mut self, score: i64) {
        self.0.score = score;
    }
}

/// NormalizeScore: rescales this plugin's scores into [0, 100].
pub trait ScoreExtensions: ScorePlugin {
    /// Rewrites the scores in place.
    fn normalize_score(
        &self,
        state: &CycleState<'_>,
        pod: &Pod<'_>,
        scores: &mut [NodeScore],
    ) -> Status;
}

/// Reserve and Unreserve.
pub trait ReservePlugin: Plugin {
    /// The pod is assumed on `node`.
    fn reserve(&self, state: &mut CycleState<'_>, pod: &Pod<'_>, node: &str) -> Status;
    /// Undoes Reserve; must be idempotent.
    fn unreserve(&self, state: &mut CycleState<'_>, pod: &Pod<'_>, node: &str);
}

/// Permit: Success, Wait with a timeout, or a rejection.
pub trait PermitPlugin: Plugin {
    /// The verdict, and with Wait how long to wait (capped at 15 minutes by the host).
    fn permit(&self, state: &mut CycleState<'_>, pod: &Pod<'_>, node: &str) -> (Status, Duration);
}

/// PreBind: runs before Bind.
pub trait PreBindPlugin: Plugin {
    /// The verdict.
    fn pre_bind(&self, state: &mut CycleState<'_>, pod: &Pod<'_>, node: &str) -> Status;
}

/// Bind: binds the pod (Skip lets the next Bind plugin try).
pub trait BindPlugin: Plugin {
    /// The verdict.
    fn bind(&self, state: &mut CycleState<'_>, pod: &Pod<'_>, node: &str) -> Status;
}

/// PostBind: informational, after a successful bind.
pub trait PostBindPlugin: Plugin {
    /// Called once the pod is bound.
    fn post_bind(&self, state: &mut CycleState<'_>, pod: &Pod<'_>, node: &str);
}

// ---------------------------------------------------------------------------------------------
// The host table
// ---------------------------------------------------------------------------------------------

static API: AtomicPtr<sys::schedhost_host_api> = AtomicPtr::new(std::ptr::null_mut());

// The table before negotiation: every entry absent, so that a view used outside the host (a
// unit test of plain logic) reads as empty instead of crashing.
static EMPTY_API: sys::schedhost_host_api = unsafe { std::mem::zeroed() };

/// The host's function table (set by the negotiation; an empty table before it).
#[inline]
pub fn api() -> &'static sys::schedhost_host_api {
    let p = API.load(Ordering::Acquire);
    // SAFETY: the table is host-owned and outlives the library.
    if p.is_null() {
        &EMPTY_API
    } else {
        unsafe { &*p }
    }
}

// ---------------------------------------------------------------------------------------------
// Trampolines
// ---------------------------------------------------------------------------------------------

/// One instance as the host holds it.
pub struct Instance<T> {
    plugin: T,
    host: Host,
    registrations: Vec<sys::schedhost_event_registration>,
}

unsafe fn instance<'a, T>(p: *mut c_void) -> &'a Instance<T> {
    &*(p as *const Instance<T>)
}

#[inline]
fn report(status: *mut sys::schedhost_status, s: &Status) -> i32 {
    if !status.is_null() && s.has_reasons() {
        if let Some(add) = api().status_add_reason {
            for r in s.reasons() {
                // SAFETY: the status is the running call's; the reason is copied.
                unsafe { add(status, abi_str(r)) };
            }
        }
    }
    s.code() as i32
}

static QUIET_PANICS: std::sync::Once = std::sync::Once::new();

// Where the last panic on this thread happened, "file:line" (a fixed buffer: a thread-local with
// a destructor would keep the library mapped after the host unloads it).
thread_local! {
    static PANIC_AT: std::cell::Cell<([u8; 120], usize)> = const { std::cell::Cell::new(([0; 120], 0)) };
}

fn remember_location(file: &str, line: u32) {
    let text = format!("{file}:{line}");
    let mut buf = [0u8; 120];
    let mut n = text.len().min(buf.len());
    while !text.is_char_boundary(n) {
        n -= 1;
    }
    buf[..n].copy_from_slice(&text.as_bytes()[..n]);
    PANIC_AT.with(|c| c.set((buf, n)));
}

fn take_location() -> String {
    PANIC_AT.with(|c| {
        let (buf, n) = c.replace(([0; 120], 0));
        String::from_utf8_lossy(&buf[..n]).into_owned()
    })
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    let text = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    };
    match take_location() {
        at if at.is_empty() => text,
        at => format!("{text} (at {at})"),
    }
}

/// What a caught panic becomes: an Error status with the message, and a log line.
fn report_panic(
    host: Option<Host>,
    plugin: &str,
    point: &str,
    payload: &(dyn Any + Send),
    status: *mut sys::schedhost_status,
) -> i32 {
    let message = format!("{plugin} panicked in {point}: {}", panic_message(payload));
    if let Some(h) = host {
        h.log(LogLevel::Error, &message);
    }
    report(status, &Status::error(message))
}

/// Runs `f` for plugin T's extension point `point`, catching a panic.
#[inline(always)]
fn guard<T: Plugin>(
    i: *mut c_void,
    point: &str,
    status: *mut sys::schedhost_status,
    f: impl FnOnce(&Instance<T>) -> Status,
) -> i32 {
    if i.is_null() {
        return report(status, &Status::error("no plugin instance"));
    }
    // SAFETY: the host hands back what create returned.
    let inst = unsafe { instance::<T>(i) };
    match catch_unwind(AssertUnwindSafe(|| f(inst))) {
        Ok(s) => report(status, &s),
        Err(payload) => report_panic(Some(inst.host), T::NAME, point, payload.as_ref(), status),
    }
}

unsafe extern "C" fn create<T: Plugin + Registrations>(
    api_table: *const sys::schedhost_host_api,
    host: *mut sys::schedhost_host,
    args: *const sys::schedhost_config,
    out: *mut *mut c_void,
    status: *mut sys::schedhost_status,
) -> i32 {
    if out.is_null() {
        return sys::SCHEDHOST_ERROR as i32;
    }
    if !api_table.is_null() {
        API.store(api_table as *mut _, Ordering::Release);
    }
    let h = Host::from_raw(host);
    let made = catch_unwind(AssertUnwindSafe(|| {
        let plugin = T::new(h, &Args::from_raw(args))?;
        let registrations = T::registrations(&plugin);
        Ok::<_, String>((plugin, registrations))
    }));
    match made {
        Ok(Ok((plugin, regs))) => {
            let registrations = regs
                .into_iter()
                .map(|r| sys::schedhost_event_registration {
                    event: sys::schedhost_cluster_event {
                        resource: r.event.resource,
                        actions: r.event.actions,
                    },
                    hint: if r.hint { T::HINT } else { None },
                })
                .collect();
            *out =
                Box::into_raw(Box::new(Instance { plugin, host: h, registrations })) as *mut c_void;
            sys::SCHEDHOST_SUCCESS as i32
        }
        Ok(Err(message)) => report(status, &Status::error(message)),
        Err(payload) => report_panic(Some(h), T::NAME, "new", payload.as_ref(), status),
    }
}

unsafe extern "C" fn destroy<T: Plugin>(i: *mut c_void) {
    if !i.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(i as *mut Instance<T>))));
    }
}

/// Whether T has EnqueueExtensions: the registrations to make and its hint trampoline.
#[doc(hidden)]
pub trait Registrations: Plugin {
    const HINT: sys::schedhost_queueing_hint_fn;
    fn registrations(&self) -> Vec<Registration>;
}

unsafe extern "C" fn events_to_register<T: Plugin>(
    i: *mut c_void,
    out: *mut *const sys::schedhost_event_registration,
    out_len: *mut usize,
) -> i32 {
    if i.is_null() || out.is_null() || out_len.is_null() {
        return sys::SCHEDHOST_ERROR as i32;
    }
    let inst = instance::<T>(i);
    *out = inst.registrations.as_ptr();
    *out_len = inst.registrations.len();
    sys::SCHEDHOST_SUCCESS as i32
}

#[doc(hidden)]
pub unsafe extern "C" fn queueing_hint<T: EnqueueExtensions>(
    i: *mut c_void,
    pod: *const sys::schedhost_pod_view,
    event: *const sys::schedhost_cluster_event,
    old: *const sys::schedhost_event_object,
    new: *const sys::schedhost_event_object,
) -> i32 {
    let queue = sys::SCHEDHOST_QUEUE as i32;
    let (Some(pod), Some(event)) = (Pod::from_raw(pod), event.as_ref()) else { return queue };
    if i.is_null() {
        return queue;
    }
    let inst = instance::<T>(i);
    let ev = ClusterEvent { resource: event.resource, actions: event.actions };
    let old = EventObject { raw: old.as_ref() };
    let new = EventObject { raw: new.as_ref() };
    match catch_unwind(AssertUnwindSafe(|| inst.plugin.queueing_hint(&pod, ev, &old, &new))) {
        Ok(QueueingHint::Skip) => sys::SCHEDHOST_QUEUE_SKIP as i32,
        Ok(QueueingHint::Queue) => queue,
        Err(payload) => {
            inst.host.log(
                LogLevel::Error,
                &format!(
                    "{} panicked in its queueing hint: {}",
                    T::NAME,
                    panic_message(payload.as_ref())
                ),
            );
            queue
        }
    }
}

unsafe extern "C" fn pre_enqueue<T: PreEnqueuePlugin>(
    i: *mut c_void,
    pod: *const sys::schedhost_pod_view,
    st: *mut sys::schedhost_status,
) -> i32 {
    guard::<T>(i, "PreEnqueue", st, |inst| match Pod::from_raw(pod) {
        Some(p) => inst.plugin.pre_enqueue(&p),
        None => Status::error("no pod"),
    })
}

unsafe extern "C" fn queue_sort_less<T: QueueSortPlugin>(
    i: *mut c_void,
    a: *const sys::schedhost_queued_pod,
    b: *const sys::schedhost_queued_pod,
) -> i32 {
    let (Some(a), Some(b)) = (a.as_ref(), b.as_ref()) else { return 0 };
    if i.is_null() {
        return 0;
    }
    let inst = instance::<T>(i);
    // No logging here: QueueSort runs under the queue's lock and must not call the host.
    catch_unwind(AssertUnwindSafe(|| inst.plugin.less(&QueuedPod::new(a), &QueuedPod::new(b))))
        .map_or(0, i32::from)
}

unsafe extern "C" fn pre_filter<T: PreFilterPlugin>(
    i: *mut c_void,
    cs: *mut sys::schedhost_cycle_state,
    pod: *const sys::schedhost_pod_view,
    r: *mut sys::schedhost_pre_filter_result,
    st: *mut sys::schedhost_status,
) -> i32 {
    guard::<T>(i, "PreFilter", st, |inst| {
        let Some(p) = Pod::from_raw(pod) else { return Status::error("no pod") };
        let mut state = CycleState::new(cs, st, std::ptr::null_mut());
        let mut result = PreFilterResult { raw: r, _p: PhantomData };
        inst.plugin.pre_filter(&mut state, &p, &mut result)
    })
}

// AddPod and RemovePod: the pod, the pod added or removed, the node.
#[allow(clippy::too_many_arguments)]
unsafe fn pod_change<T: Plugin>(
    i: *mut c_void,
    point: &str,
    cs: *mut sys::schedhost_cycle_state,
    pod: *const sys::schedhost_pod_view,
    other: *const sys::schedhost_pod_view,
    ni: *const sys::schedhost_node_info_view,
    st: *mut sys::schedhost_status,
    f: impl FnOnce(&T, &mut CycleState<'_>, &Pod<'_>, &Pod<'_>, &NodeInfo<'_>) -> Status,
) -> i32 {
    guard::<T>(i, point, st, |inst| {
        let (Some(p), Some(o), Some(n)) =
            (Pod::from_raw(pod), Pod::from_raw(other), NodeInfo::from_raw(ni))
        else {
            return Status::error("missing view");
        };
        f(&inst.plugin, &mut CycleState::new(cs, st, std::ptr::null_mut()), &p, &o, &n)
    })
}

unsafe extern "C" fn pre_filter_add_pod<T: PreFilterExtensions>(
    i: *mut c_void,
    cs: *mut sys::schedhost_cycle_state,
    pod: *const sys::schedhost_pod_view,
    add: *const sys::schedhost_pod_view,
    ni: *const sys::schedhost_node_info_view,
    st: *mut sys::schedhost_status,
) -> i32 {
    pod_change::<T>(i, "AddPod", cs, pod, add, ni, st, |p, s, pod, a, n| p.add_pod(s, pod, a, n))
}

unsafe extern "C" fn pre_filter_remove_pod<T: PreFilterExtensions>(
    i: *mut c_void,
    cs: *mut sys::schedhost_cycle_state,
    pod: *const sys::schedhost_pod_view,
    rm: *const sys::schedhost_pod_view,
    ni: *const sys::schedhost_node_info_view,
    st: *mut sys::schedhost_status,
) -> i32 {
    pod_change::<T>(i, "RemovePod", cs, pod, rm, ni, st, |p, s, pod, r, n| {
        p.remove_pod(s, pod, r, n)
    })
}

unsafe extern "C" fn filter<T: FilterPlugin>(
    i: *mut c_void,
    cs: *const sys::schedhost_cycle_state,
    pod: *const sys::schedhost_pod_view,
    ni: *const sys::schedhost_node_info_view,
    st: *mut sys::schedhost_status,
) -> i32 {
    guard::<T>(i, "Filter", st, |inst| {
        let (Some(p), Some(n)) = (Pod::from_raw(pod), NodeInfo::from_raw(ni)) else {
            return Status::error("missing view");
        };
        inst.plugin.filter(&CycleState::new(cs, st, std::ptr::null_mut()), &p, &n)
    })
}

unsafe extern "C" fn filter_batch<T: FilterPlugin>(
    i: *mut c_void,
    cs: *const sys::schedhost_cycle_state,
    pod: *const sys::schedhost_pod_view,
    nodes: *const *const sys::schedhost_node_info_view,
    n: usize,
    passed: *mut usize,
    st: *mut sys::schedhost_status,
) -> i32 {
    let mut k = 0usize;
    let rc = guard::<T>(i, "Filter", st, |inst| {
        let Some(p) = Pod::from_raw(pod) else { return Status::error("no pod") };
        let state = CycleState::new(cs, st, std::ptr::null_mut());
        let nodes = crate::slice_of(nodes, n);
        while k < nodes.len() {
            let Some(ni) = NodeInfo::from_raw(nodes[k]) else {
                return Status::error("no node info");
            };
            let s = inst.plugin.filter(&state, &p, &ni);
            if !s.is_success() {
                return s;
            }
            k += 1;
        }
        Status::success()
    });
    if !passed.is_null() {
        *passed = k;
    }
    rc
}

unsafe extern "C" fn post_filter<T: PostFilterPlugin>(
    i: *mut c_void,
    cs: *mut sys::schedhost_cycle_state,
    pod: *const sys::schedhost_pod_view,
    m: *const sys::schedhost_node_status_map,
    r: *mut sys::schedhost_post_filter_result,
    st: *mut sys::schedhost_status,
) -> i32 {
    guard::<T>(i, "PostFilter", st, |inst| {
        let Some(p) = Pod::from_raw(pod) else { return Status::error("no pod") };
        let mut state = CycleState::new(cs, st, r);
        let statuses = NodeStatusMap { raw: m, _p: PhantomData };
        let (s, nominated) = inst.plugin.post_filter(&mut state, &p, &statuses);
        if let (Some(node), Some(set)) = (nominated, api().post_filter_result_set_nominated_node) {
            set(r, abi_str(&node));
        }
        s
    })
}

unsafe extern "C" fn pre_score<T: PreScorePlugin>(
    i: *mut c_void,
    cs: *mut sys::schedhost_cycle_state,
    pod: *const sys::schedhost_pod_view,
    nodes: *const *const sys::schedhost_node_info_view,
    n: usize,
    st: *mut sys::schedhost_status,
) -> i32 {
    guard::<T>(i, "PreScore", st, |inst| {
        let Some(p) = Pod::from_raw(pod) else { return Status::error("no pod") };
        let mut state = CycleState::new(cs, st, std::ptr::null_mut());
        inst.plugin.pre_score(&mut state, &p, &NodeInfoList::new(nodes, n))
    })
}

unsafe extern "C" fn score<T: ScorePlugin>(
    i: *mut c_void,
    cs: *const sys::schedhost_cycle_state,
    pod: *const sys::schedhost_pod_view,
    ni: *const sys::schedhost_node_info_view,
    out: *mut i64,
    st: *mut sys::schedhost_status,
) -> i32 {
    guard::<T>(i, "Score", st, |inst| {
        let (Some(p), Some(n)) = (Pod::from_raw(pod), NodeInfo::from_raw(ni)) else {
            return Status::error("missing view");
        };
        match inst.plugin.score(&CycleState::new(cs, st, std::ptr::null_mut()), &p, &n) {
            Ok(v) => {
                if !out.is_null() {
                    *out = v;
                }
                Status::success()
            }
            Err(s) => s,
        }
    })
}

unsafe extern "C" fn score_batch<T: ScorePlugin>(
    i: *mut c_void,
    cs: *const sys::schedhost_cycle_state,
    pod: *const sys::schedhost_pod_view,
    nodes: *const *const sys::schedhost_node_info_view,
    n: usize,
    scores: *mut i64,
    st: *mut sys::schedhost_status,
) -> i32 {
    guard::<T>(i, "Score", st, |inst| {
        let Some(p) = Pod::from_raw(pod) else { return Status::error("no pod") };
        if n > 0 && scores.is_null() {
            return Status::error("no score array");
        }
        let state = CycleState::new(cs, st, std::ptr::null_mut());
        for (k, ni) in crate::slice_of(nodes, n).iter().enumerate() {
            let Some(ni) = NodeInfo::from_raw(*ni) else { return Status::error("no node info") };
            match inst.plugin.score(&state, &p, &ni) {
                Ok(v) => *scores.add(k) = v,
                Err(s) => return s,
            }
        }
        Status::success()
    })
}

unsafe extern "C" fn normalize_score<T: ScoreExtensions>(
    i: *mut c_void,
    cs: *const sys::schedhost_cycle_state,
    pod: *const sys::schedhost_pod_view,
    scores: *mut sys::schedhost_node_score,
    n: usize,
    st: *mut sys::schedhost_status,
) -> i32 {
    guard::<T>(i, "NormalizeScore", st, |inst| {
        let Some(p) = Pod::from_raw(pod) else { return Status::error("no pod") };
        let scores: &mut [NodeScore] = if n == 0 || scores.is_null() {
            &mut []
        } else {
            std::slice::from_raw_parts_mut(scores as *mut NodeScore, n)
        };
        inst.plugin.normalize_score(&CycleState::new(cs, st, std::ptr::null_mut()), &p, scores)
    })
}

// The binding cycle's points (Reserve, Unreserve, Permit, PreBind, Bind, PostBind): the pod and
// the node it goes to. Unreserve and PostBind have no status: they pass NULL, which nothing reads.
unsafe fn pod_on_node<T: Plugin>(
    i: *mut c_void,
    point: &str,
    cs: *mut sys::schedhost_cycle_state,
    pod: *const sys::schedhost_pod_view,
    node: sys::schedhost_str,
    st: *mut sys::schedhost_status,
    f: impl FnOnce(&T, &mut CycleState<'_>, &Pod<'_>, &str) -> Status,
) -> i32 {
    guard::<T>(i, point, st, |inst| {
        let Some(p) = Pod::from_raw(pod) else { return Status::error("no pod") };
        f(&inst.plugin, &mut CycleState::new(cs, st, std::ptr::null_mut()), &p, str_of(node))
    })
}

unsafe extern "C" fn reserve<T: ReservePlugin>(
    i: *mut c_void,
    cs: *mut sys::schedhost_cycle_state,
    pod: *const sys::schedhost_pod_view,
    node: sys::schedhost_str,
    st: *mut sys::schedhost_status,
) -> i32 {
    pod_on_node::<T>(i, "Reserve", cs, pod, node, st, |p, s, pod, node| p.reserve(s, pod, node))
}

unsafe extern "C" fn unreserve<T: ReservePlugin>(
    i: *mut c_void,
    cs: *mut sys::schedhost_cycle_state,
    pod: *const sys::schedhost_pod_view,
    node: sys::schedhost_str,
) {
    pod_on_node::<T>(i, "Unreserve", cs, pod, node, std::ptr::null_mut(), |p, s, pod, node| {
        p.unreserve(s, pod, node);
        Status::success()
    });
}

unsafe extern "C" fn permit<T: PermitPlugin>(
    i: *mut c_void,
    cs: *mut sys::schedhost_cycle_state,
    pod: *const sys::schedhost_pod_view,
    node: sys::schedhost_str,
    timeout_ns: *mut i64,
    st: *mut sys::schedhost_status,
) -> i32 {
    pod_on_node::<T>(i, "Permit", cs, pod, node, st, |p, s, pod, node| {
        let (status, timeout) = p.permit(s, pod, node);
        if !timeout_ns.is_null() {
            *timeout_ns = i64::try_from(timeout.as_nanos()).unwrap_or(i64::MAX);
        }
        status
    })
}

unsafe extern "C" fn pre_bind<T: PreBindPlugin>(
    i: *mut c_void,
    cs: *mut sys::schedhost_cycle_state,
    pod: *const sys::schedhost_pod_view,
    node: sys::schedhost_str,
    st: *mut sys::schedhost_status,
) -> i32 {
    pod_on_node::<T>(i, "PreBind", cs, pod, node, st, |p, s, pod, node| p.pre_bind(s, pod, node))
}

unsafe extern "C" fn bind<T: BindPlugin>(
    i: *mut c_void,
    cs: *mut sys::schedhost_cycle_state,
    pod: *const sys::schedhost_pod_view,
    node: sys::schedhost_str,
    st: *mut sys::schedhost_status,
) -> i32 {
    pod_on_node::<T>(i, "Bind", cs, pod, node, st, |p, s, pod, node| p.bind(s, pod, node))
}

unsafe extern "C" fn post_bind<T: PostBindPlugin>(
    i: *mut c_void,
    cs: *mut sys::schedhost_cycle_state,
    pod: *const sys::schedhost_pod_view,
    node: sys::schedhost_str,
) {
    pod_on_node::<T>(i, "PostBind", cs, pod, node, std::ptr::null_mut(), |p, s, pod, node| {
        p.post_bind(s, pod, node);
        Status::success()
    });
}

// ---------------------------------------------------------------------------------------------
// Descriptors
// ---------------------------------------------------------------------------------------------

/// A plugin descriptor under construction, with the declarations it points at (owned here, on
/// the heap, so the pointers stay put when the descriptor moves). [`export_plugins!`](crate::export_plugins)
/// makes one per plugin and sets the entry of each extension point it lists.
#[doc(hidden)]
pub struct Descriptor {
    raw: sys::schedhost_plugin_descriptor,
    _kinds: Box<[sys::schedhost_kind_decl]>,
    _kind_ptrs: Box<[*const sys::schedhost_kind_decl]>,
    _evaluates: Box<[sys::schedhost_str]>,
}

// SAFETY: a descriptor holds pointers to its own boxes and to 'static data only, never written
// after the table is built.
unsafe impl Send for Descriptor {}
// SAFETY: as Send.
unsafe impl Sync for Descriptor {}

#[doc(hidden)]
pub fn descriptor<T: Registrations>() -> Descriptor {
    let kinds: Box<[sys::schedhost_kind_decl]> = T::KINDS
        .iter()
        .map(|k| sys::schedhost_kind_decl {
            struct_size: std::mem::size_of::<sys::schedhost_kind_decl>(),
            group: abi_str(k.group),
            version: abi_str(k.version),
            resource: abi_str(k.resource),
            kind: abi_str(k.kind),
            scope: if k.namespaced {
                sys::SCHEDHOST_KIND_NAMESPACED as i32
            } else {
                sys::SCHEDHOST_KIND_CLUSTER as i32
            },
            reserved0: 0,
            label_selector: abi_str(""),
            field_selector: abi_str(""),
        })
        .collect();
    let kind_ptrs: Box<[*const sys::schedhost_kind_decl]> =
        kinds.iter().map(|k| k as *const _).collect();
    let evaluates: Box<[sys::schedhost_str]> = T::EVALUATES.iter().map(|s| abi_str(s)).collect();
    // SAFETY: all-zero is a valid descriptor (every entry absent).
    let mut d: sys::schedhost_plugin_descriptor = unsafe { std::mem::zeroed() };
    d.struct_size = std::mem::size_of::<sys::schedhost_plugin_descriptor>();
    d.name = abi_str(T::NAME);
    d.version = abi_str(T::VERSION);
    d.create = Some(create::<T>);
    d.destroy = Some(destroy::<T>);
    if !kind_ptrs.is_empty() {
        d.kinds = kind_ptrs.as_ptr();
        d.kinds_len = kind_ptrs.len();
    }
    if !evaluates.is_empty() {
        d.evaluates = evaluates.as_ptr();
        d.evaluates_len = evaluates.len();
    }
    Descriptor { raw: d, _kinds: kinds, _kind_ptrs: kind_ptrs, _evaluates: evaluates }
}

macro_rules! setter {
    ($name:ident, $bound:ident, $($field:ident = $f:ident),+) => {
        #[doc(hidden)]
        pub fn $name<T: $bound>(d: &mut Descriptor) {
            $( d.raw.$field = Some($f::<T>); )+
        }
    };
}

setter!(set_pre_enqueue, PreEnqueuePlugin, pre_enqueue = pre_enqueue);
setter!(set_queue_sort, QueueSortPlugin, queue_sort_less = queue_sort_less);
setter!(set_pre_filter, PreFilterPlugin, pre_filter = pre_filter);
setter!(
    set_pre_filter_extensions,
    PreFilterExtensions,
    pre_filter_add_pod = pre_filter_add_pod,
    pre_filter_remove_pod = pre_filter_remove_pod
);
setter!(set_filter, FilterPlugin, filter = filter, filter_batch = filter_batch);
setter!(set_post_filter, PostFilterPlugin, post_filter = post_filter);
setter!(set_pre_score, PreScorePlugin, pre_score = pre_score);
setter!(set_score, ScorePlugin, score = score, score_batch = score_batch);
setter!(set_normalize_score, ScoreExtensions, normalize_score = normalize_score);
setter!(set_reserve, ReservePlugin, reserve = reserve, unreserve = unreserve);
setter!(set_permit, PermitPlugin, permit = permit);
setter!(set_pre_bind, PreBindPlugin, pre_bind = pre_bind);
setter!(set_bind, BindPlugin, bind = bind);
setter!(set_post_bind, PostBindPlugin, post_bind = post_bind);

/// Sets the EnqueueExtensions entry (the registrations are asked in `create`).
#[doc(hidden)]
pub fn set_enqueue_extensions<T: EnqueueExtensions>(d: &mut Descriptor) {
    d.raw.events_to_register = Some(events_to_register::<T>);
}

/// The library's table of descriptors, built on the first negotiation and freed when the host
/// unloads the library (the `.fini_array` function [`export_plugins!`](crate::export_plugins)
/// adds), so that nothing the library allocated outlives its mapping.
#[doc(hidden)]
pub struct Table {
    // Never resized after it is built, so the descriptors never move.
    _descriptors: Vec<Descriptor>,
    pointers: Vec<*const sys::schedhost_plugin_descriptor>,
}

// SAFETY: the table holds pointers into its own boxes, never written after it is built.
unsafe impl Send for Table {}

impl Table {
    #[doc(hidden)]
    pub fn new(descriptors: Vec<Descriptor>) -> Table {
        let pointers = descriptors.iter().map(|d| &d.raw as *const _).collect();
        Table { _descriptors: descriptors, pointers }
    }
}

/// Where a library keeps its table: [`export_plugins!`](crate::export_plugins) declares one.
#[doc(hidden)]
pub type TableSlot = std::sync::Mutex<Option<Table>>;

/// Frees the table (the library's `.fini_array` entry: at `dlclose`, or at exit after the host's
/// own destructors).
#[doc(hidden)]
pub fn free_table(slot: &TableSlot) {
    if let Ok(mut t) = slot.lock() {
        t.take();
    }
}

/// The manifest's header lines for this crate's ABI and compiler.
pub const fn manifest_header_len() -> usize {
    header_parts_len(&header_parts())
}

const fn header_parts() -> [&'static str; 9] {
    [
        "schedhost-manifest 1\nabi ",
        ABI_MAJOR_TEXT,
        ".",
        ABI_MINOR_TEXT,
        "\nmin-host-minor 0\nsdk ",
        crate::SDK_VERSION,
        "\ncompiler rustc ",
        crate::RUSTC_VERSION,
        "\n",
    ]
}

// The versions of the bindings in src/sys.rs, as text (build.rs reads them from it).
const ABI_MAJOR_TEXT: &str = env!("SCHEDHOST_ABI_MAJOR_TEXT");
const ABI_MINOR_TEXT: &str = env!("SCHEDHOST_ABI_MINOR_TEXT");

const fn header_parts_len(parts: &[&str]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < parts.len() {
        n += parts[i].len();
        i += 1;
    }
    n
}

/// The manifest's length for plugins (name, version): header, one line per plugin, a NUL.
pub const fn manifest_len(plugins: &[(&str, &str)]) -> usize {
    let mut n = manifest_header_len() + 1;
    let mut i = 0;
    while i < plugins.len() {
        n += "plugin ".len() + plugins[i].0.len() + 1 + plugins[i].1.len() + 1;
        i += 1;
    }
    n
}

const fn put<const N: usize>(mut out: [u8; N], mut pos: usize, s: &str) -> ([u8; N], usize) {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        out[pos] = b[i];
        pos += 1;
        i += 1;
    }
    (out, pos)
}

/// The manifest text (NUL-terminated) the loader reads from the library's file.
pub const fn manifest<const N: usize>(plugins: &[(&str, &str)]) -> [u8; N] {
    let mut out = [0u8; N];
    let mut pos = 0;
    let parts = header_parts();
    let mut i = 0;
    while i < parts.len() {
        (out, pos) = put(out, pos, parts[i]);
        i += 1;
    }
    i = 0;
    while i < plugins.len() {
        (out, pos) = put(out, pos, "plugin ");
        (out, pos) = put(out, pos, plugins[i].0);
        (out, pos) = put(out, pos, " ");
        (out, pos) = put(out, pos, plugins[i].1);
        (out, pos) = put(out, pos, "\n");
        i += 1;
    }
    out
}

/// The negotiation behind `schedhost_plugin_library_v1`.
///
/// # Safety
/// `io` is the host's negotiation struct or NULL.
#[doc(hidden)]
pub unsafe fn negotiate(
    io: *mut sys::schedhost_library_negotiation,
    table: &'static TableSlot,
    build: fn() -> Table,
) -> i32 {
    let Some(io) = io.as_mut() else { return 1 };
    let need = std::mem::offset_of!(sys::schedhost_library_negotiation, error)
        + std::mem::size_of::<sys::schedhost_str>();
    if io.struct_size < need {
        return 1;
    }
    io.plugin_abi_major = sys::SCHEDHOST_ABI_MAJOR;
    io.plugin_abi_minor = sys::SCHEDHOST_ABI_MINOR;
    io.min_host_abi_minor = 0;
    io.sdk_version = abi_str(crate::SDK_VERSION);
    if io.host_abi_major != sys::SCHEDHOST_ABI_MAJOR {
        io.error = abi_str("plugin library was built for another ABI major");
        return 1;
    }
    let min_api = std::mem::offset_of!(sys::schedhost_host_api, find_candidates);
    if io.api.is_null() || (*io.api).struct_size < min_api {
        io.error = abi_str("host API table is missing or too small");
        return 1;
    }
    API.store(io.api as *mut _, Ordering::Release);
    QUIET_PANICS.call_once(|| {
        // A caught panic is reported through the host (status and log) with the location this
        // hook keeps; std's default hook would print to the host's stderr as well.
        std::panic::set_hook(Box::new(|info| {
            if let Some(l) = info.location() {
                remember_location(l.file(), l.line());
            }
        }));
    });
    let Ok(mut slot) = table.lock() else {
        io.error = abi_str("the plugin table is poisoned by an earlier panic");
        return 1;
    };
    if slot.is_none() {
        match catch_unwind(build) {
            Ok(t) => *slot = Some(t),
            Err(_) => {
                io.error = abi_str("the plugin table could not be built (a panic)");
                return 1;
            }
        }
    }
    let Some(t) = slot.as_ref() else { return 1 };
    // The pointers stay valid after the lock is released: the table is only freed at unload.
    io.plugins = t.pointers.as_ptr();
    io.plugins_len = t.pointers.len();
    0
}

/// Exports a plugin library: its manifest, and the entry symbol `schedhost_plugin_library_v1`
/// with a descriptor per plugin. Each plugin names the extension points it implements, which
/// must match the traits it implements (a missing trait is a compile error):
///
/// ```ignore
/// export_plugins!(
///     TargetLoadPacking: [PreScore, Score],
///     Gate: [PreEnqueue, EnqueueExtensions],
/// );
/// ```
///
/// Points: `PreEnqueue`, `QueueSort`, `EnqueueExtensions`, `PreFilter`, `PreFilterExtensions`,
/// `Filter`, `PostFilter`, `PreScore`, `Score`, `ScoreExtensions`, `Reserve`, `Permit`,
/// `PreBind`, `Bind`, `PostBind`. Use it once per library.
#[macro_export]
macro_rules! export_plugins {
    ($($plugin:ty : [$($point:ident),* $(,)?]),+ $(,)?) => {
        $( $crate::__registrations!($plugin; $($point),*); )+

        const __SCHEDHOST_PLUGINS: &[(&str, &str)] = &[
            $( (<$plugin as $crate::Plugin>::NAME, <$plugin as $crate::Plugin>::VERSION) ),+
        ];
        const __SCHEDHOST_MANIFEST_LEN: usize = $crate::__private::manifest_len(__SCHEDHOST_PLUGINS);
        #[used]
        #[link_section = "schedhost_manifest"]
        static __SCHEDHOST_MANIFEST: [u8; __SCHEDHOST_MANIFEST_LEN] =
            $crate::__private::manifest::<__SCHEDHOST_MANIFEST_LEN>(__SCHEDHOST_PLUGINS);

        fn __schedhost_table() -> $crate::__private::Table {
            $crate::__private::Table::new(vec![
                $({
                    let mut d = $crate::__private::descriptor::<$plugin>();
                    $( $crate::__point!(d, $plugin, $point); )*
                    d
                }),+
            ])
        }

        static __SCHEDHOST_TABLE: $crate::__private::TableSlot = ::std::sync::Mutex::new(None);

        // Frees the table when the host unloads the library (no allocation outlives it).
        extern "C" fn __schedhost_fini() {
            $crate::__private::free_table(&__SCHEDHOST_TABLE);
        }
        #[used]
        #[link_section = ".fini_array"]
        static __SCHEDHOST_FINI: extern "C" fn() = __schedhost_fini;

        /// The library's entry symbol (plugin.h).
        ///
        /// # Safety
        /// Called by the host with its negotiation struct.
        #[no_mangle]
        pub unsafe extern "C" fn schedhost_plugin_library_v1(io: *mut $crate::sys::schedhost_library_negotiation) -> i32 {
            // Keep the manifest in the file even when nothing reads it at run time.
            let _ = ::std::ptr::read_volatile(&__SCHEDHOST_MANIFEST[0]);
            $crate::__private::negotiate(io, &__SCHEDHOST_TABLE, __schedhost_table)
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __registrations {
    (@find $plugin:ty; EnqueueExtensions $(, $rest:ident)*) => {
        impl $crate::__private::Registrations for $plugin {
            const HINT: $crate::sys::schedhost_queueing_hint_fn = Some($crate::__private::queueing_hint::<$plugin>);
            fn registrations(&self) -> Vec<$crate::Registration> {
                <$plugin as $crate::EnqueueExtensions>::events_to_register(self)
            }
        }
    };
    (@find $plugin:ty; $other:ident $(, $rest:ident)*) => {
        $crate::__registrations!(@find $plugin; $($rest),*);
    };
    (@find $plugin:ty; ) => {
        impl $crate::__private::Registrations for $plugin {
            const HINT: $crate::sys::schedhost_queueing_hint_fn = None;
            fn registrations(&self) -> Vec<$crate::Registration> {
                Vec::new()
            }
        }
    };
    ($plugin:ty; $($point:ident),*) => {
        $crate::__registrations!(@find $plugin; $($point),*);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __point {
    ($d:ident, $p:ty, PreEnqueue) => { $crate::__private::set_pre_enqueue::<$p>(&mut $d) };
    ($d:ident, $p:ty, QueueSort) => { $crate::__private::set_queue_sort::<$p>(&mut $d) };
    ($d:ident, $p:ty, EnqueueExtensions) => { $crate::__private::set_enqueue_extensions::<$p>(&mut $d) };
    ($d:ident, $p:ty, PreFilter) => { $crate::__private::set_pre_filter::<$p>(&mut $d) };
    ($d:ident, $p:ty, PreFilterExtensions) => { $crate::__private::set_pre_filter_extensions::<$p>(&mut $d) };
    ($d:ident, $p:ty, Filter) => { $crate::__private::set_filter::<$p>(&mut $d) };
    ($d:ident, $p:ty, PostFilter) => { $crate::__private::set_post_filter::<$p>(&mut $d) };
    ($d:ident, $p:ty, PreScore) => { $crate::__private::set_pre_score::<$p>(&mut $d) };
    ($d:ident, $p:ty, Score) => { $crate::__private::set_score::<$p>(&mut $d) };
    ($d:ident, $p:ty, ScoreExtensions) => { $crate::__private::set_normalize_score::<$p>(&mut $d) };
    ($d:ident, $p:ty, Reserve) => { $crate::__private::set_reserve::<$p>(&mut $d) };
    ($d:ident, $p:ty, Permit) => { $crate::__private::set_permit::<$p>(&mut $d) };
    ($d:ident, $p:ty, PreBind) => { $crate::__private::set_pre_bind::<$p>(&mut $d) };
    ($d:ident, $p:ty, Bind) => { $crate::__private::set_bind::<$p>(&mut $d) };
    ($d:ident, $p:ty, PostBind) => { $crate::__private::set_post_bind::<$p>(&mut $d) };
    ($d:ident, $p:ty, $other:ident) => {
        compile_error!(concat!("unknown extension point ", stringify!($other),
            "; the points are PreEnqueue, QueueSort, EnqueueExtensions, PreFilter, PreFilterExtensions, Filter, PostFilter, PreScore, Score, ScoreExtensions, Reserve, Permit, PreBind, Bind, PostBind"))
    };
}
