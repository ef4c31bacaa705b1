//! `minimalloc_cancel`: a cancel token, a handle of its own so that the
//! caller decides what one request stops: give each solve's options their
//! own token, or one token to many.

use alloc::boxed::Box;
use alloc::sync::Arc;
use core::ffi::c_int;
use core::ptr;
use core::sync::atomic::{AtomicBool, Ordering};

use super::minimalloc_status;

/// A cancel flag that options carry (`minimalloc_options_set_cancel`).
/// Opaque; made by `minimalloc_cancel_new`, released by
/// `minimalloc_cancel_free` (options that carry it keep their own share,
/// so it may be freed first).
pub struct minimalloc_cancel {
    pub(crate) flag: Arc<AtomicBool>,
}

/// A new token, not requested.
#[no_mangle]
pub extern "C" fn minimalloc_cancel_new() -> *mut minimalloc_cancel {
    ffi_guard!(or ptr::null_mut() => {
        Box::into_raw(Box::new(minimalloc_cancel {
            flag: Arc::new(AtomicBool::new(false)),
        }))
    })
}

/// Releases a token. NULL is a no-op. Options that carry it still stop
/// when it was requested.
///
/// # Safety
/// `cancel` is NULL or a handle from `minimalloc_cancel_new` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_cancel_free(cancel: *mut minimalloc_cancel) {
    ffi_guard!(or () => {
        if !cancel.is_null() {
            // Safety: the caller passes a live handle from Box::into_raw.
            drop(unsafe { Box::from_raw(cancel) });
        }
    })
}

/// Requests cancellation: every solve whose options carry the token stops
/// within milliseconds (a fit with `MINIMALLOC_STATUS_CANCELLED`, a
/// minimisation with its best placement so far), and later ones stop at
/// once until `minimalloc_cancel_reset`. May be called from any thread,
/// also while solves run.
///
/// # Safety
/// `cancel` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_cancel_request(
    cancel: *const minimalloc_cancel,
) -> minimalloc_status {
    ffi_guard!(reading c = cancel => {
        c.flag.store(true, Ordering::Relaxed);
        minimalloc_status::Ok
    })
}

/// Withdraws the request, for later solves.
///
/// # Safety
/// `cancel` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_cancel_reset(
    cancel: *const minimalloc_cancel,
) -> minimalloc_status {
    ffi_guard!(reading c = cancel => {
        c.flag.store(false, Ordering::Relaxed);
        minimalloc_status::Ok
    })
}

/// 1 if cancellation is requested, else 0 (also for NULL).
///
/// # Safety
/// `cancel` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_cancel_requested(cancel: *const minimalloc_cancel) -> c_int {
    // Safety: NULL or a live handle, by contract.
    ffi_guard!(or 0 => {
        unsafe { cancel.as_ref() }.map_or(0, |c| c_int::from(c.flag.load(Ordering::Relaxed)))
    })
}
