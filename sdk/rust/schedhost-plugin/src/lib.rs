//! Write [schedhost](https://github.com/schedhost) scheduler plugins in Rust.
//!
//! schedhost runs the Kubernetes scheduling framework and loads every plugin from a shared
//! library built against one C ABI (`schedhost/plugin.h`). This crate is that ABI for Rust:
//! raw bindings ([`sys`]), and over them a safe layer in which a plugin is a type that
//! implements [`Plugin`] plus one trait per extension point it takes part in, exported with
//! [`export_plugins!`].
//!
//! ```no_run
//! use schedhost_plugin::{export_plugins, Args, CycleState, FilterPlugin, Host, NodeInfo,
//!                        Plugin, Pod, Status};
//!
//! pub struct Hello {
//!     host: Host,
//! }
//!
//! impl Plugin for Hello {
//!     const NAME: &'static str = "Hello";
//!     const VERSION: &'static str = "1.0.0";
//!     fn new(host: Host, args: &Args) -> Result<Self, String> {
//!         args.reader(Self::NAME).done()?;
//!         Ok(Hello { host })
//!     }
//! }
//!
//! impl FilterPlugin for Hello {
//!     fn filter(&self, _state: &CycleState, _pod: &Pod, ni: &NodeInfo) -> Status {
//!         let hello = self.host.intern("hello");
//!         match ni.node() {
//!             Some(node) if node.labels().has(hello) => Status::success(),
//!             _ => Status::unschedulable("node(s) did not say hello"),
//!         }
//!     }
//! }
//!
//! export_plugins!(Hello: [Filter]);
//! ```
//!
//! Build it as a `cdylib`; the host loads `target/release/libhello.so` like any plugin
//! library (`[host] libraries = [...]` in its TOML, `schedctl plugins` lists it).
//!
//! What the crate guarantees at the boundary:
//! - views of pods and nodes are borrowed from the host for the call, never copied;
//! - a panic in plugin code is caught where the host called in and becomes an `Error` status
//!   whose reason and log line carry the panic's message; it never unwinds into the host;
//! - the library negotiates the ABI as the C++ SDK does: it refuses a host of another major
//!   and reads fields appended after abi 1.0 only when the host's structs hold them.

#![warn(missing_docs)]

#[rustfmt::skip]
pub mod sys;

// The entry `$field` of the host's table: None when the host's table ends before it (a host
// older than the entry) or leaves it NULL.
macro_rules! host_fn_since {
    ($field:ident) => {
        if $crate::export::api().struct_size
            >= std::mem::offset_of!($crate::sys::schedhost_host_api, $field)
                + std::mem::size_of::<usize>()
        {
            $crate::export::api().$field
        } else {
            None
        }
    };
}

mod args;
mod export;
mod host;
mod state;
mod status;
mod views;

#[cfg(feature = "testing")]
pub mod testing;

pub use args::{ArgKind, Args, ArgsReader, IntOptions, QuantityOptions, StringOptions};
pub use export::{
    BindPlugin, ClusterEvent, EnqueueExtensions, EventObject, FilterPlugin, Kind, NodeScore,
    PermitPlugin, Plugin, PostBindPlugin, PostFilterPlugin, PreBindPlugin, PreEnqueuePlugin,
    PreFilterExtensions, PreFilterPlugin, PreScorePlugin, QueueSortPlugin, QueueingHint,
    Registration, ReservePlugin, ScoreExtensions, ScorePlugin,
};
pub use host::{Host, LogLevel, NodeStatusMap, PreFilterResult};
pub use state::CycleState;
pub use status::{Code, Status};
pub use views::{
    Labels, Node, NodeInfo, NodeInfoList, Pod, PodList, QueuedPod, Resources, Summary,
};

/// An interned string id (label keys and values, namespaces, resource names, node names).
pub type Id = sys::schedhost_id;

/// Well-known interned ids, fixed by the ABI.
pub mod ids {
    use super::{sys, Id};
    /// The empty string.
    pub const EMPTY: Id = sys::SCHEDHOST_ID_EMPTY;
    /// "cpu", in millicores.
    pub const CPU: Id = sys::SCHEDHOST_ID_CPU;
    /// "memory", in bytes.
    pub const MEMORY: Id = sys::SCHEDHOST_ID_MEMORY;
    /// "ephemeral-storage", in bytes.
    pub const EPHEMERAL_STORAGE: Id = sys::SCHEDHOST_ID_EPHEMERAL_STORAGE;
    /// "pods", a count.
    pub const PODS: Id = sys::SCHEDHOST_ID_PODS;
    /// "kubernetes.io/hostname".
    pub const LABEL_HOSTNAME: Id = sys::SCHEDHOST_ID_LABEL_HOSTNAME;
    /// "topology.kubernetes.io/zone".
    pub const LABEL_ZONE: Id = sys::SCHEDHOST_ID_LABEL_ZONE;
    /// "topology.kubernetes.io/region".
    pub const LABEL_REGION: Id = sys::SCHEDHOST_ID_LABEL_REGION;
}

/// The highest score a Score plugin may give after NormalizeScore.
pub const MAX_NODE_SCORE: i64 = sys::SCHEDHOST_MAX_NODE_SCORE as i64;
/// The lowest score a Score plugin may give after NormalizeScore.
pub const MIN_NODE_SCORE: i64 = sys::SCHEDHOST_MIN_NODE_SCORE as i64;
/// The version of the C SDK this crate's bindings were generated from ("1.9.0").
pub const SDK_VERSION: &str = env!("SCHEDHOST_SDK_VERSION_TEXT");
/// The rustc that built this crate (the manifest's `compiler` line).
pub const RUSTC_VERSION: &str = env!("SCHEDHOST_RUSTC_VERSION");

#[doc(hidden)]
pub mod __private {
    pub use crate::export::*;
}

/// Views an ABI string as a `&str`, without copying or checking it: the ABI's strings are UTF-8
/// (plugin.h; the host decodes every name, label and annotation from JSON or YAML, which are),
/// and a check per string would cost Filter and Score a third of their time. Debug builds check.
///
/// # Safety
/// `s.data` must point at `s.len` readable bytes of UTF-8 that outlive `'a` (or `s.len` be 0).
#[inline]
pub(crate) unsafe fn str_of<'a>(s: sys::schedhost_str) -> &'a str {
    if s.len == 0 || s.data.is_null() {
        return "";
    }
    let bytes = std::slice::from_raw_parts(s.data.cast::<u8>(), s.len);
    debug_assert!(
        std::str::from_utf8(bytes).is_ok(),
        "the host handed out a string that is not UTF-8"
    );
    std::str::from_utf8_unchecked(bytes)
}

/// An ABI string viewing `s` (no copy; valid while `s` is).
#[inline]
pub(crate) fn abi_str(s: &str) -> sys::schedhost_str {
    sys::schedhost_str { data: s.as_ptr().cast(), len: s.len() }
}

/// A slice from an ABI (pointer, length) pair; empty for a NULL pointer.
///
/// # Safety
/// `p` must point at `len` valid `T`s that outlive `'a`, or `len` be 0.
#[inline]
pub(crate) unsafe fn slice_of<'a, T>(p: *const T, len: usize) -> &'a [T] {
    if len == 0 || p.is_null() {
        &[]
    } else {
        std::slice::from_raw_parts(p, len)
    }
}
