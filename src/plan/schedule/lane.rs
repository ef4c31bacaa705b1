//! One lane: the rounds a core runs (placements, the exact search,
//! repair), its best placement, and how it trades with the board.

use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use super::board::{Board, Incumbent, CUT};
use super::work::{Goal, Relay, Work, EXACT_NODES};
use crate::deadline::{Deadline, Poll, Stop};
use crate::heuristic::{self, Repair, Shares, Variant};
use crate::model::problem::Problem;
use crate::plan::options::Source;

/// What an exact attempt found in one round.
pub(crate) enum Exact {
    /// A placement.
    Found(Incumbent),
    /// Nothing new this round (bounds may have moved on the board).
    Nothing,
    /// Nothing more to try.
    Done,
}

/// The exact part of a plan: one round of attempts with a node limit
/// each. Runs on lane 0.
/// `None` for the node count: the exact search has a core of its own and
/// shares time, not nodes.
pub(crate) type ExactRound<'r> = dyn FnMut(Option<u64>, &Deadline<'_>, &Board) -> Exact + 'r;

/// How the coarse problem is planned when it is worth a share of the
/// time: the objective's own plan, one level down, under the deadline
/// given, handing each placement it publishes to the relay as it comes.
pub(crate) type CoarseSolve<'r> =
    dyn Fn(&Problem, Deadline<'_>, &Relay<'_>) -> Option<Incumbent> + Sync + 'r;

pub(super) struct Lane<'w, 'a> {
    pub(super) work: &'w Work<'a>,
    pub(super) board: &'w Board,
    pub(super) deadline: &'w Deadline<'w>,
    /// The lane's own seed, for its repairs.
    pub(super) seed: u64,
    /// The lane's best placement, unless the repair holds a lower one.
    pub(super) mine: Option<Incumbent>,
    pub(super) repair: Option<Repair<'w>>,
    /// Whether the repair works on the lane's best placement (else it
    /// is reset to it before its next step).
    pub(super) repairing_mine: bool,
    /// On a separated kernel, the walk over orders, which takes half of
    /// the repair's turns and, with one lane, turns of its own beside the
    /// exact search's (none on other problems, or where it cannot run:
    /// too many buffers, windows, or fixed buffers that clash).
    #[cfg(feature = "constraints")]
    pub(super) walk: Option<crate::heuristic::GraphWalk>,
    /// How long the last exact round took (read when clocked).
    #[cfg(feature = "constraints")]
    pub(super) exact_time: core::time::Duration,
    /// When the last exact round ended (read when clocked).
    pub(super) exact_ended: core::time::Duration,
    /// Once the plain orders are out, the placements' work against the
    /// repair's (see [`Lane::split`]).
    pub(super) grants: Shares,
    /// With one lane and a clock, the exact rounds' time against the
    /// rest's (see [`Lane::exact_round`]), and the gap at the last record
    /// (`i64::MAX`: no placement then).
    pub(super) time_shares: Shares,
    pub(super) gap_marked: i64,
    pub(super) ranked: Option<Vec<Variant>>,
    /// How many plain orders had finished when `ranked` was made.
    pub(super) ranked_at: usize,
    pub(super) coarse_solve: Option<&'w CoarseSolve<'w>>,
    /// Repairs begun, for their seeds.
    pub(super) repaired: u64,
    /// Lanes running.
    pub(super) lanes: usize,
}

impl<'w, 'a> Lane<'w, 'a> {
    /// Lane `index` of `lanes`, with nothing placed yet.
    pub(super) fn new(
        work: &'w Work<'a>,
        board: &'w Board,
        deadline: &'w Deadline<'w>,
        index: usize,
        lanes: usize,
        coarse_solve: Option<&'w CoarseSolve<'w>>,
    ) -> Self {
        Lane {
            work,
            board,
            deadline,
            seed: work.options.seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            mine: None,
            repair: None,
            repairing_mine: false,
            #[cfg(feature = "constraints")]
            walk: None,
            #[cfg(feature = "constraints")]
            exact_time: core::time::Duration::ZERO,
            exact_ended: core::time::Duration::ZERO,
            time_shares: Shares::lane_time(),
            grants: Shares::restarts_against_repair(work.first_grant() as f64),
            gap_marked: i64::MAX,
            ranked: None,
            ranked_at: 0,
            coarse_solve,
            repaired: 0,
            lanes,
        }
    }

    pub(super) fn run(&mut self, goal: Goal, mut exact: Option<&mut ExactRound<'_>>) {
        let unit = self.work.first_grant();
        let timed = self.work.deadline.remaining().is_some();
        let quota = self.restart_quota();
        let (mut placing, mut repairing) = (0i64, 0i64);
        let mut exact_done = exact.is_none();
        #[cfg(feature = "constraints")]
        self.start_walk();
        for round in 0u32.. {
            if self.board.done(goal) || self.deadline.check().is_err() {
                break;
            }
            let grant = i64::try_from(unit << round.min(40)).unwrap_or(i64::MAX / 4);
            // With other lanes placing, lane 0 gives its time to the
            // exact search until that is done (after round 0's placements).
            let placing_here = exact_done || self.lanes == 1 || round == 0;
            // Once the plain orders are out, placements (the perturbed
            // restarts) and repair share two grants by what each has
            // lowered per unit of work; before, one grant each.
            let plain_out = !self.board.plain_left(self.work.variants.len());
            let (place_grant, repair_grant) = match plain_out {
                true => self.split(grant),
                false => (grant, grant),
            };
            placing = placing.saturating_add(place_grant).min(place_grant);
            // Every strategy's plain order runs in round 0, whatever the
            // grant.
            let plain_left = || round == 0 && self.board.plain_left(self.work.primary);
            let before = (self.height(), placing);
            while placing_here && (placing > 0 || plain_left()) && !self.board.done(goal) {
                let used = match self.place_one() {
                    Some(Ok(used)) => used,
                    Some(Err(_)) => return self.publish(),
                    None => break,
                };
                placing -= used as i64;
                if round == 0 && self.repair_beside_plain(used, goal).is_err() {
                    return self.publish();
                }
            }
            if plain_out {
                self.record_grant(false, before, placing);
            }
            self.publish();
            // The plain orders are out: now the bound that waited for
            // them (it may prove the best of them optimal).
            if let Some(bound) = self.work.late_bound.filter(|_| placing_here) {
                if self.deadline.check().is_ok() && self.board.take_late() {
                    self.board.prove(bound(self.deadline, self.board.height()));
                }
            }
            if self.board.done(goal) {
                break;
            }
            #[cfg(feature = "constraints")]
            if round > 0 && !exact_done {
                if self.walk_before_exact(round, goal).is_err() {
                    return self.publish();
                }
                if self.board.done(goal) {
                    break;
                }
            }
            if let Some(ex) = exact.as_deref_mut().filter(|_| !exact_done) {
                // Fitting, the summed walk starts from the heuristics'
                // best before the exact rounds place above the capacity
                // (see `GraphWalk::start_summed_from`).
                #[cfg(feature = "constraints")]
                if let (Goal::Fit(_), Some(walk), Some(mine)) = (goal, &mut self.walk, &self.mine) {
                    walk.start_summed_from(&mine.offsets);
                }
                let nodes = (self.lanes == 1).then(|| EXACT_NODES << (2 * round).min(40));
                let found = self.exact_round(ex, nodes);
                match found {
                    Exact::Found(inc) => self.offer(inc),
                    Exact::Nothing => {}
                    Exact::Done => exact_done = true,
                }
                self.publish();
                if self.board.done(goal) {
                    break;
                }
            }
            // While plain placements remain, repair takes less: they are
            // what the portfolio measures first.
            let plain_left = self.board.plain_left(self.work.variants.len());
            repairing = repairing
                .saturating_add(if plain_left { grant / 4 } else { repair_grant })
                .min(repair_grant);
            // The lane repairs the lowest placement known: one that another
            // lane published while this one placed is taken now, not after
            // a repair of a higher one.
            self.adopt();
            let before = (self.height(), repairing);
            if placing_here && self.repair_for(&mut repairing, goal).is_err() {
                return self.publish();
            }
            if plain_out && placing_here {
                self.record_grant(true, before, repairing);
            }
            self.publish();
            self.adopt();
            if !timed || self.work.options.restarts.is_some() {
                let claimed = self.board.next_restart.load(Ordering::Relaxed);
                let plain_left = self.board.plain_left(self.work.variants.len());
                if claimed >= quota.unwrap_or(u64::MAX) && !plain_left && exact_done {
                    break;
                }
                if self.work.variants.is_empty() && exact_done {
                    break;
                }
            }
        }
        self.publish();
    }

    /// One placement: the next plain order, or else the next perturbed
    /// restart. Returns the work it took, or `None` with nothing to run.
    fn place_one(&mut self) -> Option<Result<u64, Stop>> {
        let layout = &self.work.layout;
        let variants = &self.work.variants;
        // A unit of a hole-filling placement can be a tree walk of a
        // microsecond: the clock is read every 2048 units.
        let mut poll = Poll::new(self.deadline, 1 << 11);
        // With other lanes to run the remaining plain orders, the coarse
        // level starts once one placement is in: on a busy machine its
        // result (the one that counts on zero-waste packings) then comes
        // within the budget instead of after every plain order.
        if self.board.take_coarse(self.work.primary, self.lanes > 1) {
            return Some(self.coarse(&mut poll).map(|()| poll.used().max(1)));
        }
        // The heaviest buffers first comes next, beside the coarse level
        // where there are other lanes (on some families what counts),
        // once the cheaper plain orders are out (see `Board::take_heavy`).
        if self.board.take_heavy(variants) {
            return Some(self.heavy(&mut poll).map(|()| poll.used().max(1)));
        }
        let placed = if let Some((i, holes)) = self.board.claim_plain(variants) {
            // Stopped once it reaches the lowest plain height finished: it
            // could only end there or higher, so the portfolio, which has
            // that placement, is never above it (see "Dominance"), and the
            // lowest plain height stays exact.
            let limit = self.board.best_plain().saturating_sub(1);
            let found = heuristic::plain(layout, variants[i], limit, &mut poll);
            if holes {
                self.board.holes.store(false, Ordering::Release);
            }
            if let Ok(b) = &found {
                let height = b.as_ref().map_or(CUT, |b| b.height);
                self.board.plain_heights[i].store(height, Ordering::Relaxed);
                self.board.plain_done.fetch_add(1, Ordering::Relaxed);
            }
            found
        } else {
            // Ranked again whenever another plain order has finished.
            let done = self.board.plain_done.load(Ordering::Relaxed);
            if self.ranked.is_none() || self.ranked_at != done {
                self.ranked = Some(self.rank());
                self.ranked_at = done;
            }
            let ranked = self.ranked.as_deref().unwrap_or(&[]);
            if ranked.is_empty() {
                return None;
            }
            let j = self.board.next_restart.fetch_add(1, Ordering::Relaxed) + 1;
            if self.restart_quota().is_some_and(|quota| j > quota) {
                return None;
            }
            // Stopped once it reaches the lane's best: it could not be
            // taken.
            let limit = self.height().saturating_sub(1);
            let seed = self.seed_for_restarts();
            let found = heuristic::perturbed(layout, ranked, j, seed, limit, &mut poll);
            if found.is_ok() {
                self.board.restarts.fetch_add(1, Ordering::Relaxed);
            }
            found
        };
        Some(placed.map(|b| {
            if let Some(b) = b {
                self.offer(Incumbent::from_best(b));
            }
            poll.used().max(1)
        }))
    }

    /// How many perturbed restarts may run: the options' count; without
    /// one, a default that grows with the problem when there is no timeout
    /// (the work must then be bounded), else no bound.
    fn restart_quota(&self) -> Option<u64> {
        let untimed = self.work.deadline.remaining().is_none();
        let n = self.work.layout.len();
        self.work
            .options
            .restarts
            .or_else(|| untimed.then(|| heuristic::default_count(n)))
    }

    /// Perturbed restarts are numbered across the lanes, so they share
    /// one seed: the same restart number gives the same order anywhere.
    fn seed_for_restarts(&self) -> u64 {
        self.work.options.seed
    }

    /// The variants to restart, by the heights of their plain
    /// placements, lowest first (ties: cheapest first); those not run yet
    /// come last. Restarts go to them in geometric shares by rank (half
    /// to the first, a quarter to the second, ...; see
    /// [`heuristic::perturbed`]), so none is left out: a strategy whose
    /// plain order is far behind can still win once perturbed, and the
    /// first keeps half the restarts whatever the others are. A deeper
    /// layering of one strategy that places exactly as a shallower one
    /// (nothing nests that deep) is the same order: it is ranked once.
    fn rank(&self) -> Vec<Variant> {
        let mut heights: Vec<(i64, usize)> = self
            .board
            .plain_heights
            .iter()
            .enumerate()
            .map(|(i, h)| (h.load(Ordering::Relaxed), i))
            .collect();
        heights.sort_unstable();
        let variants = &self.work.variants;
        let mut ranked: Vec<Variant> = Vec::with_capacity(heights.len());
        for (k, &(h, i)) in heights.iter().enumerate() {
            let repeat = h < CUT
                && heights[..k]
                    .iter()
                    .any(|&(g, j)| g == h && variants[j].strategy == variants[i].strategy);
            if !repeat {
                ranked.push(variants[i]);
            }
        }
        ranked
    }

    /// Takes `inc` if it is lower than the lane's best.
    pub(super) fn offer(&mut self, inc: Incumbent) {
        let none = self.mine.is_none() && !(self.repairing_mine && self.repair.is_some());
        if inc.height < self.height() || none {
            self.board.publish(self.work, &inc);
            self.mine = Some(inc);
            self.repairing_mine = false;
        }
    }

    /// The lane's best height (`i64::MAX`: none).
    pub(super) fn height(&self) -> i64 {
        let mine = self.mine.as_ref().map_or(i64::MAX, |m| m.height);
        match &self.repair {
            // A repair set aside (the lane took another placement since)
            // holds nothing of the lane's.
            Some(r) if self.repairing_mine => r.height().min(mine),
            _ => mine,
        }
    }

    /// What the repair and the walk aim at: the capacity to fit, or the
    /// board's lower bound.
    pub(super) fn target(&self, goal: Goal) -> i64 {
        match goal {
            Goal::Fit(capacity) => capacity,
            Goal::Minimize => self.board.lower(),
        }
    }

    /// Publishes the lane's best if the repair lowered it or it is new.
    pub(super) fn publish(&mut self) {
        if let Some(repair) = self.repair.as_ref().filter(|_| self.repairing_mine) {
            let mine = self.mine.as_ref().map_or(i64::MAX, |m| m.height);
            if repair.height() < mine {
                self.mine = Some(Incumbent {
                    offsets: repair.offsets().to_vec(),
                    height: repair.height(),
                    source: Source::Repaired,
                });
            }
        }
        if let Some(mine) = &self.mine {
            self.board.publish(self.work, mine);
        }
    }

    /// Takes the board's placement when it is lower than the lane's.
    pub(super) fn adopt(&mut self) {
        if self.board.height() >= self.height() {
            return;
        }
        if let Some(b) = self.board.best.with(|b| b.clone()) {
            if b.height < self.height() {
                self.mine = Some(b);
                self.repairing_mine = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::buffer::Buffer;
    use crate::plan::options::Options;

    fn incumbent(offsets: &[i64]) -> Incumbent {
        Incumbent {
            height: offsets.iter().max().map_or(0, |o| o + 10),
            offsets: offsets.to_vec(),
            source: Source::Repaired,
        }
    }

    /// A lane that takes a lower placement while its repair works on an
    /// older one still knows its best: it reports that height, and a
    /// later, higher placement does not replace it (the repair set aside
    /// holds nothing of the lane's). Before, such a lane reported no
    /// height at all, took every restart that came after, however high,
    /// and repaired the last one instead of its best.
    #[test]
    fn a_lane_keeps_its_best_while_its_repair_is_set_aside() {
        let buffers = (0..3).map(|_| Buffer::new("", 0, 4, 10)).collect();
        let problem = Problem::new(i64::MAX, buffers).unwrap();
        let options = Options::default();
        let none = Deadline::none();
        let work = Work::new(&problem, &options, Deadline::none(), 0, None).unwrap();
        let board = Board::new(&work, work.lower_bound);
        let mut lane = Lane::new(&work, &board, &none, 0, 1, None);
        lane.offer(incumbent(&[0, 10, 40]));
        assert_eq!(lane.height(), 50);
        // The repair starts on that placement; no credit, no step.
        lane.repair_for(&mut 0, Goal::Minimize).unwrap();
        assert!(lane.repair.is_some() && lane.repairing_mine);
        lane.offer(incumbent(&[0, 10, 20]));
        assert!(!lane.repairing_mine);
        assert_eq!(lane.height(), 30);
        lane.offer(incumbent(&[0, 10, 30]));
        assert_eq!(lane.height(), 30);
        assert_eq!(
            lane.mine.as_ref().map(|m| m.offsets.clone()),
            Some(alloc::vec![0, 10, 20])
        );
    }
}
