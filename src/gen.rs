//! Reproducible synthetic instances shaped like one training step of a
//! compiled model: a forward pass whose saved activations live until the
//! backward pass uses them (nested lifetimes that peak between the two),
//! short-lived temporaries throughout, weight gradients from the backward
//! pass to the optimizer update, and weights alive for the whole step.
//!
//! Two families: [`Family::Step`], sizes over five orders of magnitude;
//! and [`Family::LongLived`], the same step with 2 % of buffers alive
//! over 5-50 % of it, starting anywhere (prefetched weights, optimizer
//! state, pipeline buffers), and sizes over six orders of magnitude. The
//! long-lived buffers cut across the stack of activations, which is what
//! makes real graphs hard for a placement that sees one time at a time.

use alloc::format;
use alloc::vec::Vec;

use crate::problem::Buffer;
use crate::rng::Rng;

/// Which kind of instance to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Family {
    /// One training step (see [`generate`]).
    #[default]
    Step,
    /// One training step with 2 % long-lived buffers spread over 5-50 %
    /// of it, sizes over six orders of magnitude.
    LongLived,
}

impl Family {
    /// The name used by the command line.
    pub fn name(self) -> &'static str {
        match self {
            Family::Step => "step",
            Family::LongLived => "long-lived",
        }
    }

    /// The family called `name`, if any.
    pub fn from_name(name: &str) -> Option<Family> {
        [Family::Step, Family::LongLived]
            .into_iter()
            .find(|f| f.name() == name)
    }
}

/// What to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spec {
    /// Number of buffers.
    pub buffers: usize,
    /// Seed of the generator: same spec, same buffers.
    pub seed: u64,
    /// Alignment of every buffer (sizes are rounded up to it).
    pub alignment: i64,
    /// The kind of instance.
    pub family: Family,
}

impl Spec {
    /// `buffers` buffers from `seed`, alignment 1, one training step.
    pub fn new(buffers: usize, seed: u64) -> Self {
        Spec {
            buffers,
            seed,
            alignment: 1,
            family: Family::Step,
        }
    }

    /// The same spec for another family.
    pub fn with_family(mut self, family: Family) -> Self {
        self.family = family;
        self
    }
}

/// `2^e` for `e` uniform in `[lo, hi)`, times a uniform factor in [1, 2).
fn log_uniform(rng: &mut Rng, lo: u32, hi: u32) -> i64 {
    let e = rng.below(lo as i64, hi as i64) as u32;
    let base = 1i64 << e;
    base + rng.below(0, base)
}

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
