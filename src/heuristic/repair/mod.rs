//! Local repair: lower a placement's peak a window at a time (a ruin and
//! recreate search whose steps cost the window, not the problem).
//!
//! A step takes a buffer at or near the top (the highest, or one of those
//! in a band below it, so that steps visit every place that stands up),
//! a neighbourhood of its lifetime, and the `k` buffers alive there with
//! the highest offsets (the *window*, 8 to 1,024 buffers); every other
//! buffer stays where it is. The window is placed again, first-fit in one
//! of a few orders or (small windows) by the exact search, among the
//! buffers that reach above its floor. Both kinds of buffer are found
//! through an index over time that also knows the highest top of every
//! subtree (see [`index`]), so a step visits the buffers up there and no
//! others: at a million buffers a step costs what it costs at a thousand.
//! Small windows go to the exact search or to first-fit by the work each
//! kind has taken per window it lowered so far ([`Shares::step_kinds`]): on some
//! families the exact search is what lowers, on others it costs many
//! first-fit steps for nothing.
//! The new placement is kept when the window's highest top is no higher
//! than it was: lower is progress, equal is a move along the plateau that
//! may open room for the next step. The height therefore never rises.
//!
//! Window sizes and neighbourhoods are drawn from a seeded stream, so a
//! repair is reproducible for a given seed and number of steps.

mod eject;
mod exact;
mod index;

use alloc::vec::Vec;

use super::layout::{Layout, LocalTime};
use super::occupancy::{Blocks, Slot};
use super::shares::Shares;
use crate::base::rng::Rng;
use crate::deadline::{Poll, Stop};
use exact::{exact_window, EXACT_WINDOW};
pub(crate) use index::TimeIndex;

/// The smallest and largest window a step takes.
const MIN_WINDOW: u32 = 3; // 2^3 = 8 buffers
const MAX_WINDOW: u32 = 10; // 2^10 = 1024 buffers

/// A placement under repair.
pub(crate) struct Repair<'a> {
    layout: &'a Layout,
    offsets: Vec<i64>,
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
    /// A window buffer's pieces in the window's time.
    pieces: Vec<Slot>,
    /// The window's memory in use, emptied for the next step.
    blocks: Blocks,
    /// Steps whose window the exact search placed lower.
    pub(crate) by_exact: u64,
    /// The work each kind of step took and what it gave.
    /// First-fit windows against the exact search's.
    kinds: Shares,
    ejection: eject::Ejection,
    /// Window steps against ejection attempts.
    methods: Shares,
}

impl<'a> Repair<'a> {
    /// Starts from `offsets`, a valid placement of `layout`'s buffers.
    pub(crate) fn new(
        layout: &'a Layout,
        offsets: Vec<i64>,
        seed: u64,
        poll: &mut Poll<'_>,
    ) -> Result<Repair<'a>, Stop> {
        let index = TimeIndex::new(layout, &offsets, poll)?;
        Ok(Repair {
            layout,
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
            pieces: Vec::new(),
            blocks: Blocks::default(),
            by_exact: 0,
            kinds: Shares::step_kinds(),
            ejection: eject::Ejection::new(layout),
            methods: Shares::methods(),
        })
    }

    /// Starts over from another placement (the index over time stays).
    pub(crate) fn reset(&mut self, offsets: Vec<i64>, seed: u64) {
        self.index.place_all(self.layout, &offsets);
        self.offsets = offsets;
        self.rng = Rng::new(seed ^ 0x5EED_2E9A_1200_0000);
    }

    /// The current height.
    pub(crate) fn height(&self) -> i64 {
        self.index.height()
    }

    /// The current offsets.
    pub(crate) fn offsets(&self) -> &[i64] {
        &self.offsets
    }

    /// One step, a window's or an ejection attempt's, the two sharing
    /// the work by what each took off the height per unit of work so far
    /// ([`Shares::methods`]); whether the height came down.
    pub(crate) fn step(&mut self, target: i64, poll: &mut Poll<'_>) -> Result<bool, Stop> {
        let before = (self.height(), poll.used());
        let ejecting = self.ejection.runs && self.methods.second_next();
        let lowered = match ejecting {
            true => self.eject_step(target, poll)?,
            false => self.window_step(target, poll)?,
        };
        let gap = (before.0 - target).max(1) as f64;
        let share = (before.0 - self.height()) as f64 / gap;
        self.methods.record(ejecting, poll.used() - before.1, share);
        Ok(lowered)
    }

    /// One ejection attempt (see [`eject`]); whether the height came
    /// down.
    fn eject_step(&mut self, target: i64, poll: &mut Poll<'_>) -> Result<bool, Stop> {
        let mut at = eject::Placement {
            layout: self.layout,
            offsets: &mut self.offsets,
            index: &mut self.index,
            rng: &mut self.rng,
            near: &mut self.near,
            stack: &mut self.stack,
        };
        self.ejection.step(&mut at, target, poll)
    }

    /// One window step; whether the window came out strictly lower.
    ///
    /// Long on purpose: a step is one pass (take the window out, place it
    /// again, keep or restore) over scratch arrays kept between steps, so
    /// that a step allocates nothing; its parts share those arrays.
    fn window_step(&mut self, target: i64, poll: &mut Poll<'_>) -> Result<bool, Stop> {
        let layout = self.layout;
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
        // The highest buffer, or one reaching into a band below the top
        // as deep as a share of the excess over the target.
        let height = self.height();
        let excess = (height - target).max(1);
        let bar = match self.rng.below(0, 3) {
            0 => height,
            _ => height - excess / (1i64 << self.rng.below(0, 5)),
        };
        let peak = self.index.high(bar, self.rng.next());
        if layout.fixed[peak].is_some() {
            // A fixed buffer stands there: nothing to repair.
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
        // The window: the `k` buffers living within [a, b) with the
        // highest offsets. Found by lowering a floor from the peak's offset, the
        // band doubling each time, until `k` are above it: the index
        // visits only buffers above the floor, so this costs about the
        // window, not the neighbourhood.
        let peak_top = self.offsets[peak] + layout.size[peak];
        let mut floor = self.offsets[peak];
        loop {
            self.near.clear();
            self.index
                .query(a, b, floor, &mut self.near, &mut self.stack);
            self.keys.clear();
            for &x in &self.near {
                let at = self.offsets[x as usize];
                let ex = layout.extent[x as usize];
                // Only buffers that live within the neighbourhood move:
                // one that reaches out of it would bring all it meets out
                // there into the step.
                if layout.fixed[x as usize].is_none() && at >= floor && ex.first >= a && ex.end <= b
                {
                    self.keys.push((-at, x));
                }
            }
            poll.tick(4 * self.near.len() as u64 + 16)?;
            if self.keys.len() >= k || floor <= 0 {
                break;
            }
            floor = floor.saturating_sub((peak_top - floor).max(1)).max(0);
        }
        if self.keys.len() > k {
            self.keys.select_nth_unstable(k - 1);
            self.keys.truncate(k);
            floor = -self.keys[k - 1].0;
            // The chosen buffer is in the window whatever its offset; the
            // ones it passes over above the floor are stepped around.
            if self.offsets[peak] < floor {
                floor = self.offsets[peak];
                self.keys.push((-floor, peak as u32));
            }
        }
        if self.keys.is_empty() {
            // The index reports buffers whose top is above the floor; a
            // peak of size zero has none, and there is nothing to lower.
            return Ok(false);
        }
        self.window.clear();
        self.times.clear();
        let mut old_top = i64::MIN;
        for &(_, x) in &self.keys {
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
        self.blocks.clear(floor);
        // What else reaches above the floor during the window's
        // lifetimes stays where it is.
        self.near.clear();
        self.index
            .query(first, end, floor, &mut self.near, &mut self.stack);
        for &x in &self.near {
            if self.stamp[x as usize] != self.epoch {
                let at = self.offsets[x as usize];
                for p in layout.pieces_of(x as usize) {
                    let (f, t) = LocalTime::map(Some(&time), p.first, p.end);
                    self.blocks.push(f, t, at + p.lower, at + p.upper);
                }
            }
        }
        self.blocks.sort();
        poll.tick(16 * self.near.len() as u64 + 16)?;
        let exact = self.window.len() <= EXACT_WINDOW && self.kinds.second_next();
        let spent_before = poll.used();
        let new_top = match exact {
            true => match exact_window(
                (self.layout, &self.window),
                &mut self.placed,
                (&self.blocks, &time),
                (floor, old_top),
                poll,
            )? {
                Some(top) => {
                    self.by_exact += 1;
                    top
                }
                None => i64::MAX,
            },
            false => {
                self.order_window();
                self.place_window(&time, poll)?
            }
        };
        self.times = time.into_times();
        let lowered = f64::from(u8::from(new_top < old_top));
        self.kinds
            .record(exact, poll.used() - spent_before, lowered);
        if new_top > old_top {
            return Ok(false);
        }
        for (&x, &at) in self.window.iter().zip(&self.placed) {
            self.offsets[x as usize] = at;
            self.index.set_top(x as usize, at + layout.size[x as usize]);
        }
        Ok(new_top < old_top)
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

    /// First-fit of the window in its order among the blocks of what
    /// stays (in the window's compressed `time`); returns the highest top.
    fn place_window(&mut self, time: &LocalTime, poll: &mut Poll<'_>) -> Result<i64, Stop> {
        let layout = self.layout;
        self.placed.clear();
        let mut top = i64::MIN;
        for i in 0..self.window.len() {
            let b = self.window[i] as usize;
            self.pieces.clear();
            self.pieces.extend(layout.pieces_of(b).iter().map(|p| {
                let (first, end) = LocalTime::map(Some(time), p.first, p.end);
                Slot {
                    first,
                    end,
                    lower: p.lower,
                    upper: p.upper,
                }
            }));
            let (at, visited) = self.blocks.lowest(&self.pieces, layout.align[b]);
            for p in &self.pieces {
                self.blocks
                    .insert(p.first, p.end, at + p.lower, at + p.upper);
            }
            self.placed.push(at);
            top = top.max(at + layout.size[b]);
            // Charged by the blocks its pass visited, at about the time a
            // unit of the exact windows' charge takes: the shares between
            // kinds of step compare work, not steps.
            poll.tick(1 + visited / 2)?;
        }
        Ok(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deadline::Deadline;
    use crate::heuristic::{plain_online, Strategy};
    use crate::model::problem::{Buffer, Gap, Problem, Window};
    use crate::model::solution::{validate_below, Solution};

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
        with_some_fixed(rng, buffers)
    }

    /// The problem of `buffers` with about a tenth of them fixed where
    /// first-fit put them (so that the fixed offsets are valid).
    pub(super) fn with_some_fixed(rng: &mut Rng, mut buffers: Vec<Buffer>) -> Problem {
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
            let start = plain_online(&layout, &mut poll);
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

    /// The index answers exactly the buffers alive in a range whose tops
    /// are above a floor, in order of first slot (then number), keeps the
    /// highest top under updates, and finds a buffer reaching any bar up
    /// to it.
    #[test]
    fn time_index_finds_exactly_the_buffers_alive_above_a_floor() {
        let mut rng = Rng::new(9);
        let deadline = Deadline::none();
        for _ in 0..100 {
            let n = rng.below(1, 80) as usize;
            let horizon = rng.below(2, 60);
            let problem = random_problem(&mut rng, n, horizon);
            let mut poll = Poll::new(&deadline, u64::MAX);
            let layout = Layout::new(&problem, &mut poll).unwrap();
            let mut offsets: Vec<i64> = (0..n).map(|_| rng.below(0, 100)).collect();
            let mut index = TimeIndex::new(&layout, &offsets, &mut poll).unwrap();
            let (mut out, mut stack) = (Vec::new(), Vec::new());
            for _ in 0..20 {
                let x = rng.below(0, n as i64) as usize;
                offsets[x] = rng.below(0, 100);
                index.set_top(x, offsets[x] + layout.size[x]);
                let top = |x: usize| offsets[x] + layout.size[x];
                let height = (0..n).map(top).max().unwrap();
                assert_eq!(index.height(), height.max(0));
                let bar = rng.below(0, height + 2);
                let high = index.high(bar, rng.next());
                assert!(top(high) >= bar.min(height));
                let a = rng.below(0, layout.times as i64 + 1) as u32;
                let b = rng.below(i64::from(a), layout.times as i64 + 2) as u32;
                let floor = rng.below(-1, 140);
                out.clear();
                index.query(a, b, floor, &mut out, &mut stack);
                let mut want: Vec<u32> = (0..n as u32)
                    .filter(|&x| {
                        let e = layout.extent[x as usize];
                        e.first < b && e.end > a && top(x as usize) > floor
                    })
                    .collect();
                want.sort_by_key(|&x| (layout.extent[x as usize].first, x));
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
}
