//! Sorting for the core. With `std` it is the standard library's; without,
//! one heapsort behind a trait object: the standard sorts are fast but
//! large, copied for every element type, and the on-device build counts
//! every kilobyte. Every sort here is on keys that are unique or whose
//! order among equals does not matter, so both give the same results.

/// Sorts `v` in increasing order.
pub(crate) fn sort<T: Ord>(v: &mut [T]) {
    #[cfg(feature = "std")]
    v.sort_unstable();
    #[cfg(not(feature = "std"))]
    heapsort(&mut Plain(v));
}

/// Sorts `v` by `key`, in increasing order.
pub(crate) fn sort_by_key<T, K: Ord>(v: &mut [T], key: impl FnMut(&T) -> K) {
    #[cfg(feature = "std")]
    v.sort_unstable_by_key(key);
    #[cfg(not(feature = "std"))]
    heapsort(&mut ByKey { v, key });
}

/// A sequence the heapsort can compare and permute by position.
trait Sequence {
    fn len(&self) -> usize;
    fn less(&mut self, i: usize, j: usize) -> bool;
    fn swap(&mut self, i: usize, j: usize);
}

#[cfg_attr(feature = "std", allow(dead_code))]
struct Plain<'a, T>(&'a mut [T]);

impl<T: Ord> Sequence for Plain<'_, T> {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn less(&mut self, i: usize, j: usize) -> bool {
        self.0[i] < self.0[j]
    }
    fn swap(&mut self, i: usize, j: usize) {
        self.0.swap(i, j);
    }
}

#[cfg_attr(feature = "std", allow(dead_code))]
struct ByKey<'a, T, F> {
    v: &'a mut [T],
    key: F,
}

impl<T, K: Ord, F: FnMut(&T) -> K> Sequence for ByKey<'_, T, F> {
    fn len(&self) -> usize {
        self.v.len()
    }
    fn less(&mut self, i: usize, j: usize) -> bool {
        (self.key)(&self.v[i]) < (self.key)(&self.v[j])
    }
    fn swap(&mut self, i: usize, j: usize) {
        self.v.swap(i, j);
    }
}

#[cfg_attr(feature = "std", allow(dead_code))]
fn heapsort(s: &mut dyn Sequence) {
    // Sift `root` down within the first `end` items.
    fn sift(s: &mut dyn Sequence, mut root: usize, end: usize) {
        loop {
            let mut child = 2 * root + 1;
            if child >= end {
                return;
            }
            if child + 1 < end && s.less(child, child + 1) {
                child += 1;
            }
            if !s.less(root, child) {
                return;
            }
            s.swap(root, child);
            root = child;
        }
    }
    let n = s.len();
    for root in (0..n / 2).rev() {
        sift(s, root, n);
    }
    for end in (1..n).rev() {
        s.swap(0, end);
        sift(s, 0, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heapsort_sorts() {
        let mut x = 99u64;
        for n in [0usize, 1, 2, 3, 10, 100, 1000] {
            let mut v: alloc::vec::Vec<u64> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x % 50
                })
                .collect();
            let mut want = v.clone();
            want.sort();
            heapsort(&mut ByKey {
                v: &mut v,
                key: |x: &u64| *x,
            });
            assert_eq!(v, want);
        }
    }
}
