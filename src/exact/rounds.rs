//! How one partition of the sweep's search is searched: hints first, then
//! the orderings in rounds of a doubling node limit, and between rounds
//! short restarts of the orderings shaken at random.

use alloc::vec::Vec;

use super::order::Preorder;
use super::search::{Part, RunEnd, Search, FREE};
use crate::base::rng::Rng;
use crate::deadline::Poll;
use crate::model::problem::Problem;

/// Which runs [`solve_part`] makes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rotation {
    /// The orderings in turns, with shaken restarts between rounds where
    /// `Params::shaken_restarts` asks for them.
    Turns,
    /// The shaken restarts alone (for tests: what they decide must hold).
    #[cfg_attr(not(test), allow(dead_code))]
    ShakenOnly,
}

/// Solves one partition: hints first (briefly), then the orderings
/// round-robin with a growing node limit; after each round, with the
/// `shaken` ranking (where the orderings take turns), short runs of the
/// orderings shaken at random, as many nodes in all as one ordering took
/// in the round.
///
/// Why: a depth-first search that goes wrong near its root rarely comes
/// back there, and the orderings' runs restart the same tree each round.
/// On a 110-buffer kernel without separations that fits its max load the
/// three orderings ran 15 million nodes in 10 s without a placement,
/// while most of their shaken copies placed it in one dive (111 nodes).
/// Short randomised restarts are the usual cure for such heavy tails;
/// their lengths follow Luby's sequence (1, 1, 2, 1, 1, 2, 4, ...) times
/// twice the part's size, which is within a log factor of the best fixed
/// length whatever the instance, so no length is tuned here. How far
/// buffers may swap is drawn log-uniformly from 2 to the part's size, for
/// the same reason. Every shaken ranking is a static preorder like the
/// others, so a shaken run that ends without a placement is a proof.
pub(super) fn solve_part(
    search: &mut Search<'_>,
    runs_of: PartRuns<'_>,
    problem: &Problem,
    capacity: i64,
    poll: &mut Poll<'_>,
) -> RunEnd {
    // Where an earlier call on this part at this capacity was cut short:
    // its hints and every run before that one were searched then, without
    // an answer, and would end the same way again.
    #[cfg(feature = "heuristics")]
    if let Some(from) = runs_of.resume.take() {
        return runs(search, runs_of, from, poll);
    }
    let part = runs_of.part;
    let buffers = problem.buffers();
    let hinted: Vec<u32> = search
        .members(part)
        .iter()
        .copied()
        .filter(|&b| {
            let b = &buffers[b as usize];
            b.offset.is_none() && b.hint.is_some_and(|h| h + b.size <= capacity)
        })
        .collect();
    if !hinted.is_empty() {
        // Treat hints as fixed offsets for a short search: a recompile whose
        // previous offsets still fit keeps them.
        for &b in &hinted {
            search.set_fixed(b, buffers[b as usize].hint.unwrap_or(FREE));
        }
        let limit = (2 * part.len as u64 + 64).min(*runs_of.budget);
        let before = search.nodes;
        let end = search.run(part, 0, limit, poll);
        *runs_of.budget = runs_of.budget.saturating_sub(search.nodes - before);
        if let RunEnd::Stopped(_) | RunEnd::Solved = end {
            runs_of.solved_by[0].1 += u32::from(end == RunEnd::Solved);
            return end;
        }
        for &b in &hinted {
            search.set_fixed(b, FREE);
        }
    }

    let first = Position {
        limit: match runs_of.solved_by.len() {
            1 => u64::MAX,
            _ => 2 * part.len as u64,
        },
        turn: 0,
        shaken_spent: 0,
        restarts: 0,
        rng: Rng::new(0x5A4E_u64 ^ u64::from(part.lo)),
    };
    runs(search, runs_of, first, poll)
}

/// One partition's sequence of runs: which it makes, the nodes the call
/// has left for them, where an earlier call stopped (and this one will),
/// and where each ordering's answers are counted.
pub(super) struct PartRuns<'a> {
    pub(super) part: Part,
    /// The shaken ranking's slot, where the orderings take turns.
    pub(super) shaken: Option<usize>,
    pub(super) rotation: Rotation,
    pub(super) budget: &'a mut u64,
    pub(super) resume: &'a mut Option<Position>,
    /// For each ordering, how many partitions it solved.
    pub(super) solved_by: &'a mut [(Preorder, u32)],
    /// Partitions the shaken runs solved.
    pub(super) shaken_solved: &'a mut u32,
}

/// Where [`solve_part`]'s sequence of runs stands before one run: the
/// round's node limit per ordering, the turn within the round, what the
/// round's shaken runs have spent, how many shaken runs there were, and
/// the generator that shakes them. A call that starts from a position
/// makes the runs the sequence would have made from there: each ordering's
/// with the same limit, each shaken one with the same length and spread.
/// (A shaken ranking deals its draws over the part's members in the order
/// the runs before left them in, so a resumed one is another shake of the
/// same kind, not the same shake; drawing them in rank order instead
/// changed no figure but a few tails either way, measured.)
#[derive(Clone, Debug)]
pub(crate) struct Position {
    limit: u64,
    turn: usize,
    shaken_spent: u64,
    restarts: u64,
    rng: Rng,
}

/// The runs of [`solve_part`] from `from` (the first, or where an earlier
/// call stopped). A run that the budget or the deadline cuts short, or
/// that places the part, leaves its starting position in `resume`: the
/// next call at this capacity starts there (a placed part is placed again
/// by that one run when a later part ran out).
fn runs(
    search: &mut Search<'_>,
    runs_of: PartRuns<'_>,
    from: Position,
    poll: &mut Poll<'_>,
) -> RunEnd {
    let PartRuns {
        part,
        shaken,
        rotation,
        budget,
        resume,
        solved_by,
        shaken_solved,
    } = runs_of;
    #[cfg(not(feature = "heuristics"))]
    let _ = resume;
    let orderings = solved_by.len();
    let turns = match rotation {
        Rotation::Turns => orderings,
        Rotation::ShakenOnly => 0,
    };
    let unit = 2 * part.len as u64;
    let Position {
        mut limit,
        turn: mut first_turn,
        shaken_spent: mut first_spent,
        mut restarts,
        mut rng,
    } = from;
    loop {
        // The orderings' turns, then shaken runs while they have spent
        // less than one turn's limit (one call of the search, for the
        // tiny build's size).
        let (mut turn, mut shaken_spent) = (first_turn, first_spent);
        (first_turn, first_spent) = (0, 0);
        while turn < turns || shaken.is_some_and(|_| shaken_spent < limit) {
            #[cfg(feature = "heuristics")]
            let at = Position {
                limit,
                turn,
                shaken_spent,
                restarts,
                rng: rng.clone(),
            };
            let (ranking, run) = match shaken.filter(|_| turn >= turns) {
                Some(slot) => {
                    restarts += 1;
                    let bits = u64::BITS - u64::from(part.len).leading_zeros();
                    let spread = 1u64 << (1 + rng.next() % u64::from(bits));
                    let from = (restarts % orderings as u64) as usize;
                    search.shake(part, (from, slot), &mut rng, spread);
                    (slot, unit.saturating_mul(luby(restarts)))
                }
                None => (turn, limit),
            };
            let before = search.nodes;
            let end = search.run(part, ranking, run.min(*budget), poll);
            let used = search.nodes - before;
            *budget = budget.saturating_sub(used);
            if turn >= turns {
                shaken_spent = shaken_spent.saturating_add(used.max(1));
            }
            turn += 1;
            match end {
                RunEnd::Solved if ranking < orderings => solved_by[ranking].1 += 1,
                RunEnd::Solved => *shaken_solved += 1,
                RunEnd::NodeLimit if *budget > 0 => continue,
                _ => {}
            }
            #[cfg(feature = "heuristics")]
            if end != RunEnd::Infeasible {
                *resume = Some(at);
            }
            return end;
        }
        limit = limit.saturating_mul(2);
    }
}

/// The `i`-th term (from 1) of Luby's sequence: 1, 1, 2, 1, 1, 2, 4, 1,
/// 1, 2, 1, 1, 2, 4, 8, ...
fn luby(mut i: u64) -> u64 {
    loop {
        // The smallest k with 2^k - 1 >= i.
        let k = u64::BITS - i.leading_zeros();
        if i == (1u64 << k) - 1 {
            return 1u64 << (k - 1);
        }
        i -= (1u64 << (k - 1)) - 1;
    }
}

#[cfg(test)]
mod tests {
    /// Luby's sequence, its first 31 terms: each block is the one before
    /// twice, then the next power of two.
    #[test]
    fn luby_is_luby() {
        let mut expected = alloc::vec![1u64];
        while expected.len() < 31 {
            let next = 2 * expected.last().unwrap();
            expected.extend_from_within(..);
            expected.push(next);
        }
        let got: alloc::vec::Vec<u64> = (1..=31).map(super::luby).collect();
        assert_eq!(got, expected);
    }

    /// Calls cut short by their node limits and made again with one memo
    /// decide as one call without a limit does: they place where it
    /// places (validly, below the capacity) and prove or exhaust what it
    /// does. The calls at two capacities alternate on one memo, so each
    /// resumes its own; and with the memo the calls take fewer nodes in all
    /// than without it on many problems (without it, every call searched
    /// again what the one before had, so a memo that kept nothing would
    /// make no difference at all). 4,000 small problems with gaps,
    /// alignments and fixed buffers, and 1,000 planted ones with dense
    /// separations lowered to moments, the sweep's search alone, limits
    /// from up to 8 nodes a buffer doubling per call.
    #[test]
    #[cfg(all(feature = "constraints", feature = "heuristics"))]
    fn resumed_calls_decide_as_one_call_does() {
        use super::super::testing::{answered_in_calls, assert_decides_as, gapped, planted};
        use super::super::{solve, solve_remembering, Params};
        use crate::base::rng::Rng;
        use crate::deadline::Deadline;
        let mut rng = Rng::new(0x2e5u64);
        let deadline = Deadline::new(None, None, None);
        let sweep = Params {
            conflict_graph: false,
            ..Params::default()
        };
        let (mut resumed, mut fewer, mut more) = (0, 0, 0);
        for i in 0..5_000 {
            let problem = if i < 1_000 {
                let n = rng.below(4, 32) as usize;
                planted(&mut rng, n).lowered().expect("lowers").problem
            } else {
                gapped(&mut rng)
            };
            let below = rng.below(1, problem.capacity().max(1) + 1);
            let capacities = [problem.capacity(), below];
            let whole = capacities.map(|c| solve(&problem, c, &sweep, &deadline).0);
            // The first limit: a few of the first runs' (each ordering's
            // first run has twice the buffers), so that calls cover whole
            // runs, as the planner's do.
            let first = 1 + rng.below(0, 8 * problem.len() as i64) as u64;
            let (answers, calls, nodes) = answered_in_calls(
                &problem,
                capacities,
                (&sweep, first, true),
                solve_remembering,
            );
            let (_, _, fresh_nodes) = answered_in_calls(
                &problem,
                capacities,
                (&sweep, first, false),
                solve_remembering,
            );
            for k in 0..2 {
                let what = alloc::format!("problem {i}");
                assert_decides_as(&problem, capacities[k], (&whole[k], &answers[k]), &what);
                resumed += usize::from(calls[k] > 1);
                fewer += usize::from(nodes[k] < fresh_nodes[k]);
                more += usize::from(nodes[k] > fresh_nodes[k]);
            }
        }
        assert!(
            resumed > 500 && fewer > 50 && more < fewer,
            "{resumed} resumed, {fewer} with fewer nodes, {more} with more"
        );
    }

    /// The shaken restarts alone (every decision theirs) answer as the
    /// orderings' turns do, on 20,000 small random problems with gaps,
    /// alignments and fixed buffers and 5,000 planted ones with dense
    /// separations, each at its capacity and at a random one below: the
    /// same proofs, and placements that are valid and fit. (The turns are
    /// checked against brute force in `tests/exactness.rs`.)
    #[test]
    #[cfg(feature = "constraints")]
    fn shaken_restarts_alone_decide_as_the_turns_do() {
        use super::super::testing::{fits, gapped, planted};
        use super::super::{solve, solve_into, Params, Stats, Verdict};
        use super::Rotation;
        use crate::base::rng::Rng;
        use crate::deadline::Deadline;
        let mut rng = Rng::new(0x54a6);
        let deadline = Deadline::new(None, None, None);
        let turns = Params {
            shaken_restarts: false,
            ..Params::default()
        };
        let (mut placed, mut proven) = (0, 0);
        for i in 0..25_000 {
            let problem = if i < 5_000 {
                let n = rng.below(4, 14) as usize;
                // Its separations as moments of their own, as the planner
                // hands them to the search.
                planted(&mut rng, n).lowered().expect("lowers").problem
            } else {
                gapped(&mut rng)
            };
            let below = rng.below(1, problem.capacity().max(1) + 1);
            for capacity in [problem.capacity(), below] {
                let (expected, _) = solve(&problem, capacity, &turns, &deadline);
                let mut stats = Stats::default();
                let shaken = solve_into(
                    &problem,
                    capacity,
                    &Params::default(),
                    &deadline,
                    &mut stats,
                    Rotation::ShakenOnly,
                    &mut super::super::Memo::default(),
                );
                match (&expected, &shaken) {
                    (Verdict::Solved(_), Verdict::Solved(offsets)) => {
                        assert!(
                            fits(&problem, offsets, capacity),
                            "instance {i} at {capacity}"
                        );
                        placed += 1;
                    }
                    (a, b) => {
                        assert_eq!(a, b, "instance {i} at {capacity}");
                        proven += usize::from(*b == Verdict::Infeasible);
                    }
                }
            }
        }
        assert!(
            placed > 5_000 && proven > 5_000,
            "{placed} placed, {proven} proven"
        );
    }
}
