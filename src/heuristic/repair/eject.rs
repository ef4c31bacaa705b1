//! Lowering by ejection chains: aim below the height, take out every
//! buffer that reaches above the aim, and put them back one at a time
//! where they displace the least, the displaced ones taken out in turn,
//! until none is out (a placement below the aim) or the attempt's moves
//! run out (then every buffer goes back where the attempt found it).
//!
//! This is the partial-colouring tabu search of graph colouring on the
//! interval form of the problem: a state is a valid placement of some
//! buffers below the aim, the rest out; a move puts one out-buffer at the
//! aligned offset below the aim where the buffers it meets weigh least
//! (their size times their lifetime: small short buffers are the easy ones
//! to put back), and takes those out. A buffer just put back may not be
//! taken out again for a while (its tenure), so that two buffers do not
//! take each other's place for ever. Unlike a window of the repair, a
//! chain reaches whatever the buffers at the peak lean on, however long
//! they live, and a move costs the buffers alive during one lifetime.
//!
//! Sound by construction: a move never makes two placed buffers meet (it
//! takes out every buffer the newcomer meets), and an attempt keeps its
//! result only when every buffer is placed, all below the aim; else the
//! saved offsets come back. The height therefore never rises.

use alloc::vec::Vec;

use super::super::layout::Layout;
use super::index::TimeIndex;
use crate::base::math::{align_down, align_up};
use crate::base::rng::Rng;
use crate::deadline::{Poll, Stop};

/// Moves one attempt may take per buffer taken out at its start (and at
/// least [`MIN_MOVES`]), before failures raise it.
const MOVES_PER_OUT: u64 = 64;
const MIN_MOVES: u64 = 1024;

/// The work (neighbours weighed) of one attempt, before its failures
/// since the last kept one double it.
const MAX_WORK: u64 = 1 << 22;

/// An attempt gives up when this many buffers are out at once.
const MAX_OUT: usize = 4096;

/// The bit of an event that says a neighbour is met from there on.
const MET: u32 = 1 << 31;

/// The state of ejection attempts, kept between them (scratch included,
/// so that a move allocates nothing once the vectors have grown).
#[derive(Default)]
pub(super) struct Ejection {
    /// Whether every buffer is one piece over all of its size (else the
    /// attempts do not run: a buffer with gaps meets its neighbours piece
    /// by piece).
    pub(super) runs: bool,
    /// Per buffer, the move after which it may be taken out again.
    until: Vec<u64>,
    /// Per buffer, the attempt that saved its offset.
    stamp: Vec<u32>,
    attempt: u32,
    moves: u64,
    /// How far below the height the next attempt aims.
    pub(super) drop: i64,
    /// Attempts that failed since the last kept: each further one gets
    /// more moves.
    fails: u32,
    out: Vec<u32>,
    /// Offsets as the attempt found them, of the buffers it moved.
    saved: Vec<(u32, i64)>,
    /// Per neighbour of the buffer being put back (as `near` lists
    /// them), what meeting it weighs.
    weighs: Vec<Weigh>,
    /// (offset from which a neighbour is met, its place in `weighs` with
    /// [`MET`]) and (offset from which it is not, its place): small, so
    /// that sorting them moves little.
    events: Vec<(i64, u32)>,
    places: Vec<i64>,
    /// Attempts made and attempts that placed every buffer.
    pub(super) tried: u64,
    pub(super) kept: u64,
}

/// The repair's placement an attempt works on, and its scratch.
pub(super) struct Placement<'p, 'a> {
    pub(super) layout: &'a Layout,
    pub(super) offsets: &'p mut [i64],
    /// Tops of the placed buffers; `i64::MIN` for those out.
    pub(super) index: &'p mut TimeIndex,
    pub(super) rng: &'p mut Rng,
    pub(super) near: &'p mut Vec<u32>,
    pub(super) stack: &'p mut Vec<(u32, u32)>,
}

impl Ejection {
    pub(super) fn new(layout: &Layout) -> Ejection {
        Ejection {
            runs: (0..layout.len()).all(|b| layout.one_piece(b)),
            ..Ejection::default()
        }
    }

    /// One attempt to lower the height towards `target` (the bound):
    /// aims below the height by the drop, which doubles after an attempt
    /// that placed every buffer and halves after one that did not (down
    /// to a 512th of the gap: below that a success is worth little); the
    /// failures since the last success double an attempt's moves and
    /// work every second time, so that a long run of failures still
    /// searches further. Whether the height came down.
    pub(super) fn step(
        &mut self,
        at: &mut Placement<'_, '_>,
        target: i64,
        poll: &mut Poll<'_>,
    ) -> Result<bool, Stop> {
        let height = at.index.height();
        if !self.runs || height <= target {
            return Ok(false);
        }
        let gap = height - target;
        let least = (gap / 512).max(1);
        if self.drop == 0 {
            self.drop = gap / 16;
        }
        let drop = self.drop.clamp(least, gap);
        let kept = match self.attempt(at, height - drop, poll) {
            Ok(kept) => kept,
            Err(stop) => {
                // Stopped half-way: back to the placement it started from.
                self.restore_saved(at);
                return Err(stop);
            }
        };
        if kept {
            self.drop = drop.saturating_mul(2);
            self.fails = 0;
        } else {
            self.drop = (drop / 2).max(least);
            self.fails = self.fails.saturating_add(1);
        }
        Ok(kept)
    }

    /// One attempt at `aim` (below the height); whether it placed every
    /// buffer below it.
    fn attempt(
        &mut self,
        at: &mut Placement<'_, '_>,
        aim: i64,
        poll: &mut Poll<'_>,
    ) -> Result<bool, Stop> {
        let layout = at.layout;
        let n = layout.len();
        if self.until.len() != n {
            self.until = alloc::vec![0; n];
            self.stamp = alloc::vec![0; n];
        }
        self.attempt = self.attempt.wrapping_add(1);
        if self.attempt == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.attempt = 1;
        }
        self.tried += 1;
        self.out.clear();
        self.saved.clear();
        // Take out every buffer reaching above the aim.
        at.near.clear();
        at.index
            .query(0, layout.times as u32, aim, at.near, at.stack);
        poll.tick(at.near.len() as u64 + 16)?;
        let stuck = |x: &u32| layout.fixed[*x as usize].is_some() || layout.size[*x as usize] > aim;
        if at.near.iter().any(stuck) {
            return Ok(false);
        }
        for i in 0..at.near.len() {
            self.take_out(at, at.near[i]);
        }
        let growth = (self.fails / 2).min(8);
        let mut left = (MOVES_PER_OUT * self.out.len() as u64).max(MIN_MOVES) << growth;
        let work_cap = MAX_WORK << growth;
        let work_start = poll.used();
        while !self.out.is_empty() {
            if left == 0 || self.out.len() > MAX_OUT || poll.used() - work_start > work_cap {
                self.restore_saved(at);
                return Ok(false);
            }
            left -= 1;
            let pick = at.rng.below(0, self.out.len() as i64) as usize;
            let b = self.out.swap_remove(pick) as usize;
            let Some(offset) = self.least_displacing(at, b, aim, poll)? else {
                self.restore_saved(at);
                return Ok(false);
            };
            // Take out what it meets there, then place it.
            let (bottom, top) = (offset, offset + layout.size[b]);
            for i in 0..at.near.len() {
                let x = at.near[i];
                let o = at.offsets[x as usize];
                if o < top && o + layout.size[x as usize] > bottom {
                    self.take_out(at, x);
                }
            }
            self.save(at, b as u32);
            at.offsets[b] = offset;
            at.index.set_top(b, top);
            self.moves += 1;
            let tenure = 7 + at.rng.below(0, 10) as u64 + self.out.len() as u64;
            self.until[b] = self.moves + tenure;
        }
        self.kept += 1;
        Ok(true)
    }

    /// Remembers where `x` was before the attempt moved it.
    fn save(&mut self, at: &Placement<'_, '_>, x: u32) {
        if self.stamp[x as usize] != self.attempt {
            self.stamp[x as usize] = self.attempt;
            self.saved.push((x, at.offsets[x as usize]));
        }
    }

    fn take_out(&mut self, at: &mut Placement<'_, '_>, x: u32) {
        self.save(at, x);
        at.index.set_top(x as usize, i64::MIN);
        self.out.push(x);
    }

    /// Puts every buffer the attempt moved back where it was.
    fn restore_saved(&mut self, at: &mut Placement<'_, '_>) {
        let layout = at.layout;
        for &(x, o) in &self.saved {
            at.offsets[x as usize] = o;
            at.index.set_top(x as usize, o + layout.size[x as usize]);
        }
        self.saved.clear();
        self.out.clear();
    }

    /// The aligned offset for `b` below `aim` where the placed buffers it
    /// meets weigh least, tabu ones counted first (nothing: the lowest
    /// such; else one of the least at random); `None` where a fixed
    /// buffer stands at every place. Those alive with `b` are left in
    /// `near`.
    fn least_displacing(
        &mut self,
        at: &mut Placement<'_, '_>,
        b: usize,
        aim: i64,
        poll: &mut Poll<'_>,
    ) -> Result<Option<i64>, Stop> {
        let layout = at.layout;
        let (s, a) = (layout.size[b], layout.align[b]);
        let e = layout.extent[b];
        at.near.clear();
        // Placed buffers have a top above `i64::MIN`; those out do not.
        at.index.query(e.first, e.end, i64::MIN, at.near, at.stack);
        let highest = align_down(aim - s, a);
        if highest < 0 {
            return Ok(None);
        }
        self.events.clear();
        self.weighs.clear();
        self.places.clear();
        self.places.push(0);
        self.places.push(highest);
        if s > 0 {
            for &x in at.near.iter() {
                let x = x as usize;
                let (p, t) = (at.offsets[x], layout.size[x]);
                if t == 0 {
                    continue;
                }
                let q = p + t;
                let weigh = if layout.fixed[x].is_some() {
                    Weigh::Fixed
                } else if self.until[x] > self.moves {
                    Weigh::Tabu
                } else {
                    Weigh::Bytes(i128::from(t) * i128::from(layout.length[x].max(1)))
                };
                // Met from offset p - s + 1 up to q - 1.
                let i = self.weighs.len() as u32;
                self.weighs.push(weigh);
                self.events.push((p - s + 1, i | MET));
                self.events.push((q, i));
                let above = align_up(q, a);
                if above <= highest {
                    self.places.push(above);
                }
                let below = align_down(p - s, a);
                if (0..=highest).contains(&below) {
                    self.places.push(below);
                }
            }
        }
        poll.tick(4 * at.near.len() as u64 + 16)?;
        self.events.sort_unstable_by_key(|x| x.0);
        self.places.sort_unstable();
        self.places.dedup();
        // Sweep the places upward, with what meets each: fixed buffers,
        // tabu ones and the others' weight.
        let (mut fixed, mut tabu, mut weight) = (0i64, 0i64, 0i128);
        let mut next = 0;
        let mut chosen: Option<((i64, i128), i64)> = None;
        let mut ties = 0i64;
        for &place in &self.places {
            while next < self.events.len() && self.events[next].0 <= place {
                let (_, event) = self.events[next];
                let sign = if event & MET != 0 { 1 } else { -1 };
                match self.weighs[(event & !MET) as usize] {
                    Weigh::Fixed => fixed += sign,
                    Weigh::Tabu => tabu += sign,
                    Weigh::Bytes(w) => weight += i128::from(sign) * w,
                }
                next += 1;
            }
            if fixed > 0 || place > highest {
                continue;
            }
            let cost = (tabu, weight);
            match chosen {
                Some((c, _)) if cost > c => {}
                // Nothing met: the lowest such place, as first-fit.
                Some((c, _)) if cost == c && cost == (0, 0) => {}
                Some((c, _)) if cost == c => {
                    ties += 1;
                    if at.rng.below(0, ties) == 0 {
                        chosen = Some((c, place));
                    }
                }
                _ => {
                    chosen = Some((cost, place));
                    ties = 1;
                }
            }
        }
        Ok(chosen.map(|c| c.1))
    }
}

/// What a neighbour met weighs.
#[derive(Clone, Copy)]
enum Weigh {
    Fixed,
    Tabu,
    /// Size times lifetime.
    Bytes(i128),
}

#[cfg(test)]
mod tests {
    use super::super::tests::with_some_fixed;
    use super::super::Repair;
    use super::*;
    use crate::base::rng::Rng;
    use crate::deadline::Deadline;
    use crate::heuristic::plain_online;
    use crate::model::problem::{Buffer, Problem};
    use crate::model::solution::{validate_below, Solution};
    use alloc::vec::Vec;
    use core::sync::atomic::{AtomicU64, Ordering};

    /// A random gapless problem: aligned buffers of many sizes, a
    /// tenth fixed where a first placement put them.
    fn gapless(rng: &mut Rng) -> Problem {
        let n = rng.below(2, 90) as usize;
        let horizon = rng.below(3, 40);
        let mut buffers = Vec::new();
        for i in 0..n {
            let lower = rng.below(0, horizon - 1);
            let upper = rng.below(lower + 1, horizon + 1);
            let size = rng.below(1, 60);
            let mut b = Buffer::new(alloc::format!("b{i}"), lower, upper, size);
            b.alignment = [1, 1, 2, 4, 8][rng.below(0, 5) as usize];
            buffers.push(b);
        }
        with_some_fixed(rng, buffers)
    }

    fn top(problem: &Problem, offsets: &[i64]) -> i64 {
        let buffers = problem.buffers().iter().zip(offsets);
        buffers.map(|(b, &o)| o + b.size).max().unwrap_or(0)
    }

    /// Every attempt leaves a valid placement (fixed buffers where they
    /// are), never higher, whose height the index reports; one that does
    /// not place every buffer below its aim leaves every offset as it
    /// found it; and attempts do lower placements, often.
    #[test]
    fn attempts_keep_placements_valid_and_never_raise_them() {
        let mut rng = Rng::new(0xE7EC);
        let deadline = Deadline::none();
        let (mut kept, mut tried) = (0u64, 0u64);
        for case in 0..300u64 {
            let problem = gapless(&mut rng);
            let mut poll = Poll::new(&deadline, u64::MAX);
            let layout = Layout::new(&problem, &mut poll).unwrap();
            let start = plain_online(&layout, &mut poll);
            let target = layout.max_load.max(layout.fixed_top);
            let mut repair = Repair::new(&layout, start.offsets, case, &mut poll).unwrap();
            assert!(repair.ejection.runs, "case {case}: gapless");
            let mut failed = 0;
            while failed < 4 {
                let before = repair.offsets().to_vec();
                let height = repair.height();
                let lowered = repair.eject_step(target, &mut poll).unwrap();
                let offsets = repair.offsets().to_vec();
                let now = top(&problem, &offsets);
                assert_eq!(repair.height(), now.max(0), "case {case}");
                validate_below(
                    &problem,
                    &Solution {
                        offsets: offsets.clone(),
                    },
                    i64::MAX,
                )
                .unwrap_or_else(|e| panic!("case {case}: {e}"));
                assert_eq!(lowered, now < height, "case {case}");
                if !lowered {
                    assert_eq!(
                        offsets, before,
                        "case {case}: a failed attempt moved buffers"
                    );
                    failed += 1;
                }
                if now <= target {
                    break;
                }
            }
            (kept, tried) = (kept + repair.ejection.kept, tried + repair.ejection.tried);
        }
        assert!(kept > 150 && kept * 4 > tried, "kept {kept} of {tried}");
    }

    static NOW: AtomicU64 = AtomicU64::new(0);
    fn ticking() -> u64 {
        NOW.fetch_add(1, Ordering::Relaxed)
    }

    /// An attempt stopped by the deadline half-way puts every buffer
    /// back: the clock moves one step a poll, so that the deadline falls
    /// at every point of an attempt in turn.
    #[test]
    fn an_attempt_stopped_half_way_leaves_the_placement_it_found() {
        let mut rng = Rng::new(0x5709);
        let mut stopped_inside = 0;
        for case in 0..300u64 {
            let problem = gapless(&mut rng);
            let none = Deadline::none();
            let mut poll = Poll::new(&none, u64::MAX);
            let layout = Layout::new(&problem, &mut poll).unwrap();
            let start = plain_online(&layout, &mut poll);
            let target = layout.max_load.max(layout.fixed_top);
            let mut repair = Repair::new(&layout, start.offsets.clone(), case, &mut poll).unwrap();
            let steps = rng.below(1, 40) as u64;
            NOW.store(0, Ordering::Relaxed);
            let deadline = Deadline::new(
                Some(ticking),
                Some(core::time::Duration::from_nanos(steps)),
                None,
            );
            let mut poll = Poll::new(&deadline, 1);
            match repair.eject_step(target, &mut poll) {
                Err(_) => {
                    assert_eq!(repair.offsets(), &start.offsets[..], "case {case}");
                    assert_eq!(repair.height(), start.height, "case {case}");
                    stopped_inside += u64::from(steps > 2);
                }
                Ok(_) => {
                    let offsets = repair.offsets().to_vec();
                    validate_below(&problem, &Solution { offsets }, i64::MAX).unwrap();
                }
            }
        }
        assert!(
            stopped_inside > 40,
            "{stopped_inside} stopped inside an attempt"
        );
    }
}
