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

#[cfg(test)]
mod tests {
    use super::Failed;
    use crate::deadline::{Deadline, Poll};
    use crate::exact::testing::fits;
    use crate::graph::conflicts::Graph;
    use crate::graph::search::{search, End, Limits, OnGraph};

    /// The table of exhausted states changes no answer, on problems where
    /// it prunes much: 160 generated kernels of 12-40 buffers with half
    /// their pairs separated, searched at their heaviest kept clique and a
    /// few grains above it (where most are tight), each with the table
    /// and without one, in the same order. Wherever both end, they agree
    /// on whether anything fits; every placement is valid. The test counts
    /// the nodes the table ended and the searches it shortened.
    #[test]
    fn the_exhausted_states_change_no_answer() {
        use crate::gen::{kernel_problem, Family, Spec};
        let deadline = Deadline::new(None, None, None);
        let (mut compared, mut hits, mut shorter) = (0, 0u64, 0);
        for seed in 0..160u64 {
            let n = 12 + (seed as usize * 7) % 29;
            let spec = Spec::new(n, seed).with_family(Family::Kernel);
            let kernel = kernel_problem(spec, 0.5).expect("generated");
            let problem = kernel.lowered().expect("lowers").problem;
            let graph = Graph::new(&problem);
            let clique: i64 = graph
                .heaviest_kept_clique()
                .iter()
                .map(|&v| graph.size[v])
                .sum();
            for capacity in [clique, clique + 32, clique + 96, clique + 320] {
                let limits = Limits {
                    nodes: Some(50_000),
                    seed,
                };
                let mut poll = Poll::new(&deadline, 1 << 16);
                let mut on = Failed::new();
                let graphed = OnGraph {
                    problem: &problem,
                    graph: &graph,
                };
                let with = search(graphed, capacity, limits, &mut on, &mut poll);
                let without = search(graphed, capacity, limits, &mut Failed::off(), &mut poll);
                for end in [&with.end, &without.end] {
                    if let End::Found(offsets) = end {
                        let at_capacity = problem.with_capacity(capacity).expect("higher");
                        assert!(fits(&at_capacity, offsets, capacity), "kernel {seed}");
                    }
                }
                match (&with.end, &without.end) {
                    (End::NodeLimit, _) | (_, End::NodeLimit) => continue,
                    (End::Found(_), End::Found(_)) | (End::Infeasible, End::Infeasible) => {}
                    (a, b) => panic!("kernel {seed} at {capacity}: with {a:?}, without {b:?}"),
                }
                compared += 1;
                hits += on.hits;
                shorter += usize::from(with.nodes < without.nodes);
            }
        }
        assert!(
            compared > 400 && hits > 400 && shorter > 24,
            "{compared} compared, {hits} nodes ended by the table, {shorter} searches shortened"
        );
    }
}
