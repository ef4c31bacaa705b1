//! The index a repair asks which buffers to move and which to step
//! around: the buffers grouped by the length of their lifetime (one group
//! per doubling), sorted by their first time slot within a group, with
//! two trees over that order, the latest end slot and the highest top
//! (offset plus size) of every subtree. A buffer of a group alive during
//! a time range starts before the range's end and less than the group's
//! longest lifetime before its start: per group, one run of positions.
//! A query for the buffers alive during a range whose tops are above a
//! floor visits those runs only, and prunes the subtrees that end before
//! the range or stay below the floor. (Ordered by first slot alone, a
//! subtree far back in time held a long-lived buffer still alive and,
//! elsewhere, one up near the top, so nothing pruned it: a query visited
//! every buffer that had started.) A query costs its answers and a few
//! root-to-leaf paths per group, so a repair step near the peak costs the
//! buffers up there, not the whole problem.

use alloc::vec::Vec;

use super::super::layout::Layout;
use crate::deadline::{sort_polled, Poll, Stop};

pub(crate) struct TimeIndex {
    /// First slot per position, ascending within each group.
    first: Vec<u32>,
    /// The groups of lifetimes, in position order.
    groups: Vec<Group>,
    /// Buffer per position, and position per buffer.
    id: Vec<u32>,
    position: Vec<u32>,
    leaves: usize,
    /// Latest end slot per tree node (leaves at `leaves + position`).
    max_end: Vec<u32>,
    /// Highest top per tree node (`i64::MIN` below an empty leaf).
    max_top: Vec<i64>,
}

/// The buffers whose lifetimes' lengths share a doubling: their
/// positions `[from, to)` and the longest lifetime among them.
struct Group {
    from: u32,
    to: u32,
    longest: u32,
}

/// The group of a lifetime of `length` slots (0 and 1 together).
fn group_of(length: u32) -> u32 {
    31 - length.max(1).leading_zeros()
}

impl TimeIndex {
    /// The index of `layout`'s buffers placed at `offsets`.
    pub(crate) fn new(
        layout: &Layout,
        offsets: &[i64],
        poll: &mut Poll<'_>,
    ) -> Result<TimeIndex, Stop> {
        let n = layout.len();
        let mut keyed: Vec<(u32, u32, u32)> = (0..n as u32)
            .map(|b| {
                let e = layout.extent[b as usize];
                (group_of(e.end.saturating_sub(e.first)), e.first, b)
            })
            .collect();
        sort_polled(&mut keyed, poll)?;
        let mut groups: Vec<Group> = Vec::new();
        for (i, &(g, first, b)) in keyed.iter().enumerate() {
            let length = layout.extent[b as usize].end.saturating_sub(first);
            match groups.last_mut() {
                Some(last) if group_of(last.longest) == g => {
                    last.to = i as u32 + 1;
                    last.longest = last.longest.max(length);
                }
                _ => groups.push(Group {
                    from: i as u32,
                    to: i as u32 + 1,
                    longest: length,
                }),
            }
        }
        let leaves = n.max(1).next_power_of_two();
        let mut max_end = alloc::vec![0u32; 2 * leaves];
        let mut position = alloc::vec![0u32; n];
        for (i, &(_, _, b)) in keyed.iter().enumerate() {
            max_end[leaves + i] = layout.extent[b as usize].end;
            position[b as usize] = i as u32;
        }
        for i in (1..leaves).rev() {
            max_end[i] = max_end[2 * i].max(max_end[2 * i + 1]);
        }
        poll.tick(4 * leaves as u64)?;
        let mut index = TimeIndex {
            first: keyed.iter().map(|k| k.1).collect(),
            groups,
            id: keyed.iter().map(|k| k.2).collect(),
            position,
            leaves,
            max_end,
            max_top: Vec::new(),
        };
        index.place_all(layout, offsets);
        Ok(index)
    }

    /// Sets every buffer's top from `offsets`.
    pub(crate) fn place_all(&mut self, layout: &Layout, offsets: &[i64]) {
        let leaves = self.leaves;
        self.max_top.clear();
        self.max_top.resize(2 * leaves, i64::MIN);
        for (i, &b) in self.id.iter().enumerate() {
            let b = b as usize;
            self.max_top[leaves + i] = offsets[b].saturating_add(layout.size[b]);
        }
        for i in (1..leaves).rev() {
            self.max_top[i] = self.max_top[2 * i].max(self.max_top[2 * i + 1]);
        }
    }

    /// Buffer `b`'s top is now `top`.
    pub(crate) fn set_top(&mut self, b: usize, top: i64) {
        let mut at = self.leaves + self.position[b] as usize;
        self.max_top[at] = top;
        while at > 1 {
            at /= 2;
            self.max_top[at] = self.max_top[2 * at].max(self.max_top[2 * at + 1]);
        }
    }

    /// The highest top (0 with no buffers).
    pub(crate) fn height(&self) -> i64 {
        self.max_top[1].max(0)
    }

    /// A buffer whose top is at least `at_least` (the highest if none
    /// other is): from the root, a child that reaches the bar, chosen by
    /// the bits of `pick`, so that the steps of a repair visit the
    /// different places that stand up to the bar, not always the first.
    pub(crate) fn high(&self, at_least: i64, mut pick: u64) -> usize {
        let bar = at_least.min(self.max_top[1]);
        let mut at = 1;
        while at < self.leaves {
            let (l, r) = (2 * at, 2 * at + 1);
            at = match (self.max_top[l] >= bar, self.max_top[r] >= bar) {
                (true, true) => {
                    pick = pick.rotate_right(1);
                    if pick & 1 == 0 {
                        l
                    } else {
                        r
                    }
                }
                (true, false) => l,
                _ => r,
            };
        }
        self.id[at - self.leaves] as usize
    }

    /// Pushes onto `out` every buffer alive at some slot of `[a, b)` whose
    /// top is above `floor`, by first slot (ties by number: the order the
    /// windows and the ejection chains take them in); returns the tree
    /// nodes visited (the work).
    pub(crate) fn query(
        &self,
        a: u32,
        b: u32,
        floor: i64,
        out: &mut Vec<u32>,
        stack: &mut Vec<(u32, u32)>,
    ) -> usize {
        let (mut visited, from) = (0, out.len());
        for g in &self.groups {
            // Alive in [a, b): starts before `b` and ends after `a`, so
            // starts after `a - longest`.
            let run = &self.first[g.from as usize..g.to as usize];
            let lo = g.from as usize + run.partition_point(|&f| f.saturating_add(g.longest) <= a);
            let hi = g.from as usize + run.partition_point(|&f| f < b);
            if lo >= hi {
                continue;
            }
            stack.clear();
            stack.push((1, self.leaves as u32));
            while let Some((node, width)) = stack.pop() {
                visited += 1;
                let start = node as usize * width as usize - self.leaves;
                let n = node as usize;
                if start >= hi
                    || start + width as usize <= lo
                    || self.max_end[n] <= a
                    || self.max_top[n] <= floor
                {
                    continue;
                }
                if width == 1 {
                    // The position for now: see below.
                    out.push(start as u32);
                } else {
                    stack.push((2 * node + 1, width / 2));
                    stack.push((2 * node, width / 2));
                }
            }
        }
        // By first slot, then number: each group's run already is (its
        // positions are so sorted), so the pairs are read in position
        // order and sorted by value, not through the buffers' positions.
        stack.clear();
        stack.extend(
            out[from..]
                .iter()
                .map(|&p| (self.first[p as usize], self.id[p as usize])),
        );
        stack.sort_unstable();
        out.truncate(from);
        out.extend(stack.iter().map(|&(_, x)| x));
        visited
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::rng::Rng;
    use crate::deadline::Deadline;
    use crate::model::problem::{Buffer, Problem};

    /// A query costs its answers and a few paths per group of lifetimes,
    /// not the buffers that started before its range: here every stretch
    /// of start times holds a long-lived buffer still alive (low, below
    /// the floor) and short ones placed high that ended long ago, the
    /// mix that no subtree of an order by start alone could prune.
    #[test]
    fn a_query_costs_its_answers_not_what_started_before() {
        let mut rng = Rng::new(4);
        let (short, long, horizon) = (8192usize, 512usize, 8192i64);
        let mut buffers = Vec::new();
        let mut offsets = Vec::new();
        for i in 0..short {
            let lower = rng.below(0, horizon - 4);
            buffers.push(Buffer::new(
                alloc::format!("s{i}"),
                lower,
                lower + rng.below(1, 5),
                10,
            ));
            offsets.push(1000 + rng.below(0, 100));
        }
        for i in 0..long {
            let lower = rng.below(0, horizon / 2);
            buffers.push(Buffer::new(
                alloc::format!("l{i}"),
                lower,
                lower + horizon / 2,
                10,
            ));
            offsets.push(0);
        }
        let problem = Problem::new(i64::MAX, buffers).unwrap();
        let deadline = Deadline::none();
        let mut poll = Poll::new(&deadline, u64::MAX);
        let layout = Layout::new(&problem, &mut poll).unwrap();
        let index = TimeIndex::new(&layout, &offsets, &mut poll).unwrap();
        let depth = index.leaves.trailing_zeros() as usize + 1;
        let (mut out, mut stack) = (Vec::new(), Vec::new());
        for _ in 0..200 {
            let a = rng.below(layout.times as i64 / 2, layout.times as i64 - 2) as u32;
            out.clear();
            let visited = index.query(a, a + 2, 500, &mut out, &mut stack);
            let bound = 4 * (out.len() + index.groups.len()) * depth;
            assert!(
                visited <= bound,
                "{visited} nodes visited for {} answers",
                out.len()
            );
        }
    }
}
