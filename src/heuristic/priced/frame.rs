//! The frame of a priced placement: each buffer's room, obstacles and
//! priced partners, the placement, and putting one buffer back where it
//! pays least (see the module above for why each placement it holds is
//! valid).
use alloc::vec::Vec;

use crate::base::math::{align_down, align_up, lcm};
use crate::model::problem::Problem;

/// Neighbour lists larger than this (in entries) are not built: the frame
/// is for problems with priced pairs, which have hundreds or thousands of
/// buffers, not for a million alive at once.
const MAX_ENTRIES: usize = 1 << 21;

/// A buffer whose bytes another may never meet: `whole` when it is
/// separated from it (or has no gaps), so its whole extent is in the way;
/// otherwise only its pieces alive at the same time.
#[derive(Clone, Copy)]
pub(super) struct Obstacle {
    pub(super) other: u32,
    whole: bool,
}

/// The frame of a priced placement and the placement itself.
pub(crate) struct Priced<'a> {
    pub(super) problem: &'a Problem,
    /// Where each buffer may go: addresses `[base, top)` at multiples of
    /// `alignment` from `base` (its pool's, or the arena's).
    rooms: Vec<Room>,
    /// Whether the search may move each buffer.
    pub(super) movable: Vec<bool>,
    /// Per buffer, its obstacles (`obstacle_start[b]..obstacle_start[b+1]`).
    obstacle_start: Vec<u32>,
    obstacles: Vec<Obstacle>,
    /// Per buffer, its priced partners and what sharing with each costs.
    partner_start: Vec<u32>,
    partners: Vec<(u32, i64)>,
    /// The placement: an offset per buffer; `out[b] == epoch` while `b`
    /// is taken out (it is then neither obstacle nor partner).
    pub(crate) offsets: Vec<i64>,
    out: Vec<u32>,
    epoch: u32,
    // Scratch for putting one buffer back.
    busy: Vec<(i64, i64)>,
    candidates: Vec<i64>,
}

/// Where a buffer may go.
#[derive(Clone, Copy)]
struct Room {
    base: i64,
    top: i64,
    alignment: i64,
}

/// Whether `[a, a + size_a)` and `[b, b + size_b)` meet.
#[inline]
pub(super) fn meet(a: i64, size_a: i64, b: i64, size_b: i64) -> bool {
    a < b.saturating_add(size_b) && b < a.saturating_add(size_a)
}

impl<'a> Priced<'a> {
    /// The frame of `problem` holding `offsets`, a valid placement (with
    /// pools, addresses, buffer `i` in pool `pool_of[i]`, where it stays);
    /// `None` when its neighbour lists would be too large.
    pub(crate) fn new(
        problem: &'a Problem,
        offsets: &[i64],
        pool_of: Option<&[u32]>,
    ) -> Option<Priced<'a>> {
        let buffers = problem.buffers();
        let n = buffers.len();
        let links = problem.links();
        let group = links.group_index(n);
        let pool = |i: u32| pool_of.map_or(0, |p| p[i as usize]);
        let mut rooms = Vec::with_capacity(n);
        for (i, b) in buffers.iter().enumerate() {
            rooms.push(match pool_of {
                None => Room {
                    base: 0,
                    top: problem.capacity(),
                    alignment: b.alignment,
                },
                Some(p) => {
                    let pool = problem.pools().get(p[i] as usize)?;
                    Room {
                        base: pool.base,
                        top: pool.base + pool.capacity,
                        alignment: lcm(b.alignment, pool.alignment)?,
                    }
                }
            });
        }
        let movable: Vec<bool> = buffers
            .iter()
            .enumerate()
            .map(|(i, b)| b.offset.is_none() && b.gaps.is_empty() && group[i] == u32::MAX)
            .collect();
        // Pairs alive together, by a sweep over lifetimes in order of start.
        let mut pairs: Vec<(u32, u32, bool)> = Vec::new();
        let mut by_start: Vec<u32> = (0..n as u32).collect();
        by_start.sort_unstable_by_key(|&i| buffers[i as usize].lower);
        let mut alive: Vec<u32> = Vec::new();
        for &i in &by_start {
            let b = &buffers[i as usize];
            alive.retain(|&j| buffers[j as usize].upper > b.lower);
            for &j in alive.iter().filter(|&&j| pool(j) == pool(i)) {
                let whole = buffers[j as usize].gaps.is_empty() && b.gaps.is_empty();
                pairs.push((i, j, whole));
            }
            if pairs.len() > MAX_ENTRIES {
                return None;
            }
            alive.push(i);
        }
        for members in &links.separations {
            for (k, &a) in members.iter().enumerate() {
                for &b in members[k + 1..].iter().filter(|&&b| pool(b) == pool(a)) {
                    pairs.push((a, b, true));
                }
            }
            if pairs.len() > MAX_ENTRIES {
                return None;
            }
        }
        let (obstacle_start, obstacles) = adjacency(n, &pairs, |&(a, b, whole)| {
            [
                (a, Obstacle { other: b, whole }),
                (b, Obstacle { other: a, whole }),
            ]
        });
        let priced: Vec<(u32, u32, i64)> = links
            .penalties
            .iter()
            .map(|(&(a, b), &c)| (a, b, c))
            .collect();
        let (partner_start, partners) =
            adjacency(n, &priced, |&(a, b, c)| [(a, (b, c)), (b, (a, c))]);
        Some(Priced {
            problem,
            rooms,
            movable,
            obstacle_start,
            obstacles,
            partner_start,
            partners,
            offsets: offsets.to_vec(),
            out: alloc::vec![0; n],
            epoch: 1,
            busy: Vec::new(),
            candidates: Vec::new(),
        })
    }

    pub(super) fn obstacles_of(&self, b: usize) -> &[Obstacle] {
        &self.obstacles[self.obstacle_start[b] as usize..self.obstacle_start[b + 1] as usize]
    }

    pub(super) fn partners_of(&self, b: usize) -> &[(u32, i64)] {
        &self.partners[self.partner_start[b] as usize..self.partner_start[b + 1] as usize]
    }

    fn is_out(&self, b: usize) -> bool {
        self.out[b] == self.epoch
    }

    /// Starts a new set of buffers taken out (the previous set is back).
    pub(super) fn new_epoch(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.out.iter_mut().for_each(|o| *o = 0);
            self.epoch = 1;
        }
    }

    /// Takes `b` out: it is no longer an obstacle or a partner.
    pub(super) fn take_out(&mut self, b: usize) {
        self.out[b] = self.epoch;
    }

    /// What `b` pays at `offset` to its partners in place.
    fn price_at(&self, b: usize, offset: i64) -> i64 {
        let size = self.problem.buffers()[b].size;
        let mut paid = 0i64;
        for &(p, c) in self.partners_of(b) {
            let p = p as usize;
            if !self.is_out(p) {
                let q = &self.problem.buffers()[p];
                if meet(offset, size, self.offsets[p], q.size) {
                    paid = paid.saturating_add(c);
                }
            }
        }
        paid
    }

    /// What the pairs with an end in `set` (buffers in place) pay, each
    /// pair once.
    pub(super) fn paid_by(&self, set: &[u32]) -> i64 {
        let buffers = self.problem.buffers();
        let mut paid = 0i64;
        for &b in set {
            let b = b as usize;
            for &(p, c) in self.partners_of(b) {
                let p = p as usize;
                // A pair inside the set is counted from its larger end.
                if p > b && set.contains(&(p as u32)) {
                    continue;
                }
                if meet(
                    self.offsets[b],
                    buffers[b].size,
                    self.offsets[p],
                    buffers[p].size,
                ) {
                    paid = paid.saturating_add(c);
                }
            }
        }
        paid
    }

    /// Puts `b` (taken out) back at the offset where it pays least to its
    /// partners in place (ties: the lowest), clear of its obstacles in
    /// place and in its room; returns what it pays there, or `None`
    /// (and `b` stays out) when it fits nowhere. The work done is added to
    /// `work`.
    pub(super) fn put_back(&mut self, b: usize, work: &mut u64) -> Option<i64> {
        let buffers = self.problem.buffers();
        let buffer = &buffers[b];
        let size = buffer.size;
        let Room {
            base,
            top,
            alignment,
        } = self.rooms[b];
        // (Saturating: a candidate past the top is refused below.)
        let up = |v: i64| base.saturating_add(align_up(v - base, alignment));
        let down = |v: i64| base + align_down(v - base, alignment);
        self.busy.clear();
        let (start, end) = (
            self.obstacle_start[b] as usize,
            self.obstacle_start[b + 1] as usize,
        );
        for k in start..end {
            let Obstacle { other, whole } = self.obstacles[k];
            let o = other as usize;
            if self.is_out(o) {
                continue;
            }
            let at = self.offsets[o];
            let q = &buffers[o];
            if whole || q.gaps.is_empty() {
                self.busy.push((at, at + q.size));
            } else {
                for piece in q.pieces() {
                    if piece.lower < buffer.upper && buffer.lower < piece.upper {
                        self.busy
                            .push((at + piece.window.lower, at + piece.window.upper));
                    }
                }
            }
        }
        self.busy.sort_unstable();
        // Merge in place: `busy` becomes disjoint ranges in order.
        let mut merged = 0;
        for k in 0..self.busy.len() {
            let (lo, hi) = self.busy[k];
            if merged > 0 && lo <= self.busy[merged - 1].1 {
                let last = &mut self.busy[merged - 1];
                last.1 = last.1.max(hi);
            } else {
                self.busy[merged] = (lo, hi);
                merged += 1;
            }
        }
        self.busy.truncate(merged);
        // Candidates: the bottom and the top of every hole, and just above
        // or just below every partner in place (where what is paid changes).
        self.candidates.clear();
        let mut floor = base;
        for k in 0..=self.busy.len() {
            let ceiling = self.busy.get(k).map_or(top, |r| r.0.min(top));
            let low = up(floor);
            if low.saturating_add(size) <= ceiling {
                self.candidates.push(low);
                let high = down(ceiling - size);
                if high > low {
                    self.candidates.push(high);
                }
            }
            if let Some(r) = self.busy.get(k) {
                floor = floor.max(r.1);
            }
        }
        for k in self.partner_start[b] as usize..self.partner_start[b + 1] as usize {
            let p = self.partners[k].0 as usize;
            if self.is_out(p) {
                continue;
            }
            let at = self.offsets[p];
            self.candidates.push(up(at + buffers[p].size));
            self.candidates.push(down(at - size));
        }
        *work += (end - start + self.candidates.len()) as u64;
        let mut best: Option<(i64, i64)> = None;
        for k in 0..self.candidates.len() {
            let at = self.candidates[k];
            if at < base || at.saturating_add(size) > top || !self.clear(at, size) {
                continue;
            }
            *work += (self.partner_start[b + 1] - self.partner_start[b]) as u64;
            let paid = self.price_at(b, at);
            if best.is_none_or(|(c, o)| (paid, at) < (c, o)) {
                best = Some((paid, at));
            }
        }
        let (paid, at) = best?;
        self.offsets[b] = at;
        self.out[b] = 0;
        Some(paid)
    }

    /// Whether `[at, at + size)` meets none of the merged busy ranges.
    fn clear(&self, at: i64, size: i64) -> bool {
        let k = self.busy.partition_point(|r| r.1 <= at);
        self.busy.get(k).is_none_or(|r| r.0 >= at + size)
    }
}

/// Compressed adjacency lists of `n` nodes from `items`, each giving two
/// (node, entry) pairs.
fn adjacency<T, E: Copy>(
    n: usize,
    items: &[T],
    ends: impl Fn(&T) -> [(u32, E); 2],
) -> (Vec<u32>, Vec<E>) {
    let mut start = alloc::vec![0u32; n + 1];
    for item in items {
        for (node, _) in ends(item) {
            start[node as usize + 1] += 1;
        }
    }
    for k in 0..n {
        start[k + 1] += start[k];
    }
    let mut fill = start.clone();
    let mut entries: Vec<Option<E>> = alloc::vec![None; start[n] as usize];
    for item in items {
        for (node, entry) in ends(item) {
            entries[fill[node as usize] as usize] = Some(entry);
            fill[node as usize] += 1;
        }
    }
    (start, entries.into_iter().flatten().collect())
}
