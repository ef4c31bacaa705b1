//! The placement strategies and their variants (a strategy, and for the
//! layered ones how many layers deep), by name.

use core::fmt;
use core::str::FromStr;

/// A placement strategy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Strategy {
    /// Decreasing size, lowest offset that fits.
    FirstFit,
    /// Decreasing size, smallest hole that fits.
    BestFit,
    /// Decreasing contention, on top of the skyline.
    Skyline,
    /// Decreasing size then lifetime, lowest offset that fits.
    BigRocks,
    /// By start time, smallest hole among the buffers alive then.
    Online,
    /// By start time, as online, but among the few smallest holes the
    /// one, and the side of it, whose neighbour ends nearest the buffer's
    /// own end (traded against the hole's waste): buffers that end
    /// together free one hole, not two.
    Coalescing,
    /// The long-lived buffers first, in start order (a stack, as nested
    /// lifetimes want), then the others by decreasing size; first-fit.
    Layered,
    /// The lowest flat run of the skyline filled from its left end, the
    /// longest-lived buffer that fits first (with fixed buffers or gaps:
    /// longest-lived first on top of the skyline).
    GapFill,
}

impl Strategy {
    /// All strategies, cheapest to run first.
    pub const ALL: [Strategy; 8] = [
        Strategy::Online,
        Strategy::Coalescing,
        Strategy::Skyline,
        Strategy::GapFill,
        Strategy::FirstFit,
        Strategy::Layered,
        Strategy::BigRocks,
        Strategy::BestFit,
    ];

    /// The name used by the CLI and the C API.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::FirstFit => "first-fit",
            Strategy::BestFit => "best-fit",
            Strategy::Skyline => "skyline",
            Strategy::BigRocks => "big-rocks",
            Strategy::Online => "online",
            Strategy::Coalescing => "coalescing",
            Strategy::Layered => "layered",
            Strategy::GapFill => "gap-fill",
        }
    }

    /// Whether it places buffers in start order among the buffers alive
    /// then (and so costs little more than sorting them).
    pub(crate) fn is_online(self) -> bool {
        matches!(self, Strategy::Online | Strategy::Coalescing)
    }

    /// Whether it places buffers into the holes of a segment tree of
    /// merged intervals over time (and so costs what that costs).
    pub(crate) fn fills_holes(self) -> bool {
        matches!(
            self,
            Strategy::FirstFit | Strategy::Layered | Strategy::BigRocks | Strategy::BestFit
        )
    }

    /// The variants of this strategy that a portfolio runs: one, or for
    /// the strategies that set a long-lived layer apart, one per depth of
    /// that layer (lifetimes of at least a half, a quarter, ... of the
    /// time), since which depth suits a problem is found only by trying.
    pub fn variants(self) -> impl Iterator<Item = Variant> {
        let depths = match self {
            Strategy::Online | Strategy::Coalescing => 0..=LAYER_DEPTHS,
            Strategy::Layered => 1..=LAYER_DEPTHS,
            _ => 0..=0,
        };
        depths.map(move |depth| Variant {
            strategy: self,
            depth,
        })
    }
}

/// The deepest long-lived layer tried: lifetimes of at least `1 / 2^d` of
/// the compressed time.
const LAYER_DEPTHS: u8 = 5;

/// One placement method: a strategy and, for those that set long-lived
/// buffers apart, the depth of that layer (0: none).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Variant {
    /// The strategy.
    pub strategy: Strategy,
    /// Buffers alive for at least `1 / 2^depth` of the (compressed) time
    /// are placed first, as a layer; 0 for no layer.
    pub depth: u8,
}

impl Variant {
    /// The strategy alone, with its first layer if it needs one.
    pub fn plain(strategy: Strategy) -> Variant {
        Variant {
            strategy,
            depth: u8::from(strategy == Strategy::Layered),
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A strategy name that names none.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct BadStrategy(pub alloc::string::String);

impl fmt::Display for BadStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::base::text::fill(
            f,
            "unknown heuristic \"{}\": use first-fit, best-fit, skyline, big-rocks, online, coalescing, layered or gap-fill",
            &[crate::base::text::Arg::S(&self.0)],
        )
    }
}

impl FromStr for Strategy {
    type Err = BadStrategy;

    fn from_str(s: &str) -> Result<Strategy, BadStrategy> {
        Strategy::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| BadStrategy(s.into()))
    }
}
