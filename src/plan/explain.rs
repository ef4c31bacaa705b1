//! Why a capacity cannot be met: a small set of buffers that cannot fit
//! together, for a compiler to report ("these tensors need 12 bytes at
//! step 0; the arena has 11").
//!
//! First the max-load section, which is free: the buffers alive at the
//! busiest moment, largest first, until they exceed the capacity. Taken
//! largest first, every one of them is needed when they are plain (whole
//! at that moment, alignment 1, not fixed): without any one, the others
//! stacked take at most the sum without the smallest, which fits. So that
//! set is irreducible. Otherwise (alignments, fixed offsets, windows can
//! make fewer of them fail already), or when the max load fits and the
//! proof came from the exact search, a deletion filter shrinks the set
//! (the section, or the whole problem): it drops blocks
//! of buffers (halves, quarters, ... single ones) as long as the exact
//! search proves what remains infeasible. The result is irreducible when
//! the last pass proved, for every buffer left, that the others fit
//! without it; if the deadline or the node budget (four times the nodes of
//! the proof it explains, at least 100,000) ends first, the set is still a
//! valid conflict, only perhaps not minimal.

use alloc::vec::Vec;

use super::exact_call;
use super::options::Options;
use super::outcome::Conflict;
use crate::deadline::Deadline;
use crate::exact::Verdict;
use crate::model::problem::Problem;

/// The deletion filter may spend this many times the nodes of the proof
/// it explains (and at least [`MIN_NODES`]): an explanation costs a few
/// times the answer, whatever the timeout.
const NODES_PER_PROOF_NODE: u64 = 4;
const MIN_NODES: u64 = 100_000;

/// A conflict for a plain problem proven infeasible at its capacity by a
/// search of `proof_nodes` nodes.
pub(crate) fn explain(
    problem: &Problem,
    options: &Options,
    deadline: &Deadline<'_>,
    proof_nodes: u64,
) -> Conflict {
    let budget = proof_nodes
        .saturating_mul(NODES_PER_PROOF_NODE)
        .max(MIN_NODES);
    match peak(problem) {
        Some((buffers, true)) => Conflict {
            buffers,
            irreducible: true,
        },
        Some((section, false)) => deletion_filter(problem, section, options, deadline, budget),
        None => deletion_filter(
            problem,
            (0..problem.len()).collect(),
            options,
            deadline,
            budget,
        ),
    }
}

/// The max-load section, if it alone exceeds the capacity: its largest
/// buffers that do, and whether they are all plain (see above).
fn peak(problem: &Problem) -> Option<(Vec<usize>, bool)> {
    let buffers = problem.buffers();
    let (best, at) = crate::model::load::busiest(problem);
    if best <= problem.capacity() {
        return None;
    }
    let mut alive: Vec<(i64, usize)> = Vec::new();
    for (i, b) in buffers.iter().enumerate() {
        if let Some(p) = b.pieces().find(|p| p.lower <= at && at < p.upper) {
            alive.push((p.window.upper - p.window.lower, i));
        }
    }
    alive.sort_unstable_by(|a, b| b.cmp(a));
    let mut sum = 0i64;
    let mut chosen = Vec::new();
    let mut plain = true;
    for (h, i) in alive {
        let b = &buffers[i];
        plain &= h == b.size && b.alignment == 1 && b.offset.is_none();
        sum = sum.saturating_add(h);
        chosen.push(i);
        if sum > problem.capacity() {
            break;
        }
    }
    chosen.sort_unstable();
    Some((chosen, plain))
}

/// Shrinks `keep`, a set of buffers that cannot fit together, with the
/// exact search.
fn deletion_filter(
    problem: &Problem,
    mut keep: Vec<usize>,
    options: &Options,
    deadline: &Deadline<'_>,
    budget: u64,
) -> Conflict {
    let mut spent = 0u64;
    let mut chunk = keep.len().div_ceil(2).max(1);
    loop {
        let mut sure = true;
        let mut i = 0;
        while i < keep.len() {
            let end = (i + chunk).min(keep.len());
            let trial: Vec<usize> = keep[..i].iter().chain(&keep[end..]).copied().collect();
            let out_of_budget = deadline.check().is_err() || spent >= budget;
            let verdict = if out_of_budget {
                None
            } else {
                infeasible(problem, &trial, options, deadline, budget, &mut spent)
            };
            match verdict {
                // Still infeasible without the block: drop it.
                Some(true) => keep = trial,
                Some(false) => i = end,
                None => {
                    sure = false;
                    i = end;
                }
            }
        }
        if chunk == 1 {
            return Conflict {
                buffers: keep,
                irreducible: sure,
            };
        }
        chunk = chunk.div_ceil(2);
    }
}

/// Whether buffers `subset` of `problem` cannot fit its capacity:
/// `Some(true)` proven, `Some(false)` placed, `None` not known.
fn infeasible(
    problem: &Problem,
    subset: &[usize],
    options: &Options,
    deadline: &Deadline<'_>,
    budget: u64,
    spent: &mut u64,
) -> Option<bool> {
    if subset.is_empty() {
        return Some(false);
    }
    let buffers = subset
        .iter()
        .map(|&i| problem.buffers()[i].clone())
        .collect();
    let sub = Problem::new(problem.capacity(), buffers).ok()?;
    let mut params = options.solver.clone();
    params.node_limit = Some(budget.saturating_sub(*spent).max(1));
    let (verdict, stats) = exact_call::solve(&sub, sub.capacity(), &params, deadline);
    *spent += stats.nodes;
    match verdict {
        Verdict::Infeasible => Some(true),
        Verdict::Solved(_) => Some(false),
        _ => None,
    }
}
