//! Placing a buffer and taking it back: the propagation to section floors,
//! effective floors, totals, cuts and neighbours' min offsets, logged so
//! that backtracking restores every value exactly.

#[cfg(test)]
use super::floors::tests;
use super::{Part, Search, Undo, FREE, UNPLACED};
use crate::base::math::align_up;
use crate::deadline::{Poll, Stop};

impl Search<'_> {
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
        #[cfg(test)]
        let before = self.floors_by_hand();
        self.undo.push(Undo::Placed(b));
        self.offset[bi] = offset;
        let was = self.min_offset[bi];
        self.undo.push(Undo::MinOffset(b, was));
        self.min_offset[bi] = i64::MAX;
        if params.effective_floor {
            let undo = &mut self.undo;
            let mut log = |node, top| undo.push(Undo::Top(node, top));
            self.scanned += self.floors.raise(b, was, &self.min_offset, &mut log).0;
        }

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

        for span in spans {
            poll.tick(2 * u64::from(span.end - span.first))?;
            let top = offset + span.upper;
            for s in span.first..span.end {
                let si = s as usize;
                if top > self.floor[si] {
                    self.undo.push(Undo::Floor(s, self.floor[si]));
                    self.floor[si] = top;
                }
            }
        }
        if params.section_inference {
            // A section's floor is now at least b's top there: where its
            // effective floor is no higher, the floor alone decides, and
            // only the sections above it need their effective floor.
            for span in spans {
                let (floor, total) = (&self.floor, &self.total);
                let range = span.first as usize..span.end as usize;
                if floor[range.clone()]
                    .iter()
                    .zip(&total[range])
                    .any(|(&f, &t)| f.saturating_add(t) > cap)
                {
                    return Ok(None);
                }
                let mut fits =
                    |s: u32, e: i64| section_fits(floor[s as usize], e, total[s as usize], cap);
                let (fit, visited) = self.floors.above(span, offset + span.upper, &mut fits);
                self.scanned += visited;
                if !fit {
                    return Ok(None);
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
                let undo = &mut self.undo;
                let mut log = |node, top| undo.push(Undo::Top(node, top));
                let (work, rose) = self.floors.raise(x, old, &self.min_offset, &mut log);
                self.scanned += work;
                // Only the sections whose effective floor rose (those where
                // x was alone at the lowest) can stop fitting.
                if rose && params.section_inference {
                    let (floor, total) = (&self.floor, &self.total);
                    let mut fits =
                        |s: u32, e: i64| section_fits(floor[s as usize], e, total[s as usize], cap);
                    let (fit, visited) = self.floors.risen(old, &mut fits);
                    self.scanned += visited;
                    overfull = !fit;
                }
            }
            let fixed = self.fixed[xi];
            if overfull || v > cap - self.size[xi] || (fixed != FREE && v > fixed) {
                return Ok(None);
            }
        }
        #[cfg(test)]
        self.check_floors(b, &before);
        Ok(Some(hat))
    }

    /// Tests, on small problems: each section's effective floor counted
    /// from every unplaced buffer's spans (empty on larger ones).
    #[cfg(test)]
    fn floors_by_hand(&self) -> alloc::vec::Vec<i64> {
        if self.size.len() > 64 || !self.params.effective_floor {
            return alloc::vec::Vec::new();
        }
        (0..self.sweep.sections as u32)
            .map(|s| {
                (0..self.size.len() as u32)
                    .filter(|&x| self.offset[x as usize] == UNPLACED)
                    .filter(|&x| {
                        self.sweep
                            .spans(x)
                            .iter()
                            .any(|p| p.first <= s && s < p.end)
                    })
                    .map(|x| self.min_offset[x as usize])
                    .min()
                    .unwrap_or(i64::MAX)
            })
            .collect()
    }

    /// Tests, after `b` was placed and not pruned: the tree's floors are
    /// the ones counted by hand, and every section the placement could
    /// make overfull (one of `b`'s, or one whose floor rose from
    /// `before`) still fits, so the placement prunes whatever counting
    /// per section pruned.
    #[cfg(test)]
    fn check_floors(&self, b: u32, before: &[i64]) {
        let now = self.floors_by_hand();
        if !now.is_empty() {
            tests::CHECKED.with(|c| c.set(c.get() + 1));
        }
        for (s, (&was, &floor)) in before.iter().zip(&now).enumerate() {
            assert_eq!(self.floors.at(s), floor, "section {s}");
            let own = self
                .sweep
                .spans(b)
                .iter()
                .any(|p| p.first as usize <= s && s < p.end as usize);
            if self.params.section_inference && (own || floor > was) {
                let fits = section_fits(self.floor[s], floor, self.total[s], self.capacity);
                assert!(fits, "section {s} overfull, not pruned");
            }
        }
    }

    /// Undoes a rise of `b`'s min offset back to `old`.
    fn restore_min_offset(&mut self, b: u32, old: i64) {
        self.min_offset[b as usize] = old;
        if self.params.effective_floor {
            self.scanned += self.floors.lower(b, old);
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
        Ok(())
    }

    fn replay(&mut self, mark: usize) {
        while self.undo.len() > mark {
            match self.undo.pop().unwrap() {
                Undo::Placed(b) => self.unplace(b),
                Undo::MinOffset(b, v) => self.restore_min_offset(b, v),
                Undo::Floor(s, v) => self.floor[s as usize] = v,
                Undo::Rank(b, r) => self.orderings.ranks[self.ranking][b as usize] = r,
                Undo::Top(node, top) => self.floors.set_top(node, top),
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

/// Section inference: a section's unplaced pieces all lie above its floor
/// and its effective floor, one above the other, below the capacity.
#[inline]
fn section_fits(floor: i64, effective: i64, total: i64, capacity: i64) -> bool {
    let base = if effective == i64::MAX {
        floor
    } else {
        floor.max(effective)
    };
    base.saturating_add(total) <= capacity
}
