//! Input errors: which buffer, which field, why. Every error is a value;
//! nothing in the crate panics on input it rejects.

use alloc::string::String;
use core::fmt;

use crate::base::text::{
    fill,
    Arg::{I, S, U},
};

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
        self.write_to(f)
    }
}

impl Field {
    /// Writes the field's name (what Display shows) to any writer, without
    /// core::fmt's machinery (see crate::base::text).
    pub(crate) fn write_to(&self, f: &mut dyn crate::base::text::Out) -> fmt::Result {
        match self {
            Field::Id => f.put("id"),
            Field::Lower => f.put("lower"),
            Field::Upper => f.put("upper"),
            Field::Size => f.put("size"),
            Field::Alignment => f.put("alignment"),
            Field::Gap(i) => fill(f, "gap {}", &[U(*i as u64)]),
            Field::Offset => f.put("offset"),
            Field::Hint => f.put("hint"),
        }
    }
}

/// Why a buffer field is invalid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BufferError {
    /// A size or alignment that is zero or negative.
    NotPositive(i64),
    /// A negative time or offset.
    Negative(i64),
    /// `upper <= lower`.
    EmptyLifetime {
        /// The lifetime's start.
        lower: i64,
        /// The lifetime's end.
        upper: i64,
    },
    /// A gap with `upper <= lower`.
    EmptyGap {
        /// The gap's start.
        lower: i64,
        /// The gap's end.
        upper: i64,
    },
    /// A gap that reaches outside the lifetime.
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
    BadWindow {
        /// The window's start.
        lower: i64,
        /// The window's end.
        upper: i64,
        /// The buffer's size.
        size: i64,
    },
    /// An offset that is not a multiple of the alignment.
    Misaligned {
        /// The offset.
        offset: i64,
        /// The buffer's alignment.
        alignment: i64,
    },
    /// A span in another lifetime convention that does not fit in 64
    /// bits once made half-open.
    Unconvertible {
        /// The span's start, as given.
        lower: i64,
        /// The span's end, as given.
        upper: i64,
    },
    /// `offset + size` does not fit in 64 bits.
    Overflow {
        /// The offset.
        offset: i64,
        /// The buffer's size.
        size: i64,
    },
    /// `offset + size > capacity`.
    ExceedsCapacity {
        /// The offset.
        offset: i64,
        /// The buffer's size.
        size: i64,
        /// The problem's capacity.
        capacity: i64,
    },
    /// With the buffers before it, the sizes (and alignment padding) add
    /// up past `i64::MAX`: some placements of them all would have offsets
    /// or tops that 64 bits cannot hold.
    TotalTooLarge,
    /// Another buffer has the same id.
    DuplicateId {
        /// Index of the first buffer with this id.
        first: usize,
    },
}

impl fmt::Display for BufferError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_to(f)
    }
}

impl BufferError {
    /// Writes the reason (what Display shows) to any writer.
    pub(crate) fn write_to(&self, f: &mut dyn crate::base::text::Out) -> fmt::Result {
        match *self {
            BufferError::NotPositive(v) => fill(f, "must be positive, got {}", &[I(v)]),
            BufferError::Negative(v) => fill(f, "must not be negative, got {}", &[I(v)]),
            BufferError::EmptyLifetime { lower, upper } => fill(
                f,
                "lifetime [{}, {}) is empty: upper must be greater than lower",
                &[I(lower), I(upper)],
            ),
            BufferError::EmptyGap { lower, upper } => {
                fill(f, "gap [{}, {}) is empty", &[I(lower), I(upper)])
            }
            BufferError::GapOutsideLifetime {
                lower,
                upper,
                life_lower,
                life_upper,
            } => fill(
                f,
                "gap [{}, {}) is outside the lifetime [{}, {})",
                &[I(lower), I(upper), I(life_lower), I(life_upper)],
            ),
            BufferError::GapsOverlap {
                lower,
                upper,
                other_lower,
                other_upper,
            } => fill(
                f,
                "gap [{}, {}) overlaps gap [{}, {})",
                &[I(lower), I(upper), I(other_lower), I(other_upper)],
            ),
            BufferError::BadWindow { lower, upper, size } => fill(
                f,
                "window [{}, {}) must be non-empty and inside [0, {})",
                &[I(lower), I(upper), I(size)],
            ),
            BufferError::Misaligned { offset, alignment } => fill(
                f,
                "{} is not a multiple of the alignment {}",
                &[I(offset), I(alignment)],
            ),
            BufferError::Unconvertible { lower, upper } => fill(
                f,
                "{} to {} does not fit in 64 bits when made half-open",
                &[I(lower), I(upper)],
            ),
            BufferError::Overflow { offset, size } => fill(
                f,
                "{} + size {} overflows a 64-bit offset",
                &[I(offset), I(size)],
            ),
            BufferError::ExceedsCapacity {
                offset,
                size,
                capacity,
            } => fill(
                f,
                "{} + size {} exceeds the capacity {}",
                &[I(offset), I(size), I(capacity)],
            ),
            BufferError::TotalTooLarge => fill(
                f,
                "with the sizes before it and alignment padding passes 2^63 - 1 bytes",
                &[],
            ),
            BufferError::DuplicateId { first } => {
                fill(f, "already names buffer {}", &[U(first as u64)])
            }
        }
    }
}

/// Why a colocation or separation cannot hold.
#[cfg(feature = "constraints")]
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LinkError {
    /// Colocated buffers fixed at different offsets.
    FixedApart {
        /// The first buffer's fixed offset.
        first: i64,
        /// The second's.
        second: i64,
    },
    /// Two buffers both colocated and separated.
    ColocatedAndSeparated,
    /// Colocated alignments with no common multiple in 64 bits.
    Alignment,
    /// A colocation group fixed at an offset one of its members' alignments
    /// does not divide.
    FixedMisaligned {
        /// The group's fixed offset.
        offset: i64,
        /// The alignment of the group (the least common multiple).
        alignment: i64,
    },
    /// A colocation group fixed so high that its tallest member ends above
    /// the capacity.
    FixedTooHigh {
        /// The group's fixed offset.
        offset: i64,
        /// The tallest member's size.
        size: i64,
        /// The capacity.
        capacity: i64,
    },
    /// Separations are planned in moments after every lifetime; a
    /// lifetime ending this late leaves no room for them in 64 bits.
    NoTimeAfter {
        /// The latest end of a lifetime.
        upper: i64,
    },
    /// A reuse penalty between a buffer and itself.
    SelfPenalty,
    /// A reuse penalty with a negative cost.
    NegativePenalty {
        /// The cost given.
        cost: i64,
    },
    /// Reuse penalties whose costs add up past 2^63-1.
    PenaltiesOverflow,
}

#[cfg(feature = "constraints")]
impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_to(f)
    }
}

#[cfg(feature = "constraints")]
impl LinkError {
    /// Writes the reason (what Display shows) to any writer.
    pub(crate) fn write_to(&self, f: &mut dyn crate::base::text::Out) -> fmt::Result {
        match *self {
            LinkError::FixedApart { first, second } => fill(
                f,
                "colocated but fixed at different offsets, {} and {}",
                &[I(first), I(second)],
            ),
            LinkError::ColocatedAndSeparated => f.put("cannot be both colocated and separated"),
            LinkError::Alignment => {
                f.put("colocated alignments have no common multiple in 64 bits")
            }
            LinkError::FixedMisaligned { offset, alignment } => fill(
                f,
                "colocated at fixed offset {}, which is not a multiple of the group's alignment {}",
                &[I(offset), I(alignment)],
            ),
            LinkError::FixedTooHigh {
                offset,
                size,
                capacity,
            } => fill(
                f,
                "colocated at fixed offset {}, where size {} exceeds the capacity {}",
                &[I(offset), I(size), I(capacity)],
            ),
            LinkError::NoTimeAfter { upper } => fill(
                f,
                "separated, but a lifetime ends at {}, too late to leave time for separations",
                &[I(upper)],
            ),
            LinkError::SelfPenalty => f.put("a reuse penalty needs two different buffers"),
            LinkError::NegativePenalty { cost } => {
                fill(f, "reuse penalty must not be negative, got {}", &[I(cost)])
            }
            LinkError::PenaltiesOverflow => {
                f.put("reuse penalties would add up past 2^63-1 in all")
            }
        }
    }
}

/// Why a pool, or a buffer's list of pools, is refused.
#[cfg(feature = "constraints")]
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PoolError {
    /// A capacity that is not positive.
    Capacity(i64),
    /// An alignment that is not positive.
    Alignment(i64),
    /// A base that is negative, misaligned, or overflows with the capacity.
    Base {
        /// The base.
        base: i64,
        /// The pool's alignment.
        alignment: i64,
    },
    /// A buffer that lists the pool twice.
    Repeated {
        /// The buffer.
        buffer: usize,
    },
}

#[cfg(feature = "constraints")]
impl fmt::Display for PoolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PoolError::Capacity(c) => write!(f, "capacity must be positive, got {c}"),
            PoolError::Alignment(a) => write!(f, "alignment must be positive, got {a}"),
            PoolError::Base { base, alignment } => write!(
                f,
                "base {base} must be a non-negative multiple of the alignment {alignment} that leaves room for the capacity"
            ),
            PoolError::Repeated { buffer } => write!(f, "buffer {buffer} lists it twice"),
        }
    }
}

/// An invalid input: which buffer, which field, why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The capacity is zero or negative.
    Capacity(i64),
    /// A buffer is invalid.
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
    /// A negative base address.
    NegativeBase(i64),
    /// A base address that would misalign a buffer.
    MisalignedBase {
        /// The base address.
        base: i64,
        /// Position of the first buffer it misaligns.
        index: usize,
        /// Its id.
        id: String,
        /// Its alignment.
        alignment: i64,
    },
    /// A base address plus the height does not fit in 64 bits.
    BaseOverflow {
        /// The base address.
        base: i64,
        /// The placement's height.
        height: i64,
    },
    /// A colocation or separation that cannot hold.
    #[cfg(feature = "constraints")]
    Link {
        /// One buffer it is about.
        first: usize,
        /// Its id.
        first_id: String,
        /// The other.
        second: usize,
        /// Its id.
        second_id: String,
        /// Why.
        reason: LinkError,
    },
    /// A pool that cannot be used.
    #[cfg(feature = "constraints")]
    Pool {
        /// Its index.
        pool: usize,
        /// Its name.
        name: String,
        /// Why.
        reason: PoolError,
    },
    /// An index that names no pool.
    #[cfg(feature = "constraints")]
    NoSuchPool {
        /// The index given.
        pool: usize,
        /// Number of pools.
        pools: usize,
    },
    /// An index that names no buffer.
    NoSuchBuffer {
        /// The index given.
        index: usize,
        /// Number of buffers in the problem.
        len: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_to(f)
    }
}

/// "buffer 3", with `(id "x")` when the buffer has an id (those built
/// through the C API have none).
fn write_buffer(f: &mut dyn crate::base::text::Out, index: usize, id: &str) -> fmt::Result {
    fill(f, "buffer {}", &[U(index as u64)])?;
    if id.is_empty() {
        Ok(())
    } else {
        fill(f, " (id \"{}\")", &[S(id)])
    }
}

impl Error {
    /// Writes the message (what Display shows) to any writer.
    pub(crate) fn write_to(&self, f: &mut dyn crate::base::text::Out) -> fmt::Result {
        match self {
            Error::Capacity(c) => fill(f, "capacity must be positive, got {}", &[I(*c)]),
            Error::Buffer {
                index,
                id,
                field,
                reason,
            } => {
                write_buffer(f, *index, id)?;
                f.put(": ")?;
                field.write_to(f)?;
                f.put(" ")?;
                reason.write_to(f)
            }
            Error::NegativeBase(base) => {
                fill(f, "base address must not be negative, got {}", &[I(*base)])
            }
            Error::MisalignedBase {
                base,
                index,
                id,
                alignment,
            } => {
                fill(f, "base address {} is not a multiple of ", &[I(*base)])?;
                write_buffer(f, *index, id)?;
                fill(f, "'s alignment {}", &[I(*alignment)])
            }
            Error::BaseOverflow { base, height } => fill(
                f,
                "base address {} + height {} overflows a 64-bit address",
                &[I(*base), I(*height)],
            ),
            #[cfg(feature = "constraints")]
            Error::Pool { pool, name, reason } => {
                let _ = fill(f, "pool {} (\"{}\"): ", &[U(*pool as u64), S(name)]);
                let mut text = String::new();
                let _ = core::fmt::Write::write_fmt(&mut text, format_args!("{reason}"));
                f.put(&text)
            }
            #[cfg(feature = "constraints")]
            Error::NoSuchPool { pool, pools } => fill(
                f,
                "pool {} does not exist (the problem has {} pools)",
                &[U(*pool as u64), U(*pools as u64)],
            ),
            #[cfg(feature = "constraints")]
            Error::Link {
                first,
                first_id,
                second,
                second_id,
                reason,
            } => {
                write_buffer(f, *first, first_id)?;
                f.put(" and ")?;
                write_buffer(f, *second, second_id)?;
                f.put(": ")?;
                reason.write_to(f)
            }
            Error::NoSuchBuffer { index, len } => fill(
                f,
                "buffer {} does not exist (the problem has {} buffers)",
                &[U(*index as u64), U(*len as u64)],
            ),
        }
    }
}
