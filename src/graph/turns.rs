//! The turns of the exact search on a conflict graph (`both_searches` in
//! `graph::solve`): which kinds take turns, in what order, and where they
//! stand at one capacity, kept between calls in the memo.

use super::conflicts::Graph;
use super::grow::Grow;
use super::walk::Walk;
use crate::model::problem::Problem;

/// Where the turns of `both_searches` stand at one capacity: the next
/// turn and its budget, the graph's next seed, and what the turns made
/// (the conflict graph, the walk, the growing part), kept between calls
/// in the memo as they are between turns within a call.
pub(crate) struct Turns {
    pub(crate) graph: Graph,
    pub(crate) walk: Walk,
    pub(crate) grow: Grow,
    pub(crate) budget: u64,
    /// The index in [`KINDS`] of the next turn.
    pub(crate) next: usize,
    pub(crate) seed: u64,
}

impl Turns {
    pub(crate) fn new(problem: &Problem, capacity: i64) -> Turns {
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
pub(crate) const KINDS: [Turn; 4] = [Turn::Grow, Turn::Graph, Turn::Walk, Turn::Sweep];

/// The turns of `both_searches`.
#[derive(Clone, Copy)]
pub(crate) enum Turn {
    Graph,
    Grow,
    Walk,
    Sweep,
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use crate::deadline::Deadline;
    use crate::exact::{solve, Params, Verdict};
    use crate::model::problem::{Buffer, Problem};

    /// A turn that the call's node limit cuts short ends the call, even
    /// one that gives back no nodes: here the heaviest clique is every
    /// buffer, so the growing part is the whole problem at once and its
    /// turn spends nothing. (Run again at once on what was left, such a
    /// turn looped forever; the call runs on a thread of its own so that
    /// the test fails rather than hangs.)
    #[test]
    fn a_turn_cut_short_ends_the_call() {
        let buffers = (1..=6)
            .map(|i| Buffer::new(alloc::format!("{i}"), 0, 1, i))
            .collect();
        let problem = Problem::new(21, buffers).expect("valid");
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let params = Params {
                node_limit: Some(10),
                conflict_graph: true,
                ..Params::default()
            };
            let deadline = Deadline::new(None, None, None);
            let _ = send.send(solve(&problem, 21, &params, &deadline).0);
        });
        let verdict = receive
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the call ends");
        assert!(
            matches!(verdict, Verdict::NodeLimit | Verdict::Solved(_)),
            "{verdict:?}"
        );
    }
}
