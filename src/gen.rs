//! Reproducible synthetic instances shaped like a compiler's buffers: many
//! short-lived activations, some skip connections, a few long-lived
//! weights, sizes spread over several orders of magnitude.

use alloc::format;
use alloc::vec::Vec;

use crate::problem::Buffer;
use crate::rng::Rng;

/// What to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spec {
    /// Number of buffers.
    pub buffers: usize,
    /// Seed of the generator: same spec, same buffers.
    pub seed: u64,
    /// Alignment of every buffer (sizes are rounded up to it).
    pub alignment: i64,
}

impl Spec {
    /// `buffers` buffers from `seed`, alignment 1.
    pub fn new(buffers: usize, seed: u64) -> Self {
        Spec {
            buffers,
            seed,
            alignment: 1,
        }
    }
}

/// `2^e` for `e` uniform in `[lo, hi)`, times a uniform factor in [1, 2).
fn log_uniform(rng: &mut Rng, lo: u32, hi: u32) -> i64 {
    let e = rng.below(lo as i64, hi as i64) as u32;
    let base = 1i64 << e;
    base + rng.below(0, base)
}

/// Buffers of a synthetic training or inference step, ids `0..n`.
///
/// Time runs over `n / 4` steps. 85 % of buffers are activations that die
/// a few steps after they are made (lengths mostly 1-4, sizes 64 B-1 MiB),
/// 12 % are skip connections spanning up to a quarter of the steps, 3 %
/// are weights or optimizer state alive for nearly the whole run (64 KiB-
/// 32 MiB).
pub fn generate(spec: Spec) -> Vec<Buffer> {
    let mut rng = Rng::new(spec.seed);
    let steps = (spec.buffers as i64 / 4).max(8);
    let align = spec.alignment.max(1);
    let mut out = Vec::with_capacity(spec.buffers);
    for i in 0..spec.buffers {
        let kind = rng.below(0, 100);
        let (lower, upper, size) = if kind < 3 {
            let lower = rng.below(0, steps / 10 + 1);
            let upper = rng.below(steps - steps / 10, steps + 1).max(lower + 1);
            (lower, upper, log_uniform(&mut rng, 16, 25))
        } else if kind < 15 {
            let lower = rng.below(0, steps);
            let len = rng.below(steps / 20 + 1, steps / 4 + 2);
            (
                lower,
                (lower + len).min(steps + 1),
                log_uniform(&mut rng, 8, 21),
            )
        } else {
            let lower = rng.below(0, steps);
            // Geometric-ish: most activations are consumed by the next op.
            let mut len = 1;
            while len < 16 && rng.below(0, 100) < 45 {
                len += 1;
            }
            (lower, lower + len, log_uniform(&mut rng, 6, 20))
        };
        let size = (size + align - 1) / align * align;
        let mut b = Buffer::new(format!("{i}"), lower, upper, size);
        b.alignment = align;
        out.push(b);
    }
    out
}
