//! A lower bound from the conflict graph: buffers that pairwise conflict
//! (alive at a common time, or in one separation group) must lie one above
//! the other, so the heaviest such set, a clique of the graph, is a bound
//! on any placement's height. Without separations the graph is an
//! interval graph and its heaviest clique is the max load; with them it
//! can be far above it (a separation group plus buffers alive beside its
//! members), which is what proves small kernels optimal.
//!
//! Soundness: only buffers without gaps and outside colocation groups take
//! part. Such a buffer holds `[offset, offset + size)` for its whole
//! lifetime, so two conflicting ones hold disjoint intervals of memory,
//! and intervals pairwise disjoint on a line fit below the height only if
//! their sizes add up to at most it. Leaving buffers out only shrinks
//! cliques: the bound stays a bound. Every clique the search reports is a
//! real one, so a search cut short by its budget still gives a bound.

use alloc::vec;
use alloc::vec::Vec;

use crate::base::bits::ones;
use crate::deadline::Deadline;
use crate::model::problem::Problem;

/// Above this many eligible buffers the bound is not sought (its
/// adjacency takes n^2 bits); the max load stands.
const MAX_VERTICES: usize = 1024;

/// Rounds of the search between a clique found and the ceiling.
const ROUNDS: usize = 6;

/// The weight of the heaviest clique found among the eligible buffers
/// within `budget` search nodes a round, or `known` (a bound already
/// proven) if none is heavier: the search only looks for cliques above
/// it, which prunes most of the tree at once. `known` with no
/// separations: the max load is that clique already, and cheaper.
///
/// `ceiling`: no clique is heavier (the height of a placement; `i64::MAX`
/// if none is known). When a round runs out of budget, the next looks
/// only for cliques above the middle of what is left between the best
/// found and the ceiling: it prunes harder and so reaches deeper. A round
/// that finishes without one lowers the ceiling instead (a bisection on
/// the heaviest clique's weight).
pub(crate) fn conflict_bound(
    problem: &Problem,
    budget: u64,
    (known, ceiling): (i64, i64),
    deadline: Option<&Deadline<'_>>,
) -> i64 {
    heaviest_clique(problem, budget, (known, ceiling), deadline).0
}

/// [`conflict_bound`] with the clique's buffers (increasing; empty when
/// none heavier than `known` was found).
pub(crate) fn heaviest_clique(
    problem: &Problem,
    budget: u64,
    (known, ceiling): (i64, i64),
    deadline: Option<&Deadline<'_>>,
) -> (i64, Vec<usize>) {
    let known = known.max(0); // the empty clique
    if problem.separations().is_empty() {
        return (known, Vec::new());
    }
    let buffers = problem.buffers();
    let mut colocated = vec![false; buffers.len()];
    for group in problem.colocations() {
        for &m in group {
            colocated[m as usize] = true;
        }
    }
    let vertices: Vec<usize> = (0..buffers.len())
        .filter(|&i| buffers[i].gaps.is_empty() && !colocated[i])
        .collect();
    let n = vertices.len();
    if n == 0 || n > MAX_VERTICES {
        return (known, Vec::new());
    }
    let mut at = vec![usize::MAX; buffers.len()];
    for (k, &i) in vertices.iter().enumerate() {
        at[i] = k;
    }
    let words = n.div_ceil(64);
    let mut adjacent = vec![0u64; n * words];
    let mut link = |a: usize, b: usize| {
        adjacent[a * words + b / 64] |= 1 << (b % 64);
        adjacent[b * words + a / 64] |= 1 << (a % 64);
    };
    for a in 0..n {
        let x = &buffers[vertices[a]];
        for (b, &j) in vertices.iter().enumerate().skip(a + 1) {
            let y = &buffers[j];
            if x.lower < y.upper && y.lower < x.upper {
                link(a, b);
            }
        }
    }
    for group in problem.separations() {
        let members: Vec<usize> = group
            .iter()
            .map(|&m| at[m as usize])
            .filter(|&k| k != usize::MAX)
            .collect();
        for (p, &a) in members.iter().enumerate() {
            for &b in &members[p + 1..] {
                link(a, b);
            }
        }
    }
    // Relabelled by decreasing weight: a set's bits in increasing order
    // are then its vertices heaviest first, with no sort per node.
    let mut rank: Vec<usize> = (0..n).collect();
    rank.sort_by_key(|&k| (core::cmp::Reverse(buffers[vertices[k]].size), k));
    let mut label = vec![0usize; n];
    for (r, &k) in rank.iter().enumerate() {
        label[k] = r;
    }
    let mut relabelled = vec![0u64; n * words];
    for a in 0..n {
        for b in ones(&adjacent[a * words..(a + 1) * words]) {
            let (x, y) = (label[a], label[b]);
            relabelled[x * words + y / 64] |= 1 << (y % 64);
        }
    }
    let weight: Vec<i64> = rank.iter().map(|&k| buffers[vertices[k]].size).collect();
    let mut search = Search {
        words,
        adjacent: relabelled,
        weight,
        best: 0,
        nodes: 0,
        budget,
        deadline,
        current: Vec::new(),
        members: Vec::new(),
        sets: vec![0u64; words],
        uncoloured: vec![0u64; words],
        class: vec![0u64; words],
        orders: Vec::new(),
    };
    // A greedy clique first: the search then looks only above it, and on
    // dense graphs (half the pairs separated) its budget reaches further.
    let (greedy, greedy_members) = search.greedy(n);
    let known_first = known.max(greedy);
    let complete = search.run(n, known_first, budget);
    let (mut best, mut found) = (search.best, core::mem::take(&mut search.members));
    if found.is_empty() && greedy > known {
        found = greedy_members;
    }
    let mut ceiling = ceiling;
    for _ in 0..ROUNDS {
        if complete || best >= ceiling || deadline.is_some_and(|d| d.check().is_err()) {
            break;
        }
        let middle = best + (ceiling - best) / 2;
        let complete = search.run(n, middle, budget);
        if search.best > middle {
            best = search.best;
            found = core::mem::take(&mut search.members);
        } else if complete {
            ceiling = middle;
        } else {
            break;
        }
    }
    let mut members: Vec<usize> = found.iter().map(|&r| vertices[rank[r]]).collect();
    members.sort_unstable();
    (best, members)
}

/// A branch and bound for the heaviest clique: candidates are split into
/// colour classes (sets of pairwise non-adjacent vertices, heaviest first),
/// and a branch whose weight plus the heaviest vertex of each class left
/// cannot beat the best is cut (a clique takes at most one of a class).
/// Vertices are numbered by decreasing weight, and each depth keeps its
/// candidate set and colour order in buffers reused from node to node:
/// past the first visit of a depth, a node allocates nothing.
struct Search<'d> {
    words: usize,
    adjacent: Vec<u64>,
    weight: Vec<i64>,
    best: i64,
    nodes: u64,
    budget: u64,
    /// Polled every few hundred nodes: past it, the search ends as if
    /// its budget were spent (the heaviest clique so far is still a bound).
    deadline: Option<&'d Deadline<'d>>,
    /// The clique being extended, and the heaviest found.
    current: Vec<usize>,
    members: Vec<usize>,
    /// Candidate sets, `words` per depth.
    sets: Vec<u64>,
    /// Scratch of the colouring (one node colours at a time).
    uncoloured: Vec<u64>,
    class: Vec<u64>,
    /// Per depth: the candidates in branching order, each with the bound
    /// of the classes up to its own.
    orders: Vec<Vec<(u32, i64)>>,
}

impl Search<'_> {
    /// One search from scratch for a clique heavier than `known` among
    /// all `n` vertices; whether it finished within `budget` nodes.
    fn run(&mut self, n: usize, known: i64, budget: u64) -> bool {
        (self.best, self.nodes, self.budget) = (known, 0, budget);
        self.members.clear();
        self.current.clear();
        self.sets[..self.words].fill(0);
        for k in 0..n {
            self.sets[k / 64] |= 1 << (k % 64);
        }
        self.expand(0, 0);
        self.nodes <= self.budget
    }

    /// The heaviest of the greedy cliques, one from each vertex (adding
    /// the heaviest vertex adjacent to all so far while one is left), and
    /// its vertices.
    fn greedy(&mut self, n: usize) -> (i64, Vec<usize>) {
        let w = self.words;
        let (mut best, mut members) = (0i64, Vec::new());
        let mut clique = Vec::new();
        for v in 0..n {
            self.class
                .copy_from_slice(&self.adjacent[v * w..(v + 1) * w]);
            clique.clear();
            clique.push(v);
            let mut held = self.weight[v];
            while let Some(u) = first_one(&self.class) {
                clique.push(u);
                held = held.saturating_add(self.weight[u]);
                for (c, a) in self
                    .class
                    .iter_mut()
                    .zip(&self.adjacent[u * w..(u + 1) * w])
                {
                    *c &= a;
                }
            }
            if held > best {
                best = held;
                members.clone_from(&clique);
            }
        }
        (best, members)
    }

    /// Extends a clique of weight `held` (at depth `depth`) by the
    /// candidates of its depth (each adjacent to every vertex of the
    /// clique).
    fn expand(&mut self, depth: usize, held: i64) {
        self.nodes += 1;
        if held > self.best {
            self.best = held;
            self.members.clone_from(&self.current);
        }
        if self.nodes % 256 == 0 && self.deadline.is_some_and(|d| d.check().is_err()) {
            self.budget = 0;
        }
        if self.nodes > self.budget {
            return;
        }
        let w = self.words;
        if self.orders.len() <= depth {
            self.orders.push(Vec::new());
        }
        if self.sets.len() < (depth + 2) * w {
            self.sets.resize((depth + 2) * w, 0);
        }
        // Colour classes, greedily, the heaviest vertices first.
        let mut order = core::mem::take(&mut self.orders[depth]);
        order.clear();
        self.uncoloured
            .copy_from_slice(&self.sets[depth * w..(depth + 1) * w]);
        let mut bound = 0i64;
        while let Some(first) = first_one(&self.uncoloured) {
            self.class.copy_from_slice(&self.uncoloured);
            bound = bound.saturating_add(self.weight[first]);
            while let Some(v) = first_one(&self.class) {
                order.push((v as u32, bound));
                self.uncoloured[v / 64] &= !(1 << (v % 64));
                self.class[v / 64] &= !(1 << (v % 64));
                for (c, a) in self
                    .class
                    .iter_mut()
                    .zip(&self.adjacent[v * w..(v + 1) * w])
                {
                    *c &= !a;
                }
            }
        }
        // Branch from the last class down: a vertex's bound counts only
        // the classes up to its own.
        while let Some((v, bound)) = order.pop() {
            let v = v as usize;
            if held.saturating_add(bound) <= self.best || self.nodes > self.budget {
                break;
            }
            let (here, below) = self.sets.split_at_mut((depth + 1) * w);
            let here = &mut here[depth * w..];
            for ((c, h), a) in below[..w]
                .iter_mut()
                .zip(here.iter())
                .zip(&self.adjacent[v * w..(v + 1) * w])
            {
                *c = h & a;
            }
            self.current.push(v);
            self.expand(depth + 1, held.saturating_add(self.weight[v]));
            self.current.pop();
            self.sets[depth * w + v / 64] &= !(1 << (v % 64));
        }
        self.orders[depth] = order;
    }
}

/// The lowest element of a set, if any.
fn first_one(set: &[u64]) -> Option<usize> {
    set.iter()
        .enumerate()
        .find(|(_, &word)| word != 0)
        .map(|(i, &word)| i * 64 + word.trailing_zeros() as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::rng::Rng;
    use crate::model::problem::{Buffer, Gap};

    /// The heaviest clique by trying every subset of the eligible buffers.
    fn by_subsets(problem: &Problem) -> i64 {
        let b = problem.buffers();
        let n = b.len();
        let mut separated = vec![vec![false; n]; n];
        for g in problem.separations() {
            for &x in g {
                for &y in g {
                    separated[x as usize][y as usize] = x != y;
                }
            }
        }
        let colocated: Vec<bool> = (0..n)
            .map(|i| {
                problem
                    .colocations()
                    .iter()
                    .any(|g| g.contains(&(i as u32)))
            })
            .collect();
        let eligible = |i: usize| b[i].gaps.is_empty() && !colocated[i];
        let conflict = |i: usize, j: usize| {
            separated[i][j] || (b[i].lower < b[j].upper && b[j].lower < b[i].upper)
        };
        let mut best = 0;
        for mask in 0u32..(1 << n) {
            let members: Vec<usize> = (0..n).filter(|&i| mask >> i & 1 == 1).collect();
            if members.iter().all(|&i| eligible(i))
                && members
                    .iter()
                    .all(|&i| members.iter().all(|&j| i == j || conflict(i, j)))
            {
                best = best.max(members.iter().map(|&i| b[i].size).sum());
            }
        }
        best
    }

    /// With an unbounded budget the branch and bound finds the heaviest
    /// clique (every subset tried); with a tiny one, never more.
    #[test]
    fn finds_the_heaviest_clique_of_random_graphs() {
        let mut rng = Rng::new(5);
        let mut above_load = 0;
        for round in 0..3000 {
            let n = rng.below(1, 12) as usize;
            let buffers: Vec<Buffer> = (0..n)
                .map(|i| {
                    let lower = rng.below(0, 8);
                    let mut b = Buffer::new(
                        alloc::format!("{i}"),
                        lower,
                        lower + rng.below(1, 5),
                        rng.below(1, 20),
                    );
                    if rng.below(0, 8) == 0 && b.upper - b.lower >= 3 {
                        b.gaps.push(Gap {
                            lower: b.lower + 1,
                            upper: b.lower + 2,
                            window: None,
                        });
                    }
                    b
                })
                .collect();
            let mut problem = Problem::new(i64::MAX, buffers).unwrap();
            for _ in 0..rng.below(1, 4) {
                let group: Vec<usize> = (0..n).filter(|_| rng.below(0, 3) == 0).collect();
                let _ = problem.separate(&group);
            }
            if round % 4 == 0 && n >= 2 {
                let _ = problem.colocate(&[0, 1]);
            }
            let exact = by_subsets(&problem);
            let bound = conflict_bound(&problem, u64::MAX, (0, i64::MAX), None);
            if problem.separations().is_empty() {
                assert_eq!(bound, 0);
                continue;
            }
            assert_eq!(bound, exact, "round {round}");
            assert!(conflict_bound(&problem, 3, (0, i64::MAX), None) <= exact);
            // Rounds under a ceiling (any height at least the heaviest
            // clique's): never above it, and exact with budget enough.
            for ceiling in [exact, exact + 7, 2 * exact + 1] {
                for budget in [2, 5, 40] {
                    assert!(conflict_bound(&problem, budget, (0, ceiling), None) <= exact);
                }
                assert_eq!(
                    conflict_bound(&problem, u64::MAX, (0, ceiling), None),
                    exact
                );
            }
            // The buffers reported are a clique of the weight reported.
            let (weight, members) = heaviest_clique(&problem, u64::MAX, (0, i64::MAX), None);
            let b = problem.buffers();
            assert_eq!(members.iter().map(|&i| b[i].size).sum::<i64>(), weight);
            for &x in &members {
                for &y in &members {
                    let separated = problem
                        .separations()
                        .iter()
                        .any(|g| g.contains(&(x as u32)) && g.contains(&(y as u32)));
                    let together = b[x].lower < b[y].upper && b[y].lower < b[x].upper;
                    assert!(x == y || separated || together, "round {round}");
                }
            }
            // Above a known bound: the heaviest clique if heavier, else
            // the known bound.
            for known in [0, exact - 1, exact, exact + 5] {
                assert_eq!(
                    conflict_bound(&problem, u64::MAX, (known, i64::MAX), None),
                    exact.max(known)
                );
            }
            above_load += usize::from(bound > crate::model::load::max_load(&problem));
        }
        assert!(
            above_load > 100,
            "only {above_load} bounds above the max load"
        );
    }
}
