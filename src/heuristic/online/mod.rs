//! The online strategy: buffers in order of their start time, each into
//! the smallest hole left among the buffers alive at that moment, as a
//! run-time best-fit allocator would place them (knowing every size, but
//! nothing of the future).
//!
//! In start order the buffers placed before one that overlap it in time
//! are exactly those still alive when it starts, so the memory in use is
//! one set of intervals that grows and shrinks with time, and its holes
//! are indexed by size: O(log n) per buffer however many are alive. This
//! makes it the strategy for the largest inputs, and the stack discipline
//! of training graphs (activations saved in the forward pass, freed in
//! reverse in the backward pass) packs with almost no waste.
//!
//! A buffer holds its whole lifetime here, gaps included (it would take a
//! look into the future to lend a gap to a buffer that outlives it), and
//! fixed buffers, which may start later than the buffers placed around
//! them, are checked in an [`Occupancy`] of their own.

use alloc::collections::{BTreeMap, BTreeSet, BinaryHeap};
use alloc::vec::Vec;
use core::cmp::Reverse;

use super::layout::{Extent, Layout, LocalTime};
use super::occupancy::Occupancy;
use crate::base::math::align_up;
use crate::deadline::{Poll, Stop};

/// No interval: the floor below the lowest, or nothing above the highest.
const NONE: u32 = u32::MAX;

/// Memory in use now: the live intervals as a list in offset order, and
/// the holes between neighbours (below the highest) by size. A hole knows
/// the interval under it, so placing into it and freeing next to it need
/// no search by offset: the only ordered structure is the set of holes,
/// which stays small when memory is used like a stack.
struct Live {
    /// Per interval (a buffer's index): its memory and its neighbours.
    bottom: Vec<i64>,
    top: Vec<i64>,
    below: Vec<u32>,
    above: Vec<u32>,
    lowest: u32,
    highest: u32,
    /// `(size, bottom, interval under it or NONE)`.
    holes: BTreeSet<(i64, i64, u32)>,
    /// Intervals by bottom, kept only when intervals may be added at an
    /// offset chosen elsewhere (a layer placed beforehand).
    by_bottom: Option<BTreeMap<i64, u32>>,
}

/// A hole of [`Live`]: its size, its bottom, and the interval under it.
type Hole = (i64, i64, u32);

impl Live {
    fn new(n: usize) -> Live {
        Live {
            bottom: alloc::vec![0; n],
            top: alloc::vec![0; n],
            below: alloc::vec![NONE; n],
            above: alloc::vec![NONE; n],
            lowest: NONE,
            highest: NONE,
            holes: BTreeSet::new(),
            by_bottom: None,
        }
    }

    /// The hole that `[at, at + size)`, free now, lies in (`None`: above
    /// the highest interval). Needs `by_bottom`.
    fn hole_at(&self, at: i64) -> Option<Hole> {
        let by_bottom = self.by_bottom.as_ref()?;
        let under = by_bottom.range(..at).next_back().map_or(NONE, |(_, &x)| x);
        let over = if under == NONE {
            self.lowest
        } else {
            self.above[under as usize]
        };
        if over == NONE {
            return None;
        }
        let from = self.top_of(under);
        Some((self.bottom[over as usize] - from, from, under))
    }

    fn top_of(&self, x: u32) -> i64 {
        if x == NONE {
            0
        } else {
            self.top[x as usize]
        }
    }

    /// Records the gap over interval `under` (or the floor), if any.
    fn gap(&mut self, under: u32, over: u32, insert: bool) {
        if over == NONE {
            return;
        }
        let from = self.top_of(under);
        let size = self.bottom[over as usize] - from;
        if size > 0 {
            if insert {
                self.holes.insert((size, from, under));
            } else {
                self.holes.remove(&(size, from, under));
            }
        }
    }

    /// Puts interval `x` at `[at, at + size)`: in `hole`, or above the
    /// highest interval.
    fn add(&mut self, x: u32, at: i64, size: i64, hole: Option<Hole>) {
        let under = match hole {
            Some((_, _, under)) => under,
            None => self.highest,
        };
        let over = if under == NONE {
            self.lowest
        } else {
            self.above[under as usize]
        };
        self.gap(under, over, false);
        let i = x as usize;
        self.bottom[i] = at;
        self.top[i] = at + size;
        self.below[i] = under;
        self.above[i] = over;
        if under == NONE {
            self.lowest = x;
        } else {
            self.above[under as usize] = x;
        }
        if over == NONE {
            self.highest = x;
        } else {
            self.below[over as usize] = x;
        }
        self.gap(under, x, true);
        self.gap(x, over, true);
        if let Some(m) = self.by_bottom.as_mut() {
            m.insert(at, x);
        }
    }

    /// Frees interval `x`.
    fn remove(&mut self, x: u32) {
        let i = x as usize;
        let (under, over) = (self.below[i], self.above[i]);
        self.gap(under, x, false);
        self.gap(x, over, false);
        if under == NONE {
            self.lowest = over;
        } else {
            self.above[under as usize] = over;
        }
        if over == NONE {
            self.highest = under;
        } else {
            self.below[over as usize] = under;
        }
        self.gap(under, over, true);
        if let Some(m) = self.by_bottom.as_mut() {
            m.remove(&self.bottom[i]);
        }
    }

    /// The top of the highest interval (0 if none).
    fn top(&self) -> i64 {
        self.top_of(self.highest)
    }
}

impl Layout {
    /// Places the free buffers of `order` (sorted by start) online; with
    /// `depth`, the long-lived ones among them (see
    /// [`super::Variant::depth`]) first, first-fit in start order, as a
    /// layer the others then see as fixed.
    pub(crate) fn online(
        &self,
        order: &[u32],
        depth: u8,
        offsets: &mut [i64],
        poll: &mut Poll<'_>,
    ) -> Result<(), Stop> {
        let long = self.layer_length(depth);
        let in_layer = |b: u32| {
            let e = self.extent[b as usize];
            let pieces = self.pieces_of(b as usize);
            // A buffer with gaps would enter the live set whole while it
            // is in use only in pieces: it stays out of the layer.
            e.end - e.first >= long && pieces.len() == 1 && pieces[0].lower == 0
        };
        let layer: Vec<u32> = order.iter().copied().filter(|&b| in_layer(b)).collect();
        let fixed: Vec<u32> = (0..self.len() as u32)
            .filter(|&b| self.fixed[b as usize].is_some())
            .collect();
        // What the live set does not show: fixed buffers, which may start
        // after the buffers placed around them, over their whole pieces;
        // and the layer's buffers, which enter the live set when they
        // start, only at their start slot, since a buffer placed before
        // one starts and still alive then must not be in its way. Kept in
        // a structure over their own time (empty if there are none).
        let mut times = Vec::with_capacity(2 * (fixed.len() + layer.len()));
        for &b in &fixed {
            for p in self.pieces_of(b as usize) {
                times.extend([p.first, p.end]);
            }
        }
        for &b in &layer {
            let first = self.extent[b as usize].first;
            times.extend([first, first + 1]);
        }
        poll.tick(times.len() as u64)?;
        let time = LocalTime::from_times(times);
        poll.tick(16 * time.slots() as u64)?;
        let mut held = Occupancy::new(if fixed.is_empty() && layer.is_empty() {
            1
        } else {
            time.slots()
        });
        for &b in &fixed {
            let f = self.fixed[b as usize].unwrap_or(0);
            self.occupy(&mut held, Some(&time), b as usize, f);
            offsets[b as usize] = f;
        }
        let any_held = !fixed.is_empty();
        // The layer first, online among itself, then the rest online
        // around it; the layer enters the live set at its offsets.
        self.online_pass(&layer, &[], &mut held, &time, any_held, offsets, poll)?;
        for &b in &layer {
            let first = self.extent[b as usize].first;
            let (f, t) = LocalTime::map(Some(&time), first, first + 1);
            let at = offsets[b as usize];
            held.insert(f, t, at, at + self.size[b as usize]);
            poll.tick(16)?;
        }
        let rest: Vec<u32> = if layer.is_empty() {
            order.to_vec()
        } else {
            order.iter().copied().filter(|&b| !in_layer(b)).collect()
        };
        let any_held = any_held || !layer.is_empty();
        self.online_pass(&rest, &layer, &mut held, &time, any_held, offsets, poll)
    }

    /// Places `rest` (in start order) online, each into the smallest hole
    /// among the buffers alive at its start and clear of `held` (in its
    /// local `time`); the buffers of `layer` (placed already, in start
    /// order) enter the live set when they start.
    ///
    /// Long on purpose: the one loop of the online strategy over a million
    /// buffers, its live set and holes updated in place as time advances.
    #[allow(clippy::too_many_arguments)]
    fn online_pass(
        &self,
        rest: &[u32],
        layer: &[u32],
        held: &mut Occupancy,
        time: &LocalTime,
        any_held: bool,
        offsets: &mut [i64],
        poll: &mut Poll<'_>,
    ) -> Result<(), Stop> {
        let mut sets = Vec::new();
        // Intervals are numbered by their place in `order`, not by buffer:
        // the order visits buffers in no order in memory, and gathering
        // what it needs first (independent loads, which overlap) then
        // working on consecutive numbers costs far fewer cache misses.
        // The layer's intervals come after, numbered from `items.len()`.
        let items: Vec<Extent> = rest.iter().map(|&b| self.extent[b as usize]).collect();
        let mut placed: Vec<i64> = alloc::vec![0; items.len()];
        let mut live = Live::new(items.len() + layer.len());
        if !layer.is_empty() {
            live.by_bottom = Some(BTreeMap::new());
        }
        let mut next_layer = 0;
        // Live buffers by end slot.
        let mut ending: BinaryHeap<Reverse<(u32, u32)>> = BinaryHeap::new();
        let mut last_start = 0;
        for (k, item) in items.iter().enumerate() {
            let Extent {
                first: start,
                end,
                size,
                align,
            } = *item;
            debug_assert!(start >= last_start, "buffers come in start order");
            last_start = start;
            // Up to this start, in time order: ends (first on ties), and
            // the layer's buffers entering at their offsets.
            loop {
                let ends = ending.peek().map(|r| r.0 .0).filter(|&t| t <= start);
                let enters = layer
                    .get(next_layer)
                    .map(|&b| self.extent[b as usize].first)
                    .filter(|&t| t <= start);
                match (ends, enters) {
                    (Some(t), Some(u)) if t <= u => {}
                    (Some(_), None) => {}
                    (_, Some(_)) => {
                        let b = layer[next_layer] as usize;
                        let x = (items.len() + next_layer) as u32;
                        let hole = live.hole_at(offsets[b]);
                        live.add(x, offsets[b], self.size[b], hole);
                        ending.push(Reverse((self.extent[b].end, x)));
                        next_layer += 1;
                        continue;
                    }
                    (None, None) => break,
                }
                if let Some(Reverse((_, done))) = ending.pop() {
                    live.remove(done);
                }
            }
            if any_held {
                sets.clear();
                let (f, t) = LocalTime::map(Some(time), start, end);
                held.sets(f, t, &mut sets);
            }
            let clear = |at: i64| -> Option<i64> {
                sets.iter()
                    .find_map(|&s| held.set(s).conflict(at, at + size))
            };
            // The smallest hole that holds it, aligned and clear of fixed
            // buffers; else above everything alive.
            let mut chosen = None;
            for &(hole, bottom, under) in live.holes.range((size, i64::MIN, 0)..) {
                let mut at = align_up(bottom, align);
                while at + size <= bottom + hole {
                    match clear(at) {
                        None => break,
                        Some(top) => at = align_up(top, align),
                    }
                }
                if at + size <= bottom + hole {
                    chosen = Some((at, (hole, bottom, under)));
                    break;
                }
            }
            let (at, hole) = match chosen {
                Some((at, hole)) => (at, Some(hole)),
                None => {
                    let mut at = align_up(live.top(), align);
                    while let Some(top) = clear(at) {
                        at = align_up(top, align);
                    }
                    (at, None)
                }
            };
            live.add(k as u32, at, size, hole);
            placed[k] = at;
            ending.push(Reverse((end, k as u32)));
            poll.tick(4)?;
        }
        for (&b, &at) in rest.iter().zip(&placed) {
            offsets[b as usize] = at;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Holes are exactly the gaps between neighbouring live intervals
    /// below the highest, and the list is in offset order.
    fn check(live: &Live, placed: &[(u32, i64, i64)]) {
        let mut sorted: Vec<(i64, i64, u32)> = placed.iter().map(|&(x, b, t)| (b, t, x)).collect();
        sorted.sort();
        let mut want = BTreeSet::new();
        let (mut below, mut under) = (0, NONE);
        for &(b, t, x) in &sorted {
            if b > below {
                want.insert((b - below, below, under));
            }
            below = t;
            under = x;
        }
        assert_eq!(live.holes, want);
        let mut walk = Vec::new();
        let mut x = live.lowest;
        while x != NONE {
            walk.push(x);
            x = live.above[x as usize];
        }
        assert_eq!(walk, sorted.iter().map(|s| s.2).collect::<Vec<_>>());
        assert_eq!(live.top(), sorted.last().map_or(0, |s| s.1));
    }

    #[test]
    fn holes_follow_adds_and_removes() {
        let mut live = Live::new(4000);
        let mut seed = 5u64;
        let mut placed: Vec<(u32, i64, i64)> = Vec::new();
        for step in 0..4000u32 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            if placed.is_empty() || seed % 3 != 0 {
                // Into a random hole that holds it, or on top.
                let size = (seed % 8 + 1) as i64;
                let fits: Vec<Hole> = live.holes.range((size, i64::MIN, 0)..).copied().collect();
                let hole = if fits.is_empty() || (seed >> 8) % 4 == 0 {
                    None
                } else {
                    Some(fits[(seed >> 12) as usize % fits.len()])
                };
                let at = match hole {
                    Some((h, b, _)) => b + (seed >> 20) as i64 % (h - size + 1),
                    None => live.top() + (seed >> 20) as i64 % 3,
                };
                live.add(step, at, size, hole);
                placed.push((step, at, at + size));
            } else {
                let (x, _, _) = placed.swap_remove((seed >> 16) as usize % placed.len());
                live.remove(x);
            }
            check(&live, &placed);
        }
    }
}
