//! `minimalloc_problem`: buffers and a capacity, built call by call.

use alloc::boxed::Box;
use alloc::string::String;
use core::ffi::c_char;
use core::ptr;

use super::{guard, minimalloc_status, Message};
use crate::problem::{Buffer, Error, Gap, Problem, Window};

/// A problem: the buffers to place and the capacity they must fit below.
/// Opaque; made by `minimalloc_problem_new`, released by
/// `minimalloc_problem_free`.
pub struct minimalloc_problem {
    pub(crate) problem: Problem,
    error: Message,
}

impl minimalloc_problem {
    /// Applies `change` to a copy of buffer `index` and stores it if it is
    /// still valid; otherwise records why and changes nothing.
    fn change(&mut self, index: usize, change: impl FnOnce(&mut Buffer)) -> minimalloc_status {
        let Some(buffer) = self.problem.buffers().get(index) else {
            self.error.set_error(&Error::NoSuchBuffer {
                index,
                len: self.problem.len(),
            });
            return minimalloc_status::InvalidArgument;
        };
        let mut buffer = buffer.clone();
        change(&mut buffer);
        match self.problem.replace(index, buffer) {
            Ok(()) => minimalloc_status::Ok,
            Err(e) => {
                self.error.set_error(&e);
                minimalloc_status::InvalidArgument
            }
        }
    }
}

/// A new problem with no buffers, or NULL if `capacity <= 0`.
#[no_mangle]
pub extern "C" fn minimalloc_problem_new(capacity: i64) -> *mut minimalloc_problem {
    guard(ptr::null_mut(), || match Problem::empty(capacity) {
        Ok(problem) => Box::into_raw(Box::new(minimalloc_problem {
            problem,
            error: Message::new(),
        })),
        Err(_) => ptr::null_mut(),
    })
}

/// Releases a problem. NULL is a no-op.
///
/// # Safety
/// `problem` is NULL or a handle from `minimalloc_problem_new` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_problem_free(problem: *mut minimalloc_problem) {
    guard((), || {
        if !problem.is_null() {
            // Safety: the caller passes a live handle from Box::into_raw.
            drop(unsafe { Box::from_raw(problem) });
        }
    })
}

/// Adds a buffer alive during `[lower, upper)` with `size` bytes whose
/// offset must be a multiple of `alignment`; writes its index to
/// `out_index`. Invalid values give `MINIMALLOC_STATUS_INVALID_ARGUMENT`
/// (see `minimalloc_problem_last_error`) and change nothing.
///
/// # Safety
/// `problem` is NULL or a live handle; `out_index` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_problem_add_buffer(
    problem: *mut minimalloc_problem,
    lower: i64,
    upper: i64,
    size: i64,
    alignment: i64,
    out_index: *mut usize,
) -> minimalloc_status {
    guard(minimalloc_status::Internal, || {
        // Safety: NULL or a live handle, by contract.
        let (Some(h), false) = (unsafe { problem.as_mut() }, out_index.is_null()) else {
            return minimalloc_status::NullPointer;
        };
        let buffer = Buffer::new(String::new(), lower, upper, size).with_alignment(alignment);
        match h.problem.push(buffer) {
            Ok(index) => {
                // Safety: checked non-NULL; writable by contract.
                unsafe { *out_index = index };
                minimalloc_status::Ok
            }
            Err(e) => {
                h.error.set_error(&e);
                minimalloc_status::InvalidArgument
            }
        }
    })
}

/// Adds `n` buffers at once from arrays, all or none: buffer `i` is alive
/// during `[lower[i], upper[i])` with `size[i]` bytes and alignment
/// `alignment[i]` (`alignment` may be NULL: all 1). Writes the index of
/// the first to `out_first`; the others follow in order. With `n == 0`
/// the arrays may be NULL.
///
/// # Safety
/// `problem` is NULL or a live handle; each non-NULL array has `n`
/// readable elements; `out_first` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_problem_add_buffers(
    problem: *mut minimalloc_problem,
    lower: *const i64,
    upper: *const i64,
    size: *const i64,
    alignment: *const i64,
    n: usize,
    out_first: *mut usize,
) -> minimalloc_status {
    guard(minimalloc_status::Internal, || {
        // Safety: NULL or a live handle, by contract.
        let Some(h) = (unsafe { problem.as_mut() }) else {
            return minimalloc_status::NullPointer;
        };
        if out_first.is_null() || (n > 0 && (lower.is_null() || upper.is_null() || size.is_null()))
        {
            return minimalloc_status::NullPointer;
        }
        let array = |p: *const i64| -> &[i64] {
            if n == 0 || p.is_null() {
                &[]
            } else {
                // Safety: non-NULL arrays hold n elements, by contract.
                unsafe { core::slice::from_raw_parts(p, n) }
            }
        };
        let (lower, upper, size, alignment) =
            (array(lower), array(upper), array(size), array(alignment));
        let first = h.problem.len();
        for i in 0..n {
            let mut b = Buffer::new(String::new(), lower[i], upper[i], size[i]);
            b.alignment = alignment.get(i).copied().unwrap_or(1);
            if let Err(e) = h.problem.push(b) {
                h.problem.truncate(first);
                h.error.set_error(&e);
                return minimalloc_status::InvalidArgument;
            }
        }
        // Safety: checked non-NULL; writable by contract.
        unsafe { *out_first = first };
        minimalloc_status::Ok
    })
}

/// Adds a gap `[lower, upper)` to buffer `index`: a stretch of its
/// lifetime where it is dead and its memory free for others.
///
/// # Safety
/// `problem` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_problem_add_gap(
    problem: *mut minimalloc_problem,
    index: usize,
    lower: i64,
    upper: i64,
) -> minimalloc_status {
    guard(minimalloc_status::Internal, || {
        // Safety: NULL or a live handle, by contract.
        let Some(h) = (unsafe { problem.as_mut() }) else {
            return minimalloc_status::NullPointer;
        };
        h.change(index, |b| {
            b.gaps.push(Gap {
                lower,
                upper,
                window: None,
            })
        })
    })
}

/// Adds a gap `[lower, upper)` to buffer `index` during which only the
/// bytes `[window_lower, window_upper)` of it (relative to its offset)
/// stay in use.
///
/// # Safety
/// `problem` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_problem_add_gap_window(
    problem: *mut minimalloc_problem,
    index: usize,
    lower: i64,
    upper: i64,
    window_lower: i64,
    window_upper: i64,
) -> minimalloc_status {
    guard(minimalloc_status::Internal, || {
        // Safety: NULL or a live handle, by contract.
        let Some(h) = (unsafe { problem.as_mut() }) else {
            return minimalloc_status::NullPointer;
        };
        h.change(index, |b| {
            b.gaps.push(Gap {
                lower,
                upper,
                window: Some(Window {
                    lower: window_lower,
                    upper: window_upper,
                }),
            })
        })
    })
}

/// Fixes buffer `index` at `offset`: the solver places it exactly there.
/// A negative `offset` releases it.
///
/// # Safety
/// `problem` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_problem_set_offset(
    problem: *mut minimalloc_problem,
    index: usize,
    offset: i64,
) -> minimalloc_status {
    guard(minimalloc_status::Internal, || {
        // Safety: NULL or a live handle, by contract.
        let Some(h) = (unsafe { problem.as_mut() }) else {
            return minimalloc_status::NullPointer;
        };
        h.change(index, |b| b.offset = (offset >= 0).then_some(offset))
    })
}

/// Gives buffer `index` a hint: an offset to try first (for example the
/// one it had in the previous compile). A negative `hint` removes it.
///
/// # Safety
/// `problem` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_problem_set_hint(
    problem: *mut minimalloc_problem,
    index: usize,
    hint: i64,
) -> minimalloc_status {
    guard(minimalloc_status::Internal, || {
        // Safety: NULL or a live handle, by contract.
        let Some(h) = (unsafe { problem.as_mut() }) else {
            return minimalloc_status::NullPointer;
        };
        h.change(index, |b| b.hint = (hint >= 0).then_some(hint))
    })
}

/// Number of buffers (0 for NULL).
///
/// # Safety
/// `problem` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_problem_len(problem: *const minimalloc_problem) -> usize {
    // Safety: NULL or a live handle, by contract.
    guard(0, || {
        unsafe { problem.as_ref() }.map_or(0, |h| h.problem.len())
    })
}

/// The message of the last failed call on this problem (which buffer,
/// which field, why), or "" if none failed. NULL only for a NULL problem.
/// Valid until the next call that changes the problem.
///
/// # Safety
/// `problem` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_problem_last_error(
    problem: *const minimalloc_problem,
) -> *const c_char {
    // Safety: NULL or a live handle, by contract.
    guard(ptr::null(), || {
        unsafe { problem.as_ref() }.map_or(ptr::null(), |h| h.error.as_ptr())
    })
}
