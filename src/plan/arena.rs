//! Planning one arena: a problem without pools, its links lowered, by
//! the objective's schedule (or the exact search alone).

use super::exact_call;
#[cfg(feature = "constraints")]
use super::explain;
#[cfg(feature = "heuristics")]
use super::options::Method;
#[cfg(any(feature = "heuristics", feature = "constraints"))]
use super::options::Objective;
use super::options::{Options, Source};
use super::outcome::{Outcome, Status};
#[cfg(feature = "heuristics")]
use super::{fit, minimize, schedule};
use crate::deadline::Deadline;
use crate::exact::Verdict;
use crate::model::problem::Problem;
use crate::model::solution::Solution;

// A bound proven once the plain orders have run; without the heuristics
// there are no plain orders, and no such bound is made.
use crate::deadline::LateBound;

/// Plans `problem`, which has no pools: offsets below its capacity (or of
/// the lowest height, when minimising), or a proof that none exist, or the
/// reason it stopped.
pub(super) fn plan_arena(problem: &Problem, options: &Options) -> Outcome {
    plan_arena_above(problem, options, 0, None)
}

/// [`plan_arena`] knowing that no placement is lower than `floor` (a bound
/// found on the problem before its links were lowered), nor than what
/// `late` proves once the plain orders have run.
fn plan_arena_above(
    problem: &Problem,
    options: &Options,
    floor: i64,
    late: Option<&LateBound<'_>>,
) -> Outcome {
    #[cfg(feature = "constraints")]
    if !problem.links().is_empty() {
        return plan_linked(problem, options);
    }
    let deadline = options.deadline();
    if let Err(stop) = deadline.check() {
        return stopped_at_once(problem, stop);
    }
    #[cfg(feature = "heuristics")]
    let mut outcome = if options.method != Method::Exact || options.objective != Objective::Fit {
        plan_with_heuristics(problem, options, deadline, floor, late)
    } else {
        exact_only(problem, options, &deadline)
    };
    #[cfg(not(feature = "heuristics"))]
    let mut outcome = {
        let _ = (floor, late);
        exact_only(problem, options, &deadline)
    };
    // Whatever found it, a placement at the proven bound is optimal.
    if let Some(s) = &outcome.solution {
        outcome.optimal = s.height(problem) <= outcome.lower_bound;
    }
    #[cfg(feature = "constraints")]
    if outcome.status == Status::Infeasible && options.objective == Objective::Fit {
        let nodes = outcome.stats.nodes;
        outcome.conflict = Some(explain::explain(problem, options, &deadline, nodes));
    }
    outcome
}

/// Plans a problem with colocations or separations: on its lowering to
/// plain buffers (see `crate::model::links::Lowered`), read back per buffer.
#[cfg(feature = "constraints")]
fn plan_linked(problem: &Problem, options: &Options) -> Outcome {
    // Minimising, the heaviest clique of buffers that conflict (separated
    // or alive together) bounds the height where the lowered problem's max
    // load does not see it: the lanes stop as soon as they meet it.
    // Fitting, a clique heavier than the capacity proves at once that
    // nothing fits (it is the conflict reported).
    let lowered = match problem.lowered() {
        Ok(lowered) => lowered,
        // The links are checked as they are made, so the lowering is
        // valid; should it not be, no placement is claimed.
        Err(_) => {
            let mut outcome = Outcome::empty(0);
            outcome.status = Status::NotFound;
            return outcome;
        }
    };
    // Minimising, the clique waits for the plain orders (a kernel's first
    // placements come within a millisecond or two; the clique takes a few).
    #[cfg(feature = "heuristics")]
    let load = crate::model::load::busiest(&lowered.problem).0;
    #[cfg(feature = "heuristics")]
    let clique = |deadline: &Deadline<'_>, height: i64| {
        crate::graph::clique::conflict_bound(problem, CLIQUE_NODES, (load, height), Some(deadline))
    };
    #[cfg(feature = "heuristics")]
    let late: Option<&LateBound<'_>> = match options.objective {
        Objective::Minimize => Some(&clique),
        // Fit (the penalty objective fits below this layer).
        _ => None,
    };
    #[cfg(not(feature = "heuristics"))]
    let late = None;
    #[cfg(feature = "heuristics")]
    let floor = match options.objective {
        // The lowered problem's max load is the original's (one lowering).
        Objective::Minimize => load,
        _ => {
            let capacity = problem.capacity();
            let deadline = options.deadline();
            let (weight, members) = crate::graph::clique::heaviest_clique(
                problem,
                CLIQUE_NODES,
                (capacity, i64::MAX),
                Some(&deadline),
            );
            if weight > capacity {
                return clique_too_heavy(weight, members, capacity, problem);
            }
            0
        }
    };
    #[cfg(not(feature = "heuristics"))]
    let floor = 0;
    // Separations lowered are moments after every lifetime: the exact
    // search takes them as conflicts between buffers, not as time.
    let mut graph_options;
    let options = match problem.separations().is_empty() {
        true => options,
        false => {
            graph_options = options.clone();
            graph_options.solver.conflict_graph = true;
            &graph_options
        }
    };
    let mut outcome = plan_arena_above(&lowered.problem, options, floor, late);
    if let Some(s) = outcome.solution.take() {
        outcome.solution = Some(Solution {
            offsets: lowered.lift(&s.offsets),
        });
    }
    // A conflict among lowered buffers names all their members.
    if let Some(c) = &mut outcome.conflict {
        let by_unit = lowered.members();
        let mut members: alloc::vec::Vec<usize> = c
            .buffers
            .iter()
            .flat_map(|&u| by_unit[u].iter().copied())
            .collect();
        members.sort_unstable();
        c.buffers = members;
    }
    outcome
}

/// Fitting: `members`, a clique of buffers weighing `weight`, pass the
/// capacity: infeasible, with them as the conflict. Irreducible when any
/// one left out, the others stack below the capacity: their sizes fit and
/// nothing (an alignment, a fixed offset) keeps them from stacking.
#[cfg(all(feature = "constraints", feature = "heuristics"))]
fn clique_too_heavy(
    weight: i64,
    members: alloc::vec::Vec<usize>,
    capacity: i64,
    problem: &Problem,
) -> Outcome {
    let buffers = problem.buffers();
    let smallest = members.iter().map(|&m| buffers[m].size).min().unwrap_or(0);
    let plain = members
        .iter()
        .all(|&m| buffers[m].alignment == 1 && buffers[m].offset.is_none());
    let mut outcome = Outcome::empty(weight);
    outcome.status = Status::Infeasible;
    outcome.conflict = Some(super::outcome::Conflict {
        irreducible: plain && weight - smallest <= capacity,
        buffers: members,
    });
    outcome
}

/// Search nodes the clique bound may take: a few milliseconds.
#[cfg(all(feature = "constraints", feature = "heuristics"))]
const CLIQUE_NODES: u64 = 20_000;

#[cfg(feature = "heuristics")]
fn plan_with_heuristics(
    problem: &Problem,
    options: &Options,
    deadline: Deadline<'_>,
    floor: i64,
    late: Option<&LateBound<'_>>,
) -> Outcome {
    let stand_in = stands_in(options, &deadline);
    let first = placed_at_once(problem, options, &deadline, stand_in);
    let mut work = match schedule::Work::new(problem, options, deadline, floor, late) {
        Ok(work) => work,
        Err(stop) => {
            let mut outcome = match options.objective {
                Objective::Minimize => minimize::stopped_early(problem, first, stop),
                _ => stopped_at_once(problem, stop),
            };
            outcome.stats.elapsed = deadline.elapsed();
            return outcome;
        }
    };
    match stand_in {
        true => work.stand_in = first.or_else(|| online_on_layout(&work)),
        false => work.at_once = first,
    }
    let mut outcome = match options.objective {
        Objective::Minimize => minimize::minimize(&work),
        _ => fit::fit(&work),
    };
    outcome.stats.elapsed = work.deadline.elapsed();
    outcome
}

/// Buffers from which, minimising with a timeout, the online strategy's
/// plain order is placed before the layout: below, the layout costs
/// little beside the budget.
#[cfg(feature = "heuristics")]
const AT_ONCE_FROM: usize = 65_536;

/// Whether the plan keeps the online order's placement aside to stand in
/// for the one heuristic asked for, should that one place nothing in the
/// time: minimising with a timeout by a heuristic other than online. The
/// others cost more than the online order's one pass (first-fit's tree,
/// best-fit's search of every hole), may not finish a large problem in
/// the budget, and every buffer stacked above the other is no answer.
/// The stand-in costs a fraction of the strategy it stands in for.
#[cfg(feature = "heuristics")]
fn stands_in(options: &Options, deadline: &Deadline<'_>) -> bool {
    let other = matches!(options.method,
        Method::Heuristic(s) if s != crate::heuristic::Strategy::Online);
    other && options.objective == Objective::Minimize && deadline.remaining().is_some()
}

/// Minimising with a timeout, the placement the plan has first, made
/// before the layout (whose compressed time costs more than this
/// placement: see [`crate::heuristic::online_at_once`]), so that a
/// deadline the layout would miss, or a machine too busy to reach it,
/// still returns a good placement rather than the stacked one: on large
/// problems (reported at once, with the largest buffer as the bound: the
/// max load comes with the layout), and as the `stand_in` for another
/// heuristic (not reported: the result is that heuristic's if it places
/// every buffer, even higher).
#[cfg(feature = "heuristics")]
fn placed_at_once(
    problem: &Problem,
    options: &Options,
    deadline: &Deadline<'_>,
    stand_in: bool,
) -> Option<crate::heuristic::Best> {
    let online = matches!(
        options.method,
        Method::Auto | Method::Heuristic(crate::heuristic::Strategy::Online)
    );
    let timed = deadline.remaining().is_some();
    let large = online && timed && problem.len() >= AT_ONCE_FROM;
    if options.objective != Objective::Minimize || !(large || stand_in) {
        return None;
    }
    let mut poll = crate::deadline::Poll::new(deadline, 1 << 16);
    let (offsets, height) = crate::heuristic::online_at_once(problem, &mut poll).ok()??;
    if height > problem.capacity() {
        return None;
    }
    if let Some(p) = options.progress.as_ref().filter(|_| !stand_in) {
        (p.0)(&super::options::Report {
            height: Some(height),
            lower_bound: problem.buffers().iter().map(|b| b.size).max().unwrap_or(0),
            elapsed: deadline.elapsed(),
        });
    }
    Some(crate::heuristic::Best {
        offsets,
        height,
        variant: crate::heuristic::Variant::plain(crate::heuristic::Strategy::Online),
        restart: 0,
    })
}

/// The online order's plain placement on the layout, for a stand-in
/// where [`crate::heuristic::online_at_once`] does not apply (gaps, fixed
/// offsets): `None` if it does not fit the capacity or the deadline
/// comes first.
#[cfg(feature = "heuristics")]
fn online_on_layout(work: &schedule::Work<'_>) -> Option<crate::heuristic::Best> {
    let mut poll = crate::deadline::Poll::new(&work.deadline, 1 << 11);
    let online = crate::heuristic::Variant::plain(crate::heuristic::Strategy::Online);
    let capacity = work.problem.capacity();
    crate::heuristic::plain(&work.layout, online, i64::MAX, &mut poll)
        .ok()?
        .filter(|b| b.height <= capacity)
}

/// What a plan stopped before any work returns: nothing placed, and the
/// max load as the lower bound (every outcome promises at least that; it
/// costs a sort of the lifetimes, little beside reading the input). The
/// tiny build, whose bounds come from the exact search's sweep alone,
/// reports 0 (not known): the max load's own code would cost it bytes.
fn stopped_at_once(problem: &Problem, stop: crate::deadline::Stop) -> Outcome {
    #[cfg(feature = "heuristics")]
    let bound = crate::model::load::max_load(problem);
    #[cfg(not(feature = "heuristics"))]
    let bound = {
        let _ = problem;
        0
    };
    Outcome::empty(bound).stop(stop)
}

/// The exact search alone, at the problem's capacity.
fn exact_only(problem: &Problem, options: &Options, deadline: &Deadline<'_>) -> Outcome {
    let (verdict, stats) =
        exact_call::solve(problem, problem.capacity(), &options.solver, deadline);
    let mut outcome = Outcome::empty(stats.lower_bound);
    outcome.stats = stats;
    match verdict {
        Verdict::Solved(offsets) => {
            outcome.status = Status::Solved;
            outcome.solution = Some(Solution { offsets });
            outcome.source = Some(Source::Exact);
        }
        Verdict::Infeasible => {
            outcome.status = Status::Infeasible;
            outcome.lower_bound = problem.capacity().saturating_add(1);
        }
        Verdict::Exhausted | Verdict::NodeLimit => {}
        Verdict::Stopped(stop) => return outcome.stop(stop),
    }
    outcome
}
