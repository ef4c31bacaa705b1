//! The holes of the online strategy's live set, by size.

use alloc::vec::Vec;

/// No interval: the floor below the lowest, or nothing above the highest.
pub(super) const NONE: u32 = u32::MAX;

/// A hole of the live set: its size, its bottom, and the interval under
/// it.
pub(super) type Hole = (i64, i64, u32);

/// The holes of the live set, for the smallest that holds a buffer
/// (ties: the lowest). In a balanced tree every add and free of the live
/// set took several tree searches, most of the first placement of a large
/// problem. Here holes fall into size classes (32 to each doubling), each
/// class a binary heap on `(size, bottom, under)` whose places are kept
/// per interval under a hole (a hole is the one above its interval), with
/// a bit per class that holds any: adding and removing a hole cost a
/// heap's few steps. The smallest hole of at least a size is the least of
/// the first class holding one, except in the class of that size itself,
/// which may hold smaller holes and is then scanned (the scan's length is
/// that class's, holes within 1/32 of the size). The choice is the
/// tree's: the least `(size, bottom, under)` among those large enough.
pub(super) struct Holes {
    /// Per class, a binary min-heap of its holes.
    pub(super) classes: Vec<Vec<Hole>>,
    /// Bit `c % 64` of word `c / 64`: class `c` holds a hole.
    pub(super) held: [u64; WORDS],
    /// Per slot of the live set (the floor first, then slot `s` at
    /// `s + 1`), the place of the hole above it in its class's heap.
    pub(super) place: Vec<u32>,
    /// Holes in order, for a caller that needs more than the first.
    pub(super) sorted: Vec<Hole>,
    pub(super) len: usize,
}

/// Size classes: sizes below `SUB` are their own class; above, `SUB` to
/// each doubling.
const SUB_BITS: u32 = 5;
const SUB: i64 = 1 << SUB_BITS;
const CLASSES: usize = (SUB as usize) * (65 - SUB_BITS as usize);
const WORDS: usize = CLASSES.div_ceil(64);

/// The class of a hole of `size` (at least 1); classes grow with sizes.
pub(super) fn class_of(size: i64) -> usize {
    if size < SUB {
        return size.max(0) as usize;
    }
    let top = 63 - size.leading_zeros();
    let shift = top - SUB_BITS;
    let sub = ((size >> shift) & (SUB - 1)) as usize;
    SUB as usize * (shift as usize + 1) + sub
}

impl Holes {
    pub(super) fn new() -> Holes {
        Holes {
            classes: (0..CLASSES).map(|_| Vec::new()).collect(),
            held: [0; WORDS],
            place: alloc::vec![u32::MAX],
            sorted: Vec::new(),
            len: 0,
        }
    }

    /// Makes room for the holes above `slots` slots.
    pub(super) fn grow(&mut self, slots: usize) {
        if self.place.len() < slots + 1 {
            self.place.resize(slots + 1, u32::MAX);
        }
    }

    pub(super) fn slot(&self, under: u32) -> usize {
        // The floor is NONE: wraps to 0.
        under.wrapping_add(1) as usize
    }

    pub(super) fn insert(&mut self, hole: Hole) {
        let c = class_of(hole.0);
        self.classes[c].push(hole);
        self.held[c / 64] |= 1 << (c % 64);
        let at = self.classes[c].len() - 1;
        self.sift_up(c, at);
        self.len += 1;
    }

    /// Removes `hole`, which is held.
    pub(super) fn remove(&mut self, hole: Hole) {
        let (size, _, under) = hole;
        let at = self.place[self.slot(under)] as usize;
        let c = class_of(size);
        debug_assert_eq!(self.classes[c].get(at), Some(&hole));
        let heap = &mut self.classes[c];
        heap.swap_remove(at);
        if heap.is_empty() {
            self.held[c / 64] &= !(1 << (c % 64));
        } else if at < heap.len() {
            let moved = heap[at].2;
            let s = self.slot(moved);
            self.place[s] = at as u32;
            self.sift_down(c, at);
            self.sift_up(c, self.place[s] as usize);
        }
        let s = self.slot(under);
        self.place[s] = u32::MAX;
        self.len -= 1;
    }

    fn sift_up(&mut self, c: usize, mut at: usize) {
        while at > 0 {
            let parent = (at - 1) / 2;
            if self.classes[c][parent] <= self.classes[c][at] {
                break;
            }
            self.classes[c].swap(parent, at);
            self.note(c, at);
            at = parent;
        }
        self.note(c, at);
    }

    fn sift_down(&mut self, c: usize, mut at: usize) {
        let len = self.classes[c].len();
        loop {
            let (l, r) = (2 * at + 1, 2 * at + 2);
            let mut least = at;
            if l < len && self.classes[c][l] < self.classes[c][least] {
                least = l;
            }
            if r < len && self.classes[c][r] < self.classes[c][least] {
                least = r;
            }
            if least == at {
                break;
            }
            self.classes[c].swap(least, at);
            self.note(c, at);
            at = least;
        }
        self.note(c, at);
    }

    /// Records where the hole at place `at` of class `c` is.
    fn note(&mut self, c: usize, at: usize) {
        let s = self.slot(self.classes[c][at].2);
        self.place[s] = at as u32;
    }

    /// The first class after `c` that holds a hole.
    fn next_class(&self, c: usize) -> Option<usize> {
        let (mut w, bit) = ((c + 1) / 64, (c + 1) % 64);
        let mut word = self.held.get(w)? & (u64::MAX << bit);
        loop {
            if word != 0 {
                return Some(64 * w + word.trailing_zeros() as usize);
            }
            w += 1;
            word = *self.held.get(w)?;
        }
    }

    /// The least hole of at least `size`.
    pub(super) fn smallest(&self, size: i64) -> Option<Hole> {
        let c = class_of(size);
        let own = &self.classes[c];
        let in_own = match own.first() {
            Some(&least) if least.0 >= size => Some(least),
            Some(_) => own.iter().filter(|h| h.0 >= size).min().copied(),
            None => None,
        };
        in_own.or_else(|| self.next_class(c).map(|d| self.classes[d][0]))
    }

    /// Up to `k` of the least holes of at least `size` into `out` (in no
    /// order): the classes from `size`'s up, until `k` are found or a few
    /// times `k` holes were read.
    pub(super) fn smallest_few(&self, size: i64, k: usize, out: &mut Vec<Hole>) {
        out.clear();
        let (mut next, mut read) = (Some(class_of(size)), 0);
        while let Some(d) = next {
            out.extend(self.classes[d].iter().filter(|h| h.0 >= size));
            read += self.classes[d].len();
            if out.len() >= k || read >= 32 * k {
                break;
            }
            next = self.next_class(d);
        }
        if out.len() > k {
            out.select_nth_unstable(k - 1);
            out.truncate(k);
        }
    }

    /// Every hole of at least `size`, least first, into `sorted` (for a
    /// buffer the least does not take: an alignment or a fixed buffer in
    /// the way).
    pub(super) fn sort_from(&mut self, size: i64) {
        self.sorted.clear();
        let c = class_of(size);
        let mut next = Some(c);
        while let Some(d) = next {
            let from = self.sorted.len();
            self.sorted
                .extend(self.classes[d].iter().filter(|h| h.0 >= size));
            self.sorted[from..].sort_unstable();
            next = self.next_class(d);
        }
    }
}
