//! A lane's coarse level: the problem with its buffers merged (see
//! [`heuristic::coarsen`]), its plain orders and, with a timeout, its
//! minimisation, and the finer level refined from the coarse placement.

use super::board::Incumbent;
use super::lane::Lane;
use super::repair::STALLED_STEPS;
use crate::deadline::{Poll, Stop};
use crate::heuristic::{self, Layout, Repair};
use crate::plan::options::Source;

/// Steps of the finer level's repair between two placements it hands on
/// (each a lift of the whole problem).
const REFINE_OFFER_STEPS: u32 = 64;

impl Lane<'_, '_> {
    /// Every strategy's plain order on the coarse problem, if buffers
    /// merge (see [`heuristic::coarsen`]), each lifted back and offered;
    /// with a timeout, the coarse problem minimised in a third of the
    /// time left, then a finer level started from its placement (see
    /// [`Lane::refine`]) in half the time then left. Then, if the
    /// coarsening guessed unguided stacks (the guesses most often wrong),
    /// the same for the coarse problem made without them (the one it
    /// passed on the way, not merged again): more rectangles, fewer wrong
    /// merges, and either can be the better (the lower is kept).
    pub(super) fn coarse(&mut self, poll: &mut Poll<'_>) -> Result<(), Stop> {
        if self.work.variants.is_empty() {
            return Ok(());
        }
        // A finer level only where it will be refined on.
        let finer = self.coarse_solve.is_some() && self.deadline.remaining().is_some();
        let making = heuristic::coarsen::Making {
            unguided: true,
            finer,
        };
        let Some(mut coarse) = heuristic::coarsen::coarsen(self.work.problem, making, poll)? else {
            return Ok(());
        };
        for share in [3, 2] {
            if let Some(placed) = self.coarse_level(&coarse, share, poll)? {
                self.refine(&coarse, placed, 2, poll)?;
            }
            let guided = coarse.guided.take().filter(|_| self.coarse_solve.is_some());
            match guided {
                Some(g) if coarse.unguided => coarse = *g,
                _ => break,
            }
        }
        Ok(())
    }

    /// The coarse problem's plain orders, and with a timeout its
    /// minimisation in `1 / share` of the time left, whose placement
    /// (lifted) it returns; each placement that minimisation publishes on
    /// the way is lifted onto the board at once.
    fn coarse_level(
        &mut self,
        coarse: &heuristic::coarsen::Coarse,
        share: u32,
        poll: &mut Poll<'_>,
    ) -> Result<Option<Incumbent>, Stop> {
        // Half as many buffers or fewer: else the coarse problem is
        // nearly this one, and its placements near repeats of those run
        // already (real graphs merge a quarter of their buffers).
        if 2 * coarse.problem.len() > self.work.problem.len() {
            return Ok(None);
        }
        let layout = Layout::new(&coarse.problem, poll)?;
        if layout.fixed_clash {
            return Ok(None);
        }
        for &variant in &self.work.variants[..self.work.primary] {
            let limit = self.height().saturating_sub(1);
            let Some(b) = heuristic::plain(&layout, variant, limit, poll)? else {
                continue;
            };
            self.offer(Incumbent {
                offsets: coarse.lift(&b.offsets),
                height: b.height,
                source: Source::Coarsened,
            });
        }
        // A smaller problem, on which the exact search and repair reach
        // further (with a timeout; without one, plans stay cheap).
        let mut placed = None;
        if let (Some(solve), Some(left)) = (self.coarse_solve, self.deadline.remaining()) {
            drop(layout);
            // Each placement the level below publishes is lifted onto the
            // board at once (only one lower than the board's: a lift costs
            // the whole problem), where the other lanes repair it while
            // this one waits for the level below to end.
            #[cfg(feature = "std")]
            let (board, work) = (self.board, self.work);
            #[cfg(feature = "std")]
            let relay = |offsets: &[i64], height: i64| {
                if height < board.height() {
                    let lifted = Incumbent {
                        offsets: coarse.lift(offsets),
                        height,
                        source: Source::Coarsened,
                    };
                    board.publish(work, &lifted);
                }
            };
            // Without `std` there is one lane, and the board is not shared
            // (nor `Sync`): no other lane could take the placement up.
            #[cfg(not(feature = "std"))]
            let relay = |_: &[i64], _: i64| {};
            let got = solve(&coarse.problem, self.deadline.sooner(left / share), &relay);
            if let Some(inc) = got {
                let lifted = Incumbent {
                    offsets: coarse.lift(&inc.offsets),
                    height: inc.height,
                    source: Source::Coarsened,
                };
                self.offer(lifted.clone());
                placed = Some(lifted);
            }
            poll.now()?;
        }
        Ok(placed)
    }

    /// The finer level the coarsening passed on the way (see
    /// [`heuristic::coarsen::Coarse::finer`]), repaired in `1 / share`
    /// of the time left from `placed`, the coarse problem's placement
    /// lifted: where a wrong merge holds the coarse problem above the
    /// optimum, its pieces can move apart here, and the finer problem is
    /// still small enough for the repair to reach everywhere. Never worse
    /// than `placed`: the repair never raises the height. What it lowers
    /// is offered every [`REFINE_OFFER_STEPS`] steps, not only at the end.
    /// It runs on even when the board holds a lower placement: its own
    /// path may end lower, and the other lanes follow the board's.
    fn refine(
        &mut self,
        coarse: &heuristic::coarsen::Coarse,
        placed: Incumbent,
        share: u32,
        poll: &mut Poll<'_>,
    ) -> Result<(), Stop> {
        let Some(finer) = &coarse.finer else {
            return Ok(());
        };
        let target = self.board.lower();
        if placed.height <= target {
            return Ok(());
        }
        let (Some(offsets), Some(left)) =
            (finer.offsets_of(&placed.offsets), self.deadline.remaining())
        else {
            return Ok(());
        };
        let layout = Layout::new(&finer.problem, poll)?;
        if layout.fixed_clash {
            return Ok(());
        }
        let mut repair = Repair::new(&layout, offsets, self.seed, poll)?;
        let until = self.deadline.sooner(left / share);
        let mut steps = Poll::new(&until, 1 << 12);
        let (mut stalled, mut since_offer) = (0u32, 0u32);
        while repair.height() > target && stalled <= STALLED_STEPS {
            match repair.step(target, &mut steps) {
                Ok(lowered) => stalled = if lowered { 0 } else { stalled + 1 },
                Err(_) => break,
            }
            // What the repair has lowered goes on the board as it comes,
            // not only at the end of its share of the time: the other
            // lanes take it up, and a deadline reached meanwhile finds it.
            since_offer += 1;
            if stalled == 0 && since_offer >= REFINE_OFFER_STEPS && repair.height() < self.height()
            {
                since_offer = 0;
                self.offer(Incumbent {
                    offsets: finer.lift(repair.offsets()),
                    height: repair.height(),
                    source: Source::Repaired,
                });
            }
        }
        if repair.height() < placed.height {
            self.offer(Incumbent {
                offsets: finer.lift(repair.offsets()),
                height: repair.height(),
                source: Source::Repaired,
            });
        }
        poll.now()?;
        Ok(())
    }
}
