//! The max load: the largest total size alive at any one time, the bound
//! no placement can go below. One home for it (the sweep's section totals
//! and the heuristics' layout reach the same number their own way, as a
//! by-product of what they build).

use alloc::vec::Vec;

use crate::model::problem::Problem;

/// The largest total size alive at any one time (gap windows counted by
/// their size): no placement can be lower than this.
pub fn max_load(problem: &Problem) -> i64 {
    // Colocated buffers alias and separated ones meet: count what their
    // lowering counts.
    #[cfg(feature = "constraints")]
    if !problem.links().is_empty() {
        if let Ok(lowered) = problem.lowered() {
            return max_load(&lowered.problem);
        }
    }
    busiest(problem).0
}

/// The max load of a plain problem (links not lowered) and the first
/// moment it is reached (0 for no buffers).
pub(crate) fn busiest(problem: &Problem) -> (i64, i64) {
    let mut events: Vec<(i64, i64)> = Vec::with_capacity(2 * problem.len());
    for b in problem.buffers() {
        for p in b.pieces() {
            let h = p.window.upper - p.window.lower;
            events.push((p.lower, h));
            events.push((p.upper, -h));
        }
    }
    // At equal times the ends (negative) come first.
    crate::base::sort::sort(&mut events);
    let (mut load, mut best, mut at) = (0i64, 0i64, 0i64);
    for (t, d) in events {
        load += d;
        if load > best {
            (best, at) = (load, t);
        }
    }
    (best, at)
}
