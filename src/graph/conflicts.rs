//! The conflict graph the exact search on a graph (`graph`), the growing
//! parts (`grow`) and the walks (`walk`) share: which buffers conflict
//! (some live piece of one meets some live piece of the other in time;
//! without windows a piece holds the whole buffer), and the cliques the
//! search's bound checks at every node (see `graph`'s pruning).

use alloc::vec;
use alloc::vec::Vec;

use crate::base::bits::ones;
use crate::model::problem::Problem;

/// Graphs up to this many buffers keep every maximal clique for the
/// search's bound (as many as [`MAX_ENUMERATED`]); larger ones keep the
/// time's cliques and a greedy one around each buffer, as the graph
/// search's turn pays a node as one whatever it scans (a part's search
/// is charged what its nodes weigh, see [`Graph::with_every_clique`]).
const ENUMERATED_UP_TO: usize = 64;

/// At most this many maximal cliques are kept: a node of the search
/// scans each.
const MAX_ENUMERATED: usize = 1024;

/// The conflict graph and the cliques the bound uses.
pub(crate) struct Graph {
    pub(crate) words: usize,
    adjacent: Vec<u64>,
    pub(crate) neighbours: Vec<Vec<u32>>,
    pub(crate) size: Vec<i64>,
    pub(crate) align: Vec<i64>,
    /// Cliques as bit sets (`words` each), and the cliques of each buffer.
    pub(crate) cliques: Vec<u64>,
    pub(crate) cliques_of: Vec<Vec<u32>>,
    /// What enumerating its maximal cliques weighed (0 where it was not
    /// done), in the units of [`Graph::node_weight`].
    pub(crate) making: u64,
}

impl Graph {
    /// The graph of `problem` (which the search applies to).
    pub(crate) fn new(problem: &Problem) -> Graph {
        Graph::build(problem, problem.len() <= ENUMERATED_UP_TO)
    }

    /// [`Graph::new`] keeping every maximal clique (up to
    /// [`MAX_ENUMERATED`]) whatever the number of buffers: for the growing
    /// parts, whose turn is charged the work its nodes do.
    pub(crate) fn with_every_clique(problem: &Problem) -> Graph {
        Graph::build(problem, true)
    }

    fn build(problem: &Problem, every_clique: bool) -> Graph {
        let buffers = problem.buffers();
        let n = buffers.len();
        let words = n.div_ceil(64).max(1);
        // Live pieces by start, swept: each piece meets those still open.
        let mut pieces: Vec<(i64, i64, u32)> = Vec::new();
        for (i, b) in buffers.iter().enumerate() {
            for p in b.pieces() {
                pieces.push((p.lower, p.upper, i as u32));
            }
        }
        pieces.sort_unstable();
        let mut adjacent = vec![0u64; n * words];
        let mut open: Vec<(i64, u32)> = Vec::new();
        // The buffers alive as a piece starts form a clique; it is maximal
        // in time when a piece ends before the next one starts (else the
        // next set holds it).
        let mut time_cliques: Vec<Vec<u32>> = Vec::new();
        let mut pending: Option<Vec<u32>> = None;
        for &(lower, upper, i) in &pieces {
            let before = open.len();
            open.retain(|&(end, _)| end > lower);
            if open.len() < before {
                time_cliques.extend(pending.take());
            }
            for &(_, j) in &open {
                if j != i {
                    let (a, b) = (i as usize, j as usize);
                    adjacent[a * words + b / 64] |= 1 << (b % 64);
                    adjacent[b * words + a / 64] |= 1 << (a % 64);
                }
            }
            open.push((upper, i));
            pending = Some(open.iter().map(|&(_, j)| j).collect());
        }
        time_cliques.extend(pending);
        let neighbours: Vec<Vec<u32>> = (0..n)
            .map(|a| {
                ones(&adjacent[a * words..(a + 1) * words])
                    .map(|b| b as u32)
                    .collect()
            })
            .collect();
        let size: Vec<i64> = buffers.iter().map(|b| b.size).collect();
        let align: Vec<i64> = buffers.iter().map(|b| b.alignment).collect();
        let mut graph = Graph {
            words,
            adjacent,
            neighbours,
            size,
            align,
            cliques: Vec::new(),
            cliques_of: vec![Vec::new(); n],
            making: 0,
        };
        for mut members in time_cliques {
            if members.len() > 1 {
                members.sort_unstable();
                graph.keep(&members);
            }
        }
        for v in 0..n {
            let members = graph.greedy_clique(v);
            if members.len() > 1 {
                graph.keep(&members);
            }
        }
        // Small graphs keep every maximal clique (up to a cap): a node's
        // check then sees every clique there is, where the time's and the
        // greedy ones miss those a part's proof turns on.
        if every_clique {
            let (cliques, work) = maximal_cliques(&graph.adjacent, words, n, MAX_ENUMERATED);
            graph.making += work / 8;
            for members in cliques {
                if members.len() > 1 {
                    graph.keep(&members);
                }
            }
        }
        graph
    }

    /// What a node of the search weighs for the deadline's poll: it
    /// scans every buffer and clique.
    pub(crate) fn node_weight(&self) -> u64 {
        (self.size.len() + self.cliques.len() / self.words) as u64 / 8 + 1
    }

    /// The highest top of a placement at `offsets`.
    pub(crate) fn height(&self, offsets: &[i64]) -> i64 {
        (offsets.iter().zip(&self.size))
            .map(|(&o, &s)| o + s)
            .max()
            .unwrap_or(0)
    }

    /// Whether `a` and `b` conflict.
    pub(crate) fn adjacent(&self, a: usize, b: usize) -> bool {
        self.adjacent[a * self.words + b / 64] >> (b % 64) & 1 == 1
    }

    /// A clique holding `v`: its neighbours, heaviest first, each kept when
    /// it conflicts with all kept so far.
    fn greedy_clique(&self, v: usize) -> Vec<u32> {
        let mut order = self.neighbours[v].clone();
        order.sort_unstable_by_key(|&u| (core::cmp::Reverse(self.size[u as usize]), u));
        let mut members = vec![v as u32];
        for u in order {
            if members
                .iter()
                .all(|&m| self.adjacent(m as usize, u as usize))
            {
                members.push(u);
            }
        }
        members.sort_unstable();
        members
    }

    /// Keeps a clique for the bound, unless the same set is kept already.
    fn keep(&mut self, members: &[u32]) {
        let mut bits = vec![0u64; self.words];
        for &m in members {
            bits[m as usize / 64] |= 1 << (m % 64);
        }
        let k = self.cliques.len() / self.words;
        let first = members[0] as usize;
        let seen = self.cliques_of[first]
            .iter()
            .any(|&c| self.clique(c as usize) == &bits[..]);
        if seen {
            return;
        }
        self.cliques.extend_from_slice(&bits);
        for &m in members {
            self.cliques_of[m as usize].push(k as u32);
        }
    }

    /// The heaviest of the cliques kept (increasing; empty if none).
    pub(crate) fn heaviest_kept_clique(&self) -> Vec<usize> {
        let k = self.cliques.len() / self.words;
        let weight = |c: usize| ones(self.clique(c)).map(|m| self.size[m]).sum::<i64>();
        (0..k)
            .max_by_key(|&c| (weight(c), core::cmp::Reverse(c)))
            .map_or_else(Vec::new, |c| ones(self.clique(c)).collect())
    }

    pub(crate) fn clique(&self, k: usize) -> &[u64] {
        &self.cliques[k * self.words..(k + 1) * self.words]
    }
}

/// The maximal cliques of the graph whose rows are `adjacent` (`words`
/// words a vertex, `n` vertices), at most `cap` of them, each increasing,
/// and the work done (a word scanned, a unit).
fn maximal_cliques(adjacent: &[u64], words: usize, n: usize, cap: usize) -> (Vec<Vec<u32>>, u64) {
    let mut all = vec![0u64; words];
    for v in 0..n {
        all[v / 64] |= 1 << (v % 64);
    }
    let mut enumeration = Enumeration {
        adjacent,
        words,
        cap,
        members: Vec::new(),
        out: Vec::new(),
        work: 0,
    };
    enumeration.extend(all, vec![0u64; words]);
    (enumeration.out, enumeration.work)
}

/// Bron-Kerbosch with a pivot: the clique `members` grows by candidates
/// that conflict with all of it; a branch skips the pivot's neighbours
/// (a maximal clique holding one of them holds the pivot or a
/// non-neighbour of it, so another branch meets it); the clique is
/// maximal when no candidate is left and no vertex tried before it (the
/// excluded) could extend it.
struct Enumeration<'a> {
    adjacent: &'a [u64],
    words: usize,
    cap: usize,
    members: Vec<u32>,
    out: Vec<Vec<u32>>,
    work: u64,
}

impl Enumeration<'_> {
    fn row(&self, v: usize) -> &[u64] {
        &self.adjacent[v * self.words..(v + 1) * self.words]
    }

    fn extend(&mut self, mut candidates: Vec<u64>, mut excluded: Vec<u64>) {
        if self.out.len() >= self.cap {
            return;
        }
        if candidates.iter().all(|&w| w == 0) {
            if excluded.iter().all(|&w| w == 0) {
                let mut clique = self.members.clone();
                clique.sort_unstable();
                self.out.push(clique);
            }
            return;
        }
        // The pivot: of the candidates and the excluded, the one next to
        // the most candidates (its neighbours are the branches skipped).
        let union: Vec<u64> = candidates
            .iter()
            .zip(&excluded)
            .map(|(a, b)| a | b)
            .collect();
        let common = |v: usize| -> u32 {
            (self.row(v).iter().zip(&candidates))
                .map(|(a, b)| (a & b).count_ones())
                .sum()
        };
        let pivot = ones(&union).max_by_key(|&v| common(v)).unwrap_or(0);
        self.work += (ones(&union).count() * self.words) as u64 + 1;
        let branches: Vec<u64> = (candidates.iter().zip(self.row(pivot)))
            .map(|(c, p)| c & !p)
            .collect();
        for v in ones(&branches) {
            let within = |set: &[u64]| -> Vec<u64> {
                set.iter().zip(self.row(v)).map(|(a, b)| a & b).collect()
            };
            let (next, next_excluded) = (within(&candidates), within(&excluded));
            self.members.push(v as u32);
            self.extend(next, next_excluded);
            self.members.pop();
            candidates[v / 64] &= !(1 << (v % 64));
            excluded[v / 64] |= 1 << (v % 64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::rng::Rng;

    /// On 3,000 random graphs of 1-14 vertices (densities 10-90%, one or
    /// two words a row), the enumeration gives exactly the maximal cliques
    /// that trying every set of vertices finds, each once; with a cap it
    /// gives that many of them.
    #[test]
    fn every_maximal_clique_is_enumerated_once() {
        let mut rng = Rng::new(0xc11c);
        let mut cliques = 0;
        for i in 0..3_000 {
            let n = rng.below(1, 15) as usize;
            // Half with two words a row (the second empty): the
            // enumeration walks every word.
            let words = 1 + i % 2;
            let density = rng.below(10, 91);
            let mut adjacent = vec![0u64; n * words];
            for a in 0..n {
                for b in a + 1..n {
                    if rng.below(0, 100) < density {
                        adjacent[a * words + b / 64] |= 1 << (b % 64);
                        adjacent[b * words + a / 64] |= 1 << (a % 64);
                    }
                }
            }
            let conflict = |a: usize, b: usize| adjacent[a * words] >> b & 1 == 1;
            let is_clique = |set: u32| {
                (0..n).all(|a| {
                    set >> a & 1 == 0 || (a + 1..n).all(|b| set >> b & 1 == 0 || conflict(a, b))
                })
            };
            let mut expected: Vec<Vec<u32>> = (1u32..1 << n)
                .filter(|&set| is_clique(set))
                .filter(|&set| (0..n).all(|v| set >> v & 1 == 1 || !is_clique(set | 1 << v)))
                .map(|set| (0..n as u32).filter(|&v| set >> v & 1 == 1).collect())
                .collect();
            let (mut found, _) = maximal_cliques(&adjacent, words, n, usize::MAX);
            found.sort();
            expected.sort();
            assert_eq!(found, expected, "graph {i}");
            cliques += found.len();
            let cap = expected.len() / 2;
            let (capped, _) = maximal_cliques(&adjacent, words, n, cap);
            assert_eq!(capped.len(), cap, "graph {i}");
            assert!(capped.iter().all(|c| expected.contains(c)), "graph {i}");
        }
        assert!(cliques > 10_000, "{cliques}");
    }
}
