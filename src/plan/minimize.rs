//! The lowest height within a deadline.
//!
//! - Lower bound: the max load (no placement is lower than the most memory
//!   alive at one time) and the highest fixed buffer; the exact search
//!   raises it when it proves a capacity infeasible.
//! - Upper bound: the best placement the scheduler's lanes hold (plain
//!   and perturbed placements, local repair; on a separated kernel, the
//!   walk over orders on its conflict graph beside the repair, with one
//!   lane as much time as the exact search, which then takes at most half
//!   of what is left per round).
//! - Between them, while the problem is small enough for it, the exact
//!   search at candidate capacities, one round of attempts at a time with
//!   a node limit that doubles each round: the lower bound first (tight
//!   problems fit it), then halving the interval, nearer the best after
//!   attempts stopped short of their first dive. A placement found there
//!   lowers the upper bound; a proof raises the lower bound; an attempt
//!   that runs out of nodes is tried again, with more, next round.
//!
//! The result is the lowest placement found, its height, the lower bound,
//! and whether the two meet (then the height is proven optimal). At the
//! deadline the best so far is returned, never nothing once a heuristic
//! has run.

use core::time::Duration;

use super::exact_call;
use super::options::Source;
use super::outcome::{Outcome, Status};
use super::schedule::{self, Board, Exact, Goal, Incumbent, Work};
use crate::base::math::align_up;
use crate::deadline::{Deadline, Stop};
use crate::exact::{Stats, Verdict};
use crate::heuristic::Best;
use crate::model::problem::Problem;
use crate::model::solution::Solution;

pub(crate) fn minimize(work: &Work<'_>) -> Outcome {
    // The coarse level (see `heuristic::coarsen`) is minimised as a
    // problem of its own by this same function one level down (which
    // coarsens no further), with the plan's threads: its exact search
    // takes a core of its own there, as it does here.
    let coarse = |coarse: &Problem, deadline: Deadline<'_>, relay: &schedule::Relay<'_>| {
        one_level_down(work, coarse, (deadline, relay), minimize_level)
    };
    minimize_level(work, Some(&coarse))
}

/// What `level` (the plan's objective, coarsening no further) places of
/// the coarse problem `coarse` of `work`'s, within `deadline`, with the
/// plan's options but no progress reports or counted restarts: its
/// placement and height, if it has one. Each placement its board takes
/// goes to `relay` as well, while it runs.
pub(super) fn one_level_down(
    work: &Work<'_>,
    coarse: &Problem,
    (deadline, relay): (Deadline<'_>, &schedule::Relay<'_>),
    level: fn(&Work<'_>, Option<&schedule::CoarseSolve<'_>>) -> Outcome,
) -> Option<Incumbent> {
    let options = super::options::Options {
        progress: None,
        restarts: None,
        ..work.options.clone()
    };
    let mut inner = Work::new(coarse, &options, deadline, 0, None).ok()?;
    inner.relay = Some(relay);
    let offsets = level(&inner, None).solution?.offsets;
    let height = height_of(coarse, &offsets);
    Some(Incumbent {
        offsets,
        height,
        source: Source::Coarsened,
    })
}

pub(super) fn minimize_level(
    work: &Work<'_>,
    coarse: Option<&schedule::CoarseSolve<'_>>,
) -> Outcome {
    let capacity = work.problem.capacity();
    let lower = work.lower_bound;
    let mut outcome = Outcome::empty(lower);
    if work.layout.fixed_clash || lower > capacity {
        outcome.status = Status::Infeasible;
        outcome.lower_bound = lower.max(capacity.saturating_add(1));
        return outcome;
    }
    let mut bisection = Bisection::new(lower);
    let found = if work.exact_applies() {
        let mut round = |nodes: Option<u64>, deadline: &Deadline<'_>, board: &Board| {
            bisection.round(work, nodes, deadline, board)
        };
        schedule::run(work, Goal::Minimize, Some(&mut round), coarse)
    } else {
        schedule::run(work, Goal::Minimize, None, coarse)
    };
    outcome.stats = bisection.stats;
    outcome.restarts = found.restarts;
    outcome.plain_height = found.plain_height;
    finish(work, outcome, found.best, found.lower, found.stop)
}

/// The exact search's state between rounds.
struct Bisection {
    /// Capacities below this are proven infeasible, or were searched in
    /// full without a placement.
    lo: i64,
    /// Without a timeout, the nodes an attempt may use in all.
    nodes_cap: Option<u64>,
    /// How long the last attempt that placed every buffer took: an
    /// attempt near its capacity is given at least that long.
    solved_in: Duration,
    /// The time and nodes of the attempts that visited any: what one
    /// node costs here, so what a dive over every buffer costs.
    searched: (Duration, u64),
    /// How far below the best the next attempt past one that ran out
    /// looks: `1 / 2^reach` of the way from there to the best. Each
    /// attempt stopped before its first dive placed every buffer halves
    /// the step, each placement doubles it again (up to the middle).
    reach: u32,
    stats: Stats,
    /// What the exact attempts exhausted, for the attempts after them.
    memo: exact_call::Memo,
}

/// In a round bounded by time, the share of the time left one exact
/// attempt may take (unless it is the last capacity to try).
const EXACT_SHARE: u32 = 3;

/// The shortest step past attempts cut short: a sixteenth of the way.
const MAX_REACH: u32 = 4;

/// Without a timeout, the nodes one exact attempt may visit (per buffer):
/// past that the rounds stop asking.
const EXACT_NODES_PER_BUFFER: u64 = 2_000;

impl Bisection {
    /// Nothing searched yet, capacities below `lo` ruled out.
    fn new(lo: i64) -> Bisection {
        Bisection {
            lo,
            nodes_cap: None,
            solved_in: Duration::ZERO,
            searched: (Duration::ZERO, 0),
            reach: 1,
            stats: Stats::default(),
            memo: exact_call::Memo::default(),
        }
    }

    /// What a dive that places each of `n` buffers once costs, at the
    /// time per node the attempts so far took (zero before any; the
    /// longest there is where that does not fit a duration).
    fn dive(&self, n: usize) -> Duration {
        let (took, nodes) = self.searched;
        match nodes {
            0 => Duration::ZERO,
            _ => Duration::try_from_secs_f64(took.as_secs_f64() * n as f64 / nodes as f64)
                .unwrap_or(Duration::MAX),
        }
    }

    /// The capacity the round tries next, between `from` (the lowest not
    /// ruled out this round) and `hi` (just below the best): without a
    /// placement below the capacity, the capacity itself (any placement
    /// beats none); else the lower bound (tight problems meet it). Right
    /// after a proof, the middle between the bounds: proofs that come at
    /// once climb by halves, not by one height at a time. Past an attempt
    /// that ran out, the middle between it and the best, or nearer the
    /// best after attempts stopped before their first dive placed every
    /// buffer (see [`Bisection::reach`]): such a stop says nothing of the
    /// capacities above, and a dive completes soonest near the best,
    /// where it has room; by halves alone a dense core's budget went to
    /// dives cut short one after another. An attempt that dived and then
    /// searched (a small problem's, most often) leaves the step at the
    /// middle, where its search is worth most.
    fn next_capacity(&self, (from, hi): (i64, i64), fits: bool, proved: bool, grain: i64) -> i64 {
        if !fits {
            hi
        } else if proved && self.lo < hi {
            self.lo + (hi - self.lo) / 2 / grain * grain
        } else if from == self.lo {
            from
        } else {
            hi - ((hi - from) >> self.reach)
        }
    }

    /// An attempt stopped before its first dive was done: the next looks
    /// nearer the best.
    fn cut_short(&mut self) {
        self.reach = (self.reach + 1).min(MAX_REACH);
    }

    /// An attempt placed every buffer: the next looks further down again.
    fn placed_every_buffer(&mut self) {
        self.reach = self.reach.saturating_sub(1).max(1);
    }

    /// Attempts with `nodes` each between the bounds: the lower bound
    /// first, then upward past each attempt that ran out of nodes (see
    /// [`Bisection::next_capacity`]), until the round has spent a few
    /// attempts' worth. Without a node count (the exact search has a core
    /// of its own), each attempt may take a third of the time left
    /// instead (at least a dive's time).
    fn round(
        &mut self,
        work: &Work<'_>,
        nodes: Option<u64>,
        deadline: &Deadline<'_>,
        board: &Board,
    ) -> Exact {
        const ATTEMPTS_PER_ROUND: u64 = 2;
        let cap = *self.nodes_cap.get_or_insert_with(|| {
            if work.deadline.remaining().is_some() {
                u64::MAX
            } else {
                EXACT_NODES_PER_BUFFER
                    .saturating_mul(work.problem.len() as u64)
                    .max(100_000)
            }
        });
        let limit = nodes.unwrap_or(u64::MAX).min(cap);
        let mut found: Option<Incumbent> = None;
        let mut from = self.lo;
        let mut spent = 0u64;
        let mut proved = false;
        loop {
            self.lo = self.lo.max(board.lower());
            from = from.max(self.lo);
            let best = found.as_ref().map_or(board.height(), |f| f.height);
            let hi = best.saturating_sub(1).min(work.problem.capacity());
            if self.lo > hi {
                return found.map_or(Exact::Done, Exact::Found);
            }
            if from > hi || spent >= ATTEMPTS_PER_ROUND.saturating_mul(limit) {
                return found.map_or(Exact::Nothing, Exact::Found);
            }
            let fits = best <= work.problem.capacity();
            let c = self.next_capacity((from, hi), fits, proved, work.grain);
            let halving = proved;
            proved = false;
            let mut params = work.options.solver.clone();
            if limit < u64::MAX {
                params.node_limit = Some(params.node_limit.map_or(limit, |n| n.min(limit)));
            }
            // The only capacity left to try gets all the time there is;
            // else, where rounds are bounded by time (a core of its own,
            // or a lane's share of its core: with a timeout and no count
            // of restarts), an attempt takes at most a third of the
            // round's time left, so that the round still climbs to the
            // capacities near the best.
            let clocked = work.deadline.remaining().is_some() && work.options.restarts.is_none();
            // On a large dense problem one dive costs seconds, and a third
            // of what is left may cut the next one short of its last
            // buffers with nothing backtracked: no attempt is given less
            // than the last one that placed them all took, nor less than
            // a dive over every buffer at the time per node seen so far
            // (before any attempt has placed them all, the shares shrank
            // by thirds and none of them could).
            let attempt = match deadline.remaining() {
                Some(left) if self.lo < hi && (nodes.is_none() || clocked) => {
                    let floor = self.solved_in.max(self.dive(work.problem.len()));
                    deadline.sooner((left / EXACT_SHARE).max(floor))
                }
                _ => *deadline,
            };
            let started = work.deadline.elapsed();
            let (verdict, stats) =
                exact_call::solve_remembering(work.problem, c, &params, &attempt, &mut self.memo);
            if stats.nodes > 0 {
                let took = work.deadline.elapsed().saturating_sub(started);
                self.searched = (self.searched.0 + took, self.searched.1 + stats.nodes);
            }
            spent += stats.nodes.max(1);
            self.stats.nodes += stats.nodes;
            self.stats.backtracks += stats.backtracks;
            self.stats.shaken += stats.shaken;
            self.stats.interleaving = stats.interleaving;
            match verdict {
                Verdict::Solved(offsets) => {
                    self.placed_every_buffer();
                    self.solved_in = work.deadline.elapsed().saturating_sub(started);
                    let height = height_of(work.problem, &offsets);
                    let placed = Incumbent {
                        offsets,
                        height,
                        source: Source::Exact,
                    };
                    // On the board at once, not when the round ends: the
                    // other lanes and the progress report see it while
                    // the round climbs down further.
                    board.publish(work, &placed);
                    found = Some(placed);
                }
                // No placement at `c`, so none below it either: a proof,
                // or (with interleaving windows) the end of what the
                // search can find there.
                Verdict::Infeasible => {
                    self.lo = align_up(c.saturating_add(1), work.grain);
                    board.prove(c + 1);
                    proved = true;
                }
                // Unknown in the middle: back to the lowest.
                Verdict::NodeLimit | Verdict::Stopped(_) if halving && deadline.check().is_ok() => {
                }
                Verdict::Exhausted => self.lo = align_up(c.saturating_add(1), work.grain),
                Verdict::NodeLimit if limit >= cap => {
                    self.lo = align_up(c.saturating_add(1), work.grain)
                }
                // Unknown: look higher this round, prove nothing.
                Verdict::NodeLimit => from = c + 1,
                Verdict::Stopped(_) if deadline.check().is_err() => {
                    return found.map_or(Exact::Nothing, Exact::Found)
                }
                // Its share of the time ran out: look higher.
                Verdict::Stopped(_) => {
                    from = c + 1;
                    // Fewer nodes than buffers: its first dive cannot
                    // have placed them all.
                    if stats.nodes < work.problem.len() as u64 {
                        self.cut_short();
                    }
                }
            }
        }
    }
}

/// The top of the highest buffer placed at `offsets`.
pub(super) fn height_of(problem: &Problem, offsets: &[i64]) -> i64 {
    offsets
        .iter()
        .zip(problem.buffers())
        .map(|(&o, b)| o.saturating_add(b.size))
        .max()
        .unwrap_or(0)
}

/// The stacked placement, if it fits the capacity. It is valid by
/// construction unless fixed buffers clash, which only then is checked.
fn fallback(problem: &Problem) -> Option<Incumbent> {
    let crate::heuristic::Stacked {
        offsets,
        height,
        any_fixed,
    } = crate::heuristic::stack(problem);
    let fits = height <= problem.capacity();
    let valid = || {
        !any_fixed
            || crate::model::solution::validate(
                problem,
                &Solution {
                    offsets: offsets.clone(),
                },
            )
            .is_ok()
    };
    if !(fits && valid()) {
        return None;
    }
    Some(Incumbent {
        offsets,
        height,
        source: Source::Stacked,
    })
}

/// What minimising returns when the deadline comes before the set-up is
/// done: `first` (a placement made before the set-up), else the stacked
/// placement.
pub(crate) fn stopped_early(problem: &Problem, first: Option<Best>, stop: Stop) -> Outcome {
    let outcome = Outcome::empty(crate::model::load::max_load(problem));
    match first
        .map(Incumbent::from_best)
        .or_else(|| fallback(problem))
    {
        Some(b) => {
            let mut outcome = outcome;
            outcome.status = Status::Solved;
            outcome.source = Some(b.source);
            outcome.solution = Some(Solution { offsets: b.offsets });
            outcome.stop(stop)
        }
        None => outcome.stop(stop),
    }
}

fn finish(
    work: &Work<'_>,
    mut outcome: Outcome,
    mut best: Option<Incumbent>,
    lower: i64,
    stop: Option<Stop>,
) -> Outcome {
    outcome.lower_bound = lower;
    if best.is_none() {
        // The one heuristic asked for placed nothing in the time: the
        // online order's placement stands in for it.
        best = work.stand_in.clone().map(Incumbent::from_best);
    }
    if best.is_none() && !work.layout.fixed_clash {
        // Stopped before any strategy finished: every buffer above the
        // other still beats returning nothing.
        let crate::heuristic::Stacked {
            offsets, height, ..
        } = work.layout.stack();
        if height <= work.problem.capacity() {
            best = Some(Incumbent {
                offsets,
                height,
                source: Source::Stacked,
            });
        }
    }
    if let Some(b) = best.filter(|b| b.height <= work.problem.capacity()) {
        outcome.status = Status::Solved;
        outcome.optimal = b.height <= lower;
        outcome.source = Some(b.source);
        outcome.solution = Some(Solution { offsets: b.offsets });
    }
    match stop {
        Some(stop) => outcome.stop(stop),
        None => outcome,
    }
}

#[cfg(all(test, feature = "std", feature = "gen"))]
mod tests {
    use super::*;
    use crate::gen::{generate_problem, Family, Spec};
    use crate::model::solution::validate_below;
    extern crate std;
    use std::sync::Mutex;

    /// A plan one level down hands every placement its board takes to the
    /// relay while it runs: each a valid placement of its problem, each
    /// lower than the one before, the last the plan's result. (The level
    /// above lifts them onto its own board, where its other lanes repair
    /// them before the level below ends.)
    #[test]
    fn a_plan_one_level_down_relays_each_placement_it_publishes() {
        for (family, seed) in [(Family::Issued, 1), (Family::Planted, 2)] {
            let spec = Spec {
                family,
                ..Spec::new(300, seed)
            };
            let problem = generate_problem(spec).unwrap();
            let options = super::super::options::Options::default();
            let work = Work::new(&problem, &options, Deadline::none(), 0, None).unwrap();
            let relayed: Mutex<Vec<(i64, Vec<i64>)>> = Mutex::new(Vec::new());
            let relay = |offsets: &[i64], height: i64| {
                relayed.lock().unwrap().push((height, offsets.to_vec()))
            };
            let found = one_level_down(&work, &problem, (Deadline::none(), &relay), minimize_level)
                .unwrap();
            let relayed = relayed.into_inner().unwrap();
            assert!(relayed.len() > 1, "{family:?}: {} relayed", relayed.len());
            let mut last = i64::MAX;
            for (height, offsets) in &relayed {
                assert!(*height < last, "{family:?}: {height} after {last}");
                let solution = Solution {
                    offsets: offsets.clone(),
                };
                validate_below(&problem, &solution, i64::MAX).unwrap();
                assert_eq!(height_of(&problem, offsets), *height);
                last = *height;
            }
            assert_eq!(last, found.height, "{family:?}");
        }
    }

    /// A round of the exact search puts each placement it finds on the
    /// board as it finds it, before the round ends: the other lanes and
    /// the progress report see it while the round climbs down further.
    /// (Here nothing else publishes: the board holds only the round's.)
    #[test]
    fn an_exact_round_publishes_each_placement_as_it_finds_it() {
        for seed in 1..4 {
            let spec = Spec {
                family: Family::Planted,
                ..Spec::new(40, seed)
            };
            let problem = generate_problem(spec).unwrap();
            let options = super::super::options::Options::default();
            let work = Work::new(&problem, &options, Deadline::none(), 0, None).unwrap();
            let board = Board::new(&work, work.lower_bound);
            let mut bisection = Bisection::new(work.lower_bound);
            let Exact::Found(found) =
                bisection.round(&work, Some(1 << 20), &Deadline::none(), &board)
            else {
                panic!("seed {seed}: the round placed nothing");
            };
            assert_eq!(board.height(), found.height, "seed {seed}");
            let solution = Solution {
                offsets: found.offsets,
            };
            validate_below(&problem, &solution, i64::MAX).unwrap();
            assert_eq!(height_of(&problem, &solution.offsets), found.height);
        }
    }

    /// Where a round looks next: the capacity while nothing fits it, the
    /// lower bound first, the middle right after a proof; past an attempt
    /// that ran out the middle up to the best, nearer the best with each
    /// attempt cut short of its first dive (down to a sixteenth), and
    /// back towards the middle with each placement.
    #[test]
    fn past_attempts_cut_short_the_round_looks_nearer_the_best() {
        let mut bisection = Bisection::new(1000);
        let next =
            |b: &Bisection, from, proved, fits| b.next_capacity((from, 2023), fits, proved, 1);
        assert_eq!(next(&bisection, 1000, false, false), 2023);
        assert_eq!(next(&bisection, 1000, false, true), 1000);
        assert_eq!(next(&bisection, 1001, true, true), 1511);
        assert_eq!(next(&bisection, 1001, false, true), 2023 - 511);
        bisection.cut_short();
        assert_eq!(next(&bisection, 1001, false, true), 2023 - 255);
        bisection.cut_short();
        assert_eq!(next(&bisection, 1001, false, true), 2023 - 127);
        bisection.cut_short();
        bisection.cut_short();
        assert_eq!(next(&bisection, 1001, false, true), 2023 - 63);
        bisection.placed_every_buffer();
        assert_eq!(next(&bisection, 1001, false, true), 2023 - 127);
        bisection.placed_every_buffer();
        bisection.placed_every_buffer();
        bisection.placed_every_buffer();
        assert_eq!(next(&bisection, 1001, false, true), 2023 - 511);
        // After a proof the middle stays on the grain.
        assert_eq!(
            bisection.next_capacity((1001, 2023), true, true, 64),
            1000 + 448
        );
    }

    /// An attempt gets at least a dive's time at the cost per node seen:
    /// none before any node, then the nodes' time scaled to every buffer.
    #[test]
    fn an_attempt_gets_at_least_a_dive_at_the_cost_per_node_seen() {
        let mut bisection = Bisection::new(0);
        assert_eq!(bisection.dive(4096), Duration::ZERO);
        bisection.searched = (Duration::from_millis(300), 1000);
        assert_eq!(bisection.dive(4000), Duration::from_millis(1200));
        assert_eq!(bisection.dive(500), Duration::from_millis(150));
        bisection.searched = (Duration::MAX, 1);
        assert_eq!(bisection.dive(4096), Duration::MAX);
    }
}
