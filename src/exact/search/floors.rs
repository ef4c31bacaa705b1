//! The sections' effective floors: per section, the lowest min offset among
//! its unplaced members, kept on a segment tree over the sections. Each
//! span of a buffer lies on the nodes of its canonical cover (at most two
//! a level); a node knows the lowest min offset of the buffers on it and
//! how many have it, and a section's effective floor is the lowest of
//! those on its path from the root.
//!
//! A min offset that rises visits its buffer's nodes, a few per level,
//! whatever the number of sections the buffer spans; a node whose count
//! runs out scans its own buffers again, which hold a span there, not
//! every member of a section. Kept per section (the plain way), a rise
//! visits every section the buffer spans and a section whose count runs
//! out scans all its members: on dense problems, where each buffer spans
//! most sections and meets most buffers, that was most of a node's cost.
//! The floors read here are the same values, so the search prunes the
//! same nodes.
//!
//! Like the search's other state, a rise is undone from its log: the
//! caller logs each node whose lowest value rose ([`Floors::set_top`]
//! puts it back, its count at zero), and undoing a buffer's rise counts
//! it back in where its old value is the node's lowest again.

use alloc::vec;
use alloc::vec::Vec;

use crate::exact::sweep::Span;

/// Effective floors over `n` sections.
#[derive(Default)]
pub(super) struct Floors {
    n: usize,
    /// Per tree node, the buffers with a span on it:
    /// `on[start[node]..start[node + 1]]`.
    start: Vec<u32>,
    on: Vec<u32>,
    /// Buffer `b`'s tree nodes are `nodes[node_at[b]..node_at[b + 1]]`.
    node_at: Vec<u32>,
    nodes: Vec<u32>,
    /// Per tree node, the lowest min offset of its buffers (`i64::MAX` with
    /// none) and how many buffers have it.
    tops: Vec<i64>,
    count: Vec<u32>,
    /// Per tree node, its sections `[lo, hi)`.
    range: Vec<[u32; 2]>,
    /// The tree nodes whose lowest value the last [`Floors::raise`] raised.
    risen: Vec<u32>,
}

impl Floors {
    /// The floors of `sections` sections whose buffers have the spans
    /// `spans(b)` and the min offsets `min_offset`; the work it took
    /// (buffers placed on nodes).
    pub(super) fn new<'s>(
        sections: usize,
        min_offset: &[i64],
        spans: impl Fn(u32) -> &'s [Span],
    ) -> (Floors, u64) {
        let n = sections.max(1);
        let buffers = min_offset.len();
        let mut start = vec![0u32; 4 * n + 1];
        let mut node_at = Vec::with_capacity(buffers + 1);
        let mut nodes = Vec::new();
        node_at.push(0u32);
        for b in 0..buffers as u32 {
            for span in spans(b) {
                canonical(n, span, &mut |node| {
                    start[node] += 1;
                    nodes.push(node as u32);
                });
            }
            node_at.push(nodes.len() as u32);
        }
        // Buffers laid out node after node: `start` becomes the running
        // count, `fill` each node's next free place.
        let mut sum = 0u32;
        for s in start.iter_mut() {
            let c = *s;
            *s = sum;
            sum += c;
        }
        let mut fill = start.clone();
        let mut on = vec![0u32; nodes.len()];
        for b in 0..buffers {
            for &node in &nodes[node_at[b] as usize..node_at[b + 1] as usize] {
                on[fill[node as usize] as usize] = b as u32;
                fill[node as usize] += 1;
            }
        }
        let mut floors = Floors {
            n,
            start,
            on,
            node_at,
            nodes,
            tops: vec![i64::MAX; 4 * n],
            count: vec![0; 4 * n],
            range: vec![[0, 0]; 4 * n],
            risen: Vec::new(),
        };
        for node in 0..4 * n {
            floors.rescan(node, min_offset);
        }
        fn ranges(range: &mut [[u32; 2]], node: usize, lo: usize, hi: usize) {
            range[node] = [lo as u32, hi as u32];
            if hi - lo > 1 {
                let mid = (lo + hi) / 2;
                ranges(range, 2 * node, lo, mid);
                ranges(range, 2 * node + 1, mid, hi);
            }
        }
        ranges(&mut floors.range, 1, 0, n);
        let work = floors.on.len() as u64;
        (floors, work)
    }

    /// Node `node`'s lowest value and count from its buffers; the work.
    fn rescan(&mut self, node: usize, min_offset: &[i64]) -> u64 {
        let on = &self.on[self.start[node] as usize..self.start[node + 1] as usize];
        let (mut low, mut count) = (i64::MAX, 0);
        for &b in on {
            let m = min_offset[b as usize];
            if m < low {
                (low, count) = (m, 1);
            } else if m == low {
                count += 1;
            }
        }
        (self.tops[node], self.count[node]) = (low, count);
        on.len() as u64
    }

    /// Buffer `b`'s min offset rose from `old` (`min_offset` holds the new
    /// one), calling `log(node, old)` for each node whose lowest value
    /// rose; the work it took, and whether any did (else no section's
    /// floor rose).
    pub(super) fn raise(
        &mut self,
        b: u32,
        old: i64,
        min_offset: &[i64],
        log: &mut impl FnMut(u32, i64),
    ) -> (u64, bool) {
        let b = b as usize;
        let (from, to) = (self.node_at[b] as usize, self.node_at[b + 1] as usize);
        let mut work = (to - from) as u64;
        self.risen.clear();
        for i in from..to {
            let node = self.nodes[i] as usize;
            if self.tops[node] != old {
                continue;
            }
            self.count[node] -= 1;
            if self.count[node] == 0 {
                log(node as u32, old);
                work += self.rescan(node, min_offset);
                self.risen.push(node as u32);
            }
        }
        (work, !self.risen.is_empty())
    }

    /// Undoes a rise of buffer `b`'s min offset back to `old`, after every
    /// node's lowest value logged since has been put back: where `old` is
    /// a node's lowest, `b` counts among the buffers at it. The work.
    pub(super) fn lower(&mut self, b: u32, old: i64) -> u64 {
        let b = b as usize;
        let (from, to) = (self.node_at[b] as usize, self.node_at[b + 1] as usize);
        for &node in &self.nodes[from..to] {
            if self.tops[node as usize] == old {
                self.count[node as usize] += 1;
            }
        }
        (to - from) as u64
    }

    /// Puts back a node's lowest value from the log (none of its buffers
    /// at it yet: their undone rises count them back in).
    pub(super) fn set_top(&mut self, node: u32, top: i64) {
        (self.tops[node as usize], self.count[node as usize]) = (top, 0);
    }

    /// Buffer `b`'s min offset changed to anything (between runs): its
    /// nodes counted again.
    pub(super) fn reset(&mut self, b: u32, min_offset: &[i64]) {
        let b = b as usize;
        for i in self.node_at[b] as usize..self.node_at[b + 1] as usize {
            self.rescan(self.nodes[i] as usize, min_offset);
        }
    }

    /// Section `s`'s effective floor (`i64::MAX` with no unplaced member).
    #[cfg(test)]
    pub(super) fn at(&self, s: usize) -> i64 {
        let (mut node, mut lo, mut hi) = (1, 0, self.n);
        let mut low = self.tops[1];
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            (node, lo, hi) = if s < mid {
                (2 * node, lo, mid)
            } else {
                (2 * node + 1, mid, hi)
            };
            low = low.min(self.tops[node]);
        }
        low
    }

    /// Calls `f(section, effective floor)` for the sections of `span`
    /// whose floor is above `above`, in order, while `f` returns true;
    /// whether it always did, and the tree nodes visited. A subtree whose
    /// path already holds a lowest value at most `above` is skipped whole.
    pub(super) fn above(
        &self,
        span: &Span,
        above: i64,
        f: &mut impl FnMut(u32, i64) -> bool,
    ) -> (bool, u64) {
        let mut visited = 0;
        let range = (span.first as usize, span.end as usize);
        let done = self.above_in((1, 0, self.n), range, i64::MAX, above, f, &mut visited);
        (done, visited)
    }

    /// After [`Floors::raise`] raised a buffer from `old`: calls
    /// `f(section, effective floor)` for each section whose floor rose,
    /// while `f` returns true; whether it always did, and the tree nodes
    /// visited. Only sections under a node whose lowest value rose can
    /// have, and of those only the ones whose path holds no other value
    /// at most `old` (every floor of the buffer's sections was at most
    /// `old` before).
    pub(super) fn risen(&self, old: i64, f: &mut impl FnMut(u32, i64) -> bool) -> (bool, u64) {
        let mut visited = 0;
        for &node in &self.risen {
            let node = node as usize;
            let mut low = i64::MAX;
            let mut up = node / 2;
            while up >= 1 && low > old {
                low = low.min(self.tops[up]);
                up /= 2;
                visited += 1;
            }
            if low <= old {
                continue;
            }
            let [lo, hi] = self.range[node];
            let (lo, hi) = (lo as usize, hi as usize);
            if !self.above_in((node, lo, hi), (lo, hi), low, old, f, &mut visited) {
                return (false, visited);
            }
        }
        (true, visited)
    }

    fn above_in(
        &self,
        (node, lo, hi): (usize, usize, usize),
        (from, to): (usize, usize),
        low: i64,
        above: i64,
        f: &mut impl FnMut(u32, i64) -> bool,
        visited: &mut u64,
    ) -> bool {
        *visited += 1;
        let low = low.min(self.tops[node]);
        if low <= above {
            return true;
        }
        if hi - lo == 1 {
            return f(lo as u32, low);
        }
        let mid = (lo + hi) / 2;
        if from < mid && !self.above_in((2 * node, lo, mid), (from, to), low, above, f, visited) {
            return false;
        }
        to <= mid || self.above_in((2 * node + 1, mid, hi), (from, to), low, above, f, visited)
    }
}

/// Calls `f` with each node of the canonical cover of `span`'s sections in
/// a tree over `n` (the same nodes every time).
fn canonical(n: usize, span: &Span, f: &mut impl FnMut(usize)) {
    fn cover(
        node: usize,
        (lo, hi): (usize, usize),
        (from, to): (usize, usize),
        f: &mut impl FnMut(usize),
    ) {
        if from <= lo && hi <= to {
            f(node);
            return;
        }
        let mid = (lo + hi) / 2;
        if from < mid {
            cover(2 * node, (lo, mid), (from, to), f);
        }
        if to > mid {
            cover(2 * node + 1, (mid, hi), (from, to), f);
        }
    }
    if span.first < span.end {
        cover(1, (0, n), (span.first as usize, span.end as usize), f);
    }
}

#[cfg(test)]
pub(super) mod tests {
    extern crate std;

    use super::*;
    use crate::base::rng::Rng;

    std::thread_local! {
        /// Placements whose floors the search checked by hand on this
        /// thread (see `Search::check_floors`).
        pub(in crate::exact::search) static CHECKED: core::cell::Cell<u64> = const { core::cell::Cell::new(0) };
    }

    /// The search on small problems (gapped ones with alignments and
    /// fixed buffers; dense ones of long lifetimes, each meeting most
    /// others; planted ones with separations), at capacities from below
    /// the max load to above it: every placement not pruned has the
    /// floors counted by hand and leaves no section overfull that
    /// counting per section would have pruned (`Search::check_floors`),
    /// and the checks ran.
    #[test]
    fn the_search_prunes_every_section_its_floors_overfill() {
        use crate::deadline::Deadline;
        use crate::exact::testing::{fits, gapped, planted};
        use crate::exact::{solve, Params};
        use crate::model::problem::{Buffer, Problem};
        let mut rng = Rng::new(0xf100);
        let deadline = Deadline::new(None, None, None);
        let params = Params {
            node_limit: Some(20_000),
            ..Params::default()
        };
        let start = CHECKED.with(|c| c.get());
        for i in 0..1_500 {
            let problem = match i % 3 {
                0 => gapped(&mut rng),
                1 => {
                    let n = rng.below(8, 40);
                    let buffers = (0..n)
                        .map(|k| {
                            let lower = rng.below(0, 30);
                            let upper = lower + rng.below(10, 60);
                            Buffer::new(alloc::format!("{k}"), lower, upper, rng.below(1, 50))
                        })
                        .collect();
                    Problem::new(i64::MAX, buffers).unwrap()
                }
                _ => {
                    let n = rng.below(4, 24) as usize;
                    planted(&mut rng, n).lowered().expect("lowers").problem
                }
            };
            let load = crate::model::load::max_load(&problem).max(1);
            let capacity = rng
                .below(load - load / 8, load + load / 4 + 2)
                .min(problem.capacity());
            if let (crate::exact::Verdict::Solved(offsets), _) =
                solve(&problem, capacity, &params, &deadline)
            {
                assert!(fits(&problem, &offsets, capacity), "problem {i}");
            }
        }
        let checked = CHECKED.with(|c| c.get()) - start;
        assert!(checked > 10_000, "{checked} placements checked");
    }

    /// What the test logs, as the search does: a buffer's old min offset,
    /// or a node's old lowest value.
    enum Logged {
        Offset(usize, i64),
        Top(u32, i64),
    }

    /// Random spans over random sections, like the sweep's (up to three
    /// disjoint spans a buffer, as a gapped buffer has).
    fn random_spans(rng: &mut Rng, sections: usize, buffers: usize) -> Vec<Vec<Span>> {
        (0..buffers)
            .map(|_| {
                let mut own = Vec::new();
                let mut at = rng.below(0, sections as i64) as u32;
                for _ in 0..rng.below(1, 4) {
                    if at as usize >= sections {
                        break;
                    }
                    let end = rng.below(i64::from(at) + 1, sections as i64 + 1) as u32;
                    own.push(Span {
                        first: at,
                        end,
                        lower: 0,
                        upper: 1,
                    });
                    at = end + rng.below(0, 3) as u32;
                }
                own
            })
            .collect()
    }

    /// Through long random series of rises (to a higher offset, or out:
    /// placed) and undos to earlier marks of the log, each floor is the
    /// lowest min offset of its section's buffers counted by hand; `risen`
    /// lists exactly the sections whose floor a rise raised, and `above`
    /// exactly those above a bound. Mutations of the counting (a rise
    /// that forgets to log, an undo that does not count back in) fail it.
    #[test]
    fn the_floors_are_the_lowest_min_offset_of_each_sections_buffers() {
        let mut rng = Rng::new(11);
        for round in 0..300 {
            let sections = rng.below(1, 41) as usize;
            let buffers = rng.below(1, 31) as usize;
            let spans = random_spans(&mut rng, sections, buffers);
            let mut offsets: Vec<i64> = (0..buffers).map(|_| rng.below(0, 5)).collect();
            let (mut floors, _) = Floors::new(sections, &offsets, |b| &spans[b as usize]);
            let mut log: Vec<Logged> = Vec::new();
            // Where each rise's entries start: undos go back to one.
            let mut marks: Vec<usize> = Vec::new();
            let truth = |offsets: &[i64], s: usize| {
                (0..buffers)
                    .filter(|&x| {
                        spans[x]
                            .iter()
                            .any(|p| p.first as usize <= s && s < p.end as usize)
                    })
                    .map(|x| offsets[x])
                    .min()
                    .unwrap_or(i64::MAX)
            };
            for step in 0..120 {
                let before: Vec<i64> = (0..sections).map(|s| truth(&offsets, s)).collect();
                if rng.below(0, 4) == 0 {
                    // Undo to a random earlier mark.
                    let keep = rng.below(0, marks.len() as i64 + 1) as usize;
                    let mark = marks.get(keep).copied().unwrap_or(log.len());
                    marks.truncate(keep);
                    while log.len() > mark {
                        match log.pop().unwrap() {
                            Logged::Offset(b, old) => {
                                offsets[b] = old;
                                floors.lower(b as u32, old);
                            }
                            Logged::Top(node, top) => floors.set_top(node, top),
                        }
                    }
                } else {
                    let b = rng.below(0, buffers as i64) as usize;
                    let old = offsets[b];
                    if old == i64::MAX {
                        continue;
                    }
                    let v = match rng.below(0, 4) {
                        0 => i64::MAX,
                        _ => old + rng.below(1, 6),
                    };
                    marks.push(log.len());
                    log.push(Logged::Offset(b, old));
                    offsets[b] = v;
                    let mut tops = Vec::new();
                    let (_, rose) = floors.raise(b as u32, old, &offsets, &mut |node, top| {
                        tops.push((node, top))
                    });
                    log.extend(tops.into_iter().map(|(node, top)| Logged::Top(node, top)));
                    let risen: Vec<(u32, i64)> = (0..sections)
                        .filter(|&s| truth(&offsets, s) > before[s])
                        .map(|s| (s as u32, truth(&offsets, s)))
                        .collect();
                    assert!(
                        rose || risen.is_empty(),
                        "round {round} step {step}: a floor rose unseen"
                    );
                    let mut listed = Vec::new();
                    floors.risen(old, &mut |s, e| {
                        listed.push((s, e));
                        true
                    });
                    listed.sort_unstable();
                    assert_eq!(listed, risen, "round {round} step {step}: risen");
                }
                for s in 0..sections {
                    let want = truth(&offsets, s);
                    assert_eq!(floors.at(s), want, "round {round} step {step} section {s}");
                }
                let bound = rng.below(-1, 19);
                let whole = Span {
                    first: 0,
                    end: sections as u32,
                    lower: 0,
                    upper: 1,
                };
                let mut listed = Vec::new();
                floors.above(&whole, bound, &mut |s, e| {
                    listed.push((s as usize, e));
                    true
                });
                let expected: Vec<(usize, i64)> = (0..sections)
                    .map(|s| (s, truth(&offsets, s)))
                    .filter(|&(_, e)| e > bound)
                    .collect();
                assert_eq!(listed, expected, "round {round} step {step} above {bound}");
            }
        }
    }
}
