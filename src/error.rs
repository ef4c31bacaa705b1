//! Input errors: which buffer, which field, why. Every error is a value;
//! nothing in the crate panics on input it rejects.

use alloc::string::String;
use core::fmt;

/// The field of a buffer that an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// The identifier.
    Id,
    /// The lifetime's start.
    Lower,
    /// The lifetime's end.
    Upper,
    /// The size.
    Size,
    /// The alignment.
    Alignment,
    /// The gap at this position in the buffer's gap list.
    Gap(usize),
    /// The fixed offset.
    Offset,
    /// The hint.
    Hint,
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Field::Id => f.write_str("id"),
            Field::Lower => f.write_str("lower"),
            Field::Upper => f.write_str("upper"),
            Field::Size => f.write_str("size"),
            Field::Alignment => f.write_str("alignment"),
            Field::Gap(i) => write!(f, "gap {i}"),
            Field::Offset => f.write_str("offset"),
            Field::Hint => f.write_str("hint"),
        }
    }
}

/// Why a buffer field is invalid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BufferError {
    /// A size or alignment that is zero or negative.
    #[error("must be positive, got {0}")]
    NotPositive(i64),
    /// A negative time or offset.
    #[error("must not be negative, got {0}")]
    Negative(i64),
    /// `upper <= lower`.
    #[error("lifetime [{lower}, {upper}) is empty: upper must be greater than lower")]
    EmptyLifetime {
        /// The lifetime's start.
        lower: i64,
        /// The lifetime's end.
        upper: i64,
    },
    /// A gap with `upper <= lower`.
    #[error("gap [{lower}, {upper}) is empty")]
    EmptyGap {
        /// The gap's start.
        lower: i64,
        /// The gap's end.
        upper: i64,
    },
    /// A gap that reaches outside the lifetime.
    #[error("gap [{lower}, {upper}) is outside the lifetime [{life_lower}, {life_upper})")]
    GapOutsideLifetime {
        /// The gap's start.
        lower: i64,
        /// The gap's end.
        upper: i64,
        /// The lifetime's start.
        life_lower: i64,
        /// The lifetime's end.
        life_upper: i64,
    },
    /// Two gaps of one buffer that share time steps.
    #[error("gap [{lower}, {upper}) overlaps gap [{other_lower}, {other_upper})")]
    GapsOverlap {
        /// This gap's start.
        lower: i64,
        /// This gap's end.
        upper: i64,
        /// The other gap's start.
        other_lower: i64,
        /// The other gap's end.
        other_upper: i64,
    },
    /// A gap window that is empty or not inside `[0, size)`.
    #[error("window [{lower}, {upper}) must be non-empty and inside [0, {size})")]
    BadWindow {
        /// The window's start.
        lower: i64,
        /// The window's end.
        upper: i64,
        /// The buffer's size.
        size: i64,
    },
    /// An offset that is not a multiple of the alignment.
    #[error("{offset} is not a multiple of the alignment {alignment}")]
    Misaligned {
        /// The offset.
        offset: i64,
        /// The buffer's alignment.
        alignment: i64,
    },
    /// `offset + size` does not fit in 64 bits.
    #[error("{offset} + size {size} overflows a 64-bit offset")]
    Overflow {
        /// The offset.
        offset: i64,
        /// The buffer's size.
        size: i64,
    },
    /// `offset + size > capacity`.
    #[error("{offset} + size {size} exceeds the capacity {capacity}")]
    ExceedsCapacity {
        /// The offset.
        offset: i64,
        /// The buffer's size.
        size: i64,
        /// The problem's capacity.
        capacity: i64,
    },
    /// Another buffer has the same id.
    #[error("duplicate id: buffer {first} has it too")]
    DuplicateId {
        /// Index of the first buffer with this id.
        first: usize,
    },
}

/// An invalid input: which buffer, which field, why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The capacity is zero or negative.
    #[error("capacity must be positive, got {0}")]
    Capacity(i64),
    /// A buffer is invalid.
    #[error("buffer {index} (id {id:?}): {field} {reason}")]
    Buffer {
        /// Position of the buffer in the problem.
        index: usize,
        /// Its id.
        id: String,
        /// The offending field.
        field: Field,
        /// What is wrong with it.
        reason: BufferError,
    },
    /// An index that names no buffer.
    #[error("buffer {index} does not exist (the problem has {len} buffers)")]
    NoSuchBuffer {
        /// The index given.
        index: usize,
        /// Number of buffers in the problem.
        len: usize,
    },
}
