//! Placing a buffer and taking it back: the propagation to section floors,
//! totals and neighbours' min offsets, logged so that backtracking restores
//! every value exactly.

use super::{Part, Search, Undo, FREE, UNPLACED};
use crate::deadline::{Poll, Stop};

#[inline]
fn align_up(v: i64, a: i64) -> i64 {
    if a == 1 {
        return v;
    }
    let r = v % a;
    if r == 0 {
        v
    } else {
        v.saturating_add(a - r)
    }
}

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
    /// neighbours' min offsets. Returns `false` if the
    /// result is provably infeasible. Whatever the result, even a stop
    /// midway, the changes made are in the undo log.
    pub(super) fn place(
        &mut self,
        b: u32,
        offset: i64,
        part: Part,
        poll: &mut Poll<'_>,
    ) -> Result<bool, Stop> {
        let sweep = self.sweep;
        let params = self.params;
        let cap = self.capacity;
        let bi = b as usize;
        self.undo.push(Undo::Placed(b));
        self.offset[bi] = offset;
        self.undo.push(Undo::MinOffset(b, self.min_offset[bi]));
        self.min_offset[bi] = i64::MAX;

        let [first, end] = sweep.hull[bi];
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
            poll.tick(4 * u64::from(span.end - span.first))?;
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
            for span in spans {
                for s in span.first as usize..span.end as usize {
                    if !self.section_fits(s) {
                        return Ok(false);
                    }
                }
            }
        }
        if params.monotonic_floor && params.canonical {
            let most = self.total_max.max(part.first as usize, part.end as usize);
            if offset.saturating_add(most) > cap {
                return Ok(false);
            }
        }

        let (nbr, dist) = sweep.overlaps(b);
        for (k, &x) in nbr.iter().enumerate() {
            let d = dist.map_or(self.size[bi], |d| d[k]);
            let xi = x as usize;
            poll.tick(1)?;
            if self.offset[xi] != UNPLACED {
                continue;
            }
            let v = align_up(offset.saturating_add(d), self.align[xi]);
            let old = self.min_offset[xi];
            if v <= old {
                continue;
            }
            self.undo.push(Undo::MinOffset(x, old));
            self.min_offset[xi] = v;
            let fixed = self.fixed[xi];
            if v > cap - self.size[xi] || (fixed != FREE && v > fixed) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Section inference: the unplaced pieces of a section all lie above
    /// its floor, one above the other.
    #[inline]
    pub(super) fn section_fits(&self, s: usize) -> bool {
        self.floor[s].saturating_add(self.total[s]) <= self.capacity
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
                Undo::MinOffset(b, v) => self.min_offset[b as usize] = v,
                Undo::Floor(s, v) => self.floor[s as usize] = v,
            }
        }
    }

    fn unplace(&mut self, b: u32) {
        let bi = b as usize;
        self.offset[bi] = UNPLACED;
        let [first, end] = self.sweep.hull[bi];
        self.scanned += u64::from(end - first);
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
