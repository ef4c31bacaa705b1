//! What the exact search keeps from one call to the next on one problem,
//! so that the planner's rounds, which call again with more nodes (four
//! times as many each round), go on where the calls before stopped
//! instead of searching their work again:
//! at each of the last few capacities, where the sweep's runs stood in
//! each partition (see `rounds::Position`). (The searches on a conflict
//! graph keep more beside it: see `graph::Memo`.)
//!
//! Without it a call searched again all that the call before it had, a
//! quarter of the work of each round (half, where the exact search has a
//! core of its own and its calls take a share of the time left). What is
//! kept only decides which runs come next: every answer still comes from
//! a run made in the call that gives it, so no answer depends on it.

use alloc::vec::Vec;

#[cfg(any(feature = "heuristics", feature = "constraints"))]
use super::rounds::Position;

/// What calls of the sweep's search on one problem keep for the calls
/// after them (never shared between problems, nor between different
/// parameters but the node limit).
#[derive(Default)]
pub(crate) struct Memo {
    /// The tiny build (no heuristics: one lane, no rounds to share with)
    /// keeps none, for its size.
    #[cfg(feature = "heuristics")]
    positions: Recent<Vec<Option<Position>>, 4>,
}

#[cfg(any(feature = "heuristics", feature = "constraints"))]
impl Memo {
    /// Where the runs of each of `partitions` partitions stood when a call
    /// at `capacity` left them (none where no call did).
    pub(crate) fn take(&mut self, capacity: i64, partitions: usize) -> Vec<Option<Position>> {
        #[cfg(feature = "heuristics")]
        let mut positions = self.positions.take(capacity).unwrap_or_default();
        // (Without the heuristics none are kept.)
        #[cfg(not(feature = "heuristics"))]
        let (mut positions, _) = (Vec::new(), capacity);
        positions.resize(partitions, None);
        positions
    }

    /// Keeps where a call at `capacity` left the runs.
    pub(crate) fn put(&mut self, capacity: i64, positions: Vec<Option<Position>>) {
        #[cfg(feature = "heuristics")]
        self.positions.put(capacity, positions);
        #[cfg(not(feature = "heuristics"))]
        let _ = (capacity, positions);
    }
}

/// Values kept for the last `N` capacities they were put at: the
/// minimiser's rounds make about two attempts each, the lowest capacity
/// not ruled out among them.
#[cfg_attr(
    not(any(feature = "constraints", feature = "heuristics")),
    allow(dead_code)
)]
pub(crate) struct Recent<T, const N: usize> {
    /// The one put last at the end.
    kept: Vec<(i64, T)>,
}

impl<T, const N: usize> Default for Recent<T, N> {
    fn default() -> Self {
        Recent { kept: Vec::new() }
    }
}

#[cfg_attr(
    not(any(feature = "constraints", feature = "heuristics")),
    allow(dead_code)
)]
impl<T, const N: usize> Recent<T, N> {
    /// What was put at `capacity`, taken out.
    pub(crate) fn take(&mut self, capacity: i64) -> Option<T> {
        let i = self.kept.iter().position(|&(c, _)| c == capacity)?;
        Some(self.kept.remove(i).1)
    }

    /// Keeps `value` for `capacity`, forgetting the oldest beyond `N`.
    pub(crate) fn put(&mut self, capacity: i64, value: T) {
        self.kept.retain(|&(c, _)| c != capacity);
        if self.kept.len() == N {
            self.kept.remove(0);
        }
        self.kept.push((capacity, value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The last capacities put are the ones kept; taking removes; putting
    /// again at a capacity replaces its value.
    #[test]
    fn recent_keeps_the_last_capacities() {
        let mut recent = Recent::<i64, 4>::default();
        for c in 0..6 {
            recent.put(c, c * 10);
        }
        recent.put(3, 31);
        assert_eq!(recent.take(0), None);
        assert_eq!(recent.take(1), None);
        assert_eq!(recent.take(3), Some(31));
        assert_eq!(recent.take(3), None);
        assert_eq!(recent.take(5), Some(50));
        assert_eq!(recent.take(2), Some(20));
        assert_eq!(recent.take(4), Some(40));
        assert!(recent.kept.is_empty());
    }
}
