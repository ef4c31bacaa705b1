//! The canonical depth-first search over one partition, on an explicit
//! stack.
//!
//! A *key* orders the unplaced buffers: `(min offset, rank + 1)`. A node
//! places buffers in increasing key order, each at its min offset, and only
//! keys above the key of the buffer placed just before (canonical partial
//! solutions: offset-monotonic, then index-monotonic). Every other rule
//! prunes nodes that no jump-compacted solution passes through; see the
//! module documentation of [`crate::exact`].
//!
//! All state lives in arrays sized once; placing a buffer logs the old
//! values it overwrites, and backtracking replays the log. Nothing on the
//! hot path allocates once the arrays have grown to their working size.

use alloc::vec;
use alloc::vec::Vec;

use super::order::Orderings;
use super::params::Params;
use crate::base::trees::MaxTree;
use crate::deadline::{Poll, Stop};
use crate::exact::sweep::Sweep;

mod floors;
mod node;
mod propagate;

use floors::Floors;

/// `offset` of a buffer not placed yet.
pub(crate) const UNPLACED: i64 = -1;
/// `fixed` of a buffer free to go anywhere.
pub(crate) const FREE: i64 = -1;

/// How a run of the search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RunEnd {
    Solved,
    Infeasible,
    NodeLimit,
    Stopped(Stop),
}

/// An old value overwritten by a placement.
#[derive(Clone, Copy)]
enum Undo {
    /// The buffer was placed: unplace it, give back its totals and cuts.
    Placed(u32),
    MinOffset(u32, i64),
    Floor(u32, i64),
    /// A buffer's rank before a part was reordered.
    Rank(u32, u32),
    /// A node of the effective floors' tree: its lowest value before it
    /// rose (no buffer was left at it then).
    Top(u32, i64),
}

/// A set of unplaced buffers, `order[lo..lo + len]`, confined to sections
/// `[first, end)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Part {
    pub(crate) lo: u32,
    pub(crate) len: u32,
    pub(crate) first: u32,
    pub(crate) end: u32,
}

#[derive(Clone, Copy)]
enum Frame {
    /// A search node of a part. Candidates must have keys above `floor`;
    /// `cands[start..]` holds the next ones to try, from `next` on, and
    /// `more` says whether keys above the last of them were left out.
    Node {
        part: Part,
        floor: u128,
        min_height: i64,
        start: u32,
        next: u32,
        more: bool,
        hatless: bool,
        mark: u32,
    },
    /// Independent parts `parts[from..to]`, solved one after the other;
    /// `next` is the one being solved.
    Split { from: u32, to: u32, next: u32 },
}

/// Candidates collected per scan of a part: enough for most nodes, few
/// enough that the lists of all nodes on the stack stay O(buffers).
const BATCH: usize = 16;

enum Signal {
    Enter,
    Solved,
    Failed,
}

/// The search state for one problem at one capacity.
pub(crate) struct Search<'a> {
    sweep: &'a Sweep,
    params: &'a Params,
    size: &'a [i64],
    align: &'a [i64],
    capacity: i64,
    /// Per buffer: the offset it must take, or [`FREE`].
    fixed: Vec<i64>,
    orderings: Orderings<'a>,
    /// The ordering of the current run.
    ranking: usize,
    /// Scratch space for reordering a part.
    rerank_keys: Vec<([i128; 4], u32)>,
    rerank_values: Vec<u32>,
    /// Per buffer: where it is placed, or [`UNPLACED`].
    pub(crate) offset: Vec<i64>,
    /// Per buffer: the lowest offset it can take given the placed buffers
    /// (`i64::MAX` once placed).
    min_offset: Vec<i64>,
    /// Per section: the top of the highest placed piece.
    floor: Vec<i64>,
    /// Per section: the lowest min offset of an unplaced member
    /// (`i64::MAX` if none), its effective floor.
    floors: Floors,
    /// Per section: the sum of the unplaced members' windows.
    total: Vec<i64>,
    total_max: MaxTree,
    cuts: Vec<u32>,
    /// Buffers arranged so that every part is a contiguous slice.
    order: Vec<u32>,
    undo: Vec<Undo>,
    frames: Vec<Frame>,
    /// Candidate lists of the nodes on the stack: (key, buffer).
    cands: Vec<(u128, u32)>,
    /// Per buffer: its position in `order`.
    pos: Vec<u32>,
    parts: Vec<Part>,
    cut_points: Vec<u32>,
    pub(crate) nodes: u64,
    pub(crate) backtracks: u64,
    /// Member scans since the last poll (they happen deep inside `place`).
    scanned: u64,
    /// Set when a run stopped at the deadline without restoring the state.
    stopped: bool,
}

impl<'a> Search<'a> {
    pub(crate) fn new(
        sweep: &'a Sweep,
        params: &'a Params,
        size: &'a [i64],
        align: &'a [i64],
        fixed: Vec<i64>,
        capacity: i64,
        orderings: Orderings<'a>,
    ) -> Self {
        let n = size.len();
        let min_offset: Vec<i64> = fixed
            .iter()
            .map(|&f| if f == FREE { 0 } else { f })
            .collect();
        let mut order: Vec<u32> = (0..n as u32)
            .filter(|&b| sweep.hull[b as usize][0] < sweep.hull[b as usize][1])
            .collect();
        crate::base::sort::sort_by_key(&mut order, |&b| (sweep.hull[b as usize][0], b));
        let mut search = Search {
            sweep,
            params,
            size,
            align,
            capacity,
            fixed,
            orderings,
            ranking: 0,
            rerank_keys: Vec::new(),
            rerank_values: Vec::new(),
            offset: vec![UNPLACED; n],
            min_offset,
            floor: vec![0; sweep.sections],
            floors: Floors::default(),
            total: sweep.totals.clone(),
            total_max: MaxTree::new(&sweep.totals),
            cuts: sweep.cuts.clone(),
            order,
            undo: Vec::new(),
            frames: Vec::new(),
            cands: Vec::new(),
            pos: vec![0; n],
            parts: Vec::new(),
            cut_points: Vec::new(),
            nodes: 0,
            backtracks: 0,
            scanned: 0,
            stopped: false,
        };
        for (i, &b) in search.order.iter().enumerate() {
            search.pos[b as usize] = i as u32;
        }
        search
    }

    /// Builds the initial effective floors (polled once built).
    pub(crate) fn init(&mut self, poll: &mut Poll<'_>) -> Result<(), Stop> {
        let sweep = self.sweep;
        let (floors, work) = Floors::new(sweep.sections, &self.min_offset, |b| sweep.spans(b));
        self.floors = floors;
        poll.tick(1 + work)
    }

    /// The top-level parts, one per partition of the sweep, in time order.
    pub(crate) fn partitions(&self) -> Vec<Part> {
        let mut parts = Vec::with_capacity(self.sweep.partitions.len());
        let mut lo = 0usize;
        for &[first, end] in &self.sweep.partitions {
            let mut hi = lo;
            while hi < self.order.len() && self.sweep.hull[self.order[hi] as usize][0] < end {
                hi += 1;
            }
            parts.push(Part {
                lo: lo as u32,
                len: (hi - lo) as u32,
                first,
                end,
            });
            lo = hi;
        }
        parts
    }

    /// The buffers of a part.
    pub(crate) fn members(&self, part: Part) -> &[u32] {
        &self.order[part.lo as usize..(part.lo + part.len) as usize]
    }

    /// Gives ranking `into` the ranks ranking `from` gives the members of
    /// `part`, shaken: each member's rank raised by a random amount below
    /// `spread`, then the same rank values dealt out again in that order
    /// (so buffers less than `spread` apart may swap, others keep their
    /// order). Only between runs; `into` must not be reranked by totals
    /// (its preorder has no keys).
    pub(crate) fn shake(
        &mut self,
        part: Part,
        (from, into): (usize, usize),
        rng: &mut crate::base::rng::Rng,
        spread: u64,
    ) {
        debug_assert!(self.undo.is_empty());
        let lo = part.lo as usize;
        // (The reranking's scratch and sorts serve: one copy of each in
        // the tiny build.)
        self.rerank_keys.clear();
        self.rerank_values.clear();
        for &b in &self.order[lo..lo + part.len as usize] {
            let rank = self.orderings.ranks[from][b as usize];
            // (`spread` is a power of two.)
            let key = i128::from(rank) + i128::from(rng.next() & (spread - 1));
            self.rerank_keys.push(([key, 0, 0, 0], b));
            self.rerank_values.push(rank);
        }
        crate::base::sort::sort(&mut self.rerank_keys);
        crate::base::sort::sort(&mut self.rerank_values);
        for (&(_, b), &r) in self.rerank_keys.iter().zip(&self.rerank_values) {
            self.orderings.ranks[into][b as usize] = r;
        }
    }

    /// Fixes buffer `b` at `offset` ([`FREE`] to release it). Only between
    /// runs, with `b` unplaced.
    pub(crate) fn set_fixed(&mut self, b: u32, offset: i64) {
        let bi = b as usize;
        debug_assert!(self.offset[bi] == UNPLACED && self.undo.is_empty());
        self.fixed[bi] = offset;
        self.min_offset[bi] = if offset == FREE { 0 } else { offset };
        self.floors.reset(b, &self.min_offset);
    }

    /// Searches `part` with ordering `ranking`, visiting at most `limit`
    /// nodes. On success the part's buffers stay placed; otherwise the
    /// state is as before.
    ///
    /// One function on purpose: the explicit-stack loop of the search, whose
    /// state (frame, counters, the poll) stays in registers across nodes;
    /// the per-node steps it calls are in node.rs.
    pub(crate) fn run(
        &mut self,
        part: Part,
        ranking: usize,
        limit: u64,
        poll: &mut Poll<'_>,
    ) -> RunEnd {
        assert!(!self.stopped, "a stopped search cannot run again");
        debug_assert!(self.frames.is_empty() && self.undo.is_empty());
        self.ranking = ranking;
        let first_node = self.nodes;
        self.frames.push(self.node(part, 0));
        let mut signal = Signal::Enter;
        let end = loop {
            let Some(&frame) = self.frames.last() else {
                break match signal {
                    Signal::Solved => RunEnd::Solved,
                    _ => RunEnd::Infeasible,
                };
            };
            match frame {
                Frame::Split { from, to, next } => {
                    let next = match signal {
                        Signal::Enter => next,
                        Signal::Solved => next + 1,
                        Signal::Failed => {
                            // The node that split undoes everything since.
                            self.parts.truncate(from as usize);
                            self.frames.pop();
                            continue;
                        }
                    };
                    if next == to {
                        self.parts.truncate(from as usize);
                        self.frames.pop();
                        signal = Signal::Solved;
                    } else {
                        *self.frames.last_mut().unwrap() = Frame::Split { from, to, next };
                        let p = self.parts[next as usize];
                        self.frames.push(self.node(p, 0));
                        signal = Signal::Enter;
                    }
                }
                Frame::Node {
                    part, mark, start, ..
                } => {
                    match signal {
                        Signal::Solved => {
                            self.cands.truncate(start as usize);
                            self.frames.pop();
                            continue;
                        }
                        Signal::Enter => {
                            self.nodes += 1;
                            if self.nodes - first_node > limit {
                                break RunEnd::NodeLimit;
                            }
                            if let Err(stop) = poll.tick(1 + part.len as u64) {
                                break RunEnd::Stopped(stop);
                            }
                            if part.len == 0 {
                                self.frames.pop();
                                signal = Signal::Solved;
                                continue;
                            }
                            self.enter_node();
                        }
                        Signal::Failed => {
                            if let Err(stop) = self.undo_to(mark as usize, poll) {
                                break RunEnd::Stopped(stop);
                            }
                            if let Frame::Node { hatless: true, .. } = frame {
                                self.cands.truncate(start as usize);
                                self.frames.pop();
                                self.backtracks += 1;
                                continue;
                            }
                            if let Err(stop) = poll.tick(1) {
                                break RunEnd::Stopped(stop);
                            }
                        }
                    }
                    signal = match self.try_candidates(poll) {
                        Ok(signal) => signal,
                        Err(stop) => break RunEnd::Stopped(stop),
                    };
                }
            }
        };
        let end = match end {
            RunEnd::Solved => {
                self.undo.clear();
                end
            }
            RunEnd::Stopped(_) => end,
            _ => match self.undo_to(0, poll) {
                Ok(()) => {
                    self.frames.clear();
                    self.parts.clear();
                    self.cands.clear();
                    end
                }
                Err(stop) => RunEnd::Stopped(stop),
            },
        };
        // A stopped search is over: its state is left as it is rather than
        // spend time past the deadline restoring it.
        self.stopped = matches!(end, RunEnd::Stopped(_));
        end
    }
}
