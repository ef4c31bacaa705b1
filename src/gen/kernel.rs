//! Accelerator kernels: a short program's buffers with separation groups
//! ([`kernel`]), a zero-waste packing with groups that keep it valid, so
//! that the optimum is known ([`planted_kernel`]), and the same kernel as
//! an NPU compiler hands it over
//! ([`kernel_with_memories`]): spread over 1-5 on-chip memories (pools)
//! whose capacities sit near their loads, with reserved ranges (a fixed
//! block at the bottom of a memory for the whole kernel), in-place
//! operations (a buffer colocated with one that ends as it starts) and
//! reuse penalties (a buffer that would wait for its neighbour's reader
//! if it took its bytes).

use alloc::format;
use alloc::vec::Vec;

use super::spec::{log_uniform, Family, Spec};
use crate::base::rng::Rng;
use crate::model::problem::Buffer;
#[cfg(feature = "constraints")]
use {
    crate::base::math::align_up, crate::model::error::Error, crate::model::load::max_load,
    crate::model::pools::Pool, crate::model::problem::Problem,
};

/// An accelerator kernel of `spec.buffers` buffers (a few hundred at
/// most is the shape): operations in a short program, each buffer alive
/// from the op that writes it to the last that reads it, sizes 32 B-64 KiB
/// on a 32-byte grid, alignment 32. Pipeline stages that may not share
/// memory are separation groups, until about `separated` (a fraction of
/// all pairs; drawn from 0-50 % when `None`) of the pairs are separated:
/// random subsets of the buffers, or with [`Family::StagedKernel`] the
/// buffers alive during a run of consecutive ops each (the same buffers
/// either way). Returns the buffers and the groups.
pub fn kernel(spec: Spec, separated: Option<f64>) -> (Vec<Buffer>, Vec<Vec<usize>>) {
    let mut rng = Rng::new(spec.seed ^ 0x4B3E_12E1_0000_0005);
    let n = spec.buffers;
    let ops = (n as i64 * 2 / 3).max(2);
    let align = spec.alignment.max(32);
    let mut buffers = Vec::with_capacity(n);
    for i in 0..n {
        let lower = rng.below(0, ops);
        let length = if rng.below(0, 10) < 7 {
            rng.below(1, 4)
        } else {
            rng.below(1, ops / 2 + 2)
        };
        let size = log_uniform(&mut rng, 5, 16);
        let size = (size + align - 1) / align * align;
        let mut b = Buffer::new(format!("{i}"), lower, (lower + length).min(ops + 1), size);
        b.alignment = align;
        buffers.push(b);
    }
    let fraction = separated.unwrap_or_else(|| rng.below(0, 51) as f64 / 100.0);
    let groups = match spec.family {
        Family::StagedKernel => draw_stages(&mut rng, &buffers, ops, fraction),
        _ => draw_groups(&mut rng, n, fraction, |_, _| true),
    };
    (buffers, groups)
}

/// A kernel whose optimum is known: [`Family::Planted`]'s zero-waste
/// packing of `spec.buffers` pieces (alignment at least 32), with
/// separation groups drawn as [`kernel`] draws them but each cut down to
/// buffers whose bytes lie apart where the packing put them, until about
/// `separated` (drawn from 0-50 % when `None`) of the pairs are separated
/// or no more groups come. The packing still places every buffer, so its
/// height, the max load, is the optimum. Returns the buffers, the groups,
/// the optimum and the packing's offsets.
///
/// [`Family::Planted`]: super::Family::Planted
pub(crate) fn planted_kernel(
    spec: Spec,
    separated: Option<f64>,
) -> (Vec<Buffer>, Vec<Vec<usize>>, i64, Vec<i64>) {
    let spec = Spec {
        alignment: spec.alignment.max(32),
        ..spec
    };
    let (buffers, height, offsets) = super::planted::planted_with_offsets(spec);
    let mut rng = Rng::new(spec.seed ^ 0x4B3E_12E1_0000_0008);
    let fraction = separated.unwrap_or_else(|| rng.below(0, 51) as f64 / 100.0);
    let apart = |a: usize, b: usize| {
        offsets[a] + buffers[a].size <= offsets[b] || offsets[b] + buffers[b].size <= offsets[a]
    };
    let keep = |kept: &[usize], c: usize| kept.iter().all(|&k| apart(k, c));
    let groups = draw_groups(&mut rng, buffers.len(), fraction, keep);
    (buffers, groups, height, offsets)
}

/// Separation groups over `n` buffers: random subsets of 5-30 % of them
/// (pipeline stages), each member kept when `keep` takes it beside those
/// kept before it (see [`draw_until`]).
fn draw_groups(
    rng: &mut Rng,
    n: usize,
    fraction: f64,
    keep: impl Fn(&[usize], usize) -> bool,
) -> Vec<Vec<usize>> {
    draw_until(rng, n, fraction, |rng| {
        // A stage: a random subset of 5-30 % of the buffers.
        let share = rng.below(5, 31);
        let drawn: Vec<usize> = (0..n).filter(|_| rng.below(0, 100) < share).collect();
        let mut group: Vec<usize> = Vec::with_capacity(drawn.len());
        for c in drawn {
            if keep(&group, c) {
                group.push(c);
            }
        }
        group
    })
}

/// Separation groups over `buffers` (living within `ops + 1` ops) that
/// are pipeline stages: each is every buffer alive during a run of
/// 1 to `ops / 4` consecutive ops (at least 2) starting anywhere (see
/// [`draw_until`]).
fn draw_stages(rng: &mut Rng, buffers: &[Buffer], ops: i64, fraction: f64) -> Vec<Vec<usize>> {
    draw_until(rng, buffers.len(), fraction, |rng| {
        let length = rng.below(1, (ops / 4).max(2) + 1);
        let start = rng.below(0, ops + 1);
        let alive = |b: &Buffer| b.lower < start + length && start < b.upper;
        (0..buffers.len()).filter(|&i| alive(&buffers[i])).collect()
    })
}

/// The groups `draw` makes over `n` buffers (those of fewer than two
/// members dropped), until about `fraction` of all pairs are separated
/// or `10 n + 100` have been drawn.
fn draw_until(
    rng: &mut Rng,
    n: usize,
    fraction: f64,
    mut draw: impl FnMut(&mut Rng) -> Vec<usize>,
) -> Vec<Vec<usize>> {
    let pairs = (n * n.saturating_sub(1) / 2) as f64;
    let want = (fraction * pairs) as usize;
    let mut marked = alloc::vec![false; n * n];
    let (mut count, mut groups) = (0usize, Vec::new());
    let mut tries = 0;
    while count < want && n >= 2 && tries < 10 * n + 100 {
        tries += 1;
        let group = draw(rng);
        if group.len() < 2 {
            continue;
        }
        for (k, &a) in group.iter().enumerate() {
            for &b in &group[k + 1..] {
                if !marked[a * n + b] {
                    marked[a * n + b] = true;
                    count += 1;
                }
            }
        }
        groups.push(group);
    }
    groups
}

#[cfg(feature = "constraints")]
/// The memories' names, in the order they are drawn.
const MEMORIES: [&str; 5] = ["UB", "L1", "L0A", "L0B", "L0C"];
/// A memory's capacity is its max load plus this many quarters of what
/// first-fit needs above it.
#[cfg(feature = "constraints")]
const STEPS: [i64; 6] = [0, 2, 3, 4, 4, 5];

/// The problem of a kernel of `spec.buffers` buffers (plus reserved
/// blocks) with about `separated` of its pairs separated (drawn from 0-50%
/// when `None`), over its memories: each buffer may go to one memory only,
/// as an operand of a given unit must. Capacity `i64::MAX`: the pools
/// bound everything. `first_fit` is the height a quick placement reaches
/// on one memory's buffers (the caller's planner: a generator never calls
/// one), which the memory's capacity is drawn against.
#[cfg(feature = "constraints")]
pub fn kernel_with_memories(
    spec: Spec,
    separated: Option<f64>,
    first_fit: impl Fn(&Problem) -> i64,
) -> Result<Problem, Error> {
    let (mut buffers, separations) = kernel(spec, separated);
    let mut rng = Rng::new(spec.seed ^ 0x4B3E_12E1_0000_0006);
    let n = buffers.len();
    let memories = rng.below(1, 6) as usize;
    let mut memory: Vec<usize> = (0..n)
        .map(|_| rng.below(0, memories as i64) as usize)
        .collect();
    let end = buffers.iter().map(|b| b.upper).max().unwrap_or(1);
    // Reserved ranges: a block fixed at the bottom of half the memories,
    // held through the whole kernel.
    for (m, name) in MEMORIES.iter().enumerate().take(memories) {
        if rng.below(0, 2) == 0 {
            let size = 32 * rng.below(8, 129);
            let mut reserved = Buffer::new(format!("reserved-{name}"), 0, end, size).with_offset(0);
            reserved.alignment = 32;
            buffers.push(reserved);
            memory.push(m);
        }
    }
    // In-place operations: a buffer written by the op that last reads
    // another of its memory takes that one's bytes (a colocation), unless
    // the two are separated.
    let mut group_of: Vec<Vec<usize>> = alloc::vec![Vec::new(); n];
    for (g, members) in separations.iter().enumerate() {
        for &m in members {
            group_of[m].push(g);
        }
    }
    let apart = |a: usize, b: usize| group_of[a].iter().any(|g| group_of[b].contains(g));
    let mut colocations: Vec<[usize; 2]> = Vec::new();
    let mut taken = alloc::vec![false; n];
    for a in 0..n {
        if rng.below(0, 100) >= 5 || taken[a] {
            continue;
        }
        let partner = (0..n).find(|&b| {
            b != a
                && !taken[b]
                && memory[b] == memory[a]
                && buffers[b].lower + 1 == buffers[a].upper
                && !apart(a, b)
        });
        if let Some(b) = partner {
            taken[a] = true;
            taken[b] = true;
            colocations.push([a, b]);
        }
    }
    let mut problem = Problem::new(i64::MAX, buffers)?;
    for group in &separations {
        problem.separate(group)?;
    }
    for pair in &colocations {
        problem.colocate(pair)?;
    }
    // Each memory's capacity: between its buffers' max load and the height
    // first-fit reaches with their separations, or at that height or a
    // little above: most kernels fit, some only just, some not at all.
    let mut pools = Vec::with_capacity(memories);
    for (m, name) in MEMORIES.iter().enumerate().take(memories) {
        let members: Vec<usize> = (0..problem.len()).filter(|&i| memory[i] == m).collect();
        let sub = problem.subproblem(&members, i64::MAX, 32)?;
        let load = max_load(&sub);
        let height = first_fit(&sub).max(load);
        let quarters = STEPS[rng.below(0, STEPS.len() as i64) as usize];
        let capacity = align_up((load + (height - load) * quarters / 4).max(32), 32);
        let mut pool = Pool::new(*name, capacity);
        pool.alignment = 32;
        pools.push(pool);
    }
    for pool in pools {
        problem.add_pool(pool)?;
    }
    for (i, &m) in memory.iter().enumerate() {
        problem.set_pools(i, &[m])?;
    }
    // Reuse penalties (drawn apart, so that the rest is as it was without
    // them): a buffer of a memory whose writer starts within two ops of
    // another's last reader would make it wait if it took those bytes (a
    // false dependency), at a cost of 1-1024 cycles; a third of the
    // buffers have such a neighbour priced.
    let mut rng = Rng::new(spec.seed ^ 0x4B3E_12E1_0000_0007);
    let buffers = problem.buffers().to_vec();
    for a in 0..n {
        if rng.below(0, 3) != 0 {
            continue;
        }
        let near: Vec<usize> = (0..n)
            .filter(|&b| {
                memory[b] == memory[a]
                    && buffers[b].lower >= buffers[a].upper
                    && buffers[b].lower <= buffers[a].upper + 2
                    && !apart(a, b)
            })
            .collect();
        if !near.is_empty() {
            let b = near[rng.below(0, near.len() as i64) as usize];
            problem.penalize(a, b, log_uniform(&mut rng, 0, 10))?;
        }
    }
    Ok(problem)
}
