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
    /// Returns the offsets and the height.
    pub(crate) fn place(
        &self,
        variant: Variant,
        order: &[u32],
        poll: &mut Poll<'_>,
    ) -> Result<(Vec<i64>, i64), Stop> {
        let mut offsets = vec![0i64; self.len()];
        match variant.strategy {
            Strategy::Skyline => self.skyline(order, &mut offsets, poll)?,
            Strategy::Online => self.online(order, variant.depth, &mut offsets, poll)?,
            s => self.fill_holes(s == Strategy::BestFit, order, &mut offsets, poll)?,
        }
        let height = (0..self.len())
            .map(|b| offsets[b].saturating_add(self.size[b]))
            .max()
            .unwrap_or(0);
        Ok((offsets, height))
    }

    fn skyline(&self, order: &[u32], offsets: &mut [i64], poll: &mut Poll<'_>) -> Result<(), Stop> {
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
        }
        Ok(())
    }

    fn fill_holes(
        &self,
        best: bool,
        order: &[u32],
        offsets: &mut [i64],
        poll: &mut Poll<'_>,
    ) -> Result<(), Stop> {
        let mut occ = Occupancy::new(self.times);
        let mut scratch = Scratch::default();
        let fixed = (0..self.len() as u32).filter(|&b| self.fixed[b as usize].is_some());
        for b in fixed.chain(order.iter().copied()) {
            let b = b as usize;
            let offset = match self.fixed[b] {
                Some(f) => Ok(f),
                None => self.lowest_free(&mut occ, None, b, best, &mut scratch, poll),
            };
            let stopped = match offset {
                Ok(offset) => {
                    self.occupy(&mut occ, None, b, offset);
                    offsets[b] = offset;
                    poll.tick(1).err()
                }
                Err(stop) => Some(stop),
            };
            if let Some(stop) = stopped {
                // Its millions of tree nodes are freed elsewhere, not on
                // the way back to the caller.
                let bytes = occ.heap_bytes();
                crate::deadline::discard(occ, bytes);
                return Err(stop);
            }
        }
        Ok(())
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
            occ.find(&scratch.sets, pieces[0].upper, self.align[b], best, poll)
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
