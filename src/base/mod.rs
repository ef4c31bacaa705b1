//! Small helpers with one home each, used by every room above: integer
//! math, sets of bits, a seeded generator, sorting, segment trees over
//! positions, and messages without `core::fmt`.

#[cfg(feature = "constraints")]
pub(crate) mod bits;
pub(crate) mod math;
pub(crate) mod rng;
pub(crate) mod sort;
pub(crate) mod text;
pub(crate) mod trees;
