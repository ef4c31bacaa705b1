//! The turns of the exact search on a conflict graph (`both_searches` in
//! the solver): which kinds take turns, in what order, and where they
//! stand at one capacity, kept between calls in the memo.

use super::conflicts::Graph;
use super::grow::Grow;
use super::walk::Walk;
use crate::model::problem::Problem;

/// Where the turns of `both_searches` stand at one capacity: the next
/// turn and its budget, the graph's next seed, and what the turns made
/// (the conflict graph, the walk, the growing part), kept between calls
/// in the memo as they are between turns within a call.
pub(super) struct Turns {
    pub(super) graph: Graph,
    pub(super) walk: Walk,
    pub(super) grow: Grow,
    pub(super) budget: u64,
    /// The index in [`KINDS`] of the next turn.
    pub(super) next: usize,
    pub(super) seed: u64,
}

impl Turns {
    pub(super) fn new(problem: &Problem, capacity: i64) -> Turns {
        let graph = Graph::new(problem);
        let walk = Walk::new(problem, &graph, capacity, 0);
        let grow = Grow::new(problem, &graph);
        Turns {
            graph,
            walk,
            grow,
            budget: 1024,
            next: 0,
            seed: 0,
        }
    }
}

/// The turns of `both_searches`, in the order they take turns.
pub(super) const KINDS: [Turn; 4] = [Turn::Grow, Turn::Graph, Turn::Walk, Turn::Sweep];

/// The turns of `both_searches`.
#[derive(Clone, Copy)]
pub(super) enum Turn {
    Graph,
    Grow,
    Walk,
    Sweep,
}
