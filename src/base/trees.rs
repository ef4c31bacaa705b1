//! Segment trees over positions (section or time indices): range-add with
//! range-max, for the search's section totals and the heuristics' load
//! profile, and range-chmax with range-max, for the skyline.

use alloc::vec;
use alloc::vec::Vec;

/// Range-add, range-max over `n` values. A node holds the max of its range
/// including its own pending addition, so nothing is pushed down.
pub(crate) struct MaxTree {
    n: usize,
    max: Vec<i64>,
    add: Vec<i64>,
}

impl MaxTree {
    pub(crate) fn new(values: &[i64]) -> Self {
        let n = values.len().max(1);
        let mut t = MaxTree {
            n,
            max: vec![0; 4 * n],
            add: vec![0; 4 * n],
        };
        if !values.is_empty() {
            t.build(1, 0, n, values);
        }
        t
    }

    fn build(&mut self, node: usize, lo: usize, hi: usize, values: &[i64]) {
        if hi - lo == 1 {
            self.max[node] = values[lo];
            return;
        }
        let mid = (lo + hi) / 2;
        self.build(2 * node, lo, mid, values);
        self.build(2 * node + 1, mid, hi, values);
        self.max[node] = self.max[2 * node].max(self.max[2 * node + 1]);
    }

    /// Adds `v` to every value in `[from, to)`.
    pub(crate) fn add(&mut self, from: usize, to: usize, v: i64) {
        if from < to {
            self.add_in(1, 0, self.n, from, to, v);
        }
    }

    fn add_in(&mut self, node: usize, lo: usize, hi: usize, from: usize, to: usize, v: i64) {
        if from <= lo && hi <= to {
            self.max[node] += v;
            self.add[node] += v;
            return;
        }
        let mid = (lo + hi) / 2;
        if from < mid {
            self.add_in(2 * node, lo, mid, from, to, v);
        }
        if to > mid {
            self.add_in(2 * node + 1, mid, hi, from, to, v);
        }
        self.max[node] = self.max[2 * node].max(self.max[2 * node + 1]) + self.add[node];
    }

    /// The largest value in `[from, to)` (`i64::MIN` if empty).
    pub(crate) fn max(&self, from: usize, to: usize) -> i64 {
        if from >= to {
            return i64::MIN;
        }
        self.max_in(1, 0, self.n, from, to)
    }

    /// The largest value in `[from, to)` and the first position holding it
    /// (`(i64::MIN, from)` if empty).
    pub(crate) fn max_at(&self, from: usize, to: usize) -> (i64, usize) {
        if from >= to {
            return (i64::MIN, from);
        }
        self.max_at_in(1, 0, self.n, from, to)
    }

    fn max_at_in(&self, node: usize, lo: usize, hi: usize, from: usize, to: usize) -> (i64, usize) {
        if hi - lo == 1 {
            return (self.max[node], lo);
        }
        let mid = (lo + hi) / 2;
        let (mut best, mut at) = (i64::MIN, from);
        if from <= lo && hi <= to {
            // Whole node: descend into the child holding the max.
            let (l, r) = (self.max[2 * node], self.max[2 * node + 1]);
            let (b, a) = if l >= r {
                self.max_at_in(2 * node, lo, mid, from, to)
            } else {
                self.max_at_in(2 * node + 1, mid, hi, from, to)
            };
            return (b.saturating_add(self.add[node]), a);
        }
        if from < mid {
            (best, at) = self.max_at_in(2 * node, lo, mid, from, to);
        }
        if to > mid {
            let (b, a) = self.max_at_in(2 * node + 1, mid, hi, from, to);
            if b > best {
                (best, at) = (b, a);
            }
        }
        (best.saturating_add(self.add[node]), at)
    }

    fn max_in(&self, node: usize, lo: usize, hi: usize, from: usize, to: usize) -> i64 {
        if from <= lo && hi <= to {
            return self.max[node];
        }
        let mid = (lo + hi) / 2;
        let mut best = i64::MIN;
        if from < mid {
            best = best.max(self.max_in(2 * node, lo, mid, from, to));
        }
        if to > mid {
            best = best.max(self.max_in(2 * node + 1, mid, hi, from, to));
        }
        best.saturating_add(self.add[node])
    }
}

/// Range-"raise to at least", range-max over `n` positions, all starting
/// at 0. A node's `max` covers its range; `floor` is a value raised over
/// its whole range and not pushed down (raising is monotone).
#[cfg(feature = "heuristics")]
pub(crate) struct ChmaxTree {
    n: usize,
    max: Vec<i64>,
    floor: Vec<i64>,
}

#[cfg(feature = "heuristics")]
impl ChmaxTree {
    pub(crate) fn new(n: usize) -> Self {
        let n = n.max(1);
        ChmaxTree {
            n,
            max: vec![0; 4 * n],
            floor: vec![0; 4 * n],
        }
    }

    /// Raises every value in `[from, to)` to at least `v`.
    pub(crate) fn raise(&mut self, from: usize, to: usize, v: i64) {
        if from < to {
            self.raise_in(1, 0, self.n, from, to, v);
        }
    }

    fn raise_in(&mut self, node: usize, lo: usize, hi: usize, from: usize, to: usize, v: i64) {
        if self.max[node] < v {
            self.max[node] = v;
        }
        if from <= lo && hi <= to {
            if self.floor[node] < v {
                self.floor[node] = v;
            }
            return;
        }
        let mid = (lo + hi) / 2;
        if from < mid {
            self.raise_in(2 * node, lo, mid, from, to, v);
        }
        if to > mid {
            self.raise_in(2 * node + 1, mid, hi, from, to, v);
        }
    }

    /// The largest value in `[from, to)` (0 if empty).
    pub(crate) fn max(&self, from: usize, to: usize) -> i64 {
        if from >= to {
            return 0;
        }
        self.max_in(1, 0, self.n, from, to)
    }

    fn max_in(&self, node: usize, lo: usize, hi: usize, from: usize, to: usize) -> i64 {
        if from <= lo && hi <= to {
            return self.max[node];
        }
        let mid = (lo + hi) / 2;
        let mut best = self.floor[node];
        if from < mid {
            best = best.max(self.max_in(2 * node, lo, mid, from, to));
        }
        if to > mid {
            best = best.max(self.max_in(2 * node + 1, mid, hi, from, to));
        }
        best
    }
}

/// A value per position with point updates, answering the first
/// position of a range whose value is at most a bound (gap filling's
/// "where does a buffer that ends in time start").
#[cfg(feature = "heuristics")]
pub(crate) struct FirstAtMost {
    leaves: usize,
    /// Per node, the least value below it (`u32::MAX` past the end).
    min: Vec<u32>,
}

#[cfg(feature = "heuristics")]
impl FirstAtMost {
    pub(crate) fn new(values: &[u32]) -> Self {
        let leaves = values.len().max(1).next_power_of_two();
        let mut min = alloc::vec![u32::MAX; 2 * leaves];
        min[leaves..leaves + values.len()].copy_from_slice(values);
        for i in (1..leaves).rev() {
            min[i] = min[2 * i].min(min[2 * i + 1]);
        }
        FirstAtMost { leaves, min }
    }

    pub(crate) fn value(&self, i: usize) -> u32 {
        self.min[self.leaves + i]
    }

    pub(crate) fn set(&mut self, i: usize, v: u32) {
        let mut at = self.leaves + i;
        self.min[at] = v;
        while at > 1 {
            at /= 2;
            self.min[at] = self.min[2 * at].min(self.min[2 * at + 1]);
        }
    }

    /// The first position in `[lo, hi)` whose value is at most `x`: the
    /// leftmost subtree that can hold one is entered, so a query visits
    /// O(log n) nodes besides those it leaves at once.
    pub(crate) fn first(&self, lo: usize, hi: usize, x: u32) -> Option<usize> {
        let hi = hi.min(self.leaves);
        if lo >= hi {
            return None;
        }
        // Bottom-up over the nodes tiling [lo, hi), left to right; the
        // first that holds a value at most `x` is descended into.
        let (mut l, mut r) = (lo + self.leaves, hi + self.leaves);
        // The right side's nodes, at most one a level.
        let (mut right, mut count) = ([0usize; usize::BITS as usize], 0);
        while l < r {
            if l & 1 == 1 {
                if self.min[l] <= x {
                    return Some(self.descend(l, x));
                }
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                right[count] = r;
                count += 1;
            }
            l >>= 1;
            r >>= 1;
        }
        right[..count]
            .iter()
            .rev()
            .find(|&&node| self.min[node] <= x)
            .map(|&node| self.descend(node, x))
    }

    fn descend(&self, mut node: usize, x: u32) -> usize {
        while node < self.leaves {
            node = if self.min[2 * node] <= x {
                2 * node
            } else {
                2 * node + 1
            };
        }
        node - self.leaves
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first position at most a bound, against a scan, under updates
    /// (sizes that are and are not powers of two, bounds on both sides).
    #[test]
    #[cfg(feature = "heuristics")]
    fn first_at_most_matches_a_scan() {
        let mut rng = crate::base::rng::Rng::new(17);
        for n in 1..70usize {
            let mut plain: Vec<u32> = (0..n).map(|_| rng.below(0, 50) as u32).collect();
            let mut tree = FirstAtMost::new(&plain);
            for _ in 0..300 {
                let i = rng.below(0, n as i64) as usize;
                if rng.below(0, 3) == 0 {
                    plain[i] = rng.below(0, 50) as u32;
                    tree.set(i, plain[i]);
                }
                assert_eq!(tree.value(i), plain[i]);
                let lo = rng.below(0, n as i64 + 1) as usize;
                let hi = rng.below(0, n as i64 + 2) as usize;
                let x = rng.below(0, 55) as u32;
                let want = (lo..hi.min(n)).find(|&j| plain[j] <= x);
                assert_eq!(tree.first(lo, hi, x), want, "{plain:?} [{lo}, {hi}) <= {x}");
            }
        }
    }

    #[test]
    #[cfg(feature = "heuristics")]
    fn chmax_matches_a_plain_array() {
        let mut rng = crate::base::rng::Rng::new(11);
        let mut next = move || rng.next();
        for n in 1..40usize {
            let mut plain = vec![0i64; n];
            let mut tree = ChmaxTree::new(n);
            for _ in 0..200 {
                let a = (next() % n as u64) as usize;
                let b = (next() % (n as u64 + 1)) as usize;
                let (from, to) = (a.min(b), a.max(b));
                if next() % 2 == 0 {
                    let v = (next() % 100) as i64;
                    tree.raise(from, to, v);
                    plain[from..to].iter_mut().for_each(|x| *x = (*x).max(v));
                } else {
                    let want = plain[from..to].iter().copied().max().unwrap_or(0);
                    assert_eq!(tree.max(from, to), want);
                }
            }
        }
    }

    #[test]
    fn matches_a_plain_array() {
        let mut rng = crate::base::rng::Rng::new(7);
        let mut next = move || rng.next();
        for n in 1..40usize {
            let mut plain: Vec<i64> = (0..n).map(|_| (next() % 100) as i64).collect();
            let mut tree = MaxTree::new(&plain);
            for _ in 0..200 {
                let a = (next() % n as u64) as usize;
                let b = (next() % (n as u64 + 1)) as usize;
                let (from, to) = (a.min(b), a.max(b));
                if next() % 2 == 0 {
                    let v = (next() % 21) as i64 - 10;
                    tree.add(from, to, v);
                    plain[from..to].iter_mut().for_each(|x| *x += v);
                } else {
                    let want = plain[from..to].iter().copied().max().unwrap_or(i64::MIN);
                    assert_eq!(tree.max(from, to), want);
                    if from < to {
                        let at = from + plain[from..to].iter().position(|&x| x == want).unwrap();
                        assert_eq!(tree.max_at(from, to), (want, at));
                    }
                }
            }
        }
    }
}
