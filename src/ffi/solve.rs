//! The solve entry points: a problem and options in, a solution out that
//! holds everything the solve produced, placed or not.

use alloc::boxed::Box;
use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;

use super::options::minimalloc_options;
use super::problem::minimalloc_problem;
use super::solution::minimalloc_solution;
use super::{minimalloc_status, Message};
use crate::base::text::{
    format,
    Arg::{I, U},
};
use crate::deadline::Stop;
use crate::plan::{plan, Method, Objective, Options, Status};

/// Places every buffer of `problem` below its capacity, with no options
/// but a timeout (0: none). Writes a new solution to `out_solution`, which
/// the caller frees with `minimalloc_solution_free`, whatever the status:
/// its offsets when it placed every buffer (`MINIMALLOC_STATUS_OK`), else
/// why not (`minimalloc_solution_error`, also the thread's
/// `minimalloc_last_error`) and the figures it reached. Only a NULL
/// argument (`MINIMALLOC_STATUS_NULL_POINTER`) or a caught bug
/// (`MINIMALLOC_STATUS_INTERNAL`) leaves NULL there. An empty problem
/// solves with height 0.
///
/// # Safety
/// `problem` is NULL or a live handle; `out_solution` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_solve(
    problem: *const minimalloc_problem,
    timeout_ms: u64,
    out_solution: *mut *mut minimalloc_solution,
) -> minimalloc_status {
    ffi_guard!(local message => {
        // Safety: as the caller passed them.
        unsafe { solve_checked(problem, None, message, timeout_ms, out_solution) }
    })
}

/// Like `minimalloc_solve`, with `options`: their objective, strategy,
/// timeout, node limit, cancel token, seed, threads, base address and
/// progress callback. The options are only read: several threads may
/// solve at once with the same options, the same problem, or both, each
/// reading its own results from its own solution.
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
    ffi_guard!(local message => {
        if !out_solution.is_null() {
            // Safety: writable by contract.
            unsafe { *out_solution = core::ptr::null_mut() };
        }
        // Safety: NULL or a live handle, by contract.
        let Some(o) = (unsafe { options.as_ref() }) else {
            return minimalloc_status::NullPointer;
        };
        let timeout_ms = o.timeout_ms.load(Ordering::Relaxed);
        // Safety: as the caller passed them.
        unsafe { solve_checked(problem, Some(o), message, timeout_ms, out_solution) }
    })
}

/// Both solve calls: checks the pointers, turns the options (defaults
/// without a handle: one thread, no cancel token) into a plan's, solves
/// and hands the result over; why it failed also goes to `message`.
///
/// # Safety
/// `problem` is NULL or a live handle; `out_solution` is NULL or writable.
unsafe fn solve_checked(
    problem: *const minimalloc_problem,
    handle: Option<&minimalloc_options>,
    message: &Message,
    timeout_ms: u64,
    out_solution: *mut *mut minimalloc_solution,
) -> minimalloc_status {
    if out_solution.is_null() {
        return minimalloc_status::NullPointer;
    }
    // Safety: writable by contract.
    unsafe { *out_solution = core::ptr::null_mut() };
    // Safety: NULL or a live handle, by contract.
    let Some(p) = (unsafe { problem.as_ref() }) else {
        return minimalloc_status::NullPointer;
    };
    let mut settings = Options {
        timeout: (timeout_ms > 0).then(|| Duration::from_millis(timeout_ms)),
        clock: clock(),
        threads: 1,
        ..Options::default()
    };
    if let Some(o) = handle {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let node_limit = load(&o.node_limit);
        settings.objective = objective(load(&o.objective));
        settings.method = method(load(&o.strategy));
        settings.cancel = o.cancel.with(|c| c.clone());
        // Restarts (seeded, threaded) come with the heuristics.
        #[cfg(feature = "heuristics")]
        {
            settings.seed = load(&o.seed);
            settings.threads = usize::try_from(load(&o.threads)).unwrap_or(usize::MAX);
            let restarts = load(&o.restarts);
            settings.restarts = (restarts > 0).then_some(restarts);
        }
        settings.solver.node_limit = (node_limit > 0).then_some(node_limit);
    }
    let result = solve(p, &settings, handle);
    let status = result.status;
    if status != minimalloc_status::Ok {
        message.copy_from(&result.error);
    }
    // Safety: checked non-NULL; writable by contract.
    unsafe { *out_solution = Box::into_raw(Box::new(result)) };
    status
}

/// The objective stored by `minimalloc_options_set_objective`.
fn objective(code: u64) -> Objective {
    match code {
        #[cfg(feature = "heuristics")]
        1 => Objective::Minimize,
        #[cfg(feature = "constraints")]
        2 => Objective::Penalty,
        _ => Objective::Fit,
    }
}

/// The method for the strategy stored by `minimalloc_options_set_strategy`.
fn method(code: u64) -> Method {
    #[cfg(feature = "heuristics")]
    use crate::heuristic::Strategy;
    match code {
        1 => Method::Exact,
        #[cfg(feature = "heuristics")]
        2 => Method::Heuristic(Strategy::Skyline),
        #[cfg(feature = "heuristics")]
        3 => Method::Heuristic(Strategy::FirstFit),
        #[cfg(feature = "heuristics")]
        4 => Method::Heuristic(Strategy::BestFit),
        #[cfg(feature = "heuristics")]
        5 => Method::Heuristic(Strategy::BigRocks),
        #[cfg(feature = "heuristics")]
        6 => Method::Heuristic(Strategy::Online),
        #[cfg(feature = "heuristics")]
        7 => Method::Heuristic(Strategy::Layered),
        #[cfg(feature = "heuristics")]
        8 => Method::Heuristic(Strategy::GapFill),
        #[cfg(feature = "heuristics")]
        9 => Method::Heuristic(Strategy::Coalescing),
        _ => Method::Auto,
    }
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

/// Plans `handle`'s problem and gathers what came of it.
fn solve(
    handle: &minimalloc_problem,
    options: &Options,
    report: Option<&minimalloc_options>,
) -> minimalloc_solution {
    let problem = &handle.problem;
    let base = report.map_or(0, |o| o.base.load(Ordering::Relaxed));
    if let Err(e) = problem.check_base(base) {
        let result = minimalloc_solution::unplaced(minimalloc_status::InvalidArgument);
        result.error.set_error(&e);
        return result;
    }
    let outcome = plan_reporting(problem, options, report);
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
    let mut result = minimalloc_solution::unplaced(status);
    if let Some(why) = why {
        result.error.set(&why);
    }
    result.lower_bound = outcome.lower_bound;
    result.optimal = outcome.optimal;
    result.nodes = outcome.stats.nodes;
    result.elapsed_ns = u64::try_from(outcome.stats.elapsed.as_nanos()).unwrap_or(u64::MAX);
    result.stopped = match outcome.stopped {
        None => minimalloc_status::Ok,
        Some(Stop::TimedOut) => minimalloc_status::Timeout,
        Some(Stop::Cancelled) => minimalloc_status::Cancelled,
    };
    #[cfg(feature = "constraints")]
    {
        let found = &mut result.found;
        if let Some(c) = &outcome.conflict {
            found.conflict = c.buffers.clone();
            found.conflict_irreducible = c.irreducible;
        }
        if let Some(p) = &outcome.pooled {
            found.pool_reports = p
                .reports
                .iter()
                .map(|r| (r.height, r.lower_bound, r.buffers.len()))
                .collect();
        }
    }
    if let Some(solution) = outcome.solution {
        // With pools, the highest top in any pool (addresses include the
        // pools' bases).
        #[cfg(feature = "constraints")]
        let height = match &outcome.pooled {
            Some(p) => {
                result.found.pools = p.pool_of.clone();
                p.reports.iter().map(|r| r.height).max().unwrap_or(0)
            }
            None => solution.height(problem),
        };
        #[cfg(not(feature = "constraints"))]
        let height = solution.height(problem);
        // The base is checked above but for this (as Solution::addresses).
        if height.checked_add(base).is_none() {
            let mut refused = minimalloc_solution::unplaced(minimalloc_status::InvalidArgument);
            refused
                .error
                .set_error(&crate::model::problem::Error::BaseOverflow { base, height });
            refused.lower_bound = result.lower_bound;
            return refused;
        }
        // What it pays, and the bound the penalty objective proved (else 0).
        #[cfg(feature = "constraints")]
        {
            result.found.penalty = match outcome.penalty {
                Some(p) => (p.cost, p.lower_bound),
                None => (solution.penalty(problem), 0),
            };
        }
        let mut offsets = solution.offsets;
        offsets.iter_mut().for_each(|o| *o += base);
        result.offsets = Some(offsets);
        result.height = height;
    }
    result
}

/// Plans, calling the options' progress callback if they have one.
fn plan_reporting(
    problem: &crate::model::problem::Problem,
    options: &Options,
    report: Option<&minimalloc_options>,
) -> crate::plan::Outcome {
    #[cfg(all(feature = "std", feature = "heuristics"))]
    if let Some(o) = report {
        if let Some(callback) = o.progress.with(|p| *p) {
            // A stop flag of this solve's own: the callback's request to
            // stop ends this solve alone; the token, which the heartbeat
            // watches, ends it too.
            let stop = alloc::sync::Arc::new(core::sync::atomic::AtomicBool::new(false));
            let reporter =
                super::progress::Reporter::new(callback, stop.clone(), options.cancel.clone());
            let mut options = options.clone();
            options.cancel = Some(stop);
            options.progress = Some(reporter.progress());
            return std::thread::scope(|scope| {
                let heartbeat = scope.spawn(|| reporter.heartbeat());
                // A panic in the plan must still end the heartbeat, or the
                // scope would wait for it forever instead of letting the
                // entry point's guard report the panic.
                let planned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    plan(problem, &options)
                }));
                let outcome = match planned {
                    Ok(outcome) => outcome,
                    Err(panic) => {
                        reporter.abandon();
                        let _ = heartbeat.join();
                        std::panic::resume_unwind(panic);
                    }
                };
                let height = outcome.solution.as_ref().map(|s| s.height(problem));
                reporter.finish(height, outcome.lower_bound);
                // Joined, the thread has exited (its thread-locals freed)
                // before the call returns; see `plan::schedule::run`.
                if let Err(panic) = heartbeat.join() {
                    std::panic::resume_unwind(panic);
                }
                outcome
            });
        }
    }
    let _ = report;
    plan(problem, options)
}
