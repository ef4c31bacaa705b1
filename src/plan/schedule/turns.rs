//! A lane's turns beside its placements and repair: the exact search's
//! rounds, the share of the time they take on a lane alone on its core,
//! and, on a separated kernel, the walk over orders that takes turns
//! with them.

#[cfg(feature = "constraints")]
use super::board::Incumbent;
use super::lane::{Exact, ExactRound, Lane};
#[cfg(feature = "constraints")]
use super::work::{Goal, EXACT_NODES};
#[cfg(feature = "constraints")]
use crate::deadline::{Poll, Stop};
#[cfg(feature = "constraints")]
use crate::heuristic;
#[cfg(feature = "constraints")]
use crate::plan::options::Source;

impl Lane<'_, '_> {
    /// On a separated kernel in the portfolio, the walk over orders on
    /// its conflict graph (a method of one heuristic runs as it always
    /// has).
    #[cfg(feature = "constraints")]
    pub(super) fn start_walk(&mut self) {
        let portfolio = self.work.options.method == crate::plan::options::Method::Auto;
        if self.work.options.solver.conflict_graph && portfolio {
            let target = self.work.lower_bound;
            self.walk = crate::heuristic::GraphWalk::new(self.work.problem, target, self.seed);
        }
    }

    /// Whether shares of time may follow the clock: with a timeout and no
    /// count of restarts (else the result must not depend on it).
    pub(super) fn clocked(&self) -> bool {
        self.work.deadline.remaining().is_some() && self.work.options.restarts.is_none()
    }

    /// With one lane, the walk gets as much before each exact round (from
    /// the second) as the round before had: its time when clocked, else
    /// its nodes' work. (The first round goes first: it proves most
    /// kernels at once.)
    #[cfg(feature = "constraints")]
    pub(super) fn walk_before_exact(&mut self, round: u32, goal: Goal) -> Result<(), Stop> {
        if self.lanes > 1 {
            return Ok(());
        }
        let nodes = EXACT_NODES << (2 * (round - 1)).min(40);
        let time = self.clocked().then_some(self.exact_time);
        self.walk_turn((nodes, time), goal)
    }

    /// One exact round of `nodes` per attempt. With one lane and a clock,
    /// the round's time follows what it pays: a node's cost grows with
    /// the buffers it weighs, and on a large problem that backtracks one
    /// round's nodes took the whole budget while the placements and the
    /// repair that lower the height waited, where on a small one the
    /// exact search is what lowers it. So the exact search and the rest
    /// of the lane share the time by the part of the gap each closed per
    /// second so far ([`crate::heuristic::Shares::lane_time`]): the round
    /// may take the time the rest took since the round before, scaled by
    /// that share (and at least an eighth of the time run so far), each
    /// side keeping a quarter; once the exact search has closed enough of
    /// the gap to have the most the rule gives, a round may also take as
    /// long as the plan has run (a cut round starts its search over, so
    /// the rounds of a search that pays grow geometrically). Nothing here
    /// reads the time left, so a larger budget runs the same rounds, and
    /// more. A lane that walks shares its time turn for turn already (the
    /// walk takes what the exact round took): there the round takes at
    /// most half the time left, so that the walk's turn comes.
    pub(super) fn exact_round(&mut self, ex: &mut ExactRound<'_>, nodes: Option<u64>) -> Exact {
        let started = self.deadline.elapsed();
        let share = if self.lanes == 1 && self.clocked() {
            let others = started.saturating_sub(self.exact_ended);
            self.share_out(false, others, i64::MAX);
            let s = self.time_shares.second_share();
            let mut share = others.mul_f64(s / (1.0 - s)).max(started / 8);
            if self.time_shares.second_favoured() {
                share = share.max(started);
            }
            #[cfg(feature = "constraints")]
            if let (Some(_), Some(left)) = (&self.walk, self.deadline.remaining()) {
                share = left / 2;
            }
            Some(self.deadline.sooner(share))
        } else {
            None
        };
        let found = ex(nodes, share.as_ref().unwrap_or(self.deadline), self.board);
        self.exact_ended = self.deadline.elapsed();
        let took = self.exact_ended.saturating_sub(started);
        if share.is_some() {
            let placed = match &found {
                Exact::Found(inc) => inc.height,
                _ => i64::MAX,
            };
            self.share_out(true, took, placed);
        }
        #[cfg(feature = "constraints")]
        {
            self.exact_time = took;
        }
        found
    }

    /// Records what the exact search (`exact`) or the rest of the lane
    /// closed of the gap between the best height (or `placed`, when
    /// lower) and the lower bound since the last record, in `took`.
    fn share_out(&mut self, exact: bool, took: core::time::Duration, placed: i64) {
        let gap = self
            .board
            .height()
            .min(placed)
            .saturating_sub(self.board.lower());
        let before = core::mem::replace(&mut self.gap_marked, gap);
        // Nothing is gained from no placement to the first: that gap had
        // no size.
        let gained = match before {
            i64::MAX => 0.0,
            before => (before - gap).max(0) as f64 / before.max(1) as f64,
        };
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.time_shares.record(exact, micros, gained);
    }

    /// A turn of the walk worth `nodes` of the exact search, or `time`
    /// when given, if the lane walks (see [`Self::walk_for`]) and has a
    /// placement.
    #[cfg(feature = "constraints")]
    fn walk_turn(
        &mut self,
        (nodes, time): (u64, Option<core::time::Duration>),
        goal: Goal,
    ) -> Result<(), Stop> {
        let (Some(walk), Some(mine)) = (&self.walk, &self.mine) else {
            return Ok(());
        };
        let work = match time {
            Some(_) => u64::MAX,
            None => nodes.saturating_mul(walk.node_weight()),
        };
        let mut credit = i64::try_from(work).unwrap_or(i64::MAX / 4);
        let target = self.target(goal);
        let best = mine.height;
        let turn_ends = time.map(|t| self.deadline.sooner(t));
        let mut poll = Poll::new(turn_ends.as_ref().unwrap_or(self.deadline), 1 << 12);
        let walked = self.walk_for(&mut credit, (target, best), goal, &mut poll);
        self.publish();
        // The turn's own end is not the plan's.
        walked.or_else(|_| self.deadline.check())
    }

    /// The walk over orders on the conflict graph (a separated kernel's,
    /// where the repair's windows over time say little), and its search
    /// over offsets, while the grant lasts: aimed at `target` (minimising,
    /// the search over offsets halfway there from the best), they offer
    /// each placement lower than `best`.
    #[cfg(feature = "constraints")]
    pub(super) fn walk_for(
        &mut self,
        credit: &mut i64,
        (target, best): (i64, i64),
        goal: Goal,
        poll: &mut Poll<'_>,
    ) -> Result<(), Stop> {
        let halving = matches!(goal, Goal::Minimize);
        let mut slot = self.walk.take();
        if let (Some(walk), Some(mine)) = (slot.as_mut(), self.mine.as_ref()) {
            walk.start_from(&mine.offsets);
        }
        let mut best = best;
        let mut ended = Ok(());
        while let Some(walk) = slot.as_mut().filter(|_| *credit > 0 && best > target) {
            let before = poll.used();
            let aim = heuristic::Aim {
                work: *credit as u64,
                target,
                best,
                halving,
            };
            let found = walk.run(aim, poll);
            *credit -= (poll.used() - before).max(1) as i64;
            match found {
                Ok(Some((offsets, height))) => {
                    best = height;
                    self.offer(Incumbent {
                        offsets,
                        height,
                        source: Source::Walked,
                    });
                }
                // Its work spent, or it cannot run at this target.
                Ok(None) => break,
                Err(stop) => {
                    ended = Err(stop);
                    break;
                }
            }
        }
        self.walk = slot;
        ended
    }
}
