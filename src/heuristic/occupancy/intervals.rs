//! Merged sets of memory intervals, the sets a node of the occupancy
//! tree keeps: a sorted vector while small, a B-tree once large.

use alloc::collections::{btree_map, BTreeMap};
use alloc::vec::Vec;

/// Disjoint, merged intervals `[bottom, top)`, in order of bottom.
///
/// Most sets of a large tree hold one or two intervals (packed memory
/// merges), so a set starts as a sorted vector, 16 bytes an interval; a
/// B-tree's node would take ~200 bytes for the first one, and on a million
/// buffers the trees' sets were most of the planner's memory. A set that
/// grows past [`IntervalSet::FEW`] intervals moves into a B-tree, where an
/// insertion costs O(log k) rather than a shift of k.
pub(crate) enum IntervalSet {
    Few(Vec<(i64, i64)>),
    // Boxed so that a set stays the size of a vector (a tree has two sets
    // per node, millions of nodes on a million buffers).
    #[allow(clippy::box_collection)]
    Many(alloc::boxed::Box<BTreeMap<i64, i64>>),
}

const _: () =
    assert!(core::mem::size_of::<IntervalSet>() == core::mem::size_of::<Vec<(i64, i64)>>());

impl Default for IntervalSet {
    fn default() -> Self {
        IntervalSet::Few(Vec::new())
    }
}

/// The intervals of a set from some point upward.
pub(crate) enum Cursor<'a> {
    Few(core::slice::Iter<'a, (i64, i64)>),
    Many(btree_map::Range<'a, i64, i64>),
}

impl Iterator for Cursor<'_> {
    type Item = (i64, i64);
    #[inline]
    fn next(&mut self) -> Option<(i64, i64)> {
        match self {
            Cursor::Few(it) => it.next().copied(),
            Cursor::Many(it) => it.next().map(|(&b, &t)| (b, t)),
        }
    }
}

impl IntervalSet {
    /// Past this many intervals a set is kept in a B-tree.
    const FEW: usize = 32;

    /// Adds `[bottom, top)`, merging with what it meets or touches;
    /// false if it was in the set already.
    pub(crate) fn insert(&mut self, bottom: i64, top: i64) -> bool {
        match self {
            IntervalSet::Few(v) => {
                // First interval not wholly below `[bottom, top)` (touching
                // counts as meeting).
                let from = v.partition_point(|&(_, t)| t < bottom);
                let to = v.partition_point(|&(b, _)| b <= top);
                if from < to {
                    let (b, t) = (v[from].0.min(bottom), v[to - 1].1.max(top));
                    if from + 1 == to && v[from] == (b, t) {
                        return false;
                    }
                    v[from] = (b, t);
                    v.drain(from + 1..to);
                } else {
                    v.insert(from, (bottom, top));
                    if v.len() > Self::FEW {
                        let map: BTreeMap<i64, i64> = v.iter().copied().collect();
                        *self = IntervalSet::Many(alloc::boxed::Box::new(map));
                    }
                }
                true
            }
            IntervalSet::Many(map) => Self::insert_into(map, bottom, top),
        }
    }

    fn insert_into(map: &mut BTreeMap<i64, i64>, mut bottom: i64, mut top: i64) -> bool {
        if let Some((&b, &t)) = map.range(..=bottom).next_back() {
            if t >= top {
                return false;
            }
            if t >= bottom {
                bottom = b;
                top = top.max(t);
            }
        }
        while let Some((&b, &t)) = map.range(bottom..).next() {
            if b > top {
                break;
            }
            top = top.max(t);
            map.remove(&b);
        }
        map.insert(bottom, top);
        true
    }

    /// Whether it holds no interval (a set in a B-tree never empties).
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        matches!(self, IntervalSet::Few(v) if v.is_empty())
    }

    /// The intervals whose bottom is at least `at`, upward.
    #[inline]
    pub(crate) fn from(&self, at: i64) -> Cursor<'_> {
        match self {
            IntervalSet::Few(v) => Cursor::Few(v[v.partition_point(|&(b, _)| b < at)..].iter()),
            IntervalSet::Many(map) => Cursor::Many(map.range(at..)),
        }
    }

    /// The highest interval whose bottom is below `x`.
    #[inline]
    pub(crate) fn last_below(&self, x: i64) -> Option<(i64, i64)> {
        match self {
            IntervalSet::Few(v) => v[..v.partition_point(|&(b, _)| b < x)].last().copied(),
            IntervalSet::Many(map) => map.range(..x).next_back().map(|(&b, &t)| (b, t)),
        }
    }

    /// The top of an interval meeting `[lo, hi)`, if any: the highest one,
    /// the only candidate since the intervals are disjoint.
    #[inline]
    pub(crate) fn conflict(&self, lo: i64, hi: i64) -> Option<i64> {
        match self.last_below(hi) {
            Some((_, top)) if top > lo => Some(top),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn interval_sets_merge_and_answer_conflicts() {
        let mut s = IntervalSet::default();
        s.insert(10, 20);
        s.insert(30, 40);
        s.insert(20, 25); // touches: merges
        let all = |s: &IntervalSet| s.from(i64::MIN).collect::<Vec<_>>();
        assert_eq!(all(&s), vec![(10, 25), (30, 40)]);
        s.insert(5, 35); // swallows both
        assert_eq!(all(&s), vec![(5, 40)]);
        assert_eq!(s.conflict(0, 5), None);
        assert_eq!(s.conflict(0, 6), Some(40));
        assert_eq!(s.conflict(40, 50), None);
    }

    /// Both forms of a set (a few intervals in a vector, many in a
    /// B-tree) answer as a plain bitmap of the memory in use does.
    #[test]
    fn interval_sets_match_a_bitmap_past_the_switch() {
        let mut rng = crate::base::rng::Rng::new(5);
        for round in 0..40 {
            let span = [60, 400, 2000][round % 3];
            let mut s = IntervalSet::default();
            let mut used = vec![false; span as usize + 1];
            for _ in 0..300 {
                let bottom = rng.below(0, span);
                let top = (bottom + rng.below(1, 6)).min(span);
                let new = (bottom..top).any(|x| !used[x as usize]);
                assert_eq!(s.insert(bottom, top), new, "[{bottom}, {top})");
                (bottom..top).for_each(|x| used[x as usize] = true);
                // The set is exactly the runs of the bitmap.
                let mut runs = Vec::new();
                let mut x = 0;
                while x < span {
                    if used[x as usize] {
                        let b = x;
                        while x < span && used[x as usize] {
                            x += 1;
                        }
                        runs.push((b, x));
                    } else {
                        x += 1;
                    }
                }
                let got: Vec<_> = s.from(i64::MIN).collect();
                assert_eq!(got, runs);
                let lo = rng.below(0, span);
                let hi = lo + rng.below(1, 8);
                let meets = (lo..hi.min(span)).any(|x| used[x as usize]);
                assert_eq!(s.conflict(lo, hi).is_some(), meets);
            }
            if span == 2000 {
                assert!(matches!(s, IntervalSet::Many(_)));
            }
        }
    }
}
