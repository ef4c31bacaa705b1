//! Blocks: a few rectangles that between them tile a rectangle with
//! nothing wasted, where no two of them fit together exactly. A pinwheel
//! (a centre ringed by four blades, each overlapping two neighbours'
//! sides in part) is the smallest such tiling, and merging pairs never
//! rebuilds it. A block is a set of three to [`MOST`] plain rectangles
//! inside one span of time `[s, e)` whose sizes add up to one total `h`
//! at every time of the span, and that some placement puts inside
//! `[0, h)`; it merges into one rectangle of `h` over `[s, e)`, its
//! members at the offsets that placement gave them.
//!
//! A block is sought from each rectangle in turn as its earliest start:
//! the rectangles that start with it make its first column, whose total
//! is `h`; then the first time where the members fall short of `h` (the
//! memory before it is full) must be where another member starts, so
//! only the rectangles that start there, and fit under `h` wherever the
//! members already are, are tried. Exact sums of unrelated sizes are
//! rare, so where pieces were cut from rectangles the block found is
//! nearly always one that was cut: a guess like the other passes', but a
//! sharp one. Any placement of the coarse problem lifts to a valid one
//! all the same: the members lie inside the block without overlap.

use alloc::vec::Vec;

use super::rect::{Members, Rect};
use super::tiling::{tile, MOST};
use crate::base::math::lcm_within;
use crate::deadline::{sort_polled, Poll, Stop};

/// Search steps allowed from one rectangle (a step scans a block's
/// members, at most [`MOST`]).
const STEPS: u32 = 1024;
/// A first column is chosen among the rectangles that start at its
/// time: where more than this many do, the block is sought the other way.
const CROWDED: usize = 12;

/// A block found: its span, height, alignment, and per member its
/// offset inside (the first member is the rectangle it was sought from).
struct Block {
    lower: i64,
    upper: i64,
    size: i64,
    align: i64,
    members: Vec<(u32, i64)>,
}

/// One pass: merges every block found (each rectangle in at most one),
/// sought forward in time and then backward (a block whose first column
/// is too crowded, at the start of the problem, say, is found from its
/// last). Returns the search steps it took. A `trial` stops early where
/// blocks are rare (fewer than one rectangle in 8 merged after the first
/// [`TRIAL`] searches): where nothing tiles, the searches run out of
/// steps, and a problem with no such structure loses little to them.
pub(super) fn block_pass(
    rects: &mut [Rect],
    members: &mut Members,
    alive: &mut Vec<u32>,
    trial: bool,
    poll: &mut Poll<'_>,
) -> Result<u64, Stop> {
    let mut steps = 0;
    for backward in [false, true] {
        match one_way(rects, members, alive, backward, trial, poll)? {
            (taken, true) => steps += taken,
            (taken, false) => return Ok(steps + taken),
        }
    }
    Ok(steps)
}

/// Searches a trial makes before it judges whether blocks are rare.
const TRIAL: usize = 4096;

/// [`block_pass`] one way in time: backward, on the rectangles with time
/// turned around.
fn one_way(
    rects: &mut [Rect],
    members: &mut Members,
    alive: &mut Vec<u32>,
    backward: bool,
    trial: bool,
    poll: &mut Poll<'_>,
) -> Result<(u64, bool), Stop> {
    let turned = |x: Rect| match backward {
        false => x,
        true => Rect {
            lower: -x.upper,
            upper: -x.lower,
            ..x
        },
    };
    let mut view: Vec<Rect> = rects.iter().map(|&x| turned(x)).collect();
    let mut starts: Vec<(i64, u32)> = alive
        .iter()
        .filter(|&&r| view[r as usize].plain)
        .map(|&r| (view[r as usize].lower, r))
        .collect();
    sort_polled(&mut starts, poll)?;
    let mut gone = alloc::vec![false; rects.len()];
    let mut set = Vec::with_capacity(MOST);
    let mut steps = 0u64;
    let mut merged = 0;
    let mut rare = false;
    for at in 0..starts.len() {
        let r = starts[at].1;
        if trial && at == TRIAL && 8 * merged < at {
            rare = true;
            break;
        }
        if gone[r as usize] {
            continue;
        }
        set.clear();
        set.push(r);
        let mut search = Search {
            rects: &view,
            starts: &starts,
            gone: &gone,
            set: &mut set,
            steps: 0,
            found: None,
            rival: false,
        };
        if search.starting(view[r as usize].lower).len() <= CROWDED {
            search.column(at);
        }
        steps += u64::from(search.steps);
        poll.tick(MOST as u64 * u64::from(search.steps))?;
        // Only a block with no rival is merged: where sizes repeat (a few
        // sizes, many sums) several blocks start from one rectangle, and
        // any of them is likelier a coincidence than a cut.
        let complete = search.steps <= STEPS && !search.rival;
        if let (true, Some(mut block)) = (complete, search.found) {
            if backward {
                (block.lower, block.upper) = (-block.upper, -block.lower);
            }
            merge(rects, members, &block, &mut gone);
            merged += block.members.len();
            view[block.members[0].0 as usize] = turned(rects[block.members[0].0 as usize]);
        }
    }
    alive.retain(|&r| !gone[r as usize]);
    Ok((steps, !rare))
}

/// Whether two blocks have the same members.
fn same_members(a: &Block, b: &Block) -> bool {
    a.members.len() == b.members.len()
        && a.members
            .iter()
            .all(|x| b.members.iter().any(|y| y.0 == x.0))
}

/// Merges `block` into its first member's rectangle.
fn merge(rects: &mut [Rect], members: &mut Members, block: &Block, gone: &mut [bool]) {
    let (first, inside) = block.members[0];
    members.base[first as usize] += inside;
    for &(r, inside) in &block.members[1..] {
        members.absorb(first, r, inside);
        gone[r as usize] = true;
    }
    let rect = &mut rects[first as usize];
    rect.lower = block.lower;
    rect.upper = block.upper;
    rect.size = block.size;
    rect.align = block.align;
}

/// The search for a block from one rectangle (`set[0]`).
struct Search<'a> {
    rects: &'a [Rect],
    /// Plain rectangles by start.
    starts: &'a [(i64, u32)],
    gone: &'a [bool],
    /// The members so far.
    set: &'a mut Vec<u32>,
    steps: u32,
    /// The first block found, and whether another was.
    found: Option<Block>,
    rival: bool,
}

impl Search<'_> {
    fn rect(&self, r: u32) -> Rect {
        self.rects[r as usize]
    }

    /// A step of the search, or `false` when its steps are spent.
    fn step(&mut self) -> bool {
        self.steps += 1;
        self.steps <= STEPS
    }

    /// Positions in `starts` of the rectangles that start at `t`.
    fn starting(&self, t: i64) -> core::ops::Range<usize> {
        let from = self.starts.partition_point(|&(l, _)| l < t);
        let to = from + self.starts[from..].partition_point(|&(l, _)| l <= t);
        from..to
    }

    /// The members' total size at time `t`.
    fn load_at(&self, t: i64) -> i64 {
        self.set
            .iter()
            .map(|&r| self.rect(r))
            .filter(|x| x.lower <= t && t < x.upper)
            .map(|x| x.size)
            .sum()
    }

    /// The members' highest total over `[from, to)`: at its start or
    /// where a member starts inside it (totals change only there).
    fn most_over(&self, from: i64, to: i64) -> i64 {
        let mut most = self.load_at(from);
        for &r in self.set.iter() {
            let l = self.rect(r).lower;
            if from < l && l < to {
                most = most.max(self.load_at(l));
            }
        }
        most
    }

    /// The span's end and the earliest time in the span where the
    /// members fall short of `h` (the end itself when they fill it).
    fn shortfall(&self, h: i64) -> (i64, i64) {
        let end = self
            .set
            .iter()
            .map(|&r| self.rect(r).upper)
            .max()
            .unwrap_or(0);
        let s = self.rect(self.set[0]).lower;
        // Totals change only where a member starts or ends.
        let mut first = if self.load_at(s) < h { s } else { end };
        for &r in self.set.iter() {
            let x = self.rect(r);
            for t in [x.lower, x.upper] {
                if t < first && t < end && self.load_at(t) < h {
                    first = t;
                }
            }
        }
        (end, first)
    }

    /// Grows the first column (rectangles that start with `set[0]`, in
    /// the order of `starts` after position `after`), trying at each size
    /// of it the block of its total.
    fn column(&mut self, after: usize) {
        if !self.step() {
            return;
        }
        let h: i64 = self.set.iter().map(|&r| self.rect(r).size).sum();
        self.fill(h, usize::MAX);
        if self.set.len() == MOST || self.done() {
            return;
        }
        let s = self.rect(self.set[0]).lower;
        let column = self.starting(s);
        for at in (after + 1).max(column.start)..column.end {
            let y = self.starts[at].1;
            if self.gone[y as usize] {
                continue;
            }
            self.set.push(y);
            self.column(at);
            self.set.pop();
            if self.done() {
                return;
            }
        }
    }

    /// Whether the search may stop: its steps spent, or a rival found.
    fn done(&self) -> bool {
        self.rival || self.steps > STEPS
    }

    /// Fills the block of height `h` from left to right: the first time
    /// the members fall short of it is where the next one must start.
    /// `last`: the position in `starts` of the member added last (those
    /// that start at one time are added in the order of `starts`, so that
    /// each set is tried once).
    fn fill(&mut self, h: i64, last: usize) {
        if !self.step() {
            return;
        }
        let (end, short) = self.shortfall(h);
        if short == end && self.set.len() >= 3 {
            if let Some(block) = self.tile(h, end) {
                // A block is not grown further (a larger one holding it
                // is no rival: it would merge on the next pass).
                // The same members come again in another order of their
                // starts at one time: not a rival.
                match &self.found {
                    None => self.found = Some(block),
                    Some(first) => self.rival |= !same_members(first, &block),
                }
                return;
            }
        }
        if self.set.len() == MOST {
            return;
        }
        let from = self.starting(short);
        // After the last member added, where it started at this time too.
        let after = if last != usize::MAX && from.contains(&last) {
            last + 1
        } else {
            from.start
        };
        // What falls short at `short` is filled by members that start
        // there: where those that could join fall short together, no set
        // fills it.
        let fits = |this: &Self, at: usize| {
            let y = this.starts[at].1;
            let x = this.rect(y);
            !this.gone[y as usize]
                && !this.set.contains(&y)
                && this.most_over(x.lower, x.upper.min(end)) + x.size <= h
        };
        let could: i64 = (after..from.end)
            .filter(|&at| fits(self, at))
            .map(|at| self.rect(self.starts[at].1).size)
            .sum();
        if short < end && could < h - self.load_at(short) {
            return;
        }
        for at in after..from.end {
            if !fits(self, at) {
                continue;
            }
            let y = self.starts[at].1;
            self.set.push(y);
            self.fill(h, at);
            self.set.pop();
            if self.done() {
                return;
            }
        }
    }

    /// A placement of the members inside `[0, h)` (see [`tile`]), as a
    /// block over `[set[0].lower, end)`, or `None`.
    fn tile(&mut self, h: i64, end: i64) -> Option<Block> {
        let k = self.set.len();
        let mut x = [self.rect(self.set[0]); MOST];
        let mut align = 1i64;
        for (i, &r) in self.set.iter().enumerate() {
            x[i] = self.rect(r);
            align = lcm_within(align, x[i].align, 1 << 40)?;
        }
        let left = STEPS.saturating_sub(self.steps);
        let (at, steps) = tile(&x[..k], h, left);
        self.steps += steps;
        // A member's offset inside is a multiple of its alignment, and
        // the block's offset of every member's: the lifted offsets keep
        // them.
        Some(Block {
            lower: x[0].lower,
            upper: end,
            size: h,
            align,
            members: self.set.iter().zip(at?).map(|(&r, a)| (r, a)).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::rect::singletons;
    use super::*;
    use crate::base::rng::Rng;
    use crate::deadline::Deadline;
    use crate::model::problem::{Buffer, Problem};
    use crate::model::solution::{validate, Solution};

    /// The pieces a pinwheel was cut into (recursively: a centre ringed by
    /// four blades, the largest piece cut again) merge back, block by
    /// block, into the one rectangle, and the coarse problem's placement
    /// at its height lifts to the optimum. Without blocks none merge.
    #[test]
    fn pinwheel_pieces_rebuild_their_rectangle() {
        for (n, seed) in [
            (5, 0),
            (21, 1),
            (101, 2),
            (1_001, 3),
            (1_001, 4),
            (1_001, 5),
            (4_001, 5),
            (4_001, 6),
        ] {
            let spec = crate::gen::Spec::new(n, seed).with_family(crate::gen::Family::Pinwheel);
            let (buffers, height, _) = crate::gen::pinwheel_with_offsets(spec);
            let problem = Problem::new(i64::MAX, buffers).unwrap();
            let deadline = Deadline::none();
            let mut poll = Poll::new(&deadline, u64::MAX);
            let making = super::super::Making {
                unguided: false,
                finer: false,
            };
            let coarse = super::super::coarsen(&problem, making, &mut poll)
                .unwrap()
                .unwrap();
            // A few blocks may be coincidences (sums that match by chance):
            // larger problems keep a few rectangles.
            let left = coarse.problem.len();
            assert!(left <= 1.max(n / 64), "n {n} seed {seed}: {left} left");
            if left == 1 {
                let lifted = Solution {
                    offsets: coarse.lift(&[0]),
                };
                validate(&problem, &lifted).unwrap();
                assert_eq!(lifted.height(&problem), height);
            }
        }
    }

    /// A trial gives up where blocks are rare: on buffers whose sizes owe
    /// nothing to their lifetimes it takes a small part of a whole pass's
    /// steps, while on pinwheel pieces it merges as the whole pass does.
    #[test]
    fn a_trial_gives_up_where_blocks_are_rare() {
        for (family, rare) in [
            (crate::gen::Family::Independent, true),
            (crate::gen::Family::Issued, true),
            (crate::gen::Family::Pinwheel, false),
        ] {
            let spec = crate::gen::Spec::new(20_001, 1).with_family(family);
            let problem = Problem::new(i64::MAX, crate::gen::generate(spec)).unwrap();
            let pass = |trial: bool| {
                let (mut rects, mut members, mut alive) = singletons(problem.buffers());
                let deadline = Deadline::none();
                let mut poll = Poll::new(&deadline, u64::MAX);
                let steps = block_pass(&mut rects, &mut members, &mut alive, trial, &mut poll);
                (steps.unwrap(), alive.len())
            };
            let ((tried, left), (whole, all_left)) = (pass(true), pass(false));
            if rare {
                assert!(4 * tried < whole, "{}: {tried} of {whole}", family.name());
            } else {
                assert_eq!(left, all_left, "{}", family.name());
            }
        }
    }

    /// Whatever the blocks merged, every placement of the coarse problem
    /// lifts to a valid one: on pieces of small pinwheels and guillotine
    /// cuts, of mixed alignments, among buffers that fit nothing, the
    /// coarse rectangles stacked one on another and placed first-fit.
    #[test]
    fn merged_blocks_lift_to_valid_placements() {
        let mut rng = Rng::new(11);
        let mut merged = 0;
        for case in 0..300 {
            let mut buffers = Vec::new();
            for piece in 0..rng.below(1, 6) {
                let spec =
                    crate::gen::Spec::new(rng.below(5, 30) as usize, case * 8 + piece as u64)
                        .with_family(
                            [crate::gen::Family::Pinwheel, crate::gen::Family::Planted]
                                [rng.below(0, 2) as usize],
                        );
                let (pieces, _, _) = match spec.family {
                    crate::gen::Family::Pinwheel => crate::gen::pinwheel_with_offsets(spec),
                    _ => (crate::gen::generate(spec), 0, Vec::new()),
                };
                let shift = rng.below(0, 40);
                let scale = [1, 1, 3][rng.below(0, 3) as usize];
                for mut b in pieces {
                    b.lower = b.lower * scale + shift;
                    b.upper = b.upper * scale + shift;
                    b.size = (b.size / 512).max(1) * 8;
                    b.alignment = [1, 8, 16][rng.below(0, 3) as usize];
                    buffers.push(b);
                }
            }
            for _ in 0..rng.below(0, 20) {
                let lower = rng.below(0, 200);
                buffers.push(Buffer::new(
                    "",
                    lower,
                    lower + rng.below(1, 50),
                    8 * rng.below(1, 64),
                ));
            }
            for (i, b) in buffers.iter_mut().enumerate() {
                b.id = alloc::format!("{i}");
            }
            let problem = Problem::new(i64::MAX, buffers).unwrap();
            let n = problem.len();
            let (mut rects, mut members, mut alive) = singletons(problem.buffers());
            let deadline = Deadline::none();
            let mut poll = Poll::new(&deadline, u64::MAX);
            block_pass(&mut rects, &mut members, &mut alive, false, &mut poll).unwrap();
            merged += n - alive.len();
            // Stacked: each rectangle above the last, its members inside.
            let mut offsets = alloc::vec![0i64; n];
            let mut bottom = 0i64;
            for &r in &alive {
                let x = rects[r as usize];
                bottom = crate::base::math::align_up(bottom, x.align);
                for &(m, inside) in &members.lists[r as usize] {
                    let b = &problem.buffers()[m as usize];
                    let at = bottom + inside + members.base[r as usize];
                    assert!(b.lower >= x.lower && b.upper <= x.upper, "case {case}");
                    assert!(
                        at >= bottom && at + b.size <= bottom + x.size,
                        "case {case}"
                    );
                    offsets[m as usize] = at;
                }
                bottom += x.size;
            }
            validate(&problem, &Solution { offsets }).unwrap();
        }
        assert!(merged > 500, "only {merged} merged");
    }
}
