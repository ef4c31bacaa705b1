//! The placement of a block's members inside its height: a few
//! rectangles whose sizes add up to the height at every time of their
//! span, so that they fill it with nothing to spare.

use super::rect::Rect;

/// The most rectangles a block merges (and a tiling places).
pub(super) const MOST: usize = 6;

/// Offsets for `x` (at most [`MOST`] rectangles) inside `[0, h)`, or
/// `None`, and the steps taken (at most `limit`: `None` past it). Where
/// the rectangles fill the height at every time, the lowest run of what
/// is placed, at its left end, is covered by a rectangle that starts
/// there and ends inside the run (before the run and after it, what is
/// placed stands higher): trying those alone misses no placement.
pub(super) fn tile(x: &[Rect], h: i64, limit: u32) -> (Option<[i64; MOST]>, u32) {
    let mut sky = Skyline {
        x: [x[0]; MOST],
        times: [0; 2 * MOST],
        top: [0; 2 * MOST],
        at: [0; MOST],
        placed: [false; MOST],
        k: x.len(),
        slots: 0,
        steps: 0,
        limit,
    };
    for (i, &r) in x.iter().enumerate() {
        sky.x[i] = r;
        for t in [r.lower, r.upper] {
            if !sky.times[..sky.slots].contains(&t) {
                sky.times[sky.slots] = t;
                sky.slots += 1;
            }
        }
    }
    sky.times[..sky.slots].sort_unstable();
    // `top` has a height per slot between consecutive times.
    sky.slots -= 1;
    let placed = sky.cover(h, 0);
    (placed.then_some(sky.at), sky.steps)
}

/// Rectangles being placed: the times where they start or end, the
/// height placed so far between each two, and each one's offset.
struct Skyline {
    x: [Rect; MOST],
    times: [i64; 2 * MOST],
    top: [i64; 2 * MOST],
    at: [i64; MOST],
    placed: [bool; MOST],
    k: usize,
    slots: usize,
    steps: u32,
    limit: u32,
}

impl Skyline {
    /// Places the rectangles not yet placed, each at the left end of the
    /// lowest run; whether all fit.
    fn cover(&mut self, h: i64, done: usize) -> bool {
        if done == self.k {
            return true;
        }
        self.steps += 1;
        if self.steps > self.limit {
            return false;
        }
        // The lowest run: its first slot, height and end.
        let mut first = 0;
        for slot in 1..self.slots {
            if self.top[slot] < self.top[first] {
                first = slot;
            }
        }
        let y = self.top[first];
        let mut last = first;
        while last + 1 < self.slots && self.top[last + 1] == y {
            last += 1;
        }
        let (from, to) = (self.times[first], self.times[last + 1]);
        for i in 0..self.k {
            let x = self.x[i];
            let fits = x.lower == from && x.upper <= to && y % x.align == 0 && y + x.size <= h;
            if self.placed[i] || !fits {
                continue;
            }
            let slots =
                first..first + self.times[first..=self.slots].partition_point(|&t| t < x.upper);
            self.placed[i] = true;
            self.at[i] = y;
            for slot in slots.clone() {
                self.top[slot] = y + x.size;
            }
            if self.cover(h, done + 1) {
                return true;
            }
            for slot in slots {
                self.top[slot] = y;
            }
            self.placed[i] = false;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::rng::Rng;
    use crate::deadline::Deadline;
    use crate::model::problem::{Buffer, Problem};

    fn rect(lower: i64, upper: i64, size: i64, align: i64) -> Rect {
        let b = Buffer::new("", lower, upper, size).with_alignment(align);
        Rect::of(0, &b, true)
    }

    /// The exact search's answer: whether `rects` fit inside `[0, h)`.
    fn fits_exactly(rects: &[Rect], h: i64) -> bool {
        let buffers = rects
            .iter()
            .enumerate()
            .map(|(i, x)| {
                Buffer::new(alloc::format!("{i}"), x.lower, x.upper, x.size).with_alignment(x.align)
            })
            .collect();
        let problem = Problem::new(h, buffers).unwrap();
        let params = crate::exact::Params::default();
        match crate::exact::solve(&problem, h, &params, &Deadline::none()).0 {
            crate::exact::Verdict::Solved(_) => true,
            crate::exact::Verdict::Infeasible => false,
            other => panic!("not decided: {other:?}"),
        }
    }

    /// The tiling misses none: on small sets whose sizes add up to one
    /// total at every time (flat), it finds a placement exactly when the
    /// exact search does, and the placement it gives is valid and inside
    /// the height.
    #[test]
    fn members_are_tiled_whenever_they_can_be() {
        let mut rng = Rng::new(7);
        let (mut tiled, mut flat) = (0, 0);
        for _ in 0..40_000 {
            let k = rng.below(3, MOST as i64 + 1) as usize;
            let span = rng.below(2, 5);
            let rects: Vec<Rect> = (0..k)
                .map(|_| {
                    let lower = rng.below(0, span);
                    let upper = rng.below(lower + 1, span + 1);
                    let align = [1, 1, 2, 4][rng.below(0, 4) as usize];
                    rect(lower, upper, align * rng.below(1, 4), align)
                })
                .collect();
            let s = rects.iter().map(|x| x.lower).min().unwrap();
            let e = rects.iter().map(|x| x.upper).max().unwrap();
            let load = |t: i64| -> i64 {
                rects
                    .iter()
                    .filter(|x| x.lower <= t && t < x.upper)
                    .map(|x| x.size)
                    .sum()
            };
            let h = load(s);
            if (s..e).any(|t| load(t) != h) {
                continue;
            }
            flat += 1;
            let (at, _) = tile(&rects, h, u32::MAX);
            assert_eq!(at.is_some(), fits_exactly(&rects, h), "{rects:?}");
            let Some(at) = at else { continue };
            tiled += 1;
            for (i, x) in rects.iter().enumerate() {
                assert!(at[i] >= 0 && at[i] + x.size <= h && at[i] % x.align == 0);
                for (j, y) in rects.iter().enumerate() {
                    let meet = x.lower < y.upper && y.lower < x.upper;
                    let apart = at[i] + x.size <= at[j] || at[j] + y.size <= at[i];
                    assert!(i == j || !meet || apart, "{rects:?}: {at:?}");
                }
            }
        }
        assert!(
            flat > 1000 && tiled > 500 && tiled < flat,
            "{flat} flat, {tiled} tiled"
        );
    }
}
