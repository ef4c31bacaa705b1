//! The walk over orders for a planner's lane: two walks on one conflict
//! graph, aimed at the lower bound (fitting, at the capacity), taking
//! turns.
//!
//! Aimed at a bound below every placement there is, the summed overshoot
//! that steers the walk (see `walk.rs`) is lowered by pushing many
//! buffers down while the highest stays where it is: on half-separated
//! kernels 20-30% above their bound, that walk never went below the
//! first-fit placement it started from, in 10 s. A walk whose cost weighs
//! the highest buffer first, and the summed overshoot only between orders
//! of one height, lowers the height there; but where a placement at the
//! bound exists, the summed overshoot is often what finds it (kernels
//! proven by one of the two alone, both ways, measured). Neither is
//! dominated, so both walk, in pieces of work (a clock check's worth),
//! the piece going to whichever has done less: each has done at least
//! half the work of a grant, less a piece and a step, so what either
//! would have found alone the two find within about twice its work.
//! Fitting, the two also start apart: the summed walk from the
//! heuristics' best, the other from the exact rounds' first placement
//! above the capacity (`plan/fit.rs`).
//!
//! A third member searches offsets instead of orders (`tabu.rs`): aimed
//! at a height, it finds a placement there or nothing. It does as much
//! work as the two walks together (their units are alike on the clock).
//! Fitting, it aims at the capacity; minimising, halfway between the
//! bound and the best placement, so that what it finds halves the gap
//! (next to the bound it aims at the bound, and a find there is a proof).
//! On half-separated kernels aimed at their heaviest clique for a second,
//! alone, it placed 16 of 40 where the summed walk alone placed 7; in
//! the lanes, 400 kernels at 1 s: measured in docs/MEASUREMENTS.md. The
//! walks' trajectories do not depend on the best (they only report
//! below it), so what a walk would find alone the three find within
//! about four times its work; fitting, what the search over offsets
//! would find alone, within about twice its work.

use alloc::vec::Vec;

use super::tabu::{Searched, Tabu};
use crate::deadline::{Poll, Stop};
use crate::graph::conflicts::Graph;
use crate::graph::walk::{Walk, Walked};
use crate::model::problem::Problem;

/// The work of one walk's piece of a turn, in the poll's units.
const PIECE: u64 = 1 << 16;

/// What each member's work counts for when the next piece is given: the
/// search over offsets does as much as the two walks over orders
/// together.
const SHARES: [u64; 3] = [1, 1, 2];

/// The two walks and the tabu search with their graph.
pub(crate) struct GraphWalk {
    graph: Graph,
    /// The summed overshoot's walk, then the height's.
    walks: [Walk; 2],
    /// The search over offsets, started where the summed walk is.
    tabu: Tabu,
    /// The work each has done: the walks', then the tabu search's.
    spent: [u64; 3],
    /// Whether each keeps the start it was given (see
    /// [`GraphWalk::start_summed_from`]).
    pinned: [bool; 2],
}

/// What one call of [`GraphWalk::run`] aims at: `work` (the poll's
/// units) towards `target`, reporting only placements lower than `best`;
/// `halving`: minimising (see the module).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Aim {
    pub(crate) work: u64,
    pub(crate) target: i64,
    pub(crate) best: i64,
    pub(crate) halving: bool,
}

impl GraphWalk {
    /// The walks of `problem` aimed at `target`, if the graph search
    /// applies to it.
    pub(crate) fn new(problem: &Problem, target: i64, seed: u64) -> Option<GraphWalk> {
        if !crate::graph::search::applies(problem) {
            return None;
        }
        let graph = Graph::new(problem);
        let summed = Walk::new(problem, &graph, target, seed);
        let mut highest = Walk::new(problem, &graph, target, seed ^ 0x004E_1647);
        highest.weigh_height_first(&graph);
        let mut tabu = Tabu::new(problem, &graph, target, seed ^ 0x0007_AB05);
        tabu.start_from(&graph, &summed.offset);
        summed.runnable.then_some(GraphWalk {
            graph,
            walks: [summed, highest],
            tabu,
            spent: [0; 3],
            pinned: [false; 2],
        })
    }

    /// Starts each walk from the order of `offsets`, a placement of the
    /// problem, unless it has taken a step already or keeps a start.
    pub(crate) fn start_from(&mut self, offsets: &[i64]) {
        self.start(offsets, 2, false);
    }

    /// Starts only the summed overshoot's walk from `offsets`, and keeps
    /// that start: a fit gives it the heuristics' placement and the other
    /// the exact rounds' first above the capacity, so that neither start
    /// is lost (from either, the walk reaches the capacity on kernels
    /// where from the other it does not).
    pub(crate) fn start_summed_from(&mut self, offsets: &[i64]) {
        self.start(offsets, 1, true);
    }

    fn start(&mut self, offsets: &[i64], walks: usize, pin: bool) {
        // The tabu search starts where the summed walk does.
        let summed = &self.walks[0];
        let fresh = summed.runnable && summed.steps == 0 && !self.pinned[0];
        if fresh && self.tabu.steps == 0 && offsets.len() == summed.offset.len() {
            self.tabu.start_from(&self.graph, offsets);
        }
        let fresh = self.walks.iter_mut().zip(&mut self.pinned).take(walks);
        for (walk, pinned) in fresh {
            if walk.runnable && walk.steps == 0 && !*pinned && offsets.len() == walk.offset.len() {
                walk.start_from(&self.graph, offsets);
                *pinned = pin;
            }
        }
    }

    /// What a node of the exact search on the same graph weighs, in the
    /// poll's units (elements scanned, over 8), as the walk's steps do.
    pub(crate) fn node_weight(&self) -> u64 {
        self.graph.node_weight()
    }

    /// Walks and searches as `aim` says; returns a placement lower than
    /// its `best` if one is found, with its height.
    pub(crate) fn run(
        &mut self,
        aim: Aim,
        poll: &mut Poll<'_>,
    ) -> Result<Option<(Vec<i64>, i64)>, Stop> {
        let Aim {
            work,
            target,
            best,
            halving,
        } = aim;
        for walk in &mut self.walks {
            if target != walk.capacity {
                walk.retarget(&self.graph, target);
            }
        }
        // Minimising, the search over offsets aims halfway between the
        // bound and the best (a placement there halves the gap; next to
        // the bound it aims at the bound); fitting, at the capacity.
        let aim = match halving {
            true if best > target && best < i64::MAX => target + (best - target) / 2,
            _ => target,
        };
        if aim != self.tabu.capacity() {
            self.tabu.retarget(&self.graph, aim);
        }
        let mut left = work;
        // A member that cannot run at this target takes no piece.
        let mut out = [false; 3];
        loop {
            // The one behind takes the next piece: none is ever more than
            // a piece and a step ahead of another.
            let Some(k) = (0..3)
                .filter(|&k| !out[k])
                .min_by_key(|&k| self.spent[k] / SHARES[k])
            else {
                return Ok(None);
            };
            let piece = PIECE.min(left);
            if k == 2 {
                let (searched, used) = self.tabu.run(&self.graph, piece, poll);
                self.spent[2] += used;
                left = left.saturating_sub(used);
                match searched {
                    Searched::Found(offsets) => {
                        let height = self.graph.height(&offsets);
                        if height < best {
                            return Ok(Some((offsets, height)));
                        }
                        // Not lower (its aim is below the best, so not
                        // met): it would find it again at no cost.
                        out[2] = true;
                    }
                    Searched::Spent if left > 0 => {}
                    Searched::Spent => return Ok(None),
                    Searched::Never => out[2] = true,
                    Searched::Stopped(stop) => return Err(stop),
                }
                continue;
            }
            let walk = &mut self.walks[k];
            let (walked, used) = walk.run(&self.graph, (piece, best), poll);
            self.spent[k] += used;
            left = left.saturating_sub(used);
            match walked {
                Walked::Found(offsets) => {
                    let height = walk.height;
                    return Ok((height < best).then_some((offsets, height)));
                }
                Walked::Lower(offsets, height) => return Ok(Some((offsets, height))),
                Walked::Spent if left > 0 => {}
                Walked::Spent | Walked::Never => return Ok(None),
                Walked::Stopped(stop) => return Err(stop),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::rng::Rng;
    use crate::deadline::Deadline;
    use crate::exact::testing::{fits, gapped, planted};
    use crate::gen::{kernel_problem, Family, Spec};

    /// Walks `problem` as `aim` says with its work in all, as a lane
    /// does (again after each placement reported, until the work is
    /// spent); returns the lowest height reported (the aim's `best` if
    /// none), each report checked to be valid and lower than the one
    /// before.
    fn lowest(problem: &Problem, walk: &mut GraphWalk, aim: Aim) -> i64 {
        let deadline = Deadline::new(None, None, None);
        let mut poll = Poll::new(&deadline, 1 << 16);
        let (target, halving) = (aim.target, aim.halving);
        let (mut best, mut left) = (aim.best, aim.work);
        while left > 0 && best > target {
            let before = poll.used();
            let found = walk
                .run(
                    Aim {
                        work: left,
                        target,
                        best,
                        halving,
                    },
                    &mut poll,
                )
                .expect("no deadline");
            left = left.saturating_sub(poll.used() - before);
            let Some((offsets, height)) = found else {
                break;
            };
            assert!(
                height < best && fits(problem, &offsets, height),
                "{offsets:?} at {height}, the best {best}"
            );
            best = height;
        }
        best
    }

    /// [`GraphWalk::new`] with only member `k` given turns (the others'
    /// work counts as done).
    fn only(problem: &Problem, target: i64, seed: u64, k: usize) -> GraphWalk {
        let mut alone = GraphWalk::new(problem, target, seed).expect("runs");
        for j in (0..3).filter(|&j| j != k) {
            alone.spent[j] = u64::MAX;
        }
        alone
    }

    /// Never worse than its parts: on 120 small problems with gaps, 30
    /// dense planted kernels (optimum the max load) and 4 generated
    /// kernels of 150-171 buffers with half their pairs separated
    /// (optimum far above it), aimed at the max load, the three members
    /// with four times the work (and four pieces) end at or below what
    /// each walk alone reaches with the work once, from the same
    /// first-fit order and with the same seed, minimising (the search
    /// over offsets aiming halfway) or not; not minimising (its aim
    /// fixed), also at or below what the search over offsets alone
    /// reaches with twice the work. Every placement reported is valid and
    /// lower than the last, and the work is shared as [`SHARES`] says
    /// within a few pieces. On at least 3 of the 4 kernels (4 when
    /// written) the walk that weighs the height first ends lower than the
    /// summed overshoot's with the same work; and the search over offsets
    /// alone ends lower than both walks alone on some problems.
    #[test]
    fn the_members_end_no_higher_than_any_alone() {
        let mut rng = Rng::new(0x2a1c);
        let (mut lower, mut compared, mut height_lower, mut by_offsets) = (0, 0, 0, 0);
        for i in 0..154u64 {
            let problem = match i {
                0..120 => gapped(&mut rng),
                120..150 => {
                    let n = rng.below(20, 81) as usize;
                    planted(&mut rng, n).lowered().expect("lowers").problem
                }
                _ => {
                    let j = i as usize - 150;
                    let spec = Spec::new(150 + 7 * j, 100 + j as u64).with_family(Family::Kernel);
                    let kernel = kernel_problem(spec, 0.5).expect("generated");
                    kernel.lowered().expect("lowers").problem
                }
            };
            // Minimised, as the lanes do: whatever height they reach.
            let problem = problem.with_capacity(i64::MAX / 4).expect("higher");
            let target = crate::model::load::max_load(&problem);
            let seed = if i < 150 { i } else { i - 150 };
            let halving = i % 2 == 0 || i >= 150;
            let Some(mut all) = GraphWalk::new(&problem, target, seed) else {
                continue;
            };
            let start = all.walks[0].height;
            let work = if i < 150 { 8 * PIECE } else { 128 * PIECE };
            let aim = |work: u64, halving: bool| Aim {
                work,
                target,
                best: start,
                halving,
            };
            let run = aim(4 * work + 4 * PIECE, halving);
            let together = lowest(&problem, &mut all, run);
            // Shared fairly: none was more than a piece and a step (well
            // below a piece here) behind its share.
            let [a, b, c] = all.spent;
            assert!(a.abs_diff(b) <= 2 * PIECE, "instance {i}: {:?}", all.spent);
            assert!(
                c.abs_diff(a + b) <= 4 * PIECE,
                "instance {i}: {:?}",
                all.spent
            );
            let mut alone_at = [0i64; 2];
            for (k, at) in alone_at.iter_mut().enumerate() {
                let mut alone = only(&problem, target, seed, k);
                let one = lowest(&problem, &mut alone, aim(work, halving));
                assert!(
                    together <= one,
                    "instance {i}: together {together}, walk {k} alone {one}"
                );
                lower += usize::from(together < one);
                *at = one;
            }
            if !halving {
                let mut alone = only(&problem, target, seed, 2);
                let one = lowest(&problem, &mut alone, aim(2 * work, false));
                assert!(
                    together <= one,
                    "instance {i}: together {together}, offsets alone {one}"
                );
                by_offsets += usize::from(one < alone_at[0].min(alone_at[1]));
            }
            compared += 1;
            height_lower += usize::from(i >= 150 && alone_at[1] < alone_at[0]);
        }
        assert!(
            compared > 100 && lower > 0,
            "{compared} compared, {lower} lower"
        );
        // Why the second walk: far above the bound it goes lower.
        assert!(height_lower >= 3, "{height_lower} of 4");
        // Why the search over offsets: alone, it reaches what neither
        // walk does alone.
        assert!(by_offsets > 0, "{by_offsets} lower than both walks");
    }

    /// A fit's two starts: the summed walk keeps the placement it was
    /// pinned to, the other takes the one it is handed next (on 200 small
    /// problems with gaps, each walk's placement compared with a walk
    /// started from that placement alone; the test counts the problems
    /// where the two starts differ).
    #[test]
    fn the_summed_walk_keeps_its_pinned_start() {
        let mut rng = Rng::new(0x5747);
        let mut compared = 0;
        for seed in 0..200u64 {
            let problem = gapped(&mut rng)
                .with_capacity(i64::MAX / 4)
                .expect("higher");
            let target = crate::model::load::max_load(&problem);
            let Some(mut pair) = GraphWalk::new(&problem, target, seed) else {
                continue;
            };
            // Two placements: first-fit's, and every buffer stacked.
            let first: Vec<i64> = pair.walks[0].offset.clone();
            let stacked = crate::heuristic::stack(&problem).offsets;
            pair.start_summed_from(&stacked);
            pair.start_from(&first);
            let alone = |offsets: &[i64]| {
                let mut one = GraphWalk::new(&problem, target, seed).expect("runs");
                one.start_from(offsets);
                one
            };
            let (from_stacked, from_first) = (alone(&stacked), alone(&first));
            assert_eq!(pair.walks[0].offset, from_stacked.walks[0].offset);
            assert_eq!(pair.walks[1].offset, from_first.walks[1].offset);
            compared += usize::from(from_stacked.walks[0].offset != from_first.walks[0].offset);
        }
        assert!(compared > 50, "{compared} with two starts apart");
    }
}
