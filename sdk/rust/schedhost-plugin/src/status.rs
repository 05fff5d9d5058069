//! Status: an extension point's result.

use std::borrow::Cow;

use crate::sys;

/// The framework's status codes, numbered as plugin.h's `schedhost_code`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum Code {
    /// The plugin ran and the pod may go on.
    Success = sys::SCHEDHOST_SUCCESS as i32,
    /// Something went wrong inside the plugin; the cycle fails.
    Error = sys::SCHEDHOST_ERROR as i32,
    /// The pod does not fit here; preemption may help.
    Unschedulable = sys::SCHEDHOST_UNSCHEDULABLE as i32,
    /// The pod does not fit here and preemption cannot help.
    UnschedulableAndUnresolvable = sys::SCHEDHOST_UNSCHEDULABLE_AND_UNRESOLVABLE as i32,
    /// Permit: hold the pod until it is allowed, rejected or times out.
    Wait = sys::SCHEDHOST_WAIT as i32,
    /// PreFilter / PreScore: skip this plugin's Filter / Score for the pod. Bind: let the next
    /// Bind plugin try.
    Skip = sys::SCHEDHOST_SKIP as i32,
    /// The pod waits for something outside the scheduler.
    Pending = sys::SCHEDHOST_PENDING as i32,
}

impl Code {
    /// The code of an ABI value; a value the ABI does not define reads as `Error`, as the host
    /// reads it.
    #[inline]
    pub fn from_raw(raw: i32) -> Code {
        match raw {
            0 => Code::Success,
            2 => Code::Unschedulable,
            3 => Code::UnschedulableAndUnresolvable,
            4 => Code::Wait,
            5 => Code::Skip,
            6 => Code::Pending,
            _ => Code::Error,
        }
    }

    /// Upstream's name of the code ("Success", "Unschedulable", ...).
    #[inline]
    pub fn name(self) -> &'static str {
        match self {
            Code::Success => "Success",
            Code::Error => "Error",
            Code::Unschedulable => "Unschedulable",
            Code::UnschedulableAndUnresolvable => "UnschedulableAndUnresolvable",
            Code::Wait => "Wait",
            Code::Skip => "Skip",
            Code::Pending => "Pending",
        }
    }
}

/// An extension point's result: a code and the reasons behind it, one per distinct cause
/// ("Insufficient cpu"). Two words: a status without reasons (Success, Skip, Wait) allocates
/// nothing and comes back from a call in registers; reasons live behind one pointer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    code: Code,
    // Boxed so that Status is two words (a Vec alone would make it four, returned through
    // memory from every Filter and Score): measured 0.5 ns a call in schedhost-microbench.
    #[allow(clippy::box_collection)]
    reasons: Option<Box<Vec<Cow<'static, str>>>>,
}

impl Default for Status {
    fn default() -> Self {
        Status::success()
    }
}

impl Status {
    /// A status of `code` with one reason.
    #[inline]
    pub fn new(code: Code, reason: impl Into<Cow<'static, str>>) -> Status {
        Status { code, reasons: Some(Box::new(vec![reason.into()])) }
    }
    /// A status of `code` without reasons.
    #[inline]
    pub fn of(code: Code) -> Status {
        Status { code, reasons: None }
    }
    /// Success.
    #[inline]
    pub fn success() -> Status {
        Status::of(Code::Success)
    }
    /// An error inside the plugin.
    #[inline]
    pub fn error(message: impl Into<Cow<'static, str>>) -> Status {
        Status::new(Code::Error, message)
    }
    /// The pod does not fit; preemption may help.
    #[inline]
    pub fn unschedulable(reason: impl Into<Cow<'static, str>>) -> Status {
        Status::new(Code::Unschedulable, reason)
    }
    /// The pod does not fit and preemption cannot help.
    #[inline]
    pub fn unschedulable_and_unresolvable(reason: impl Into<Cow<'static, str>>) -> Status {
        Status::new(Code::UnschedulableAndUnresolvable, reason)
    }
    /// Permit's Wait.
    #[inline]
    pub fn wait() -> Status {
        Status::of(Code::Wait)
    }
    /// Skip this plugin (PreFilter, PreScore, Bind).
    #[inline]
    pub fn skip() -> Status {
        Status::of(Code::Skip)
    }
    /// The pod waits for something outside the scheduler.
    #[inline]
    pub fn pending(reason: impl Into<Cow<'static, str>>) -> Status {
        Status::new(Code::Pending, reason)
    }
    /// Appends one more reason.
    #[inline]
    pub fn with_reason(mut self, reason: impl Into<Cow<'static, str>>) -> Status {
        self.reasons.get_or_insert_with(Default::default).push(reason.into());
        self
    }
    /// The code.
    #[inline]
    pub fn code(&self) -> Code {
        self.code
    }
    /// Whether the code is Success.
    #[inline]
    pub fn is_success(&self) -> bool {
        self.code == Code::Success
    }
    /// The reasons, in order.
    #[inline]
    pub fn reasons(&self) -> impl Iterator<Item = &str> {
        self.reasons.iter().flat_map(|v| v.iter()).map(|r| r.as_ref())
    }
    /// Whether there is any reason.
    #[inline]
    pub fn has_reasons(&self) -> bool {
        self.reasons.as_ref().is_some_and(|v| !v.is_empty())
    }
    /// The reasons joined with ", ", as upstream's Status.Message().
    #[inline]
    pub fn message(&self) -> String {
        self.reasons.as_ref().map(|v| v.join(", ")).unwrap_or_default()
    }
}

impl From<Result<(), String>> for Status {
    /// `Err(message)` is an Error status.
    fn from(r: Result<(), String>) -> Status {
        match r {
            Ok(()) => Status::success(),
            Err(message) => Status::error(message),
        }
    }
}
