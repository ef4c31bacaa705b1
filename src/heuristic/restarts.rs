//! Placements in plain and perturbed orders: what the scheduler's
//! restarts run.
//!
//! A perturbed restart `j` (numbered from 1) scales each buffer's sort
//! key by a random factor drawn from a stream seeded by `(seed, j)`, with
//! a spread that cycles from 2 % to 35 %. The variants come ranked best
//! first, and restart `j` runs the one ranked by the trailing zeros of
//! `j` (so the best gets half of them, the next a quarter, ...): time goes
//! where the plain orders did best. Restarts are numbered, so a result
//! depends only on which restarts ran, not on which thread ran them.

use alloc::vec::Vec;

use super::layout::Layout;
use super::strategy::Variant;
use crate::base::rng::Rng;
use crate::deadline::{Poll, Stop};

/// A placement and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Best {
    /// Offset per buffer.
    pub offsets: Vec<i64>,
    /// Its height.
    pub height: i64,
    /// The variant that made it.
    pub variant: Variant,
    /// The restart that made it: 0 for a plain order, `j` for perturbed
    /// restart `j`.
    pub restart: u64,
}

/// Restarts run without a deadline: 64, fewer above 100,000 buffers (down
/// to 8), so that minimising a million buffers without a timeout takes
/// seconds rather than half a minute.
pub fn default_count(buffers: usize) -> u64 {
    const PLACEMENTS: u64 = 6_400_000;
    (PLACEMENTS / (buffers as u64).max(1)).clamp(8, 64)
}

const SPREADS: [f64; 4] = [0.02, 0.05, 0.15, 0.35];

/// `variant` in its plain order; `None` once it would end above `limit`
/// (see [`Layout::place`]).
pub(crate) fn plain(
    layout: &Layout,
    variant: Variant,
    limit: i64,
    poll: &mut Poll<'_>,
) -> Result<Option<Best>, Stop> {
    let order = layout.order(variant, None, poll)?;
    let placed = layout.place(variant, &order, limit, poll)?;
    Ok(placed.map(|(offsets, height)| Best {
        offsets,
        height,
        variant,
        restart: 0,
    }))
}

/// The online strategy's plain order, whole (for tests that need a
/// first placement to start from).
#[cfg(test)]
pub(crate) fn plain_online(layout: &Layout, poll: &mut Poll<'_>) -> Best {
    let online = Variant::plain(super::strategy::Strategy::Online);
    plain(layout, online, i64::MAX, poll)
        .ok()
        .flatten()
        .expect("a plain order without a limit or a deadline places everything")
}

/// Perturbed restart `j >= 1` over `ranked` (not empty), best first;
/// `None` once it would end above `limit`.
pub(crate) fn perturbed(
    layout: &Layout,
    ranked: &[Variant],
    j: u64,
    seed: u64,
    limit: i64,
    poll: &mut Poll<'_>,
) -> Result<Option<Best>, Stop> {
    let k = ranked.len() as u64;
    let rank = u64::from(j.trailing_zeros()).min(k - 1);
    let variant = ranked[rank as usize];
    // How many times this variant came before: the spreads cycle.
    let turn = if rank == k - 1 {
        j >> rank
    } else {
        j >> (rank + 1)
    };
    let spread = SPREADS[(turn % SPREADS.len() as u64) as usize];
    let mut rng = Rng::new(seed ^ j.wrapping_mul(0xA076_1D64_78BD_642F));
    let order = layout.order(variant, Some((&mut rng, spread)), poll)?;
    let placed = layout.place(variant, &order, limit, poll)?;
    Ok(placed.map(|(offsets, height)| Best {
        offsets,
        height,
        variant,
        restart: j,
    }))
}
