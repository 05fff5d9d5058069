//! CycleState: per-cycle values shared by a profile's plugins.

use std::any::{Any, TypeId};
use std::ffi::c_void;
use std::marker::PhantomData;

use crate::export::api;
use crate::{sys, Id};

/// The cycle's state: values of the plugins' own types, stored by the host under interned keys.
/// The host owns a written value from then on and drops it (through this crate) when the cycle
/// ends; preemption's simulations clone it. Writes happen in PreFilter, PreScore, Reserve and
/// Permit, never concurrently; reads may run on many threads (values must be `Send + Sync`).
pub struct CycleState<'a> {
    raw: *mut sys::schedhost_cycle_state,
    call_status: *mut sys::schedhost_status,
    post_filter_result: *mut sys::schedhost_post_filter_result,
    _p: PhantomData<&'a ()>,
}

// A value with its type, so that a read with another type (or of a value another plugin wrote
// under the same key) answers None instead of misreading memory.
#[repr(C)]
struct Slot<T> {
    type_id: TypeId,
    value: T,
}

unsafe extern "C" fn drop_slot<T>(p: *mut c_void) {
    if !p.is_null() {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            drop(Box::from_raw(p as *mut Slot<T>))
        }));
    }
}

unsafe extern "C" fn clone_slot<T: Clone + 'static>(p: *const c_void) -> *mut c_void {
    if p.is_null() {
        return std::ptr::null_mut();
    }
    let slot = &*(p as *const Slot<T>);
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| slot.value.clone())) {
        Ok(value) => {
            Box::into_raw(Box::new(Slot { type_id: TypeId::of::<T>(), value })) as *mut c_void
        }
        Err(_) => std::ptr::null_mut(),
    }
}

impl<'a> CycleState<'a> {
    #[inline]
    pub(crate) fn new(
        raw: *const sys::schedhost_cycle_state,
        call_status: *mut sys::schedhost_status,
        post_filter_result: *mut sys::schedhost_post_filter_result,
    ) -> CycleState<'a> {
        CycleState { raw: raw as *mut _, call_status, post_filter_result, _p: PhantomData }
    }

    /// Stores `value` under `key`, replacing any earlier value. Preemption's simulations get
    /// clones of it.
    #[inline]
    pub fn write<T: Any + Clone + Send + Sync>(&mut self, key: Id, value: T) -> Result<(), String> {
        self.store(key, value, Some(clone_slot::<T>))
    }

    /// Stores a value that cannot be cloned: cloned states (preemption) go without it.
    #[inline]
    pub fn write_uncloned<T: Any + Send + Sync>(
        &mut self,
        key: Id,
        value: T,
    ) -> Result<(), String> {
        self.store(key, value, None)
    }

    fn store<T: Any + Send + Sync>(
        &mut self,
        key: Id,
        value: T,
        clone: sys::schedhost_state_clone_fn,
    ) -> Result<(), String> {
        let p = Box::into_raw(Box::new(Slot { type_id: TypeId::of::<T>(), value }));
        let Some(write) = api().cycle_state_write else {
            // SAFETY: `p` was never handed out.
            unsafe { drop(Box::from_raw(p)) };
            return Err("the host has no cycle state".into());
        };
        // SAFETY: the host owns `p` from now on and drops it through drop_slot.
        let rc = unsafe { write(self.raw, key, p as *mut c_void, Some(drop_slot::<T>), clone) };
        if rc == sys::SCHEDHOST_OK {
            Ok(())
        } else {
            // The host did not take it.
            unsafe { drop(Box::from_raw(p)) };
            Err(format!("cycle_state_write failed ({rc})"))
        }
    }

    /// The value under `key`, when there is one of type `T` written by this crate.
    #[inline]
    pub fn read<T: Any>(&self, key: Id) -> Option<&T> {
        let mut out: *mut c_void = std::ptr::null_mut();
        // SAFETY: the state is the running call's.
        let rc = unsafe { api().cycle_state_read?(self.raw, key, &mut out) };
        if rc != sys::SCHEDHOST_OK || out.is_null() {
            return None;
        }
        // SAFETY: values this crate writes are Slot<T>, whose TypeId sits first (repr(C)).
        unsafe {
            let type_id = std::ptr::read(out as *const TypeId);
            (type_id == TypeId::of::<T>()).then(|| &(*(out as *const Slot<T>)).value)
        }
    }

    /// Deletes (and drops) the value under `key`.
    #[inline]
    pub fn delete(&mut self, key: Id) {
        // SAFETY: as read.
        unsafe {
            if let Some(f) = api().cycle_state_delete {
                f(self.raw, key);
            }
        }
    }

    /// The raw state.
    #[inline]
    pub fn raw(&self) -> *mut sys::schedhost_cycle_state {
        self.raw
    }
    #[inline]
    pub(crate) fn call_status(&self) -> *mut sys::schedhost_status {
        self.call_status
    }
    #[inline]
    pub(crate) fn post_filter_result(&self) -> *mut sys::schedhost_post_filter_result {
        self.post_filter_result
    }
}
