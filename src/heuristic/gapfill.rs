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

use alloc::collections::BinaryHeap;
use alloc::vec::Vec;
use core::cmp::Reverse;

use super::layout::Layout;
use crate::base::math::align_up;
use crate::base::trees::FirstAtMost;
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
        let mut starting = Starting::new(self, order, &rank);
        poll.tick(2 * n as u64)?;
        let ends: Vec<u32> = (0..=self.times).map(|t| starting.earliest_end(t)).collect();
        let mut earliest = FirstAtMost::new(&ends);
        let mut surface = Surface {
            skyline: Skyline::new(self.times as u32),
            floor: Floor::new(&self.load),
        };
        while let Some((a, b, h)) = surface.skyline.lowest() {
            poll.tick(4)?;
            let list = starting.at(a as usize);
            let fit = list.partition_point(|&(end, _, _)| end <= b);
            if fit > 0 {
                let fillable = |end: u32| end == b || earliest.value(end as usize) <= b;
                let weighed = fit.saturating_sub(WEIGHED)..fit;
                let key = |i: usize| (!fillable(list[i].0), list[i].1);
                let pick = weighed.min_by_key(|&i| key(i)).unwrap_or(fit - 1);
                let (end, _, x) = starting.remove(a as usize, pick);
                earliest.set(a as usize, starting.earliest_end(a as usize));
                let x = x as usize;
                let at = align_up(h, self.align[x]);
                let top = at.saturating_add(self.size[x]);
                if top > limit {
                    return Ok(false);
                }
                offsets[x] = at;
                if !surface.cover((a, b, h), end, top, at - h, limit) {
                    return Ok(false);
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
            let sky = &surface.skyline;
            let lift = match (sky.left_of(a), sky.right_of(b)) {
                (Some(l), Some(r)) => l.min(r),
                (Some(l), None) => l,
                (None, Some(r)) if starts => r,
                _ => DEAD,
            };
            // A dead run is no floor: nothing left is placed over it.
            let waste = if lift == DEAD { 0 } else { lift - h };
            if !surface.cover((a, b, h), s, lift, waste, limit) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The skyline and, per slot, the least height any placement that
/// follows can end at, changed together.
struct Surface {
    skyline: Skyline,
    floor: Floor,
}

impl Surface {
    /// Sets `[a, split)` of the lowest run `(a, b, h)` to `top`, of which
    /// `waste` just above `h` holds no buffer; the rest of the run stays.
    /// False once the floor passes `limit`: every placement that follows
    /// would end above it.
    fn cover(
        &mut self,
        run: (u32, u32, i64),
        split: u32,
        top: i64,
        waste: i64,
        limit: i64,
    ) -> bool {
        let (a, b, h) = run;
        if waste > 0 && self.floor.add(a as usize, split as usize, waste) > limit {
            return false;
        }
        self.skyline.set(a, split, top);
        if split < b {
            self.skyline.set(split, b, h);
        }
        true
    }
}

/// Per slot, the skyline plus the load still to be placed there (buffers
/// alive together stack above the skyline, so the final height is at
/// least its most). It only grows, by additions over ranges: they are
/// kept as differences and summed over every slot once as many have come
/// as a sixteenth of the slots, so that an addition costs two writes and
/// the stop it serves comes at most that many additions late.
struct Floor {
    level: Vec<i64>,
    pending: Vec<i64>,
    waiting: usize,
    peak: i64,
}

impl Floor {
    fn new(load: &[i64]) -> Floor {
        Floor {
            level: load.to_vec(),
            pending: alloc::vec![0; load.len() + 1],
            waiting: 0,
            peak: load.iter().copied().max().unwrap_or(0),
        }
    }

    /// Adds `v` over `[from, to)`; the highest slot as last summed.
    fn add(&mut self, from: usize, to: usize, v: i64) -> i64 {
        self.pending[from] += v;
        self.pending[to] -= v;
        self.waiting += 1;
        if self.waiting >= self.level.len() / 16 {
            self.waiting = 0;
            let mut running = 0;
            self.peak = i64::MIN;
            for (level, pending) in self.level.iter_mut().zip(&mut self.pending) {
                running += core::mem::take(pending);
                *level = level.saturating_add(running);
                self.peak = self.peak.max(*level);
            }
            self.pending[self.level.len()] = 0;
        }
        self.peak
    }
}

/// Per start slot, the buffers still to place that start there, as
/// `(end, rank, buffer)` sorted, in one array: slot `t`'s `(first, len)`
/// in `slots` says where they are in `entries`.
struct Starting {
    entries: Vec<(u32, u32, u32)>,
    slots: Vec<(u32, u32)>,
}

impl Starting {
    fn new(layout: &Layout, order: &[u32], rank: &[u32]) -> Starting {
        let mut slots = alloc::vec![(0u32, 0u32); layout.times + 1];
        for &b in order {
            slots[layout.extent[b as usize].first as usize].1 += 1;
        }
        let mut total = 0u32;
        for slot in &mut slots {
            slot.0 = total;
            total += slot.1;
        }
        let mut entries = alloc::vec![(0, 0, 0); order.len()];
        let mut filled = alloc::vec![0u32; slots.len()];
        for &b in order {
            let e = layout.extent[b as usize];
            let t = e.first as usize;
            entries[(slots[t].0 + filled[t]) as usize] = (e.end, rank[b as usize], b);
            filled[t] += 1;
        }
        let mut starting = Starting { entries, slots };
        for t in 0..starting.slots.len() {
            let range = starting.range(t);
            starting.entries[range].sort_unstable();
        }
        starting
    }

    fn range(&self, t: usize) -> core::ops::Range<usize> {
        let (first, len) = self.slots[t];
        first as usize..(first + len) as usize
    }

    fn at(&self, t: usize) -> &[(u32, u32, u32)] {
        &self.entries[self.range(t)]
    }

    fn earliest_end(&self, t: usize) -> u32 {
        self.at(t).first().map_or(u32::MAX, |f| f.0)
    }

    /// Takes slot `t`'s entry `i` out, keeping the rest in order.
    fn remove(&mut self, t: usize, i: usize) -> (u32, u32, u32) {
        let range = self.range(t);
        let taken = self.entries[range.start + i];
        self.entries
            .copy_within(range.start + i + 1..range.end, range.start + i);
        self.slots[t].1 -= 1;
        taken
    }
}

/// The skyline as runs of equal height, equal neighbours merged, kept
/// in slot arrays so that a run and its neighbours are found in constant
/// time: a run `[a, b)` of height `h` has `end[a] = b`, `height[a] = h`
/// and `start_of[b - 1] = a`; `end` is `NOT_START` at every other slot.
/// Runs are taken by (height, start) from a heap, stale entries skipped;
/// the least entry pushed since the last take waits beside the heap
/// (usually the rest of the run just filled, which comes next), so that
/// most runs never enter it.
struct Skyline {
    end: Vec<u32>,
    height: Vec<i64>,
    start_of: Vec<u32>,
    heap: BinaryHeap<Reverse<(i64, u32)>>,
    front: Option<(i64, u32)>,
}

const NOT_START: u32 = u32::MAX;

impl Skyline {
    fn new(times: u32) -> Skyline {
        let slots = times as usize + 1;
        let mut sky = Skyline {
            end: alloc::vec![NOT_START; slots],
            height: alloc::vec![0; slots],
            start_of: alloc::vec![0; slots],
            heap: BinaryHeap::new(),
            front: None,
        };
        if times > 0 {
            sky.end[0] = times;
            sky.start_of[times as usize - 1] = 0;
            sky.push((0, 0));
        }
        sky
    }

    /// The lowest live run, the leftmost of equals: `(start, end, height)`.
    fn lowest(&mut self) -> Option<(u32, u32, i64)> {
        while let Some((h, a)) = self.take() {
            let end = self.end[a as usize];
            if end != NOT_START && self.height[a as usize] == h && h != DEAD {
                return Some((a, end, h));
            }
        }
        None
    }

    fn push(&mut self, key: (i64, u32)) {
        match self.front {
            Some(front) if front <= key => self.heap.push(Reverse(key)),
            Some(front) => {
                self.heap.push(Reverse(front));
                self.front = Some(key);
            }
            None => self.front = Some(key),
        }
    }

    /// The least entry, out of the heap or the one beside it.
    fn take(&mut self) -> Option<(i64, u32)> {
        match (self.front, self.heap.peek()) {
            (Some(front), Some(&Reverse(top))) if top < front => {
                self.heap.pop();
                Some(top)
            }
            (Some(front), _) => {
                self.front = None;
                Some(front)
            }
            (None, _) => self.heap.pop().map(|Reverse(key)| key),
        }
    }

    fn left_of(&self, a: u32) -> Option<i64> {
        let a = a.checked_sub(1)?;
        Some(self.height[self.start_of[a as usize] as usize])
    }

    fn right_of(&self, b: u32) -> Option<i64> {
        (self.end[b as usize] != NOT_START).then(|| self.height[b as usize])
    }

    /// Sets `[a, b)`, which starts a run and lies inside it, to `h`.
    fn set(&mut self, mut a: u32, mut b: u32, h: i64) {
        self.end[a as usize] = NOT_START;
        if let Some(last) = a.checked_sub(1) {
            let left = self.start_of[last as usize];
            if self.height[left as usize] == h {
                a = left;
            }
        }
        if self.end[b as usize] != NOT_START && self.height[b as usize] == h {
            let right = self.end[b as usize];
            self.end[b as usize] = NOT_START;
            b = right;
        }
        self.end[a as usize] = b;
        self.height[a as usize] = h;
        self.start_of[b as usize - 1] = a;
        self.push((h, a));
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

    /// The skyline's slot arrays and the entry kept beside its heap give
    /// what a plain height per slot gives: the lowest run (the leftmost
    /// of equals, a dead one never) and each run's neighbours, under the
    /// changes gap filling makes (part of the lowest run set higher or
    /// dead, the rest left at its height).
    #[test]
    fn skyline_matches_a_height_per_slot() {
        use super::{Skyline, DEAD};
        let mut rng = Rng::new(5);
        for case in 0..400 {
            let times = rng.below(1, 40) as u32;
            let mut sky = Skyline::new(times);
            let mut plain = alloc::vec![0i64; times as usize];
            loop {
                // The lowest run of the plain heights.
                let low = plain.iter().copied().filter(|&h| h != DEAD).min();
                let want = low.map(|h| {
                    let a = plain.iter().position(|&x| x == h).unwrap();
                    let b = (a..plain.len())
                        .find(|&t| plain[t] != h)
                        .unwrap_or(plain.len());
                    (a as u32, b as u32, h)
                });
                let got = sky.lowest();
                assert_eq!(got, want, "case {case}");
                let Some((a, b, h)) = got else { break };
                let run_of = |t: usize| (t < plain.len()).then(|| plain[t]);
                assert_eq!(sky.left_of(a), a.checked_sub(1).map(|l| plain[l as usize]));
                assert_eq!(sky.right_of(b), run_of(b as usize), "case {case}");
                let split = rng.below(i64::from(a) + 1, i64::from(b) + 1) as u32;
                let top = match rng.below(0, 6) {
                    0 => DEAD,
                    // Up to a neighbour's height, so that runs merge.
                    1 => sky
                        .left_of(a)
                        .or(sky.right_of(b))
                        .unwrap_or(h + 1)
                        .min(DEAD - 1),
                    _ => h + rng.below(1, 4),
                };
                sky.set(a, split, top);
                if split < b {
                    sky.set(split, b, h);
                }
                plain[a as usize..split as usize].fill(top);
            }
        }
    }

    /// The floor's batched sums are never above the true most (a stop
    /// they serve is never early) and catch up with it at every batch:
    /// against a plain array, over more slots than a batch.
    #[test]
    fn floor_is_late_never_early() {
        use super::Floor;
        let mut rng = Rng::new(9);
        for case in 0..200 {
            let slots = rng.below(1, 200) as usize;
            let load: Vec<i64> = (0..slots).map(|_| rng.below(0, 1000)).collect();
            let mut floor = Floor::new(&load);
            let mut plain = load.clone();
            let batch = (slots / 16).max(1);
            for add in 1..=300 {
                let from = rng.below(0, slots as i64) as usize;
                let to = rng.below(from as i64 + 1, slots as i64 + 1) as usize;
                let v = rng.below(1, 500);
                plain[from..to].iter_mut().for_each(|x| *x += v);
                let most = *plain.iter().max().unwrap();
                let peak = floor.add(from, to, v);
                assert!(peak <= most, "case {case}: {peak} above {most}");
                if add % batch == 0 {
                    assert_eq!(peak, most, "case {case}, addition {add}");
                }
            }
        }
    }
}
