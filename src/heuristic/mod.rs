//! Fast placements for any number of buffers.
//!
//! - *first-fit*: buffers by decreasing size, each at the lowest offset
//!   where it fits, jumping past every buffer it would collide with (the
//!   shared-memory planner's rule);
//! - *best-fit*: by decreasing size, each into the smallest hole that holds
//!   it (XLA's rule);
//! - *skyline*: by decreasing contention (TelaMalloc's order: the largest
//!   total alive during the buffer's lifetime; ties by size x lifetime²,
//!   then lifetime), each on top of what is placed below it;
//! - *big-rocks*: by decreasing size, then lifetime, first-fit (idealloc's
//!   bootstrap);
//! - *online*: by start time, each into the smallest hole among the
//!   buffers alive then, as a run-time allocator would (see [`online`]):
//!   O(log n) per buffer whatever the overlaps, for the largest inputs.
//!
//! Fixed buffers go first, where they are fixed; alignment and gaps (with
//! windows) hold in every strategy. First-fit and best-fit find holes with
//! [`occupancy::Occupancy`] in O(log T) merged interval sets per piece; the
//! skyline needs one range-max and one range-raise per piece. No strategy
//! scans buffers pairwise or keeps an array per byte or per time step.
//!
//! [`plain`] and [`perturbed`] run a variant in its own order or in a
//! seeded perturbation of it; [`Repair`] lowers a placement's peak a
//! window at a time. The scheduler in [`crate::plan`] decides which runs
//! when.

pub(crate) mod coarsen;
mod occupancy;
mod online;
mod repair;
mod restarts;

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;
use core::str::FromStr;

use occupancy::Occupancy;
pub(crate) use repair::Repair;
pub use restarts::{default_count, Best};
pub(crate) use restarts::{perturbed, plain};

use crate::deadline::{sort_polled, Poll, Stop};
pub(crate) use crate::math::align_up;
use crate::model::problem::Problem;
use crate::rng::Rng;
use crate::trees::{ChmaxTree, MaxTree};

/// A placement strategy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Decreasing size, lowest offset that fits.
    FirstFit,
    /// Decreasing size, smallest hole that fits.
    BestFit,
    /// Decreasing contention, on top of the skyline.
    Skyline,
    /// Decreasing size then lifetime, lowest offset that fits.
    BigRocks,
    /// By start time, smallest hole among the buffers alive then.
    Online,
    /// The long-lived buffers first, in start order (a stack, as nested
    /// lifetimes want), then the others by decreasing size; first-fit.
    Layered,
}

impl Strategy {
    /// All strategies, cheapest to run first.
    pub const ALL: [Strategy; 6] = [
        Strategy::Online,
        Strategy::Skyline,
        Strategy::FirstFit,
        Strategy::Layered,
        Strategy::BigRocks,
        Strategy::BestFit,
    ];

    /// The name used by the CLI and the C API.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::FirstFit => "first-fit",
            Strategy::BestFit => "best-fit",
            Strategy::Skyline => "skyline",
            Strategy::BigRocks => "big-rocks",
            Strategy::Online => "online",
            Strategy::Layered => "layered",
        }
    }

    /// Whether it places buffers into the holes of a segment tree of
    /// merged intervals over time (and so costs what that costs).
    pub(crate) fn fills_holes(self) -> bool {
        matches!(
            self,
            Strategy::FirstFit | Strategy::Layered | Strategy::BigRocks | Strategy::BestFit
        )
    }

    /// The variants of this strategy that a portfolio runs: one, or for
    /// the strategies that set a long-lived layer apart, one per depth of
    /// that layer (lifetimes of at least a half, a quarter, ... of the
    /// time), since which depth suits a problem is found only by trying.
    pub fn variants(self) -> impl Iterator<Item = Variant> {
        let depths = match self {
            Strategy::Online => 0..=LAYER_DEPTHS,
            Strategy::Layered => 1..=LAYER_DEPTHS,
            _ => 0..=0,
        };
        depths.map(move |depth| Variant {
            strategy: self,
            depth,
        })
    }
}

/// The deepest long-lived layer tried: lifetimes of at least `1 / 2^d` of
/// the compressed time.
const LAYER_DEPTHS: u8 = 5;

/// One placement method: a strategy and, for those that set long-lived
/// buffers apart, the depth of that layer (0: none).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Variant {
    /// The strategy.
    pub strategy: Strategy,
    /// Buffers alive for at least `1 / 2^depth` of the (compressed) time
    /// are placed first, as a layer; 0 for no layer.
    pub depth: u8,
}

impl Variant {
    /// The strategy alone, with its first layer if it needs one.
    pub fn plain(strategy: Strategy) -> Variant {
        Variant {
            strategy,
            depth: u8::from(strategy == Strategy::Layered),
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A strategy name that names none.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct BadStrategy(pub alloc::string::String);

impl fmt::Display for BadStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::text::fill(
            f,
            "unknown heuristic \"{}\": use first-fit, best-fit, skyline, big-rocks, online or layered",
            &[crate::text::Arg::S(&self.0)],
        )
    }
}

impl FromStr for Strategy {
    type Err = BadStrategy;

    fn from_str(s: &str) -> Result<Strategy, BadStrategy> {
        Strategy::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| BadStrategy(s.into()))
    }
}

/// Scratch space of [`Layout::lowest_free`], kept between buffers.
#[derive(Default)]
pub(crate) struct Scratch {
    sets: Vec<(u32, bool)>,
    ranges: Vec<(usize, usize)>,
}

/// A coarser time for a subset of the buffers: the ends of their pieces,
/// so that a structure over it has as many slots as they need, not as the
/// whole problem has. Slot `j` is the layout's slots `[times[j],
/// times[j + 1])`; any range of the layout's slots maps to the local slots
/// it meets.
pub(crate) struct LocalTime {
    times: Vec<u32>,
}

impl LocalTime {
    /// The time whose slot ends are `times` (any order, repeats allowed).
    pub(crate) fn from_times(mut times: Vec<u32>) -> LocalTime {
        times.sort_unstable();
        times.dedup();
        if times.len() < 2 {
            times = alloc::vec![0, 1];
        }
        LocalTime { times }
    }

    /// The first and last slot ends.
    pub(crate) fn span(&self) -> (u32, u32) {
        (self.times[0], self.times[self.times.len() - 1])
    }

    #[cfg(test)]
    pub(crate) fn clone_times(&self) -> Vec<u32> {
        self.times.clone()
    }

    /// The slot ends, to reuse their memory.
    pub(crate) fn into_times(self) -> Vec<u32> {
        self.times
    }

    /// Number of local slots.
    pub(crate) fn slots(&self) -> usize {
        self.times.len() - 1
    }

    /// The local slots that the layout's slots `[f, t)` meet (`time`
    /// `None`: the layout's own).
    #[inline]
    pub(crate) fn map(time: Option<&LocalTime>, f: u32, t: u32) -> (u32, u32) {
        let Some(time) = time else { return (f, t) };
        let times = &time.times;
        let from = times.partition_point(|&x| x <= f).max(1) - 1;
        let to = times.partition_point(|&x| x < t).min(times.len() - 1);
        (from as u32, to.max(from) as u32)
    }
}

/// A piece of a buffer in compressed time: alive in time slots
/// `[first, end)`, using `[lower, upper)` above its offset.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slot {
    first: u32,
    end: u32,
    lower: i64,
    upper: i64,
}

/// What the online strategy reads of a buffer, in one place: it visits
/// buffers in start order, which is no order in memory, and one cache
/// miss per buffer is cheaper than four.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Extent {
    /// First time slot of its first piece.
    first: u32,
    /// End slot of its last piece.
    end: u32,
    size: i64,
    align: i64,
}

/// What every strategy needs, computed once per problem.
pub(crate) struct Layout {
    times: usize,
    piece_at: Vec<u32>,
    pieces: Vec<Slot>,
    extent: Vec<Extent>,
    size: Vec<i64>,
    align: Vec<i64>,
    fixed: Vec<Option<i64>>,
    start: Vec<i64>,
    length: Vec<i64>,
    /// Total size alive per time slot.
    load: Vec<i64>,
    /// Pairs of buffers alive at a common time (gaps included).
    pub(crate) overlaps: u64,
    /// The largest total alive at one time.
    pub(crate) max_load: i64,
    /// A lower bound on any height from alignment: see
    /// [`Layout::aligned_bound`] (at least the max load).
    pub(crate) aligned_bound: i64,
    /// The highest fixed buffer's top.
    pub(crate) fixed_top: i64,
    /// Whether two fixed buffers use the same memory at the same time (then
    /// nothing can be placed).
    pub(crate) fixed_clash: bool,
}

impl Layout {
    /// Compresses time and measures contention, polling the deadline.
    pub(crate) fn new(problem: &Problem, poll: &mut Poll<'_>) -> Result<Layout, Stop> {
        let n = problem.len();
        let mut piece_at = Vec::with_capacity(n + 1);
        let mut raw: Vec<(i64, i64, i64, i64)> = Vec::with_capacity(n);
        let mut times: Vec<i64> = Vec::with_capacity(2 * n);
        let mut layout = Layout {
            times: 0,
            piece_at: Vec::new(),
            pieces: Vec::new(),
            extent: Vec::new(),
            size: Vec::with_capacity(n),
            align: Vec::with_capacity(n),
            fixed: Vec::with_capacity(n),
            start: Vec::with_capacity(n),
            length: Vec::with_capacity(n),
            load: Vec::new(),
            overlaps: 0,
            max_load: 0,
            aligned_bound: 0,
            fixed_top: 0,
            fixed_clash: false,
        };
        for b in problem.buffers() {
            piece_at.push(raw.len() as u32);
            for p in b.pieces() {
                raw.push((p.lower, p.upper, p.window.lower, p.window.upper));
                times.push(p.lower);
                times.push(p.upper);
            }
            layout.size.push(b.size);
            layout.align.push(b.alignment);
            layout.fixed.push(b.offset);
            layout.start.push(b.lower);
            layout.length.push(b.upper - b.lower);
            if let Some(f) = b.offset {
                layout.fixed_top = layout.fixed_top.max(f + b.size);
            }
            poll.tick(1)?;
        }
        piece_at.push(raw.len() as u32);
        sort_polled(&mut times, poll)?;
        times.dedup();
        let slot = |t: i64| times.binary_search(&t).unwrap_or(0) as u32;
        layout.pieces = raw
            .iter()
            .map(|&(l, u, lo, hi)| Slot {
                first: slot(l),
                end: slot(u),
                lower: lo,
                upper: hi,
            })
            .collect();
        poll.tick(4 * raw.len() as u64)?;
        drop(raw);
        layout.times = times.len().saturating_sub(1).max(1);
        layout.piece_at = piece_at;
        layout.extent = (0..n)
            .map(|b| {
                let pieces = layout.pieces_of(b);
                Extent {
                    first: pieces.first().map_or(0, |p| p.first),
                    end: pieces.last().map_or(0, |p| p.end),
                    size: layout.size[b],
                    align: layout.align[b],
                }
            })
            .collect();

        // Load per time slot, then contention per buffer: the largest load
        // along its pieces.
        let mut load = vec![0i64; layout.times + 1];
        for p in &layout.pieces {
            let h = p.upper - p.lower;
            load[p.first as usize] = load[p.first as usize].saturating_add(h);
            load[p.end as usize] = load[p.end as usize].saturating_sub(h);
        }
        let mut run = 0i64;
        for l in load.iter_mut() {
            run = run.saturating_add(*l);
            *l = run;
        }
        load.pop();
        layout.max_load = load.iter().copied().max().unwrap_or(0);
        layout.load = load;
        layout.aligned_bound = layout.aligned_bound();
        layout.overlaps = layout.count_overlaps();
        poll.tick(2 * n as u64)?;
        layout.fixed_clash = layout.fixed_buffers_clash();
        Ok(layout)
    }

    /// Each buffer's contention (the largest load along its pieces),
    /// which only the skyline's order needs.
    fn contention(&self, poll: &mut Poll<'_>) -> Result<Vec<i64>, Stop> {
        let tree = MaxTree::new(&self.load);
        let mut contention = Vec::with_capacity(self.len());
        for b in 0..self.len() {
            let c = self
                .pieces_of(b)
                .iter()
                .map(|p| tree.max(p.first as usize, p.end as usize))
                .max()
                .unwrap_or(0);
            contention.push(c);
            poll.tick(8)?;
        }
        Ok(contention)
    }

    /// A lower bound on the height above the max load, from alignment.
    /// At a time `t` with load `L`, the pieces alive are disjoint, so the
    /// one highest in memory starts at `L - len` or above; if it is buffer
    /// `j`, using `[lo, hi)` of its own memory then, its offset is aligned
    /// and at least `L - hi`, and its top is at least
    /// `align_up(L - hi, a_j) + size_j`. The least of that over the pieces
    /// alive at `t` bounds every placement. Only the slots whose load is
    /// within the largest alignment of the max load can raise the bound;
    /// of those, the 64 fullest are looked at.
    fn aligned_bound(&self) -> i64 {
        const SLOTS: usize = 64;
        let max_align = self.align.iter().copied().max().unwrap_or(1);
        if max_align <= 1 {
            return self.max_load;
        }
        let floor = self.max_load.saturating_sub(max_align - 1);
        let mut slots: Vec<(i64, u32)> = (0..self.load.len())
            .filter(|&t| self.load[t] > floor)
            .map(|t| (-self.load[t], t as u32))
            .collect();
        if slots.len() > SLOTS {
            slots.select_nth_unstable(SLOTS - 1);
            slots.truncate(SLOTS);
        }
        slots.sort_unstable_by_key(|&(_, t)| t);
        let at: Vec<u32> = slots.iter().map(|&(_, t)| t).collect();
        let mut least: Vec<i64> = alloc::vec![i64::MAX; at.len()];
        for b in 0..self.len() {
            for p in self.pieces_of(b) {
                let from = at.partition_point(|&t| t < p.first);
                for k in from..at.len() {
                    if at[k] >= p.end {
                        break;
                    }
                    let load = self.load[at[k] as usize];
                    let top = align_up((load - p.upper).max(0), self.align[b])
                        .saturating_add(self.size[b]);
                    least[k] = least[k].min(top);
                }
            }
        }
        least
            .into_iter()
            .filter(|&l| l < i64::MAX)
            .fold(self.max_load, i64::max)
    }

    /// Pairs of buffers whose lifetimes (gaps included) overlap: what the
    /// hole-filling strategies pay for, and so what decides whether they
    /// run on a large input.
    fn count_overlaps(&self) -> u64 {
        let mut starts = vec![0u64; self.times + 1];
        let mut ends = vec![0u64; self.times + 1];
        for b in 0..self.len() {
            let pieces = self.pieces_of(b);
            if let (Some(f), Some(l)) = (pieces.first(), pieces.last()) {
                starts[f.first as usize] += 1;
                ends[l.end as usize] += 1;
            }
        }
        let (mut alive, mut pairs) = (0u64, 0u64);
        for t in 0..=self.times {
            alive -= ends[t];
            let s = starts[t];
            pairs = pairs.saturating_add(s * alive + s * s.saturating_sub(1) / 2);
            alive += s;
        }
        pairs
    }

    /// Number of buffers.
    pub(crate) fn len(&self) -> usize {
        self.size.len()
    }

    fn pieces_of(&self, b: usize) -> &[Slot] {
        &self.pieces[self.piece_at[b] as usize..self.piece_at[b + 1] as usize]
    }

    fn fixed_buffers_clash(&self) -> bool {
        if self.fixed.iter().all(Option::is_none) {
            return false;
        }
        let mut occ = Occupancy::new(self.times);
        let mut sets = Vec::new();
        for b in 0..self.len() {
            let Some(f) = self.fixed[b] else { continue };
            for p in self.pieces_of(b) {
                sets.clear();
                occ.sets(p.first, p.end, &mut sets);
                if sets
                    .iter()
                    .any(|&s| occ.set(s).conflict(f + p.lower, f + p.upper).is_some())
                {
                    return true;
                }
            }
            for p in self.pieces_of(b) {
                occ.insert(p.first, p.end, f + p.lower, f + p.upper);
            }
        }
        false
    }

    /// The buffers a variant places, in its order (fixed buffers are
    /// placed first and are not in it). With `noise`, the primary key of
    /// each buffer is scaled by a random factor in `[1 - spread, 1 + spread)`
    /// (for a layer: the lifetime that decides whether a buffer is in it).
    /// The sort polls: at a million buffers it takes a tenth of a second.
    pub(crate) fn order(
        &self,
        variant: Variant,
        mut noise: Option<(&mut Rng, f64)>,
        poll: &mut Poll<'_>,
    ) -> Result<Vec<u32>, Stop> {
        if variant.strategy == Strategy::Online {
            return self.online_order(noise, poll);
        }
        let n = self.len();
        let long = self.layer_length(variant.depth);
        let contention = match variant.strategy {
            Strategy::Skyline => self.contention(poll)?,
            _ => Vec::new(),
        };
        let mut keys: Vec<(i64, i128, i64, u32)> = Vec::with_capacity(n);
        // `b` indexes several per-buffer arrays.
        #[allow(clippy::needless_range_loop)]
        for b in 0..n {
            if self.fixed[b].is_some() {
                continue;
            }
            let (size, length, start) = (self.size[b], self.length[b], self.start[b]);
            let mut factor = || match noise.as_mut() {
                Some((rng, spread)) => 1.0 + *spread * rng.signed_unit(),
                None => 1.0,
            };
            let (primary, secondary, tertiary) = match variant.strategy {
                Strategy::Layered => {
                    let e = self.extent[b];
                    let lived = f64::from(e.end - e.first) * factor();
                    if lived >= long as f64 {
                        // The layer, before everything else, in start order
                        // (the longest first among equal starts).
                        let key = (
                            i64::MIN + i64::from(e.first),
                            -i128::from(e.end - e.first),
                            0,
                        );
                        keys.push((key.0, key.1, key.2, b as u32));
                        continue;
                    }
                    (size as f64, -(start as i128), 0)
                }
                // Ties: the earliest start first.
                Strategy::FirstFit => (size as f64, -(start as i128), 0),
                Strategy::BestFit | Strategy::BigRocks => (size as f64, length as i128, 0),
                Strategy::Skyline => (
                    contention[b] as f64,
                    size as i128 * length as i128 * length as i128,
                    length,
                ),
                Strategy::Online => unreachable!("ordered by online_order"),
            };
            keys.push((
                total_order(-(primary * factor())),
                -secondary,
                -tertiary,
                b as u32,
            ));
        }
        sort_polled(&mut keys, poll)?;
        Ok(keys.into_iter().map(|k| k.3).collect())
    }

    /// The shortest lifetime (in slots) of a layer of `depth` (0: none).
    fn layer_length(&self, depth: u8) -> u32 {
        if depth == 0 {
            return u32::MAX;
        }
        ((self.times as u64) >> depth).max(1) as u32
    }

    /// The online order: by the start of the first live piece (a gap may
    /// open a buffer), which is what makes it online; among buffers that
    /// start together the longest first (what lives longest goes lowest),
    /// then the largest. Noise only reorders buffers that start together.
    fn online_order(
        &self,
        mut noise: Option<(&mut Rng, f64)>,
        poll: &mut Poll<'_>,
    ) -> Result<Vec<u32>, Stop> {
        let mut keys: Vec<(u32, i64, i64, u32)> = Vec::with_capacity(self.len());
        for (b, e) in self.extent.iter().enumerate() {
            if self.fixed[b].is_some() {
                continue;
            }
            let length = i64::from(e.end - e.first);
            let length = match noise.as_mut() {
                Some((rng, spread)) => (length as f64 * (1.0 + *spread * rng.signed_unit())) as i64,
                None => length,
            };
            keys.push((e.first, -length, -e.size, b as u32));
        }
        sort_polled(&mut keys, poll)?;
        Ok(keys.into_iter().map(|k| k.3).collect())
    }

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

/// An integer that orders as `x` does under `f64::total_cmp`: the sign
/// bit set flips the other bits, so negative values count down.
fn total_order(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    bits ^ (((bits >> 63) as u64) >> 1) as i64
}

/// Every buffer one above the other (fixed buffers where they are fixed,
/// the others above them), in O(n), for when there is no time for
/// anything better: valid unless fixed buffers overlap.
pub(crate) fn stack(problem: &Problem) -> Vec<i64> {
    stack_items(
        problem
            .buffers()
            .iter()
            .map(|b| (b.size, b.alignment, b.offset)),
    )
}

impl Layout {
    /// [`stack`] from the layout's arrays (a pass over a million
    /// buffers' records costs tens of milliseconds, after a deadline),
    /// with its height. Valid unless fixed buffers clash.
    pub(crate) fn stack(&self) -> (Vec<i64>, i64) {
        let offsets =
            stack_items((0..self.len()).map(|b| (self.size[b], self.align[b], self.fixed[b])));
        let height = (0..self.len())
            .map(|b| offsets[b].saturating_add(self.size[b]))
            .max()
            .unwrap_or(0);
        (offsets, height)
    }
}

/// Stacks `(size, alignment, fixed offset)` items: the fixed ones where
/// they are, the others one above the other over the highest of them.
fn stack_items(items: impl Iterator<Item = (i64, i64, Option<i64>)> + Clone) -> Vec<i64> {
    let mut top = items
        .clone()
        .filter_map(|(size, _, fixed)| fixed.map(|f| f.saturating_add(size)))
        .max()
        .unwrap_or(0);
    items
        .map(|(size, align, fixed)| match fixed {
            Some(f) => f,
            None => {
                let at = align_up(top, align);
                top = at.saturating_add(size);
                at
            }
        })
        .collect()
}

/// Places every buffer of `problem` with `strategy` in its plain order,
/// as low as it goes (the capacity is not consulted). `None` if fixed
/// buffers overlap, so that nothing can be placed.
pub fn run(problem: &Problem, strategy: Strategy) -> Option<crate::solution::Solution> {
    run_variant(problem, Variant::plain(strategy))
}

/// [`run`] for one variant (a strategy with the depth of its layer).
/// Colocations and separations are honoured as [`crate::plan`] honours
/// them: on the problem lowered to plain buffers.
pub fn run_variant(problem: &Problem, variant: Variant) -> Option<crate::solution::Solution> {
    #[cfg(feature = "constraints")]
    if !problem.links().is_empty() {
        let lowered = problem.lowered().ok()?;
        let s = run_variant(&lowered.problem, variant)?;
        return Some(crate::solution::Solution {
            offsets: lowered.lift(&s.offsets),
        });
    }
    let deadline = crate::deadline::Deadline::none();
    let mut poll = Poll::new(&deadline, u64::MAX);
    let layout = Layout::new(problem, &mut poll).ok()?;
    if layout.fixed_clash {
        return None;
    }
    let order = layout.order(variant, None, &mut poll).ok()?;
    let (offsets, _) = layout.place(variant, &order, &mut poll).ok()?;
    Some(crate::solution::Solution { offsets })
}

#[cfg(test)]
mod tests {
    use super::total_order;

    /// Sorting by `total_order` gives the order of `f64::total_cmp`.
    #[test]
    fn total_order_orders_as_total_cmp() {
        let mut values = alloc::vec![
            -1e300, -2.5, -1.0, -1e-300, -0.0, 0.0, 1e-300, 1.0, 2.5, 1e300, -3.75, 7.0, -7.0,
        ];
        let mut by_key = values.clone();
        values.sort_by(f64::total_cmp);
        by_key.sort_by_key(|&x| total_order(x));
        assert_eq!(
            values
                .iter()
                .map(|x| x.to_bits())
                .collect::<alloc::vec::Vec<_>>(),
            by_key
                .iter()
                .map(|x| x.to_bits())
                .collect::<alloc::vec::Vec<_>>()
        );
    }
}
