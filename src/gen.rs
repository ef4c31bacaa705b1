//! Reproducible synthetic instances shaped like a compiler's buffers: many
//! short-lived activations, some skip connections, a few long-lived
//! weights, sizes spread over several orders of magnitude.

use alloc::format;
use alloc::vec::Vec;

use crate::problem::Buffer;

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

/// A small seeded generator (xorshift64*), enough for test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `lo..hi` (`lo` if empty).
    fn below(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        lo + (self.next() % (hi - lo) as u64) as i64
    }

    /// `2^e` for `e` uniform in `[lo, hi)`, times a uniform factor in [1, 2).
    fn log_uniform(&mut self, lo: u32, hi: u32) -> i64 {
        let e = self.below(lo as i64, hi as i64) as u32;
        let base = 1i64 << e;
        base + self.below(0, base)
    }
}

/// Buffers of a synthetic training or inference step, ids `0..n`.
///
/// Time runs over `n / 4` steps. 85 % of buffers are activations that die
/// a few steps after they are made (lengths mostly 1-4, sizes 64 B-1 MiB),
/// 12 % are skip connections spanning up to a quarter of the steps, 3 %
/// are weights or optimizer state alive for nearly the whole run (64 KiB-
/// 32 MiB).
pub fn generate(spec: Spec) -> Vec<Buffer> {
    let mut rng = Rng(spec.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let steps = (spec.buffers as i64 / 4).max(8);
    let align = spec.alignment.max(1);
    let mut out = Vec::with_capacity(spec.buffers);
    for i in 0..spec.buffers {
        let kind = rng.below(0, 100);
        let (lower, upper, size) = if kind < 3 {
            let lower = rng.below(0, steps / 10 + 1);
            let upper = rng.below(steps - steps / 10, steps + 1).max(lower + 1);
            (lower, upper, rng.log_uniform(16, 25))
        } else if kind < 15 {
            let lower = rng.below(0, steps);
            let len = rng.below(steps / 20 + 1, steps / 4 + 2);
            (lower, (lower + len).min(steps + 1), rng.log_uniform(8, 21))
        } else {
            let lower = rng.below(0, steps);
            // Geometric-ish: most activations are consumed by the next op.
            let mut len = 1;
            while len < 16 && rng.below(0, 100) < 45 {
                len += 1;
            }
            (lower, lower + len, rng.log_uniform(6, 20))
        };
        let size = (size + align - 1) / align * align;
        let mut b = Buffer::new(format!("{i}"), lower, upper, size);
        b.alignment = align;
        out.push(b);
    }
    out
}
