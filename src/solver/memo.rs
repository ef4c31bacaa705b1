//! What the exact search keeps from one call to the next on one problem,
//! so that the planner's rounds, which call again with more nodes (four
//! times as many each round), go on where the calls before stopped
//! instead of searching their work again:
//! - the states the conflict graph's search exhausted (see `failed`), at
//!   any capacity;
//! - at each of the last few capacities, where the sweep's runs stood in
//!   each partition (see `rounds::Position`) and, on a conflict graph,
//!   where the turns of `both_searches` stood, with the walk and the
//!   growing part they had made.
//!
//! Without it a call searched again all that the call before it had, a
//! quarter of the work of each round (half, where the exact search has a
//! core of its own and its calls take a share of the time left). What is
//! kept only decides which runs come next: every answer still comes from
//! a run made in the call that gives it, so no answer depends on it.

use alloc::vec::Vec;

#[cfg(feature = "heuristics")]
use super::rounds::Position;

/// What calls of the search on one problem keep for the calls after them
/// (never shared between problems, nor between different parameters but
/// the node limit).
#[derive(Default)]
pub(crate) struct Memo {
    #[cfg(feature = "constraints")]
    pub(super) failed: Option<super::failed::Failed>,
    /// (Two: a part's table of exhausted states may take megabytes.)
    #[cfg(feature = "constraints")]
    pub(super) turns: Recent<super::turns::Turns, 2>,
    /// The tiny build (no heuristics: one lane, no rounds to share with)
    /// keeps none, for its size.
    #[cfg(feature = "heuristics")]
    pub(super) positions: Recent<Vec<Option<Position>>, 4>,
}

/// Values kept for the last `N` capacities they were put at: the
/// minimiser's rounds make about two attempts each, the lowest capacity
/// not ruled out among them.
#[cfg_attr(
    not(any(feature = "constraints", feature = "heuristics")),
    allow(dead_code)
)]
pub(super) struct Recent<T, const N: usize> {
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
    pub(super) fn take(&mut self, capacity: i64) -> Option<T> {
        let i = self.kept.iter().position(|&(c, _)| c == capacity)?;
        Some(self.kept.remove(i).1)
    }

    /// Keeps `value` for `capacity`, forgetting the oldest beyond `N`.
    pub(super) fn put(&mut self, capacity: i64, value: T) {
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

    /// On conflict graphs (planted kernels, their dense separations
    /// lowered to moments, searched in the turns of `both_searches`),
    /// calls cut short by their node limits and made again with one memo,
    /// at two capacities alternately, decide as one call without a limit:
    /// they place where it places (validly, below the capacity) and prove
    /// what it proves. 1,500 kernels of 4-28 buffers, limits from up to 8
    /// nodes a buffer doubling per call.
    #[test]
    #[cfg(all(feature = "constraints", feature = "heuristics"))]
    fn resumed_turns_decide_as_one_call_does() {
        use super::super::testing::{answered_in_calls, assert_decides_as, planted};
        use super::super::{graph, solve, Params};
        use crate::deadline::Deadline;
        use crate::rng::Rng;
        let mut rng = Rng::new(0x7e2);
        let deadline = Deadline::new(None, None, None);
        let params = Params {
            conflict_graph: true,
            ..Params::default()
        };
        let (mut on_graphs, mut resumed) = (0, 0);
        for i in 0..1_500 {
            let n = rng.below(4, 28) as usize;
            let problem = planted(&mut rng, n).lowered().expect("lowers").problem;
            on_graphs += usize::from(graph::applies(&problem));
            let below = rng.below(1, problem.capacity().max(1) + 1);
            let capacities = [problem.capacity(), below];
            let whole = capacities.map(|c| solve(&problem, c, &params, &deadline).0);
            let first = 1 + rng.below(0, 8 * problem.len() as i64) as u64;
            let (answers, calls, _) =
                answered_in_calls(&problem, capacities, (&params, first, true));
            for k in 0..2 {
                let what = alloc::format!("kernel {i}");
                assert_decides_as(&problem, capacities[k], (&whole[k], &answers[k]), &what);
            }
            resumed += usize::from(calls[0] > 1);
        }
        assert!(
            on_graphs > 1_000 && resumed > 200,
            "{on_graphs} on conflict graphs, {resumed} at the capacity resumed"
        );
    }
}
