//! Placing a buffer and taking it back: the propagation to section floors,
//! effective floors, totals, cuts and neighbours' min offsets, logged so
//! that backtracking restores every value exactly.

use super::{Part, Search, Undo, FREE, UNPLACED};
use crate::base::math::align_up;
use crate::deadline::{Poll, Stop};

impl Search<'_> {
    /// The lowest min offset among section `s`'s unplaced members, and how
    /// many members have it.
    pub(super) fn lowest_min_offset(&mut self, s: u32) -> (i64, u32) {
        self.scanned += self.sweep.members(s).len() as u64;
        let mut low = i64::MAX;
        let mut count = 0;
        for &b in self.sweep.members(s) {
            let m = self.min_offset[b as usize];
            if m < low {
                low = m;
                count = 1;
            } else if m == low {
                count += 1;
            }
        }
        (low, count)
    }

    /// Whether placing `b` at `offset` would overfill one of its own
    /// sections: there the floor becomes at least `offset + window top`,
    /// with the rest of the section's total above it.
    pub(super) fn overfills(&self, b: u32, offset: i64) -> bool {
        self.sweep.spans(b).iter().any(|span| {
            let most = self.total_max.max(span.first as usize, span.end as usize);
            offset.saturating_add(span.lower).saturating_add(most) > self.capacity
        })
    }

    /// Places `b` at `offset` and propagates: section floors and totals,
    /// neighbours' min offsets, effective floors, cuts. Returns `None` if
    /// the result is provably infeasible, else whether any unplaced buffer
    /// overlaps `b`. Whatever the result, even a stop midway, the changes
    /// made are in the undo log.
    ///
    /// Long on purpose: the innermost step of the search (every node places
    /// one buffer), one pass over its spans and neighbours with the undo log
    /// written as it goes; split, the same arrays would be walked twice.
    pub(super) fn place(
        &mut self,
        b: u32,
        offset: i64,
        part: Part,
        poll: &mut Poll<'_>,
    ) -> Result<Option<bool>, Stop> {
        let sweep = self.sweep;
        let params = self.params;
        let cap = self.capacity;
        let bi = b as usize;
        self.undo.push(Undo::Placed(b));
        self.offset[bi] = offset;
        let was = self.min_offset[bi];
        self.undo.push(Undo::MinOffset(b, was));
        self.min_offset[bi] = i64::MAX;

        self.cut_points.clear();
        let [first, end] = sweep.hull[bi];
        for k in first..end - 1 {
            let c = &mut self.cuts[k as usize];
            *c -= 1;
            if *c == 0 && params.decomposition {
                self.cut_points.push(k + 1);
            }
        }
        poll.tick(u64::from(end - first))?;
        let spans = sweep.spans(b);
        for span in spans {
            let h = span.upper - span.lower;
            self.total_max
                .add(span.first as usize, span.end as usize, -h);
            for t in &mut self.total[span.first as usize..span.end as usize] {
                *t -= h;
            }
        }

        // Floors and effective floors of b's sections first, in full: the
        // undo of b's min offset assumes every section was counted.
        for span in spans {
            poll.tick(4 * u64::from(span.end - span.first))?;
            let top = offset + span.upper;
            for s in span.first..span.end {
                let si = s as usize;
                if top > self.floor[si] {
                    self.undo.push(Undo::Floor(s, self.floor[si]));
                    self.floor[si] = top;
                }
                if params.effective_floor && self.effective[si] == was {
                    self.leave_effective(s);
                }
            }
        }
        if params.section_inference {
            for span in spans {
                for s in span.first as usize..span.end as usize {
                    if !self.section_fits(s) {
                        return Ok(None);
                    }
                }
            }
        }
        if params.monotonic_floor && params.canonical {
            let most = self.total_max.max(part.first as usize, part.end as usize);
            if offset.saturating_add(most) > cap {
                return Ok(None);
            }
        }

        let mut hat = false;
        let (nbr, dist) = sweep.overlaps(b);
        for (k, &x) in nbr.iter().enumerate() {
            let d = dist.map_or(self.size[bi], |d| d[k]);
            let xi = x as usize;
            poll.tick(1 + core::mem::take(&mut self.scanned))?;
            if self.offset[xi] != UNPLACED {
                continue;
            }
            hat = true;
            let v = align_up(offset.saturating_add(d), self.align[xi]);
            let old = self.min_offset[xi];
            if v <= old {
                continue;
            }
            self.undo.push(Undo::MinOffset(x, old));
            self.min_offset[xi] = v;
            let mut overfull = false;
            if params.effective_floor {
                // All of x's sections, even after one overfills: the undo of
                // x's min offset assumes every section was counted.
                let [first, end] = sweep.hull[xi];
                poll.tick(u64::from(end - first))?;
                for span in sweep.spans(x) {
                    for s in span.first..span.end {
                        if self.effective[s as usize] == old && self.leave_effective(s) {
                            overfull |= params.section_inference && !self.section_fits(s as usize);
                        }
                    }
                }
            }
            let fixed = self.fixed[xi];
            if overfull || v > cap - self.size[xi] || (fixed != FREE && v > fixed) {
                return Ok(None);
            }
        }
        Ok(Some(hat))
    }

    /// Section inference: the unplaced pieces of a section all lie above
    /// its floor and its effective floor, one above the other.
    #[inline]
    pub(super) fn section_fits(&self, s: usize) -> bool {
        let e = self.effective[s];
        let base = if e == i64::MAX {
            self.floor[s]
        } else {
            self.floor[s].max(e)
        };
        base.saturating_add(self.total[s]) <= self.capacity
    }

    /// A member at section `s`'s effective floor rose or was placed: count
    /// it out, and find the new effective floor once none is left there.
    /// Returns whether the effective floor rose.
    ///
    /// Only the rise is logged: undoing the member's `MinOffset` counts it
    /// back in (see `restore_min_offset`), so a placement logs O(1) per
    /// neighbour rather than one entry per section the neighbour spans.
    #[inline]
    fn leave_effective(&mut self, s: u32) -> bool {
        let si = s as usize;
        debug_assert!(
            self.at_effective[si] > 0,
            "a member was at the effective floor"
        );
        self.at_effective[si] -= 1;
        if self.at_effective[si] > 0 {
            return false;
        }
        self.undo.push(Undo::Effective(s, self.effective[si]));
        (self.effective[si], self.at_effective[si]) = self.lowest_min_offset(s);
        true
    }

    /// Undoes a rise of `b`'s min offset back to `old`: where `old` is the
    /// effective floor again, `b` counts among the members at it.
    fn restore_min_offset(&mut self, b: u32, old: i64) {
        self.min_offset[b as usize] = old;
        if !self.params.effective_floor {
            return;
        }
        for span in self.sweep.spans(b) {
            self.scanned += u64::from(span.end - span.first);
            for s in span.first as usize..span.end as usize {
                if self.effective[s] == old {
                    self.at_effective[s] += 1;
                }
            }
        }
    }

    /// Undoes the log back to `mark`, polling (undoing a placement costs
    /// about as much as making it).
    pub(super) fn undo_to(&mut self, mark: usize, poll: &mut Poll<'_>) -> Result<(), Stop> {
        while self.undo.len() > mark {
            let step = (self.undo.len() - mark).min(1024);
            self.replay(self.undo.len() - step);
            poll.tick(step as u64 + core::mem::take(&mut self.scanned))?;
        }
        #[cfg(debug_assertions)]
        self.check_effective();
        Ok(())
    }

    /// Debug builds: the incrementally kept effective floors and counts
    /// match a recount from scratch.
    #[cfg(debug_assertions)]
    fn check_effective(&self) {
        if !self.params.effective_floor {
            return;
        }
        for s in 0..self.sweep.sections as u32 {
            let mut low = i64::MAX;
            let mut count = 0;
            for &b in self.sweep.members(s) {
                let m = self.min_offset[b as usize];
                if m < low {
                    (low, count) = (m, 1);
                } else if m == low {
                    count += 1;
                }
            }
            assert_eq!(
                (self.effective[s as usize], self.at_effective[s as usize]),
                (low, count),
                "section {s}"
            );
        }
    }

    fn replay(&mut self, mark: usize) {
        while self.undo.len() > mark {
            match self.undo.pop().unwrap() {
                Undo::Placed(b) => self.unplace(b),
                Undo::MinOffset(b, v) => self.restore_min_offset(b, v),
                Undo::Floor(s, v) => self.floor[s as usize] = v,
                Undo::Rank(b, r) => self.orderings.ranks[self.ranking][b as usize] = r,
                Undo::Effective(s, e) => {
                    self.effective[s as usize] = e;
                    self.at_effective[s as usize] = 0;
                }
            }
        }
    }

    fn unplace(&mut self, b: u32) {
        let bi = b as usize;
        self.offset[bi] = UNPLACED;
        let [first, end] = self.sweep.hull[bi];
        self.scanned += 2 * u64::from(end - first);
        for c in &mut self.cuts[first as usize..end as usize - 1] {
            *c += 1;
        }
        for span in self.sweep.spans(b) {
            let h = span.upper - span.lower;
            self.total_max
                .add(span.first as usize, span.end as usize, h);
            for t in &mut self.total[span.first as usize..span.end as usize] {
                *t += h;
            }
        }
    }
}
