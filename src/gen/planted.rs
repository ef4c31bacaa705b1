//! [`Family::Planted`](super::spec::Family::Planted): a zero-waste
//! packing cut by guillotine, whose optimum is known (also the ground of
//! the planted kernels, `kernel.rs`).

use alloc::format;
use alloc::vec::Vec;

use super::spec::Spec;
use crate::base::rng::Rng;
use crate::model::problem::Buffer;

/// The height of the rectangle [`Family::Planted`] cuts and
/// [`Family::Swept`] fills: 2^20 bytes on a grid of 8 (or the alignment).
///
/// [`Family::Planted`]: super::Family::Planted
/// [`Family::Swept`]: super::Family::Swept
pub(super) const PLANTED_HEIGHT: i64 = 1 << 20;

/// A zero-waste packing: the rectangle `[0, n) x [0, H)` of time by
/// memory cut, largest piece first, by a guillotine cut across time or
/// memory (even odds) at a random place (memory on multiples of
/// `max(8, alignment)`), until there are `n` pieces. The pieces are the
/// buffers: placing each where it was cut from fills the rectangle, so the
/// optimum is `H`, the max load. Returns the buffers and `H`.
pub(super) fn planted(spec: Spec) -> (Vec<Buffer>, i64) {
    let (buffers, height, _) = planted_with_offsets(spec);
    (buffers, height)
}

/// [`planted`], with the offsets the pieces were cut from.
pub(crate) fn planted_with_offsets(spec: Spec) -> (Vec<Buffer>, i64, Vec<i64>) {
    let mut rng = Rng::new(spec.seed ^ 0x91A7_7ED0_0000_0003);
    let grid = spec.alignment.max(8);
    let height = PLANTED_HEIGHT / grid * grid;
    let time = (spec.buffers as i64).max(1);
    // Pieces as (area, lower, upper, bottom, top); a max-heap by area.
    let mut heap: alloc::collections::BinaryHeap<(i128, i64, i64, i64, i64)> =
        alloc::collections::BinaryHeap::new();
    let mut done: Vec<(i64, i64, i64, i64)> = Vec::new();
    heap.push((i128::from(time) * i128::from(height), 0, time, 0, height));
    while heap.len() + done.len() < spec.buffers {
        let Some((_, l, u, b, t)) = heap.pop() else {
            break;
        };
        let (span, tall) = (u - l, (t - b) / grid);
        if span < 2 && tall < 2 {
            done.push((l, u, b, t));
            continue;
        }
        // Across time or memory with even odds, where both can be cut.
        let by_time = span >= 2 && (tall < 2 || rng.below(0, 2) == 0);
        let mut push = |l: i64, u: i64, b: i64, t: i64| {
            heap.push((i128::from(u - l) * i128::from(t - b), l, u, b, t));
        };
        if by_time {
            let cut = rng.below(l + 1, u);
            push(l, cut, b, t);
            push(cut, u, b, t);
        } else {
            let cut = b + grid * rng.below(1, tall);
            push(l, u, b, cut);
            push(l, u, cut, t);
        }
    }
    done.extend(heap.into_iter().map(|(_, l, u, b, t)| (l, u, b, t)));
    // The buffers in a random order, so that ids say nothing of offsets.
    for i in (1..done.len()).rev() {
        let j = rng.below(0, i as i64 + 1) as usize;
        done.swap(i, j);
    }
    let offsets = done.iter().map(|&(_, _, b, _)| b).collect();
    let buffers = done
        .into_iter()
        .enumerate()
        .map(|(i, (l, u, b, t))| {
            let mut buffer = Buffer::new(format!("{i}"), l, u, t - b);
            buffer.alignment = spec.alignment.max(1);
            buffer
        })
        .collect();
    (buffers, height, offsets)
}
