//! Placing buffers in a given order: on the skyline, or into the holes
//! left below (first-fit, best-fit), over the occupancy tree.

use alloc::vec;
use alloc::vec::Vec;

use super::layout::{Layout, LocalTime, Scratch};
use super::occupancy::Occupancy;
use super::strategy::{Strategy, Variant};
use crate::base::math::align_up;
use crate::base::trees::ChmaxTree;
use crate::deadline::{Poll, Stop};

impl Layout {
    /// Places every buffer with `variant`, the free ones in `order`.
    /// Returns the offsets and the height; `None` once a buffer's top is
    /// above `limit` (the height could only be higher: a caller that has
    /// a placement of that height or lower need not wait for the rest).
    pub(crate) fn place(
        &self,
        variant: Variant,
        order: &[u32],
        limit: i64,
        poll: &mut Poll<'_>,
    ) -> Result<Option<(Vec<i64>, i64)>, Stop> {
        self.place_around(variant, order, &[], limit, poll)
    }

    /// [`Layout::place`] around buffers `placed` already (one piece each,
    /// free, at the offsets given, none of them in `order`): they go in
    /// as fixed buffers do, the rest around them. Only the online and the
    /// hole-filling strategies take such buffers (`placed` empty for the
    /// others).
    pub(crate) fn place_around(
        &self,
        variant: Variant,
        order: &[u32],
        placed: &[(u32, i64)],
        limit: i64,
        poll: &mut Poll<'_>,
    ) -> Result<Option<(Vec<i64>, i64)>, Stop> {
        let mut offsets = vec![0i64; self.len()];
        let around = !placed.is_empty();
        let whole = match variant.strategy {
            Strategy::Skyline if !around => self.skyline(order, limit, &mut offsets, poll)?,
            Strategy::GapFill if !around => self.gap_fill(order, limit, &mut offsets, poll)?,
            Strategy::Skyline | Strategy::GapFill => {
                debug_assert!(false, "{variant:?} places nothing around buffers placed");
                false
            }
            Strategy::Online | Strategy::Coalescing => {
                // Cheap enough to finish: its height is checked at the end.
                let coalescing = variant.strategy == Strategy::Coalescing;
                let how = (variant.depth, placed, coalescing);
                self.online(order, how, &mut offsets, poll)?;
                true
            }
            s => {
                let best = s == Strategy::BestFit;
                self.fill_holes(best, (order, placed), limit, &mut offsets, poll)?
            }
        };
        let height = (0..self.len())
            .map(|b| offsets[b].saturating_add(self.size[b]))
            .max()
            .unwrap_or(0);
        Ok((whole && height <= limit).then_some((offsets, height)))
    }

    /// Whether it placed every buffer (else one's top went above `limit`).
    pub(super) fn skyline(
        &self,
        order: &[u32],
        limit: i64,
        offsets: &mut [i64],
        poll: &mut Poll<'_>,
    ) -> Result<bool, Stop> {
        let mut sky = ChmaxTree::new(self.times);
        let fixed = (0..self.len() as u32).filter(|&b| self.fixed[b as usize].is_some());
        for b in fixed.chain(order.iter().copied()) {
            let b = b as usize;
            let pieces = self.pieces_of(b);
            let offset = match self.fixed[b] {
                Some(f) => f,
                None => {
                    let lowest = pieces
                        .iter()
                        .map(|p| sky.max(p.first as usize, p.end as usize) - p.lower)
                        .max()
                        .unwrap_or(0)
                        .max(0);
                    align_up(lowest, self.align[b])
                }
            };
            for p in pieces {
                sky.raise(p.first as usize, p.end as usize, offset + p.upper);
            }
            offsets[b] = offset;
            poll.tick(1 + 2 * pieces.len() as u64)?;
            if offset.saturating_add(self.size[b]) > limit {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Whether it placed every buffer (else one's top went above `limit`).
    /// The fixed buffers first, then those `placed` already, each where
    /// it is; then `order`'s.
    fn fill_holes(
        &self,
        best: bool,
        (order, placed): (&[u32], &[(u32, i64)]),
        limit: i64,
        offsets: &mut [i64],
        poll: &mut Poll<'_>,
    ) -> Result<bool, Stop> {
        let mut occ = Occupancy::new(self.times);
        let mut scratch = Scratch::default();
        let fixed = (0..self.len() as u32).filter_map(|b| Some((b, self.fixed[b as usize]?)));
        let given = fixed
            .chain(placed.iter().copied())
            .map(|(b, at)| (b, Some(at)));
        for (b, at) in given.chain(order.iter().map(|&b| (b, None))) {
            let b = b as usize;
            let offset = match at {
                Some(f) => Ok(f),
                None => self.lowest_free(&mut occ, None, b, best, &mut scratch, poll),
            };
            let stopped = match offset {
                Ok(offset) if offset.saturating_add(self.size[b]) > limit => Some(Ok(false)),
                Ok(offset) => {
                    self.occupy(&mut occ, None, b, offset);
                    offsets[b] = offset;
                    poll.tick(1).err().map(Err)
                }
                Err(stop) => Some(Err(stop)),
            };
            if let Some(end) = stopped {
                // Its millions of tree nodes are freed elsewhere, not on
                // the way back to the caller.
                let bytes = occ.heap_bytes();
                crate::deadline::discard(occ, bytes);
                return end;
            }
        }
        Ok(true)
    }

    /// Where buffer `b` goes in `occ` (whose slots are `time`'s, or the
    /// layout's own): the lowest free aligned offset, or with `best` the
    /// bottom of the smallest hole that holds it (one-piece buffers only).
    /// Ticks the steps it takes on `poll`.
    pub(crate) fn lowest_free(
        &self,
        occ: &mut Occupancy,
        time: Option<&LocalTime>,
        b: usize,
        best: bool,
        scratch: &mut Scratch,
        poll: &mut Poll<'_>,
    ) -> Result<i64, Stop> {
        let pieces = self.pieces_of(b);
        scratch.sets.clear();
        scratch.ranges.clear();
        for p in pieces {
            let from = scratch.sets.len();
            let (f, t) = LocalTime::map(time, p.first, p.end);
            occ.sets(f, t, &mut scratch.sets);
            scratch.ranges.push((from, scratch.sets.len()));
        }
        poll.tick(8 * scratch.sets.len() as u64)?;
        if pieces.len() == 1 && pieces[0].lower == 0 {
            let size_align = (pieces[0].upper, self.align[b], best);
            occ.find(&scratch.sets, size_align, &mut scratch.find, poll)
        } else {
            self.lowest_hole(occ, &scratch.sets, &scratch.ranges, b, poll)
        }
    }

    /// Marks buffer `b`'s memory at offset `at` in use in `occ`.
    pub(crate) fn occupy(&self, occ: &mut Occupancy, time: Option<&LocalTime>, b: usize, at: i64) {
        for p in self.pieces_of(b) {
            let (f, t) = LocalTime::map(time, p.first, p.end);
            if f < t {
                occ.insert(f, t, at + p.lower, at + p.upper);
            }
        }
    }

    /// The lowest aligned offset at which no piece of `b` (several pieces,
    /// or a window) meets memory in use: start at 0 and jump past every
    /// interval a piece would meet. (Best fit places such buffers so too.)
    /// Ticks the steps it takes on `poll`.
    pub(crate) fn lowest_hole(
        &self,
        occ: &Occupancy,
        sets: &[(u32, bool)],
        ranges: &[(usize, usize)],
        b: usize,
        poll: &mut Poll<'_>,
    ) -> Result<i64, Stop> {
        let a = self.align[b];
        let mut offset = 0i64;
        loop {
            let mut moved = false;
            poll.tick(sets.len() as u64)?;
            for (p, &(from, to)) in self.pieces_of(b).iter().zip(ranges) {
                for &s in &sets[from..to] {
                    let (lo, hi) = (offset + p.lower, offset + p.upper);
                    if let Some(top) = occ.set(s).conflict(lo, hi) {
                        offset = align_up(top - p.lower, a);
                        moved = true;
                    }
                }
            }
            if !moved {
                return Ok(offset);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::rng::Rng;
    use crate::deadline::Deadline;
    use crate::model::buffer::{Buffer, Gap};
    use crate::model::problem::Problem;

    /// A placement stopped at a limit is one whose height would have been
    /// above it: with the limit at the height or above, the same
    /// placement; below it, none. (A portfolio that drops the rest of a
    /// stopped order must lose nothing it would have kept.)
    #[test]
    fn a_limit_stops_only_placements_that_would_end_above_it() {
        let d = Deadline::none();
        let mut poll = Poll::new(&d, u64::MAX);
        let mut rng = Rng::new(11);
        for case in 0..120 {
            let n = rng.below(1, 60) as usize;
            let buffers: Vec<Buffer> = (0..n)
                .map(|i| {
                    let lower = rng.below(0, 30);
                    let upper = lower + rng.below(1, 12);
                    let b = Buffer::new(alloc::format!("b{i}"), lower, upper, rng.below(1, 50));
                    let b = b.with_alignment([1, 1, 4][rng.below(0, 3) as usize]);
                    match rng.below(0, 10) {
                        // Several pieces: the walk over holes, not the tree's.
                        0 if upper - lower >= 3 => b.with_gap(Gap {
                            lower: lower + 1,
                            upper: lower + 2,
                            window: None,
                        }),
                        1 if case % 2 == 0 => b.with_offset(4 * rng.below(0, 20)),
                        _ => b,
                    }
                })
                .collect();
            let Ok(problem) = Problem::new(i64::MAX, buffers) else {
                continue;
            };
            let layout = Layout::new(&problem, &mut poll).unwrap();
            if layout.fixed_clash {
                continue;
            }
            for strategy in Strategy::ALL {
                for variant in strategy.variants() {
                    let order = layout.order(variant, None, &mut poll).unwrap();
                    let (offsets, height) = layout
                        .place(variant, &order, i64::MAX, &mut poll)
                        .unwrap()
                        .unwrap();
                    for limit in [height, height + 1 + rng.below(0, 9)] {
                        let again = layout.place(variant, &order, limit, &mut poll).unwrap();
                        assert_eq!(again, Some((offsets.clone(), height)), "{variant:?}");
                    }
                    for limit in [height - 1, rng.below(0, height.max(1))] {
                        let cut = layout.place(variant, &order, limit, &mut poll).unwrap();
                        assert_eq!(cut, None, "{variant:?} at {limit} (height {height})");
                    }
                    // Stopped early, not at the end: below every top, after
                    // the first buffer (the online strategy, cheap, only
                    // checks at the end).
                    let free = (0..n).filter(|&b| layout.fixed[b].is_none()).count();
                    if !strategy.is_online() && free >= 2 && layout.fixed_top == 0 {
                        let work = |limit: i64, poll: &mut Poll<'_>| {
                            let from = poll.used();
                            layout.place(variant, &order, limit, poll).unwrap();
                            poll.used() - from
                        };
                        assert!(
                            work(0, &mut poll) < work(i64::MAX, &mut poll),
                            "{variant:?}"
                        );
                    }
                }
            }
        }
    }
}
