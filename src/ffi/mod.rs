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
    /// The bytes of the message and a final NUL (none before it).
    text: core::cell::UnsafeCell<Vec<u8>>,
}

// Safety: `text` is only touched while `busy` is held.
unsafe impl Sync for Message {}

impl Message {
    pub(crate) fn new() -> Self {
        Message {
            busy: AtomicBool::new(false),
            text: core::cell::UnsafeCell::new(alloc::vec![0]),
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

    /// Replaces the message (interior NULs, which Rust messages do not
    /// contain, would be dropped).
    pub(crate) fn set(&self, text: &str) {
        let mut bytes: Vec<u8> = text.bytes().filter(|&b| b != 0).collect();
        bytes.push(0);
        self.lock();
        // Safety: the lock is held.
        unsafe { *self.text.get() = bytes };
        self.busy.store(false, Ordering::Release);
    }

    /// Sets the message to `error`'s text.
    pub(crate) fn set_error(&self, error: &crate::problem::Error) {
        let mut text = String::new();
        let _ = error.write_to(&mut text);
        self.set(&text);
    }

    /// The message, valid until the next change of this handle.
    pub(crate) fn as_ptr(&self) -> *const c_char {
        self.lock();
        // Safety: the lock is held; the buffer stays until the next `set`,
        // as documented for the callers.
        let p = unsafe { (*self.text.get()).as_ptr() }.cast();
        self.busy.store(false, Ordering::Release);
        p
    }
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
