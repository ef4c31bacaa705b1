//! Reproducible synthetic instances shaped like one training step of a
//! compiled model: a forward pass whose saved activations live until the
//! backward pass uses them (nested lifetimes that peak between the two),
//! short-lived temporaries throughout, weight gradients from the backward
//! pass to the optimizer update, and weights alive for the whole step.
//!
//! Families:
//! - [`Family::Step`], sizes over five orders of magnitude;
//! - [`Family::LongLived`], the same step with 2 % of buffers alive over
//!   5-50 % of it, starting anywhere (prefetched weights, optimizer state,
//!   pipeline buffers), and sizes over six orders of magnitude. The
//!   long-lived buffers cut across the stack of activations, which is
//!   what makes real graphs hard for a placement that sees one time at a
//!   time;
//! - [`Family::Independent`], a step whose sizes say nothing of the
//!   lifetimes (log-uniform, 10 B-10 MB, for short and long buffers
//!   alike), so no order by size also orders by lifetime;
//! - [`Family::Issued`], the same sizes, its buffers issued one after
//!   another in program order (each 0-2 steps after the one before), as
//!   a compiler's schedule hands them over;
//! - [`Family::Planted`], a zero-waste packing: a rectangle of memory by
//!   time cut by random guillotine cuts into the buffers, so a placement
//!   at the max load exists and the optimum is known ([`planted_optimum`]);
//! - [`Family::Pinwheel`], a zero-waste packing that no guillotine cut
//!   decomposes: the rectangle cut into a centre ringed by four blades,
//!   and each piece again, largest first (optimum known the same way);
//! - [`Family::Swept`], a zero-waste packing not cut by guillotine: memory
//!   swept through time, every hole refilled at once by pieces that
//!   straddle the ones they replace (optimum known the same way);
//! - [`Family::Kernel`], an accelerator kernel: a few hundred buffers or
//!   fewer, alignment 32, and up to half of all pairs separated (pipeline
//!   stages that may not share memory), see [`generate_problem`];
//! - [`Family::PlantedKernel`], a planted packing (alignment 32) whose
//!   separation groups keep only buffers the packing put apart: dense
//!   separations, and still the optimum known;
//! - [`Family::StagedKernel`], the kernel's buffers with separation groups
//!   that are local in time: each holds every buffer alive during a run
//!   of consecutive ops (a pipeline stage whose units run at once), where
//!   the kernel's groups are random subsets of the whole kernel.
//!
//! A fixture room (feature `gen`, not in the tiny build): it builds on the
//! model alone and never calls the planner; where a family needs a
//! placement's height, the caller passes one in.

use alloc::format;
use alloc::vec::Vec;

use crate::base::rng::Rng;
use crate::model::problem::Buffer;

mod kernel;
mod pinwheel;
mod planted;
mod spec;
mod swept;

pub use kernel::kernel;
#[cfg(feature = "constraints")]
pub use kernel::kernel_with_memories;
#[cfg(test)]
pub(crate) use planted::planted_with_offsets;
use planted::{planted, PLANTED_HEIGHT};
use spec::log_uniform;
pub use spec::{Family, Spec};

/// Buffers of a synthetic training step, ids `0..n`.
///
/// Time runs over `2F` steps, `F = n / 8`: forward in `[0, F)`, backward
/// in `[F, 2F)`. Of the buffers,
/// - 40 % are saved activations, made at a forward step `f` and freed a
///   few steps after the backward step that mirrors it, `2F - f`
///   (256 B-1 MiB);
/// - 45 % are temporaries alive for 1 to 16 steps anywhere (64 B-1 MiB);
/// - 12 % are weight gradients, made in the backward pass and alive until
///   the update at `2F` or for up to an eighth of the step (1 KiB-2 MiB);
/// - 3 % are weights, alive for the whole step (4 KiB-4 MiB).
///
/// At the peak, near `F`, saved activations hold most of the memory, the
/// weights a third or so, and thousands of buffers are alive in large
/// instances, as in real training graphs.
///
/// In [`Family::LongLived`], 2 % of the buffers (taken from the
/// temporaries) start anywhere and live for 5-50 % of the step
/// (64 KiB-128 MiB, so that they hold a large share of the peak), and
/// every other size range reaches two binary orders higher (64 B-128 MiB
/// over all: six orders of magnitude).
pub fn generate(spec: Spec) -> Vec<Buffer> {
    match spec.family {
        Family::Step | Family::LongLived => step(spec),
        Family::Independent => independent(spec),
        Family::Issued => issued(spec),
        Family::Planted => planted(spec).0,
        Family::Pinwheel => pinwheel::pinwheel_with_offsets(spec).0,
        Family::Swept => swept::swept_with_offsets(spec, PLANTED_HEIGHT).0,
        Family::Kernel | Family::StagedKernel => kernel(spec, None).0,
        Family::PlantedKernel => kernel::planted_kernel(spec, None).0,
    }
}

fn step(spec: Spec) -> Vec<Buffer> {
    let mut rng = Rng::new(spec.seed);
    let forward = (spec.buffers as i64 / 8).max(4);
    let end = 2 * forward;
    let align = spec.alignment.max(1);
    let long_lived = spec.family == Family::LongLived;
    // Widens a size range `[2^lo, 2^hi)` upward for the long-lived family.
    let (wider_lo, wider_hi) = if long_lived { (0, 2) } else { (0, 0) };
    let mut out = Vec::with_capacity(spec.buffers);
    for i in 0..spec.buffers {
        let kind = rng.below(0, 100);
        let sized = |rng: &mut Rng, lo: u32, hi: u32| {
            log_uniform(rng, lo.saturating_sub(wider_lo), hi + wider_hi)
        };
        let (lower, upper, size) = if long_lived && kind >= 98 {
            // 5-50 % of the step, starting anywhere in it.
            let length = (end * rng.below(5, 51) / 100).max(1);
            let lower = rng.below(0, (end - length).max(1));
            (lower, lower + length, sized(&mut rng, 18, 24))
        } else if kind < 3 {
            (0, end + 1, sized(&mut rng, 12, 22))
        } else if kind < 43 {
            let made = rng.below(0, forward);
            let used = end - made + rng.below(0, 4);
            (made, used.max(made + 1), sized(&mut rng, 8, 20))
        } else if kind < 55 {
            let made = rng.below(forward, end);
            let upper = if rng.below(0, 2) == 0 {
                end + 1
            } else {
                (made + 1 + rng.below(0, forward / 4 + 1)).min(end + 1)
            };
            (made, upper, sized(&mut rng, 10, 21))
        } else {
            let lower = rng.below(0, end);
            // Geometric-ish: most temporaries die at the next op.
            let mut len = 1;
            while len < 16 && rng.below(0, 100) < 45 {
                len += 1;
            }
            (lower, lower + len, sized(&mut rng, 6, 20))
        };
        let size = (size + align - 1) / align * align;
        let mut b = Buffer::new(format!("{i}"), lower, upper, size);
        b.alignment = align;
        out.push(b);
    }
    out
}

/// A training step whose sizes are independent of the lifetimes: every
/// size log-uniform over 10 B-10 MB. Time runs over `n / 4` steps, so
/// several buffers start at each; 80 % live 1-6 steps, 18 % live 5-200,
/// 2 % live 5-60 % of the whole step.
fn independent(spec: Spec) -> Vec<Buffer> {
    let mut rng = Rng::new(spec.seed ^ 0x1D3E_9E4D_E17E_0001);
    let steps = (spec.buffers as i64 / 4).max(8);
    let align = spec.alignment.max(1);
    let mut out = Vec::with_capacity(spec.buffers);
    for i in 0..spec.buffers {
        let length = lifetime(&mut rng, steps, 5).min(steps);
        let lower = rng.below(0, steps - length + 1);
        let size = log_uniform_size(&mut rng, align);
        let mut b = Buffer::new(format!("{i}"), lower, lower + length, size);
        b.alignment = align;
        out.push(b);
    }
    out
}

/// [`Family::Issued`]: buffers issued one after another in program order,
/// each 0-2 steps after the one before (0, 1 or 2 with odds 2:2:1, so
/// about 1.25 buffers a step); 80 % live 1-6 steps, 18 % 5-200, 2 % 6-60 %
/// of the whole program (its expected length); sizes log-uniform over
/// 10 B-10 MB whatever the lifetime.
fn issued(spec: Spec) -> Vec<Buffer> {
    let mut rng = Rng::new(spec.seed ^ 0x155E_D000_0000_0007);
    let program = (spec.buffers as i64 * 4 / 5).max(8);
    let align = spec.alignment.max(1);
    let mut out = Vec::with_capacity(spec.buffers);
    let mut now = 0;
    for i in 0..spec.buffers {
        now += [0, 0, 1, 1, 2][rng.below(0, 5) as usize];
        let length = lifetime(&mut rng, program, 6);
        let size = log_uniform_size(&mut rng, align);
        let mut b = Buffer::new(format!("{i}"), now, now + length, size);
        b.alignment = align;
        out.push(b);
    }
    out
}

/// The lifetime of a size-independent family's buffer: 80 % live 1-6
/// steps, 18 % 5-200, 2 % from `longest_from` to 60 % of `whole` steps.
fn lifetime(rng: &mut Rng, whole: i64, longest_from: i64) -> i64 {
    let kind = rng.below(0, 100);
    if kind < 80 {
        rng.below(1, 7)
    } else if kind < 98 {
        rng.below(5, 201)
    } else {
        (whole * rng.below(longest_from, 61) / 100).max(1)
    }
}

/// A size log-uniform over 10 B-10 MB, rounded up to `align`.
fn log_uniform_size(rng: &mut Rng, align: i64) -> i64 {
    // ln(10) .. ln(10^7), as a uniform over the exponent.
    let (lo, hi) = (core::f64::consts::LN_10, 7.0 * core::f64::consts::LN_10);
    let unit = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
    let size = libm_exp(lo + unit * (hi - lo)).max(1.0) as i64;
    (size + align - 1) / align * align
}

/// `e^x` without `std` (the core is `no_std`): a power of two times a
/// short series; ample for drawing sizes.
fn libm_exp(x: f64) -> f64 {
    let k = (x / core::f64::consts::LN_2) as i32;
    let r = x - f64::from(k) * core::f64::consts::LN_2;
    let (mut term, mut sum) = (1.0f64, 1.0f64);
    for i in 1..20 {
        term *= r / f64::from(i);
        sum += term;
    }
    // 2^k from its bits (k is small: sizes stay far from the limits).
    sum * f64::from_bits(((k + 1023).clamp(1, 2046) as u64) << 52)
}

/// The optimal height of a zero-waste instance ([`Family::Planted`],
/// [`Family::Swept`] or [`Family::PlantedKernel`], whatever share is
/// separated: the rectangle it fills, which is also its max load); `None`
/// for other families.
pub fn planted_optimum(spec: Spec) -> Option<i64> {
    match spec.family {
        Family::Planted => Some(planted(spec).1),
        Family::Pinwheel => Some(pinwheel::pinwheel_with_offsets(spec).1),
        Family::Swept => Some(swept::swept_with_offsets(spec, PLANTED_HEIGHT).1),
        Family::PlantedKernel => Some(kernel::planted_kernel(spec, None).2),
        _ => None,
    }
}

/// [`Family::Pinwheel`]'s buffers, height and the offsets they were cut
/// from.
#[cfg(test)]
pub(crate) fn pinwheel_with_offsets(spec: Spec) -> (Vec<Buffer>, i64, Vec<i64>) {
    pinwheel::pinwheel_with_offsets(spec)
}

/// [`Family::Swept`]'s buffers, height and the offsets they were made at,
/// filling `height` (the family's own: [`PLANTED_HEIGHT`]).
#[cfg(test)]
pub(crate) fn swept_with_offsets(spec: Spec, height: i64) -> (Vec<Buffer>, i64, Vec<i64>) {
    swept::swept_with_offsets(spec, height)
}

/// The problem `spec` describes, with capacity `i64::MAX`: the buffers of
/// [`generate`] and, for [`Family::Kernel`], its separation groups (where
/// the build has them).
pub fn generate_problem(
    spec: Spec,
) -> Result<crate::model::problem::Problem, crate::model::problem::Error> {
    match spec.family {
        Family::Kernel | Family::StagedKernel => with_separations(kernel(spec, None)),
        Family::PlantedKernel => {
            let (buffers, groups, _, _) = kernel::planted_kernel(spec, None);
            with_separations((buffers, groups))
        }
        _ => with_separations((generate(spec), Vec::new())),
    }
}

/// A [`Family::Kernel`] (or [`Family::PlantedKernel`], or
/// [`Family::StagedKernel`]) problem with about
/// `separated` of its pairs separated (a planted kernel's, as many as its
/// packing allows).
pub fn kernel_problem(
    spec: Spec,
    separated: f64,
) -> Result<crate::model::problem::Problem, crate::model::problem::Error> {
    match spec.family {
        Family::PlantedKernel => {
            let (buffers, groups, _, _) = kernel::planted_kernel(spec, Some(separated));
            with_separations((buffers, groups))
        }
        _ => with_separations(kernel(spec, Some(separated))),
    }
}

fn with_separations(
    (buffers, groups): (Vec<Buffer>, Vec<Vec<usize>>),
) -> Result<crate::model::problem::Problem, crate::model::problem::Error> {
    #[allow(unused_mut)]
    let mut problem = crate::model::problem::Problem::new(i64::MAX, buffers)?;
    #[cfg(feature = "constraints")]
    for group in &groups {
        problem.separate(group)?;
    }
    #[cfg(not(feature = "constraints"))]
    let _ = groups;
    Ok(problem)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The offsets a planted or swept instance was made at are a valid
    /// placement at its claimed optimum, which is its max load: so the
    /// optimum is known, not hoped for; and there are as many buffers as
    /// asked for.
    #[test]
    fn zero_waste_offsets_are_a_valid_placement_at_the_max_load() {
        for seed in 0..30 {
            for (n, alignment, family) in [
                (1usize, 1i64, Family::Planted),
                (5, 8, Family::Planted),
                (300, 1, Family::Planted),
                (2000, 64, Family::Planted),
                (1, 1, Family::Swept),
                (2, 8, Family::Swept),
                (300, 1, Family::Swept),
                (5000, 32, Family::Swept),
            ] {
                let spec = Spec {
                    buffers: n,
                    seed,
                    alignment,
                    family,
                };
                let (buffers, height, offsets) = match family {
                    Family::Planted => planted_with_offsets(spec),
                    _ => swept_with_offsets(spec, PLANTED_HEIGHT),
                };
                assert_eq!(buffers.len(), n);
                assert_eq!(generate(spec), buffers);
                assert_eq!(planted_optimum(spec), Some(height));
                let problem = crate::model::problem::Problem::new(height, buffers).unwrap();
                let solution = crate::model::solution::Solution { offsets };
                crate::model::solution::validate(&problem, &solution).unwrap();
                assert_eq!(solution.height(&problem), height);
                assert_eq!(crate::model::load::max_load(&problem), height);
            }
        }
    }

    /// A planted kernel's packing is a valid placement of it, separations
    /// and all, at its claimed optimum, its max load; its groups separate
    /// about the share asked for (or as many as the packing allows), and
    /// only buffers the packing put apart.
    #[cfg(feature = "constraints")]
    #[test]
    fn a_planted_kernels_packing_places_it_at_its_max_load() {
        let mut dense = 0;
        for seed in 0..40u64 {
            for (n, separated) in [
                (2usize, None),
                (30, Some(0.1)),
                (120, Some(0.5)),
                (250, None),
            ] {
                let spec = Spec::new(n, seed).with_family(Family::PlantedKernel);
                let (buffers, groups, height, offsets) = kernel::planted_kernel(spec, separated);
                assert_eq!(buffers.len(), n);
                if separated.is_none() {
                    assert_eq!(generate(spec), buffers);
                    assert_eq!(planted_optimum(spec), Some(height));
                }
                let mut problem = crate::model::problem::Problem::new(height, buffers).unwrap();
                for group in &groups {
                    problem.separate(group).unwrap();
                }
                let solution = crate::model::solution::Solution { offsets };
                crate::model::solution::validate(&problem, &solution).unwrap();
                assert_eq!(solution.height(&problem), height);
                assert_eq!(crate::model::load::max_load(&problem), height);
                assert!(problem.buffers().iter().all(|b| b.alignment == 32));
                let pairs: usize = groups.iter().map(|g| g.len() * (g.len() - 1) / 2).sum();
                dense += usize::from(separated == Some(0.5) && pairs * 4 >= n * (n - 1) / 2);
            }
        }
        // Half of all pairs asked for: at least a quarter of them given
        // (pairs counted once per group) on most seeds.
        assert!(dense >= 30, "{dense} of 40");
    }

    /// A staged kernel has the kernel's buffers; each of its groups is
    /// every buffer alive during one run of at most a quarter of the ops
    /// (two at least): its members all meet a window that short, and
    /// every buffer whose lifetime holds the span where they all meet is
    /// a member. Its groups separate about the share asked for (within
    /// two points, where the kernel is large enough to reach it), never
    /// far more.
    #[test]
    fn a_staged_kernels_groups_are_runs_of_ops() {
        let mut reached = 0;
        for seed in 0..40u64 {
            for (n, separated) in [(2usize, 0.5), (40, 0.1), (120, 0.25), (250, 0.5)] {
                let spec = Spec::new(n, seed).with_family(Family::StagedKernel);
                let (buffers, groups) = kernel(spec, Some(separated));
                let plain = kernel(spec.with_family(Family::Kernel), Some(separated));
                assert_eq!(buffers, plain.0, "seed {seed}: the kernel's buffers");
                // The kernel's ops, as `kernel` counts them.
                let ops = (n as i64 * 2 / 3).max(2);
                let longest = (ops / 4).max(2);
                let mut marked = alloc::collections::BTreeSet::new();
                for group in &groups {
                    let last_start = group.iter().map(|&i| buffers[i].lower).max().unwrap();
                    let first_end = group.iter().map(|&i| buffers[i].upper).min().unwrap();
                    // A window [a, a + length) meets every member when
                    // a < first_end and last_start < a + length.
                    assert!(
                        last_start - first_end + 2 <= longest,
                        "seed {seed}: {group:?}"
                    );
                    for (i, b) in buffers.iter().enumerate() {
                        let holds = b.lower <= last_start.min(first_end - 1)
                            && b.upper > last_start.max(first_end - 1);
                        assert!(!holds || group.contains(&i), "seed {seed}: {i} left out");
                    }
                    for (k, &a) in group.iter().enumerate() {
                        for &b in &group[k + 1..] {
                            marked.insert((a, b));
                        }
                    }
                }
                let pairs = n * (n - 1) / 2;
                let share = marked.len() as f64 / pairs as f64;
                assert!(share < separated + 0.35, "seed {seed}: {share} of pairs");
                // Late runs mostly meet pairs already separated: the
                // draws may end a little short.
                reached += usize::from(n >= 120 && share >= separated - 0.02);
            }
        }
        assert!(
            reached >= 76,
            "{reached} of 80 large kernels near their share"
        );
    }
}
