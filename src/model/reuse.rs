//! What a placement pays for reuse: the pairs with a penalty (see
//! [`Problem::penalize`]) whose bytes meet.
//!
//! Two buffers share a byte when their intervals of memory,
//! `[offset, offset + size)`, meet; in a valid placement that happens only
//! between buffers never alive together, which is what a penalty prices
//! (the second one reuses memory the first one left, and must wait for it).
//! With pools the offsets are addresses, and buffers in different pools
//! share nothing.

use alloc::vec::Vec;

use crate::model::problem::Problem;
use crate::model::solution::Solution;

/// Whether `[a, a + size_a)` and `[b, b + size_b)` meet (sizes positive).
fn meet(a: i64, size_a: i64, b: i64, size_b: i64) -> bool {
    a < b.saturating_add(size_b) && b < a.saturating_add(size_a)
}

/// The penalised pairs of `problem` whose bytes meet at `offsets`, with
/// their costs.
pub(crate) fn sharing(problem: &Problem, offsets: &[i64]) -> Vec<(usize, usize, i64)> {
    let buffers = problem.buffers();
    problem
        .penalties()
        .filter(|&(a, b, _)| {
            let (x, y) = (&buffers[a], &buffers[b]);
            meet(offsets[a], x.size, offsets[b], y.size)
        })
        .collect()
}

/// The total cost of the penalised pairs of `problem` whose bytes meet at
/// `offsets` (one per buffer). The total fits: declaring penalties refuses
/// costs that could add up past 2^63-1.
pub(crate) fn cost(problem: &Problem, offsets: &[i64]) -> i64 {
    sharing(problem, offsets)
        .iter()
        .fold(0i64, |sum, &(_, _, c)| sum.saturating_add(c))
}

impl Solution {
    /// What this placement pays in reuse penalties: the summed costs of the
    /// penalised pairs of `problem` whose bytes meet. 0 without penalties,
    /// and 0 for a solution of another problem (not one offset a buffer).
    pub fn penalty(&self, problem: &Problem) -> i64 {
        if self.offsets.len() != problem.len() {
            return 0;
        }
        cost(problem, &self.offsets)
    }
}
