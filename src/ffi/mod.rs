//! The C ABI: `include/minimalloc.h` is generated from this module.
//!
//! One file per handle type: [`problem`], [`solution`], [`options`]; the
//! solve calls that join them in [`solve`].
//! Conventions (those of rustls-ffi):
//! - handles are opaque, made by `*_new` or `minimalloc_solve*`, released
//!   by `*_free`, which accepts NULL;
//! - every fallible call returns a [`minimalloc_status`]; results go
//!   through out-parameters written only on success;
//! - every entry point checks its pointers (NULL gives
//!   `MINIMALLOC_STATUS_NULL_POINTER`) and runs inside [`guard`], which
//!   turns a panic into `MINIMALLOC_STATUS_INTERNAL` instead of unwinding
//!   into C (with `panic = "abort"`, as in the tiny build, nothing can be
//!   caught, and the core does not panic on any input it accepts);
//! - a `const` handle argument means the call does not change the handle:
//!   two threads may solve the same problem at once.
#![allow(non_camel_case_types)]

pub mod options;
pub mod problem;
pub mod solution;
pub mod solve;

use alloc::string::String;
use alloc::vec::Vec;
use core::ffi::{c_char, c_int, CStr};
use core::sync::atomic::{AtomicBool, Ordering};

/// The outcome of a call.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum minimalloc_status {
    /// Success.
    Ok = 0,
    /// Proven: no placement fits the capacity.
    Infeasible = 1,
    /// The timeout passed before an answer.
    Timeout = 2,
    /// The options' cancel flag was set before an answer.
    Cancelled = 3,
    /// An argument is invalid; the handle's last error says which and why.
    InvalidArgument = 4,
    /// A required pointer is NULL.
    NullPointer = 5,
    /// A bug inside the library was caught at the boundary.
    Internal = 6,
    /// No placement found and no proof that none exists (a node limit ran
    /// out, or gap windows let some buffers interleave).
    NotFound = 7,
    /// The feature asked for is not in this build (the tiny build has the
    /// exact search only).
    Unsupported = 8,
}

impl minimalloc_status {
    const ALL: [minimalloc_status; 9] = [
        minimalloc_status::Ok,
        minimalloc_status::Infeasible,
        minimalloc_status::Timeout,
        minimalloc_status::Cancelled,
        minimalloc_status::InvalidArgument,
        minimalloc_status::NullPointer,
        minimalloc_status::Internal,
        minimalloc_status::NotFound,
        minimalloc_status::Unsupported,
    ];

    /// A static name.
    fn text(self) -> &'static CStr {
        match self {
            minimalloc_status::Ok => c"ok",
            minimalloc_status::Infeasible => c"infeasible: no placement fits the capacity",
            minimalloc_status::Timeout => c"timed out",
            minimalloc_status::Cancelled => c"cancelled",
            minimalloc_status::InvalidArgument => c"invalid argument",
            minimalloc_status::NullPointer => c"null pointer",
            minimalloc_status::Internal => c"internal error",
            minimalloc_status::NotFound => c"no placement found (not a proof)",
            minimalloc_status::Unsupported => c"not supported by this build",
        }
    }
}

/// A status as received from C: any `int`, checked before use (an enum
/// with a value it does not name would be undefined behaviour in Rust).
/// The header spells it `minimalloc_status`.
#[repr(transparent)]
pub struct StatusCode(c_int);

/// Runs `f`, turning a panic into `fallback`. With `panic = "abort"` there
/// is nothing to catch.
pub(crate) fn guard<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    #[cfg(panic = "unwind")]
    {
        std::panic::catch_unwind(core::panic::AssertUnwindSafe(f)).unwrap_or(fallback)
    }
    #[cfg(not(panic = "unwind"))]
    {
        let _ = fallback;
        f()
    }
}

/// The message of the last failure on a handle, kept NUL-terminated so
/// that C can read it in place. A small spin lock keeps two threads that
/// share a handle from tearing it.
pub(crate) struct Message {
    busy: AtomicBool,
    /// Set by [`Message::set`], taken by [`settle`]: whether the call now
    /// ending wrote its own message.
    fresh: AtomicBool,
    /// The bytes of the message and a final NUL (none before it), or
    /// nothing for "".
    text: core::cell::UnsafeCell<Vec<u8>>,
}

// Safety: `text` is only touched while `busy` is held.
unsafe impl Sync for Message {}

impl Message {
    pub(crate) const fn new() -> Self {
        Message {
            busy: AtomicBool::new(false),
            fresh: AtomicBool::new(false),
            text: core::cell::UnsafeCell::new(Vec::new()),
        }
    }

    fn lock(&self) {
        while self
            .busy
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            core::hint::spin_loop();
        }
    }

    /// Replaces the bytes (empty for "") under the lock.
    fn replace(&self, bytes: Vec<u8>) {
        self.lock();
        // Safety: the lock is held.
        unsafe { *self.text.get() = bytes };
        self.busy.store(false, Ordering::Release);
    }

    /// Replaces the message (interior NULs, which Rust messages do not
    /// contain, would be dropped).
    pub(crate) fn set(&self, text: &str) {
        self.replace(nul_terminated(&[text.as_bytes()]));
        self.fresh.store(true, Ordering::Relaxed);
    }

    /// Sets the message to `error`'s text.
    pub(crate) fn set_error(&self, error: &crate::problem::Error) {
        let mut text = String::new();
        let _ = error.write_to(&mut text);
        self.set(&text);
    }

    /// Empties the message.
    fn clear(&self) {
        self.replace(Vec::new());
        self.fresh.store(false, Ordering::Relaxed);
    }

    /// A copy of the message with its NUL (empty for "").
    fn bytes(&self) -> Vec<u8> {
        self.lock();
        // Safety: the lock is held.
        let copy = unsafe { (*self.text.get()).clone() };
        self.busy.store(false, Ordering::Release);
        copy
    }

    /// The message, valid until the next change of this handle.
    pub(crate) fn as_ptr(&self) -> *const c_char {
        self.lock();
        // Safety: the lock is held; the buffer stays until the next `set`,
        // as documented for the callers.
        let text = unsafe { &*self.text.get() };
        let p = if text.is_empty() {
            c"".as_ptr()
        } else {
            text.as_ptr().cast()
        };
        self.busy.store(false, Ordering::Release);
        p
    }
}

// The thread's last error: what `minimalloc_last_error` returns. Without
// std there are no thread-locals, and one message serves the process.
#[cfg(feature = "std")]
std::thread_local! {
    static LAST_ERROR: core::cell::RefCell<Vec<u8>> = const { core::cell::RefCell::new(Vec::new()) };
}
#[cfg(not(feature = "std"))]
static LAST_ERROR: Message = Message::new();

/// Sets the thread's last error to `bytes` (NUL-terminated, or empty).
fn set_last_error(bytes: Vec<u8>) {
    #[cfg(feature = "std")]
    LAST_ERROR.with(|e| *e.borrow_mut() = bytes);
    #[cfg(not(feature = "std"))]
    LAST_ERROR.replace(bytes);
}

/// `parts` joined, without NULs inside, with one at the end.
fn nul_terminated(parts: &[&[u8]]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for part in parts {
        bytes.extend_from_slice(part);
    }
    bytes.retain(|&b| b != 0);
    bytes.push(0);
    bytes
}

/// The text of a failure that left no message of its own, NUL-terminated
/// (the caller knows which call failed: the status it returned says so).
fn default_message(status: minimalloc_status) -> Vec<u8> {
    let why: &[u8] = match status {
        minimalloc_status::NullPointer => b"a pointer argument that may not be NULL is NULL",
        other => other.text().to_bytes(),
    };
    nul_terminated(&[why])
}

/// Ends an entry point with `status`. A success clears `message` (the
/// handle's, or the call's own) and the thread's last error. A failure
/// keeps the message the call wrote, or writes what the status means if
/// it wrote none, and makes it the thread's last error too.
fn settle(status: minimalloc_status, message: Option<&Message>) -> minimalloc_status {
    if status == minimalloc_status::Ok {
        if let Some(m) = message {
            m.clear();
        }
        set_last_error(Vec::new());
        return status;
    }
    match message {
        Some(m) => {
            if !m.fresh.swap(false, Ordering::Relaxed) {
                m.replace(default_message(status));
            }
            set_last_error(m.bytes());
        }
        None => set_last_error(default_message(status)),
    }
    status
}

/// Runs the body of an entry point inside [`guard`], then settles its
/// status on the message of its handle: `message_of` finds that message
/// again once the body is done (NULL handles have none).
pub(crate) fn entry<'a>(
    message_of: impl FnOnce() -> Option<&'a Message>,
    body: impl FnOnce() -> minimalloc_status,
) -> minimalloc_status {
    let status = guard(minimalloc_status::Internal, body);
    guard(minimalloc_status::Internal, || settle(status, message_of()))
}

/// Like [`entry`] for calls whose handles carry no message: the body may
/// write one to the message it is given, which becomes the thread's last
/// error.
pub(crate) fn entry_local(body: impl FnOnce(&Message) -> minimalloc_status) -> minimalloc_status {
    let message = Message::new();
    let status = guard(minimalloc_status::Internal, || body(&message));
    guard(minimalloc_status::Internal, || {
        settle(status, Some(&message))
    })
}

/// Records a handle-less failure (or, with `None`, a success) as the
/// thread's last error, for calls that return a pointer.
pub(crate) fn record(failure: Option<&str>) {
    guard((), || match failure {
        Some(text) => set_last_error(nul_terminated(&[text.as_bytes()])),
        None => set_last_error(Vec::new()),
    })
}

/// The message of the most recent failed call on this thread (which
/// buffer, which field, why), or "" if the most recent
/// call that can fail succeeded. It covers the failures that have no handle
/// to keep their message: `minimalloc_problem_new` returning NULL,
/// `minimalloc_solve` (which takes no options), a NULL handle. Never NULL;
/// valid until the next call into the library on this thread. Builds
/// without the standard library (the tiny build) keep one such message for
/// the whole process.
#[no_mangle]
pub extern "C" fn minimalloc_last_error() -> *const c_char {
    guard(c"".as_ptr(), || {
        #[cfg(feature = "std")]
        {
            LAST_ERROR.with(|e| {
                let e = e.borrow();
                if e.is_empty() {
                    c"".as_ptr()
                } else {
                    e.as_ptr().cast()
                }
            })
        }
        #[cfg(not(feature = "std"))]
        {
            LAST_ERROR.as_ptr()
        }
    })
}

/// A static, NUL-terminated description of `status` ("unknown status" for
/// a value that names none). Never NULL.
#[no_mangle]
pub extern "C" fn minimalloc_status_str(status: StatusCode) -> *const c_char {
    guard(c"internal error".as_ptr(), || {
        let text = minimalloc_status::ALL
            .iter()
            .find(|s| **s as c_int == status.0)
            .map_or(c"unknown status", |s| s.text());
        text.as_ptr()
    })
}

/// The library version, e.g. "0.1.0": static, NUL-terminated, the same as
/// `MINIMALLOC_VERSION` in the header it was built with.
#[no_mangle]
pub extern "C" fn minimalloc_version() -> *const c_char {
    const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    VERSION.as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_turns_a_panic_into_the_fallback() {
        let status = guard(minimalloc_status::Internal, || -> minimalloc_status {
            panic!("a bug in the core")
        });
        assert_eq!(status, minimalloc_status::Internal);
        assert_eq!(guard(0, || 7), 7);
    }

    #[test]
    fn every_status_has_a_name_and_others_are_unknown() {
        for s in minimalloc_status::ALL {
            let p = minimalloc_status_str(StatusCode(s as c_int));
            let text = unsafe { core::ffi::CStr::from_ptr(p) }.to_str().unwrap();
            assert!(!text.is_empty() && text != "unknown status");
        }
        for bad in [-1, 9, 1000, c_int::MIN] {
            let p = minimalloc_status_str(StatusCode(bad));
            assert_eq!(
                unsafe { core::ffi::CStr::from_ptr(p) }.to_str().unwrap(),
                "unknown status"
            );
        }
    }

    /// The header committed in include/ is the one the build generates.
    #[test]
    fn committed_header_is_current() {
        let generated = include_str!(concat!(env!("OUT_DIR"), "/minimalloc.h"));
        let committed = include_str!("../../include/minimalloc.h");
        assert!(
            generated == committed,
            "include/minimalloc.h is stale: run `MINIMALLOC_WRITE_HEADER=1 cargo build` and commit it"
        );
    }
}
