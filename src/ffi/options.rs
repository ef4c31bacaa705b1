//! `minimalloc_options`: how to solve (objective, strategy, timeout, cancel
//! flag, node limit, seed, threads, base address) and what the last solve
//! did (nodes, time, lower bound, whether proven optimal). Every field is
//! atomic, so that another thread may cancel while a solve runs.

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
    /// tiny build.
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
}

/// An objective as received from C: any `int`, checked before use. The
/// header spells it `minimalloc_objective`.
#[repr(transparent)]
pub struct ObjectiveCode(c_int);

/// A strategy as received from C, checked before use. The header spells
/// it `minimalloc_strategy`.
#[repr(transparent)]
pub struct StrategyCode(c_int);

/// Settings of a solve and the statistics of the last one. Opaque; made by
/// `minimalloc_options_new`, released by `minimalloc_options_free`.
pub struct minimalloc_options {
    pub(super) timeout_ms: AtomicU64,
    pub(super) node_limit: AtomicU64,
    pub(super) cancel: Arc<AtomicBool>,
    /// `minimalloc_objective` and `minimalloc_strategy` values, checked.
    pub(super) objective: AtomicU64,
    pub(super) strategy: AtomicU64,
    pub(super) seed: AtomicU64,
    pub(super) threads: AtomicU64,
    pub(super) restarts: AtomicU64,
    pub(super) base: AtomicI64,
    pub(super) nodes: AtomicU64,
    pub(super) elapsed_ns: AtomicU64,
    pub(super) lower_bound: AtomicI64,
    pub(super) optimal: AtomicBool,
    pub(super) error: Message,
    /// The buffers the last solve found cannot fit together, and whether
    /// that set is proven minimal.
    #[cfg(feature = "constraints")]
    pub(super) conflict: super::Locked<alloc::vec::Vec<usize>>,
    #[cfg(feature = "constraints")]
    pub(super) conflict_irreducible: AtomicBool,
    /// Per pool of the last solve: height, lower bound, buffers.
    #[cfg(feature = "constraints")]
    pub(super) pools: super::Locked<alloc::vec::Vec<(i64, i64, usize)>>,
    /// The progress callback and its user pointer.
    #[cfg(all(feature = "std", feature = "heuristics"))]
    pub(super) progress: super::Locked<Option<super::progress::Callback>>,
}

/// Options to fit the capacity by any strategy, with no timeout, no node
/// limit, the cancel flag clear, seed 0, one thread and base address 0.
#[no_mangle]
pub extern "C" fn minimalloc_options_new() -> *mut minimalloc_options {
    ffi_guard!(or ptr::null_mut() => {
        Box::into_raw(Box::new(minimalloc_options {
            timeout_ms: AtomicU64::new(0),
            node_limit: AtomicU64::new(0),
            cancel: Arc::new(AtomicBool::new(false)),
            objective: AtomicU64::new(minimalloc_objective::Fit as u64),
            strategy: AtomicU64::new(minimalloc_strategy::Auto as u64),
            seed: AtomicU64::new(0),
            threads: AtomicU64::new(1),
            restarts: AtomicU64::new(0),
            base: AtomicI64::new(0),
            nodes: AtomicU64::new(0),
            elapsed_ns: AtomicU64::new(0),
            lower_bound: AtomicI64::new(0),
            optimal: AtomicBool::new(false),
            error: Message::new(),
            #[cfg(feature = "constraints")]
            conflict: super::Locked::new(alloc::vec::Vec::new()),
            #[cfg(feature = "constraints")]
            conflict_irreducible: AtomicBool::new(false),
            #[cfg(feature = "constraints")]
            pools: super::Locked::new(alloc::vec::Vec::new()),
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
    with_options(true, options, |o| {
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
    with_options(true, options, |o| {
        o.node_limit.store(nodes, Ordering::Relaxed)
    })
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
    with_options(false, options, |o| o.cancel.store(true, Ordering::Relaxed))
}

/// Clears the cancel flag.
///
/// # Safety
/// `options` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_reset_cancel(
    options: *mut minimalloc_options,
) -> minimalloc_status {
    with_options(true, options, |o| o.cancel.store(false, Ordering::Relaxed))
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
        if !(0..=7).contains(&strategy.0) {
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
    with_options(true, options, |o| o.seed.store(seed, Ordering::Relaxed))
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
    with_options(true, options, |o| {
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
    with_options(true, options, |o| {
        o.restarts.store(restarts, Ordering::Relaxed)
    })
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

/// The proven lower bound on the height from the last solve with these
/// options: the max load, the highest fixed buffer, or more when the exact
/// search proved capacities infeasible (-1 for NULL).
///
/// # Safety
/// `options` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_lower_bound(options: *const minimalloc_options) -> i64 {
    // Safety: NULL or a live handle, by contract.
    ffi_guard!(or -1 => {
        unsafe { options.as_ref() }.map_or(-1, |o| o.lower_bound.load(Ordering::Relaxed))
    })
}

/// 1 if the last solve with these options returned a placement whose
/// height equals the proven lower bound (no lower height exists; with
/// `MINIMALLOC_OBJECTIVE_PENALTY`, whose penalty is proven the least),
/// else 0 (also for NULL).
///
/// # Safety
/// `options` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_optimal(options: *const minimalloc_options) -> c_int {
    // Safety: NULL or a live handle, by contract.
    ffi_guard!(or 0 => {
        unsafe { options.as_ref() }.map_or(0, |o| c_int::from(o.optimal.load(Ordering::Relaxed)))
    })
}

/// Search nodes visited by the last solve with these options (0 for NULL).
///
/// # Safety
/// `options` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_nodes(options: *const minimalloc_options) -> u64 {
    // Safety: NULL or a live handle, by contract.
    ffi_guard!(or 0 => {
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
    ffi_guard!(or 0 => {
        unsafe { options.as_ref() }.map_or(0, |o| o.elapsed_ns.load(Ordering::Relaxed) / 1000)
    })
}

/// Why the most recent call with these options failed (a solve, or a
/// setter that refused its value), or "" if that call succeeded: a
/// successful solve or setter clears it (`minimalloc_options_cancel`, which
/// may run while a solve does, leaves it alone). NULL only for NULL
/// options. Valid until the next call with them.
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

/// Runs a setter that cannot refuse its value. With `settles` false (the
/// cancel call, which may come from another thread while a solve runs)
/// the options' last error is left to that solve.
fn with_options(
    settles: bool,
    options: *const minimalloc_options,
    f: impl FnOnce(&minimalloc_options),
) -> minimalloc_status {
    if settles {
        ffi_guard!(on o = options => {
            f(o);
            minimalloc_status::Ok
        })
    } else {
        ffi_guard!(reading o = options => {
            f(o);
            minimalloc_status::Ok
        })
    }
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

/// The conflict the last solve with these options found: after
/// `MINIMALLOC_STATUS_INFEASIBLE`, a small set of buffers that cannot fit
/// below the capacity together (the busiest moment's largest buffers, or
/// what the exact search shrank the problem to within the timeout); none
/// otherwise. The tiny build returns `MINIMALLOC_STATUS_UNSUPPORTED`. Writes the number of buffers to
/// `*out_count`, the first `min(len, count)` indices (increasing) to
/// `out_indices` (which may be NULL when `len` is 0: call once to learn the
/// count), and, if `out_irreducible` is not NULL, 1 there if the set is
/// proven minimal (without any one of them the others fit), else 0.
///
/// # Safety
/// `options` is NULL or a live handle; `out_indices` is NULL or has `len`
/// writable elements; `out_count` and `out_irreducible` are NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_conflict(
    options: *const minimalloc_options,
    out_indices: *mut usize,
    len: usize,
    out_count: *mut usize,
    out_irreducible: *mut c_int,
) -> minimalloc_status {
    #[cfg(not(feature = "constraints"))]
    {
        let _ = (options, out_indices, len, out_count, out_irreducible);
        super::unsupported()
    }
    #[cfg(feature = "constraints")]
    ffi_guard!(reading _o = options => {
            if out_count.is_null() || (len > 0 && out_indices.is_null()) {
                return minimalloc_status::NullPointer;
            }
            let (count, irreducible) = _o.conflict.with(|c| {
                let n = c.len().min(len);
                // Safety: `out_indices` has `len >= n` elements (n > 0
                // only when it is not NULL).
                unsafe { core::ptr::copy_nonoverlapping(c.as_ptr(), out_indices, n) };
                (
                    c.len(),
                    _o.conflict_irreducible
                        .load(core::sync::atomic::Ordering::Relaxed),
                )
            });
            // Safety: checked non-NULL; writable by contract.
            unsafe { *out_count = count };
            if !out_irreducible.is_null() {
                // Safety: writable by contract.
                unsafe { *out_irreducible = c_int::from(irreducible) };
            }
            minimalloc_status::Ok
    })
}

/// Figures of pool `pool` from the last solve with these options: its
/// height (the highest offset + size in it, without its base), a lower
/// bound on that height for the buffers it got (their max load, or more
/// where minimising proved it), and how
/// many buffers it got. Any of the out-parameters may be NULL. A pool
/// that does not exist (or no pools) is an invalid argument.
///
/// # Safety
/// `options` is NULL or a live handle; each out-parameter is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_pool_report(
    options: *const minimalloc_options,
    pool: usize,
    out_height: *mut i64,
    out_lower_bound: *mut i64,
    out_buffers: *mut usize,
) -> minimalloc_status {
    #[cfg(not(feature = "constraints"))]
    {
        let _ = (options, pool, out_height, out_lower_bound, out_buffers);
        super::unsupported()
    }
    #[cfg(feature = "constraints")]
    ffi_guard!(reading _o = options => {
            #[cfg(feature = "constraints")]
            {
                let Some((height, lower_bound, buffers)) = _o.pools.with(|r| r.get(pool).copied())
                else {
                    return minimalloc_status::InvalidArgument;
                };
                // Safety: each is NULL or writable, by contract.
                unsafe {
                    if let Some(p) = out_height.as_mut() {
                        *p = height;
                    }
                    if let Some(p) = out_lower_bound.as_mut() {
                        *p = lower_bound;
                    }
                    if let Some(p) = out_buffers.as_mut() {
                        *p = buffers;
                    }
                }
                minimalloc_status::Ok
            }
    })
}
