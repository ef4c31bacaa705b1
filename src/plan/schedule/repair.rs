//! A lane's repair of its best placement: the share of the work it gets
//! against the placements and the steps while a grant lasts.

use super::lane::Lane;
use super::work::Goal;
use crate::deadline::{Poll, Stop};
use crate::heuristic::Repair;

/// Repair steps in a row that lower nothing before a repair stops
/// spending on a peak (a fixed buffer on top cannot come down).
pub(super) const STALLED_STEPS: u32 = 1 << 16;

impl Lane<'_, '_> {
    /// Two grants' worth of work, split between the placements and the
    /// repair by what each lowered per unit of work so far
    /// ([`crate::heuristic::Shares::restarts_against_repair`]): on some
    /// families the restarts find the lower placements, on others the
    /// repair, and each keeps a quarter whatever they found.
    pub(super) fn split(&self, grant: i64) -> (i64, i64) {
        let repair = self.grants.second_share();
        let both = grant.saturating_mul(2) as f64;
        ((both * (1.0 - repair)) as i64, (both * repair) as i64)
    }

    /// Records what one kind of work did: from `(height, credit)` before
    /// to the lane's height and `credit` now, the part of the gap to the
    /// lower bound it closed.
    pub(super) fn record_grant(&mut self, repair: bool, (height, credit): (i64, i64), left: i64) {
        let used = u64::try_from(credit.saturating_sub(left)).unwrap_or(0);
        let now = self.height();
        let gap = height.saturating_sub(self.board.lower()).max(1);
        let gained = match height {
            i64::MAX => 0.0,
            _ => (height - now).max(0) as f64 / gap as f64,
        };
        self.grants.record(repair, used, gained);
    }

    /// Where the trees are built one at a time (see
    /// `Board::claim_plain`), round 0's plain orders hold a lane for
    /// seconds each and all of them run before the first repair: once
    /// the board holds a placement below every plain order (the heaviest
    /// buffers first, or the coarse level), it is repaired after each
    /// placement for as much work as that placement took, so the lowest
    /// placement keeps coming down while the plain orders are still out
    /// (they keep half the lane, and every one still runs). Below that
    /// size round 0 is short, and on some families its later placements
    /// are what leads: the lane repairs after it, as before.
    pub(super) fn repair_beside_plain(&mut self, used: u64, goal: Goal) -> Result<(), Stop> {
        let leader = self.board.height();
        if !self.board.one_tree || self.lanes == 1 || leader >= self.board.best_plain() {
            return Ok(());
        }
        self.adopt();
        let mut credit = i64::try_from(used).unwrap_or(i64::MAX);
        let repaired = self.repair_for(&mut credit, goal);
        self.publish();
        repaired
    }

    /// Repair steps while the grant lasts.
    pub(super) fn repair_for(&mut self, credit: &mut i64, goal: Goal) -> Result<(), Stop> {
        // A lane that walks gives the walk half of the repair's grant
        // (the repair keeps the rest: on some kernels it is what fits).
        #[cfg(feature = "constraints")]
        if let (Some(_), Some(best)) = (&self.walk, self.mine.as_ref().map(|m| m.height)) {
            let target = self.target(goal);
            let (given, mut half) = (*credit / 2, *credit / 2);
            let mut poll = Poll::new(self.deadline, 1 << 12);
            self.walk_for(&mut half, (target, best), goal, &mut poll)?;
            *credit -= given - half;
            self.publish();
        }
        let Some(mine) = &self.mine else {
            return Ok(());
        };
        if self.work.layout.fixed_clash {
            return Ok(());
        }
        let target = self.target(goal);
        let mut poll = Poll::new(self.deadline, 1 << 12);
        self.repaired += 1;
        let seed = self.seed ^ self.repaired.wrapping_mul(0xD6E8_FEB8_6659_FD93);
        match self.repair.as_mut() {
            // The index over time is the layout's: built once a lane.
            None => {
                let offsets = mine.offsets.clone();
                self.repair = Some(Repair::new(&self.work.layout, offsets, seed, &mut poll)?);
            }
            Some(r) if !self.repairing_mine => r.reset(mine.offsets.clone(), seed),
            Some(_) => {}
        }
        self.repairing_mine = true;
        let Some(repair) = self.repair.as_mut() else {
            return Ok(());
        };
        let mut stalled = 0u32;
        while *credit > 0 && repair.height() > target {
            let before = poll.used();
            let lowered = repair.step(target, &mut poll)?;
            *credit -= (poll.used() - before).max(1) as i64;
            // Another lane (or a level below, relayed) has published a
            // lower placement: repair that one instead, from the next
            // round (the lane adopts it on the way).
            if self.board.height() < repair.height() {
                break;
            }
            // Peaks that a window cannot lower (a fixed buffer on top):
            // stop spending on them.
            stalled = if lowered { 0 } else { stalled + 1 };
            if stalled > STALLED_STEPS {
                break;
            }
        }

        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deadline::Deadline;
    use crate::model::buffer::Buffer;
    use crate::model::problem::Problem;
    use crate::model::solution::{validate, Solution};
    use crate::plan::options::{Options, Source};
    use crate::plan::schedule::board::{Board, Incumbent};
    use crate::plan::schedule::work::Work;
    use core::sync::atomic::Ordering;

    /// A lane stops repairing its own placement as soon as the board holds
    /// a lower one (from another lane, or relayed from a level below), so
    /// that it repairs the lowest placement known from its next round
    /// instead of spending its whole grant above it.
    #[test]
    fn a_lane_repair_yields_to_a_lower_placement_on_the_board() {
        // A fixed buffer on top: no step can lower this placement to the
        // capacity the lane fits, so without the yield the repair would
        // spend its whole credit.
        let buffers = alloc::vec![
            Buffer::new("", 0, 4, 10),
            Buffer::new("", 0, 4, 10).with_offset(40),
        ];
        let problem = Problem::new(i64::MAX, buffers).unwrap();
        let options = Options::default();
        let none = Deadline::none();
        let work = Work::new(&problem, &options, Deadline::none(), 0, None).unwrap();
        let board = Board::new(&work, work.lower_bound);
        let mut lane = Lane::new(&work, &board, &none, 0, 2, None);
        lane.offer(Incumbent {
            offsets: alloc::vec![0, 40],
            height: 50,
            source: Source::Repaired,
        });
        let full = 1i64 << 40;
        // Alone on the board, the repair spends its credit on the stall.
        let mut credit = full;
        lane.repair_for(&mut credit, Goal::Fit(30)).unwrap();
        assert!(credit < full - i64::from(STALLED_STEPS));
        // Another lane publishes a lower placement (the board takes it
        // as given): one step, then the lane yields and takes it.
        let lower = Incumbent {
            offsets: alloc::vec![0, 40],
            height: 45,
            source: Source::Repaired,
        };
        assert!(board.publish(&work, &lower));
        let mut credit = full;
        lane.repair_for(&mut credit, Goal::Fit(30)).unwrap();
        assert!(credit > full - 10_000, "spent {}", full - credit);
        lane.adopt();
        assert_eq!(lane.height(), 45);
    }

    /// Beside round 0's plain orders, a lane repairs the board's leader
    /// only where the trees are built one at a time, with other lanes,
    /// and when the leader is below every plain order finished; then it
    /// lowers it, validly, for about the work it is given.
    #[test]
    fn the_leader_is_repaired_beside_the_plain_orders_only_where_they_are_slow() {
        // Buffers one after another, stacked: one step puts any of them
        // at the bottom.
        let buffers = (0..8).map(|i| Buffer::new("", i, i + 1, 10)).collect();
        let problem = Problem::new(i64::MAX, buffers).unwrap();
        let stacked = Incumbent {
            offsets: (0..8).map(|i| 10 * i).collect(),
            height: 80,
            source: Source::Heaviest,
        };
        let options = Options::default();
        let none = Deadline::none();
        let work = Work::new(&problem, &options, Deadline::none(), 0, None).unwrap();
        // The leader on a board whose trees are built one at a time (or
        // not), with a plain order finished at `plain`; what is on the
        // board after one placement's worth of work beside it.
        let after = |one_tree: bool, lanes: usize, plain: i64| {
            let mut board = Board::new(&work, work.lower_bound);
            board.one_tree = one_tree;
            board.plain_heights[0].store(plain, Ordering::Relaxed);
            assert!(board.publish(&work, &stacked));
            let mut lane = Lane::new(&work, &board, &none, 0, lanes, None);
            lane.repair_beside_plain(1 << 20, Goal::Minimize).unwrap();
            board.best.with(|b| b.clone()).unwrap()
        };
        let repaired = after(true, 2, 90);
        assert!(repaired.height < 80, "{}", repaired.height);
        let solution = Solution {
            offsets: repaired.offsets,
        };
        assert_eq!(validate(&problem, &solution), Ok(()));
        // Small problems, one lane, or a leader no lower than a plain
        // order: left as it is, for the plain orders to come first.
        for (one_tree, lanes, plain) in [(false, 2, 90), (true, 1, 90), (true, 2, 80)] {
            assert_eq!(after(one_tree, lanes, plain).height, 80);
        }
    }
}
