//! A small seeded generator (xorshift64*): synthetic instances and the
//! perturbed orders of the improving restarts. Same seed, same stream.

/// `z` spread over all 64 bits (SplitMix64's step and finaliser): nearby
/// inputs give unrelated outputs.
#[inline]
pub(crate) fn spread(z: u64) -> u64 {
    let mut z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A reproducible stream of pseudo-random numbers.
#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    /// A stream for `seed` (any value, 0 included).
    pub(crate) fn new(seed: u64) -> Self {
        // Spread the seed so that nearby seeds give unrelated streams.
        Rng(spread(seed) | 1)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `lo..hi` (`lo` if empty).
    #[cfg(any(test, feature = "gen", feature = "heuristics", feature = "constraints"))]
    pub(crate) fn below(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        lo + (self.next() % (hi - lo) as u64) as i64
    }

    /// Uniform in `[-1, 1)`.
    #[cfg(feature = "heuristics")]
    pub(crate) fn signed_unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}
