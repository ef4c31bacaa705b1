//! What compiler passes say about buffers beyond lifetimes and sizes:
//! colocations (buffers that alias: one offset for all), separations
//! (buffers that may not share a byte, whatever their lifetimes) and reuse
//! penalties (pairs that may share bytes, at a cost).
//!
//! The problem keeps them as declared and checks them as they come
//! (`declare.rs`); the planner lowers them to plain buffers
//! (`lower.rs`) so that every strategy honours them, and the
//! validator checks them from their definition. This file holds the
//! groups and their indexes alone.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

/// The colocations, separations and reuse penalties of a problem.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Links {
    /// Disjoint groups of two or more buffers sharing one offset, sorted.
    pub(crate) colocations: Vec<Vec<u32>>,
    /// Groups of two or more buffers no two of which share a byte, sorted.
    pub(crate) separations: Vec<Vec<u32>>,
    /// Indexes kept with the groups, so that declaring one costs its size,
    /// not the number of groups: each buffer's colocation group (`u32::MAX`
    /// or past the end: none) and the separations it is in.
    pub(super) group: Vec<u32>,
    pub(super) separated_in: Vec<Vec<u32>>,
    /// Reuse penalties: what a pair (the lower index first) costs when the
    /// two share a byte. They change no placement's validity, only what it
    /// costs, so they are not lowered.
    pub(crate) penalties: BTreeMap<(u32, u32), i64>,
    /// Their costs added up (kept so that declaring one is not a scan of
    /// all: at most 2^63-1, which declaring checks).
    pub(super) penalty_total: i64,
}

impl Links {
    /// Whether there are no colocations and no separations (penalties,
    /// which constrain nothing, do not count).
    pub fn is_empty(&self) -> bool {
        self.colocations.is_empty() && self.separations.is_empty()
    }

    /// The colocation group holding buffer `b`, by position.
    pub(super) fn group_of(&self, b: u32) -> Option<usize> {
        match self.group.get(b as usize) {
            Some(&g) if g != u32::MAX => Some(g as usize),
            _ => None,
        }
    }

    /// For each buffer of `n`, the index of its colocation group, or
    /// `u32::MAX`.
    pub(crate) fn group_index(&self, n: usize) -> Vec<u32> {
        let mut index = self.group.clone();
        index.resize(n, u32::MAX);
        index
    }

    /// Records that the members of colocation group `g` are in it.
    pub(super) fn index_group(&mut self, g: usize) {
        for &m in &self.colocations[g] {
            let m = m as usize;
            if self.group.len() <= m {
                self.group.resize(m + 1, u32::MAX);
            }
            self.group[m] = g as u32;
        }
    }
}
