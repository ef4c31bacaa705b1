//! What every strategy needs of a problem, computed once: time
//! compressed to slots, each buffer's pieces, sizes and alignments, the
//! load per slot and the bounds it gives; and the plain stack of buffers
//! for when there is no time for anything better.

use alloc::vec;
use alloc::vec::Vec;

use super::occupancy::Occupancy;
pub(crate) use super::occupancy::Slot;
use crate::base::math::align_up;
use crate::base::trees::MaxTree;
use crate::deadline::{radix_sort_polled, Poll, Stop};
use crate::model::problem::Problem;

/// Scratch space of [`Layout::lowest_free`], kept between buffers.
#[derive(Default)]
pub(crate) struct Scratch {
    pub(super) sets: Vec<(u32, bool)>,
    pub(super) ranges: Vec<(usize, usize)>,
    pub(super) find: super::occupancy::FindScratch,
}

/// A coarser time for a subset of the buffers: the ends of their pieces,
/// so that a structure over it has as many slots as they need, not as the
/// whole problem has. Slot `j` is the layout's slots `[times[j],
/// times[j + 1])`; any range of the layout's slots maps to the local slots
/// it meets.
pub(crate) struct LocalTime {
    pub(super) times: Vec<u32>,
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

/// What the online strategy reads of a buffer, in one place: it visits
/// buffers in start order, which is no order in memory, and one cache
/// miss per buffer is cheaper than four.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Extent {
    /// First time slot of its first piece.
    pub(super) first: u32,
    /// End slot of its last piece.
    pub(super) end: u32,
    pub(super) size: i64,
    pub(super) align: i64,
}

/// What every strategy needs, computed once per problem.
pub(crate) struct Layout {
    pub(super) times: usize,
    pub(super) piece_at: Vec<u32>,
    pub(super) pieces: Vec<Slot>,
    pub(super) extent: Vec<Extent>,
    pub(super) size: Vec<i64>,
    pub(super) align: Vec<i64>,
    pub(super) fixed: Vec<Option<i64>>,
    pub(super) start: Vec<i64>,
    /// How long each buffer lives, its separations' moments left out (see
    /// [`Problem::lived`]): what orders read.
    pub(super) length: Vec<i64>,
    /// The slot where the separations' moments start (`u32::MAX` for
    /// none): see [`Layout::lived_slots`].
    moments_slot: u32,
    /// Total size alive per time slot.
    pub(super) load: Vec<i64>,
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
        let mut pieces: Vec<Slot> = Vec::with_capacity(n);
        // Every piece's two ends, each with its time as a sortable key
        // and its place (piece * 2, + 1 for the end): sorted, their ranks
        // among distinct times are the slots.
        let mut ends: Vec<(u64, u32)> = Vec::with_capacity(2 * n);
        let key = |t: i64| (t as u64) ^ (1 << 63);
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
            moments_slot: u32::MAX,
            load: Vec::new(),
            overlaps: 0,
            max_load: 0,
            aligned_bound: 0,
            fixed_top: 0,
            fixed_clash: false,
        };
        for (i, b) in problem.buffers().iter().enumerate() {
            piece_at.push(pieces.len() as u32);
            for p in b.pieces() {
                let at = 2 * pieces.len() as u32;
                ends.push((key(p.lower), at));
                ends.push((key(p.upper), at + 1));
                pieces.push(Slot {
                    first: 0,
                    end: 0,
                    lower: p.window.lower,
                    upper: p.window.upper,
                });
            }
            layout.size.push(b.size);
            layout.align.push(b.alignment);
            layout.fixed.push(b.offset);
            layout.start.push(b.lower);
            let (lower, end) = problem.lived(i);
            layout.length.push(end - lower);
            if let Some(f) = b.offset {
                layout.fixed_top = layout.fixed_top.max(f + b.size);
            }
            poll.tick(1)?;
        }
        piece_at.push(pieces.len() as u32);
        radix_sort_polled(&mut ends, |e| e.0, poll)?;
        let moments = key(problem.moments_from());
        let (mut slots, mut before_moments) = (0u32, 0u32);
        let mut last = None;
        for &(k, at) in &ends {
            if last != Some(k) {
                if last.is_some() {
                    slots += 1;
                }
                last = Some(k);
                if k < moments {
                    before_moments = slots + 1;
                }
            }
            let piece = &mut pieces[(at / 2) as usize];
            if at % 2 == 0 {
                piece.first = slots;
            } else {
                piece.end = slots;
            }
        }
        poll.tick(2 * ends.len() as u64)?;
        drop(ends);
        layout.pieces = pieces;
        if problem.moments_from() != i64::MAX {
            layout.moments_slot = before_moments;
        }
        let distinct = if last.is_some() {
            slots as usize + 1
        } else {
            0
        };
        layout.times = distinct.saturating_sub(1).max(1);
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

        let load = layout.load_per_slot();
        layout.max_load = load.iter().copied().max().unwrap_or(0);
        layout.load = load;
        layout.aligned_bound = layout.aligned_bound();
        layout.overlaps = layout.count_overlaps();
        poll.tick(2 * n as u64)?;
        layout.fixed_clash = layout.fixed_buffers_clash();
        Ok(layout)
    }

    /// The load (sum of the pieces' heights) in each time slot.
    fn load_per_slot(&self) -> Vec<i64> {
        let mut load = vec![0i64; self.times + 1];
        for p in &self.pieces {
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
        load
    }

    /// Each buffer's contention (the largest load along its pieces),
    /// which only the skyline's order needs.
    pub(super) fn contention(&self, poll: &mut Poll<'_>) -> Result<Vec<i64>, Stop> {
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
    pub(super) fn aligned_bound(&self) -> i64 {
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
    pub(super) fn count_overlaps(&self) -> u64 {
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

    /// How many slots buffer `b` lives, from its first piece to the end
    /// of its last before the separations' moments (see
    /// [`Problem::lived`]).
    pub(super) fn lived_slots(&self, b: usize) -> u32 {
        let e = self.extent[b];
        let end = match self.moments_slot {
            u32::MAX => e.end,
            from => self
                .pieces_of(b)
                .iter()
                .take_while(|p| p.first < from)
                .last()
                .map_or(e.end, |p| p.end),
        };
        end - e.first
    }

    pub(super) fn pieces_of(&self, b: usize) -> &[Slot] {
        &self.pieces[self.piece_at[b] as usize..self.piece_at[b + 1] as usize]
    }

    /// Whether buffer `b` is one piece over all of its size.
    pub(super) fn one_piece(&self, b: usize) -> bool {
        matches!(self.pieces_of(b), [p] if p.lower == 0 && p.upper == self.size[b])
    }

    pub(super) fn fixed_buffers_clash(&self) -> bool {
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
}

/// Every buffer one above the other (fixed buffers where they are fixed,
/// the others above them), in O(n), for when there is no time for
/// anything better: valid unless fixed buffers overlap.
pub(crate) fn stack(problem: &Problem) -> Stacked {
    stack_items(
        problem
            .buffers()
            .iter()
            .map(|b| (b.size, b.alignment, b.offset)),
    )
}

/// A stacked placement: its offsets, its height, and whether any buffer
/// was fixed (only then can it be invalid: fixed buffers may clash).
pub(crate) struct Stacked {
    pub(crate) offsets: Vec<i64>,
    pub(crate) height: i64,
    pub(crate) any_fixed: bool,
}

impl Layout {
    /// [`stack`] from the layout's arrays (a pass over a million
    /// buffers' records costs tens of milliseconds, after a deadline).
    pub(crate) fn stack(&self) -> Stacked {
        stack_items((0..self.len()).map(|b| (self.size[b], self.align[b], self.fixed[b])))
    }
}

/// Stacks `(size, alignment, fixed offset)` items: the fixed ones where
/// they are, the others one above the other over the highest of them.
/// Two passes, the height and the fixed ones found on the way: after a
/// deadline every pass over a million buffers counts.
fn stack_items(items: impl Iterator<Item = (i64, i64, Option<i64>)> + Clone) -> Stacked {
    let fixed_top = items
        .clone()
        .filter_map(|(size, _, fixed)| fixed.map(|f| f.saturating_add(size)))
        .max();
    let mut top = fixed_top.unwrap_or(0);
    let offsets = items
        .map(|(size, align, fixed)| match fixed {
            Some(f) => f,
            None => {
                let at = align_up(top, align);
                top = at.saturating_add(size);
                at
            }
        })
        .collect();
    Stacked {
        offsets,
        height: top,
        any_fixed: fixed_top.is_some(),
    }
}

#[cfg(all(test, feature = "constraints"))]
mod tests {
    use super::*;
    use crate::base::rng::Rng;
    use crate::deadline::Deadline;
    use crate::model::problem::Gap;

    /// The stacked placement's height is its highest top, and it says
    /// whether any buffer was fixed; with fixed buffers that do not
    /// clash it is valid, the free ones above all of them, aligned.
    #[test]
    fn a_stack_reports_its_height_and_its_fixed_buffers() {
        use crate::model::buffer::Buffer;
        let mut rng = Rng::new(0x57ac);
        for case in 0..300 {
            let n = rng.below(0, 12) as usize;
            let mut floor = 0;
            let buffers: Vec<Buffer> = (0..n)
                .map(|i| {
                    let size = rng.below(1, 50);
                    let mut b = Buffer::new(alloc::format!("b{i}"), 0, 4, size);
                    b.alignment = [1, 2, 8][rng.below(0, 3) as usize];
                    if rng.below(0, 3) == 0 {
                        // Fixed ones one above the other: no clash.
                        let at = align_up(floor + rng.below(0, 20), b.alignment);
                        b.offset = Some(at);
                        floor = at + size;
                    }
                    b
                })
                .collect();
            let problem = Problem::new(i64::MAX, buffers).unwrap();
            let stacked = stack(&problem);
            let top = problem
                .buffers()
                .iter()
                .zip(&stacked.offsets)
                .map(|(b, &o)| o + b.size)
                .max()
                .unwrap_or(0);
            assert_eq!(stacked.height, top, "case {case}");
            let fixed = problem.buffers().iter().any(|b| b.offset.is_some());
            assert_eq!(stacked.any_fixed, fixed, "case {case}");
            let solution = crate::model::solution::Solution {
                offsets: stacked.offsets,
            };
            crate::model::solution::validate(&problem, &solution)
                .unwrap_or_else(|e| panic!("case {case}: {e}"));
        }
    }

    /// A kernel's separations, lowered to moments after every lifetime,
    /// leave how long each buffer lives as it was, in time and in slots:
    /// the orders read the buffer's own lifetime (gaps of its own kept),
    /// not one that runs to its last moment.
    #[test]
    fn separations_lowered_leave_how_long_buffers_live() {
        let mut rng = Rng::new(0x11fe);
        let deadline = Deadline::none();
        for seed in 0..40 {
            let n = rng.below(2, 80) as usize;
            let spec = crate::gen::Spec::new(n, seed);
            let (mut buffers, groups) = crate::gen::kernel(spec, Some(0.05 * (seed % 11) as f64));
            for b in &mut buffers {
                if b.upper - b.lower >= 3 && rng.below(0, 3) == 0 {
                    b.gaps.push(Gap {
                        lower: b.lower + 1,
                        upper: b.upper - 1,
                        window: None,
                    });
                }
            }
            let plain = Problem::new(i64::MAX, buffers.clone()).unwrap();
            let mut linked = plain.clone();
            for g in &groups {
                linked.separate(g).unwrap();
            }
            let lowered = linked.lowered().unwrap().problem;
            let mut poll = Poll::new(&deadline, u64::MAX);
            let (own, low) = (
                Layout::new(&plain, &mut poll).unwrap(),
                Layout::new(&lowered, &mut poll).unwrap(),
            );
            for (i, b) in buffers.iter().enumerate() {
                assert_eq!(
                    lowered.lived(i),
                    (b.lower, b.upper),
                    "seed {seed}, buffer {i}"
                );
                assert_eq!(plain.lived(i), (b.lower, b.upper));
                assert_eq!(low.length[i], own.length[i]);
                assert_eq!(
                    low.lived_slots(i),
                    own.lived_slots(i),
                    "seed {seed}, buffer {i}"
                );
                let e = own.extent[i];
                assert_eq!(own.lived_slots(i), e.end - e.first);
            }
        }
    }
}
