//! A tabu search over offsets at a fixed capacity, on the conflict graph:
//! the interval form of the tabu search that colours graphs (a colour per
//! vertex, conflicts counted and driven to none), where the walk over
//! orders (`walk.rs`) searches the orders a first-fit decoding reads.
//!
//! Every free buffer holds an aligned offset from 0 to the capacity less
//! its size, so every state fits the capacity; what a state costs is the
//! bytes conflicting buffers share, summed over the pairs, and a state
//! that costs nothing is a placement. A step moves one buffer that shares
//! bytes to the offset where it shares the fewest, the best such move
//! among the buffers in conflict (a sample of them when many are), even
//! when it costs more than staying. A buffer that moved may not go back
//! over the bytes it left for a while (its tenure: a random few steps
//! plus a share of the buffers in conflict, the colouring search's rule),
//! unless the move reaches a state cheaper than any seen, which is what
//! lets the search leave a local minimum without cycling back into it.
//! Each pair's bytes are weighed: when no move weighed lowers the cost,
//! every pair that shares bytes weighs one more (the breakout method), so
//! the conflicts a local minimum keeps grow until leaving it pays (without
//! the weights it wandered on plateaus of moves that change nothing,
//! measured).
//!
//! Where a buffer may go: the bytes it shares with one neighbour, as its
//! offset rises, are 0, then grow, stay, fall and are 0 again, so their
//! sum over its neighbours is piecewise linear, and least at 0, at the
//! top, or where it stops sharing with a neighbour: just below one (its
//! offset rounded down to the alignment) or just above one (rounded up).
//! For a buffer of size `s`, a neighbour's bytes change slope by its
//! weight at four places whatever the two sizes: up a size below its
//! bottom, down at its bottom, down a size below its top, up at its top.
//! Every buffer is kept in two orders, by bottom and by top, so a
//! buffer's neighbours come out of them sorted, and the places are
//! weighed in one merge of those four streams, with no sort per step
//! (sorting them took half the search's time).
//!
//! The search proves nothing, and is complete in no sense: the exact
//! turns still decide. Its state lasts across turns. Nothing is allocated
//! per step.

use alloc::vec;
use alloc::vec::Vec;

use crate::base::math::{align_down, align_up};
use crate::base::rng::Rng;
use crate::deadline::{Poll, Stop};
use crate::graph::conflicts::Graph;
use crate::model::problem::Problem;

/// At most this many buffers in conflict are weighed a step (a random
/// sample of them when more are), so a step costs a bounded number of
/// sweeps whatever the state, and a move the sample cannot improve raises
/// the weights at once. Measured on 40 half-separated kernels aimed at
/// their heaviest clique, a second each (with the sweep's sort): 1, 2, 3,
/// 6 and 12 found 3, 13, 13, 9 and 5 placements (every buffer in conflict
/// weighed until one improves: 9).
const SAMPLE: usize = 3;

/// How a turn ended.
pub(crate) enum Searched {
    /// An offset per buffer, below the capacity with no bytes shared.
    Found(Vec<i64>),
    /// The turn's work ran out.
    Spent,
    /// The search cannot run at this capacity (fixed buffers clash, or
    /// one buffer is larger than the capacity).
    Never,
    Stopped(Stop),
}

/// The search's state between turns.
pub(crate) struct Tabu {
    capacity: i64,
    offset: Vec<i64>,
    fixed: Vec<bool>,
    /// The bytes each buffer shares with its neighbours, each pair's
    /// weighed by its weight, and their sum over the pairs (half the sum
    /// of these).
    shared: Vec<i64>,
    /// Each pair's weight (n x n), raised by one for every pair that
    /// shares bytes whenever no move weighed lowers the total.
    weight: Vec<i64>,
    total: i64,
    /// The least total seen since the capacity was set.
    best: i64,
    /// Where each buffer was before its last move, and the step until
    /// which it may not overlap that place again.
    left_at: Vec<i64>,
    until: Vec<u64>,
    pub(crate) steps: u64,
    rng: Rng,
    /// Whether two fixed buffers share bytes (then nothing fits), and
    /// whether every buffer fits the capacity aimed at.
    clash: bool,
    runnable: bool,
    /// Every buffer as (offset, buffer) and as (top, buffer), each in
    /// increasing order: a buffer's neighbours come out of them sorted.
    by_bottom: Vec<(i64, u32)>,
    by_top: Vec<(i64, u32)>,
    /// Scratch: a buffer's neighbours' bottoms and tops in order, with
    /// the pair's weight; the buffers in conflict.
    lows: Vec<(i64, i64)>,
    highs: Vec<(i64, i64)>,
    /// Scratch: the slope changes (place, change) in order, the merges
    /// on the way there, and the places to weigh.
    slopes: Vec<(i64, i64)>,
    scratch: Vec<(i64, i64)>,
    changes: Vec<(i64, i64)>,
    places: Vec<(i64, i64)>,
    conflicted: Vec<u32>,
}

/// What weighing the places of a buffer with `neighbours` among `n`
/// buffers costs, in elements moved: both orders of every buffer scanned,
/// then a neighbour's four slope changes merged twice, its two places
/// once, and all six swept (about 24). (The walk's unit is a neighbour
/// scanned; measured, the two do about as many units a second, 55-70 and
/// 85 million, so a turn's work is shared by what each does.)
fn swept(n: usize, neighbours: usize) -> u64 {
    2 * n as u64 + 6 * 4 * neighbours as u64
}

/// Merges two sequences sorted by their first element into `out`.
fn merge(
    a: impl Iterator<Item = (i64, i64)>,
    b: impl Iterator<Item = (i64, i64)>,
    out: &mut Vec<(i64, i64)>,
) {
    out.clear();
    let (mut a, mut b) = (a.peekable(), b.peekable());
    loop {
        let take_a = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => x.0 <= y.0,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return,
        };
        out.extend(if take_a { a.next() } else { b.next() });
    }
}

/// The bytes `[a, a + s)` and `[b, b + t)` share.
fn shared_bytes(a: i64, s: i64, b: i64, t: i64) -> i64 {
    ((a + s).min(b + t) - a.max(b)).max(0)
}

impl Tabu {
    /// The search of `problem` at `capacity`, from every free buffer at 0.
    pub(crate) fn new(problem: &Problem, graph: &Graph, capacity: i64, seed: u64) -> Tabu {
        let n = problem.len();
        let mut offset = vec![0i64; n];
        let mut fixed = vec![false; n];
        for (i, b) in problem.buffers().iter().enumerate() {
            if let Some(f) = b.offset {
                offset[i] = f;
                fixed[i] = true;
            }
        }
        let mut clash = false;
        for i in (0..n).filter(|&i| fixed[i]) {
            for &j in &graph.neighbours[i] {
                let j = j as usize;
                if fixed[j] && shared_bytes(offset[i], graph.size[i], offset[j], graph.size[j]) > 0
                {
                    clash = true;
                }
            }
        }
        let mut tabu = Tabu {
            capacity,
            offset,
            fixed,
            shared: vec![0; n],
            weight: vec![1; n * n],
            total: 0,
            best: i64::MAX,
            left_at: vec![0; n],
            until: vec![0; n],
            steps: 0,
            rng: Rng::new(seed ^ 0x7AB0_5EA2),
            clash,
            runnable: false,
            by_bottom: Vec::with_capacity(n),
            by_top: Vec::with_capacity(n),
            lows: Vec::with_capacity(n),
            highs: Vec::with_capacity(n),
            slopes: Vec::with_capacity(4 * n),
            scratch: Vec::with_capacity(2 * n),
            changes: Vec::with_capacity(2 * n),
            places: Vec::with_capacity(2 * n),
            conflicted: Vec::with_capacity(n),
        };
        tabu.retarget(graph, capacity);
        tabu
    }

    /// Takes `offsets` (a placement, at any height) as the state, each
    /// free buffer lowered to fit the capacity where it reaches above.
    pub(crate) fn start_from(&mut self, graph: &Graph, offsets: &[i64]) {
        for (v, &o) in offsets.iter().enumerate() {
            if !self.fixed[v] {
                self.offset[v] = o;
            }
        }
        let capacity = self.capacity;
        self.retarget(graph, capacity);
    }

    /// The capacity aimed at.
    pub(crate) fn capacity(&self) -> i64 {
        self.capacity
    }

    /// Aims the search at `capacity` from its current offsets.
    pub(crate) fn retarget(&mut self, graph: &Graph, capacity: i64) {
        self.capacity = capacity;
        let n = self.offset.len();
        self.runnable = !self.clash;
        for v in 0..n {
            if self.fixed[v] {
                self.runnable &= self.offset[v] + graph.size[v] <= capacity;
            } else {
                let top = align_down(capacity - graph.size[v], graph.align[v]);
                self.runnable &= top >= 0;
                self.offset[v] = self.offset[v].clamp(0, top.max(0));
            }
        }
        self.total = 0;
        for v in 0..n {
            self.shared[v] = graph.neighbours[v]
                .iter()
                .map(|&u| {
                    let u = u as usize;
                    self.weight[v * n + u].saturating_mul(shared_bytes(
                        self.offset[v],
                        graph.size[v],
                        self.offset[u],
                        graph.size[u],
                    ))
                })
                .fold(0i64, i64::saturating_add);
            self.total = self.total.saturating_add(self.shared[v]);
        }
        self.total /= 2;
        self.best = self.total;
        self.by_bottom.clear();
        self.by_bottom
            .extend((0..n).map(|v| (self.offset[v], v as u32)));
        self.by_bottom.sort_unstable();
        self.by_top.clear();
        self.by_top
            .extend((0..n).map(|v| (self.offset[v] + graph.size[v], v as u32)));
        self.by_top.sort_unstable();
        self.until.iter_mut().for_each(|u| *u = 0);
    }

    /// Searches until `work` (the poll's units: a neighbour scanned, over
    /// 8) is spent or a placement fits; returns how it ended and the work
    /// done.
    pub(crate) fn run(&mut self, graph: &Graph, work: u64, poll: &mut Poll<'_>) -> (Searched, u64) {
        if !self.runnable {
            return (Searched::Never, 0);
        }
        let mut spent = 0u64;
        loop {
            if self.total == 0 {
                // Weighed sums saturate rather than wrap; a placement is
                // still checked pair by pair before it is reported.
                if self.clashes(graph) {
                    self.weight.iter_mut().for_each(|w| *w = 1);
                    let capacity = self.capacity;
                    self.retarget(graph, capacity);
                } else {
                    return (Searched::Found(self.offset.clone()), spent);
                }
            }
            if spent >= work {
                return (Searched::Spent, spent);
            }
            let weight = self.step(graph) / 8 + 1;
            spent += weight;
            if let Err(stop) = poll.tick(weight) {
                return (Searched::Stopped(stop), spent);
            }
        }
    }

    /// Whether two conflicting buffers share a byte.
    fn clashes(&self, graph: &Graph) -> bool {
        (0..self.offset.len()).any(|v| {
            graph.neighbours[v].iter().any(|&u| {
                let u = u as usize;
                shared_bytes(self.offset[v], graph.size[v], self.offset[u], graph.size[u]) > 0
            })
        })
    }

    /// One step (see the module); returns the neighbours it scanned.
    fn step(&mut self, graph: &Graph) -> u64 {
        self.conflicted.clear();
        for v in 0..self.offset.len() {
            if self.shared[v] > 0 && !self.fixed[v] {
                self.conflicted.push(v as u32);
            }
        }
        // A random sample of the buffers in conflict (a partial
        // shuffle puts it first); the best move among them is taken.
        let weighed = self.conflicted.len().min(SAMPLE);
        for k in 0..weighed {
            let j = self.rng.below(k as i64, self.conflicted.len() as i64) as usize;
            self.conflicted.swap(k, j);
        }
        let mut scanned = 0u64;
        // The best move: (change in the total, buffer, offset), ties
        // broken at random (`ties` seen so far).
        let mut chosen: Option<(i64, usize, i64)> = None;
        let mut ties = 0u64;
        for k in 0..weighed {
            let v = self.conflicted[k] as usize;
            scanned += swept(self.offset.len(), graph.neighbours[v].len());
            let Some((cost, at)) = self.best_place(graph, v) else {
                continue;
            };
            let change = cost - self.shared[v];
            match chosen {
                Some((c, _, _)) if change > c => {}
                Some((c, _, _)) if change == c => {
                    ties += 1;
                    if self.rng.below(0, ties as i64 + 1) == 0 {
                        chosen = Some((change, v, at));
                    }
                }
                _ => {
                    ties = 0;
                    chosen = Some((change, v, at));
                }
            }
        }
        self.steps += 1;
        if chosen.is_none_or(|(change, _, _)| change >= 0) {
            scanned += self.raise_weights(graph);
        }
        let Some((_, v, at)) = chosen else {
            return scanned + 1;
        };
        scanned += graph.neighbours[v].len() as u64;
        let from = self.offset[v];
        self.move_to(graph, v, at);
        let tenure = self.rng.below(0, 10) as u64 + (self.conflicted.len() as u64 * 3) / 5;
        self.left_at[v] = from;
        self.until[v] = self.steps + tenure;
        self.best = self.best.min(self.total);
        scanned
    }

    /// The offset other than its own where `v` would share the fewest
    /// bytes, and those bytes; tabu places only where they would make the
    /// total lower than any seen. `None` if no place is open to it.
    fn best_place(&mut self, graph: &Graph, v: usize) -> Option<(i64, i64)> {
        let (size, align) = (graph.size[v], graph.align[v]);
        let top = align_down(self.capacity - size, align);
        let n = self.offset.len();
        // The neighbours' bottoms and tops, each in increasing order, with
        // the pair's weight.
        self.lows.clear();
        self.highs.clear();
        let row = &self.weight[v * n..(v + 1) * n];
        for &(b, u) in &self.by_bottom {
            if graph.adjacent(v, u as usize) {
                self.lows.push((b, row[u as usize]));
            }
        }
        for &(t, u) in &self.by_top {
            if graph.adjacent(v, u as usize) {
                self.highs.push((t, row[u as usize]));
            }
        }
        // The slope changes: +w a size below each bottom, -w at it, -w a
        // size below each top, +w at it; four sorted streams, merged.
        merge(
            self.lows.iter().map(|&(b, w)| (b - size, w)),
            self.lows.iter().map(|&(b, w)| (b, -w)),
            &mut self.scratch,
        );
        merge(
            self.highs.iter().map(|&(t, w)| (t - size, -w)),
            self.highs.iter().map(|&(t, w)| (t, w)),
            &mut self.changes,
        );
        merge(
            self.scratch.iter().copied(),
            self.changes.iter().copied(),
            &mut self.slopes,
        );
        // The places: both ends, just below each neighbour, just above.
        merge(
            self.lows
                .iter()
                .map(|&(b, _)| (align_down(b - size, align), 0)),
            self.highs.iter().map(|&(t, _)| (align_up(t, align), 0)),
            &mut self.places,
        );
        let own = self.offset[v];
        let tabu = self.steps < self.until[v];
        let left_at = self.left_at[v];
        let aspiration = self.best - (self.total - self.shared[v]);
        // Sweep: `value` at `last`, with `slope` to the right of it.
        let (mut value, mut slope, mut last) = (0i64, 0i64, i64::MIN);
        let mut best: Option<(i64, i64)> = None;
        let mut e = 0;
        let ends = [(0, 0), (top, 0)];
        let mut previous = i64::MIN;
        for &(c, _) in ends[..1].iter().chain(&self.places).chain(&ends[1..]) {
            if c == previous || c < 0 || c > top {
                continue;
            }
            previous = c;
            while let Some(&(at, change)) = self.slopes.get(e).filter(|&&(at, _)| at <= c) {
                if last != i64::MIN {
                    value = value.saturating_add(slope.saturating_mul(at - last));
                }
                last = at;
                slope = slope.saturating_add(change);
                e += 1;
            }
            let cost = if last == i64::MIN {
                0
            } else {
                value.saturating_add(slope.saturating_mul(c - last))
            };
            if c == own {
                continue;
            }
            let forbidden = tabu && (c - left_at).abs() < size && cost >= aspiration;
            if !forbidden && best.is_none_or(|(b, _)| cost < b) {
                best = Some((cost, c));
            }
        }
        best
    }

    /// Raises the weight of every pair that shares bytes by one (the
    /// breakout: a local minimum's conflicts cost more, until a move
    /// leaves it); returns the neighbours scanned.
    fn raise_weights(&mut self, graph: &Graph) -> u64 {
        let n = self.offset.len();
        let mut scanned = 0;
        for &v in &self.conflicted {
            let v = v as usize;
            scanned += graph.neighbours[v].len() as u64;
            for &u in &graph.neighbours[v] {
                let u = u as usize;
                let bytes =
                    shared_bytes(self.offset[v], graph.size[v], self.offset[u], graph.size[u]);
                if bytes > 0 && (self.fixed[u] || u > v) {
                    self.weight[v * n + u] = self.weight[v * n + u].saturating_add(1);
                    self.weight[u * n + v] = self.weight[u * n + v].saturating_add(1);
                    self.shared[v] = self.shared[v].saturating_add(bytes);
                    self.shared[u] = self.shared[u].saturating_add(bytes);
                    self.total = self.total.saturating_add(bytes);
                }
            }
        }
        self.best = self.total;
        scanned
    }

    /// Moves `v` to `at`, keeping the shared bytes.
    fn move_to(&mut self, graph: &Graph, v: usize, at: i64) {
        let (from, size) = (self.offset[v], graph.size[v]);
        let n = self.offset.len();
        for &u in &graph.neighbours[v] {
            let u = u as usize;
            let (b, t) = (self.offset[u], graph.size[u]);
            let change = self.weight[v * n + u]
                .saturating_mul(shared_bytes(at, size, b, t) - shared_bytes(from, size, b, t));
            self.shared[u] = self.shared[u].saturating_add(change);
            self.shared[v] = self.shared[v].saturating_add(change);
            self.total = self.total.saturating_add(change);
        }
        self.offset[v] = at;
        for (list, shift) in [(&mut self.by_bottom, 0), (&mut self.by_top, size)] {
            let old = (from + shift, v as u32);
            if let Ok(k) = list.binary_search(&old) {
                list.remove(k);
            }
            let new = (at + shift, v as u32);
            let k = list.partition_point(|&e| e < new);
            list.insert(k, new);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deadline::Deadline;
    use crate::exact::testing::{fits, gapped};
    use crate::exact::{solve, Params, Verdict};

    /// On 10,000 random problems with gaps, aimed at their capacity and
    /// below it, every placement the search reports fits (so none where
    /// the sweep's search proves nothing does), and it finds one for most
    /// of the problems that have one; an aim too low leaves nothing
    /// behind once the aim is raised.
    #[test]
    fn the_tabu_search_reports_only_valid_fits_and_finds_most() {
        let mut rng = Rng::new(0x7ab0);
        let deadline = Deadline::new(None, None, None);
        let (mut feasible, mut found) = (0, 0);
        for i in 0..10_000 {
            let problem = gapped(&mut rng);
            let graph = Graph::new(&problem);
            let capacity = problem.capacity();
            let (sweep, _) = solve(&problem, capacity, &Params::default(), &deadline);
            feasible += usize::from(matches!(sweep, Verdict::Solved(_)));
            // Aimed too low (below a fixed buffer's top, or a buffer's
            // size), then at the capacity, it runs as a fresh one would.
            let mut again = Tabu::new(&problem, &graph, 1, i);
            again.retarget(&graph, capacity);
            let fresh = Tabu::new(&problem, &graph, capacity, i);
            assert_eq!(again.runnable, fresh.runnable, "instance {i}");
            for at in [capacity, rng.below(1, capacity + 1)] {
                let mut poll = Poll::new(&deadline, 1 << 16);
                let mut tabu = Tabu::new(&problem, &graph, at, i);
                if let Searched::Found(offsets) = tabu.run(&graph, 20_000, &mut poll).0 {
                    assert!(
                        fits(&problem, &offsets, at),
                        "instance {i} at {at}: {offsets:?}"
                    );
                    assert!(matches!(sweep, Verdict::Solved(_)), "instance {i}");
                    found += usize::from(at == capacity);
                }
            }
        }
        assert!(found * 10 >= feasible * 9, "{found} of {feasible}");
    }
}
