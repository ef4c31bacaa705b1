//! The spilling step: planning over several memory pools (see
//! `crate::model::pools`), each pool's share planned as one arena.
//!
//! Buffers move as units (a colocation group is one unit; it may go only
//! to the pools all its members list). Every unit starts in its preferred
//! pool. Each pool is fitted with the full planner; when its units do not
//! all fit, the longest prefix that does (in order of preference rank,
//! then size, largest first: the preferred memory holds as many bytes of
//! those that prefer it as it can) is found by bisection, up to 16 of the
//! units after it are tried one by one (a smaller one may fit where a
//! larger did not), and the rest spill to their next pool. Pools that receive units are fitted again,
//! until nothing moves. If units are left with no pool, a search over the
//! assignments (preferred pools first, each pool checked by the planner)
//! finds one or proves that none exists, within the deadline (without
//! one, within four times what the greedy took). Minimising
//! then lowers each pool's height, in the pools' order.

use alloc::vec;
use alloc::vec::Vec;
use core::time::Duration;

use super::arena::plan_arena as plan;
use super::options::{Objective, Options, Source};
use super::outcome::{Outcome, PoolReport, Pooled, Status};
use crate::model::problem::Problem;
use crate::model::solution::Solution;

/// Nodes one fitting probe may use when there is no timeout.
const PROBE_NODES: u64 = 1_000_000;
/// Probes the search over assignments may make.
const SEARCH_PROBES: u64 = 20_000;

/// The units and where they may go.
struct Units {
    /// Members of each unit.
    members: Vec<Vec<usize>>,
    /// Pools each unit may go to, preferred first.
    allowed: Vec<Vec<u32>>,
    /// Total size, to order units in a pool.
    size: Vec<i64>,
}

impl Units {
    fn new(problem: &Problem) -> Units {
        let n = problem.len();
        let group = problem.links().group_index(n);
        let mut members: Vec<Vec<usize>> = Vec::new();
        let mut seen = vec![false; problem.colocations().len()];
        for (i, &g) in group.iter().enumerate() {
            match g {
                u32::MAX => members.push(vec![i]),
                g if !seen[g as usize] => {
                    seen[g as usize] = true;
                    members.push(
                        problem.colocations()[g as usize]
                            .iter()
                            .map(|&m| m as usize)
                            .collect(),
                    );
                }
                _ => {}
            }
        }
        let pools = problem.pools();
        let allowed = members
            .iter()
            .map(|ms| {
                let mut list = problem.pools_of(ms[0]);
                // Pools every member lists and is small enough for.
                list.retain(|p| {
                    ms.iter().all(|&m| {
                        problem.lists_pool(m, *p)
                            && problem.buffers()[m].size <= pools[*p as usize].capacity
                    })
                });
                // A fixed buffer stays in the pool it lists first, if its
                // offset suits it (the unit with it).
                let fixed = ms.iter().find_map(|&m| problem.buffers()[m].offset);
                if let Some(offset) = fixed {
                    let firsts: Vec<Option<u32>> = ms
                        .iter()
                        .filter(|&&m| problem.buffers()[m].offset.is_some())
                        .map(|&m| problem.first_pool(m))
                        .collect();
                    let first = firsts[0];
                    list.retain(|&p| Some(p) == first && firsts.iter().all(|&f| f == first));
                    list.retain(|&p| {
                        let pool = &pools[p as usize];
                        ms.iter().all(|&m| {
                            let b = &problem.buffers()[m];
                            offset % pool.alignment == 0 && offset + b.size <= pool.capacity
                        })
                    });
                }
                list
            })
            .collect();
        let size = members
            .iter()
            .map(|ms| {
                ms.iter()
                    .map(|&m| problem.buffers()[m].size)
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        Units {
            members,
            allowed,
            size,
        }
    }
}

/// Fits pools one by one with the planner.
struct Fitter<'a> {
    problem: &'a Problem,
    options: Options,
    units: Units,
    probes: u64,
    /// Placements the probes' plans ran, in all.
    restarts: u64,
}

impl Fitter<'_> {
    /// The pool-relative offsets of `units` in pool `p`, if they all fit
    /// (`Some(None)`: proven not to fit; `None`: not known). A probe ends
    /// by `deadline`: it gets the time left, not the whole timeout (the
    /// bisection makes several probes; each once had the whole timeout,
    /// and a plan over two pools took 6.7 s of a 1 s timeout).
    fn fit(
        &mut self,
        p: usize,
        units: &[usize],
        deadline: &crate::deadline::Deadline<'_>,
    ) -> Option<Option<Fitted>> {
        deadline.check().ok()?;
        self.probes += 1;
        let mut buffers: Vec<usize> = units
            .iter()
            .flat_map(|&u| self.units.members[u].iter().copied())
            .collect();
        buffers.sort_unstable();
        if buffers.is_empty() {
            return Some(Some(Fitted::default()));
        }
        let pool = &self.problem.pools()[p];
        let sub = self
            .problem
            .subproblem(&buffers, pool.capacity, pool.alignment)
            .ok()?;
        // The max load is a proof, and cheap: most probes that fail, fail so.
        if crate::model::load::max_load(&sub) > pool.capacity {
            return Some(None);
        }
        // With several pools, half of it: what does not fit here may
        // still go elsewhere, and that takes probes too.
        let mut options = self.options.clone();
        if let Some(left) = deadline.remaining() {
            let share = if self.problem.pools().len() > 1 {
                left / 2
            } else {
                left
            };
            options.timeout = Some(share.max(Duration::from_millis(1)));
        }
        let outcome = plan(&sub, &options);
        self.restarts += outcome.restarts;
        match outcome.status {
            Status::Solved => outcome.solution.map(|s| {
                Some(Fitted {
                    offsets: s.offsets,
                    source: outcome.source,
                })
            }),
            Status::Infeasible => Some(None),
            _ => None,
        }
    }

    /// The longest prefix of `order` that fits pool `p`, with its
    /// offsets (of the prefix's buffers, increasing).
    fn longest_prefix(
        &mut self,
        p: usize,
        order: &[usize],
        deadline: &crate::deadline::Deadline<'_>,
    ) -> (usize, Fitted) {
        if let Some(Some(fitted)) = self.fit(p, order, deadline) {
            return (order.len(), fitted);
        }
        let (mut lo, mut hi) = (0, order.len());
        let mut best = Fitted::default();
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            match self.fit(p, &order[..mid], deadline) {
                Some(Some(fitted)) => {
                    lo = mid;
                    best = fitted;
                }
                _ => hi = mid,
            }
        }
        (lo, best)
    }

    /// After the prefix `order[..fit]`, tries the units left one by one
    /// (at most [`ADD_PROBES`] probes), keeping each that still fits: a
    /// smaller buffer may fit where a larger one did not. Returns the
    /// order with the kept units first, their number and offsets.
    fn add_more(
        &mut self,
        p: usize,
        mut order: Vec<usize>,
        mut fit: usize,
        mut offsets: Fitted,
        deadline: &crate::deadline::Deadline<'_>,
    ) -> (Vec<usize>, usize, Fitted) {
        let mut probes = 0;
        let mut k = fit;
        while k < order.len() && probes < ADD_PROBES && deadline.check().is_ok() {
            probes += 1;
            order.swap(fit, k);
            match self.fit(p, &order[..=fit], deadline) {
                Some(Some(o)) => {
                    offsets = o;
                    fit += 1;
                }
                _ => order.swap(fit, k),
            }
            k += 1;
        }
        (order, fit, offsets)
    }
}

/// Units a pool tries to take back after its longest prefix, each round.
const ADD_PROBES: usize = 16;

/// Plans a problem with pools.
pub(crate) fn plan_pools(problem: &Problem, options: &Options) -> Outcome {
    let deadline = options.deadline();
    let mut probe = options.clone();
    probe.objective = Objective::Fit;
    #[cfg(feature = "heuristics")]
    {
        probe.progress = None;
    }
    if options.timeout.is_none_or(|t| t.is_zero()) {
        probe.solver.node_limit = Some(probe.solver.node_limit.unwrap_or(PROBE_NODES));
    }
    let mut fitter = Fitter {
        problem,
        options: probe,
        units: Units::new(problem),
        probes: 0,
        restarts: 0,
    };
    let pools = problem.pools().len();
    let count = fitter.units.members.len();
    let mut rank = vec![0usize; count];
    let pool_of_unit =
        |u: usize, rank: &[usize], units: &Units| units.allowed[u].get(rank[u]).copied();
    let mut dirty = vec![true; pools];
    let mut offsets_in: Vec<Share> = vec![Share::default(); pools];
    // Greedy: fit each pool, spill what does not fit, until nothing moves.
    while dirty.iter().any(|&d| d) && deadline.check().is_ok() {
        for p in 0..pools {
            if !dirty[p] {
                continue;
            }
            dirty[p] = false;
            let mut order: Vec<usize> = (0..count)
                .filter(|&u| pool_of_unit(u, &rank, &fitter.units) == Some(p as u32))
                .collect();
            order.sort_by_key(|&u| (rank[u], core::cmp::Reverse(fitter.units.size[u]), u));
            let (fit, offsets) = fitter.longest_prefix(p, &order, &deadline);
            let (order, fit, offsets) = fitter.add_more(p, order, fit, offsets, &deadline);
            for &u in &order[fit..] {
                rank[u] += 1;
                if let Some(q) = pool_of_unit(u, &rank, &fitter.units) {
                    dirty[q as usize] = true;
                }
            }
            offsets_in[p] = pairs(&fitter.units, &order[..fit], offsets);
        }
    }
    let mut placed: Vec<Option<u32>> = (0..count)
        .map(|u| pool_of_unit(u, &rank, &fitter.units))
        .collect();
    let mut proven_impossible = false;
    if placed.iter().any(|p| p.is_none()) && deadline.check().is_ok() {
        // The search may take, without a timeout, four times what the
        // greedy took (it is exponential: it settles small problems).
        let greedy = deadline.elapsed();
        let budget = deadline.sooner((greedy * 4).max(Duration::from_millis(100)));
        let limit = match options.timeout.filter(|t| !t.is_zero()) {
            Some(_) => &deadline,
            None => &budget,
        };
        match search(&mut fitter, limit) {
            Search::Found(assignment, per_pool) => {
                placed = assignment.into_iter().map(Some).collect();
                offsets_in = per_pool;
            }
            Search::None => proven_impossible = true,
            Search::Unknown => {}
        }
    }
    finish(
        &fitter,
        options,
        &placed,
        offsets_in,
        proven_impossible,
        &deadline,
    )
}

/// A pool's placement of some units: the offsets of their buffers
/// (increasing, as in their subproblem), and what placed them.
#[derive(Clone, Default)]
struct Fitted {
    offsets: Vec<i64>,
    source: Option<Source>,
}

/// What a pool holds: each buffer with its offset in the pool, and what
/// placed them.
#[derive(Clone, Default)]
struct Share {
    offsets: Vec<(usize, i64)>,
    source: Option<Source>,
}

/// The buffers of units `kept` with their `fitted` offsets.
fn pairs(units: &Units, kept: &[usize], fitted: Fitted) -> Share {
    let mut buffers: Vec<usize> = kept
        .iter()
        .flat_map(|&u| units.members[u].iter().copied())
        .collect();
    buffers.sort_unstable();
    Share {
        offsets: buffers.into_iter().zip(fitted.offsets).collect(),
        source: fitted.source,
    }
}

enum Search {
    Found(Vec<u32>, Vec<Share>),
    None,
    Unknown,
}

/// Assigns every unit a pool by depth-first search, preferred pools first.
fn search(fitter: &mut Fitter<'_>, deadline: &crate::deadline::Deadline<'_>) -> Search {
    let count = fitter.units.members.len();
    let pools = fitter.problem.pools().len();
    // Most constrained units first, then the largest.
    let mut order: Vec<usize> = (0..count).collect();
    order.sort_by_key(|&u| {
        (
            fitter.units.allowed[u].len(),
            core::cmp::Reverse(fitter.units.size[u]),
        )
    });
    let mut assignment = vec![u32::MAX; count];
    let mut in_pool: Vec<Vec<usize>> = vec![Vec::new(); pools];
    let mut last: Vec<Fitted> = vec![Fitted::default(); pools];
    let mut complete = true;
    // Explicit stack: (position in order, next choice to try).
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
    while let Some(&mut (k, ref mut choice)) = stack.last_mut() {
        if k == count {
            let per_pool = (0..pools)
                .map(|p| pairs(&fitter.units, &in_pool[p], core::mem::take(&mut last[p])))
                .collect();
            return Search::Found(assignment, per_pool);
        }
        let u = order[k];
        // Undo this unit's previous choice, if any.
        if assignment[u] != u32::MAX {
            let p = assignment[u] as usize;
            in_pool[p].retain(|&x| x != u);
            assignment[u] = u32::MAX;
        }
        if *choice >= fitter.units.allowed[u].len() {
            stack.pop();
            continue;
        }
        if deadline.check().is_err() || fitter.probes >= SEARCH_PROBES {
            return Search::Unknown;
        }
        let p = fitter.units.allowed[u][*choice] as usize;
        *choice += 1;
        in_pool[p].push(u);
        let members = in_pool[p].clone();
        match fitter.fit(p, &members, deadline) {
            Some(Some(fitted)) => {
                assignment[u] = p as u32;
                last[p] = fitted;
                stack.push((k + 1, 0));
            }
            Some(None) => in_pool[p].retain(|&x| x != u),
            None => {
                complete = false;
                in_pool[p].retain(|&x| x != u);
            }
        }
    }
    if complete {
        Search::None
    } else {
        Search::Unknown
    }
}

/// Builds the outcome: offsets as addresses (pool base + offset), the
/// pools' reports; minimising lowers each pool first.
fn finish(
    fitter: &Fitter<'_>,
    options: &Options,
    placed: &[Option<u32>],
    offsets_in: Vec<Share>,
    proven_impossible: bool,
    deadline: &crate::deadline::Deadline<'_>,
) -> Outcome {
    // Without the heuristics there is no minimising to do.
    #[cfg(not(feature = "heuristics"))]
    let _ = options;
    #[cfg(feature = "heuristics")]
    let mut offsets_in = offsets_in;
    let (problem, units) = (fitter.problem, &fitter.units);
    #[cfg(feature = "heuristics")]
    let mut restarts = fitter.restarts;
    #[cfg(not(feature = "heuristics"))]
    let restarts = fitter.restarts;
    let n = problem.len();
    let pools = problem.pools();
    let mut pool_of = vec![u32::MAX; n];
    for (u, p) in placed.iter().enumerate() {
        if let Some(p) = p {
            for &m in &units.members[u] {
                pool_of[m] = *p;
            }
        }
    }
    let unplaced: Vec<usize> = (0..n).filter(|&i| pool_of[i] == u32::MAX).collect();
    let mut reports = vec![PoolReport::default(); pools.len()];
    // Minimising, what each pool's plan proved: a bound at least its max
    // load (a clique of separated buffers may raise it), and whether its
    // height met that bound.
    let mut proven: Vec<(i64, bool)> = vec![(0, false); pools.len()];
    for (p, pool) in pools.iter().enumerate() {
        let buffers: Vec<usize> = (0..n).filter(|&i| pool_of[i] == p as u32).collect();
        let sub = problem
            .subproblem(&buffers, pool.capacity, pool.alignment)
            .ok();
        #[cfg(feature = "heuristics")]
        if let (Some(sub), Objective::Minimize, true) = (
            &sub,
            options.objective,
            unplaced.is_empty() && !buffers.is_empty(),
        ) {
            // This pool's share of the time left.
            let mut o = options.clone();
            o.progress = None;
            if let Some(left) = deadline.remaining() {
                let share = (pools.len() - p) as u32;
                o.timeout = Some((left / share).max(Duration::from_millis(1)));
            }
            let outcome = plan(sub, &o);
            proven[p] = (outcome.lower_bound, outcome.optimal);
            restarts += outcome.restarts;
            if let Some(s) = outcome.solution {
                offsets_in[p] = Share {
                    offsets: buffers.iter().copied().zip(s.offsets).collect(),
                    source: outcome.source,
                };
            }
        }
        let height = offsets_in[p]
            .offsets
            .iter()
            .map(|&(b, o)| o + problem.buffers()[b].size)
            .max()
            .unwrap_or(0);
        let spilled = buffers
            .iter()
            .copied()
            .filter(|&b| problem.first_pool(b) != Some(p as u32))
            .collect();
        let load = sub.as_ref().map_or(0, crate::model::load::max_load);
        if buffers.is_empty() {
            proven[p] = (0, true);
        }
        reports[p] = PoolReport {
            lower_bound: load.max(proven[p].0),
            buffers,
            height,
            spilled,
            source: offsets_in[p].source,
        };
    }
    let mut outcome = Outcome::empty(0);
    if unplaced.is_empty() {
        let mut offsets = vec![0i64; n];
        for (p, share) in offsets_in.iter().enumerate() {
            for &(b, o) in &share.offsets {
                offsets[b] = pools[p].base + o;
            }
        }
        outcome.status = Status::Solved;
        outcome.solution = Some(Solution { offsets });
        // The highest address is at least the highest of the pools'
        // bounds; minimising, the plan is proven when every pool met its.
        outcome.lower_bound = pools
            .iter()
            .zip(&reports)
            .filter(|(_, r)| !r.buffers.is_empty())
            .map(|(pool, r)| pool.base.saturating_add(r.lower_bound))
            .max()
            .unwrap_or(0);
        // Without the heuristics there is no minimising, so nothing is
        // proven optimal.
        #[cfg(feature = "heuristics")]
        {
            outcome.optimal = options.objective == Objective::Minimize
                && proven.iter().zip(&reports).all(|(&(_, optimal), r)| {
                    optimal || r.buffers.is_empty() || r.height == r.lower_bound
                });
        }
    } else if proven_impossible {
        outcome.status = Status::Infeasible;
    } else if let Err(stop) = deadline.check() {
        outcome = outcome.stop(stop);
    }
    outcome.restarts = restarts;
    // One source where every pool's placement came from the same one.
    let mut sources = reports
        .iter()
        .filter(|r| !r.buffers.is_empty())
        .map(|r| r.source);
    let first = sources.next().flatten();
    if sources.all(|s| s == first) {
        outcome.source = first;
    }
    outcome.pooled = Some(Pooled {
        pool_of,
        reports,
        unplaced,
    });
    outcome.stats.elapsed = deadline.elapsed();
    outcome
}
