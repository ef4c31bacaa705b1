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

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::layout::{Extent, Layout, LocalTime};
use super::occupancy::Occupancy;
use crate::base::math::align_up;
use crate::deadline::{radix_sort_polled, sort_by_lead_polled, Poll, Stop};
use crate::model::buffer::Buffer;
use crate::model::problem::Problem;
use holes::{Hole, Holes, NONE};

mod holes;

/// Memory in use now: the live intervals as a list in offset order, and
/// the holes between neighbours (below the highest) by size. A hole knows
/// the interval under it, so placing into it and freeing next to it need
/// no search by offset: the only ordered structure is the set of holes,
/// which stays small when memory is used like a stack.
///
/// An interval lives in a slot of its own while it is in the set, and a
/// freed slot is taken by the next interval to enter: the records stay as
/// few as the intervals alive at once and hot in cache, where numbered by
/// buffer they were spread over the whole input, and each neighbour of a
/// hole read or relinked was a cache miss.
struct Live {
    /// Per interval (as the caller numbers them), its slot while it is in
    /// the set.
    slot: Vec<u32>,
    /// Per slot: the interval's memory and its neighbours (slots).
    at: Vec<Interval>,
    /// Slots freed, taken again last first (the warmest).
    free: Vec<u32>,
    lowest: u32,
    highest: u32,
    /// The gaps between neighbours, by size; a hole names the slot under
    /// it.
    holes: Holes,
    /// Slots by bottom, kept only when intervals may be added at an offset
    /// chosen elsewhere (a layer placed beforehand).
    by_bottom: Option<BTreeMap<i64, u32>>,
}

/// An interval of the live set: its memory `[bottom, top)` and the slots
/// next below and above it (`NONE`: the floor, or nothing).
#[derive(Clone, Copy)]
struct Interval {
    bottom: i64,
    top: i64,
    below: u32,
    above: u32,
}

impl Live {
    /// A live set for intervals numbered below `n`.
    fn new(n: usize) -> Live {
        Live {
            slot: alloc::vec![NONE; n],
            at: Vec::new(),
            free: Vec::new(),
            lowest: NONE,
            highest: NONE,
            holes: Holes::new(),
            by_bottom: None,
        }
    }

    /// The hole that `[at, at + size)`, free now, lies in (`None`: above
    /// the highest interval). Needs `by_bottom`.
    fn hole_at(&self, at: i64) -> Option<Hole> {
        let by_bottom = self.by_bottom.as_ref()?;
        let under = by_bottom.range(..at).next_back().map_or(NONE, |(_, &s)| s);
        let over = if under == NONE {
            self.lowest
        } else {
            self.at[under as usize].above
        };
        if over == NONE {
            return None;
        }
        let from = self.top_of(under);
        Some((self.at[over as usize].bottom - from, from, under))
    }

    fn top_of(&self, s: u32) -> i64 {
        if s == NONE {
            0
        } else {
            self.at[s as usize].top
        }
    }

    /// Records the gap over slot `under` (or the floor), if any.
    fn gap(&mut self, under: u32, over: u32, insert: bool) {
        if over == NONE {
            return;
        }
        let from = self.top_of(under);
        let size = self.at[over as usize].bottom - from;
        if size > 0 {
            if insert {
                self.holes.insert((size, from, under));
            } else {
                self.holes.remove((size, from, under));
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
            self.at[under as usize].above
        };
        self.gap(under, over, false);
        let record = Interval {
            bottom: at,
            top: at + size,
            below: under,
            above: over,
        };
        let s = match self.free.pop() {
            Some(s) => {
                self.at[s as usize] = record;
                s
            }
            None => {
                self.at.push(record);
                self.holes.grow(self.at.len());
                (self.at.len() - 1) as u32
            }
        };
        self.slot[x as usize] = s;
        if under == NONE {
            self.lowest = s;
        } else {
            self.at[under as usize].above = s;
        }
        if over == NONE {
            self.highest = s;
        } else {
            self.at[over as usize].below = s;
        }
        self.gap(under, s, true);
        self.gap(s, over, true);
        if let Some(m) = self.by_bottom.as_mut() {
            m.insert(at, s);
        }
    }

    /// Frees interval `x`.
    fn remove(&mut self, x: u32) {
        let s = core::mem::replace(&mut self.slot[x as usize], NONE);
        let Interval {
            below: under,
            above: over,
            bottom,
            ..
        } = self.at[s as usize];
        self.gap(under, s, false);
        self.gap(s, over, false);
        if under == NONE {
            self.lowest = over;
        } else {
            self.at[under as usize].above = over;
        }
        if over == NONE {
            self.highest = under;
        } else {
            self.at[over as usize].below = under;
        }
        self.gap(under, over, true);
        if let Some(m) = self.by_bottom.as_mut() {
            m.remove(&bottom);
        }
        self.free.push(s);
    }

    /// The top of the highest interval (0 if none).
    fn top(&self) -> i64 {
        self.top_of(self.highest)
    }

    /// Places interval `x` of `size` in the smallest hole that holds it
    /// aligned and clear of what `clear` knows (`clear(at)`: the top of
    /// what is in the way of `[at, at + size)`, if anything), else above
    /// the highest interval; returns its offset. It enters the live set
    /// only if `enters` (a buffer alive for no slot is placed, not held).
    fn place(
        &mut self,
        x: u32,
        size: i64,
        align: i64,
        clear: impl Fn(i64) -> Option<i64>,
        enters: bool,
    ) -> i64 {
        let fits = |(hole, bottom, _): Hole| -> Option<i64> {
            let mut at = align_up(bottom, align);
            while at + size <= bottom + hole {
                match clear(at) {
                    None => return Some(at),
                    Some(top) => at = align_up(top, align),
                }
            }
            None
        };
        // Almost always the smallest hole takes it; else the next ones.
        let mut chosen = self
            .holes
            .smallest(size)
            .and_then(|h| fits(h).map(|at| (at, h)));
        if chosen.is_none() && self.holes.len > 0 {
            self.holes.sort_from(size);
            chosen = self
                .holes
                .sorted
                .iter()
                .find_map(|&h| fits(h).map(|at| (at, h)));
        }
        let (at, hole) = match chosen {
            Some((at, hole)) => (at, Some(hole)),
            None => {
                let mut at = align_up(self.top(), align);
                while let Some(top) = clear(at) {
                    at = align_up(top, align);
                }
                (at, None)
            }
        };
        if enters {
            self.add(x, at, size, hole);
        }
        at
    }
}

/// The online strategy's plain order placed straight from the problem,
/// before its [`Layout`] exists: the same order (by start; the longest,
/// then the largest, first), the same holes, the same offsets, since a
/// time's rank among the problem's times orders buffers as the time
/// does. The layout's compressed time costs more than this placement on
/// a million buffers, so with a deadline the plan has a good placement
/// this much sooner (see `plan::arena`). `None` where the layout's view
/// differs: a buffer with gaps, with a fixed offset, or alive for no time,
/// or lifetimes cut short by separation moments.
pub(crate) fn online_at_once(
    problem: &Problem,
    poll: &mut Poll<'_>,
) -> Result<Option<(Vec<i64>, i64)>, Stop> {
    let buffers = problem.buffers();
    if problem.moments_from() != i64::MAX {
        return Ok(None);
    }
    let plain = |b: &Buffer| b.gaps.is_empty() && b.offset.is_none() && b.lower < b.upper;
    let key = |t: i64| (t as u64) ^ (1 << 63);
    // (start, latest end first, largest first, buffer), gathered in the
    // one pass over the buffers that also checks them.
    let mut order: Vec<(u64, u64, i64, u32)> = Vec::with_capacity(buffers.len());
    for (b, i) in buffers.iter().zip(0u32..) {
        if !plain(b) {
            return Ok(None);
        }
        order.push((key(b.lower), !key(b.upper), -b.size, i));
    }
    poll.tick(order.len() as u64)?;
    sort_by_lead_polled(&mut order, |o| o.0, poll)?;
    let mut ending: Vec<(u64, u32)> = order.iter().map(|o| !o.1).zip(0u32..).collect();
    radix_sort_polled(&mut ending, |e| e.0, poll)?;
    let mut live = Live::new(order.len());
    let mut offsets = alloc::vec![0i64; order.len()];
    let (mut height, mut next_end) = (0i64, 0);
    for (k, &(start, _, size, b)) in order.iter().enumerate() {
        while let Some(&(_, x)) = ending.get(next_end).filter(|e| e.0 <= start) {
            live.remove(x);
            next_end += 1;
        }
        let size = -size;
        let align = buffers[b as usize].alignment;
        let at = live.place(k as u32, size, align, |_| None, true);
        offsets[b as usize] = at;
        height = height.max(at + size);
        poll.tick(4)?;
    }
    Ok(Some((offsets, height)))
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
        // Every interval by its end slot (ties: by number, as they come):
        // an interval starts before it ends, so it has entered when its end
        // comes, and the next to end is always the next of these. A buffer
        // dead all its lifetime (gaps over all of it) has no slots: it is
        // placed but never enters (it would leave before the next placement).
        let mut ending: Vec<(u32, u32)> = items
            .iter()
            .map(|e| (e.first, e.end))
            .chain(layer.iter().map(|&b| {
                let e = self.extent[b as usize];
                (e.first, e.end)
            }))
            .zip(0u32..)
            .filter(|&((first, end), _)| first < end)
            .map(|((_, end), x)| (end, x))
            .collect();
        radix_sort_polled(&mut ending, |e| u64::from(e.0), poll)?;
        let mut next_end = 0;
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
                let ends = ending.get(next_end).map(|e| e.0).filter(|&t| t <= start);
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
                        next_layer += 1;
                        continue;
                    }
                    (None, None) => break,
                }
                live.remove(ending[next_end].1);
                next_end += 1;
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
            let at = live.place(k as u32, size, align, clear, start < end);
            placed[k] = at;
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
    use super::holes::class_of;
    use super::*;
    use alloc::collections::BTreeSet;

    /// Holes are exactly the gaps between neighbouring live intervals
    /// below the highest, and the list is in offset order.
    fn check(live: &mut Live, placed: &[(u32, i64, i64)]) {
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
        // Holes name slots: every slot holds one placed interval or is
        // free.
        let mut owner = alloc::collections::BTreeMap::new();
        for &(x, _, _) in placed {
            assert!(owner.insert(live.slot[x as usize], x).is_none());
        }
        let mut slots: Vec<u32> = owner.keys().chain(&live.free).copied().collect();
        slots.sort_unstable();
        assert_eq!(slots, (0..live.at.len() as u32).collect::<Vec<_>>());
        let id = |(size, bottom, s): Hole| (size, bottom, if s == NONE { NONE } else { owner[&s] });
        let held: BTreeSet<Hole> = live
            .holes
            .classes
            .iter()
            .flatten()
            .map(|&h| id(h))
            .collect();
        assert_eq!(held, want);
        assert_eq!(live.holes.len, want.len());
        // Each class a heap of its own sizes, each hole where `place` says.
        for (c, heap) in live.holes.classes.iter().enumerate() {
            assert_eq!(
                heap.is_empty(),
                live.holes.held[c / 64] & (1 << (c % 64)) == 0
            );
            for (at, h) in heap.iter().enumerate() {
                assert_eq!(class_of(h.0), c);
                assert!(at == 0 || heap[(at - 1) / 2] <= *h);
                assert_eq!(live.holes.place[live.holes.slot(h.2)] as usize, at);
            }
        }
        // The smallest that holds each size, and all of them in order, as
        // the ordered set gives them.
        let holes = &mut live.holes;
        for size in [
            1, 2, 3, 5, 8, 31, 32, 33, 40, 64, 100, 1000, 1001, 1023, 1024, 2900,
        ] {
            let from: Vec<Hole> = want.range((size, i64::MIN, 0)..).copied().collect();
            assert_eq!(
                holes.smallest(size).map(id),
                from.first().copied(),
                "size {size}"
            );
            holes.sort_from(size);
            let got: Vec<Hole> = holes.sorted.iter().map(|&h| id(h)).collect();
            assert_eq!(got, from, "size {size}");
        }
        let mut walk = Vec::new();
        let mut s = live.lowest;
        while s != NONE {
            walk.push(owner[&s]);
            s = live.at[s as usize].above;
        }
        assert_eq!(walk, sorted.iter().map(|s| s.2).collect::<Vec<_>>());
        assert_eq!(live.top(), sorted.last().map_or(0, |s| s.1));
    }

    /// Placed before the layout, the online strategy's plain order gives
    /// the offsets the layout's gives, on problems with many buffers
    /// starting and ending together (the orders' ties), alignments and
    /// sizes over several classes; and declines what the layout sees
    /// otherwise (gaps, fixed offsets).
    #[test]
    fn placed_at_once_as_the_layout_places() {
        use crate::base::rng::Rng;
        use crate::deadline::Deadline;
        use crate::heuristic::{plain, Strategy, Variant};
        use crate::model::buffer::Gap;

        let d = Deadline::none();
        let mut rng = Rng::new(3);
        for case in 0..300 {
            let n = rng.below(1, 400) as usize;
            let span = rng.below(1, 3 * n as i64 / 2 + 1);
            let buffers: Vec<Buffer> = (0..n)
                .map(|i| {
                    let lower = rng.below(0, span);
                    let upper = lower + rng.below(1, [3, 40][case % 2]);
                    let size = rng.below(1, [8, 5000][(case / 2) % 2]);
                    let b = Buffer::new(alloc::format!("b{i}"), lower, upper, size);
                    b.with_alignment([1, 1, 4, 32][rng.below(0, 4) as usize])
                })
                .collect();
            let problem = Problem::new(i64::MAX, buffers.clone()).unwrap();
            let mut poll = Poll::new(&d, 1 << 16);
            let (offsets, height) = online_at_once(&problem, &mut poll).unwrap().unwrap();
            let layout = Layout::new(&problem, &mut poll).unwrap();
            let want = plain(
                &layout,
                Variant::plain(Strategy::Online),
                i64::MAX,
                &mut poll,
            )
            .unwrap()
            .unwrap();
            assert_eq!(offsets, want.offsets, "case {case}");
            assert_eq!(height, want.height, "case {case}");
            // What it declines.
            let mut gapped = buffers.clone();
            let (lower, upper) = (gapped[0].lower, gapped[0].upper);
            gapped[0].gaps.push(Gap {
                lower,
                upper: lower + 1,
                window: None,
            });
            assert!(upper > lower);
            let mut fixed = buffers;
            fixed[n - 1].offset = Some(0);
            for other in [gapped, fixed] {
                let problem = Problem::new(i64::MAX, other).unwrap();
                assert!(online_at_once(&problem, &mut poll).unwrap().is_none());
            }
        }
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
                // Small sizes, each a class of its own, and larger ones
                // that share classes.
                let size = if (seed >> 30) % 2 == 0 {
                    (seed % 8 + 1) as i64
                } else {
                    ((seed >> 33) % 3000 + 1) as i64
                };
                live.holes.sort_from(size);
                let fits = live.holes.sorted.clone();
                let hole = if fits.is_empty() || (seed >> 8) % 4 == 0 {
                    None
                } else {
                    Some(fits[(seed >> 12) as usize % fits.len()])
                };
                let at = match hole {
                    Some((h, b, _)) => b + (seed >> 20) as i64 % (h - size + 1),
                    None => live.top() + (seed >> 20) as i64 % [3, 300][(seed >> 40) as usize % 2],
                };
                live.add(step, at, size, hole);
                placed.push((step, at, at + size));
            } else {
                let (x, _, _) = placed.swap_remove((seed >> 16) as usize % placed.len());
                live.remove(x);
            }
            check(&mut live, &placed);
        }
    }
}
