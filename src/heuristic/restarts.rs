//! Improving restarts: the strategies rerun on seeded perturbations of
//! their orders, keeping the lowest placement.
//!
//! The first `k` restarts run the `k` strategies in their plain orders.
//! The others perturb the orders, scaling each buffer's sort key by a
//! random factor drawn from a stream seeded by `(seed, i)`, with a spread
//! that cycles from 2 % to 35 %; the strategies come ranked best first,
//! and restart `k + j - 1` runs the one ranked by the trailing zeros of
//! `j` (so the best gets half of them, the next a quarter, ...): time
//! goes where the plain orders did best.
//! Restarts are numbered, so that the result depends only on which
//! restarts ran: with a restart count and no timeout it is reproducible,
//! however many threads share the work. The best is the lowest height,
//! ties going to the lowest restart number; reaching the lower bound stops
//! the restarts after it.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use super::{Layout, Strategy};
use crate::deadline::{Deadline, Poll};
use crate::rng::Rng;

/// How to restart.
#[derive(Clone, Debug, PartialEq)]
pub struct Restarts {
    /// Strategies to restart, best first.
    pub strategies: Vec<Strategy>,
    /// Whether the plain orders already ran: the restarts then begin with
    /// the first perturbed one (number `k`).
    pub plain_done: bool,
    /// Run this many restarts (`None`: until the deadline, or
    /// [`Restarts::default_count`] without one).
    pub count: Option<u64>,
    /// Seed of the perturbations.
    pub seed: u64,
    /// Worker threads (with `std`; 1 without).
    pub threads: usize,
}

impl Restarts {
    /// Restarts run without a count or a deadline: 64, fewer above 100,000
    /// buffers (down to 8), so that minimising a million buffers without a
    /// timeout takes seconds rather than half a minute.
    pub fn default_count(buffers: usize) -> u64 {
        const PLACEMENTS: u64 = 6_400_000;
        (PLACEMENTS / (buffers as u64).max(1)).clamp(8, 64)
    }
}

/// The best placement found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Best {
    /// Offset per buffer.
    pub offsets: Vec<i64>,
    /// Its height.
    pub height: i64,
    /// The strategy that made it.
    pub strategy: Strategy,
    /// The restart that made it (0 for the plain order of the first
    /// strategy).
    pub restart: u64,
}

impl Best {
    fn better_than(&self, other: &Best) -> bool {
        (self.height, self.restart) < (other.height, other.restart)
    }
}

const SPREADS: [f64; 4] = [0.02, 0.05, 0.15, 0.35];

/// One restart; `None` if the deadline passed.
fn restart(layout: &Layout, how: &Restarts, i: u64, deadline: &Deadline<'_>) -> Option<Best> {
    let k = how.strategies.len() as u64;
    let mut poll = Poll::new(deadline, 1 << 14);
    let (strategy, order) = if i < k {
        let strategy = how.strategies[i as usize];
        (strategy, layout.order(strategy, None, &mut poll).ok()?)
    } else {
        let j = i - k + 1;
        let rank = u64::from(j.trailing_zeros()).min(k - 1);
        let strategy = how.strategies[rank as usize];
        // How many times this strategy came before: the spreads cycle.
        let turn = if rank == k - 1 {
            j >> rank
        } else {
            j >> (rank + 1)
        };
        let spread = SPREADS[(turn % SPREADS.len() as u64) as usize];
        let mut rng = Rng::new(how.seed ^ i.wrapping_mul(0xA076_1D64_78BD_642F));
        let noise = Some((&mut rng, spread));
        (strategy, layout.order(strategy, noise, &mut poll).ok()?)
    };
    let (offsets, height) = layout.place(strategy, &order, &mut poll).ok()?;
    Some(Best {
        offsets,
        height,
        strategy,
        restart: i,
    })
}

/// Runs restarts `0..` until the count, the deadline, or a placement at
/// `lower_bound`; returns the best (`None` only if not even one finished).
/// `on_better` hears each height lower than any before it (from any
/// thread), for progress reports.
pub(crate) fn improve(
    layout: &Layout,
    how: &Restarts,
    lower_bound: i64,
    deadline: &Deadline<'_>,
    on_better: &(dyn Fn(i64) + Sync),
) -> Option<Best> {
    if how.strategies.is_empty() || layout.fixed_clash {
        return None;
    }
    let count = how.count.unwrap_or(if deadline.remaining().is_some() {
        u64::MAX
    } else {
        Restarts::default_count(layout.len())
    });
    let first = if how.plain_done {
        how.strategies.len() as u64
    } else {
        0
    };
    let end = first.saturating_add(count);
    // The next restart to start, and the first that reached the bound.
    let next = AtomicU64::new(first);
    let stop = AtomicU64::new(u64::MAX);
    let lowest = AtomicI64::new(i64::MAX);
    let work = || -> Option<Best> {
        let mut best: Option<Best> = None;
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= end || i > stop.load(Ordering::Relaxed) || deadline.check().is_err() {
                return best;
            }
            let Some(found) = restart(layout, how, i, deadline) else {
                return best;
            };
            if found.height <= lower_bound {
                stop.fetch_min(i, Ordering::Relaxed);
            }
            if found.height < lowest.fetch_min(found.height, Ordering::Relaxed) {
                on_better(found.height);
            }
            if best.as_ref().is_none_or(|b| found.better_than(b)) {
                best = Some(found);
            }
        }
    };
    let threads = how.threads.max(1);
    #[cfg(feature = "std")]
    if threads > 1 {
        let results: Vec<Option<Best>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads).map(|_| scope.spawn(work)).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or(None))
                .collect()
        });
        return results
            .into_iter()
            .flatten()
            .reduce(|a, b| if b.better_than(&a) { b } else { a });
    }
    let _ = threads;
    work()
}
