//! The heaviest buffers first: the few that hold most of the memory over
//! time (size times lifetime) as a problem of their own, small enough for
//! the exact search to place at or near its bound; then every other
//! buffer around that placement, in a plain order.
//!
//! Where a thin layer of large, long-lived buffers carries most of the
//! peak, how that layer packs decides the height, and a plain order,
//! which places it by a rule meant for every buffer alike, leaves its
//! waste there for good: the small buffers cannot fill a hole that runs
//! under a large one for half the program. Packed on its own the layer
//! wastes little, and the small buffers fill what it leaves. Where no
//! such layer exists (buffers alike in size and lifetime), the heavy
//! placement is one more the portfolio measures and drops.
//!
//! Only free buffers in one piece join the heavy problem (with every fixed
//! buffer, where it is fixed, so that its placement leaves them room): a
//! buffer in pieces could not enter the online strategy's live set whole.

use alloc::vec::Vec;

use super::layout::Layout;
use super::strategy::Variant;
use crate::deadline::{Poll, Stop};
use crate::model::problem::Problem;

/// The heaviest buffers of a problem, as a problem of their own.
pub(crate) struct Heavy {
    /// The heavy buffers (the first `members.len()`), then the fixed
    /// ones.
    pub(crate) problem: Problem,
    /// The original index of each heavy buffer, in the order of
    /// `problem`'s.
    members: Vec<u32>,
}

/// The buffers a heavy problem may take (free, in one piece: a buffer in
/// pieces could not enter the online strategy's live set whole), each
/// with its size times lifetime negated, so that sorting puts the
/// heaviest first.
fn candidates(layout: &Layout, poll: &mut Poll<'_>) -> Result<Vec<(i128, u32)>, Stop> {
    let n = layout.len();
    let weights = (0..n)
        .filter(|&b| layout.fixed[b].is_none() && layout.one_piece(b))
        .map(|b| {
            let area = i128::from(layout.size[b]) * i128::from(layout.length[b]);
            (-area, b as u32)
        })
        .collect();
    poll.tick(2 * n as u64)?;
    Ok(weights)
}

/// The most heavy buffers taken from `candidates`: a third, so that at
/// least twice as many are left to place around them (else the heavy
/// problem would be most of the problem).
fn most_heavy(candidates: usize) -> usize {
    candidates / 3
}

impl Heavy {
    /// The `k` free one-piece buffers of `problem` with the largest size
    /// times lifetime (ties: the lower index), with the fixed buffers;
    /// `None` where fewer than twice as many such buffers are left besides
    /// them (the heavy problem would be most of this one), or where
    /// separations shorten lifetimes (the heavy problem would not see the
    /// moments).
    pub(crate) fn new(
        problem: &Problem,
        layout: &Layout,
        k: usize,
        poll: &mut Poll<'_>,
    ) -> Result<Option<Heavy>, Stop> {
        let n = layout.len();
        if k == 0 || k > most_heavy(n) || problem.moments_from() != i64::MAX {
            return Ok(None);
        }
        let mut weights = candidates(layout, poll)?;
        if k > most_heavy(weights.len()) {
            return Ok(None);
        }
        weights.select_nth_unstable(k - 1);
        let mut members: Vec<u32> = weights[..k].iter().map(|&(_, b)| b).collect();
        members.sort_unstable();
        let buffers = problem.buffers();
        let fixed = (0..n).filter(|&b| layout.fixed[b].is_some());
        let chosen = members.iter().map(|&b| b as usize).chain(fixed);
        let heavy = Problem::new(
            problem.capacity(),
            chosen.map(|b| buffers[b].clone()).collect(),
        );
        poll.tick(n as u64)?;
        let Ok(heavy) = heavy else {
            return Ok(None);
        };
        Ok(Some(Heavy {
            problem: heavy,
            members,
        }))
    }

    /// How many buffers the first heavy problem takes: the fewest of
    /// `from`, twice `from`, ... up to `upto` whose heaviest hold at
    /// least `share` of the area of the buffers a heavy problem may take
    /// (free, one piece); `from` where none does, or where so many would
    /// leave too few around them for [`Heavy::new`].
    pub(crate) fn first_size(
        layout: &Layout,
        (from, upto): (usize, usize),
        share: f64,
        poll: &mut Poll<'_>,
    ) -> Result<usize, Stop> {
        let mut areas = candidates(layout, poll)?;
        let total = -areas.iter().map(|w| w.0).sum::<i128>();
        let top = upto.min(most_heavy(areas.len()));
        if from == 0 || top < from || total <= 0 {
            return Ok(from);
        }
        // The `top` largest areas, largest first.
        areas.select_nth_unstable(top - 1);
        areas[..top].sort_unstable();
        poll.tick(16 * top as u64)?;
        let mut held = 0i128;
        let mut k = from;
        for (i, &(area, _)) in areas[..top].iter().enumerate() {
            held -= area;
            if i + 1 == k {
                if held as f64 >= share * total as f64 {
                    return Ok(k);
                }
                k *= 2;
            }
        }
        Ok(from)
    }

    /// How many heavy buffers there are.
    pub(crate) fn len(&self) -> usize {
        self.members.len()
    }

    /// Every other buffer placed with `variant` (online, or one that
    /// fills holes) in its plain order around the heavy buffers at
    /// `offsets` (a placement of the heavy problem), which stay where
    /// they are; `None` once a buffer's top passes `limit`. Valid where
    /// `offsets` is: the heavy buffers go in as fixed buffers do.
    pub(crate) fn around(
        &self,
        layout: &Layout,
        variant: Variant,
        offsets: &[i64],
        limit: i64,
        poll: &mut Poll<'_>,
    ) -> Result<Option<(Vec<i64>, i64)>, Stop> {
        let mut order = layout.order(variant, None, poll)?;
        // `members` is sorted: one search a buffer.
        order.retain(|b| self.members.binary_search(b).is_err());
        poll.tick(order.len() as u64)?;
        let placed: Vec<(u32, i64)> = self
            .members
            .iter()
            .copied()
            .zip(offsets.iter().copied())
            .collect();
        layout.place_around(variant, &order, &placed, limit, poll)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::rng::Rng;
    use crate::deadline::Deadline;
    use crate::heuristic::Strategy;
    use crate::model::buffer::{Buffer, Gap};
    use crate::model::solution::{validate, Solution};

    /// Random buffers: some fixed (at offsets that never clash: each fixed
    /// buffer above the last), some in pieces, alignments mixed.
    fn problem(rng: &mut Rng, n: usize) -> Problem {
        let mut fixed_at = 10_000;
        let buffers = (0..n)
            .map(|i| {
                let lower = rng.below(0, 40);
                let upper = lower + rng.below(1, 25);
                let size = rng.below(1, 200);
                let b = Buffer::new(alloc::format!("b{i}"), lower, upper, size)
                    .with_alignment([1, 1, 8][rng.below(0, 3) as usize]);
                match rng.below(0, 12) {
                    0 => {
                        fixed_at += 256;
                        b.with_alignment(1).with_offset(fixed_at)
                    }
                    1 if upper - lower >= 3 => b.with_gap(Gap {
                        lower: lower + 1,
                        upper: lower + 2,
                        window: None,
                    }),
                    _ => b,
                }
            })
            .collect();
        Problem::new(i64::MAX, buffers).unwrap()
    }

    /// The heavy buffers are the `k` free one-piece buffers with the most
    /// size times lifetime (ties: the lower index), followed in the heavy
    /// problem by every fixed buffer.
    #[test]
    fn the_heavy_buffers_hold_the_most_memory_over_time() {
        let d = Deadline::none();
        let mut poll = Poll::new(&d, u64::MAX);
        let mut rng = Rng::new(5);
        for case in 0..200 {
            let n = rng.below(1, 90) as usize;
            let p = problem(&mut rng, n);
            let layout = Layout::new(&p, &mut poll).unwrap();
            let buffers = p.buffers();
            let eligible: Vec<usize> = (0..n)
                .filter(|&b| buffers[b].offset.is_none() && buffers[b].gaps.is_empty())
                .collect();
            let k = rng.below(0, n as i64 / 2 + 2) as usize;
            let heavy = Heavy::new(&p, &layout, k, &mut poll).unwrap();
            let Some(heavy) = heavy else {
                assert!(
                    k == 0 || 3 * k > eligible.len(),
                    "case {case}: k {k} of {n}"
                );
                continue;
            };
            assert!(k >= 1 && 3 * k <= eligible.len(), "case {case}");
            let area = |b: usize| buffers[b].size * (buffers[b].upper - buffers[b].lower);
            let key = |b: usize| (-area(b), b);
            let members: Vec<usize> = heavy.members.iter().map(|&b| b as usize).collect();
            assert_eq!(members.len(), k);
            let least = members.iter().map(|&m| key(m)).max().unwrap();
            for &b in &eligible {
                assert_eq!(
                    members.contains(&b),
                    key(b) <= least,
                    "case {case}: buffer {b}"
                );
            }
            let fixed = (0..n).filter(|&b| buffers[b].offset.is_some());
            let want: Vec<&Buffer> = members
                .iter()
                .copied()
                .chain(fixed)
                .map(|b| &buffers[b])
                .collect();
            assert_eq!(heavy.problem.buffers().iter().collect::<Vec<_>>(), want);
        }
    }

    /// The first heavy problem's size agrees with counting the areas by
    /// hand: the fewest of `from`, twice `from`, ... (no more than `upto`,
    /// nor than a third of the buffers a heavy problem may take) whose
    /// largest areas hold the share asked, else `from`.
    #[test]
    fn the_first_heavy_size_is_the_fewest_that_hold_the_share() {
        let d = Deadline::none();
        let mut poll = Poll::new(&d, u64::MAX);
        let mut rng = Rng::new(13);
        let (mut grown, mut kept) = (0, 0);
        for case in 0..400 {
            let n = rng.below(1, 150) as usize;
            let p = problem(&mut rng, n);
            let layout = Layout::new(&p, &mut poll).unwrap();
            let buffers = p.buffers();
            let mut areas: Vec<i64> = buffers
                .iter()
                .filter(|b| b.offset.is_none() && b.gaps.is_empty())
                .map(|b| b.size * (b.upper - b.lower))
                .collect();
            areas.sort_unstable_by(|a, b| b.cmp(a));
            let total: i64 = areas.iter().sum();
            let from = rng.below(1, 6) as usize;
            let upto = rng.below(1, 80) as usize;
            let share = [0.3, 0.5, 0.75, 0.9, 1.0][rng.below(0, 5) as usize];
            let mut want = from;
            let mut k = from;
            while k <= upto && 3 * k <= areas.len() {
                let held: i64 = areas[..k].iter().sum();
                if held as f64 >= share * total as f64 {
                    want = k;
                    break;
                }
                k *= 2;
            }
            let got = Heavy::first_size(&layout, (from, upto), share, &mut poll).unwrap();
            assert_eq!(
                got, want,
                "case {case}: from {from} upto {upto} share {share}"
            );
            match got == from {
                true => kept += 1,
                false => grown += 1,
            }
        }
        // Both outcomes are met often.
        assert!(grown > 40 && kept > 40, "{grown} grown, {kept} kept");
    }

    /// Placed around a placement of the heavy problem, online or in a
    /// hole-filling order, every buffer is placed validly, the heavy ones
    /// where the heavy placement put them and the fixed ones where they
    /// are fixed; and a limit cuts exactly the placements that would end
    /// above it.
    #[test]
    fn placed_around_the_heavy_buffers_every_placement_is_valid() {
        let d = Deadline::none();
        let mut poll = Poll::new(&d, u64::MAX);
        let mut rng = Rng::new(8);
        let mut placed_around = 0;
        for case in 0..200 {
            let n = rng.below(3, 120) as usize;
            let p = problem(&mut rng, n);
            let layout = Layout::new(&p, &mut poll).unwrap();
            let k = rng.below(1, n as i64 / 3 + 1) as usize;
            let Some(heavy) = Heavy::new(&p, &layout, k, &mut poll).unwrap() else {
                continue;
            };
            // Any valid placement of the heavy problem will do: a plain
            // order's, or the exact search's.
            let strategy = [Strategy::FirstFit, Strategy::Skyline, Strategy::Online][case % 3];
            let placed = crate::heuristic::run(&heavy.problem, strategy)
                .unwrap()
                .offsets;
            for strategy in [Strategy::Online, Strategy::FirstFit, Strategy::BestFit] {
                let variant = Variant::plain(strategy);
                let around = heavy.around(&layout, variant, &placed, i64::MAX, &mut poll);
                let (offsets, height) = around.unwrap().unwrap();
                let solution = Solution {
                    offsets: offsets.clone(),
                };
                assert_eq!(validate(&p, &solution), Ok(()), "case {case}, {strategy:?}");
                for (&b, &at) in heavy.members.iter().zip(&placed) {
                    assert_eq!(offsets[b as usize], at, "case {case}, {strategy:?}");
                }
                let top = p
                    .buffers()
                    .iter()
                    .zip(&offsets)
                    .map(|(b, o)| o + b.size)
                    .max();
                assert_eq!(Some(height), top);
                // Never below the heavy placement itself: the heavy series
                // skips placing around a plan no lower than its best.
                let heavy_top = heavy.problem.buffers().iter().zip(&placed);
                let heavy_top = heavy_top.map(|(b, o)| o + b.size).max();
                assert!(Some(height) >= heavy_top, "case {case}, {strategy:?}");
                for limit in [height, height - 1] {
                    let again = heavy
                        .around(&layout, variant, &placed, limit, &mut poll)
                        .unwrap();
                    let want = (limit >= height).then(|| (offsets.clone(), height));
                    assert_eq!(again, want, "case {case}, {strategy:?} at {limit}");
                }
                placed_around += 1;
            }
        }
        assert!(placed_around > 200, "{placed_around}");
    }
}
