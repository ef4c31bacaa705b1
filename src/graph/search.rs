//! The exact search on a conflict graph, for small problems whose
//! buffers have gaps but no windows: above all the lowering of a kernel's
//! separations, where each separation is a moment after every lifetime
//! and the sweep's sections, thousands of moments wide, say little.
//!
//! Two buffers conflict when some live piece of one overlaps some live
//! piece of the other in time; without windows a piece holds the whole
//! buffer, so a placement is valid exactly when conflicting buffers take
//! disjoint bytes, and the problem is a graph's: no time is left in it.
//!
//! Completeness. Take any placement below the capacity and push buffers
//! down one at a time while one can move (each move lowers an offset, so
//! this ends): every free buffer then sits at its lowest aligned offset
//! given the others, and what blocks each lower offset is a neighbour
//! below it (one above cannot reach down past its own bottom). Ordered by
//! offset (ties by index), each buffer's lowest feasible offset given the
//! buffers before it (and the fixed ones) is its offset there. So the
//! search, which places the buffers one by one at that lowest offset,
//! never lower than the one before (ties by index), finds every such
//! placement; a capacity nothing fits is proven so when the tree is done.
//!
//! Pruning, each sound for that order: a buffer whose lowest offset ends
//! at or below the last one used can never come (nothing placed later
//! reaches that low), so the branch is dead; a buffer with no offset left
//! below the capacity ends it; and for every clique the graph keeps (see
//! `conflicts`: the buffers alive at one time, a greedy heavy clique
//! around each buffer, every maximal clique of a small graph), and for
//! every place `t` some unplaced member can still take first (at or above the last offset, and at or above its
//! own lowest offset: its release), what the unplaced members released
//! at or above `t` weigh plus what its placed members hold above `t` must
//! fit between `t` and the capacity. And a node whose state (see
//! `failed`: what is unplaced, where each can go lowest, which wait) some
//! earlier node searched to the end without a placement is dead: dense
//! graphs reach one state by many arrangements of the buffers below it.

use alloc::vec;
use alloc::vec::Vec;

use super::conflicts::Graph;
use super::failed::{self, Failed};
use crate::base::bits::ones;
use crate::base::math::align_up;
use crate::base::rng::Rng;
use crate::deadline::{Poll, Stop};
use crate::model::problem::Problem;

/// Problems up to this many buffers are searched on their graph.
pub(crate) const MAX_BUFFERS: usize = 512;

const UNPLACED: i64 = i64::MIN;

/// Whether the graph search applies: few enough buffers, none with a
/// window (then a piece holds the whole buffer and conflicts are pairs).
pub(crate) fn applies(problem: &Problem) -> bool {
    problem.len() <= MAX_BUFFERS && !problem.has_windows()
}

/// The search's state: offsets, each unplaced buffer's lowest feasible
/// offset, what each clique's unplaced members weigh, and the logs that
/// undo a placement.
struct Search<'a> {
    graph: &'a Graph,
    capacity: i64,
    offset: Vec<i64>,
    lowest: Vec<i64>,
    unplaced_weight: Vec<i64>,
    /// (buffer, its lowest offset before) per change, and where each
    /// depth's changes start.
    undo: Vec<(u32, i64)>,
    /// Placed buffers, in order; the fixed ones first.
    placed: Vec<u32>,
    /// Candidates of every open depth, one after the other.
    candidates: Vec<u32>,
    nodes: u64,
    backtracks: u64,
    /// What a node weighs for the deadline's poll.
    weight: u64,
    /// Which candidate comes first among those of one lowest offset: the
    /// larger, or with a `seed`, the larger by sizes shaken by a factor
    /// between 1/2 and 3/2 (turns that end in their node budget differ so).
    rank: Vec<u32>,
    /// Each buffer's fixed neighbours: the only placed buffers that can
    /// block it above a lowest offset (see [`Search::lowest_from`]).
    fixed_neighbours: Vec<Vec<u32>>,
    /// Scratch of the clique check: the unplaced members' (release,
    /// size), the placed members' (offset, top).
    releases: Vec<(i64, i64)>,
    held: Vec<(i64, i64)>,
    /// The unplaced buffers' part of the state's key (see `failed`).
    key: u128,
    /// The states searched to the end without a placement.
    failed: &'a mut Failed,
}

/// One open depth of the search: its candidates in `Search::candidates`
/// from `start` (the next to try at `next`), and where its undo log began.
struct Frame {
    start: usize,
    next: usize,
    undo: usize,
    /// The key of the state this depth's candidates start from (0 at the
    /// root, which is never met again).
    key: u128,
}

/// How a search on the graph ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// An offset per buffer.
    Found(Vec<i64>),
    /// Proven: nothing fits.
    Infeasible,
    /// The node limit ran out.
    NodeLimit,
    /// The deadline passed or the search was cancelled.
    Stopped(Stop),
}

/// What a search did: how it ended, its nodes and its backtracks.
pub(crate) struct Searched {
    pub(crate) end: End,
    pub(crate) nodes: u64,
    pub(crate) backtracks: u64,
}

/// A problem with its conflict graph: what the graph's searches take.
#[derive(Clone, Copy)]
pub(crate) struct OnGraph<'a> {
    pub(crate) problem: &'a Problem,
    pub(crate) graph: &'a Graph,
}

/// How far one search may go: its node limit (`None`: none) and the seed
/// of its order.
#[derive(Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) nodes: Option<u64>,
    pub(crate) seed: u64,
}

/// Searches `on.problem` at `capacity`; see the module. `failed` holds
/// the states earlier searches of the same problem exhausted (see
/// `failed`), and gains this one's.
pub(crate) fn search(
    on: OnGraph<'_>,
    capacity: i64,
    limits: Limits,
    failed: &mut Failed,
    poll: &mut Poll<'_>,
) -> Searched {
    let OnGraph { problem, graph } = on;
    let Limits {
        nodes: node_limit,
        seed,
    } = limits;
    failed.at(capacity);
    let ended = |end: End| Searched {
        end,
        nodes: 0,
        backtracks: 0,
    };
    let n = problem.len();
    let k = graph.cliques.len() / graph.words;
    let mut search = Search {
        graph,
        capacity,
        offset: vec![UNPLACED; n],
        lowest: vec![0; n],
        unplaced_weight: vec![0; k],
        undo: Vec::new(),
        placed: Vec::with_capacity(n),
        candidates: Vec::new(),
        weight: graph.node_weight(),
        rank: ranks(&graph.size, seed),
        fixed_neighbours: vec![Vec::new(); n],
        releases: Vec::with_capacity(n),
        held: Vec::with_capacity(n),
        key: 0,
        failed,
        nodes: 0,
        backtracks: 0,
    };
    for (c, weight) in search.unplaced_weight.iter_mut().enumerate() {
        *weight = ones(graph.clique(c)).map(|m| graph.size[m]).sum();
    }
    // The fixed buffers are placed from the start.
    for (i, b) in problem.buffers().iter().enumerate() {
        if let Some(f) = b.offset {
            let clash = graph.neighbours[i].iter().any(|&j| {
                let o = search.offset[j as usize];
                o != UNPLACED && o < f + b.size && f < o + graph.size[j as usize]
            });
            if clash || f + b.size > capacity {
                return ended(End::Infeasible);
            }
            search.offset[i] = f;
            search.placed.push(i as u32);
            for &c in &graph.cliques_of[i] {
                search.unplaced_weight[c as usize] -= b.size;
            }
        }
    }
    for v in 0..n {
        let fixed = graph.neighbours[v].iter().copied();
        let fixed = fixed.filter(|&u| search.offset[u as usize] != UNPLACED);
        search.fixed_neighbours[v].extend(fixed);
    }
    for v in 0..n {
        if search.offset[v] == UNPLACED {
            match search.lowest_from(v, 0) {
                Some(o) => search.lowest[v] = o,
                None => return ended(End::Infeasible),
            }
            search.key ^= failed::part(v, search.lowest[v]);
        }
    }
    let fixed = search.placed.len();
    let end = search.run(fixed, node_limit, poll);
    Searched {
        nodes: search.nodes,
        backtracks: search.backtracks,
        end: end.unwrap_or_else(|| End::Found(core::mem::take(&mut search.offset))),
    }
}

/// Each buffer's rank: by decreasing size, shaken when `seed` is not 0.
fn ranks(size: &[i64], seed: u64) -> Vec<u32> {
    let mut rng = Rng::new(seed);
    let key: Vec<i64> = size
        .iter()
        .map(|&s| match seed {
            0 => s,
            // A factor of (64 + x) / 128, x uniform in 0..128.
            _ => (s as i128 * (64 + rng.below(0, 128)) as i128 / 128).max(1) as i64,
        })
        .collect();
    let mut order: Vec<u32> = (0..size.len() as u32).collect();
    order.sort_unstable_by_key(|&u| (core::cmp::Reverse(key[u as usize]), u));
    let mut rank = vec![0u32; size.len()];
    for (r, &u) in order.iter().enumerate() {
        rank[u as usize] = r as u32;
    }
    rank
}

impl Search<'_> {
    /// The lowest aligned offset at or above `from` where `v` meets no
    /// placed neighbour and ends within the capacity.
    ///
    /// Only the fixed neighbours are looked at, because no other placed
    /// neighbour can block there. Before any free buffer is placed, only
    /// the fixed ones are. After, `from` is the top of the buffer just
    /// placed, at the floor, and the placed free neighbours sit at or
    /// below the floor (the order places upwards) with their tops at or
    /// below `v`'s lowest offset so far, which is below `from` (else it
    /// would not be raised): as each was placed, `v`'s lowest offset was
    /// raised past its top, or was above it already, or lay wholly below
    /// it, and then [`Search::open`] ended the branch at once.
    fn lowest_from(&self, v: usize, from: i64) -> Option<i64> {
        let (size, align) = (self.graph.size[v], self.graph.align[v]);
        let mut at = align_up(from.max(0), align);
        loop {
            if at.checked_add(size)? > self.capacity {
                return None;
            }
            let blocker = self.fixed_neighbours[v].iter().find_map(|&u| {
                let o = self.offset[u as usize];
                let top = o.wrapping_add(self.graph.size[u as usize]);
                (o != UNPLACED && o < at + size && at < top).then_some(top)
            });
            match blocker {
                Some(top) => at = align_up(top, align),
                None => return Some(at),
            }
        }
    }

    /// The depth-first search over which buffer comes next; `None` when a
    /// placement is found (in `offset`), else how it ended.
    fn run(&mut self, fixed: usize, node_limit: Option<u64>, poll: &mut Poll<'_>) -> Option<End> {
        let n = self.offset.len();
        let mut frames: Vec<Frame> = Vec::with_capacity(n + 1);
        self.nodes += 1;
        let root_start = self.candidates.len();
        if self.open(i64::MIN, u32::MAX).is_none() {
            return Some(End::Infeasible);
        }
        if self.placed.len() == n {
            return None;
        }
        frames.push(Frame {
            start: root_start,
            next: root_start,
            undo: self.undo.len(),
            key: 0,
        });
        while !frames.is_empty() {
            // A node scans every buffer and clique: it weighs that much.
            if let Err(stop) = poll.tick(self.weight) {
                return Some(End::Stopped(stop));
            }
            if node_limit.is_some_and(|l| self.nodes >= l) {
                return Some(End::NodeLimit);
            }
            let depth = frames.len();
            // The child of this depth tried last is still placed: undo it.
            if self.placed.len() > fixed + depth - 1 {
                self.unplace(frames[depth - 1].undo);
            }
            let frame = &mut frames[depth - 1];
            // The deepest frame's candidates run to the end of the list.
            if frame.next >= self.candidates.len() {
                // Searched to the end: the state has no completion.
                self.failed.insert(frame.key);
                self.candidates.truncate(frame.start);
                frames.pop();
                self.backtracks += 1;
                continue;
            }
            let v = self.candidates[frame.next] as usize;
            frame.next += 1;
            frame.undo = self.undo.len();
            self.nodes += 1;
            let start = self.candidates.len();
            let opened = match self.place(v) {
                true => self.open(self.offset[v], v as u32),
                false => None,
            };
            if let Some(key) = opened {
                if self.placed.len() == n {
                    return None;
                }
                frames.push(Frame {
                    start,
                    next: start,
                    undo: self.undo.len(),
                    key,
                });
            } else {
                self.candidates.truncate(start);
            }
        }
        Some(End::Infeasible)
    }

    /// Places `v` at its lowest offset and raises its neighbours' lowest
    /// offsets past it; false when one of them has none left.
    fn place(&mut self, v: usize) -> bool {
        let at = self.lowest[v];
        let top = at + self.graph.size[v];
        self.offset[v] = at;
        self.placed.push(v as u32);
        self.key ^= failed::part(v, at);
        for &c in &self.graph.cliques_of[v] {
            self.unplaced_weight[c as usize] -= self.graph.size[v];
        }
        for k in 0..self.graph.neighbours[v].len() {
            let u = self.graph.neighbours[v][k] as usize;
            if self.offset[u] != UNPLACED {
                continue;
            }
            let low = self.lowest[u];
            if low < top && at < low + self.graph.size[u] {
                self.undo.push((u as u32, low));
                match self.lowest_from(u, top) {
                    Some(o) => {
                        self.key ^= failed::part(u, low) ^ failed::part(u, o);
                        self.lowest[u] = o;
                    }
                    None => return false,
                }
            }
        }
        true
    }

    /// Undoes the last placement, back to undo log length `mark`.
    fn unplace(&mut self, mark: usize) {
        while self.undo.len() > mark {
            let (u, low) = self.undo.pop().expect("logged");
            let u = u as usize;
            self.key ^= failed::part(u, self.lowest[u]) ^ failed::part(u, low);
            self.lowest[u] = low;
        }
        let v = self.placed.pop().expect("placed") as usize;
        self.key ^= failed::part(v, self.offset[v]);
        for &c in &self.graph.cliques_of[v] {
            self.unplaced_weight[c as usize] += self.graph.size[v];
        }
        self.offset[v] = UNPLACED;
    }

    /// After a placement at `floor` (buffer `last`): checks the bounds and
    /// pushes the candidates for the next buffer, best first; the state's
    /// key, or `None` when the branch is dead.
    fn open(&mut self, floor: i64, last: u32) -> Option<u128> {
        let n = self.offset.len();
        let start = self.candidates.len();
        // The state's key: the unplaced buffers at their lowest offsets,
        // and which of them wait below the floor (see `failed`).
        let mut key = self.key;
        for u in 0..n {
            if self.offset[u] != UNPLACED {
                continue;
            }
            let low = self.lowest[u];
            if floor != i64::MIN && low + self.graph.size[u] <= floor {
                self.candidates.truncate(start);
                return None; // it can never come: its hole stays open
            }
            if floor == i64::MIN || low > floor || (low == floor && u as u32 > last) {
                self.candidates.push(u as u32);
            } else {
                key ^= failed::waiting(u);
            }
        }
        let dead = floor != i64::MIN && (self.failed.contains(key) || !self.cliques_fit(floor));
        if dead || (self.candidates.len() == start && self.placed.len() < n) {
            self.candidates.truncate(start);
            return None;
        }
        let (lowest, rank) = (&self.lowest, &self.rank);
        self.candidates[start..].sort_unstable_by_key(|&u| (lowest[u as usize], rank[u as usize]));
        Some(key)
    }

    /// Whether every kept clique fits below the capacity: each unplaced
    /// member goes at or above both `floor` and its own lowest offset (the
    /// order places upwards, and a lowest offset only rises), its release;
    /// so for any threshold `t`, the unplaced members released at or above
    /// `t` lie wholly in `[t, capacity)`, beside what the placed members
    /// hold there, all disjoint. Checked at every release (the least of
    /// them alone lets a branch live whose late members cannot fit above
    /// their releases).
    fn cliques_fit(&mut self, floor: i64) -> bool {
        let k = self.unplaced_weight.len();
        let graph = self.graph;
        let capacity = self.capacity;
        let (mut releases, mut held) = (
            core::mem::take(&mut self.releases),
            core::mem::take(&mut self.held),
        );
        let fits = (0..k).all(|c| {
            if self.unplaced_weight[c] == 0 {
                return true;
            }
            releases.clear();
            held.clear();
            for m in ones(graph.clique(c)) {
                match self.offset[m] {
                    UNPLACED => releases.push((self.lowest[m].max(floor), graph.size[m])),
                    o => held.push((o, (o + graph.size[m]).min(capacity))),
                }
            }
            // Latest release first: the weight released at or above each.
            releases.sort_unstable_by_key(|&(r, _)| core::cmp::Reverse(r));
            let mut weight = 0i64;
            for (i, &(t, w)) in releases.iter().enumerate() {
                weight += w;
                if releases.get(i + 1).is_some_and(|&(next, _)| next == t) {
                    continue; // the threshold's weight is not all counted yet
                }
                let above: i64 = held.iter().map(|&(o, top)| (top - o.max(t)).max(0)).sum();
                if weight + above > capacity - t {
                    return false;
                }
            }
            true
        });
        (self.releases, self.held) = (releases, held);
        fits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::rng::Rng;
    use crate::deadline::Deadline;
    use crate::exact::testing::{fits, gapped};
    use crate::exact::{solve, Params, Verdict};

    /// On 20,000 random problems with gaps, the conflict graph's search
    /// alone (no node limit) agrees with the sweep's search on whether
    /// anything fits, and each placement it gives is valid. The sweep's
    /// search is checked against brute force elsewhere (tests/exactness.rs).
    ///
    /// The exhausted states it keeps (`failed`) are shared as the planner's
    /// rounds share them: on every other problem a full search at a
    /// higher capacity comes first; then a search cut short by a node limit
    /// with another order, and the full one at the capacity; then, on the
    /// problems that began higher, the higher capacity again (what was
    /// exhausted at the lower one must not count there). Every full search
    /// is checked. The test counts the nodes the table ended, so that it
    /// is seen to prune.
    #[test]
    fn the_graph_search_agrees_with_the_sweep_search() {
        let mut rng = Rng::new(0x9a4f);
        let deadline = Deadline::new(None, None, None);
        let (mut solved, mut infeasible, mut hits) = (0, 0, 0u64);
        for i in 0..20_000 {
            let problem = gapped(&mut rng);
            assert!(applies(&problem));
            let graph = Graph::new(&problem);
            let mut poll = Poll::new(&deadline, 1 << 16);
            let capacity = problem.capacity();
            let higher = capacity + graph.size.iter().max().unwrap_or(&0) / 2;
            let mut failed = Failed::new();
            let seed = i as u64 % 3;
            let cut = Limits {
                nodes: Some(rng.below(1, 40) as u64),
                seed: seed + 1,
            };
            let full = Limits { nodes: None, seed };
            let order: &[(i64, Limits)] = match i % 2 {
                0 => &[
                    (higher, full),
                    (capacity, cut),
                    (capacity, full),
                    (higher, full),
                ],
                _ => &[(capacity, cut), (capacity, full)],
            };
            for &(at, limits) in order {
                let on = OnGraph {
                    problem: &problem,
                    graph: &graph,
                };
                let searched = search(on, at, limits, &mut failed, &mut poll);
                if limits.nodes.is_some() {
                    continue;
                }
                let (sweep, _) = solve(&problem, at, &Params::default(), &deadline);
                match (&searched.end, &sweep) {
                    (End::Found(offsets), Verdict::Solved(_)) => {
                        let at_capacity = problem.with_capacity(at).expect("higher");
                        assert!(fits(&at_capacity, offsets, at), "instance {i}: {offsets:?}");
                        solved += 1;
                    }
                    (End::Infeasible, Verdict::Infeasible) => infeasible += 1,
                    (a, b) => panic!("instance {i} at {at}: graph {a:?}, sweep {b:?}\n{problem:?}"),
                }
            }
            hits += failed.hits;
        }
        assert!(
            solved > 5_000 && infeasible > 2_000 && hits > 1_000,
            "{solved} solved, {infeasible} not, {hits} nodes ended by the table"
        );
    }
}
