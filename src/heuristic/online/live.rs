//! The online strategy's memory in use now: the intervals alive, in
//! offset order, with the holes between them by size.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::holes::{Hole, Holes, NONE};
use crate::base::math::align_up;

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
pub(super) struct Live {
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
    pub(super) by_bottom: Option<BTreeMap<i64, u32>>,
}

/// An interval of the live set: its memory `[bottom, top)` and the slots
/// next below and above it (`NONE`: the floor, or nothing).
#[derive(Clone, Copy)]
struct Interval {
    bottom: i64,
    top: i64,
    end: u32,
    below: u32,
    above: u32,
}

impl Live {
    /// A live set for intervals numbered below `n`.
    pub(super) fn new(n: usize) -> Live {
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
    pub(super) fn hole_at(&self, at: i64) -> Option<Hole> {
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

    /// Puts interval `x` at `[at, at + size)`, ending at slot `end`: in
    /// `hole`, or above the highest interval.
    pub(super) fn add(&mut self, x: u32, (at, size, end): (i64, i64, u32), hole: Option<Hole>) {
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
            end,
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
        self.join(under, s);
        self.join(s, over);
        self.gap(under, s, true);
        self.gap(s, over, true);
        if let Some(m) = self.by_bottom.as_mut() {
            m.insert(at, s);
        }
    }

    /// Frees interval `x`.
    pub(super) fn remove(&mut self, x: u32) {
        let s = core::mem::replace(&mut self.slot[x as usize], NONE);
        let Interval {
            below: under,
            above: over,
            bottom,
            ..
        } = self.at[s as usize];
        self.gap(under, s, false);
        self.gap(s, over, false);
        self.join(under, over);
        self.gap(under, over, true);
        if let Some(m) = self.by_bottom.as_mut() {
            m.remove(&bottom);
        }
        self.free.push(s);
    }

    /// Makes slot `upper` the next above slot `lower` (either `NONE`: the
    /// floor, or nothing above).
    fn join(&mut self, lower: u32, upper: u32) {
        match lower {
            NONE => self.lowest = upper,
            l => self.at[l as usize].above = upper,
        }
        match upper {
            NONE => self.highest = lower,
            u => self.at[u as usize].below = lower,
        }
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
    pub(super) fn place(
        &mut self,
        x: u32,
        (size, align, end): (i64, i64, u32),
        clear: impl Fn(i64) -> Option<i64>,
        enters: bool,
    ) -> i64 {
        let (at, hole) = self.choose(size, align, clear);
        if enters {
            self.add(x, (at, size, end), hole);
        }
        at
    }

    /// The offset [`Live::place`] chooses for `size`, and its hole
    /// (`None`: above the highest interval).
    fn choose(
        &mut self,
        size: i64,
        align: i64,
        clear: impl Fn(i64) -> Option<i64>,
    ) -> (i64, Option<Hole>) {
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
        (at, hole)
    }

    /// Places interval `x` of `size`, which ends at slot `end`, as
    /// [`Live::place`] does but choosing among the [`COALESCING_HOLES`]
    /// smallest holes that hold it, and between the bottom and the top of
    /// each: the least `waste + ends.weight * distance`, where `distance`
    /// is how many slots apart its end and that of the neighbour it would
    /// touch are (the floor, and nothing, end at `ends.horizon`). Two
    /// neighbours that end together leave one hole, where a best fit's
    /// leftover and a neighbour ending elsewhere leave splinters. Any
    /// choice is sound: each candidate is free now and clear of `clear`.
    pub(super) fn place_coalescing(
        &mut self,
        x: u32,
        (size, align, end): (i64, i64, u32),
        clear: impl Fn(i64) -> Option<i64>,
        ends: Ends,
        candidates: &mut Vec<Hole>,
    ) -> i64 {
        self.holes.smallest_few(size, COALESCING_HOLES, candidates);
        let distance = |s: u32| -> f64 {
            let other = match s {
                NONE => ends.horizon,
                s => self.at[s as usize].end,
            };
            f64::from(other.abs_diff(end))
        };
        let mut best: Option<(f64, i64, Hole)> = None;
        for &hole in candidates.iter() {
            let (room, bottom, under) = hole;
            let over = match under {
                NONE => self.lowest,
                u => self.at[u as usize].above,
            };
            let waste = (room - size) as f64;
            let low = align_up(bottom, align);
            let high = (bottom + room - size).div_euclid(align) * align;
            for (at, touches) in [(low, under), (high, over)] {
                if at < low || at + size > bottom + room || clear(at).is_some() {
                    continue;
                }
                let score = waste + ends.weight * distance(touches);
                if best.is_none_or(|b| score < b.0) {
                    best = Some((score, at, hole));
                }
            }
        }
        let (at, hole) = match best {
            Some((_, at, hole)) => (at, Some(hole)),
            None => self.choose(size, align, clear),
        };
        self.add(x, (at, size, end), hole);
        at
    }
}

/// The holes [`Live::place_coalescing`] weighs: the smallest few, since
/// a hole much larger than a buffer wastes more than any neighbour's end
/// can win back.
const COALESCING_HOLES: usize = 8;

/// What [`Live::place_coalescing`] weighs a neighbour's end by.
#[derive(Clone, Copy)]
pub(super) struct Ends {
    /// Memory a slot of distance between ends costs, against bytes of
    /// waste.
    pub(super) weight: f64,
    /// Where the floor ends (never, in the problem's time).
    pub(super) horizon: u32,
}

#[cfg(test)]
mod tests {
    use super::super::holes::class_of;
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

    /// Coalescing places only where memory is free, aligned and clear
    /// of what `clear` holds, and the holes stay exactly the gaps.
    #[test]
    fn coalescing_places_in_free_memory_and_keeps_the_holes() {
        let mut live = Live::new(3000);
        let mut seed = 11u64;
        let mut placed: Vec<(u32, i64, i64)> = Vec::new();
        let mut candidates = Vec::new();
        let ends = Ends {
            weight: 0.5,
            horizon: 1000,
        };
        for step in 0..3000u32 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            if placed.is_empty() || seed % 3 != 0 {
                let size = ((seed >> 33) % 300 + 1) as i64;
                let align = [1, 4, 8][(seed >> 20) as usize % 3];
                let end = ((seed >> 24) % 1000) as u32;
                // A band held elsewhere, as fixed buffers are.
                let clear = |at: i64| (at < 900 && at + size > 600).then_some(900);
                let at =
                    live.place_coalescing(step, (size, align, end), clear, ends, &mut candidates);
                assert_eq!(at % align, 0);
                assert!(at + size <= 600 || at >= 900, "{at} in the band held");
                for &(_, b, t) in &placed {
                    assert!(at + size <= b || t <= at, "{at} overlaps [{b}, {t})");
                }
                placed.push((step, at, at + size));
            } else {
                let (x, _, _) = placed.swap_remove((seed >> 16) as usize % placed.len());
                live.remove(x);
            }
            check(&mut live, &placed);
        }
    }

    /// Of a hole's two sides, coalescing takes the one whose neighbour
    /// ends when the buffer does; and a hole a little larger, next to a
    /// neighbour that ends with it, over an exact fit next to one that
    /// ends far away, once ends weigh enough.
    #[test]
    fn coalescing_takes_the_neighbour_that_ends_with_the_buffer() {
        let mut candidates = Vec::new();
        let ends = |weight: f64| Ends {
            weight,
            horizon: 100,
        };
        // [0, 10) ends at 5, [20, 30) at 50: the hole [10, 20).
        for (end, want) in [(5u32, 10i64), (50, 15)] {
            let mut live = Live::new(3);
            live.add(0, (0, 10, 5), None);
            live.add(1, (20, 10, 50), None);
            let at = live.place_coalescing(2, (5, 1, end), |_| None, ends(1.0), &mut candidates);
            assert_eq!(at, want, "ending at {end}");
        }
        // Holes [10, 15) (exact, neighbours ending at 90) and [25, 31)
        // (one byte more, under a neighbour ending at 40).
        for (weight, want) in [(0.0, 10i64), (1.0, 26)] {
            let mut live = Live::new(4);
            live.add(0, (0, 10, 90), None);
            live.add(1, (15, 10, 90), None);
            live.add(2, (31, 10, 40), None);
            let at = live.place_coalescing(3, (5, 1, 40), |_| None, ends(weight), &mut candidates);
            assert_eq!(at, want, "weight {weight}");
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
                live.add(step, (at, size, 0), hole);
                placed.push((step, at, at + size));
            } else {
                let (x, _, _) = placed.swap_remove((seed >> 16) as usize % placed.len());
                live.remove(x);
            }
            check(&mut live, &placed);
        }
    }
}
