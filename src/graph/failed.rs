//! The states the graph's search has exhausted, so that it never searches
//! one twice.
//!
//! Why a state decides its subtree. In a live node of the search (see
//! `graph`), every placed free buffer lies below the floor with its top at
//! or below the lowest offset of each unplaced neighbour, and no later
//! placement goes lower than a lowest offset: so the placed free buffers
//! never block an unplaced one again. Call an unplaced buffer *waiting*
//! when its (lowest offset, index) comes before the (floor, index) of the
//! buffer placed last: it cannot come next, only after a placement raises
//! it. The next buffer is any other, at its lowest offset; that offset
//! and index become the floor, and which buffers wait or are dead then
//! (dead: ending at or below the new floor) follows from the lowest
//! offsets and that buffer alone. So what can still be placed, and where,
//! depends only on the unplaced set, each one's lowest offset and which of
//! them wait, with the fixed buffers and the capacity, which no node
//! changes: not on the floor itself, nor on how the buffers below were
//! arranged. Dense graphs reach one such state by many arrangements (a
//! clique's members stacked in any order leave the same top to every
//! common neighbour, and nothing waiting). A state whose subtree was
//! searched to the end without a placement has none, so a node that
//! reaches it again is dead.
//!
//! The state is kept as a 128-bit key: the exclusive or of one spread
//! value per (unplaced buffer, lowest offset), updated as offsets change,
//! and one per waiting buffer, added as a node is opened. Two states share
//! a key by chance with odds near 2^-128 per pair, far below any hardware
//! fault's.
//!
//! The table is a cache: one key per slot, a new key takes the slot of an
//! old one. Forgetting a state costs a search again, never a wrong answer.
//! It doubles while it fills, up to `MAX_SLOTS`.
//!
//! Kept between searches of one problem: a state has no completion
//! whatever order the candidates are tried in (the seed), and none below
//! a lower capacity either (a placement below it would be one below the
//! higher). So the restarts of the graph's turns, which search again with
//! twice the nodes and another order, prune what the turns before
//! exhausted; a higher capacity starts afresh.

use alloc::vec;
use alloc::vec::Vec;

use crate::base::rng::spread;

/// Slots at the start, and at most (16 bytes each: 4 MiB).
const MIN_SLOTS: usize = 1 << 10;
const MAX_SLOTS: usize = 1 << 18;

/// The part of a state's key that one buffer at one lowest offset adds
/// (or, added again, removes).
pub(crate) fn part(buffer: usize, lowest: i64) -> u128 {
    let a = spread((buffer as u64) ^ (lowest as u64).rotate_left(20));
    let b = spread(a ^ (buffer as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93) ^ lowest as u64);
    (u128::from(a) << 64) | u128::from(b)
}

/// The part of a node's key that says `buffer` waits (offsets are never
/// negative, so no lowest offset's part is this).
pub(crate) fn waiting(buffer: usize) -> u128 {
    part(buffer, -1)
}

/// Exhausted states' keys (0: an empty slot), at a capacity.
pub(crate) struct Failed {
    slots: Vec<u128>,
    filled: usize,
    /// The lowest capacity a state was exhausted at: every state holds
    /// there and below.
    capacity: i64,
    /// Nodes found dead here (kept when the states are forgotten).
    pub(crate) hits: u64,
}

impl Failed {
    pub(crate) fn new() -> Failed {
        Failed {
            slots: vec![0; MIN_SLOTS],
            filled: 0,
            capacity: i64::MIN,
            hits: 0,
        }
    }

    /// A table that remembers nothing: the search as it is without one,
    /// for the tests that compare the two.
    #[cfg(test)]
    pub(crate) fn off() -> Failed {
        Failed {
            slots: Vec::new(),
            ..Failed::new()
        }
    }

    /// Ready for a search at `capacity`: what was exhausted at or above it
    /// still holds there; above the lowest capacity a state was exhausted
    /// at, nothing is known, so all is forgotten. The states this search
    /// adds hold only at `capacity` and below, so that is where the table
    /// holds from now on.
    pub(crate) fn at(&mut self, capacity: i64) {
        if capacity > self.capacity && self.filled > 0 {
            let hits = self.hits;
            *self = Failed::new();
            self.hits = hits;
        }
        self.capacity = capacity;
    }

    fn slot(&self, key: u128) -> usize {
        (key as usize) & (self.slots.len() - 1)
    }

    /// Whether `key`'s state was exhausted (and still remembered).
    pub(crate) fn contains(&mut self, key: u128) -> bool {
        let hit = key != 0 && !self.slots.is_empty() && self.slots[self.slot(key)] == key;
        self.hits += u64::from(hit);
        hit
    }

    /// Remembers that `key`'s state has no completion.
    pub(crate) fn insert(&mut self, key: u128) {
        if key == 0 || self.slots.is_empty() {
            return;
        }
        if self.filled * 2 >= self.slots.len() && self.slots.len() < MAX_SLOTS {
            let doubled = vec![0; self.slots.len() * 2];
            let old = core::mem::replace(&mut self.slots, doubled);
            self.filled = 0;
            for k in old.into_iter().filter(|&k| k != 0) {
                self.put(k);
            }
        }
        self.put(key);
    }

    fn put(&mut self, key: u128) {
        let s = self.slot(key);
        self.filled += usize::from(self.slots[s] == 0);
        self.slots[s] = key;
    }
}
