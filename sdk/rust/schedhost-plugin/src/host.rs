//! The host: what a plugin may ask of it.

use crate::args::Args;
use crate::export::api;
use crate::state::CycleState;
use crate::status::{Code, Status};
use crate::views::{Labels, NodeInfo, Pod};
use crate::{abi_str, str_of, sys, Id};

/// Log levels of [`Host::log`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum LogLevel {
    /// Trace.
    Trace = sys::SCHEDHOST_LOG_TRACE as i32,
    /// Debug.
    Debug = sys::SCHEDHOST_LOG_DEBUG as i32,
    /// Info.
    Info = sys::SCHEDHOST_LOG_INFO as i32,
    /// Warn.
    Warn = sys::SCHEDHOST_LOG_WARN as i32,
    /// Error.
    Error = sys::SCHEDHOST_LOG_ERROR as i32,
}

/// The framework handle of one plugin instance: interning, logging, the cycle's snapshot,
/// objects of declared kinds. Cheap to copy; every call is re-entrant and may be made from any
/// thread the host called the plugin on.
#[derive(Clone, Copy)]
pub struct Host {
    raw: *mut sys::schedhost_host,
}

// SAFETY: the ABI makes every host function callable from any thread (plugin.h, "The host API").
unsafe impl Send for Host {}
// SAFETY: as Send.
unsafe impl Sync for Host {}

impl Host {
    #[inline]
    pub(crate) fn from_raw(raw: *mut sys::schedhost_host) -> Host {
        Host { raw }
    }
    /// The raw handle, for calls into [`sys`].
    #[inline]
    pub fn raw(&self) -> *mut sys::schedhost_host {
        self.raw
    }
    /// Interns `s` (never fails; ids are stable for the host's process).
    #[inline]
    pub fn intern(&self, s: &str) -> Id {
        // SAFETY: the handle is the host's; the string is read during the call.
        unsafe { api().intern.map(|f| f(self.raw, abi_str(s))).unwrap_or(0) }
    }
    /// The id of `s` without interning it (0 when unknown).
    #[inline]
    pub fn lookup_id(&self, s: &str) -> Id {
        // SAFETY: as intern.
        unsafe { api().lookup_id.map(|f| f(self.raw, abi_str(s))).unwrap_or(0) }
    }
    /// The text of an id.
    #[inline]
    pub fn id_str(&self, id: Id) -> &'static str {
        // SAFETY: id strings are host-owned and live for the process.
        unsafe { api().id_string.map(|f| str_of(f(self.raw, id))).unwrap_or("") }
    }
    /// Logs through the host's logger, tagged with the plugin's name.
    #[inline]
    pub fn log(&self, level: LogLevel, message: &str) {
        // SAFETY: as intern.
        unsafe {
            if let Some(f) = api().log {
                f(self.raw, level as i32, abi_str(message));
            }
        }
    }
    /// The number of nodes in the current cycle's snapshot.
    #[inline]
    pub fn node_count(&self) -> usize {
        // SAFETY: as intern.
        unsafe { api().snapshot_node_count.map(|f| f(self.raw)).unwrap_or(0) }
    }
    /// Node info `index` of the snapshot, valid for the cycle.
    #[inline]
    pub fn node_at<'c>(&self, _state: &CycleState<'c>, index: usize) -> Option<NodeInfo<'c>> {
        // SAFETY: snapshot views live for the cycle, which `state` stands for.
        unsafe { NodeInfo::from_raw(api().snapshot_node_at?(self.raw, index)) }
    }
    /// The snapshot's node info of node `name`, valid for the cycle.
    #[inline]
    pub fn get_node<'c>(&self, _state: &CycleState<'c>, name: &str) -> Option<NodeInfo<'c>> {
        // SAFETY: as node_at.
        unsafe { NodeInfo::from_raw(api().snapshot_get?(self.raw, abi_str(name))) }
    }
    /// The labels of Namespace `namespace_id` (abi 1.1), valid for the cycle; None when there is
    /// no such object.
    #[inline]
    pub fn namespace_labels<'c>(
        &self,
        _state: &CycleState<'c>,
        namespace_id: Id,
    ) -> Option<Labels<'c>> {
        let f = host_fn_since!(namespace_labels)?;
        let mut out = sys::schedhost_labels { items: std::ptr::null(), len: 0 };
        // SAFETY: as node_at.
        let rc = unsafe { f(self.raw, namespace_id, &mut out) };
        (rc == sys::SCHEDHOST_OK).then(|| Labels::new(out))
    }
    /// Binds `pod` to `node` (what a Bind plugin does); the host's reasons for a failure go into
    /// the Bind call's status, which `state` carries.
    #[inline]
    pub fn bind_pod(&self, state: &CycleState<'_>, pod: &Pod<'_>, node: &str) -> Status {
        let Some(f) = api().bind_pod else { return Status::error("the host cannot bind pods") };
        // SAFETY: the views are the host's, the status the running call's.
        let rc = unsafe { f(self.raw, pod.raw(), abi_str(node), state.call_status()) };
        if rc == sys::SCHEDHOST_OK {
            Status::success()
        } else {
            Status::of(Code::Error)
        }
    }
    /// Runs the host's preemption for `pod` from PostFilter with upstream's rules: evicts the
    /// chosen victims and nominates the node into this PostFilter's result. The host's reasons go
    /// into the call's status; the returned Status carries the code.
    #[inline]
    pub fn preempt(
        &self,
        state: &mut CycleState<'_>,
        pod: &Pod<'_>,
        statuses: &NodeStatusMap<'_>,
    ) -> Status {
        let Some(f) = api().preempt else {
            return Status::error("the host has no preemption toolkit");
        };
        // SAFETY: all handles come from the running PostFilter call.
        let rc = unsafe {
            f(
                self.raw,
                state.raw(),
                pod.raw(),
                statuses.raw,
                std::ptr::null(),
                state.post_filter_result(),
                state.call_status(),
            )
        };
        Status::of(if rc < 0 { Code::Error } else { Code::from_raw(rc) })
    }

    /// Reads object `namespace`/`name` of the declared kind at index `kind` of
    /// [`Plugin::KINDS`](crate::Plugin::KINDS) as of this cycle. `Err` carries the host's
    /// result (`SCHEDHOST_E_NOT_FOUND`, `SCHEDHOST_E_NOT_AVAILABLE`, ...).
    #[inline]
    pub fn get_object<'c>(
        &self,
        state: &CycleState<'c>,
        kind: u32,
        namespace: &str,
        name: &str,
    ) -> Result<Args<'c>, i32> {
        self.read_object(state.raw(), kind, namespace, name)
    }
    /// As [`Host::get_object`] outside a cycle (PreEnqueue, QueueSort, queueing hints, the
    /// binding cycle; host abi 1.7): the latest objects the host has, valid until the host's
    /// call into the plugin returns.
    #[inline]
    pub fn get_latest_object<'c>(
        &self,
        kind: u32,
        namespace: &str,
        name: &str,
    ) -> Result<Args<'c>, i32> {
        if api().abi_minor < 7 {
            return Err(sys::SCHEDHOST_E_NOT_AVAILABLE);
        }
        self.read_object(std::ptr::null_mut(), kind, namespace, name)
    }
    fn read_object<'c>(
        &self,
        state: *mut sys::schedhost_cycle_state,
        kind: u32,
        namespace: &str,
        name: &str,
    ) -> Result<Args<'c>, i32> {
        let f = host_fn_since!(object_get).ok_or(sys::SCHEDHOST_E_NOT_AVAILABLE)?;
        let mut out: *const sys::schedhost_config = std::ptr::null();
        // SAFETY: the handles are the host's; the object lives as the state does.
        let rc = unsafe { f(self.raw, state, kind, abi_str(namespace), abi_str(name), &mut out) };
        if rc == sys::SCHEDHOST_OK {
            Ok(Args::from_raw(out))
        } else {
            Err(rc)
        }
    }
    /// Calls `f` on every object of declared kind `kind` in `namespace` ("" for all) until it
    /// returns false.
    #[inline]
    pub fn list_objects<'c, F: FnMut(Args<'c>) -> bool>(
        &self,
        state: &CycleState<'c>,
        kind: u32,
        namespace: &str,
        mut f: F,
    ) -> Result<(), i32> {
        let list = host_fn_since!(object_list).ok_or(sys::SCHEDHOST_E_NOT_AVAILABLE)?;
        unsafe extern "C" fn each<'c, F: FnMut(Args<'c>) -> bool>(
            user: *mut std::ffi::c_void,
            object: *const sys::schedhost_config,
        ) -> i32 {
            let f = &mut *(user as *mut F);
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                f(Args::from_raw(object))
            })) {
                Ok(true) => 0,
                _ => 1,
            }
        }
        // SAFETY: `f` outlives the call; the callback only runs during it.
        let rc = unsafe {
            list(
                self.raw,
                state.raw(),
                kind,
                abi_str(namespace),
                Some(each::<'c, F>),
                (&mut f as *mut _) as *mut std::ffi::c_void,
            )
        };
        if rc == sys::SCHEDHOST_OK {
            Ok(())
        } else {
            Err(rc)
        }
    }
    /// The revision of declared kind `kind`'s objects as this cycle reads them (abi 1.9): equal
    /// revisions mean no object of the kind changed in between; None from an older host.
    #[cfg(schedhost_abi_1_9)]
    #[inline]
    pub fn kind_revision(&self, state: &CycleState<'_>, kind: u32) -> Option<u64> {
        let f = host_fn_since!(object_kind_revision)?;
        let mut out = 0u64;
        // SAFETY: the handles are the host's.
        let rc = unsafe { f(self.raw, state.raw(), kind, &mut out) };
        (rc == sys::SCHEDHOST_OK && out != 0).then_some(out)
    }
    /// Whether declared kind `kind` is mirrored; `Err` says why not.
    #[inline]
    pub fn kind_available(&self, kind: u32) -> Result<(), String> {
        let Some(f) = host_fn_since!(object_kind_status) else {
            return Err(format!(
                "the host speaks plugin ABI 1.{} and mirrors no declared kinds (abi 1.5 does)",
                api().abi_minor
            ));
        };
        let mut message = sys::schedhost_str { data: std::ptr::null(), len: 0 };
        // SAFETY: as intern; the message lives for the process.
        let rc = unsafe { f(self.raw, kind, &mut message) };
        match rc {
            x if x == sys::SCHEDHOST_OK => Ok(()),
            sys::SCHEDHOST_E_OUT_OF_RANGE => Err(format!("no declared kind #{kind}")),
            _ => Err(unsafe { str_of(message) }.to_string()),
        }
    }
    /// Writes an object of declared kind `kind` (abi 1.6): `op` is a `sys::SCHEDHOST_WRITE_*`,
    /// `body` JSON. Blocks for the round trip: call it from Permit or the binding cycle.
    #[inline]
    pub fn write_object(
        &self,
        kind: u32,
        op: u32,
        namespace: &str,
        name: &str,
        body: &str,
    ) -> Result<(), (i32, String)> {
        let f = host_fn_since!(object_write).ok_or((
            sys::SCHEDHOST_E_NOT_AVAILABLE,
            "this host is older than abi 1.6 and cannot write objects".to_string(),
        ))?;
        let mut why = sys::schedhost_str { data: std::ptr::null(), len: 0 };
        // SAFETY: as intern.
        let rc = unsafe {
            f(self.raw, kind, op as i32, abi_str(namespace), abi_str(name), abi_str(body), &mut why)
        };
        if rc == sys::SCHEDHOST_OK {
            Ok(())
        } else {
            Err((rc, unsafe { str_of(why) }.to_string()))
        }
    }
}

/// PostFilter's per-node Filter statuses.
pub struct NodeStatusMap<'a> {
    pub(crate) raw: *const sys::schedhost_node_status_map,
    pub(crate) _p: std::marker::PhantomData<&'a ()>,
}

impl<'a> NodeStatusMap<'a> {
    /// The number of nodes.
    #[inline]
    pub fn len(&self) -> usize {
        // SAFETY: the map is the running call's.
        unsafe { api().node_status_count.map(|f| f(self.raw)).unwrap_or(0) }
    }
    /// Whether there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Node `index`: its name, code and joined reasons.
    #[inline]
    pub fn at(&self, index: usize) -> (&'a str, Code, &'a str) {
        let mut name = sys::schedhost_str { data: std::ptr::null(), len: 0 };
        let mut message = name;
        let mut code = sys::SCHEDHOST_ERROR as i32;
        // SAFETY: as len; the strings live for the call.
        unsafe {
            if let Some(f) = api().node_status_at {
                f(self.raw, index, &mut name, &mut code, &mut message);
            }
            (str_of(name), Code::from_raw(code), str_of(message))
        }
    }
}

/// Where PreFilter narrows the nodes to consider.
pub struct PreFilterResult<'a> {
    pub(crate) raw: *mut sys::schedhost_pre_filter_result,
    pub(crate) _p: std::marker::PhantomData<&'a ()>,
}

impl PreFilterResult<'_> {
    /// Restricts the cycle to `names` (copied); may be called once.
    #[inline]
    pub fn set_nodes(&mut self, names: &[&str]) -> Result<(), String> {
        let v: Vec<sys::schedhost_str> = names.iter().map(|n| abi_str(n)).collect();
        let f = api().pre_filter_result_set_nodes.ok_or("the host takes no PreFilter node set")?;
        // SAFETY: the result is the running call's; the names are copied during the call.
        let rc = unsafe { f(self.raw, v.as_ptr(), v.len()) };
        if rc == sys::SCHEDHOST_OK {
            Ok(())
        } else {
            Err(format!("pre_filter_result_set_nodes failed ({rc})"))
        }
    }
}
