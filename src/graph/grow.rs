//! The exact search on a growing part of the conflict graph: a kernel's
//! placement at a tight height is usually decided by a few dozen of its
//! buffers (a heavy clique and what presses on it), and the graph's search
//! settles a few dozen at once where it cannot settle a few hundred.
//!
//! A part starts as the fixed buffers and the heaviest clique the graph
//! keeps. Each round searches the part alone at the capacity (the graph's
//! search; where it runs out of nodes, the walk over orders with as much
//! work). When the part has no placement, neither has the whole: the
//! whole's placement, kept to the part's buffers, would be one (its
//! conflicts are a subset of the whole's). That is a proof, so the turn
//! ends `Infeasible`. When the part has one, the rest are put first-fit
//! around it, the buffers that press hardest on the part first; if they
//! all fit, that is a placement of the whole; else the first that does not
//! joins the part (it is what the part's placement cannot take) and the
//! round repeats. A part that grows to the whole problem is just the
//! graph's search again, so the turn leaves it to that search.
//!
//! The graph's search on the whole is complete, so whatever this turn
//! settles it would settle too; this turn gets there sooner where a few
//! dozen buffers decide. Its rounds count against the turn's node budget,
//! so the turns still share the work.

use alloc::vec;
use alloc::vec::Vec;

use super::conflicts::Graph;
use super::failed::Failed;
use super::search::{self, End, Limits, OnGraph};
use super::walk::{Walk, Walked};
use crate::base::math::align_up;
use crate::deadline::{Poll, Stop};
use crate::model::problem::Problem;

/// What a turn of the growing search ended with.
pub(crate) enum Grown {
    /// An offset per buffer of the whole problem.
    Found(Vec<i64>),
    /// A part has no placement, so the whole has none.
    Infeasible,
    /// The turn's nodes ran out (or the part cannot be searched alone).
    NodeLimit,
    /// The deadline passed or the search was cancelled.
    Stopped(Stop),
}

/// The part of the problem searched, kept between turns: it only grows.
pub(crate) struct Grow {
    members: Vec<usize>,
    member: Vec<bool>,
    /// The part last made (its size, the capacity), its graph and the
    /// states its searches exhausted: a turn that runs out of nodes
    /// leaves the part as it was, and the next turn searches it again
    /// without enumerating its cliques or searching those states again.
    made: Option<(usize, i64, Problem, Graph, Failed)>,
}

impl Grow {
    /// The fixed buffers and the heaviest clique of `graph`.
    pub(crate) fn new(problem: &Problem, graph: &Graph) -> Grow {
        let n = problem.len();
        let mut grow = Grow {
            members: Vec::new(),
            member: vec![false; n],
            made: None,
        };
        for (i, b) in problem.buffers().iter().enumerate() {
            if b.offset.is_some() {
                grow.add(i);
            }
        }
        for m in graph.heaviest_kept_clique() {
            grow.add(m);
        }
        grow
    }

    fn add(&mut self, v: usize) {
        if !self.member[v] {
            self.member[v] = true;
            self.members.push(v);
        }
    }

    /// Rounds within `limit` nodes at `capacity` (the part's searches take
    /// `seed`); returns how it ended and the nodes used. Nodes are the
    /// whole graph's: a part's node weighs what it scans (fewer buffers,
    /// but maybe more cliques, see `conflicts`), so the turn is charged
    /// its work, in the units the walk's turns are given.
    pub(crate) fn run(
        &mut self,
        on: OnGraph<'_>,
        capacity: i64,
        limits: Limits,
        poll: &mut Poll<'_>,
    ) -> (Grown, u64) {
        let OnGraph { problem, graph } = on;
        let (limit, seed) = (limits.nodes.unwrap_or(u64::MAX), limits.seed);
        let n = problem.len();
        let whole = graph.node_weight();
        let budget = limit.saturating_mul(whole);
        let mut spent = 0u64;
        let used = |spent: u64| spent.div_ceil(whole);
        // The whole problem as a part is the graph's own turn.
        while self.members.len() < n && spent < budget {
            let made = match self.made.take() {
                Some(made) if made.0 == self.members.len() && made.1 == capacity => made,
                _ => {
                    let Some(part) = self.part(problem, capacity) else {
                        return (Grown::NodeLimit, used(spent));
                    };
                    let part_graph = Graph::with_every_clique(&part);
                    // Making the part weighs about a node of it, and its
                    // cliques.
                    spent += part_graph.node_weight() + part_graph.making;
                    (
                        self.members.len(),
                        capacity,
                        part,
                        part_graph,
                        Failed::new(),
                    )
                }
            };
            let (_, _, part, part_graph, failed) = self.made.insert(made);
            let weight = part_graph.node_weight();
            let nodes = budget.saturating_sub(spent) / weight;
            let on_part = OnGraph {
                problem: part,
                graph: part_graph,
            };
            let limits = Limits {
                nodes: Some(nodes.max(1)),
                seed,
            };
            let searched = search::search(on_part, capacity, limits, failed, poll);
            spent += searched.nodes.saturating_mul(weight);
            let placed = match searched.end {
                End::Found(offsets) => offsets,
                End::Infeasible => return (Grown::Infeasible, used(spent)),
                End::NodeLimit => {
                    let mut walk = Walk::new(part, part_graph, capacity, seed);
                    let (walked, work) =
                        walk.run(part_graph, (searched.nodes.saturating_mul(weight), 0), poll);
                    spent += work;
                    match walked {
                        Walked::Found(offsets) => offsets,
                        Walked::Stopped(stop) => return (Grown::Stopped(stop), used(spent)),
                        _ => return (Grown::NodeLimit, used(spent)),
                    }
                }
                End::Stopped(stop) => return (Grown::Stopped(stop), used(spent)),
            };
            spent += whole;
            match self.extend(graph, capacity, &placed) {
                Ok(offsets) => return (Grown::Found(offsets), used(spent)),
                Err(v) => self.add(v),
            }
        }
        (Grown::NodeLimit, used(spent))
    }

    /// The part as a problem of its own (its buffers in `members` order).
    fn part(&self, problem: &Problem, capacity: i64) -> Option<Problem> {
        let buffers = problem.buffers();
        let chosen = self.members.iter().map(|&m| buffers[m].clone()).collect();
        Problem::new(capacity, chosen).ok()
    }

    /// The part's placement (`placed`, in `members` order) with the other
    /// buffers put first-fit around it, those that conflict with the most
    /// of the part's bytes first: the offsets, or the first buffer with no
    /// room below `capacity`.
    fn extend(&self, graph: &Graph, capacity: i64, placed: &[i64]) -> Result<Vec<i64>, usize> {
        const UNPLACED: i64 = i64::MIN;
        let n = self.member.len();
        let mut offset = vec![UNPLACED; n];
        for (&m, &o) in self.members.iter().zip(placed) {
            offset[m] = o;
        }
        let mut rest: Vec<(i64, usize)> = (0..n)
            .filter(|&v| !self.member[v])
            .map(|v| {
                let pressed: i64 = graph.neighbours[v]
                    .iter()
                    .filter(|&&u| self.member[u as usize])
                    .map(|&u| graph.size[u as usize])
                    .sum();
                (pressed.saturating_add(graph.size[v]), v)
            })
            .collect();
        rest.sort_unstable_by_key(|&(pressed, v)| (core::cmp::Reverse(pressed), v));
        let mut taken: Vec<(i64, i64)> = Vec::new();
        for &(_, v) in &rest {
            taken.clear();
            for &u in &graph.neighbours[v] {
                let o = offset[u as usize];
                if o != UNPLACED {
                    taken.push((o, o + graph.size[u as usize]));
                }
            }
            let size = graph.size[v];
            let at = first_fit(&mut taken, size, graph.align[v]);
            if at + size > capacity {
                return Err(v);
            }
            offset[v] = at;
        }
        Ok(offset)
    }
}

/// The lowest offset, aligned to `align`, where `size` bytes meet none of
/// the byte ranges `blocks` (sorted here, in place): first-fit against
/// the neighbours placed so far, for the parts' extension (and, in a
/// test, the reference the walk's decoding is checked against).
pub(crate) fn first_fit(blocks: &mut [(i64, i64)], size: i64, align: i64) -> i64 {
    blocks.sort_unstable();
    let mut at = 0i64;
    for &(bottom, top) in blocks.iter() {
        if bottom >= at + size {
            break;
        }
        if top > at {
            at = align_up(top, align);
        }
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::rng::Rng;
    use crate::deadline::Deadline;
    use crate::exact::testing::{fits, gapped};
    use crate::exact::{solve, Params, Verdict};

    /// On 20,000 random problems with gaps (fixed buffers, alignments),
    /// also aimed below their capacity: a part proven to have no placement
    /// means the sweep's search (checked against brute force elsewhere)
    /// finds none for the whole either, and every placement reported is
    /// valid and fits.
    #[test]
    fn a_part_without_a_placement_proves_the_whole_has_none() {
        let mut rng = Rng::new(0x6b0e);
        let deadline = Deadline::new(None, None, None);
        let (mut found, mut proven) = (0, 0);
        for i in 0..20_000 {
            let problem = gapped(&mut rng);
            let graph = Graph::new(&problem);
            let capacity = problem.capacity() - i64::from(i % 2 == 1) * rng.below(0, 8);
            let mut grow = Grow::new(&problem, &graph);
            let mut poll = Poll::new(&deadline, 1 << 16);
            let on = OnGraph {
                problem: &problem,
                graph: &graph,
            };
            let limits = Limits {
                nodes: None,
                seed: i as u64,
            };
            let (grown, _) = grow.run(on, capacity, limits, &mut poll);
            let sweep = || {
                let aimed = problem.with_capacity(capacity).expect("capacity");
                solve(&aimed, capacity, &Params::default(), &deadline).0
            };
            match grown {
                Grown::Found(offsets) => {
                    assert!(fits(&problem, &offsets, capacity), "instance {i}");
                    found += 1;
                }
                Grown::Infeasible => {
                    assert_eq!(sweep(), Verdict::Infeasible, "instance {i}\n{problem:?}");
                    proven += 1;
                }
                Grown::NodeLimit => {}
                Grown::Stopped(stop) => panic!("instance {i}: {stop:?}"),
            }
        }
        assert!(
            found > 5_000 && proven > 2_000,
            "{found} found, {proven} proven"
        );
    }

    /// Generated kernels of 40-130 buffers with a quarter or half of
    /// their pairs separated, at the weight of the heaviest clique kept
    /// (the height a minimiser tries first): within 100,000 nodes each,
    /// the growing search decides (places, or proves that nothing fits)
    /// more of them than the graph's search on the whole, and where both
    /// decide they agree.
    #[test]
    fn growing_parts_decide_more_kernels_than_the_whole_search() {
        let deadline = Deadline::new(None, None, None);
        let (mut by_parts, mut by_whole, kernels) = (0, 0, 24u64);
        for seed in 1..=kernels {
            let n = 40 + (seed as usize * 37) % 91;
            let spec = crate::gen::Spec::new(n, seed);
            let separated = [0.25, 0.5][seed as usize % 2];
            let (buffers, groups) = crate::gen::kernel(spec, Some(separated));
            let mut problem = Problem::new(i64::MAX / 4, buffers).expect("kernel");
            for g in &groups {
                problem.separate(g).expect("group");
            }
            let lowered = problem.lowered().expect("lowers").problem;
            let graph = Graph::new(&lowered);
            let capacity: i64 = graph
                .heaviest_kept_clique()
                .iter()
                .map(|&m| graph.size[m])
                .sum();
            let mut poll = Poll::new(&deadline, 1 << 16);
            let mut grow = Grow::new(&lowered, &graph);
            let on = OnGraph {
                problem: &lowered,
                graph: &graph,
            };
            let limits = Limits {
                nodes: Some(100_000),
                seed: 0,
            };
            let (grown, _) = grow.run(on, capacity, limits, &mut poll);
            if let Grown::Found(offsets) = &grown {
                assert!(fits(&lowered, offsets, capacity), "kernel {seed}");
            }
            let mut failed = Failed::new();
            let whole = search::search(on, capacity, limits, &mut failed, &mut poll);
            match (&grown, &whole.end) {
                (Grown::Found(_), End::Infeasible) | (Grown::Infeasible, End::Found(_)) => {
                    panic!("kernel {seed}: the part and the whole disagree")
                }
                _ => {}
            }
            by_parts += usize::from(matches!(grown, Grown::Found(_) | Grown::Infeasible));
            by_whole += usize::from(matches!(whole.end, End::Found(_) | End::Infeasible));
        }
        std::eprintln!(
            "of {kernels}: {by_parts} decided by growing parts, {by_whole} by the whole"
        );
        assert!(by_parts > by_whole, "{by_parts} by parts, {by_whole} whole");
    }
}
