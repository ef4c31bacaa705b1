//! What to generate: the families and the spec of one instance, and the
//! size distribution the families draw from.

use crate::base::rng::Rng;

/// Which kind of instance to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Family {
    /// One training step (see [`generate`](super::generate)).
    #[default]
    Step,
    /// One training step with 2 % long-lived buffers spread over 5-50 %
    /// of it, sizes over six orders of magnitude.
    LongLived,
    /// A training step whose sizes do not depend on lifetimes.
    Independent,
    /// A training step whose sizes do not depend on lifetimes, its buffers
    /// issued one after another in program order.
    Issued,
    /// A zero-waste packing of a known optimum, cut by guillotine.
    Planted,
    /// A zero-waste packing of a known optimum that no guillotine cut
    /// decomposes: pinwheels (a centre ringed by four blades), recursively.
    Pinwheel,
    /// A zero-waste packing of a known optimum, not cut by guillotine.
    Swept,
    /// An accelerator kernel with dense separations.
    Kernel,
    /// A zero-waste packing whose separations keep it valid: a kernel of
    /// a known optimum.
    PlantedKernel,
    /// An accelerator kernel whose separation groups are pipeline stages
    /// over runs of consecutive ops.
    StagedKernel,
}

impl Family {
    /// Every family.
    pub const ALL: [Family; 10] = [
        Family::Step,
        Family::LongLived,
        Family::Independent,
        Family::Issued,
        Family::Planted,
        Family::Pinwheel,
        Family::Swept,
        Family::Kernel,
        Family::PlantedKernel,
        Family::StagedKernel,
    ];

    /// The name used by the command line.
    pub fn name(self) -> &'static str {
        match self {
            Family::Step => "step",
            Family::LongLived => "long-lived",
            Family::Independent => "independent",
            Family::Issued => "issued",
            Family::Planted => "planted",
            Family::Pinwheel => "pinwheel",
            Family::Swept => "swept",
            Family::Kernel => "kernel",
            Family::PlantedKernel => "planted-kernel",
            Family::StagedKernel => "staged-kernel",
        }
    }

    /// The family called `name`, if any.
    pub fn from_name(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == name)
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
pub(super) fn log_uniform(rng: &mut Rng, lo: u32, hi: u32) -> i64 {
    let e = rng.below(lo as i64, hi as i64) as u32;
    let base = 1i64 << e;
    base + rng.below(0, base)
}
