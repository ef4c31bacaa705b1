//! One buffer: its lifetime, size, alignment, gaps and windows, fixed
//! offset or hint, and how lifetimes are written at the edge.

use alloc::string::String;
use alloc::vec::Vec;

/// The part `[lower, upper)` of a buffer's memory, relative to its offset,
/// that stays in use during a gap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Window {
    /// First byte still in use, relative to the buffer's offset.
    pub lower: i64,
    /// One past the last byte still in use.
    pub upper: i64,
}

/// A time interval `[lower, upper)` inside a buffer's lifetime where the
/// buffer is dead, or, with a window, only partly alive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Gap {
    /// First time step of the gap.
    pub lower: i64,
    /// One past the last time step of the gap.
    pub upper: i64,
    /// The part of the buffer that stays in use during the gap, if any.
    pub window: Option<Window>,
}

/// One buffer to place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buffer {
    /// An identifier kept for I/O; ids that are not empty must be unique.
    pub id: String,
    /// First time step at which the buffer is alive.
    pub lower: i64,
    /// One past the last time step at which it is alive.
    pub upper: i64,
    /// Bytes it occupies.
    pub size: i64,
    /// Its offset must be a multiple of this (at least 1).
    pub alignment: i64,
    /// Intervals of its lifetime where it is dead or only partly alive.
    pub gaps: Vec<Gap>,
    /// If set, the buffer must be placed exactly here.
    pub offset: Option<i64>,
    /// If set, an offset to try first (for example last compile's offset).
    pub hint: Option<i64>,
}

impl Buffer {
    /// A buffer alive during `[lower, upper)` with alignment 1, no gaps, no
    /// fixed offset and no hint.
    pub fn new(id: impl Into<String>, lower: i64, upper: i64, size: i64) -> Self {
        Buffer {
            id: id.into(),
            lower,
            upper,
            size,
            alignment: 1,
            gaps: Vec::new(),
            offset: None,
            hint: None,
        }
    }

    /// The same buffer with another alignment.
    pub fn with_alignment(mut self, alignment: i64) -> Self {
        self.alignment = alignment;
        self
    }

    /// The same buffer with one more gap.
    pub fn with_gap(mut self, gap: Gap) -> Self {
        self.gaps.push(gap);
        self
    }

    /// The same buffer fixed at `offset`.
    pub fn with_offset(mut self, offset: i64) -> Self {
        self.offset = Some(offset);
        self
    }

    /// The same buffer with a hint.
    pub fn with_hint(mut self, hint: i64) -> Self {
        self.hint = Some(hint);
        self
    }

    /// Product of size and lifetime length (saturating).
    pub fn area(&self) -> i128 {
        self.size as i128 * (self.upper - self.lower) as i128
    }

    /// The live pieces of this buffer in time order: `(lower, upper, window)`
    /// where `window` is the occupied part relative to the offset. A gap
    /// without a window leaves no piece; pieces that touch and occupy the
    /// same window are merged. Assumes a validated buffer (sorted gaps).
    pub fn pieces(&self) -> Pieces<'_> {
        Pieces {
            buffer: self,
            cursor: self.lower,
            next_gap: 0,
            pending: None,
        }
    }
}

/// Iterator over the live pieces of a buffer; see [`Buffer::pieces`].
pub struct Pieces<'a> {
    buffer: &'a Buffer,
    cursor: i64,
    next_gap: usize,
    pending: Option<Piece>,
}

/// One live piece of a buffer: alive during `[lower, upper)`, occupying
/// `window` relative to its offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// First time step of the piece.
    pub lower: i64,
    /// One past its last time step.
    pub upper: i64,
    /// Occupied bytes relative to the buffer's offset.
    pub window: Window,
}

impl Pieces<'_> {
    /// The next stretch of the lifetime: `None` at the end, `Some(None)` for
    /// a dead gap, `Some(Some(piece))` for a live stretch (not yet merged).
    fn stretch(&mut self) -> Option<Option<Piece>> {
        let b = self.buffer;
        if self.cursor >= b.upper {
            return None;
        }
        let full = Window {
            lower: 0,
            upper: b.size,
        };
        let (upper, window) = match b.gaps.get(self.next_gap) {
            Some(gap) if gap.lower <= self.cursor => {
                self.next_gap += 1;
                (gap.upper, gap.window)
            }
            Some(gap) => (gap.lower, Some(full)),
            None => (b.upper, Some(full)),
        };
        let lower = core::mem::replace(&mut self.cursor, upper);
        Some(window.map(|window| Piece {
            lower,
            upper,
            window,
        }))
    }
}

impl Iterator for Pieces<'_> {
    type Item = Piece;

    fn next(&mut self) -> Option<Piece> {
        let mut current = self.pending.take();
        loop {
            match self.stretch() {
                None => return current,
                Some(None) if current.is_some() => return current,
                Some(None) => {}
                Some(Some(p)) => match current {
                    None => current = Some(p),
                    Some(ref mut c) if c.upper == p.lower && c.window == p.window => {
                        c.upper = p.upper;
                    }
                    Some(c) => {
                        self.pending = Some(p);
                        return Some(c);
                    }
                },
            }
        }
    }
}

/// How input lifetimes are written. Internally every lifetime is half-open
/// `[lower, upper)`; other conventions are converted at the edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Lifetime {
    /// `[lower, upper)`: alive from `lower` up to, not including, `upper`.
    #[default]
    HalfOpen,
    /// `[lower, upper]`: alive at both endpoints (XLA, shared-memory planners).
    Inclusive,
    /// `(lower, upper)`: alive strictly between the endpoints.
    Exclusive,
}

impl Lifetime {
    /// Converts `(lower, upper)` written in this convention to half-open,
    /// or `None` if the conversion overflows.
    pub fn to_half_open(self, lower: i64, upper: i64) -> Option<(i64, i64)> {
        match self {
            Lifetime::HalfOpen => Some((lower, upper)),
            Lifetime::Inclusive => Some((lower, upper.checked_add(1)?)),
            Lifetime::Exclusive => Some((lower.checked_add(1)?, upper)),
        }
    }
}
