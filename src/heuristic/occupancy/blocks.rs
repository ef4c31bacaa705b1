//! A repair window's memory in use, as a flat list of blocks.
//!
//! A window step places a few hundred buffers among the few hundred that
//! stay, in a time of a few hundred slots of its own. The tree of merged
//! sets spends most of such a step building itself; a list of blocks in
//! order of bottom needs one sort, and first-fit is one pass over it that
//! stops at the first block above the candidate: cheaper while a window
//! holds a few thousand blocks, which is what a step's window holds.

use alloc::vec::Vec;

use crate::base::math::align_up;

/// A piece of a buffer in compressed time: alive in time slots
/// `[first, end)`, using `[lower, upper)` above its offset.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slot {
    pub(crate) first: u32,
    pub(crate) end: u32,
    pub(crate) lower: i64,
    pub(crate) upper: i64,
}

/// Memory `[bottom, top)` in use during local slots `[first, end)`.
#[derive(Clone, Copy, Debug)]
struct Block {
    bottom: i64,
    top: i64,
    first: u32,
    end: u32,
}

/// Blocks in use above a floor (everything below it is in use).
#[derive(Default)]
pub(crate) struct Blocks {
    /// In order of bottom once [`Blocks::sort`] has run.
    blocks: Vec<Block>,
    floor: i64,
}

impl Blocks {
    /// Empty, with all memory below `floor` in use; keeps the list's
    /// memory for the next window.
    pub(crate) fn clear(&mut self, floor: i64) {
        self.blocks.clear();
        self.floor = floor;
    }

    /// Adds a block in any order: [`Blocks::sort`] before the next query.
    pub(crate) fn push(&mut self, first: u32, end: u32, bottom: i64, top: i64) {
        if first < end && bottom < top {
            self.blocks.push(Block {
                bottom,
                top,
                first,
                end,
            });
        }
    }

    /// Puts the blocks pushed in order of bottom.
    pub(crate) fn sort(&mut self) {
        self.blocks.sort_unstable_by_key(|b| b.bottom);
    }

    /// Adds a block keeping the order: a placed buffer's piece.
    pub(crate) fn insert(&mut self, first: u32, end: u32, bottom: i64, top: i64) {
        if first < end && bottom < top {
            let block = Block {
                bottom,
                top,
                first,
                end,
            };
            let at = self.blocks.partition_point(|b| b.bottom < bottom);
            self.blocks.insert(at, block);
        }
    }

    /// The lowest offset, a multiple of `align`, at which no piece meets
    /// a block or the floor; and the blocks visited.
    ///
    /// One pass in order of bottom: a block that meets a piece moves the
    /// offset past its top, and the pass stops at the first block whose
    /// bottom is at or above every piece (none after it can meet one).
    /// The offset only rises, so every block passed stays clear of a piece
    /// whose range was that block's; a buffer of several pieces at
    /// different heights may meet, after a move, a block passed before,
    /// hence passes until one moves nothing (one, for a single piece).
    pub(crate) fn lowest(&self, pieces: &[Slot], align: i64) -> (i64, u64) {
        let reach = pieces.iter().map(|p| p.upper).max().unwrap_or(0);
        let low = pieces.iter().map(|p| p.lower).min().unwrap_or(0);
        let mut at = align_up((self.floor - low).max(0), align);
        let mut visited = 0u64;
        loop {
            let mut moved = false;
            for b in &self.blocks {
                visited += 1;
                if b.bottom >= at.saturating_add(reach) {
                    break;
                }
                if b.top <= at.saturating_add(low) {
                    continue;
                }
                for p in pieces {
                    let meets = b.first < p.end && p.first < b.end;
                    let (lo, hi) = (at.saturating_add(p.lower), at.saturating_add(p.upper));
                    if meets && b.bottom < hi && lo < b.top {
                        at = align_up(b.top - p.lower, align);
                        moved = true;
                    }
                }
            }
            if !moved || pieces.len() == 1 {
                return (at, visited);
            }
        }
    }

    /// The memory in use during slot `t` (the floor's too), merged and
    /// upward, into `out`.
    pub(crate) fn in_use_at(&self, t: u32, out: &mut Vec<(i64, i64)>) {
        out.clear();
        if self.floor > 0 {
            out.push((0, self.floor));
        }
        for b in &self.blocks {
            if b.first <= t && t < b.end {
                match out.last_mut() {
                    Some(last) if b.bottom <= last.1 => last.1 = last.1.max(b.top),
                    _ => out.push((b.bottom, b.top)),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::rng::Rng;

    /// First-fit over the blocks against a scan of every offset, for
    /// buffers of one piece and of several at different heights, with
    /// alignment; and the memory in use per slot against a bitmap.
    #[test]
    fn blocks_answer_as_a_scan_of_every_offset() {
        let mut rng = Rng::new(17);
        let mut blocks = Blocks::default();
        for round in 0..60 {
            let slots = rng.below(1, 12) as u32;
            let floor = rng.below(0, 20);
            blocks.clear(floor);
            let mut placed: Vec<(u32, u32, i64, i64)> = Vec::new();
            for _ in 0..rng.below(0, 30) {
                let f = rng.below(0, i64::from(slots)) as u32;
                let e = f + 1 + rng.below(0, i64::from(slots - f)) as u32;
                let bottom = rng.below(0, 80);
                let top = bottom + rng.below(1, 10);
                blocks.push(f, e, bottom, top);
                placed.push((f, e, bottom, top));
            }
            blocks.sort();
            for _ in 0..20 {
                let n = if round % 3 == 0 { rng.below(1, 4) } else { 1 };
                let mut pieces = Vec::new();
                let mut f = rng.below(0, i64::from(slots)) as u32;
                for _ in 0..n {
                    if f >= slots {
                        break;
                    }
                    let e = f + 1 + rng.below(0, i64::from(slots - f)) as u32;
                    let lower = if n == 1 { 0 } else { rng.below(0, 5) };
                    let upper = lower + rng.below(1, 12);
                    pieces.push(Slot {
                        first: f,
                        end: e,
                        lower,
                        upper,
                    });
                    f = e + rng.below(0, 2) as u32;
                }
                let align = [1, 1, 2, 8][rng.below(0, 4) as usize];
                let clear = |o: i64| {
                    pieces.iter().all(|p| {
                        o + p.lower >= floor
                            && placed.iter().all(|&(a, b, lo, hi)| {
                                !(a < p.end && p.first < b && lo < o + p.upper && o + p.lower < hi)
                            })
                    })
                };
                let want = (0..).step_by(align as usize).find(|&o| clear(o)).unwrap();
                let (got, _) = blocks.lowest(&pieces, align);
                assert_eq!(got, want, "{pieces:?} align {align} floor {floor}");
                if rng.below(0, 2) == 0 {
                    for p in &pieces {
                        blocks.insert(p.first, p.end, got + p.lower, got + p.upper);
                        placed.push((p.first, p.end, got + p.lower, got + p.upper));
                    }
                }
            }
            let mut out = Vec::new();
            for t in 0..slots {
                blocks.in_use_at(t, &mut out);
                let mut used = [false; 200];
                (0..floor).for_each(|x| used[x as usize] = true);
                for &(a, b, lo, hi) in &placed {
                    if a <= t && t < b {
                        (lo..hi).for_each(|x| used[x as usize] = true);
                    }
                }
                let runs: Vec<(i64, i64)> = (0..200i64)
                    .filter(|&x| used[x as usize] && (x == 0 || !used[x as usize - 1]))
                    .map(|x| (x, (x..200).find(|&y| !used[y as usize]).unwrap()))
                    .collect();
                assert_eq!(out, runs, "slot {t}");
            }
        }
    }
}
