//! The order in which a variant places buffers: its own, or a seeded
//! perturbation of it.

use alloc::vec::Vec;

use super::layout::Layout;
use super::strategy::{Strategy, Variant};
use crate::base::rng::Rng;
use crate::deadline::{sort_by_lead_polled, sort_polled, Poll, Stop};

impl Layout {
    /// The buffers a variant places, in its order (fixed buffers are
    /// placed first and are not in it). With `noise`, the primary key of
    /// each buffer is scaled by a random factor in `[1 - spread, 1 + spread)`
    /// (for a layer: the lifetime that decides whether a buffer is in it).
    /// The sort polls: at a million buffers it takes a tenth of a second.
    pub(crate) fn order(
        &self,
        variant: Variant,
        mut noise: Option<(&mut Rng, f64)>,
        poll: &mut Poll<'_>,
    ) -> Result<Vec<u32>, Stop> {
        if variant.strategy.is_online() {
            return self.online_order(noise, poll);
        }
        let n = self.len();
        let long = self.layer_length(variant.depth);
        let contention = match variant.strategy {
            Strategy::Skyline => self.contention(poll)?,
            _ => Vec::new(),
        };
        let mut keys: Vec<(i64, i128, i64, u32)> = Vec::with_capacity(n);
        // `b` indexes several per-buffer arrays.
        #[allow(clippy::needless_range_loop)]
        for b in 0..n {
            if self.fixed[b].is_some() {
                continue;
            }
            let (size, length, start) = (self.size[b], self.length[b], self.start[b]);
            let mut factor = || match noise.as_mut() {
                Some((rng, spread)) => 1.0 + *spread * rng.signed_unit(),
                None => 1.0,
            };
            let (primary, secondary, tertiary) = match variant.strategy {
                Strategy::Layered => {
                    let (first, slots) = (self.extent[b].first, self.lived_slots(b));
                    let lived = f64::from(slots) * factor();
                    if lived >= long as f64 {
                        // The layer, before everything else, in start order
                        // (the longest first among equal starts).
                        let key = (i64::MIN + i64::from(first), -i128::from(slots), 0);
                        keys.push((key.0, key.1, key.2, b as u32));
                        continue;
                    }
                    (size as f64, -(start as i128), 0)
                }
                // Ties: the earliest start first.
                Strategy::FirstFit => (size as f64, -(start as i128), 0),
                Strategy::BestFit | Strategy::BigRocks => (size as f64, length as i128, 0),
                Strategy::Skyline => (
                    contention[b] as f64,
                    // Saturates: an i64 size by a squared i64 length can
                    // pass i128 (a tie-break only: order, not validity).
                    (size as i128)
                        .saturating_mul(length as i128)
                        .saturating_mul(length as i128),
                    length,
                ),
                // The longest-lived first: among buffers that start together
                // the one that reaches furthest fills most of a run.
                Strategy::GapFill => (self.lived_slots(b) as f64, size as i128, 0),
                Strategy::Online | Strategy::Coalescing => unreachable!("ordered by online_order"),
            };
            keys.push((
                total_order(-(primary * factor())),
                -secondary,
                -tertiary,
                b as u32,
            ));
        }
        sort_polled(&mut keys, poll)?;
        Ok(keys.into_iter().map(|k| k.3).collect())
    }

    /// The shortest lifetime (in slots) of a layer of `depth` (0: none).
    pub(super) fn layer_length(&self, depth: u8) -> u32 {
        if depth == 0 {
            return u32::MAX;
        }
        ((self.times as u64) >> depth).max(1) as u32
    }

    /// The online order: by the start of the first live piece (a gap may
    /// open a buffer), which is what makes it online; among buffers that
    /// start together the longest first (what lives longest goes lowest),
    /// then the largest. Noise only reorders buffers that start together.
    fn online_order(
        &self,
        mut noise: Option<(&mut Rng, f64)>,
        poll: &mut Poll<'_>,
    ) -> Result<Vec<u32>, Stop> {
        // By start (a radix sort), then the few that share a start by the
        // rest.
        let mut keys: Vec<(u32, i64, i64, u32)> = Vec::with_capacity(self.len());
        for (b, e) in self.extent.iter().enumerate() {
            if self.fixed[b].is_some() {
                continue;
            }
            let length = i64::from(self.lived_slots(b));
            let length = match noise.as_mut() {
                Some((rng, spread)) => (length as f64 * (1.0 + *spread * rng.signed_unit())) as i64,
                None => length,
            };
            keys.push((e.first, -length, -e.size, b as u32));
        }
        sort_by_lead_polled(&mut keys, |k| u64::from(k.0), poll)?;
        Ok(keys.into_iter().map(|k| k.3).collect())
    }
}

/// An integer that orders as `x` does under `f64::total_cmp`: the sign
/// bit set flips the other bits, so negative values count down.
fn total_order(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    bits ^ (((bits >> 63) as u64) >> 1) as i64
}

#[cfg(test)]
mod tests {
    use super::total_order;

    /// Sorting by `total_order` gives the order of `f64::total_cmp`.
    #[test]
    fn total_order_orders_as_total_cmp() {
        let mut values = alloc::vec![
            -1e300, -2.5, -1.0, -1e-300, -0.0, 0.0, 1e-300, 1.0, 2.5, 1e300, -3.75, 7.0, -7.0,
        ];
        let mut by_key = values.clone();
        values.sort_by(f64::total_cmp);
        by_key.sort_by_key(|&x| total_order(x));
        assert_eq!(
            values
                .iter()
                .map(|x| x.to_bits())
                .collect::<alloc::vec::Vec<_>>(),
            by_key
                .iter()
                .map(|x| x.to_bits())
                .collect::<alloc::vec::Vec<_>>()
        );
    }
}
