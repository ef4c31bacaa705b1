//! [`Family::Swept`](super::spec::Family::Swept): a zero-waste packing that is
//! not cut by guillotine. Memory `[0, H)` is swept through time; whenever
//! pieces end, each hole they leave (freed neighbours make one hole) is
//! filled at once by new pieces of random sizes and lifetimes, so memory
//! is full at every time and the optimum is `H`, the max load. Unlike a
//! guillotine packing, new pieces straddle the bands of the pieces they
//! replace, so few pairs of pieces fit together exactly.

use alloc::vec::Vec;

use super::spec::Spec;
use crate::base::rng::Rng;
use crate::model::problem::Buffer;

/// Longest lifetime of a piece, in steps.
const LONGEST: i64 = 64;
/// Tallest piece, in grid rows (sizes are log-uniform up to it).
const TALLEST_ROWS: u32 = 12;

/// The buffers (exactly `spec.buffers`, in a random order), the height
/// `H`, and the offsets they were made at (a placement at `H`).
pub(crate) fn swept_with_offsets(spec: Spec, height: i64) -> (Vec<Buffer>, i64, Vec<i64>) {
    let mut rng = Rng::new(spec.seed ^ 0x5E97_0000_0000_0005);
    let grid = spec.alignment.max(8);
    let height = (height / grid * grid).max(grid);
    let n = spec.buffers;
    // Pieces as (lower, upper, bottom, size); alive ones as (bottom, piece).
    let mut pieces: Vec<(i64, i64, i64, i64)> = Vec::with_capacity(n);
    let mut alive: Vec<(i64, usize)> = Vec::new();
    let mut holes: Vec<(i64, i64)> = alloc::vec![(0, height)];
    let mut now = 0;
    if n == 0 {
        holes.clear();
    }
    loop {
        // Fill every hole, leaving at least one piece for each hole after.
        for (k, &(bottom, top)) in holes.iter().enumerate() {
            let mut at = bottom;
            while at < top {
                let spare = n - pieces.len() - (holes.len() - k - 1);
                let rows = (top - at) / grid;
                let size = if spare <= 1 {
                    top - at
                } else {
                    let tall = 1i64 << rng.below(0, i64::from(TALLEST_ROWS) + 1);
                    grid * rng.below(1, tall + 1).min(rows)
                };
                let upper = now + rng.below(1, LONGEST + 1);
                alive.push((at, pieces.len()));
                pieces.push((now, upper, at, size));
                at += size;
            }
        }
        let Some(next) = alive.iter().map(|&(_, p)| pieces[p].1).min() else {
            break; // nothing asked for
        };
        // The holes the pieces ending next would leave.
        alive.sort_unstable();
        holes.clear();
        for &(bottom, p) in &alive {
            if pieces[p].1 == next {
                let top = bottom + pieces[p].3;
                match holes.last_mut() {
                    Some(last) if last.1 == bottom => last.1 = top,
                    _ => holes.push((bottom, top)),
                }
            }
        }
        // Too few pieces left to fill them: everything ends there.
        if pieces.len() + holes.len() > n {
            for &(_, p) in &alive {
                pieces[p].1 = next;
            }
            break;
        }
        now = next;
        alive.retain(|&(_, p)| pieces[p].1 != now);
    }
    // Short of `n`: cut pieces in time (each half where the piece was).
    let mut tries = 0;
    while pieces.len() < n && !pieces.is_empty() && tries < 64 * n {
        tries += 1;
        let p = rng.below(0, pieces.len() as i64) as usize;
        let (lower, upper, bottom, size) = pieces[p];
        if upper - lower >= 2 {
            let cut = rng.below(lower + 1, upper);
            pieces[p].1 = cut;
            pieces.push((cut, upper, bottom, size));
        }
    }
    // A random order, so that ids say nothing of offsets.
    for i in (1..pieces.len()).rev() {
        let j = rng.below(0, i as i64 + 1) as usize;
        pieces.swap(i, j);
    }
    let offsets = pieces.iter().map(|p| p.2).collect();
    let buffers = pieces
        .iter()
        .enumerate()
        .map(|(i, &(lower, upper, _, size))| {
            let mut b = Buffer::new(alloc::format!("{i}"), lower, upper, size);
            b.alignment = spec.alignment.max(1);
            b
        })
        .collect();
    (buffers, height, offsets)
}
