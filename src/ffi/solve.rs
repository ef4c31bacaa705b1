//! The solve entry points: a problem and options in, a solution (or the
//! reason there is none) out, with the statistics left in the options.

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
use crate::plan::{plan, Method, Objective, Options, Status};

/// Places every buffer of `problem` below its capacity, with no options
/// but a timeout (0: none). On `MINIMALLOC_STATUS_OK` writes a new
/// solution to `out_solution`, which the caller frees; on any other status
/// `out_solution` is left alone and `minimalloc_last_error` says why. An
/// empty problem solves with height 0.
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
/// timeout, node limit, cancel flag, seed, threads and base address; the
/// statistics, the lower bound, the optimal flag and any failure message
/// are left in them. Several threads may solve with different options at
/// once, or with the same `problem`.
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
    ffi_guard!(on o = options => {
            let timeout_ms = o.timeout_ms.load(Ordering::Relaxed);
            // Safety: as the caller passed them.
            unsafe { solve_checked(problem, Some(o), &o.error, timeout_ms, out_solution) }
    })
}

/// Both solve calls: checks the pointers, turns the options (defaults
/// without a handle: one thread, no cancel flag) into a plan's, solves;
/// why it failed goes to `message`.
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
    {
        // Safety: NULL or a live handle, by contract.
        let Some(p) = (unsafe { problem.as_ref() }) else {
            return minimalloc_status::NullPointer;
        };
        if out_solution.is_null() {
            return minimalloc_status::NullPointer;
        }
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
            settings.cancel = Some(o.cancel.clone());
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
        // Safety: checked non-NULL; writable by contract.
        solve(p, &settings, handle, message, unsafe { &mut *out_solution })
    }
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

fn solve(
    handle: &minimalloc_problem,
    options: &Options,
    report: Option<&minimalloc_options>,
    message: &Message,
    out: &mut *mut minimalloc_solution,
) -> minimalloc_status {
    let problem = &handle.problem;
    let base = report.map_or(0, |o| o.base.load(Ordering::Relaxed));
    if let Err(e) = problem.check_base(base) {
        message.set_error(&e);
        return minimalloc_status::InvalidArgument;
    }
    let outcome = plan_reporting(problem, options, report);
    if let Some(o) = report {
        #[cfg(feature = "constraints")]
        {
            let conflict = outcome.conflict.as_ref();
            o.conflict
                .with(|c| *c = conflict.map(|c| c.buffers.clone()).unwrap_or_default());
            o.conflict_irreducible
                .store(conflict.is_some_and(|c| c.irreducible), Ordering::Relaxed);
            let reports = outcome.pooled.as_ref().map(|p| {
                p.reports
                    .iter()
                    .map(|r| (r.height, r.lower_bound, r.buffers.len()))
                    .collect()
            });
            o.pools.with(|r| *r = reports.unwrap_or_default());
        }
        o.nodes.store(outcome.stats.nodes, Ordering::Relaxed);
        let ns = u64::try_from(outcome.stats.elapsed.as_nanos()).unwrap_or(u64::MAX);
        o.elapsed_ns.store(ns, Ordering::Relaxed);
        o.lower_bound.store(outcome.lower_bound, Ordering::Relaxed);
        o.optimal.store(outcome.optimal, Ordering::Relaxed);
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
    if let Some(why) = why {
        message.set(&why);
    }
    if let Some(solution) = outcome.solution {
        // With pools, the highest top in any pool (addresses include the
        // pools' bases).
        #[cfg(feature = "constraints")]
        let (height, pools) = match &outcome.pooled {
            Some(p) => (
                p.reports.iter().map(|r| r.height).max().unwrap_or(0),
                p.pool_of.clone(),
            ),
            None => (solution.height(problem), alloc::vec::Vec::new()),
        };
        #[cfg(not(feature = "constraints"))]
        let height = solution.height(problem);
        // The base is checked above but for this (as Solution::addresses).
        if height.checked_add(base).is_none() {
            message.set_error(&crate::model::problem::Error::BaseOverflow { base, height });
            return minimalloc_status::InvalidArgument;
        }
        // What it pays, and the bound the penalty objective proved (else 0).
        #[cfg(feature = "constraints")]
        let penalty = match outcome.penalty {
            Some(p) => (p.cost, p.lower_bound),
            None => (solution.penalty(problem), 0),
        };
        let mut offsets = solution.offsets;
        offsets.iter_mut().for_each(|o| *o += base);
        *out = Box::into_raw(Box::new(minimalloc_solution {
            offsets,
            height,
            #[cfg(feature = "constraints")]
            pools,
            #[cfg(feature = "constraints")]
            penalty,
        }));
    }
    status
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
            let reporter = super::progress::Reporter::new(callback, o.cancel.clone());
            let mut options = options.clone();
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
