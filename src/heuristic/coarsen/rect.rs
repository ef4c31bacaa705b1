//! The rectangles of the coarse problem and the members each holds.

use alloc::vec::Vec;

/// A rectangle: merged buffers, or one buffer as it is.
#[derive(Clone, Copy, Debug)]
pub(super) struct Rect {
    pub(super) lower: i64,
    pub(super) upper: i64,
    pub(super) size: i64,
    pub(super) align: i64,
    /// Whether it may merge (a plain buffer or a merged rectangle).
    pub(super) plain: bool,
    /// The original buffer, for one that stays as it is.
    pub(super) origin: u32,
}

impl Rect {
    /// Buffer `i` as it is; `plain` when it may merge.
    pub(super) fn of(i: usize, b: &crate::model::problem::Buffer, plain: bool) -> Rect {
        Rect {
            lower: b.lower,
            upper: b.upper,
            size: b.size,
            align: b.alignment,
            plain,
            origin: i as u32,
        }
    }
}

/// Each rectangle's members, with their offsets inside it: a member's
/// offset is its stored value plus its list's `base`, so that a merge
/// moves the shorter list into the longer one (each buffer moves O(log n)
/// times) however the offsets shift.
pub(super) struct Members {
    pub(super) lists: Vec<Vec<(u32, i64)>>,
    pub(super) base: Vec<i64>,
}

impl Members {
    /// `n` rectangles of one buffer each, at their bottom.
    pub(super) fn singletons(n: usize) -> Members {
        Members {
            lists: (0..n as u32).map(|i| alloc::vec![(i, 0)]).collect(),
            base: alloc::vec![0; n],
        }
    }

    /// Moves rectangle `top`'s members into `bottom`, `shift` above it.
    pub(super) fn absorb(&mut self, bottom: u32, top: u32, shift: i64) {
        let (b, t) = (bottom as usize, top as usize);
        let top_base = self.base[t] + shift;
        if self.lists[t].len() > self.lists[b].len() {
            self.lists.swap(b, t);
            let old_base = core::mem::replace(&mut self.base[b], top_base);
            let delta = old_base - top_base;
            let moved = core::mem::take(&mut self.lists[t]);
            self.lists[b].extend(moved.into_iter().map(|(m, x)| (m, x + delta)));
        } else {
            let delta = top_base - self.base[b];
            let moved = core::mem::take(&mut self.lists[t]);
            self.lists[b].extend(moved.into_iter().map(|(m, x)| (m, x + delta)));
        }
    }
}

/// Every buffer of `buffers` as a plain rectangle of its own, all alive:
/// where the tests of the passes start.
#[cfg(test)]
pub(super) fn singletons(
    buffers: &[crate::model::problem::Buffer],
) -> (Vec<Rect>, Members, Vec<u32>) {
    let n = buffers.len();
    let rects = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| Rect::of(i, b, true))
        .collect();
    (rects, Members::singletons(n), (0..n as u32).collect())
}
