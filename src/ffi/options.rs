//! `minimalloc_options`: how to solve (objective, strategy, timeout, cancel
//! token, node limit, seed, threads, base address, progress callback).
//! Input only: a solve reads them through a `const` pointer and writes
//! nothing into them, so any number of solves may share one handle; what
//! a solve produced is on its solution.

use alloc::boxed::Box;
use alloc::sync::Arc;
use core::ffi::{c_char, c_int};
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

use super::{minimalloc_status, Message};
use crate::base::text::{format, Arg::I};

/// What a solve aims for.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum minimalloc_objective {
    /// Any placement below the capacity (the default).
    Fit = 0,
    /// The lowest height found within the timeout; the capacity is an
    /// upper bound. Read the proven lower bound and whether the height
    /// meets it with `minimalloc_options_lower_bound` and
    /// `minimalloc_options_optimal`. Needs the heuristics (not in the tiny
    /// build).
    Minimize = 1,
    /// A placement below the capacity (every pool) that pays the least
    /// for penalised pairs sharing bytes (`minimalloc_problem_penalize`);
    /// read it with `minimalloc_solution_penalty`. Not in the tiny build.
    Penalty = 2,
}

/// Which strategies a solve may use: all of them as needed, the exact
/// search alone, or one heuristic alone.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum minimalloc_strategy {
    /// Every heuristic in its plain order, then local repair, improving
    /// restarts and (up to 50,000 buffers and 10^7 overlapping pairs) the
    /// exact search, sharing the time and the cores: the default.
    Auto = 0,
    /// The exact search alone.
    Exact = 1,
    /// Only the contention-ordered skyline. This and the heuristics below
    /// run with their improving restarts when minimising; none is in the
    /// tiny build. Minimising with a timeout, a heuristic other than online
    /// that places nothing in the time returns the online placement in its
    /// stead (the solution's source says so), not every buffer stacked.
    Skyline = 2,
    /// Only first-fit by decreasing size, jumping past conflicts.
    FirstFit = 3,
    /// Only best-fit by decreasing size (smallest sufficient hole).
    BestFit = 4,
    /// Only first-fit by decreasing size, then lifetime ("big rocks").
    BigRocks = 5,
    /// Only the online placement: by start time, each buffer into the
    /// smallest hole among those alive then; O(log n) a buffer, for the
    /// largest inputs. Its variants first place the long-lived buffers
    /// as a layer the others see as fixed.
    Online = 6,
    /// Only the layered placement: buffers alive for at least a half (a
    /// quarter, ...) of the time first, in start order, then the others
    /// by decreasing size; first-fit.
    Layered = 7,
    /// Only gap filling: the lowest flat run of the skyline filled from
    /// its left end by a buffer that starts there and ends inside it, the
    /// longest-lived first; for memory cut from rectangles with no waste.
    /// With fixed buffers or gaps, that order on top of the skyline.
    GapFill = 8,
    /// Only the coalescing placement: online, but among the few smallest
    /// holes the one (and the side of it) whose neighbour ends nearest
    /// the buffer's own end, so that buffers ending together free one
    /// hole; a little dearer than online, often lower where lifetimes
    /// and sizes are unrelated. Its variants are online's layers.
    Coalescing = 9,
}

/// An objective as received from C: any `int`, checked before use. The
/// header spells it `minimalloc_objective`.
#[repr(transparent)]
pub struct ObjectiveCode(c_int);

/// A strategy as received from C, checked before use. The header spells
/// it `minimalloc_strategy`.
#[repr(transparent)]
pub struct StrategyCode(c_int);

/// Settings of a solve. Opaque; made by `minimalloc_options_new`,
/// released by `minimalloc_options_free`. The fields are atomic so that a
/// solve reading them never races a setter on another thread into
/// undefined behaviour (which of the two values it sees is the caller's
/// business).
pub struct minimalloc_options {
    pub(super) timeout_ms: AtomicU64,
    pub(super) node_limit: AtomicU64,
    /// The token's flag, when the options carry one.
    pub(super) cancel: super::Locked<Option<Arc<AtomicBool>>>,
    /// `minimalloc_objective` and `minimalloc_strategy` values, checked.
    pub(super) objective: AtomicU64,
    pub(super) strategy: AtomicU64,
    pub(super) seed: AtomicU64,
    pub(super) threads: AtomicU64,
    pub(super) restarts: AtomicU64,
    pub(super) base: AtomicI64,
    /// Why the last setter refused its value.
    pub(super) error: Message,
    /// The progress callback and its user pointer.
    #[cfg(all(feature = "std", feature = "heuristics"))]
    pub(super) progress: super::Locked<Option<super::progress::Callback>>,
}

/// Options to fit the capacity by any strategy, with no timeout, no node
/// limit, no cancel token, seed 0, one thread and base address 0.
#[no_mangle]
pub extern "C" fn minimalloc_options_new() -> *mut minimalloc_options {
    ffi_guard!(or ptr::null_mut() => {
        Box::into_raw(Box::new(minimalloc_options {
            timeout_ms: AtomicU64::new(0),
            node_limit: AtomicU64::new(0),
            cancel: super::Locked::new(None),
            objective: AtomicU64::new(minimalloc_objective::Fit as u64),
            strategy: AtomicU64::new(minimalloc_strategy::Auto as u64),
            seed: AtomicU64::new(0),
            threads: AtomicU64::new(1),
            restarts: AtomicU64::new(0),
            base: AtomicI64::new(0),
            error: Message::new(),
            #[cfg(all(feature = "std", feature = "heuristics"))]
            progress: super::Locked::new(None),
        }))
    })
}

/// Releases options. NULL is a no-op. No solve may be using them.
///
/// # Safety
/// `options` is NULL or a handle from `minimalloc_options_new` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_free(options: *mut minimalloc_options) {
    ffi_guard!(or () => {
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

/// Makes solves with these options stop when `cancel` is requested
/// (`minimalloc_cancel_request`); NULL removes the token. The options keep
/// their own share of it: freeing the token first is fine.
///
/// # Safety
/// `options` is NULL or a live handle; `cancel` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_set_cancel(
    options: *mut minimalloc_options,
    cancel: *const super::cancel::minimalloc_cancel,
) -> minimalloc_status {
    ffi_guard!(on o = options => {
        // Safety: NULL or a live handle, by contract.
        let flag = unsafe { cancel.as_ref() }.map(|c| c.flag.clone());
        let old = o.cancel.with(|t| core::mem::replace(t, flag));
        drop(old);
        minimalloc_status::Ok
    })
}

/// Sets what solves aim for: `MINIMALLOC_OBJECTIVE_FIT` (the default),
/// `MINIMALLOC_OBJECTIVE_MINIMIZE` or `MINIMALLOC_OBJECTIVE_PENALTY`. A
/// value that names none is an invalid argument; minimising or penalties
/// in the tiny build are unsupported. Either way the options are unchanged.
///
/// # Safety
/// `options` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_set_objective(
    options: *mut minimalloc_options,
    objective: ObjectiveCode,
) -> minimalloc_status {
    set_checked(options, |o| {
        let value = match objective.0 {
            0 => minimalloc_objective::Fit,
            1 => minimalloc_objective::Minimize,
            2 => minimalloc_objective::Penalty,
            other => return Err(unknown("objective", other)),
        };
        if value == minimalloc_objective::Minimize && !cfg!(feature = "heuristics") {
            return Err(unsupported("minimising"));
        }
        if value == minimalloc_objective::Penalty && !cfg!(feature = "constraints") {
            return Err(unsupported("reuse penalties"));
        }
        o.objective.store(value as u64, Ordering::Relaxed);
        Ok(())
    })
}

/// Sets which strategies solves may use (`MINIMALLOC_STRATEGY_AUTO` by
/// default). A value that names none is an invalid argument; a heuristic
/// in a build without them (the tiny one) is unsupported. Either way the
/// options are unchanged.
///
/// # Safety
/// `options` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_set_strategy(
    options: *mut minimalloc_options,
    strategy: StrategyCode,
) -> minimalloc_status {
    set_checked(options, |o| {
        if !(0..=minimalloc_strategy::Coalescing as c_int).contains(&strategy.0) {
            return Err(unknown("strategy", strategy.0));
        }
        if strategy.0 >= minimalloc_strategy::Skyline as c_int && !cfg!(feature = "heuristics") {
            return Err(unsupported("the heuristics are"));
        }
        o.strategy.store(strategy.0 as u64, Ordering::Relaxed);
        Ok(())
    })
}

/// Seeds the improving restarts: the same seed, problem and options give
/// the same offsets on any number of threads, unless a timeout cuts the
/// restarts short (set a restart count for results that never depend on
/// timing).
///
/// # Safety
/// `options` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_set_seed(
    options: *mut minimalloc_options,
    seed: u64,
) -> minimalloc_status {
    with_options(options, |o| o.seed.store(seed, Ordering::Relaxed))
}

/// Threads a solve may use for its restarts, beside the exact search: 1
/// by default (a compiler pass should not start threads it did not ask
/// for), 0 for every core. Builds without threads use 1 whatever is set.
///
/// # Safety
/// `options` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_set_threads(
    options: *mut minimalloc_options,
    threads: u32,
) -> minimalloc_status {
    with_options(options, |o| {
        o.threads.store(u64::from(threads), Ordering::Relaxed)
    })
}

/// Improving restarts to run (0, the default: until the timeout, or 64
/// without one; fewer above 100,000 buffers, down to 8).
///
/// # Safety
/// `options` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_set_restarts(
    options: *mut minimalloc_options,
    restarts: u64,
) -> minimalloc_status {
    with_options(options, |o| o.restarts.store(restarts, Ordering::Relaxed))
}

/// Adds `base` to every offset of later solutions: they hold addresses in
/// an arena that starts at `base`. A negative `base` is an invalid
/// argument; at solve time `base` must also be a multiple of every
/// buffer's alignment (addresses stay aligned) and `base` plus the height
/// must fit in 64 bits, or the solve fails with an invalid argument.
/// Fixed offsets and hints stay relative to the arena.
///
/// # Safety
/// `options` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_set_base(
    options: *mut minimalloc_options,
    base: i64,
) -> minimalloc_status {
    set_checked(options, |o| {
        if base < 0 {
            return Err((
                minimalloc_status::InvalidArgument,
                format("base address must not be negative, got {}", &[I(base)]),
            ));
        }
        o.base.store(base, Ordering::Relaxed);
        Ok(())
    })
}

/// Why the most recent setter on these options refused its value, or ""
/// if it took it (a solve's failure is on its solution:
/// `minimalloc_solution_error`). NULL only for NULL options. Valid until
/// the next setter on them.
///
/// # Safety
/// `options` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_last_error(
    options: *const minimalloc_options,
) -> *const c_char {
    // Safety: NULL or a live handle, by contract.
    ffi_guard!(or ptr::null() => {
        unsafe { options.as_ref() }.map_or(ptr::null(), |o| o.error.as_ptr())
    })
}

/// Why a setter refused its value: the status to return and the message.
type Refusal = (minimalloc_status, alloc::string::String);

fn unknown(what: &str, value: c_int) -> Refusal {
    (
        minimalloc_status::InvalidArgument,
        format(
            "unknown {} {}",
            &[crate::base::text::Arg::S(what), I(i64::from(value))],
        ),
    )
}

fn unsupported(what: &str) -> Refusal {
    (
        minimalloc_status::Unsupported,
        format(
            "{} not in this build of the library (built without the heuristics feature)",
            &[crate::base::text::Arg::S(what)],
        ),
    )
}

/// Runs a setter that may refuse its value; a refusal is recorded as the
/// options' last error (and the thread's) and changes nothing.
fn set_checked(
    options: *const minimalloc_options,
    f: impl FnOnce(&minimalloc_options) -> Result<(), Refusal>,
) -> minimalloc_status {
    ffi_guard!(on o = options => {
            match f(o) {
                Ok(()) => minimalloc_status::Ok,
                Err((status, why)) => {
                    o.error.set(&why);
                    status
                }
            }
    })
}

/// Runs a setter that cannot refuse its value.
fn with_options(
    options: *const minimalloc_options,
    f: impl FnOnce(&minimalloc_options),
) -> minimalloc_status {
    ffi_guard!(on o = options => {
        f(o);
        minimalloc_status::Ok
    })
}

/// Calls `callback` during solves with these options when the best height
/// or the lower bound improves, at most every 100 ms, and every 100 ms
/// while nothing improves, then once at the end; `user` is passed along.
/// Calls come from the solver's threads or a helper thread, never two at
/// once; a callback that takes long holds up the solve, so keep it quick.
/// NULL `callback` removes it. The tiny build (no threads) returns
/// `MINIMALLOC_STATUS_UNSUPPORTED`.
///
/// # Safety
/// `options` is NULL or a live handle; `callback`, if not NULL, may be
/// called with `user` from any thread until it is removed or the options
/// are freed.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_set_progress(
    options: *mut minimalloc_options,
    callback: super::progress::minimalloc_progress_fn,
    user: *mut core::ffi::c_void,
) -> minimalloc_status {
    ffi_guard!(on o = options => {
            #[cfg(all(feature = "std", feature = "heuristics"))]
            {
                let cb = callback.map(|f| super::progress::Callback::new(f, user));
                o.progress.with(|p| *p = cb);
                minimalloc_status::Ok
            }
            #[cfg(not(all(feature = "std", feature = "heuristics")))]
            {
                let _ = (o, callback, user);
                minimalloc_status::Unsupported
            }
    })
}
