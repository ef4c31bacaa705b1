//! The index a repair asks which buffers to move and which to step
//! around: the buffers sorted by their first time slot, with two trees
//! over that order, the latest end slot and the highest top (offset plus
//! size) of every subtree. A query for the buffers alive during a time
//! range whose tops are above a floor visits only the prefix that starts
//! before the range's end, and prunes the subtrees that end before its
//! start or stay below the floor: it costs O((k + 1) log n) for k answers,
//! whatever the lifetimes, so a repair step near the peak costs the
//! buffers up there, not the whole problem.

use alloc::vec::Vec;

use super::super::layout::Layout;
use crate::deadline::{sort_polled, Poll, Stop};

pub(crate) struct TimeIndex {
    /// First slot per position, ascending.
    first: Vec<u32>,
    /// Buffer per position, and position per buffer.
    id: Vec<u32>,
    position: Vec<u32>,
    leaves: usize,
    /// Latest end slot per tree node (leaves at `leaves + position`).
    max_end: Vec<u32>,
    /// Highest top per tree node (`i64::MIN` below an empty leaf).
    max_top: Vec<i64>,
}

impl TimeIndex {
    /// The index of `layout`'s buffers placed at `offsets`.
    pub(crate) fn new(
        layout: &Layout,
        offsets: &[i64],
        poll: &mut Poll<'_>,
    ) -> Result<TimeIndex, Stop> {
        let n = layout.len();
        let mut keyed: Vec<(u32, u32)> = (0..n as u32)
            .map(|b| (layout.extent[b as usize].first, b))
            .collect();
        sort_polled(&mut keyed, poll)?;
        let leaves = n.max(1).next_power_of_two();
        let mut max_end = alloc::vec![0u32; 2 * leaves];
        let mut position = alloc::vec![0u32; n];
        for (i, &(_, b)) in keyed.iter().enumerate() {
            max_end[leaves + i] = layout.extent[b as usize].end;
            position[b as usize] = i as u32;
        }
        for i in (1..leaves).rev() {
            max_end[i] = max_end[2 * i].max(max_end[2 * i + 1]);
        }
        poll.tick(4 * leaves as u64)?;
        let mut index = TimeIndex {
            first: keyed.iter().map(|k| k.0).collect(),
            id: keyed.iter().map(|k| k.1).collect(),
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
    /// top is above `floor`.
    pub(crate) fn query(
        &self,
        a: u32,
        b: u32,
        floor: i64,
        out: &mut Vec<u32>,
        stack: &mut Vec<(u32, u32)>,
    ) {
        let prefix = self.first.partition_point(|&f| f < b);
        if prefix == 0 {
            return;
        }
        stack.clear();
        stack.push((1, self.leaves as u32));
        while let Some((node, width)) = stack.pop() {
            let lo = node as usize * width as usize - self.leaves;
            let n = node as usize;
            if lo >= prefix || self.max_end[n] <= a || self.max_top[n] <= floor {
                continue;
            }
            if width == 1 {
                out.push(self.id[lo]);
            } else {
                stack.push((2 * node + 1, width / 2));
                stack.push((2 * node, width / 2));
            }
        }
    }
}
