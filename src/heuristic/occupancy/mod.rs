//! Which memory is in use when: the structure behind first-fit and
//! best-fit, which place a buffer into the lowest (or tightest) hole left
//! by the buffers placed before it.
//!
//! A segment tree over compressed time. Each node keeps two merged sets of
//! memory intervals: `full`, used during the node's whole time range, and
//! `any`, used at some time in it. A placed piece goes into `full` and
//! `any` of the O(log T) nodes that tile its time range and into `any` of
//! their ancestors. The memory used at some time in `[l, r)` is then the
//! union of `any` of the nodes tiling `[l, r)` and `full` of their
//! ancestors: O(log T) sets, each kept merged, so that packed memory stays
//! a few intervals however many buffers fill it.

mod blocks;
mod intervals;

use crate::deadline::{Poll, Stop};
use alloc::vec;
use alloc::vec::Vec;
pub(crate) use blocks::{Blocks, Slot};
pub(crate) use intervals::{Cursor, IntervalSet};

/// The head of a cursor that has passed every interval of its set.
const DONE: (i64, i64) = (i64::MAX, i64::MAX);

/// The cursors of [`Occupancy::find`], kept between calls so that
/// placing a buffer allocates nothing.
#[derive(Default)]
pub(crate) struct FindScratch {
    /// Empty between calls; only its allocation is kept.
    runs: Vec<Cursor<'static>>,
    heads: Vec<(i64, i64)>,
    passed: Vec<i64>,
}

/// An empty vector of cursors in the allocation of `v` (emptied): the
/// cursors of one call borrow that call's tree, so the vector kept
/// between calls holds none. Collecting a vector's own `into_iter`
/// through `map` reuses its allocation when the element types have the
/// same layout, as they do here.
fn recycle<'a, 'b>(mut v: Vec<Cursor<'a>>) -> Vec<Cursor<'b>> {
    v.clear();
    v.into_iter().map(|_| unreachable!()).collect()
}

/// Memory in use over compressed time.
pub(crate) struct Occupancy {
    leaves: usize,
    full: Vec<IntervalSet>,
    any: Vec<IntervalSet>,
    stamp: Vec<u32>,
    epoch: u32,
    /// Intervals added to the sets (merges not subtracted): for
    /// [`Occupancy::heap_bytes`].
    stored: usize,
    /// Scratch: nodes of the current query, `any` sets first.
    tiles: Vec<u32>,
    above: Vec<u32>,
}

impl Occupancy {
    pub(crate) fn new(times: usize) -> Self {
        let leaves = times.max(1).next_power_of_two();
        let mut full = Vec::with_capacity(2 * leaves);
        let mut any = Vec::with_capacity(2 * leaves);
        full.resize_with(2 * leaves, IntervalSet::default);
        any.resize_with(2 * leaves, IntervalSet::default);
        Occupancy {
            leaves,
            full,
            any,
            stamp: vec![0; 2 * leaves],
            epoch: 0,
            stored: 0,
            tiles: Vec::new(),
            above: Vec::new(),
        }
    }

    /// About the heap it takes: its node arrays and the intervals stored.
    pub(crate) fn heap_bytes(&self) -> usize {
        (self.full.len() + self.any.len()) * core::mem::size_of::<IntervalSet>()
            + self.stamp.len() * 4
            + self.stored * 32
    }

    /// Fills `tiles` with the nodes tiling `[l, r)` and `above` with their
    /// strict ancestors.
    fn nodes(&mut self, l: u32, r: u32) {
        self.tiles.clear();
        self.above.clear();
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
        let (mut l, mut r) = (l as usize + self.leaves, r as usize + self.leaves);
        while l < r {
            if l & 1 == 1 {
                self.tiles.push(l as u32);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                self.tiles.push(r as u32);
            }
            l >>= 1;
            r >>= 1;
        }
        for i in 0..self.tiles.len() {
            let mut a = (self.tiles[i] >> 1) as usize;
            while a >= 1 && self.stamp[a] != self.epoch {
                self.stamp[a] = self.epoch;
                self.above.push(a as u32);
                a >>= 1;
            }
        }
    }

    /// Memory `[bottom, top)` in use during time slots `[l, r)`.
    pub(crate) fn insert(&mut self, l: u32, r: u32, bottom: i64, top: i64) {
        let (mut l, mut r) = (l as usize + self.leaves, r as usize + self.leaves);
        // An ancestor's `any` holds its children's: once one already
        // holds the interval, so do all above it.
        let tile = |occ: &mut Occupancy, t: usize| {
            occ.stored += usize::from(occ.full[t].insert(bottom, top));
            let mut a = t;
            while a >= 1 && occ.any[a].insert(bottom, top) {
                occ.stored += 1;
                a >>= 1;
            }
        };
        while l < r {
            if l & 1 == 1 {
                tile(self, l);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                tile(self, r);
            }
            l >>= 1;
            r >>= 1;
        }
    }

    /// The sets to check for time slots `[l, r)`: pushed onto `out` as
    /// (node, is `any`) pairs. Empty sets are left out: on a large tree
    /// most ancestors of a short lifetime hold nothing in full.
    pub(crate) fn sets(&mut self, l: u32, r: u32, out: &mut Vec<(u32, bool)>) {
        self.nodes(l, r);
        let (any, full) = (&self.any, &self.full);
        out.extend(
            self.tiles
                .iter()
                .filter(|&&t| !any[t as usize].is_empty())
                .map(|&t| (t, true)),
        );
        out.extend(
            self.above
                .iter()
                .filter(|&&a| !full[a as usize].is_empty())
                .map(|&a| (a, false)),
        );
    }

    /// Where a one-piece buffer of `size` bytes goes: the lowest aligned
    /// offset free in every set (first fit), or the bottom of the smallest
    /// common hole that holds it, else the space above everything (best
    /// fit).
    ///
    /// Each set has a cursor that only moves up, with the candidate
    /// offset: it skips what ends below the candidate, and the candidate
    /// jumps past whatever it meets. First fit stops at the first offset no
    /// cursor moves; best fit records that hole and goes on above it.
    /// The steps it takes are ticked on `poll` as it goes: one buffer can
    /// take many passes over many sets.
    pub(crate) fn find(
        &self,
        sets: &[(u32, bool)],
        (size, align, best): (i64, i64, bool),
        scratch: &mut FindScratch,
        poll: &mut Poll<'_>,
    ) -> Result<i64, Stop> {
        let mut runs = recycle(core::mem::take(&mut scratch.runs));
        runs.extend(sets.iter().map(|&s| self.set(s).from(i64::MIN)));
        let heads = &mut scratch.heads;
        heads.clear();
        heads.extend(runs.iter_mut().map(|r| r.next().unwrap_or(DONE)));
        // Per set, the top of the last interval its cursor passed.
        let passed = &mut scratch.passed;
        passed.clear();
        passed.resize(sets.len(), 0);
        let found = self.walk(sets, (size, align, best), &mut runs, heads, passed, poll);
        scratch.runs = recycle(runs);
        found
    }

    /// [`Occupancy::find`]'s walk, over cursors set up at the bottom.
    fn walk<'a>(
        &'a self,
        sets: &[(u32, bool)],
        (size, align, best): (i64, i64, bool),
        runs: &mut [Cursor<'a>],
        heads: &mut [(i64, i64)],
        passed: &mut [i64],
        poll: &mut Poll<'_>,
    ) -> Result<i64, Stop> {
        let mut hole: Option<(i64, i64)> = None; // (size, offset)
        let mut at = 0i64;
        poll.tick(sets.len() as u64)?;
        loop {
            let mut moved = false;
            let mut work = heads.len() as u64;
            for k in 0..heads.len() {
                let mut steps = 0;
                while heads[k].1 <= at {
                    work += 1;
                    steps += 1;
                    passed[k] = heads[k].1;
                    if steps == 4 {
                        // Far behind: seek instead of walking.
                        let set = self.set(sets[k]);
                        if let Some((_, t)) = set.last_below(at.saturating_add(1)) {
                            passed[k] = passed[k].max(t.min(at));
                        }
                        runs[k] = set.from(at);
                        heads[k] = match set.last_below(at) {
                            Some((b, t)) if t > at => (b, t),
                            _ => runs[k].next().unwrap_or(DONE),
                        };
                        break;
                    }
                    heads[k] = runs[k].next().unwrap_or(DONE);
                }
                if heads[k].0 < at.saturating_add(size) {
                    at = crate::base::math::align_up(heads[k].1, align);
                    moved = true;
                }
            }
            poll.tick(work)?;
            if moved {
                continue;
            }
            // `at` is free in every set.
            if !best {
                return Ok(at);
            }
            let end = heads.iter().map(|h| h.0).min().unwrap_or(i64::MAX);
            if end == i64::MAX {
                // The open space above everything: only if nothing fits.
                return Ok(hole.map_or(at, |(_, o)| o));
            }
            let start = passed.iter().copied().max().unwrap_or(0).min(at);
            // A hole is never smaller than the buffer: one that fits it
            // exactly is the smallest there is, and the lowest such.
            if end - start == size {
                return Ok(at);
            }
            if hole.is_none_or(|(h, _)| end - start < h) {
                hole = Some((end - start, at));
            }
            at = end;
        }
    }

    /// The set a `sets` entry names.
    #[inline]
    pub(crate) fn set(&self, (node, any): (u32, bool)) -> &IntervalSet {
        if any {
            &self.any[node as usize]
        } else {
            &self.full[node as usize]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A query keeps the cursors' allocation for the next one: placing a
    /// buffer allocates nothing once the scratch has grown.
    #[test]
    fn find_reuses_its_cursors() {
        let deadline = crate::deadline::Deadline::none();
        let mut poll = Poll::new(&deadline, u64::MAX);
        let mut occ = Occupancy::new(16);
        for k in 0..16 {
            occ.insert(k, k + 1, 10 * i64::from(k), 10 * i64::from(k) + 5);
        }
        let (mut sets, mut scratch) = (Vec::new(), FindScratch::default());
        occ.sets(0, 16, &mut sets);
        assert!(!sets.is_empty());
        let query = (6, 1, false);
        let first = occ.find(&sets, query, &mut scratch, &mut poll).unwrap();
        let (at, capacity) = (scratch.runs.as_ptr(), scratch.runs.capacity());
        assert!(scratch.runs.is_empty() && capacity >= sets.len());
        for _ in 0..3 {
            let again = occ.find(&sets, query, &mut scratch, &mut poll).unwrap();
            assert_eq!(again, first);
            assert_eq!(
                (scratch.runs.as_ptr(), scratch.runs.capacity()),
                (at, capacity)
            );
        }
    }

    /// Every query against a scan of what was placed.
    #[test]
    fn occupancy_matches_a_plain_scan() {
        let mut seed = 3u64;
        let mut next = move |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        let times = 37;
        let deadline = crate::deadline::Deadline::none();
        let mut poll = Poll::new(&deadline, u64::MAX);
        let mut occ = Occupancy::new(times);
        let mut placed: Vec<(u32, u32, i64, i64)> = Vec::new();
        let mut sets = Vec::new();
        // One scratch for every query, as a placement keeps it.
        let mut scratch = FindScratch::default();
        for _ in 0..400 {
            let l = next(times as u64) as u32;
            let r = l + 1 + next((times as u32 - l) as u64) as u32;
            let size = 1 + next(20) as i64;
            let align = [1, 1, 2, 8][next(4) as usize];
            let meets = |o: i64| {
                placed
                    .iter()
                    .any(|&(a, b, x, y)| a < r && l < b && x < o + size && o < y)
            };
            sets.clear();
            occ.sets(l, r, &mut sets);
            let lo = next(100) as i64;
            let got = sets
                .iter()
                .any(|&s| occ.set(s).conflict(lo, lo + size).is_some());
            assert_eq!(got, meets(lo));
            // First fit: the lowest aligned free offset.
            let first = occ
                .find(&sets, (size, align, false), &mut scratch, &mut poll)
                .unwrap();
            assert_eq!(
                first,
                (0..).step_by(align as usize).find(|&o| !meets(o)).unwrap()
            );
            // Best fit: the lowest aligned offset of the smallest free run
            // (of the memory free throughout `[l, r)`) that holds the
            // buffer; the open space above everything only if none does.
            let best = occ
                .find(&sets, (size, align, true), &mut scratch, &mut poll)
                .unwrap();
            let mut runs: Vec<(i64, i64)> = Vec::new(); // (length, offset)
            let top = placed.iter().map(|p| p.3).max().unwrap_or(0);
            let used = |x: i64| {
                placed
                    .iter()
                    .any(|&(a, b, y, z)| a < r && l < b && y <= x && x < z)
            };
            let mut x = 0;
            while x < top {
                if used(x) {
                    x += 1;
                    continue;
                }
                let start = x;
                while x < top && !used(x) {
                    x += 1;
                }
                let o = crate::base::math::align_up(start, align);
                if x < top && o + size <= x {
                    runs.push((x - start, o));
                }
            }
            let above = placed
                .iter()
                .filter(|&&(a, b, _, _)| a < r && l < b)
                .map(|p| p.3)
                .max()
                .unwrap_or(0);
            let expected = runs
                .iter()
                .min()
                .map_or(crate::base::math::align_up(above, align), |&(_, o)| o);
            assert_eq!(best, expected, "size {size} align {align} in [{l}, {r})");
            if next(2) == 0 {
                let at = if next(2) == 0 { first } else { best };
                occ.insert(l, r, at, at + size);
                placed.push((l, r, at, at + size));
            }
        }
    }
}
