//! Gap filling: a skyline placement driven by the gaps instead of by an
//! order. The lowest flat run of the skyline is filled from its left end
//! by a buffer that starts there and ends inside the run: one whose end
//! leaves the rest of the run fillable (the run's end, or where another
//! buffer that fits starts), the earliest in the variant's order first
//! (the longest-lived, unless perturbed). A run in which no buffer can
//! start is raised to its lower neighbour: nothing can ever cover it at
//! that height. Where the memory was cut from rectangles with no waste,
//! the piece at a run's left end starts there, so the order only decides
//! between the few that do; elsewhere it is a skyline placement like the
//! others, and the portfolio keeps whichever is lower.
//!
//! Every buffer placed sits on the skyline over its whole lifetime, and
//! the skyline is at or above every placed buffer's top: placements never
//! meet. Where a buffer is in several pieces (gaps, windows) or fixed,
//! the variant's order is placed on top of the skyline instead, as
//! `skyline` places its own.

use alloc::collections::{BTreeMap, BinaryHeap};
use alloc::vec::Vec;
use core::cmp::Reverse;

use super::layout::Layout;
use crate::base::math::align_up;
use crate::base::trees::{FirstAtMost, MaxTree};
use crate::deadline::{Poll, Stop};

/// How many of the buffers that fit a run are weighed (the longest-lived
/// ones): a slot where thousands start costs no more than this a run.
const WEIGHED: usize = 32;

/// A run no buffer can ever cover.
const DEAD: i64 = i64::MAX;

impl Layout {
    /// Gap filling (see the module documentation); whether it placed every
    /// buffer, with none above `limit`.
    pub(super) fn gap_fill(
        &self,
        order: &[u32],
        limit: i64,
        offsets: &mut [i64],
        poll: &mut Poll<'_>,
    ) -> Result<bool, Stop> {
        let n = self.len();
        if (0..n).any(|b| !self.one_piece(b) || self.fixed[b].is_some()) {
            // Runs of one height do not describe memory that fixed
            // buffers and gaps leave: the same order on top of the
            // skyline instead.
            return self.skyline(order, limit, offsets, poll);
        }
        let mut rank = alloc::vec![0u32; n];
        for (i, &b) in order.iter().enumerate() {
            rank[b as usize] = i as u32;
        }
        // Per start slot, the buffers that start there by end: (end,
        // rank, buffer).
        let mut starting: Vec<Vec<(u32, u32, u32)>> = alloc::vec![Vec::new(); self.times + 1];
        for &b in order {
            let e = self.extent[b as usize];
            starting[e.first as usize].push((e.end, rank[b as usize], b));
        }
        for list in &mut starting {
            list.sort_unstable();
        }
        poll.tick(2 * n as u64)?;
        let ends: Vec<u32> = starting.iter().map(|l| earliest_end(l)).collect();
        let mut earliest = FirstAtMost::new(&ends);
        let mut skyline = Skyline::new(self.times as u32);
        // Per slot, the skyline plus what is still to be placed there: the
        // least any placement that follows ends at, since buffers alive
        // together stack above the skyline. Both parts change by range
        // additions only, so a tree keeps the most: past `limit`, stop.
        let mut bound = MaxTree::new(&self.load);
        while let Some((a, b, h)) = skyline.lowest() {
            poll.tick(4)?;
            let list = &starting[a as usize];
            let fit = list.partition_point(|&(end, _, _)| end <= b);
            if fit > 0 {
                let fillable = |end: u32| end == b || earliest.value(end as usize) <= b;
                let weighed = fit.saturating_sub(WEIGHED)..fit;
                let key = |i: usize| (!fillable(list[i].0), list[i].1);
                let pick = weighed.min_by_key(|&i| key(i)).unwrap_or(fit - 1);
                let list = &mut starting[a as usize];
                let (end, _, x) = list.remove(pick);
                earliest.set(a as usize, earliest_end(list));
                let x = x as usize;
                let at = align_up(h, self.align[x]);
                let top = at.saturating_add(self.size[x]);
                if top > limit {
                    return Ok(false);
                }
                offsets[x] = at;
                if at > h {
                    bound.add(a as usize, end as usize, at - h);
                    if bound.max(0, self.times) > limit {
                        return Ok(false);
                    }
                }
                skyline.set(a, end, top);
                if end < b {
                    skyline.set(end, b, h);
                }
                continue;
            }
            // Nothing that starts in `[a, s)` ends by `b`: `[a, s)` rises
            // to its lower neighbour (what starts there reaches past `b`,
            // over the right one). With nothing to its left and nothing
            // starting in it, nothing ever covers it: it is dead, and no
            // buffer left meets a dead run.
            let s = earliest
                .first(a as usize + 1, b as usize, b)
                .map_or(b, |s| s as u32);
            let starts = earliest
                .first(a as usize, s as usize, u32::MAX - 1)
                .is_some();
            let lift = match (skyline.left_of(a), skyline.right_of(b)) {
                (Some(l), Some(r)) => l.min(r),
                (Some(l), None) => l,
                (None, Some(r)) if starts => r,
                _ => DEAD,
            };
            if lift != DEAD {
                bound.add(a as usize, s as usize, lift - h);
                if bound.max(0, self.times) > limit {
                    return Ok(false);
                }
            }
            skyline.set(a, s, lift);
            if s < b {
                skyline.set(s, b, h);
            }
        }
        Ok(true)
    }
}

fn earliest_end(list: &[(u32, u32, u32)]) -> u32 {
    list.first().map_or(u32::MAX, |f| f.0)
}

/// The skyline as runs of equal height, `start -> (end, height)`, equal
/// neighbours merged, with a heap of runs by (height, start) whose stale
/// entries are skipped.
struct Skyline {
    runs: BTreeMap<u32, (u32, i64)>,
    heap: BinaryHeap<Reverse<(i64, u32)>>,
}

impl Skyline {
    fn new(times: u32) -> Skyline {
        let mut sky = Skyline {
            runs: BTreeMap::new(),
            heap: BinaryHeap::new(),
        };
        sky.runs.insert(0, (times, 0));
        sky.heap.push(Reverse((0, 0)));
        sky
    }

    /// The lowest live run, the leftmost of equals: `(start, end, height)`.
    fn lowest(&mut self) -> Option<(u32, u32, i64)> {
        while let Some(Reverse((h, a))) = self.heap.pop() {
            match self.runs.get(&a) {
                Some(&(b, now)) if now == h && h != DEAD => return Some((a, b, h)),
                _ => continue,
            }
        }
        None
    }

    fn left_of(&self, a: u32) -> Option<i64> {
        self.runs.range(..a).next_back().map(|(_, &(_, h))| h)
    }

    fn right_of(&self, b: u32) -> Option<i64> {
        self.runs.get(&b).map(|&(_, h)| h)
    }

    /// Sets `[a, b)`, which starts a run and lies inside it, to `h`.
    fn set(&mut self, mut a: u32, mut b: u32, h: i64) {
        self.runs.remove(&a);
        if let Some((&left, &(_, lh))) = self.runs.range(..a).next_back() {
            if lh == h {
                self.runs.remove(&left);
                a = left;
            }
        }
        if let Some(&(right, rh)) = self.runs.get(&b) {
            if rh == h {
                self.runs.remove(&b);
                b = right;
            }
        }
        self.runs.insert(a, (b, h));
        self.heap.push(Reverse((h, a)));
    }
}

#[cfg(test)]
mod tests {
    use crate::base::rng::Rng;
    use crate::gen::{generate, Family, Spec};
    use crate::heuristic::{run, Strategy};
    use crate::model::problem::{Buffer, Problem};
    use crate::model::solution::validate_below;

    /// Gap filling's placements are valid: on random problems, aligned or
    /// not, with lifetimes that touch, nest and share ends; on zero-waste
    /// packings (where the runs rebuild cut rectangles); and on problems
    /// with gaps and fixed buffers (placed on top of the skyline instead),
    /// where it places whenever the skyline does (never when fixed
    /// buffers clash).
    #[test]
    fn gap_fill_places_validly() {
        let mut rng = Rng::new(31);
        let mut with_gaps = 0;
        for case in 0..3000 {
            let n = rng.below(1, 40) as usize;
            let horizon = rng.below(2, 30);
            let buffers: Vec<Buffer> = (0..n)
                .map(|i| {
                    let lower = rng.below(0, horizon - 1);
                    let upper = rng.below(lower + 1, horizon + 1);
                    let mut b = Buffer::new(alloc::format!("b{i}"), lower, upper, rng.below(1, 50));
                    if rng.below(0, 3) == 0 {
                        b.alignment = [2, 4, 8][rng.below(0, 3) as usize];
                    }
                    b
                })
                .collect();
            let family = [Family::Planted, Family::Pinwheel, Family::Swept][case % 3];
            let spec = Spec::new(n + 5, case as u64).with_family(family);
            let gapped = crate::exact::testing::gapped(&mut rng);
            let problems = [
                Problem::new(i64::MAX, buffers).unwrap(),
                Problem::new(i64::MAX, generate(spec)).unwrap(),
                Problem::new(i64::MAX, gapped.buffers().to_vec()).unwrap(),
            ];
            for (k, problem) in problems.iter().enumerate() {
                let placed = run(problem, Strategy::GapFill);
                if k == 2 {
                    let skyline = run(problem, Strategy::Skyline);
                    assert_eq!(placed.is_some(), skyline.is_some(), "case {case}");
                    with_gaps += usize::from(placed.is_some());
                }
                let Some(placed) = placed else {
                    assert_eq!(k, 2, "case {case}: not placed");
                    continue;
                };
                validate_below(problem, &placed, i64::MAX)
                    .unwrap_or_else(|e| panic!("case {case}: {e}"));
            }
        }
        assert!(with_gaps > 2000, "{with_gaps} placed with gaps");
    }
}
