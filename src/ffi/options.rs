//! `minimalloc_options`: how to solve (timeout, cancel flag, node limit)
//! and what the last solve did. Every field is atomic, so that another
//! thread may cancel while a solve runs.

use alloc::boxed::Box;
use alloc::sync::Arc;
use core::ffi::c_char;
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use core::time::Duration;

use super::problem::minimalloc_problem;
use super::solution::minimalloc_solution;
use super::{guard, minimalloc_status, Message};
use crate::plan::{plan, Options, Status};
use crate::text::{
    format,
    Arg::{I, U},
};

/// Settings of a solve and the statistics of the last one. Opaque; made by
/// `minimalloc_options_new`, released by `minimalloc_options_free`.
pub struct minimalloc_options {
    timeout_ms: AtomicU64,
    node_limit: AtomicU64,
    cancel: Arc<AtomicBool>,
    nodes: AtomicU64,
    elapsed_ns: AtomicU64,
    error: Message,
}

/// Options with no timeout, no node limit, the cancel flag clear.
#[no_mangle]
pub extern "C" fn minimalloc_options_new() -> *mut minimalloc_options {
    guard(ptr::null_mut(), || {
        Box::into_raw(Box::new(minimalloc_options {
            timeout_ms: AtomicU64::new(0),
            node_limit: AtomicU64::new(0),
            cancel: Arc::new(AtomicBool::new(false)),
            nodes: AtomicU64::new(0),
            elapsed_ns: AtomicU64::new(0),
            error: Message::new(),
        }))
    })
}

/// Releases options. NULL is a no-op. No solve may be using them.
///
/// # Safety
/// `options` is NULL or a handle from `minimalloc_options_new` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_free(options: *mut minimalloc_options) {
    guard((), || {
        if !options.is_null() {
            // Safety: the caller passes a live handle from Box::into_raw.
            drop(unsafe { Box::from_raw(options) });
        }
    })
}

/// Stops solves after `timeout_ms` milliseconds (0: no timeout).
///
/// # Safety
/// `options` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_set_timeout_ms(
    options: *mut minimalloc_options,
    timeout_ms: u64,
) -> minimalloc_status {
    with_options(options, |o| {
        o.timeout_ms.store(timeout_ms, Ordering::Relaxed)
    })
}

/// Stops the exact search after `nodes` search nodes (0: no limit);
/// running out gives `MINIMALLOC_STATUS_NOT_FOUND`.
///
/// # Safety
/// `options` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_set_node_limit(
    options: *mut minimalloc_options,
    nodes: u64,
) -> minimalloc_status {
    with_options(options, |o| o.node_limit.store(nodes, Ordering::Relaxed))
}

/// Sets the cancel flag: a solve using these options stops within
/// milliseconds with `MINIMALLOC_STATUS_CANCELLED`, and later solves stop
/// at once until `minimalloc_options_reset_cancel`. The one call that may
/// come from another thread while a solve runs.
///
/// # Safety
/// `options` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_cancel(
    options: *const minimalloc_options,
) -> minimalloc_status {
    with_options(options, |o| o.cancel.store(true, Ordering::Relaxed))
}

/// Clears the cancel flag.
///
/// # Safety
/// `options` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_reset_cancel(
    options: *mut minimalloc_options,
) -> minimalloc_status {
    with_options(options, |o| o.cancel.store(false, Ordering::Relaxed))
}

/// Search nodes visited by the last solve with these options (0 for NULL).
///
/// # Safety
/// `options` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_nodes(options: *const minimalloc_options) -> u64 {
    // Safety: NULL or a live handle, by contract.
    guard(0, || {
        unsafe { options.as_ref() }.map_or(0, |o| o.nodes.load(Ordering::Relaxed))
    })
}

/// Wall time of the last solve with these options, in microseconds (0 for
/// NULL, or without a clock).
///
/// # Safety
/// `options` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_elapsed_us(options: *const minimalloc_options) -> u64 {
    // Safety: NULL or a live handle, by contract.
    guard(0, || {
        unsafe { options.as_ref() }.map_or(0, |o| o.elapsed_ns.load(Ordering::Relaxed) / 1000)
    })
}

/// Why the last solve with these options did not succeed, or "" if it
/// did. NULL only for NULL options. Valid until the next solve with them.
///
/// # Safety
/// `options` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_last_error(
    options: *const minimalloc_options,
) -> *const c_char {
    // Safety: NULL or a live handle, by contract.
    guard(ptr::null(), || {
        unsafe { options.as_ref() }.map_or(ptr::null(), |o| o.error.as_ptr())
    })
}

/// Places every buffer of `problem` below its capacity, with no options
/// but a timeout (0: none). On `MINIMALLOC_STATUS_OK` writes a new
/// solution to `out_solution`, which the caller frees; on any other status
/// `out_solution` is left alone. An empty problem solves with height 0.
///
/// # Safety
/// `problem` is NULL or a live handle; `out_solution` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_solve(
    problem: *const minimalloc_problem,
    timeout_ms: u64,
    out_solution: *mut *mut minimalloc_solution,
) -> minimalloc_status {
    guard(minimalloc_status::Internal, || {
        // Safety: NULL or a live handle, by contract.
        let Some(p) = (unsafe { problem.as_ref() }) else {
            return minimalloc_status::NullPointer;
        };
        if out_solution.is_null() {
            return minimalloc_status::NullPointer;
        }
        let options = Options {
            timeout: (timeout_ms > 0).then(|| Duration::from_millis(timeout_ms)),
            clock: clock(),
            ..Options::default()
        };
        // Safety: checked non-NULL; writable by contract.
        solve(p, &options, None, unsafe { &mut *out_solution })
    })
}

/// Like `minimalloc_solve`, with `options`: their timeout, node limit and
/// cancel flag; the statistics and any failure message are left in them.
/// Several threads may solve with different options at once, or with the
/// same `problem`.
///
/// # Safety
/// `problem` and `options` are NULL or live handles; `out_solution` is
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_solve_with(
    problem: *const minimalloc_problem,
    options: *const minimalloc_options,
    out_solution: *mut *mut minimalloc_solution,
) -> minimalloc_status {
    guard(minimalloc_status::Internal, || {
        // Safety: NULL or live handles, by contract.
        let (Some(p), Some(o)) = (unsafe { problem.as_ref() }, unsafe { options.as_ref() }) else {
            return minimalloc_status::NullPointer;
        };
        if out_solution.is_null() {
            return minimalloc_status::NullPointer;
        }
        let timeout_ms = o.timeout_ms.load(Ordering::Relaxed);
        let node_limit = o.node_limit.load(Ordering::Relaxed);
        let mut settings = Options {
            timeout: (timeout_ms > 0).then(|| Duration::from_millis(timeout_ms)),
            cancel: Some(o.cancel.clone()),
            clock: clock(),
            ..Options::default()
        };
        settings.solver.node_limit = (node_limit > 0).then_some(node_limit);
        // Safety: checked non-NULL; writable by contract.
        solve(p, &settings, Some(o), unsafe { &mut *out_solution })
    })
}

fn with_options(
    options: *const minimalloc_options,
    f: impl FnOnce(&minimalloc_options),
) -> minimalloc_status {
    guard(minimalloc_status::Internal, || {
        // Safety: NULL or a live handle, by contract of every caller.
        match unsafe { options.as_ref() } {
            Some(o) => {
                f(o);
                minimalloc_status::Ok
            }
            None => minimalloc_status::NullPointer,
        }
    })
}

/// The clock for timeouts: std's, or the C library's without std.
fn clock() -> Option<crate::deadline::Clock> {
    #[cfg(feature = "std")]
    {
        Some(crate::deadline::std_clock)
    }
    #[cfg(not(feature = "std"))]
    {
        crate::runtime::monotonic_clock()
    }
}

fn solve(
    handle: &minimalloc_problem,
    options: &Options,
    report: Option<&minimalloc_options>,
    out: &mut *mut minimalloc_solution,
) -> minimalloc_status {
    let problem = &handle.problem;
    let outcome = plan(problem, options);
    if let Some(o) = report {
        o.nodes.store(outcome.stats.nodes, Ordering::Relaxed);
        let ns = u64::try_from(outcome.stats.elapsed.as_nanos()).unwrap_or(u64::MAX);
        o.elapsed_ns.store(ns, Ordering::Relaxed);
    }
    let (status, why) = match outcome.status {
        Status::Solved => (minimalloc_status::Ok, None),
        Status::Infeasible => (
            minimalloc_status::Infeasible,
            Some(format(
                "no placement fits capacity {}",
                &[I(problem.capacity())],
            )),
        ),
        Status::NotFound => (
            minimalloc_status::NotFound,
            Some(format(
                "no placement found after {} nodes and no proof that none exists \
                 (the node limit, or {} pairs of buffers that could interleave through gap windows)",
                &[U(outcome.stats.nodes), U(outcome.stats.interleaving)],
            )),
        ),
        Status::TimedOut => (
            minimalloc_status::Timeout,
            Some(format(
                "timed out after {} ms",
                &[U(outcome.stats.elapsed.as_millis() as u64)],
            )),
        ),
        Status::Cancelled => (minimalloc_status::Cancelled, Some("cancelled".into())),
    };
    if let Some(o) = report {
        o.error.set(why.as_deref().unwrap_or(""));
    }
    if let Some(solution) = outcome.solution {
        let height = solution.height(problem);
        *out = Box::into_raw(Box::new(minimalloc_solution {
            offsets: solution.offsets,
            height,
        }));
    }
    status
}
