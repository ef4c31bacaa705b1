//! The C ABI: `include/minimalloc.h` is generated from this module.
//!
//! One file per handle type, holding every call on that handle (pools and
//! links on a problem included; everything a solve produced, the conflict
//! and the pools' figures too, on its solution): [`problem`],
//! [`solution`], [`options`], [`cancel`] (the token options carry); the
//! solve calls that join them in [`solve`]; [`progress`] the callback's
//! type and calls, which options carry.
//! Conventions (those of rustls-ffi):
//! - handles are opaque, made by `*_new` or `minimalloc_solve*`, released
//!   by `*_free`, which accepts NULL;
//! - every fallible call returns a [`minimalloc_status`]; results go
//!   through out-parameters written only on success (but a solve, which
//!   hands over a solution whatever its status);
//! - every entry point runs inside one macro, `ffi_guard!`, which checks
//!   the handle pointer (NULL gives `MINIMALLOC_STATUS_NULL_POINTER`),
//!   records the last error, and turns a panic into
//!   `MINIMALLOC_STATUS_INTERNAL` instead of unwinding into C (with `panic = "abort"`, as in the tiny build, nothing can be
//!   caught, and the core does not panic on any input it accepts);
//! - a `const` handle argument means the call does not change the handle:
//!   threads may solve the same problem with the same options at once.
#![allow(non_camel_case_types)]

/// The one way into the library from C: every entry point's body runs
/// inside it. It checks the handle pointer (NULL gives
/// `MINIMALLOC_STATUS_NULL_POINTER` before the body runs), keeps panics
/// from unwinding into C (a panic gives `MINIMALLOC_STATUS_INTERNAL`, or
/// the fallback of a call that returns a value), and records the outcome
/// as the last error: the handle's and the thread's.
///
/// - `on mut h = ptr => body`, `on h = ptr => body`: a call on a handle
///   (`h` binds `&mut` or `&` to it); a refusal's message goes to the
///   handle's last error and the thread's.
/// - `reading h = ptr => body`: a call that reads a handle and leaves its
///   last error as it is (a getter, or a call another thread may make
///   while a solve runs); the thread's last error still tells.
/// - `local m => body`: a call with no handle of its own; `m` is a
///   message for the body to fill, which becomes the thread's last error.
/// - `or fallback => body`: a call that returns a value, not a status;
///   `fallback` if the body panics.
///
/// Bodies return a `minimalloc_status` (but in the last form) and check
/// their other pointers themselves: which may be NULL is each call's own
/// contract.
macro_rules! ffi_guard {
    (on mut $h:ident = $ptr:ident => $body:block) => {
        $crate::ffi::entry(
            // Safety: NULL or a live handle, by the entry point's contract.
            || unsafe { $ptr.as_ref() }.map(|h| &h.error),
            || {
                // Safety: as above.
                let Some($h) = (unsafe { $ptr.as_mut() }) else {
                    return $crate::ffi::minimalloc_status::NullPointer;
                };
                $body
            },
        )
    };
    (on $h:ident = $ptr:ident => $body:block) => {
        $crate::ffi::entry(
            // Safety: NULL or a live handle, by the entry point's contract.
            || unsafe { $ptr.as_ref() }.map(|h| &h.error),
            || {
                // Safety: as above.
                let Some($h) = (unsafe { $ptr.as_ref() }) else {
                    return $crate::ffi::minimalloc_status::NullPointer;
                };
                $body
            },
        )
    };
    (reading $h:ident = $ptr:ident => $body:block) => {
        $crate::ffi::entry(
            || None,
            || {
                // Safety: NULL or a live handle, by the entry point's
                // contract.
                let Some($h) = (unsafe { $ptr.as_ref() }) else {
                    return $crate::ffi::minimalloc_status::NullPointer;
                };
                $body
            },
        )
    };
    (local $m:ident => $body:block) => {
        $crate::ffi::entry_local(|$m| $body)
    };
    (or $fallback:expr => $body:block) => {
        $crate::ffi::guard($fallback, || $body)
    };
}

pub mod cancel;
pub mod declare;
pub mod options;
pub mod problem;
pub mod progress;
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
    /// The options' cancel token was requested before an answer.
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

/// A value behind a small spin lock, for handle fields that C may read
/// from one thread while a solve on another writes them.
pub(crate) struct Locked<T> {
    busy: AtomicBool,
    value: core::cell::UnsafeCell<T>,
}

// Safety: `value` is only touched while `busy` is held.
unsafe impl<T: Send> Sync for Locked<T> {}

impl<T> Locked<T> {
    pub(crate) const fn new(value: T) -> Self {
        Locked {
            busy: AtomicBool::new(false),
            value: core::cell::UnsafeCell::new(value),
        }
    }

    /// Runs `f` on the value, the lock held.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        while self
            .busy
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            core::hint::spin_loop();
        }
        // Safety: the lock is held.
        let r = f(unsafe { &mut *self.value.get() });
        self.busy.store(false, Ordering::Release);
        r
    }
}

/// The message of the last failure on a handle, kept NUL-terminated so
/// that C can read it in place (`None` is ""; all zeros, so that a static
/// one takes no room in the file).
pub(crate) struct Message {
    text: Locked<Option<Vec<u8>>>,
    /// Set by [`Message::set`], taken by [`settle`]: whether the call now
    /// ending wrote its own message.
    fresh: AtomicBool,
}

impl Message {
    pub(crate) const fn new() -> Self {
        Message {
            text: Locked::new(None),
            fresh: AtomicBool::new(false),
        }
    }

    /// Replaces the bytes (NUL-terminated, or `None` for ""); the old ones
    /// are freed after the lock is released.
    fn replace(&self, bytes: Option<Vec<u8>>) {
        let old = self.text.with(|t| core::mem::replace(t, bytes));
        drop(old);
    }

    /// Replaces the message (Rust text: no NUL inside).
    pub(crate) fn set(&self, text: &str) {
        self.replace(Some(nul_terminated(text)));
        self.fresh.store(true, Ordering::Relaxed);
    }

    /// Sets the message to `other`'s.
    pub(crate) fn copy_from(&self, other: &Message) {
        self.replace(other.bytes());
        self.fresh.store(true, Ordering::Relaxed);
    }

    /// Sets the message to `error`'s text.
    pub(crate) fn set_error(&self, error: &crate::model::problem::Error) {
        let mut text = String::new();
        let _ = error.write_to(&mut text);
        self.set(&text);
    }

    /// Empties the message.
    fn clear(&self) {
        self.replace(None);
        self.fresh.store(false, Ordering::Relaxed);
    }

    /// A copy of the message with its NUL.
    fn bytes(&self) -> Option<Vec<u8>> {
        self.text.with(|t| t.clone())
    }

    /// The message, valid until the next change of this handle.
    pub(crate) fn as_ptr(&self) -> *const c_char {
        // The buffer stays until the next change, as documented for the
        // callers.
        self.text.with(|t| match t {
            Some(bytes) => bytes.as_ptr().cast(),
            None => c"".as_ptr(),
        })
    }
}

// The thread's last error: what `minimalloc_last_error` returns. Without
// std there are no thread-locals, and one message serves the process.
#[cfg(feature = "std")]
std::thread_local! {
    static LAST_ERROR: Message = const { Message::new() };
}
#[cfg(not(feature = "std"))]
static LAST_ERROR: Message = Message::new();

/// Sets the thread's last error to `bytes` (NUL-terminated, or `None`).
fn set_last_error(bytes: Option<Vec<u8>>) {
    #[cfg(feature = "std")]
    LAST_ERROR.with(|e| e.replace(bytes));
    #[cfg(not(feature = "std"))]
    LAST_ERROR.replace(bytes);
}

/// `text` with a NUL at the end (messages are Rust text: no NUL inside).
fn nul_terminated(text: &str) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(text.len() + 1);
    bytes.extend_from_slice(text.as_bytes());
    bytes.push(0);
    bytes
}

/// The text of a failure that left no message of its own, NUL-terminated
/// (the caller knows which call failed: the status it returned says so).
fn default_message(status: minimalloc_status) -> Option<Vec<u8>> {
    Some(status.text().to_bytes_with_nul().to_vec())
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
        set_last_error(None);
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

/// What the calls of features left out of this build return (the tiny
/// build has no colocations, pools or callbacks): UNSUPPORTED, also as
/// the thread's last error.
#[cfg(not(feature = "constraints"))]
pub(crate) fn unsupported() -> minimalloc_status {
    settle(minimalloc_status::Unsupported, None)
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
        Some(text) => set_last_error(Some(nul_terminated(text))),
        None => set_last_error(None),
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
    ffi_guard!(or c"".as_ptr() => {
        #[cfg(feature = "std")]
        {
            LAST_ERROR.with(|e| e.as_ptr())
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
    ffi_guard!(or c"internal error".as_ptr() => {
        let text = minimalloc_status::ALL
            .iter()
            .find(|s| **s as c_int == status.0)
            .map_or(c"unknown status", |s| s.text());
        text.as_ptr()
    })
}

/// The library version, e.g. "0.2.0": static, NUL-terminated, the same as
/// `MINIMALLOC_VERSION` in the header it was built with.
#[no_mangle]
pub extern "C" fn minimalloc_version() -> *const c_char {
    const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    ffi_guard!(or c"".as_ptr() => { VERSION.as_ptr().cast() })
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
