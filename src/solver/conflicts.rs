//! The conflict graph the exact search on a graph (`graph`), the growing
//! parts (`grow`) and the walks (`walk`) share: which buffers conflict
//! (some live piece of one meets some live piece of the other in time;
//! without windows a piece holds the whole buffer), and the cliques the
//! search's bound checks at every node (see `graph`'s pruning).

use alloc::vec;
use alloc::vec::Vec;

use crate::bits::ones;
use crate::model::problem::Problem;

/// The conflict graph and the cliques the bound uses.
pub(crate) struct Graph {
    pub(super) words: usize,
    adjacent: Vec<u64>,
    pub(super) neighbours: Vec<Vec<u32>>,
    pub(super) size: Vec<i64>,
    pub(super) align: Vec<i64>,
    /// Cliques as bit sets (`words` each), and the cliques of each buffer.
    pub(super) cliques: Vec<u64>,
    pub(super) cliques_of: Vec<Vec<u32>>,
}

impl Graph {
    /// The graph of `problem` (which the search applies to).
    pub(crate) fn new(problem: &Problem) -> Graph {
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
        graph
    }

    /// What a node of the search weighs for the deadline's poll: it
    /// scans every buffer and clique.
    pub(super) fn node_weight(&self) -> u64 {
        (self.size.len() + self.cliques.len() / self.words) as u64 / 8 + 1
    }

    /// Whether `a` and `b` conflict.
    pub(super) fn adjacent(&self, a: usize, b: usize) -> bool {
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
    pub(super) fn heaviest_kept_clique(&self) -> Vec<usize> {
        let k = self.cliques.len() / self.words;
        let weight = |c: usize| ones(self.clique(c)).map(|m| self.size[m]).sum::<i64>();
        (0..k)
            .max_by_key(|&c| (weight(c), core::cmp::Reverse(c)))
            .map_or_else(Vec::new, |c| ones(self.clique(c)).collect())
    }

    pub(super) fn clique(&self, k: usize) -> &[u64] {
        &self.cliques[k * self.words..(k + 1) * self.words]
    }
}
