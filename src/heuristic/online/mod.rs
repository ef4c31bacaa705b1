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
use crate::deadline::{radix_sort_polled, sort_by_lead_polled, Poll, Stop};
use crate::model::buffer::Buffer;
use crate::model::problem::Problem;
use live::{Ends, Live};

mod holes;
mod live;

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
    // One alignment for every buffer (the usual case) spares the loop a
    // read of each buffer's record in start order: a cache miss apiece.
    let mut one_align = buffers.first().map(|b| b.alignment);
    for (b, i) in buffers.iter().zip(0u32..) {
        if !plain(b) {
            return Ok(None);
        }
        if one_align != Some(b.alignment) {
            one_align = None;
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
        let align = one_align.unwrap_or_else(|| buffers[b as usize].alignment);
        let at = live.place(k as u32, (size, align, 0), |_| None, true);
        offsets[b as usize] = at;
        height = height.max(at + size);
        poll.tick(4)?;
    }
    Ok(Some((offsets, height)))
}

impl Layout {
    /// Places the free buffers of `order` (sorted by start) online (into
    /// holes as [`super::Strategy::Coalescing`] chooses them, if
    /// `coalescing`); with `depth`, the long-lived ones among them (see
    /// [`super::Variant::depth`]) first, first-fit in start order, as a
    /// layer the others then see as fixed. Buffers `placed` already (one
    /// piece each, free, none of them in `order`) are that layer instead,
    /// at their offsets, and `depth` is not read: entering the live set
    /// as they start, they leave the others the holes they really leave.
    pub(crate) fn online(
        &self,
        order: &[u32],
        (depth, placed, coalescing): (u8, &[(u32, i64)], bool),
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
        let layer: Vec<u32> = match placed {
            [] => order.iter().copied().filter(|&b| in_layer(b)).collect(),
            _ => {
                let mut layer: Vec<u32> = placed.iter().map(|&(b, _)| b).collect();
                layer.sort_unstable_by_key(|&b| (self.extent[b as usize].first, b));
                layer
            }
        };
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
        // The layer first, online among itself (or where it was placed),
        // then the rest online around it; the layer enters the live set at
        // its offsets.
        let mut pass = Pass {
            held: &mut held,
            time: &time,
            any_held,
            coalescing,
        };
        if placed.is_empty() {
            self.online_pass(&layer, &[], &mut pass, offsets, poll)?;
        }
        for &(b, at) in placed {
            debug_assert!(self.one_piece(b as usize) && self.fixed[b as usize].is_none());
            offsets[b as usize] = at;
        }
        for &b in &layer {
            let first = self.extent[b as usize].first;
            let (f, t) = LocalTime::map(Some(&time), first, first + 1);
            let at = offsets[b as usize];
            pass.held.insert(f, t, at, at + self.size[b as usize]);
            poll.tick(16)?;
        }
        let rest: Vec<u32> = if layer.is_empty() || !placed.is_empty() {
            order.to_vec()
        } else {
            order.iter().copied().filter(|&b| !in_layer(b)).collect()
        };
        pass.any_held |= !layer.is_empty();
        self.online_pass(&rest, &layer, &mut pass, offsets, poll)
    }

    /// Places `rest` (in start order) online, each into the smallest hole
    /// (or as coalescing chooses) among the buffers alive at its start
    /// and clear of what `pass` holds; the buffers of `layer` (placed
    /// already, in start order) enter the live set when they start.
    ///
    /// Long on purpose: the one loop of the online strategy over a million
    /// buffers, its live set and holes updated in place as time advances.
    fn online_pass(
        &self,
        rest: &[u32],
        layer: &[u32],
        pass: &mut Pass<'_>,
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
        let ends = pass.coalescing.then(|| self.ends(&items));
        let mut candidates = Vec::new();
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
                        let end = self.extent[b].end;
                        live.add(x, (offsets[b], self.size[b], end), hole);
                        next_layer += 1;
                        continue;
                    }
                    (None, None) => break,
                }
                live.remove(ending[next_end].1);
                next_end += 1;
            }
            if pass.any_held {
                sets.clear();
                let (f, t) = LocalTime::map(Some(pass.time), start, end);
                pass.held.sets(f, t, &mut sets);
            }
            let held = &*pass.held;
            let clear = |at: i64| -> Option<i64> {
                sets.iter()
                    .find_map(|&s| held.set(s).conflict(at, at + size))
            };
            let x = k as u32;
            let at = match ends {
                Some(ends) if start < end => {
                    live.place_coalescing(x, (size, align, end), clear, ends, &mut candidates)
                }
                _ => live.place(x, (size, align, end), clear, start < end),
            };
            placed[k] = at;
            poll.tick(4)?;
        }
        for (&b, &at) in rest.iter().zip(&placed) {
            offsets[b as usize] = at;
        }
        Ok(())
    }
}

/// What one online pass places around: fixed buffers and a layer in
/// `held` (over its local `time`; `any_held`: is there anything in it),
/// and whether it chooses holes as coalescing does.
struct Pass<'h> {
    held: &'h mut Occupancy,
    time: &'h LocalTime,
    any_held: bool,
    coalescing: bool,
}

impl Layout {
    /// How coalescing weighs ends for these buffers: a slot of distance
    /// costs as much memory as the buffers' typical size per slot of
    /// their typical lifetime, each the mean weighted by area (the
    /// buffers that make the load), times [`ENDS_WEIGHT`]. In the
    /// problem's own units, so the same for any scale of time or memory.
    fn ends(&self, items: &[Extent]) -> Ends {
        // Each sum is over area times the quantity; the area's own sum
        // cancels in the ratio.
        let (mut by_size, mut by_length) = (0.0f64, 0.0f64);
        for e in items {
            let (length, size) = (f64::from(e.end - e.first), e.size as f64);
            by_size += length * size * size;
            by_length += length * length * size;
        }
        let weight = if by_length > 0.0 {
            ENDS_WEIGHT * by_size / by_length
        } else {
            0.0
        };
        Ends {
            weight,
            horizon: self.times as u32,
        }
    }
}

/// How much a neighbour's end counts against a hole's waste, in units of
/// the buffers' size per lifetime (see [`Layout::ends`]): chosen among
/// 0.3, 1, 3 and 10 by measurement (docs/MEASUREMENTS.md).
const ENDS_WEIGHT: f64 = 3.0;

#[cfg(test)]
mod tests {
    use super::*;

    /// Where sizes say nothing of lifetimes (buffers issued in program
    /// order, sizes drawn apart from lifetimes), coalescing's plain order
    /// ends lower than online's: best fit splinters the holes that
    /// buffers ending apart leave.
    #[cfg(feature = "gen")]
    #[test]
    fn coalescing_ends_lower_where_sizes_are_unrelated_to_lifetimes() {
        use crate::deadline::Deadline;
        use crate::gen::{generate_problem, Family, Spec};
        use crate::heuristic::{plain, Strategy, Variant};
        let d = Deadline::none();
        let mut poll = Poll::new(&d, u64::MAX);
        let mut lower = 0;
        for seed in 1..=6 {
            let spec = Spec::new(100_000, seed).with_family(Family::Issued);
            let problem = generate_problem(spec).unwrap();
            let layout = Layout::new(&problem, &mut poll).unwrap();
            let mut height = |s: Strategy| {
                let best = plain(&layout, Variant::plain(s), i64::MAX, &mut poll);
                let best = best.unwrap().unwrap();
                let solution = crate::model::solution::Solution {
                    offsets: best.offsets,
                };
                crate::model::solution::validate(&problem, &solution).unwrap();
                best.height
            };
            lower += usize::from(height(Strategy::Coalescing) < height(Strategy::Online));
        }
        assert_eq!(lower, 6, "lower on {lower} of 6 seeds");
    }

    /// Placed before the layout, the online strategy's plain order gives
    /// the offsets the layout's gives, on problems with many buffers
    /// starting and ending together (the orders' ties), alignments and
    /// sizes over several classes, alignments mixed or one for all (the
    /// loop's shortcut); and declines what the layout sees otherwise
    /// (gaps, fixed offsets).
    #[test]
    fn placed_at_once_as_the_layout_places() {
        use crate::base::rng::Rng;
        use crate::deadline::Deadline;
        use crate::heuristic::plain_online;
        use crate::model::buffer::Gap;

        let d = Deadline::none();
        let mut rng = Rng::new(3);
        for case in 0..300 {
            let n = rng.below(1, 400) as usize;
            let span = rng.below(1, 3 * n as i64 / 2 + 1);
            let one_align = [None, Some(4), Some(32)][case % 3];
            let buffers: Vec<Buffer> = (0..n)
                .map(|i| {
                    let lower = rng.below(0, span);
                    let upper = lower + rng.below(1, [3, 40][case % 2]);
                    let size = rng.below(1, [8, 5000][(case / 2) % 2]);
                    let b = Buffer::new(alloc::format!("b{i}"), lower, upper, size);
                    let mixed = [1, 1, 4, 32][rng.below(0, 4) as usize];
                    b.with_alignment(one_align.unwrap_or(mixed))
                })
                .collect();
            let problem = Problem::new(i64::MAX, buffers.clone()).unwrap();
            let mut poll = Poll::new(&d, 1 << 16);
            let (offsets, height) = online_at_once(&problem, &mut poll).unwrap().unwrap();
            let layout = Layout::new(&problem, &mut poll).unwrap();
            let want = plain_online(&layout, &mut poll);
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
}
