//! `minimalloc_problem`: buffers and a capacity, built call by call.

use alloc::boxed::Box;
use alloc::string::String;
use core::ffi::{c_char, c_int};
use core::ptr;

use super::{minimalloc_status, record, Message};
use crate::model::problem::{Buffer, BufferError, Error, Field, Gap, Lifetime, Problem, Window};

/// How the lifetimes and gaps given to a problem are written.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum minimalloc_lifetime {
    /// `[lower, upper)`: alive from `lower` up to, not including, `upper`
    /// (the default).
    HalfOpen = 0,
    /// `[lower, upper]`: alive at both ends (XLA, shared-memory planners).
    Inclusive = 1,
    /// `(lower, upper)`: alive strictly between the ends.
    Exclusive = 2,
}

/// A lifetime convention as received from C, checked before use. The
/// header spells it `minimalloc_lifetime`.
#[repr(transparent)]
pub struct LifetimeCode(c_int);

/// A problem: the buffers to place and the capacity they must fit below.
/// Opaque; made by `minimalloc_problem_new`, released by
/// `minimalloc_problem_free`.
pub struct minimalloc_problem {
    pub(crate) problem: Problem,
    /// How lifetimes and gaps given from now on are written.
    lifetime: Lifetime,
    pub(super) error: Message,
}

impl minimalloc_problem {
    /// `[lower, upper)` for a span written in the problem's convention,
    /// or the error for the buffer at `index` and `field` if it overflows.
    fn span(
        &self,
        index: usize,
        field: Field,
        lower: i64,
        upper: i64,
    ) -> Result<(i64, i64), Error> {
        self.lifetime
            .to_half_open(lower, upper)
            .ok_or_else(|| Error::Buffer {
                index,
                id: String::new(),
                field,
                reason: BufferError::Unconvertible { lower, upper },
            })
    }

    /// Adds a gap in the problem's convention to buffer `index`.
    fn add_gap(
        &mut self,
        index: usize,
        lower: i64,
        upper: i64,
        window: Option<Window>,
    ) -> minimalloc_status {
        let lifetime = self.lifetime;
        self.change(index, |b| {
            let field = Field::Gap(b.gaps.len());
            let (lower, upper) = lifetime
                .to_half_open(lower, upper)
                .ok_or((field, BufferError::Unconvertible { lower, upper }))?;
            b.gaps.push(Gap {
                lower,
                upper,
                window,
            });
            Ok(())
        })
    }

    /// Applies `change` to a copy of buffer `index` and stores it if it is
    /// still valid; otherwise records why (the change's own objection
    /// first) and changes nothing.
    fn change(
        &mut self,
        index: usize,
        change: impl FnOnce(&mut Buffer) -> Result<(), (Field, BufferError)>,
    ) -> minimalloc_status {
        let Some(buffer) = self.problem.buffers().get(index) else {
            self.error.set_error(&Error::NoSuchBuffer {
                index,
                len: self.problem.len(),
            });
            return minimalloc_status::InvalidArgument;
        };
        let mut buffer = buffer.clone();
        let changed = match change(&mut buffer) {
            Ok(()) => self.problem.replace(index, buffer),
            Err((field, reason)) => Err(Error::Buffer {
                index,
                id: buffer.id,
                field,
                reason,
            }),
        };
        match changed {
            Ok(()) => minimalloc_status::Ok,
            Err(e) => {
                self.error.set_error(&e);
                minimalloc_status::InvalidArgument
            }
        }
    }
}

/// A new problem with no buffers, or NULL if `capacity <= 0` (then
/// `minimalloc_last_error` says why). To minimise the height with no upper
/// bound, pass `INT64_MAX`.
#[no_mangle]
pub extern "C" fn minimalloc_problem_new(capacity: i64) -> *mut minimalloc_problem {
    ffi_guard!(or ptr::null_mut() => {
        match Problem::empty(capacity) {
        Ok(problem) => {
            record(None);
            Box::into_raw(Box::new(minimalloc_problem {
                problem,
                lifetime: Lifetime::HalfOpen,
                error: Message::new(),
            }))
        }
        Err(e) => {
            let mut text = String::new();
            let _ = e.write_to(&mut text);
            record(Some(&text));
            ptr::null_mut()
        }
    }
    })
}

/// Releases a problem. NULL is a no-op.
///
/// # Safety
/// `problem` is NULL or a handle from `minimalloc_problem_new` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_problem_free(problem: *mut minimalloc_problem) {
    ffi_guard!(or () => {
        if !problem.is_null() {
            // Safety: the caller passes a live handle from Box::into_raw.
            drop(unsafe { Box::from_raw(problem) });
        }
    })
}

/// Sets how the lifetimes and gaps of buffers added from now on are
/// written: `MINIMALLOC_LIFETIME_HALF_OPEN` (the default),
/// `MINIMALLOC_LIFETIME_INCLUSIVE` or `MINIMALLOC_LIFETIME_EXCLUSIVE`. They
/// are stored half-open. A value that names none is an invalid argument
/// and changes nothing.
///
/// # Safety
/// `problem` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_problem_set_lifetime(
    problem: *mut minimalloc_problem,
    lifetime: LifetimeCode,
) -> minimalloc_status {
    ffi_guard!(on mut h = problem => {
            h.lifetime = match lifetime.0 {
                0 => Lifetime::HalfOpen,
                1 => Lifetime::Inclusive,
                2 => Lifetime::Exclusive,
                _ => {
                    h.error.set(
                        "unknown lifetime convention: use MINIMALLOC_LIFETIME_HALF_OPEN, \
                     _INCLUSIVE or _EXCLUSIVE",
                    );
                    return minimalloc_status::InvalidArgument;
                }
            };
            minimalloc_status::Ok
    })
}

/// Adds a buffer alive during `[lower, upper)` (or as set by
/// `minimalloc_problem_set_lifetime`) with `size` bytes whose
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
    // A batch of one: the same checks and the same errors.
    // Safety: the arrays are the four arguments, one element each; the
    // pointers are as the caller passed them.
    unsafe {
        minimalloc_problem_add_buffers(problem, &lower, &upper, &size, &alignment, 1, out_index)
    }
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
    ffi_guard!(on mut h = problem => {
            if out_first.is_null()
                || (n > 0 && (lower.is_null() || upper.is_null() || size.is_null()))
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
                let pushed = h
                    .span(first + i, Field::Upper, lower[i], upper[i])
                    .and_then(|(lower, upper)| {
                        let mut b = Buffer::new(String::new(), lower, upper, size[i]);
                        b.alignment = alignment.get(i).copied().unwrap_or(1);
                        h.problem.push(b)
                    });
                if let Err(e) = pushed {
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

/// Adds a gap `[lower, upper)` (or in the convention set by
/// `minimalloc_problem_set_lifetime`) to buffer `index`: a stretch of its
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
    ffi_guard!(on mut h = problem => {
            h.add_gap(index, lower, upper, None)
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
    ffi_guard!(on mut h = problem => {
            let window = Window {
                lower: window_lower,
                upper: window_upper,
            };
            h.add_gap(index, lower, upper, Some(window))
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
    ffi_guard!(on mut h = problem => {
            h.change(index, |b| {
                b.offset = (offset >= 0).then_some(offset);
                Ok(())
            })
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
    ffi_guard!(on mut h = problem => {
            h.change(index, |b| {
                b.hint = (hint >= 0).then_some(hint);
                Ok(())
            })
    })
}

/// Number of buffers (0 for NULL).
///
/// # Safety
/// `problem` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_problem_len(problem: *const minimalloc_problem) -> usize {
    // Safety: NULL or a live handle, by contract.
    ffi_guard!(or 0 => {
        unsafe { problem.as_ref() }.map_or(0, |h| h.problem.len())
    })
}

/// The message of the most recent call that changed this problem, if it
/// failed (which buffer, which field, why), or "" if it succeeded: a
/// successful call clears it. NULL only for a NULL problem. Valid until
/// the next call that changes the problem.
///
/// # Safety
/// `problem` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_problem_last_error(
    problem: *const minimalloc_problem,
) -> *const c_char {
    // Safety: NULL or a live handle, by contract.
    ffi_guard!(or ptr::null() => {
        unsafe { problem.as_ref() }.map_or(ptr::null(), |h| h.error.as_ptr())
    })
}
