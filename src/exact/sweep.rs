//! Time events to sections, partitions and overlaps: the structure the exact
//! search works on, built once per problem.
//!
//! A *section* is a set of live pieces at one moment. Only moments right
//! before a piece ends, after some piece started, give a section: those are
//! the maximal sets of simultaneously live pieces (the maximal cliques of
//! the interval graph); the sets in between are subsets of them. Each
//! buffer covers a contiguous range of sections per live piece (a *span*).
//!
//! Two buffers *overlap* when pieces of theirs are alive at a common time.
//! For each overlapping pair the sweep records the *distance*: how far above
//! buffer `t`'s offset buffer `x` must start so that each of `x`'s pieces
//! lies above each of `t`'s pieces it meets. Without gap windows that is
//! simply `t`'s size.
//!
//! A *partition* is a range of sections that no buffer crosses out of; the
//! *cut* of a section boundary counts the buffers that cross it.

use alloc::vec;
use alloc::vec::Vec;

use crate::deadline::{sort_polled, zeros_polled, Poll, Stop};
use crate::model::problem::Problem;

/// A buffer's presence in a range of sections: sections `[first, end)`,
/// occupying `[lower, upper)` relative to its offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// First section.
    pub first: u32,
    /// One past the last section.
    pub end: u32,
    /// Start of the occupied window, relative to the offset.
    pub lower: i64,
    /// End of the occupied window.
    pub upper: i64,
}

/// Sections, spans, overlaps and partitions of a problem.
#[derive(Clone, Debug, Default)]
pub struct Sweep {
    /// Number of sections.
    pub sections: usize,
    /// `spans[span_at[b]..span_at[b + 1]]` are buffer `b`'s spans, in order.
    pub span_at: Vec<u32>,
    /// All spans.
    pub spans: Vec<Span>,
    /// `nbr[nbr_at[b]..nbr_at[b + 1]]` are the buffers overlapping `b`.
    pub nbr_at: Vec<u32>,
    /// Overlapping buffers.
    pub nbr: Vec<u32>,
    /// `dist[k]`: how far above `b`'s offset `nbr[k]` must start if it is
    /// placed above `b`. Empty when no buffer has a gap window: then the
    /// distance is always `b`'s size, and storing it would double the
    /// memory of the overlap lists.
    pub dist: Vec<i64>,
    /// `[first, end)`: the sections from a buffer's first piece to its last
    /// (empty for a buffer with no live piece).
    pub hull: Vec<[u32; 2]>,
    /// Sum of the occupied windows of the pieces in each section.
    pub totals: Vec<i64>,
    /// `cuts[k]`: buffers whose hull contains both section `k` and `k + 1`.
    pub cuts: Vec<u32>,
    /// Section ranges that no buffer crosses out of, in time order.
    pub partitions: Vec<[u32; 2]>,
    /// Overlapping pairs whose gap windows leave room to interleave (one
    /// buffer partly above and partly below the other). The search stacks
    /// every pair, so it is complete only when this is zero.
    pub interleaving: u64,
}

impl Sweep {
    /// Buffer `b`'s spans.
    #[inline]
    pub fn spans(&self, b: u32) -> &[Span] {
        let b = b as usize;
        &self.spans[self.span_at[b] as usize..self.span_at[b + 1] as usize]
    }

    /// Buffer `b`'s overlapping buffers and their distances (`None`: each
    /// distance is `b`'s size).
    #[inline]
    pub fn overlaps(&self, b: u32) -> (&[u32], Option<&[i64]>) {
        let b = b as usize;
        let r = self.nbr_at[b] as usize..self.nbr_at[b + 1] as usize;
        let dist = if self.dist.is_empty() {
            None
        } else {
            Some(&self.dist[r.clone()])
        };
        (&self.nbr[r], dist)
    }
}

/// One live piece, with its place in the sweep.
struct Piece {
    buffer: u32,
    lower: i64,
    upper: i64,
    first: u32,
    end: u32,
}

/// Builds the sweep of `problem`, polling the deadline as it goes.
pub(crate) fn sweep(problem: &Problem, poll: &mut Poll<'_>) -> Result<Sweep, Stop> {
    let mut sweep = Sweep::default();
    match fill(&mut sweep, problem, poll) {
        Ok(()) => Ok(sweep),
        Err(stop) => {
            sweep.discard();
            Err(stop)
        }
    }
}

impl Sweep {
    /// Frees the sweep, in the background if it is large: after a deadline
    /// the caller should not wait for the pages of a big overlap list to
    /// be returned.
    pub(crate) fn discard(self) {
        let bytes = self.nbr.capacity() * 4 + self.dist.capacity() * 8;
        crate::deadline::discard(self, bytes);
    }
}

/// Builds the sweep into `sweep`; its large arrays live there as soon as
/// they exist, so that a stop midway leaves them to the caller.
fn fill(sweep: &mut Sweep, problem: &Problem, poll: &mut Poll<'_>) -> Result<(), Stop> {
    let n = problem.len();
    let (mut pieces, piece_at, windowed, events) = pieces_and_events(problem, poll)?;
    let any_windows = windowed.iter().any(|&w| w);
    let (mut at, mut forbidden) =
        sections_and_overlaps(sweep, &mut pieces, &events, &windowed, poll)?;
    drop(events);
    // Buffers with several pieces can meet the same buffer several times.
    if pieces.len() > n {
        one_entry_per_neighbour(sweep, &mut at, any_windows, poll)?;
    }
    sweep.nbr_at = at;
    sweep.interleaving = count_interleaving(&mut forbidden);
    spans_and_totals(sweep, &pieces, &piece_at);
    cuts_and_partitions(sweep);
    Ok(())
}

/// Every buffer's live pieces (`piece_at[b]..piece_at[b + 1]` are
/// buffer `b`'s), whether each buffer has a window narrower than itself,
/// and the pieces' start and end events, sorted: `(time << 64) | (start
/// << 32) | piece`, so that ends sort before starts at one time.
#[allow(clippy::type_complexity)]
fn pieces_and_events(
    problem: &Problem,
    poll: &mut Poll<'_>,
) -> Result<(Vec<Piece>, Vec<u32>, Vec<bool>, Vec<u128>), Stop> {
    let n = problem.len();
    let mut pieces: Vec<Piece> = Vec::with_capacity(n);
    let mut piece_at: Vec<u32> = Vec::with_capacity(n + 1);
    let mut windowed = vec![false; n];
    let mut events: Vec<u128> = Vec::with_capacity(2 * n);
    for (i, b) in problem.buffers().iter().enumerate() {
        piece_at.push(pieces.len() as u32);
        for p in b.pieces() {
            let id = pieces.len() as u128;
            windowed[i] |= p.window.lower != 0 || p.window.upper != b.size;
            events.push(((p.lower as u128) << 64) | (1 << 32) | id);
            events.push(((p.upper as u128) << 64) | id);
            pieces.push(Piece {
                buffer: i as u32,
                lower: p.window.lower,
                upper: p.window.upper,
                first: 0,
                end: 0,
            });
        }
        poll.tick(1)?;
    }
    piece_at.push(pieces.len() as u32);
    sort_polled(&mut events, poll)?;
    Ok((pieces, piece_at, windowed, events))
}

/// Two walks over the events: the first finds the sections (each piece's
/// first and end section) and counts each
/// buffer's overlaps, the second fills the overlap lists (`sweep.nbr`,
/// with distances in `sweep.dist` when some buffer has windows) at their
/// counted places. Returns the lists' starts per buffer and, for pairs
/// with windows, the offset differences at which their pieces meet:
/// (first buffer, second buffer, lowest, highest) of d = offset(second) -
/// offset(first), for the interleaving check. One function of ~90 lines:
/// both walks are one loop over the events, the sweep's hot path (it
/// visits every overlapping pair), and splitting it would split that loop.
#[allow(clippy::type_complexity)]
fn sections_and_overlaps(
    sweep: &mut Sweep,
    pieces: &mut [Piece],
    events: &[u128],
    windowed: &[bool],
    poll: &mut Poll<'_>,
) -> Result<(Vec<u32>, Vec<(u32, u32, i64, i64)>), Stop> {
    let n = windowed.len();
    let any_windows = windowed.iter().any(|&w| w);
    let mut at = vec![0u32; n + 1];
    let mut fill: Vec<u32> = Vec::new();
    let mut forbidden: Vec<(u32, u32, i64, i64)> = Vec::new();
    for filling in [false, true] {
        if filling {
            for b in 0..n {
                at[b + 1] += at[b];
            }
            // Zeroed here, polled, rather than on first write below (the
            // distances too where there is room: the tiny build keeps the
            // system's lazy zeroing for them, as it did, for its size).
            let distances = if any_windows { at[n] as usize } else { 0 };
            sweep.nbr = zeros_polled(at[n] as usize, poll)?;
            #[cfg(feature = "std")]
            {
                sweep.dist = zeros_polled(distances, poll)?;
            }
            #[cfg(not(feature = "std"))]
            {
                sweep.dist = vec![0i64; distances];
            }
            fill = at.clone();
        }
        let mut active = Active::new(pieces.len());
        let mut pending = false;
        for &e in events {
            let id = (e as u32) as usize;
            if e & (1 << 32) == 0 {
                if pending {
                    pending = false;
                    if !filling {
                        sweep.sections += 1;
                    }
                    poll.tick(1)?;
                }
                if !filling {
                    pieces[id].end = sweep.sections as u32;
                }
                active.remove(id as u32);
                continue;
            }
            if !filling {
                pieces[id].first = sweep.sections as u32;
            }
            pending = true;
            let q = &pieces[id];
            let x = q.buffer as usize;
            for &pi in &active.list {
                let p = &pieces[pi as usize];
                let t = p.buffer as usize;
                if !filling {
                    at[t + 1] += 1;
                    at[x + 1] += 1;
                    continue;
                }
                let (kt, kx) = (fill[t] as usize, fill[x] as usize);
                sweep.nbr[kt] = x as u32;
                sweep.nbr[kx] = t as u32;
                if any_windows {
                    // x above t: each x piece starts at or above the t
                    // piece's top.
                    sweep.dist[kt] = p.upper - q.lower;
                    sweep.dist[kx] = q.upper - p.lower;
                }
                fill[t] += 1;
                fill[x] += 1;
                if any_windows && (windowed[t] || windowed[x]) {
                    let (a, b, pa, pb) = if t < x { (t, x, p, q) } else { (x, t, q, p) };
                    // Overlap in memory iff pa.lower - pb.upper < d < pa.upper - pb.lower.
                    forbidden.push((
                        a as u32,
                        b as u32,
                        pa.lower - pb.upper + 1,
                        pa.upper - pb.lower - 1,
                    ));
                }
            }
            poll.tick(1 + active.list.len() as u64)?;
            active.insert(id as u32);
        }
    }
    Ok((at, forbidden))
}

/// Keeps one entry per neighbour in each overlap list, with the largest
/// distance (a buffer in pieces can meet another several times); `at`
/// becomes the lists' new starts.
fn one_entry_per_neighbour(
    sweep: &mut Sweep,
    at: &mut [u32],
    any_windows: bool,
    poll: &mut Poll<'_>,
) -> Result<(), Stop> {
    let n = at.len() - 1;
    let (nbr, dist) = (&mut sweep.nbr, &mut sweep.dist);
    let mut write = 0usize;
    let mut pairs: Vec<(u32, i64)> = Vec::new();
    for b in 0..n {
        let r = at[b] as usize..at[b + 1] as usize;
        at[b] = write as u32;
        pairs.clear();
        pairs.extend(r.map(|k| (nbr[k], if any_windows { dist[k] } else { 0 })));
        crate::base::sort::sort_by_key(&mut pairs, |p| (p.0, core::cmp::Reverse(p.1)));
        pairs.dedup_by_key(|p| p.0);
        for &(x, d) in &pairs {
            nbr[write] = x;
            if any_windows {
                dist[write] = d;
            }
            write += 1;
        }
        poll.tick(1 + pairs.len() as u64)?;
    }
    at[n] = write as u32;
    nbr.truncate(write);
    dist.truncate(write);
    nbr.shrink_to_fit();
    dist.shrink_to_fit();
    Ok(())
}

/// Each buffer's spans (its pieces in sections) and hull, and each
/// section's total size alive.
fn spans_and_totals(sweep: &mut Sweep, pieces: &[Piece], piece_at: &[u32]) {
    let n = piece_at.len() - 1;
    let sections = sweep.sections;
    let mut delta = vec![0i64; sections + 1];
    sweep.span_at.reserve(n + 1);
    sweep.spans.reserve(pieces.len());
    sweep.hull.reserve(n);
    for b in 0..n {
        sweep.span_at.push(sweep.spans.len() as u32);
        let ps = &pieces[piece_at[b] as usize..piece_at[b + 1] as usize];
        for p in ps {
            debug_assert!(p.first < p.end, "every piece lies in a section");
            sweep.spans.push(Span {
                first: p.first,
                end: p.end,
                lower: p.lower,
                upper: p.upper,
            });
            delta[p.first as usize] += p.upper - p.lower;
            delta[p.end as usize] -= p.upper - p.lower;
        }
        sweep.hull.push(match (ps.first(), ps.last()) {
            (Some(f), Some(l)) => [f.first, l.end],
            _ => [0, 0],
        });
    }
    sweep.span_at.push(sweep.spans.len() as u32);
    sweep.totals = prefix_sums(&delta[..sections]);
}

/// How many buffers cross each boundary between sections, and the
/// partitions (runs of sections no buffer crosses out of) they delimit.
fn cuts_and_partitions(sweep: &mut Sweep) {
    let sections = sweep.sections;
    let boundaries = sections.saturating_sub(1);
    let mut cut_delta = vec![0i64; boundaries + 1];
    for &[first, end] in &sweep.hull {
        if end > first + 1 {
            cut_delta[first as usize] += 1;
            cut_delta[end as usize - 1] -= 1;
        }
    }
    sweep.cuts = prefix_sums(&cut_delta[..boundaries])
        .into_iter()
        .map(|c| c as u32)
        .collect();
    let mut start = 0u32;
    for k in 0..sections {
        if k + 1 == sections || sweep.cuts[k] == 0 {
            sweep.partitions.push([start, k as u32 + 1]);
            start = k as u32 + 1;
        }
    }
}

fn prefix_sums(delta: &[i64]) -> Vec<i64> {
    let mut run = 0i64;
    delta
        .iter()
        .map(|d| {
            run += d;
            run
        })
        .collect()
}

/// Counts the pairs whose forbidden offset differences do not form one
/// interval around zero: those pairs can be placed interleaved.
fn count_interleaving(forbidden: &mut [(u32, u32, i64, i64)]) -> u64 {
    crate::base::sort::sort(forbidden);
    let mut count = 0;
    let mut i = 0;
    while i < forbidden.len() {
        let (a, b, lo, mut hi) = forbidden[i];
        let mut contiguous = true;
        let mut j = i + 1;
        while j < forbidden.len() && forbidden[j].0 == a && forbidden[j].1 == b {
            let (_, _, l, h) = forbidden[j];
            if l > hi.saturating_add(1) {
                contiguous = false;
            }
            hi = hi.max(h);
            j += 1;
        }
        if !contiguous || lo > 0 || hi < 0 {
            count += 1;
        }
        i = j;
    }
    count
}

/// The pieces alive at the current moment, with O(1) insert and remove.
struct Active {
    list: Vec<u32>,
    pos: Vec<u32>,
}

impl Active {
    fn new(pieces: usize) -> Self {
        Active {
            list: Vec::new(),
            pos: vec![0; pieces],
        }
    }

    fn insert(&mut self, p: u32) {
        self.pos[p as usize] = self.list.len() as u32;
        self.list.push(p);
    }

    fn remove(&mut self, p: u32) {
        let i = self.pos[p as usize] as usize;
        let Some(&last) = self.list.last() else {
            return;
        };
        self.list[i] = last;
        self.pos[last as usize] = i as u32;
        self.list.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deadline::Deadline;
    use crate::model::problem::{Buffer, Gap, Window};

    fn run(problem: &Problem) -> Sweep {
        let d = Deadline::none();
        let mut poll = Poll::new(&d, 1 << 20);
        sweep(problem, &mut poll).unwrap()
    }

    #[test]
    fn paper_example_sections_and_overlaps() {
        let p = Problem::new(
            12,
            vec![
                Buffer::new("b1", 0, 3, 4),
                Buffer::new("b2", 3, 9, 4),
                Buffer::new("b3", 0, 9, 4),
                Buffer::new("b4", 9, 21, 4),
                Buffer::new("b5", 0, 21, 4),
            ],
        )
        .unwrap();
        let s = run(&p);
        // Maximal cliques: {b1,b3,b5} on [0,3), {b2,b3,b5} on [3,9), {b4,b5} on [9,21).
        assert_eq!(s.sections, 3);
        assert_eq!(s.totals, vec![12, 12, 8]);
        let members = |k: u32| -> Vec<u32> {
            (0..5)
                .filter(|&b| s.spans(b).iter().any(|p| p.first <= k && k < p.end))
                .collect()
        };
        let m: Vec<Vec<u32>> = (0..3).map(members).collect();
        assert_eq!(m, vec![vec![0, 2, 4], vec![1, 2, 4], vec![3, 4]]);
        assert_eq!(s.hull, vec![[0, 1], [1, 2], [0, 2], [2, 3], [0, 3]]);
        assert_eq!(s.cuts, vec![2, 1]);
        assert_eq!(s.partitions, vec![[0, 3]]);
        let mut n4: Vec<u32> = s.overlaps(4).0.to_vec();
        n4.sort();
        assert_eq!(n4, vec![0, 1, 2, 3]);
        assert!(
            s.overlaps(4).1.is_none(),
            "without windows, distance = size"
        );
        assert_eq!(s.interleaving, 0);
        assert_eq!(crate::model::load::max_load(&p), 12);
    }

    #[test]
    fn disjoint_groups_make_partitions() {
        let p = Problem::new(
            10,
            vec![
                Buffer::new("a", 0, 2, 1),
                Buffer::new("b", 1, 3, 1),
                Buffer::new("c", 3, 5, 1),
                Buffer::new("d", 4, 6, 1),
            ],
        )
        .unwrap();
        let s = run(&p);
        assert_eq!(s.partitions.len(), 2);
        assert_eq!(s.sections, 2);
    }

    #[test]
    fn gaps_split_spans_and_windows_set_distances() {
        let p = Problem::new(
            100,
            vec![
                Buffer::new("a", 0, 10, 8).with_gap(Gap {
                    lower: 3,
                    upper: 6,
                    window: Some(Window { lower: 0, upper: 2 }),
                }),
                Buffer::new("b", 4, 5, 5),
                Buffer::new("c", 0, 10, 3).with_gap(Gap {
                    lower: 2,
                    upper: 8,
                    window: None,
                }),
            ],
        )
        .unwrap();
        let s = run(&p);
        assert_eq!(s.spans(0).len(), 3);
        assert_eq!(s.spans(2).len(), 2);
        // b meets only a's window [0, 2): b above a needs 2, a above b needs 5.
        let (n, d) = s.overlaps(1);
        assert_eq!(n, &[0]);
        assert_eq!(d, Some(&[5][..]));
        let (n, d) = s.overlaps(0);
        let k = n.iter().position(|&x| x == 1).unwrap();
        assert_eq!(d.unwrap()[k], 2);
        // b and c never live together.
        assert!(!s.overlaps(2).0.contains(&1));
        assert_eq!(s.interleaving, 0);
        assert_eq!(crate::model::load::max_load(&p), 11);
    }

    #[test]
    fn interleaving_windows_are_counted() {
        // During the gap only a's upper half is live; b fits under it.
        let p = Problem::new(
            100,
            vec![
                Buffer::new("a", 0, 10, 10).with_gap(Gap {
                    lower: 0,
                    upper: 10,
                    window: Some(Window {
                        lower: 6,
                        upper: 10,
                    }),
                }),
                Buffer::new("b", 0, 10, 3),
            ],
        )
        .unwrap();
        assert_eq!(run(&p).interleaving, 1);
    }
}
