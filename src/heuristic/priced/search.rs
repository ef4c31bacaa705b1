//! Lowering what a placement pays: priced constructions, then a ruin and
//! recreate search.
//!
//! A construction takes every movable buffer out and puts them back one by
//! one, in one of a few orders, each where it pays least. The search then
//! repeats a step: take out a small set of buffers (the two ends of a pair
//! that pays, or a random buffer, grown through their partners and
//! obstacles, so that what is in the way moves too) and put them back, in a
//! random order or by size, each where it pays least. The step is kept when
//! the pairs touching the set pay no more than before (equal is a move
//! along the plateau), else undone. A step looks at the set's neighbours
//! only, and the placement is valid after every step (see [`super`]), so
//! what the search returns is valid and never pays more than its start.

use alloc::vec::Vec;

use super::frame::{meet, Priced};
use crate::base::rng::Rng;
use crate::deadline::{Deadline, Poll};
use crate::model::problem::Problem;
use crate::model::reuse;

/// The largest set a step takes out.
const MAX_SET: i64 = 12;

/// How long the search runs: until the deadline, or `steps` steps, or
/// `stall` steps in a row that lower nothing, whichever comes first. With
/// `kicks`, a stall does not stop it: it goes back to the best placement,
/// takes a few steps kept whatever they pay (a kick out of the local
/// minimum) and goes on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Effort {
    pub(crate) steps: u64,
    pub(crate) stall: u64,
    pub(crate) kicks: bool,
}

/// The orders the constructions put buffers back in.
#[derive(Clone, Copy)]
enum Order {
    /// Largest first (they have the fewest places).
    Size,
    /// By start time.
    Start,
    /// Dearest partners first, then largest.
    Price,
    /// By offset in the placement the search starts from (its shape,
    /// priced).
    Offset,
}

/// The placement the search ends with and what it pays, from `start` (a
/// valid placement of `problem`; with pools, buffer `i` in `pool_of[i]`,
/// where it stays); `None` when the frame is not built (see
/// [`Priced::new`]). Never pays more than `start`.
pub(crate) fn improve(
    problem: &Problem,
    start: &[i64],
    pool_of: Option<&[u32]>,
    seed: u64,
    deadline: &Deadline<'_>,
    effort: Effort,
) -> Option<(Vec<i64>, i64)> {
    let mut frame = Priced::new(problem, start, pool_of)?;
    let mut best = (start.to_vec(), reuse::cost(problem, start));
    let mut poll = Poll::new(deadline, 1 << 12);
    for order in [Order::Offset, Order::Size, Order::Price, Order::Start] {
        if best.1 == 0 || poll.now().is_err() {
            break;
        }
        let mut work = 0;
        if let Some(paid) = construct(&mut frame, start, order, &mut work) {
            if paid < best.1 {
                best = (frame.offsets.clone(), paid);
            }
        }
        if poll.tick(work).is_err() {
            break;
        }
    }
    frame.offsets.copy_from_slice(&best.0);
    let mut search = Search {
        rng: Rng::new(seed ^ 0x5052_4943_4544),
        set: Vec::new(),
        saved: Vec::new(),
        pairs: problem.penalties().collect(),
        cost: best.1,
    };
    let mut stalled = 0;
    for _ in 0..effort.steps {
        if search.cost == 0 || (stalled >= effort.stall && !effort.kicks) {
            break;
        }
        let mut work = 0;
        if stalled >= effort.stall {
            frame.offsets.copy_from_slice(&best.0);
            search.cost = best.1;
            for _ in 0..search.rng.below(2, 8) {
                search.step(&mut frame, &mut work, true);
            }
            stalled = 0;
        }
        let before = search.cost;
        search.step(&mut frame, &mut work, false);
        if search.cost < best.1 {
            best.0.copy_from_slice(&frame.offsets);
            best.1 = search.cost;
        }
        stalled = if search.cost < before { 0 } else { stalled + 1 };
        if poll.tick(work + 1).is_err() {
            break;
        }
    }
    Some(best)
}

/// Takes every movable buffer out and puts them back in `order`; what the
/// placement pays, or `None` (and the frame back at `start`) if one fits
/// nowhere.
fn construct(frame: &mut Priced<'_>, start: &[i64], order: Order, work: &mut u64) -> Option<i64> {
    let buffers = frame.problem.buffers();
    let mut list: Vec<u32> = (0..buffers.len() as u32)
        .filter(|&b| frame.movable[b as usize])
        .collect();
    let dearness = |b: u32| -> i64 {
        frame
            .partners_of(b as usize)
            .iter()
            .fold(0i64, |s, &(_, c)| s.saturating_add(c))
    };
    match order {
        Order::Size => list.sort_by_key(|&b| (-buffers[b as usize].size, b)),
        Order::Start => list.sort_by_key(|&b| (buffers[b as usize].lower, b)),
        Order::Price => list.sort_by_cached_key(|&b| (-dearness(b), -buffers[b as usize].size, b)),
        Order::Offset => list.sort_by_key(|&b| (start[b as usize], b)),
    }
    frame.offsets.copy_from_slice(start);
    frame.new_epoch();
    for &b in &list {
        frame.take_out(b as usize);
    }
    for &b in &list {
        if frame.put_back(b as usize, work).is_none() {
            frame.offsets.copy_from_slice(start);
            frame.new_epoch();
            return None;
        }
    }
    frame.new_epoch();
    Some(reuse::cost(frame.problem, &frame.offsets))
}

/// The ruin and recreate search's state.
struct Search {
    rng: Rng,
    /// The buffers a step takes out, and their offsets before it.
    set: Vec<u32>,
    saved: Vec<(u32, i64)>,
    /// The priced pairs, to find one that pays.
    pairs: Vec<(usize, usize, i64)>,
    /// What the frame's placement pays.
    cost: i64,
}

impl Search {
    /// One step on `frame`: take a set out, put it back where it pays
    /// least, keep it if the set's pairs pay no more (or it is a `kick`
    /// and every buffer found a place), else undo.
    fn step(&mut self, frame: &mut Priced<'_>, work: &mut u64, kick: bool) {
        self.choose(frame);
        if self.set.is_empty() {
            return;
        }
        let before = frame.paid_by(&self.set);
        self.saved.clear();
        frame.new_epoch();
        for &b in &self.set {
            self.saved.push((b, frame.offsets[b as usize]));
            frame.take_out(b as usize);
        }
        if self.rng.below(0, 2) == 0 {
            let buffers = frame.problem.buffers();
            let mut keyed: [(i64, u32); MAX_SET as usize] = [(0, 0); MAX_SET as usize];
            let len = self.set.len();
            for (k, &b) in self.set.iter().enumerate() {
                keyed[k] = (-buffers[b as usize].size, b);
            }
            keyed[..len].sort_unstable();
            for (k, &(_, b)) in keyed[..len].iter().enumerate() {
                self.set[k] = b;
            }
        } else {
            for k in (1..self.set.len()).rev() {
                let j = self.rng.below(0, k as i64 + 1) as usize;
                self.set.swap(k, j);
            }
        }
        let mut after = 0i64;
        let mut placed = true;
        for k in 0..self.set.len() {
            match frame.put_back(self.set[k] as usize, work) {
                Some(paid) => after = after.saturating_add(paid),
                None => {
                    placed = false;
                    break;
                }
            }
        }
        if placed && (after <= before || kick) {
            self.cost = self.cost - before + after;
            frame.new_epoch();
            return;
        }
        self.undo(frame);
    }

    /// Puts the set back where it was before the step.
    fn undo(&mut self, frame: &mut Priced<'_>) {
        for &(b, at) in &self.saved {
            frame.offsets[b as usize] = at;
        }
        frame.new_epoch();
    }

    /// Chooses the set a step takes out: the movable ends of a pair that
    /// pays (three steps in four, when a few draws find one) or a random
    /// movable buffer, then partners and obstacles of its members, up to a
    /// random size.
    fn choose(&mut self, frame: &Priced<'_>) {
        self.set.clear();
        let buffers = frame.problem.buffers();
        let n = buffers.len() as i64;
        if !self.pairs.is_empty() && self.rng.below(0, 4) != 0 {
            for _ in 0..16 {
                let (a, b, _) = self.pairs[self.rng.below(0, self.pairs.len() as i64) as usize];
                let (x, y) = (&buffers[a], &buffers[b]);
                if meet(frame.offsets[a], x.size, frame.offsets[b], y.size) {
                    self.set.extend(
                        [a, b]
                            .iter()
                            .filter(|&&e| frame.movable[e])
                            .map(|&e| e as u32),
                    );
                    break;
                }
            }
        }
        if self.set.is_empty() {
            for _ in 0..16 {
                let b = self.rng.below(0, n) as usize;
                if frame.movable[b] {
                    self.set.push(b as u32);
                    break;
                }
            }
        }
        if self.set.is_empty() {
            return;
        }
        let target = self.rng.below(1, MAX_SET + 1) as usize;
        for _ in 0..4 * MAX_SET {
            if self.set.len() >= target {
                break;
            }
            let m = self.set[self.rng.below(0, self.set.len() as i64) as usize] as usize;
            let next = if self.rng.below(0, 2) == 0 {
                let partners = frame.partners_of(m);
                partners
                    .get(self.rng.below(0, partners.len() as i64) as usize)
                    .map(|p| p.0)
            } else {
                let obstacles = frame.obstacles_of(m);
                obstacles
                    .get(self.rng.below(0, obstacles.len() as i64) as usize)
                    .map(|o| o.other)
            };
            if let Some(next) = next {
                if frame.movable[next as usize] && !self.set.contains(&next) {
                    self.set.push(next);
                }
            }
        }
    }
}
