//! One node of the search: entering it, trying its candidates in key
//! order, pushing a child, re-ranking after a split, and collecting a
//! part's placements once it is done.

use super::{Frame, Part, Search, Signal, Undo, BATCH};
use crate::deadline::{Poll, Stop};

impl Search<'_> {
    pub(super) fn node(&self, part: Part, floor: u128) -> Frame {
        Frame::Node {
            part,
            floor,
            min_height: i64::MAX,
            start: self.cands.len() as u32,
            next: self.cands.len() as u32,
            more: false,
            hatless: false,
            mark: 0,
        }
    }

    /// Collects the first candidates of the node on top of the stack.
    pub(super) fn enter_node(&mut self) {
        let Some(&Frame::Node {
            part, floor, start, ..
        }) = self.frames.last()
        else {
            // Only called with a node on top.
            unreachable!();
        };
        let (min_height, more) = self.collect(part, floor, None);
        *self.frames.last_mut().unwrap() = Frame::Node {
            part,
            floor,
            min_height,
            start,
            next: start,
            more,
            hatless: false,
            mark: 0,
        };
    }

    /// Tries the top node's candidates in key order until one passes the
    /// checks (its child is pushed: `Enter`) or none is left (the node is
    /// popped: `Failed`).
    pub(super) fn try_candidates(&mut self, poll: &mut Poll<'_>) -> Result<Signal, Stop> {
        let Some(&Frame::Node {
            part,
            floor,
            min_height,
            start,
            mut next,
            mut more,
            ..
        }) = self.frames.last()
        else {
            // Only called with a node on top.
            unreachable!();
        };
        loop {
            if next as usize == self.cands.len() {
                // Out of collected candidates: collect the next batch.
                let last = match self.cands.last() {
                    Some(&(key, _)) if more && self.cands.len() > start as usize => key,
                    _ => {
                        self.cands.truncate(start as usize);
                        self.frames.pop();
                        self.backtracks += 1;
                        return Ok(Signal::Failed);
                    }
                };
                self.cands.truncate(start as usize);
                more = self.collect(part, last, Some(min_height)).1;
                poll.tick(1 + part.len as u64)?;
                next = start;
                continue;
            }
            let (key, b) = self.cands[next as usize];
            next += 1;
            let offset = (key >> 32) as i64;
            if self.params.section_inference && self.overfills(b, offset) {
                continue;
            }
            let mark = self.undo.len() as u32;
            // Move b to the end of the unplaced prefix.
            let last = part.lo + part.len - 1;
            self.swap(self.pos[b as usize], last);
            if let Some(hat) = self.place(b, offset, part, poll)? {
                *self.frames.last_mut().unwrap() = Frame::Node {
                    part,
                    floor,
                    min_height,
                    start,
                    next,
                    more,
                    hatless: !hat && self.params.hatless,
                    mark,
                };
                let child = Part {
                    len: part.len - 1,
                    ..part
                };
                self.push_child(child, key, poll)?;
                return Ok(Signal::Enter);
            }
            self.undo_to(mark as usize, poll)?;
        }
    }

    pub(super) fn swap(&mut self, i: u32, j: u32) {
        self.order.swap(i as usize, j as usize);
        self.pos[self.order[i as usize] as usize] = i;
        self.pos[self.order[j as usize] as usize] = j;
    }

    /// Pushes the search of `part` after the buffer with `key` was placed:
    /// one node, or a split into independent parts if cuts dropped to zero.
    pub(super) fn push_child(
        &mut self,
        part: Part,
        key: u128,
        poll: &mut Poll<'_>,
    ) -> Result<(), Stop> {
        let floor = if self.params.canonical { key } else { 0 };
        if self.cut_points.is_empty() || part.len == 0 {
            self.frames.push(self.node(part, floor));
            return Ok(());
        }
        let sweep = self.sweep;
        let slice = &mut self.order[part.lo as usize..(part.lo + part.len) as usize];
        crate::base::sort::sort_by_key(slice, |&b| (sweep.hull[b as usize][0], b));
        for (i, &b) in slice.iter().enumerate() {
            self.pos[b as usize] = part.lo + i as u32;
        }
        let from = self.parts.len() as u32;
        let mut lo = 0usize;
        let mut first = part.first;
        let cut_count = self.cut_points.len();
        for c in 0..=cut_count {
            let end = if c < cut_count {
                self.cut_points[c]
            } else {
                part.end
            };
            let mut hi = lo;
            while hi < slice.len() && sweep.hull[slice[hi] as usize][0] < end {
                hi += 1;
            }
            if hi > lo {
                self.parts.push(Part {
                    lo: part.lo + lo as u32,
                    len: (hi - lo) as u32,
                    first,
                    end,
                });
            }
            lo = hi;
            first = end;
        }
        let to = self.parts.len() as u32;
        // Like the reference, reorder each new part by the totals left in
        // its sections; a reordered part starts a fresh canonical search.
        let rerank = self.params.dynamic_preordering
            && self.params.static_preordering
            && self.orderings.preorders[self.ranking].uses_totals();
        if rerank {
            for i in from..to {
                self.rerank(self.parts[i as usize]);
                poll.tick(8 * self.parts[i as usize].len as u64)?;
            }
        }
        if to - from == 1 {
            // Only one part has buffers left: same search, narrower range.
            let p = self.parts.pop().unwrap();
            self.frames
                .push(self.node(p, if rerank { 0 } else { floor }));
        } else {
            self.frames.push(Frame::Split {
                from,
                to,
                next: from,
            });
        }
        Ok(())
    }

    /// Reorders the buffers of `part` among the ranks they hold, by the
    /// ordering's keys with the section totals left now.
    pub(super) fn rerank(&mut self, part: Part) {
        let preorder = self.orderings.preorders[self.ranking];
        let lo = part.lo as usize;
        self.rerank_keys.clear();
        self.rerank_values.clear();
        for &b in &self.order[lo..lo + part.len as usize] {
            let total = self
                .sweep
                .spans(b)
                .iter()
                .map(|s| self.total_max.max(s.first as usize, s.end as usize))
                .max()
                .unwrap_or(0);
            self.rerank_keys
                .push((preorder.key(&self.orderings.traits[b as usize], total), b));
            self.rerank_values
                .push(self.orderings.ranks[self.ranking][b as usize]);
        }
        crate::base::sort::sort(&mut self.rerank_keys);
        crate::base::sort::sort(&mut self.rerank_values);
        let rank = &mut self.orderings.ranks[self.ranking];
        for (&(_, b), &r) in self.rerank_keys.iter().zip(&self.rerank_values) {
            let old = rank[b as usize];
            if old != r {
                self.undo.push(Undo::Rank(b, old));
                rank[b as usize] = r;
            }
        }
    }

    /// Appends to `cands` the lowest candidate keys above `after` in
    /// `part` (up to [`BATCH`] of them, in order) and returns the lowest
    /// top of any unplaced buffer of the part (`known` if given) and
    /// whether higher candidates were left out.
    ///
    /// Dominance drops keys at or above that lowest top. With the
    /// monotonic floor, a buffer placed at `m` leaves every section of the
    /// part to fit above `m`: if the fullest section (total `most`) cannot,
    /// only buffers crossing it are worth placing.
    pub(super) fn collect(&mut self, part: Part, after: u128, known: Option<i64>) -> (i64, bool) {
        let rank = &self.orderings.ranks[self.ranking];
        let (most, fullest) = if self.params.monotonic_floor && self.params.canonical {
            let (m, at) = self
                .total_max
                .max_at(part.first as usize, part.end as usize);
            (m, at as u32)
        } else {
            (0, 0)
        };
        let free_below = self.capacity - most;
        let start = self.cands.len();
        let mut more = false;
        let mut min_height = i64::MAX;
        let lo = part.lo as usize;
        for &b in &self.order[lo..lo + part.len as usize] {
            let bi = b as usize;
            let m = self.min_offset[bi];
            min_height = min_height.min(m + self.size[bi]);
            let key = ((m as u128) << 32) | (rank[bi] as u128 + 1);
            if key <= after {
                continue;
            }
            let full = self.cands.len() - start == BATCH;
            if full && key > self.cands[self.cands.len() - 1].0 {
                more = true;
                continue;
            }
            let [first, end] = self.sweep.hull[bi];
            if m > free_below && !(first <= fullest && fullest < end) {
                continue;
            }
            if full {
                self.cands.pop();
                more = true;
            }
            // Insert in key order (the batch is short).
            let mut i = self.cands.len();
            self.cands.push((key, b));
            while i > start && self.cands[i - 1].0 > key {
                self.cands.swap(i - 1, i);
                i -= 1;
            }
        }
        let min_height = known.unwrap_or(min_height);
        if self.params.dominance {
            let keep = self.cands[start..]
                .iter()
                .position(|&(k, _)| (k >> 32) as i64 >= min_height);
            if let Some(keep) = keep {
                self.cands.truncate(start + keep);
                more = false;
            }
        }
        (min_height, more)
    }
}
