//! The penalty objective: fit the capacity (every pool), then pay as
//! little as possible for the penalised pairs whose bytes meet.
//!
//! A branch and bound over which penalised pairs are kept apart. A node
//! separates some pairs (`apart`: declared as separations on a copy of the
//! problem) and pays for others (`paid`: the node's bound is their summed
//! cost); every other pair is free. Fitting the node's problem either
//! proves that nothing fits (the node and all below it are dropped: more
//! separations only make it harder) or gives a placement. If no pair
//! shares bytes there except paid ones, that placement costs at most the
//! node's bound, which no placement below the node can beat: the node is
//! done. Otherwise the dearest such pair splits the node in two: kept
//! apart, or paid for (the paid child keeps the placement, which is still
//! valid there, and needs no new fit).
//!
//! Complete: any placement `q` below the capacity follows one path down
//! (at each split, the child where `q` keeps the pair apart or pays for
//! it), and that path ends at a node done with a placement costing at
//! most what `q` pays, or at a node whose bound, at most what `q` pays,
//! was already met. So when the search ends, the best placement found
//! is optimal; stopped early, the least bound among the nodes left open
//! (and those whose fit could neither place nor refuse) is a proven
//! lower bound. The proofs are the fitting's own: exact where the exact
//! search can refuse (see [`crate::exact`]), and otherwise the search
//! says it is not proven.

use alloc::vec::Vec;
use core::time::Duration;

use super::arena::plan_arena;
#[cfg(feature = "heuristics")]
use super::options::Method;
use super::options::{Objective, Options, Source};
use super::outcome::{Outcome, PenaltyReport, Pooled, Status};
use super::spill::plan_pools;
use crate::deadline::Deadline;
use crate::model::problem::Problem;
use crate::model::reuse;
use crate::model::solution::Solution;

/// Exact-search nodes one fit may take when there is no timeout (a fit
/// that runs out neither places nor refuses: its node's bound stays open).
const FIT_NODES: u64 = 200_000;
/// Fits the whole search may make when there is no timeout.
const FITS: u64 = 2_000;

/// What fitting a node's problem gave.
enum Probe {
    /// A placement below the capacity (with pools, and which pool holds
    /// each buffer).
    Found(Vec<i64>, Option<Source>, Option<Pooled>),
    /// Proven: nothing fits.
    Infeasible,
    /// Neither, within its share of the time or nodes.
    Unknown,
}

/// A node of the search: pairs kept apart, pairs paid for (as indices into
/// the penalised pairs), what those cost, and a placement of the node's
/// problem when one is known.
struct Node {
    apart: Vec<u32>,
    paid: Vec<u32>,
    bound: i64,
    placement: Option<Vec<i64>>,
}

pub(super) fn plan_penalty(problem: &Problem, options: &Options) -> Outcome {
    let deadline = options.deadline();
    // The fits report no progress of their own: their heights are not
    // what this objective is after (a caller's cancel flag still stops
    // them).
    let fit = Options {
        objective: Objective::Fit,
        #[cfg(feature = "heuristics")]
        progress: None,
        ..options.clone()
    };
    // The root: the problem as it is. Whatever it says stands when it
    // places nothing (infeasible, stopped, not found).
    let mut outcome = place(problem, &fit, &deadline, false);
    outcome.stats.elapsed = deadline.elapsed();
    // (With pools, a plan that could not place every buffer may still
    // hold the placement of those it did: that is no root either.)
    let root = match (outcome.status, outcome.solution.as_ref()) {
        (Status::Solved, Some(s)) => s.offsets.clone(),
        _ => return outcome,
    };
    let pooled = outcome.pooled.take();
    let mut search = Search {
        problem,
        pairs: problem.penalties().collect(),
        fit: (&fit, &deadline),
        best: Best {
            cost: reuse::cost(problem, &root),
            offsets: root.clone(),
            source: outcome.source,
            pooled,
        },
        unresolved: i64::MAX,
        floor: crate::graph::priced::priced_clique_bound(problem, &deadline),
        fits: 0,
        nodes: 0,
    };
    #[cfg(feature = "heuristics")]
    {
        search.first_fit();
        search.priced(false);
    }
    // Timed, the branch and bound gets half of what is left; if it has not
    // proven the best by then, the priced search, with kicks, has the rest
    // (untimed, the branch and bound's own limits end it).
    let bound_until = match deadline.remaining() {
        Some(left) => deadline.sooner(left / 2),
        None => deadline,
    };
    let lower_bound = search.run(root, &bound_until);
    #[cfg(feature = "heuristics")]
    let lower_bound = match deadline.remaining() {
        Some(_) if lower_bound < search.best.cost && deadline.check().is_ok() => {
            search.priced(true);
            lower_bound.min(search.best.cost)
        }
        _ => lower_bound,
    };
    let best = search.best;
    outcome.stats.nodes += search.nodes;
    outcome.penalty = Some(PenaltyReport {
        cost: best.cost,
        lower_bound,
    });
    outcome.optimal = lower_bound >= best.cost;
    outcome.solution = Some(Solution {
        offsets: best.offsets,
    });
    outcome.source = best.source;
    // The pools of the placement kept (a fit below the root may have
    // shared the buffers out otherwise).
    outcome.pooled = best.pooled;
    if let Err(stop) = deadline.check() {
        outcome = outcome.stop(stop);
    }
    outcome.stats.elapsed = deadline.elapsed();
    outcome
}

/// The placement that pays least so far.
struct Best {
    cost: i64,
    offsets: Vec<i64>,
    source: Option<Source>,
    pooled: Option<Pooled>,
}

/// The branch and bound's state.
struct Search<'a> {
    problem: &'a Problem,
    /// The penalised pairs, in increasing order of the pair.
    pairs: Vec<(usize, usize, i64)>,
    fit: (&'a Options, &'a Deadline<'a>),
    best: Best,
    /// The least bound of the nodes whose fit said neither yes nor no.
    unresolved: i64,
    /// A bound proven before the search: cliques too heavy to lie apart
    /// (see [`crate::graph::priced`]).
    floor: i64,
    fits: u64,
    /// The exact search's nodes in all fits.
    nodes: u64,
}

impl Search<'_> {
    /// Keeps `offsets` if it pays less than the best.
    fn offer(&mut self, offsets: &[i64], source: Option<Source>, pooled: Option<&Pooled>) {
        let cost = reuse::cost(self.problem, offsets);
        if cost < self.best.cost {
            self.best = Best {
                cost,
                offsets: offsets.to_vec(),
                source,
                pooled: pooled.cloned(),
            };
        }
    }

    /// First-fit's own placement as a candidate, so that the answer never
    /// pays more than it (the root may come from another strategy).
    #[cfg(feature = "heuristics")]
    fn first_fit(&mut self) {
        let first_fit = Options {
            method: Method::Heuristic(crate::heuristic::Strategy::FirstFit),
            restarts: Some(0),
            ..self.fit.0.clone()
        };
        let candidate = place(self.problem, &first_fit, self.fit.1, false);
        if let (Status::Solved, Some(s)) = (candidate.status, &candidate.solution) {
            self.offer(&s.offsets, candidate.source, candidate.pooled.as_ref());
        }
    }

    /// The priced search (see [`crate::heuristic::priced`]) from the best
    /// placement so far, each buffer kept in its pool. Timed, without
    /// `kicks` it may take three quarters of what is left and stops sooner
    /// when it stalls, leaving the branch and bound time to prove; with
    /// them it shakes the best placement up at each stall and goes on
    /// until the deadline. Untimed, its steps are bounded by the
    /// problem's size.
    #[cfg(feature = "heuristics")]
    fn priced(&mut self, kicks: bool) {
        use crate::heuristic::priced::{improve, Effort};
        if self.best.cost == 0 {
            return;
        }
        let pool_of = match (&self.best.pooled, self.problem.pools().is_empty()) {
            (_, true) => None,
            (Some(pooled), false) => Some(pooled.pool_of.clone()),
            (None, false) => return,
        };
        let (options, deadline) = self.fit;
        let n = self.problem.len() as u64;
        let (deadline, steps) = match deadline.remaining() {
            Some(_) if kicks => (*deadline, u64::MAX),
            Some(left) => (deadline.sooner(left * 3 / 4), u64::MAX),
            None => (*deadline, 200 * n + 20_000),
        };
        let effort = Effort {
            steps,
            stall: 50 * n + 5_000,
            kicks,
        };
        let start = self.best.offsets.clone();
        let pooled = self.best.pooled.clone();
        let found = improve(
            self.problem,
            &start,
            pool_of.as_deref(),
            options.seed,
            &deadline,
            effort,
        );
        if let Some((offsets, _)) = found {
            let pooled = pooled.map(|p| moved_in_pools(self.problem, p, &offsets));
            self.offer(&offsets, Some(Source::Priced), pooled.as_ref());
        }
    }

    /// Searches from the root (the problem as it is, placed at `root`);
    /// returns the proven lower bound on what any placement pays.
    fn run(&mut self, root: Vec<i64>, deadline: &Deadline<'_>) -> i64 {
        let timed = deadline.remaining().is_some();
        let mut open = alloc::vec![Node {
            apart: Vec::new(),
            paid: Vec::new(),
            bound: 0,
            placement: Some(root),
        }];
        while let Some(node) = open.pop() {
            if self.floor >= self.best.cost {
                return self.floor;
            }
            if node.bound >= self.best.cost {
                continue;
            }
            if deadline.check().is_err() || (!timed && self.fits >= FITS) {
                open.push(node);
                break;
            }
            let placement = match node.placement {
                Some(placement) => placement,
                None => {
                    self.fits += 1;
                    match probe(
                        self.problem,
                        &self.pairs,
                        &node.apart,
                        self.fit,
                        &mut self.nodes,
                    ) {
                        Probe::Found(offsets, source, pooled) => {
                            self.offer(&offsets, source, pooled.as_ref());
                            offsets
                        }
                        Probe::Infeasible => continue,
                        Probe::Unknown => {
                            self.unresolved = self.unresolved.min(node.bound);
                            continue;
                        }
                    }
                }
            };
            let node = Node {
                placement: Some(placement),
                ..node
            };
            self.split(node, &mut open);
        }
        let left = open.iter().map(|n| n.bound).min().unwrap_or(i64::MAX);
        self.best
            .cost
            .min(left)
            .min(self.unresolved)
            .max(self.floor)
    }

    /// Splits `node` (with its placement) on the dearest pair sharing bytes
    /// there that the node does not pay: kept apart (a fit, searched first:
    /// it pays nothing more) or paid for (the same placement stands).
    /// Nothing to split on: the node is done, nothing below it pays less.
    fn split(&self, node: Node, open: &mut Vec<Node>) {
        let Some(placement) = node.placement else {
            return;
        };
        let split = reuse::sharing(self.problem, &placement)
            .into_iter()
            .filter_map(|(a, b, cost)| {
                let k = self
                    .pairs
                    .binary_search_by(|p| (p.0, p.1).cmp(&(a, b)))
                    .ok()? as u32;
                (!node.paid.contains(&k)).then_some((cost, k))
            })
            .max();
        let Some((cost, k)) = split else {
            return;
        };
        let mut paid = node.paid.clone();
        paid.push(k);
        open.push(Node {
            apart: node.apart.clone(),
            paid,
            bound: node.bound.saturating_add(cost),
            placement: Some(placement),
        });
        let mut apart = node.apart;
        apart.push(k);
        open.push(Node {
            apart,
            paid: node.paid,
            bound: node.bound,
            placement: None,
        });
    }
}

/// `pooled` for the same buffers in the same pools at `offsets` (moved
/// by the priced search): each pool's height again, and its source.
#[cfg(feature = "heuristics")]
fn moved_in_pools(problem: &Problem, mut pooled: Pooled, offsets: &[i64]) -> Pooled {
    let (buffers, pools) = (problem.buffers(), problem.pools());
    for (report, pool) in pooled.reports.iter_mut().zip(pools) {
        report.height = report
            .buffers
            .iter()
            .map(|&b| offsets[b] - pool.base + buffers[b].size)
            .max()
            .unwrap_or(0);
        report.source = Some(Source::Priced);
    }
    pooled
}

/// Fits `problem` with the pairs `apart` (indices into `pairs`) separated;
/// adds the exact search's nodes to `nodes`.
fn probe(
    problem: &Problem,
    pairs: &[(usize, usize, i64)],
    apart: &[u32],
    (fit, deadline): (&Options, &Deadline<'_>),
    nodes: &mut u64,
) -> Probe {
    let mut separated = problem.clone();
    for &k in apart {
        let (a, b, _) = pairs[k as usize];
        // A pair that cannot be declared apart (colocated: it always
        // shares) has no placement that keeps it apart.
        if separated.separate(&[a, b]).is_err() {
            return Probe::Infeasible;
        }
    }
    let outcome = place(&separated, fit, deadline, true);
    *nodes += outcome.stats.nodes;
    match (outcome.status, outcome.solution) {
        (Status::Solved, Some(s)) => Probe::Found(s.offsets, outcome.source, outcome.pooled),
        (Status::Infeasible, _) => Probe::Infeasible,
        _ => Probe::Unknown,
    }
}

/// Fits `problem` (in its pools, if any) within the time `deadline` has
/// left; a `share` of it only (a quarter) when other nodes wait, so that
/// one hard node does not end the search. Without a timeout a node's
/// exact search stops after `FIT_NODES`.
fn place(problem: &Problem, fit: &Options, deadline: &Deadline<'_>, share: bool) -> Outcome {
    let mut options = fit.clone();
    match deadline.remaining() {
        Some(left) => {
            let left = if share { left / 4 } else { left };
            options.timeout = Some(left.max(Duration::from_millis(1)));
        }
        None if share => {
            let limit = options.solver.node_limit.unwrap_or(FIT_NODES);
            options.solver.node_limit = Some(limit.min(FIT_NODES));
        }
        None => {}
    }
    match problem.pools().is_empty() {
        true => plan_arena(problem, &options),
        false => plan_pools(problem, &options),
    }
}

#[cfg(test)]
mod tests;
