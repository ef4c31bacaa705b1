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
    let pieces = || problem.buffers().iter().flat_map(|b| b.pieces());
    // Pieces lie within their buffer's lifetime.
    let (mut first, mut last) = (i64::MAX, i64::MIN);
    for b in problem.buffers() {
        (first, last) = (first.min(b.lower), last.max(b.upper));
    }
    let count = problem.len();
    // Each piece's start and end change the load; all the changes at one
    // time are summed before the load is read, as ends there come before
    // starts (a lifetime is half-open). Times that span little beside the
    // buffers' count are indexed directly, with no sort: a plan stopped by
    // its deadline still computes this bound, on a million buffers.
    let span = (last as i128) - (first as i128);
    if count > 0 && span <= 4 * count as i128 {
        let mut at_time = alloc::vec![0i64; span as usize + 1];
        for p in pieces() {
            let h = p.window.upper - p.window.lower;
            at_time[(p.lower - first) as usize] += h;
            at_time[(p.upper - first) as usize] -= h;
        }
        return peak((first..).zip(at_time));
    }
    let mut events = Vec::with_capacity(2 * count);
    for p in pieces() {
        let h = p.window.upper - p.window.lower;
        events.extend([(p.lower, h), (p.upper, -h)]);
    }
    crate::base::sort::sort_by_key(&mut events, |e| e.0);
    peak(events.into_iter())
}

/// The highest load that `changes`, (time, change) in time order, reach,
/// and the first time they reach it; a time's changes are summed first.
fn peak(changes: impl Iterator<Item = (i64, i64)>) -> (i64, i64) {
    let (mut load, mut best, mut at) = (0i64, 0i64, 0i64);
    let mut changes = changes.peekable();
    while let Some((t, d)) = changes.next() {
        load += d;
        if changes.peek().is_some_and(|&(u, _)| u == t) {
            continue;
        }
        if load > best {
            (best, at) = (load, t);
        }
    }
    (best, at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::rng::Rng;
    use crate::model::buffer::{Buffer, Gap, Window};

    /// The load at every time a piece starts, summed by brute force: the
    /// highest, and the first time it is reached.
    fn brute(problem: &Problem) -> (i64, i64) {
        let pieces: Vec<_> = problem.buffers().iter().flat_map(|b| b.pieces()).collect();
        let mut times: Vec<i64> = pieces.iter().map(|p| p.lower).collect();
        times.sort_unstable();
        let (mut best, mut at) = (0, 0);
        for t in times {
            let load: i64 = pieces
                .iter()
                .filter(|p| p.lower <= t && t < p.upper)
                .map(|p| p.window.upper - p.window.lower)
                .sum();
            if load > best {
                (best, at) = (load, t);
            }
        }
        (best, at)
    }

    /// Both ways of ordering the changes (times indexed directly where they
    /// span little, sorted where they are spread out) give the brute
    /// force's load and moment, with gaps, windows, times far apart and
    /// lifetimes that touch.
    #[test]
    fn busiest_is_the_brute_force_peak() {
        let mut rng = Rng::new(11);
        for case in 0..400 {
            let n = rng.below(1, 40);
            let spread = [3, 50, 1_000_000_000][case % 3];
            let buffers: Vec<Buffer> = (0..n)
                .map(|i| {
                    let lower = rng.below(0, 2 * spread);
                    let upper = lower + rng.below(1, 2 * spread / 3 + 2);
                    let size = rng.below(1, 20);
                    let mut b = Buffer::new(alloc::format!("b{i}"), lower, upper, size);
                    if upper - lower >= 3 && rng.below(0, 3) == 0 {
                        let window = (rng.below(0, 2) == 0).then_some(Window {
                            lower: 0,
                            upper: rng.below(1, size + 1),
                        });
                        b.gaps.push(Gap {
                            lower: lower + 1,
                            upper: upper - 1,
                            window,
                        });
                    }
                    b
                })
                .collect();
            let problem = Problem::new(i64::MAX, buffers).unwrap();
            assert_eq!(busiest(&problem), brute(&problem), "case {case}");
        }
        let empty = Problem::new(i64::MAX, Vec::new()).unwrap();
        assert_eq!(busiest(&empty), (0, 0));
    }
}
