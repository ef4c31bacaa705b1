//! A lane's heaviest buffers first (see [`crate::heuristic::heavy`]): the
//! heaviest 256 buffers planned as a problem of their own (the objective's
//! own plan one level down, whose exact search places a few hundred
//! buffers at or near their bound), every other buffer placed around
//! that placement; then twice as many heavy buffers, and so on while the
//! placement around them keeps getting lower.

use core::sync::atomic::Ordering;
use core::time::Duration;

use super::board::Incumbent;
use super::lane::Lane;
use crate::deadline::{Poll, Stop};
use crate::heuristic::heavy::Heavy;
use crate::heuristic::{Strategy, Variant};
use crate::plan::options::Source;

/// Heavy buffers in the first heavy problem; each next one has twice as
/// many. Fewer leave the heaviest layer to the plain order around them;
/// many more, and the exact search no longer reaches their bound.
const FIRST_HEAVY: usize = 256;

/// The share of the time left that one heavy problem's plan may take
/// beside other lanes (most end at their bound long before).
const HEAVY_SHARE: u32 = 4;

/// With one lane, the least time one heavy problem's plan may take;
/// beyond it, as long as the plan has run so far. Not a share of the time
/// left: there a larger budget must do all that a smaller one does (see
/// "Dominance" in `schedule`), the same heavy plans included.
const HEAVY_FLOOR: Duration = Duration::from_millis(250);

impl Lane<'_, '_> {
    /// With a timeout and a plan one level down: heavy problems of
    /// [`FIRST_HEAVY`] buffers and twice as many each time, each planned
    /// in `1 / HEAVY_SHARE` of the time left (with one lane: for as long
    /// as the plan has run, at least [`HEAVY_FLOOR`]); the rest placed online
    /// around each placement (O(log n) a buffer, at any size), and where
    /// that is the lowest online placement yet, first-fit too (dearer,
    /// most often lower; cut once it reaches the lowest height known),
    /// each offered. The series ends at the first heavy problem whose
    /// online placement is no lower than the online strategy's plain
    /// order or the heavy problem's before it: there a heavy layer is not
    /// what decides the height, or a larger one packs worse.
    pub(super) fn heavy(&mut self, poll: &mut Poll<'_>) -> Result<(), Stop> {
        let (Some(solve), Some(_)) = (self.coarse_solve, self.deadline.remaining()) else {
            return Ok(());
        };
        let layout = &self.work.layout;
        // The lowest online placement so far: the online strategy's plain
        // order (the first variant, placed first), then around each heavy
        // problem.
        let online = Variant::plain(Strategy::Online);
        let mut lowest = match self.work.variants.first() {
            Some(&first) if first == online => self.board.plain_heights[0].load(Ordering::Relaxed),
            _ => i64::MAX,
        };
        let mut k = FIRST_HEAVY;
        while let Some(heavy) = Heavy::new(self.work.problem, layout, k, poll)? {
            let allowed = match self.lanes {
                1 => self.deadline.elapsed().max(HEAVY_FLOOR),
                _ => self.deadline.remaining().unwrap_or_default() / HEAVY_SHARE,
            };
            let got = solve(&heavy.problem, self.deadline.sooner(allowed), &|_, _| {});
            poll.now()?;
            let Some(placed) = got else {
                return Ok(());
            };
            // Placed whole whatever its height (the online strategy costs
            // the same either way): the series compares them.
            let Some((offsets, height)) =
                heavy.around(layout, online, &placed.offsets, i64::MAX, poll)?
            else {
                return Ok(());
            };
            self.offer(Incumbent {
                offsets,
                height,
                source: Source::Heaviest,
            });
            if height >= lowest {
                return Ok(());
            }
            lowest = height;
            // First-fit only where the lanes may each build a tree: above
            // that size it costs seconds, and the one tree at a time is
            // the plain orders' (see `Board::claim_plain`).
            if !self.board.one_tree {
                // Cut at the lowest height known, not only the lane's own:
                // a heavy placement is worth its cost only where it leads.
                let limit = self.height().min(self.board.height()).saturating_sub(1);
                let first_fit = Variant::plain(Strategy::FirstFit);
                let found = heavy.around(layout, first_fit, &placed.offsets, limit, poll)?;
                if let Some((offsets, height)) = found {
                    self.offer(Incumbent {
                        offsets,
                        height,
                        source: Source::Heaviest,
                    });
                }
            }
            k = 2 * heavy.len();
        }
        Ok(())
    }
}

#[cfg(all(test, feature = "std", feature = "gen"))]
mod tests {
    use super::super::board::Board;
    use super::super::work::{Relay, Work};
    use super::*;
    use crate::deadline::Deadline;
    use crate::gen::{generate_problem, Family, Spec};
    use crate::heuristic::Best;
    use crate::model::problem::Problem;
    use crate::model::solution::{validate, Solution};
    use crate::plan::minimize::{minimize_level, one_level_down};
    use crate::plan::options::Options;

    /// Where a thin layer of large long-lived buffers decides the height
    /// (sizes independent of lifetimes, buffers issued in program order),
    /// the heaviest buffers first ends below the online strategy's plain
    /// order, which it is measured against, with a valid placement; one
    /// lane, each heavy plan one level down on one lane too.
    #[test]
    fn the_heaviest_buffers_first_lower_the_online_order_where_they_decide() {
        let spec = Spec {
            family: Family::Issued,
            ..Spec::new(3_000, 1)
        };
        let problem = generate_problem(spec).unwrap();
        let options = Options {
            threads: 1,
            ..Options::default()
        };
        let minute = core::time::Duration::from_secs(60);
        let deadline = Deadline::after(minute);
        let mut work = Work::new(&problem, &options, Deadline::after(minute), 0, None).unwrap();
        let online = Variant::plain(Strategy::Online);
        assert_eq!(work.variants.first(), Some(&online));
        let mut poll = Poll::new(&deadline, u64::MAX);
        let plain: Best = crate::heuristic::plain(&work.layout, online, i64::MAX, &mut poll)
            .unwrap()
            .unwrap();
        work.at_once = Some(plain.clone());
        let solve = |heavy: &Problem, deadline: Deadline<'_>, relay: &Relay<'_>| {
            one_level_down(&work, heavy, (deadline, relay), minimize_level)
        };
        let board = Board::new(&work, work.lower_bound);
        let mut lane = Lane::new(&work, &board, &deadline, 0, 1, Some(&solve));
        lane.heavy(&mut poll).unwrap();
        let best = board.best.with(|b| b.clone()).unwrap();
        assert_eq!(best.source, Source::Heaviest);
        assert!(
            best.height < plain.height,
            "{} against {}",
            best.height,
            plain.height
        );
        let solution = Solution {
            offsets: best.offsets,
        };
        assert_eq!(validate(&problem, &solution), Ok(()));
    }
}
