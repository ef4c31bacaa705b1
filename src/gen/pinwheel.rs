//! [`Family::Pinwheel`](super::spec::Family::Pinwheel): a zero-waste
//! packing that no guillotine cut decomposes. A rectangle of time by
//! memory is cut into a pinwheel, a centre ringed by four blades that
//! each overlap two neighbours' sides in part, so no straight cut across
//! it keeps every piece whole; then the largest piece is cut the same
//! way, until there are enough pieces. The optimum is the rectangle's
//! height, its max load, as in the planted packings.

use alloc::collections::BinaryHeap;
use alloc::format;
use alloc::vec::Vec;

use super::planted::PLANTED_HEIGHT;
use super::spec::Spec;
use crate::base::rng::Rng;
use crate::model::problem::Buffer;

/// A piece: `[lower, upper)` in time by `[bottom, top)` in memory.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Piece {
    lower: i64,
    upper: i64,
    bottom: i64,
    top: i64,
}

/// The buffers (`1 + 4k` of them: `spec.buffers` rounded down to that
/// form, or fewer when the pieces grow too small to cut), the height `H`,
/// and the offsets the pieces were cut from (a placement at `H`). The
/// rectangle is `4n` steps by `H` (memory on a grid of `max(8,
/// alignment)`); a piece is cut at two random places along each side.
pub(crate) fn pinwheel_with_offsets(spec: Spec) -> (Vec<Buffer>, i64, Vec<i64>) {
    let mut rng = Rng::new(spec.seed ^ 0x914E_0000_0000_0009);
    let grid = spec.alignment.max(8);
    let height = PLANTED_HEIGHT / grid * grid;
    let time = 4 * (spec.buffers as i64).max(1);
    // A max-heap by area; pieces too small to cut wait in `done`.
    let mut heap: BinaryHeap<(i128, Piece)> = BinaryHeap::new();
    let mut done: Vec<Piece> = Vec::new();
    let area = |p: Piece| i128::from(p.upper - p.lower) * i128::from(p.top - p.bottom);
    let whole = Piece {
        lower: 0,
        upper: time,
        bottom: 0,
        top: height,
    };
    heap.push((area(whole), whole));
    while heap.len() + done.len() + 4 <= spec.buffers.max(1) {
        let Some((_, p)) = heap.pop() else {
            break;
        };
        let rows = (p.top - p.bottom) / grid;
        if p.upper - p.lower < 3 || rows < 3 {
            done.push(p);
            continue;
        }
        // Two cuts inside each side: a < b in time, c < d in memory.
        let (a, b) = two_cuts(&mut rng, p.lower, p.upper, 1);
        let (c, d) = two_cuts(&mut rng, p.bottom / grid, p.top / grid, grid);
        // The blades turn one way or the other (a mirror image).
        let blades = if rng.below(0, 2) == 0 {
            [
                (p.lower, b, p.bottom, c),
                (b, p.upper, p.bottom, d),
                (a, p.upper, d, p.top),
                (p.lower, a, c, p.top),
            ]
        } else {
            [
                (p.lower, a, p.bottom, d),
                (a, p.upper, p.bottom, c),
                (b, p.upper, c, p.top),
                (p.lower, b, d, p.top),
            ]
        };
        for (lower, upper, bottom, top) in blades.into_iter().chain([(a, b, c, d)]) {
            let piece = Piece {
                lower,
                upper,
                bottom,
                top,
            };
            heap.push((area(piece), piece));
        }
    }
    done.extend(heap.into_iter().map(|(_, p)| p));
    // In a random order, so that ids say nothing of offsets.
    for i in (1..done.len()).rev() {
        let j = rng.below(0, i as i64 + 1) as usize;
        done.swap(i, j);
    }
    let offsets = done.iter().map(|p| p.bottom).collect();
    let buffers = done
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut buffer = Buffer::new(format!("{i}"), p.lower, p.upper, p.top - p.bottom);
            buffer.alignment = spec.alignment.max(1);
            buffer
        })
        .collect();
    (buffers, height, offsets)
}

/// Two cuts `lo < x < y < hi` in units of `unit` (`hi - lo >= 3`), each
/// side's share drawn from the middle half so that pieces stay of a size.
fn two_cuts(rng: &mut Rng, lo: i64, hi: i64, unit: i64) -> (i64, i64) {
    let span = hi - lo;
    let x = lo + rng.below(span / 4, span / 2).clamp(1, span - 2);
    let y = x + rng
        .below((hi - x) / 4, (hi - x) * 3 / 4 + 1)
        .clamp(1, hi - x - 1);
    (x * unit, y * unit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::Family;
    use crate::model::problem::Problem;
    use crate::model::solution::{validate, Solution};

    /// The pieces fill the rectangle: the offsets they were cut from are a
    /// valid placement whose every time is full to the height (so the
    /// optimum is the height, the max load), and the count is `1 + 4k`.
    #[test]
    fn pinwheels_fill_their_rectangle() {
        for (n, seed) in [(1, 0), (5, 1), (21, 2), (1_001, 3), (4_003, 4)] {
            let spec = Spec::new(n, seed).with_family(Family::Pinwheel);
            let (buffers, height, offsets) = pinwheel_with_offsets(spec);
            assert_eq!(buffers.len() % 4, 1, "n {n}");
            assert!(buffers.len() <= n.max(1) && buffers.len() + 4 > n, "n {n}");
            let area: i128 = buffers
                .iter()
                .map(|b| i128::from(b.upper - b.lower) * i128::from(b.size))
                .sum();
            let end = buffers.iter().map(|b| b.upper).max().unwrap();
            assert_eq!(area, i128::from(end) * i128::from(height), "n {n}");
            let problem = Problem::new(height, buffers).unwrap();
            validate(&problem, &Solution { offsets }).unwrap();
            assert_eq!(crate::model::load::max_load(&problem), height);
        }
    }

    /// No straight cut splits a pinwheel: no time but its ends, and no
    /// offset but its bottom and top, has every piece on one side of it.
    #[test]
    fn a_pinwheel_has_no_guillotine_cut() {
        for seed in 0..200 {
            let spec = Spec::new(5, seed).with_family(Family::Pinwheel);
            let (buffers, height, offsets) = pinwheel_with_offsets(spec);
            let end = buffers.iter().map(|b| b.upper).max().unwrap();
            for t in 1..end {
                assert!(
                    buffers.iter().any(|b| b.lower < t && t < b.upper),
                    "seed {seed}: time {t} cuts"
                );
            }
            for y in (8..height).step_by(8) {
                assert!(
                    buffers
                        .iter()
                        .zip(&offsets)
                        .any(|(b, &o)| o < y && y < o + b.size),
                    "seed {seed}: offset {y} cuts"
                );
            }
        }
    }
}
