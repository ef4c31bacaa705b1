//! What a plan gives back ([`Outcome`]): how it ended, the placement and
//! its bounds, and, where asked, the buffers in conflict or each pool's
//! share.

use alloc::string::String;
#[cfg(feature = "constraints")]
use alloc::vec::Vec;
use core::fmt;

use super::options::Source;
use crate::deadline::Stop;
use crate::exact::Stats;
use crate::model::problem::Problem;
use crate::model::solution::Solution;

/// How planning ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Every buffer has an offset below the capacity.
    Solved,
    /// Proven: no placement fits the capacity.
    Infeasible,
    /// No placement found and no proof that none exists: the node limit
    /// ran out, or gap windows let some buffers interleave, which the
    /// search (stacking every pair) does not try, or the heuristics alone
    /// did not fit.
    NotFound,
    /// The timeout passed before an answer.
    TimedOut,
    /// The cancel flag was set before an answer.
    Cancelled,
}

/// The result of [`crate::plan()`].
#[derive(Clone, Debug)]
pub struct Outcome {
    /// How it ended.
    pub status: Status,
    /// The offsets, when solved.
    pub solution: Option<Solution>,
    /// A proven lower bound on the height of any placement.
    pub lower_bound: i64,
    /// Whether the solution's height is proven the lowest possible (with
    /// the penalty objective: whether what it pays is proven the least).
    pub optimal: bool,
    /// Where the solution came from.
    pub source: Option<Source>,
    /// Whether the timeout or the cancel flag cut the work short (a
    /// minimised placement may then not be the best).
    pub stopped: Option<Stop>,
    /// What the exact search did.
    pub stats: Stats,
    /// Improving restarts run: placements in a perturbed order, after the
    /// plain orders (which, like local repair and the coarse level, are
    /// not counted); `Options::restarts` bounds exactly this.
    pub restarts: u64,
    /// The lowest height of the heuristics' plain orders (each strategy's
    /// first placement), where the improving search started; `None` where
    /// none ran. How much of the gap from it to the max load the search
    /// closed is what the improvement is worth.
    pub plain_height: Option<i64>,
    /// When fitting was proven infeasible: buffers that cannot fit
    /// together (see `explain`).
    #[cfg(feature = "constraints")]
    pub conflict: Option<Conflict>,
    /// With pools: where each buffer went, and each pool's figures. The
    /// solution's offsets are then addresses: the pool's base plus the
    /// offset in it.
    #[cfg(feature = "constraints")]
    pub pooled: Option<Pooled>,
    /// With the penalty objective: what the placement pays, and a proven
    /// lower bound on what any placement below the capacity pays.
    #[cfg(feature = "constraints")]
    pub penalty: Option<PenaltyReport>,
}

/// What a placement pays in reuse penalties, and the least any can pay.
#[cfg(feature = "constraints")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PenaltyReport {
    /// The summed costs of the penalised pairs whose bytes meet.
    pub cost: i64,
    /// No placement below the capacity pays less (equal to `cost` when
    /// proven optimal).
    pub lower_bound: i64,
}

impl Outcome {
    /// Height of the solution (0 if there is none).
    pub fn height(&self, problem: &Problem) -> i64 {
        self.solution.as_ref().map_or(0, |s| s.height(problem))
    }

    pub(crate) fn empty(lower_bound: i64) -> Outcome {
        Outcome {
            status: Status::NotFound,
            solution: None,
            lower_bound,
            optimal: false,
            source: None,
            stopped: None,
            stats: Stats::default(),
            restarts: 0,
            plain_height: None,
            #[cfg(feature = "constraints")]
            conflict: None,
            #[cfg(feature = "constraints")]
            pooled: None,
            #[cfg(feature = "constraints")]
            penalty: None,
        }
    }

    pub(crate) fn stop(mut self, stop: Stop) -> Outcome {
        self.stopped = Some(stop);
        if self.solution.is_none() {
            self.status = match stop {
                Stop::TimedOut => Status::TimedOut,
                Stop::Cancelled => Status::Cancelled,
            };
        }
        self
    }
}

#[cfg(feature = "constraints")]
/// Buffers that cannot fit below the capacity together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// Their indices in the problem, increasing.
    pub buffers: Vec<usize>,
    /// Proven minimal: without any one of them the others fit.
    pub irreducible: bool,
}

/// What one pool holds.
#[cfg(feature = "constraints")]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PoolReport {
    /// The buffers placed in it, increasing.
    pub buffers: Vec<usize>,
    /// Its height: the highest offset + size in it (0 if empty).
    pub height: i64,
    /// A lower bound on its height for these buffers: their max load, or
    /// more where minimising proved it (a clique of separated buffers).
    pub lower_bound: i64,
    /// Those of its buffers that preferred another pool.
    pub spilled: Vec<usize>,
    /// What placed its buffers, where known.
    pub source: Option<Source>,
}

/// Where every buffer went.
#[cfg(feature = "constraints")]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pooled {
    /// The pool of each buffer (`u32::MAX`: none).
    pub pool_of: Vec<u32>,
    /// One report per pool.
    pub reports: Vec<PoolReport>,
    /// Buffers no pool could take, increasing (empty when solved).
    pub unplaced: Vec<usize>,
}

/// A short name of a placement's source, for reports.
pub fn describe(source: Option<Source>) -> String {
    match source {
        None => String::from("-"),
        Some(s) => {
            let mut out = String::new();
            let _ = fmt::Write::write_fmt(&mut out, format_args!("{s}"));
            out
        }
    }
}
