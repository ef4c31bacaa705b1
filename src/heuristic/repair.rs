//! Local repair: lower a placement's peak a window at a time.
//!
//! A step takes the buffer whose top is highest, a neighbourhood of its
//! lifetime, and the `k` buffers alive there whose tops are highest (the
//! *window*); every other buffer stays where it is. The window is placed
//! again, first-fit, in one of a few orders, among the buffers around it
//! (found through a static index over time, so a step costs about the
//! buffers alive in the neighbourhood, not the whole problem). The new
//! placement is kept when the window's highest top is no higher than it
//! was: lower is progress, equal is a move along the plateau that may open
//! room for the next step. The height therefore never rises.
//!
//! Window sizes and neighbourhoods are drawn from a seeded stream, so a
//! repair is reproducible for a given seed and number of steps.

use alloc::vec::Vec;

use super::occupancy::Occupancy;
use super::{Layout, LocalTime, Scratch};
use crate::deadline::{sort_polled, Poll, Stop};
use crate::rng::Rng;

/// Which buffers' lifetimes meet a time range: the buffers sorted by their
/// first slot, with a max-tree of their end slots over that order, so a
/// query visits only the prefix that starts before the range and prunes
/// subtrees that end before it. O(n) memory; a query costs O((k + 1) log n)
/// for k answers.
pub(crate) struct TimeIndex {
    first: Vec<u32>,
    id: Vec<u32>,
    leaves: usize,
    /// Max end slot per tree node (leaves at `leaves + position`).
    max_end: Vec<u32>,
}

impl TimeIndex {
    pub(crate) fn new(layout: &Layout, poll: &mut Poll<'_>) -> Result<TimeIndex, Stop> {
        let n = layout.len();
        let mut keyed: Vec<(u32, u32)> = (0..n as u32)
            .map(|b| (layout.extent[b as usize].first, b))
            .collect();
        sort_polled(&mut keyed, poll)?;
        let leaves = n.max(1).next_power_of_two();
        let mut max_end = alloc::vec![0u32; 2 * leaves];
        for (i, &(_, b)) in keyed.iter().enumerate() {
            max_end[leaves + i] = layout.extent[b as usize].end;
        }
        for i in (1..leaves).rev() {
            max_end[i] = max_end[2 * i].max(max_end[2 * i + 1]);
        }
        poll.tick(4 * leaves as u64)?;
        Ok(TimeIndex {
            first: keyed.iter().map(|k| k.0).collect(),
            id: keyed.iter().map(|k| k.1).collect(),
            leaves,
            max_end,
        })
    }

    /// Pushes onto `out` every buffer alive at some slot of `[a, b)`.
    pub(crate) fn query(&self, a: u32, b: u32, out: &mut Vec<u32>, stack: &mut Vec<(u32, u32)>) {
        let prefix = self.first.partition_point(|&f| f < b);
        if prefix == 0 {
            return;
        }
        stack.clear();
        stack.push((1, self.leaves as u32));
        while let Some((node, width)) = stack.pop() {
            let lo = node as usize * width as usize - self.leaves;
            if lo >= prefix || self.max_end[node as usize] <= a {
                continue;
            }
            if width == 1 {
                out.push(self.id[lo]);
            } else {
                stack.push((2 * node + 1, width / 2));
                stack.push((2 * node, width / 2));
            }
        }
    }
}

/// The highest top among the buffers, kept under point updates.
struct TopTree {
    leaves: usize,
    max: Vec<i64>,
}

impl TopTree {
    fn new(tops: impl ExactSizeIterator<Item = i64>) -> TopTree {
        let leaves = tops.len().max(1).next_power_of_two();
        let mut max = alloc::vec![i64::MIN; 2 * leaves];
        for (i, t) in tops.enumerate() {
            max[leaves + i] = t;
        }
        for i in (1..leaves).rev() {
            max[i] = max[2 * i].max(max[2 * i + 1]);
        }
        TopTree { leaves, max }
    }

    fn set(&mut self, i: usize, top: i64) {
        let mut at = self.leaves + i;
        self.max[at] = top;
        while at > 1 {
            at /= 2;
            self.max[at] = self.max[2 * at].max(self.max[2 * at + 1]);
        }
    }

    fn height(&self) -> i64 {
        self.max[1].max(0)
    }

    /// The leftmost buffer whose top is the highest.
    fn highest(&self) -> usize {
        let mut at = 1;
        while at < self.leaves {
            at = if self.max[2 * at] == self.max[at] {
                2 * at
            } else {
                2 * at + 1
            };
        }
        at - self.leaves
    }
}

/// Windows up to this many buffers are sometimes placed by the exact
/// search, with this many nodes.
const EXACT_WINDOW: usize = 64;
const EXACT_NODES: u64 = 4_000;

fn gcd(mut a: i64, mut b: i64) -> i64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs().max(1)
}

/// The smallest and largest window a step takes.
const MIN_WINDOW: u32 = 3; // 2^3 = 8 buffers
const MAX_WINDOW: u32 = 10; // 2^10 = 1024 buffers

/// A placement under repair.
pub(crate) struct Repair<'a> {
    layout: &'a Layout,
    offsets: Vec<i64>,
    tops: TopTree,
    index: TimeIndex,
    rng: Rng,
    /// Per buffer, the step that took it into the window.
    stamp: Vec<u32>,
    epoch: u32,
    // Scratch, kept between steps so that a step allocates little.
    near: Vec<u32>,
    window: Vec<u32>,
    keys: Vec<(i64, u32)>,
    /// The window's piece ends: its compressed time.
    times: Vec<u32>,
    placed: Vec<i64>,
    stack: Vec<(u32, u32)>,
    scratch: Scratch,
    /// Steps whose window the exact search placed lower.
    pub(crate) by_exact: u64,
}

impl<'a> Repair<'a> {
    /// Starts from `offsets`, a valid placement of `layout`'s buffers.
    pub(crate) fn new(
        layout: &'a Layout,
        offsets: Vec<i64>,
        seed: u64,
        poll: &mut Poll<'_>,
    ) -> Result<Repair<'a>, Stop> {
        let index = TimeIndex::new(layout, poll)?;
        let tops = TopTree::new((0..layout.len()).map(|b| offsets[b] + layout.size[b]));
        Ok(Repair {
            layout,
            tops,
            index,
            rng: Rng::new(seed ^ 0x5EED_2E9A_1200_0000),
            stamp: alloc::vec![0; layout.len()],
            epoch: 0,
            offsets,
            near: Vec::new(),
            window: Vec::new(),
            keys: Vec::new(),
            times: Vec::new(),
            placed: Vec::new(),
            stack: Vec::new(),
            scratch: Scratch::default(),
            by_exact: 0,
        })
    }

    /// Starts over from another placement (the index over time stays).
    pub(crate) fn reset(&mut self, offsets: Vec<i64>, seed: u64) {
        let layout = self.layout;
        self.tops = TopTree::new((0..layout.len()).map(|b| offsets[b] + layout.size[b]));
        self.offsets = offsets;
        self.rng = Rng::new(seed ^ 0x5EED_2E9A_1200_0000);
    }

    /// The current height.
    pub(crate) fn height(&self) -> i64 {
        self.tops.height()
    }

    /// The current offsets.
    pub(crate) fn offsets(&self) -> &[i64] {
        &self.offsets
    }

    /// One step; whether the window came out strictly lower.
    pub(crate) fn step(&mut self, target: i64, poll: &mut Poll<'_>) -> Result<bool, Stop> {
        let layout = self.layout;
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
        let peak = self.tops.highest();
        if layout.fixed[peak].is_some() {
            // A fixed buffer is the peak: nothing to repair.
            return Ok(false);
        }
        let k = 1usize
            << self
                .rng
                .below(i64::from(MIN_WINDOW), i64::from(MAX_WINDOW) + 1);
        let e = layout.extent[peak];
        let span = e.end - e.first;
        let widen = [0u32, 0, 1, 2, 4][self.rng.below(0, 5) as usize];
        let grow = span.saturating_mul(widen) / 2;
        let (a, b) = (
            e.first.saturating_sub(grow),
            e.end.saturating_add(grow).min(layout.times as u32),
        );
        // The window: the buffers alive near the peak whose offsets are
        // in the top band, from a floor chosen so that about `k` are.
        self.near.clear();
        self.index.query(a, b, &mut self.near, &mut self.stack);
        self.keys.clear();
        for &x in &self.near {
            if layout.fixed[x as usize].is_none() {
                self.keys.push((-self.offsets[x as usize], x));
            }
        }
        poll.tick(4 * self.near.len() as u64)?;
        if self.keys.is_empty() {
            return Ok(false);
        }
        let floor = if self.rng.below(0, 2) == 0 {
            // About `k` buffers.
            if self.keys.len() > k {
                self.keys.select_nth_unstable(k - 1);
            }
            -self.keys[(k - 1).min(self.keys.len() - 1)].0
        } else {
            // A band some times as high as the excess over the target:
            // the buffers at the top may be too small to matter.
            let excess = (self.height() - target).max(1);
            let times = 1i64 << self.rng.below(0, 7);
            self.height()
                .saturating_sub(excess.saturating_mul(times))
                .max(0)
        }
        .min(self.offsets[peak]);
        self.window.clear();
        self.times.clear();
        let mut old_top = i64::MIN;
        for &(key, x) in &self.keys {
            if -key < floor {
                continue;
            }
            self.window.push(x);
            self.stamp[x as usize] = self.epoch;
            for p in layout.pieces_of(x as usize) {
                self.times.push(p.first);
                self.times.push(p.end);
            }
            old_top = old_top.max(self.offsets[x as usize] + layout.size[x as usize]);
        }
        // Time compressed to the window's own pieces.
        let time = LocalTime::from_times(core::mem::take(&mut self.times));
        let (first, end) = time.span();
        let slots = time.slots();
        let mut occ = Occupancy::new(slots);
        occ.insert(0, slots as u32, 0, floor);
        // What else is in use above the floor during the window's
        // lifetimes stays where it is.
        self.near.clear();
        self.index
            .query(first, end, &mut self.near, &mut self.stack);
        for &x in &self.near {
            let at = self.offsets[x as usize];
            if self.stamp[x as usize] == self.epoch || at + layout.size[x as usize] <= floor {
                poll.tick(1)?;
                continue;
            }
            layout.occupy(&mut occ, Some(&time), x as usize, at);
            poll.tick(16)?;
        }
        let exact = self.window.len() <= EXACT_WINDOW && self.rng.below(0, 4) == 0;
        let new_top = match exact {
            true => match self.exact_window(&occ, &time, floor, old_top, poll)? {
                Some(top) => {
                    self.by_exact += 1;
                    top
                }
                None => i64::MAX,
            },
            false => {
                self.order_window();
                self.place_window(&mut occ, &time, poll)?
            }
        };
        self.times = time.into_times();
        if new_top > old_top {
            return Ok(false);
        }
        for (&x, &at) in self.window.iter().zip(&self.placed) {
            self.offsets[x as usize] = at;
            self.tops.set(x as usize, at + layout.size[x as usize]);
        }
        Ok(new_top < old_top)
    }

    /// The window placed by the exact search strictly below `old_top`,
    /// every other buffer held where it is (as fixed blocks of memory per
    /// run of slots, read off `occ`); the highest top, with the offsets in
    /// `placed`, or `None` when it finds nothing within its node limit or
    /// the window has buffers in pieces (those are first-fit's).
    fn exact_window(
        &mut self,
        occ: &Occupancy,
        time: &LocalTime,
        floor: i64,
        old_top: i64,
        poll: &mut Poll<'_>,
    ) -> Result<Option<i64>, Stop> {
        use crate::problem::{Buffer, Problem};
        let layout = self.layout;
        // Offsets shift down by `base`, a multiple of every alignment in
        // the window, so that the shifted problem keeps them.
        let mut lcm = 1i64;
        for &x in &self.window {
            let b = x as usize;
            let pieces = layout.pieces_of(b);
            if pieces.len() != 1 || pieces[0].lower != 0 {
                return Ok(None);
            }
            let a = layout.align[b];
            lcm = match (lcm / gcd(lcm, a)).checked_mul(a) {
                Some(l) if l <= 1 << 30 => l,
                _ => return Ok(None),
            };
        }
        let base = floor - floor.rem_euclid(lcm);
        let capacity = old_top - 1 - base;
        if capacity <= 0 {
            return Ok(None);
        }
        let mut buffers: Vec<Buffer> = Vec::with_capacity(self.window.len());
        for &x in &self.window {
            let b = x as usize;
            let p = layout.pieces_of(b)[0];
            let (f, t) = LocalTime::map(Some(time), p.first, p.end);
            let mut buffer = Buffer::new("", i64::from(f), i64::from(t), layout.size[b]);
            buffer.alignment = layout.align[b];
            buffers.push(buffer);
        }
        // What is in use around the window, as blocks that run over the
        // slots where the same interval is in use.
        let slots = time.slots() as u32;
        let mut open: alloc::collections::BTreeMap<(i64, i64), u32> = Default::default();
        let mut now: Vec<(i64, i64)> = Vec::new();
        let mut closed: Vec<((i64, i64), u32)> = Vec::new();
        let block = |buffers: &mut Vec<Buffer>, (lo, hi): (i64, i64), from: u32, to: u32| {
            let (lo, hi) = (lo.max(base), hi.min(base + capacity));
            if lo < hi {
                let fixed = Buffer::new("", i64::from(from), i64::from(to), hi - lo);
                buffers.push(fixed.with_offset(lo - base));
            }
        };
        for t in 0..=slots {
            if t < slots {
                occ.in_use_at(t, &mut now);
            } else {
                now.clear();
            }
            closed.clear();
            closed.extend(
                open.iter()
                    .filter(|(k, _)| now.binary_search(k).is_err())
                    .map(|(&k, &v)| (k, v)),
            );
            for &(k, from) in &closed {
                open.remove(&k);
                block(&mut buffers, k, from, t);
            }
            for &k in &now {
                open.entry(k).or_insert(t);
            }
            poll.tick(4 + now.len() as u64)?;
        }
        let Ok(problem) = Problem::new(capacity, buffers) else {
            return Ok(None);
        };
        let params = crate::solver::Params {
            node_limit: Some(EXACT_NODES),
            ..crate::solver::Params::default()
        };
        let (verdict, stats) = crate::solver::solve(&problem, capacity, &params, poll.deadline());
        poll.tick(64 * stats.nodes + 16 * problem.len() as u64)?;
        let crate::solver::Verdict::Solved(offsets) = verdict else {
            return Ok(None);
        };
        self.placed.clear();
        let mut top = i64::MIN;
        for (i, &x) in self.window.iter().enumerate() {
            let at = offsets[i] + base;
            self.placed.push(at);
            top = top.max(at + layout.size[x as usize]);
        }
        Ok(Some(top))
    }

    /// Orders the window: by decreasing size (first-fit's order), the
    /// same with noise, by decreasing area, by start (a stack), or by
    /// current offset (which packs what is there downward).
    fn order_window(&mut self) {
        let layout = self.layout;
        let kind = self.rng.below(0, 5);
        let spread = [0.0, 0.05, 0.2, 0.5][self.rng.below(0, 4) as usize];
        self.keys.clear();
        for &x in &self.window {
            let b = x as usize;
            let key = match kind {
                0 => -layout.size[b],
                1 => self.offsets[b],
                2 => -(layout.size[b] as f64 * layout.length[b] as f64) as i64,
                // Start order, longer first: a stack, as nested lifetimes
                // want.
                3 => {
                    let e = layout.extent[b];
                    (i64::from(e.first) << 32) - i64::from(e.end - e.first)
                }
                _ => -(layout.size[b] as f64 * (1.0 + spread * self.rng.signed_unit())) as i64,
            };
            self.keys.push((key, x));
        }
        self.keys.sort_unstable();
        self.window.clear();
        self.window.extend(self.keys.iter().map(|k| k.1));
    }

    /// First-fit of the window in its order over `occ` (in the window's
    /// compressed `time`); returns the highest top.
    fn place_window(
        &mut self,
        occ: &mut Occupancy,
        time: &LocalTime,
        poll: &mut Poll<'_>,
    ) -> Result<i64, Stop> {
        let layout = self.layout;
        self.placed.clear();
        let mut top = i64::MIN;
        for i in 0..self.window.len() {
            let b = self.window[i] as usize;
            let at = layout.lowest_free(occ, Some(time), b, false, &mut self.scratch, poll)?;
            layout.occupy(occ, Some(time), b, at);
            self.placed.push(at);
            top = top.max(at + layout.size[b]);
            poll.tick(1)?;
        }
        Ok(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deadline::Deadline;
    use crate::heuristic::{plain, Strategy, Variant};
    use crate::problem::{Buffer, Gap, Problem, Window};
    use crate::solution::{validate_below, Solution};

    /// A random problem with alignment, gaps, windows and (valid) fixed
    /// offsets: fixed buffers are taken where a first placement put them.
    fn random_problem(rng: &mut Rng, n: usize, horizon: i64) -> Problem {
        let mut buffers = Vec::new();
        for i in 0..n {
            let lower = rng.below(0, horizon - 1);
            let upper = rng.below(lower + 1, horizon + 1);
            let size = rng.below(1, 40);
            let mut b = Buffer::new(alloc::format!("b{i}"), lower, upper, size);
            if rng.below(0, 4) == 0 {
                b.alignment = [2, 4, 8][rng.below(0, 3) as usize];
            }
            if upper - lower >= 3 && rng.below(0, 4) == 0 {
                let gl = rng.below(lower + 1, upper - 1);
                let gu = rng.below(gl + 1, upper);
                let window = (rng.below(0, 2) == 0).then(|| {
                    let wl = rng.below(0, size);
                    Window {
                        lower: wl,
                        upper: rng.below(wl + 1, size + 1),
                    }
                });
                b.gaps.push(Gap {
                    lower: gl,
                    upper: gu,
                    window,
                });
            }
            buffers.push(b);
        }
        let problem = Problem::new(i64::MAX, buffers.clone()).unwrap();
        let first = crate::heuristic::run(&problem, Strategy::FirstFit).unwrap();
        for (b, &o) in buffers.iter_mut().zip(&first.offsets) {
            if rng.below(0, 10) == 0 {
                b.offset = Some(o);
            }
        }
        Problem::new(i64::MAX, buffers).unwrap()
    }

    /// Every step leaves a valid placement, never higher, whose height
    /// the tree reports; and repair does lower placements.
    #[test]
    fn repair_steps_keep_placements_valid_and_never_raise_them() {
        let mut rng = Rng::new(5);
        let deadline = Deadline::none();
        let (mut lowered, mut by_exact) = (0, 0);
        for case in 0..300 {
            let n = rng.below(2, 60) as usize;
            let horizon = rng.below(4, 40);
            let problem = random_problem(&mut rng, n, horizon);
            let mut poll = Poll::new(&deadline, u64::MAX);
            let layout = Layout::new(&problem, &mut poll).unwrap();
            let variant = Variant::plain(Strategy::Online);
            let start = plain(&layout, variant, &mut poll).unwrap();
            let target = layout.max_load.max(layout.fixed_top);
            let mut repair = Repair::new(&layout, start.offsets, case, &mut poll).unwrap();
            let mut height = repair.height();
            assert_eq!(height, start.height);
            for _ in 0..40 {
                if repair.height() <= target {
                    break;
                }
                repair.step(target, &mut poll).unwrap();
                let offsets = repair.offsets().to_vec();
                let top = problem
                    .buffers()
                    .iter()
                    .zip(&offsets)
                    .map(|(b, &o)| o + b.size)
                    .max()
                    .unwrap();
                assert_eq!(repair.height(), top, "case {case}");
                assert!(top <= height, "case {case}: {top} above {height}");
                validate_below(&problem, &Solution { offsets }, i64::MAX)
                    .unwrap_or_else(|e| panic!("case {case}: {e}"));
                if top < height {
                    lowered += 1;
                }
                height = top;
            }
            by_exact += repair.by_exact;
        }
        assert!(lowered > 50, "repair lowered only {lowered} times");
        assert!(by_exact > 10, "the exact search lowered {by_exact} windows");
    }

    /// The index answers exactly the buffers alive in a range.
    #[test]
    fn time_index_finds_exactly_the_overlapping_buffers() {
        let mut rng = Rng::new(9);
        let deadline = Deadline::none();
        for _ in 0..100 {
            let n = rng.below(1, 80) as usize;
            let horizon = rng.below(2, 60);
            let problem = random_problem(&mut rng, n, horizon);
            let mut poll = Poll::new(&deadline, u64::MAX);
            let layout = Layout::new(&problem, &mut poll).unwrap();
            let index = TimeIndex::new(&layout, &mut poll).unwrap();
            let (mut out, mut stack) = (Vec::new(), Vec::new());
            for _ in 0..20 {
                let a = rng.below(0, layout.times as i64 + 1) as u32;
                let b = rng.below(i64::from(a), layout.times as i64 + 2) as u32;
                out.clear();
                index.query(a, b, &mut out, &mut stack);
                out.sort_unstable();
                let want: Vec<u32> = (0..n as u32)
                    .filter(|&x| {
                        let e = layout.extent[x as usize];
                        e.first < b && e.end > a
                    })
                    .collect();
                assert_eq!(out, want);
            }
        }
    }

    /// A range of the layout's slots maps to exactly the local slots it
    /// shares a time with.
    #[test]
    fn local_time_maps_ranges_to_the_slots_they_meet() {
        let mut rng = Rng::new(13);
        for _ in 0..200 {
            let times: Vec<u32> = (0..rng.below(2, 12))
                .map(|_| rng.below(0, 30) as u32)
                .collect();
            let time = LocalTime::from_times(times);
            let ends = time.clone_times();
            for _ in 0..20 {
                let f = rng.below(0, 32) as u32;
                let t = rng.below(i64::from(f) + 1, 34) as u32;
                let (lo, hi) = LocalTime::map(Some(&time), f, t);
                for j in 0..ends.len() - 1 {
                    let meets = ends[j] < t && f < ends[j + 1];
                    let inside = lo as usize <= j && j < hi as usize;
                    // Slots before the first end or after the last are
                    // outside local time: a range there meets nothing.
                    assert_eq!(meets, inside, "{ends:?} [{f}, {t}) slot {j}");
                }
            }
        }
    }

    #[test]
    fn top_tree_finds_the_highest() {
        let mut rng = Rng::new(3);
        for n in 1..50usize {
            let mut plain: Vec<i64> = (0..n).map(|_| rng.below(0, 100)).collect();
            let mut tree = TopTree::new(plain.iter().copied());
            for _ in 0..50 {
                let i = rng.below(0, n as i64) as usize;
                plain[i] = rng.below(0, 100);
                tree.set(i, plain[i]);
                let max = *plain.iter().max().unwrap();
                assert_eq!(tree.height(), max);
                assert_eq!(plain[tree.highest()], max);
            }
        }
    }
}
