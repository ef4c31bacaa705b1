//! The problem: buffers and the capacity they must fit below, checked as
//! they come.
//!
//! A [`Problem`] is validated when it is built and stays valid: every
//! buffer has a non-empty half-open lifetime, a positive size and alignment,
//! gaps inside its lifetime that do not overlap, and fixed offsets or hints
//! that are aligned and fit the capacity. Other lifetime conventions are
//! converted by [`Lifetime`] at the edge and nowhere else.

use alloc::vec::Vec;

pub use super::buffer::{Buffer, Gap, Lifetime, Piece, Pieces, Window};
pub use super::error::{BufferError, Error, Field};
#[cfg(feature = "constraints")]
pub use super::error::{LinkError, PoolError};
#[cfg(feature = "constraints")]
use super::{links::Links, pools::Pools};

/// A validated problem: buffers and the capacity they must fit below.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    buffers: Vec<Buffer>,
    capacity: i64,
    /// The sum over the buffers of `size + alignment - 1`, and the highest
    /// fixed offset: a bound on the top of any placement that stacks free
    /// buffers above the fixed ones, kept at most `i64::MAX` (see
    /// [`BufferError::TotalTooLarge`]) so that no strategy's offsets or
    /// tops can overflow.
    reach: i64,
    fixed_reach: i64,
    /// Times from this one on are not lifetimes but the moments a lowering
    /// gives separation groups (see `lower`): what reads how long a buffer
    /// lives, to order buffers, stops there ([`Problem::lived`]). `i64::MAX`
    /// where there are none.
    moments_from: i64,
    /// The latest end of a lifetime (0 for no buffers): the separation
    /// moments go after it, so each group declared checks that they fit
    /// (without a scan of the buffers per group).
    #[cfg(feature = "constraints")]
    pub(crate) latest_upper: i64,
    /// Colocations and separations (see [`super::links`]).
    #[cfg(feature = "constraints")]
    pub(crate) links: Links,
    /// Memory pools and each buffer's choice of them (see
    /// [`super::pools`]).
    #[cfg(feature = "constraints")]
    pub(crate) pools: Pools,
}

impl Problem {
    /// Validates `buffers` against `capacity`. Gaps are stored sorted.
    /// Nothing is built if any buffer is invalid; the error names the first.
    pub fn new(capacity: i64, buffers: Vec<Buffer>) -> Result<Problem, Error> {
        let mut problem = Problem::empty(capacity)?;
        problem.buffers.reserve(buffers.len());
        for mut buffer in buffers {
            let index = problem.buffers.len();
            problem.check_buffer(index, &mut buffer)?;
            (problem.reach, problem.fixed_reach) = problem.check_reach(index, &buffer, None)?;
            #[cfg(feature = "constraints")]
            {
                problem.latest_upper = problem.latest_upper.max(buffer.upper);
            }
            problem.buffers.push(buffer);
        }
        problem.check_ids()?;
        Ok(problem)
    }

    /// A problem with no buffers.
    pub fn empty(capacity: i64) -> Result<Problem, Error> {
        if capacity <= 0 {
            return Err(Error::Capacity(capacity));
        }
        Ok(Problem {
            buffers: Vec::new(),
            capacity,
            reach: 0,
            fixed_reach: 0,
            moments_from: i64::MAX,
            #[cfg(feature = "constraints")]
            latest_upper: 0,
            #[cfg(feature = "constraints")]
            links: Links::default(),
            #[cfg(feature = "constraints")]
            pools: Pools::default(),
        })
    }

    /// Adds one buffer after validating it; returns its index. A non-empty
    /// id is checked against the others (linear time: build large problems
    /// with [`Problem::new`], or leave ids empty).
    pub fn push(&mut self, mut buffer: Buffer) -> Result<usize, Error> {
        let index = self.buffers.len();
        self.check_buffer(index, &mut buffer)?;
        let reach = self.check_reach(index, &buffer, None)?;
        #[cfg(feature = "constraints")]
        self.check_separation_time(index, &buffer.id, buffer.upper, 0)?;
        if !buffer.id.is_empty() {
            if let Some(first) = self.buffers.iter().position(|b| b.id == buffer.id) {
                return Err(Error::Buffer {
                    index,
                    id: buffer.id,
                    field: Field::Id,
                    reason: BufferError::DuplicateId { first },
                });
            }
        }
        (self.reach, self.fixed_reach) = reach;
        #[cfg(feature = "constraints")]
        {
            self.latest_upper = self.latest_upper.max(buffer.upper);
        }
        self.buffers.push(buffer);
        Ok(index)
    }

    /// Replaces buffer `index` after validating the replacement; on error
    /// nothing changes.
    pub fn replace(&mut self, index: usize, mut buffer: Buffer) -> Result<(), Error> {
        if index >= self.buffers.len() {
            return Err(Error::NoSuchBuffer {
                index,
                len: self.buffers.len(),
            });
        }
        self.check_buffer(index, &mut buffer)?;
        let reach = self.check_reach(index, &buffer, Some(index))?;
        #[cfg(feature = "constraints")]
        self.check_linked_offset(index, buffer.offset)?;
        #[cfg(feature = "constraints")]
        self.check_separation_time(index, &buffer.id, buffer.upper, 0)?;
        if !buffer.id.is_empty() {
            let dup = self
                .buffers
                .iter()
                .enumerate()
                .find(|(i, b)| *i != index && b.id == buffer.id);
            if let Some((first, _)) = dup {
                return Err(Error::Buffer {
                    index,
                    id: buffer.id,
                    field: Field::Id,
                    reason: BufferError::DuplicateId { first },
                });
            }
        }
        (self.reach, self.fixed_reach) = reach;
        // Most changes (a gap, an offset, a hint) keep the lifetime: only
        // the buffer that ended last, ending sooner, calls for a scan.
        #[cfg(feature = "constraints")]
        let (before, after) = (self.buffers[index].upper, buffer.upper);
        self.buffers[index] = buffer;
        #[cfg(feature = "constraints")]
        if before == self.latest_upper && after < before {
            self.find_latest_upper();
        } else {
            self.latest_upper = self.latest_upper.max(after);
        }
        Ok(())
    }

    /// Drops the buffers from `len` on (to undo a partial batch).
    pub(crate) fn truncate(&mut self, len: usize) {
        self.buffers.truncate(len);
        #[cfg(feature = "constraints")]
        self.find_latest_upper();
    }

    /// Sets [`Problem::latest_upper`] from the buffers (a scan: after the
    /// buffer that ended last ends sooner, or buffers are dropped).
    #[cfg(feature = "constraints")]
    fn find_latest_upper(&mut self) {
        self.latest_upper = self.buffers.iter().map(|b| b.upper).max().unwrap_or(0);
    }

    /// The buffers, in the order given.
    pub fn buffers(&self) -> &[Buffer] {
        &self.buffers
    }

    /// Checks that an arena may start at `base`: not negative, and a
    /// multiple of every buffer's alignment, so that addresses stay as
    /// aligned as offsets. (See [`crate::Solution::addresses`].)
    pub fn check_base(&self, base: i64) -> Result<(), Error> {
        if base < 0 {
            return Err(Error::NegativeBase(base));
        }
        match self
            .buffers
            .iter()
            .enumerate()
            .find(|(_, b)| base % b.alignment != 0)
        {
            Some((index, b)) => Err(Error::MisalignedBase {
                base,
                index,
                id: b.id.clone(),
                alignment: b.alignment,
            }),
            None => Ok(()),
        }
    }

    /// Buffer `i`'s own lifetime `[lower, end)`, the moments of its
    /// separations left out: it ends with its last live piece that starts
    /// before them (its whole lifetime where there are none). How long a
    /// buffer lives says how hard it is to place, and every separated
    /// buffer would otherwise seem to live to the last moment.
    pub(crate) fn lived(&self, i: usize) -> (i64, i64) {
        let b = &self.buffers[i];
        if b.upper <= self.moments_from {
            return (b.lower, b.upper);
        }
        let end = b
            .pieces()
            .take_while(|p| p.lower < self.moments_from)
            .last()
            .map_or(b.upper, |p| p.upper);
        (b.lower, end)
    }

    /// Marks the times from `t` on as separation moments (see
    /// [`Problem::lived`]).
    #[cfg(feature = "constraints")]
    pub(crate) fn set_moments_from(&mut self, t: i64) {
        self.moments_from = t;
    }

    /// The time the separation moments start (`i64::MAX` for none).
    #[cfg(feature = "heuristics")]
    pub(crate) fn moments_from(&self) -> i64 {
        self.moments_from
    }

    /// Number of buffers.
    pub fn len(&self) -> usize {
        self.buffers.len()
    }

    /// True when there are no buffers.
    pub fn is_empty(&self) -> bool {
        self.buffers.is_empty()
    }

    /// The capacity every buffer must fit below.
    pub fn capacity(&self) -> i64 {
        self.capacity
    }

    /// The same problem with another capacity, revalidated (fixed offsets
    /// and hints must still fit).
    pub fn with_capacity(&self, capacity: i64) -> Result<Problem, Error> {
        #[allow(unused_mut)]
        let mut problem = Problem::new(capacity, self.buffers.clone())?;
        #[cfg(feature = "constraints")]
        {
            problem.links = self.links.clone();
            problem.pools = self.pools.clone();
        }
        Ok(problem)
    }

    /// What every placement's height is a multiple of: the greatest
    /// common divisor of the sizes and of the offsets buffers may take (a
    /// fixed offset, or any multiple of an alignment), since a height is
    /// some buffer's offset plus its size. 1 with windows (a piece's top
    /// is its window's, not the buffer's). A bound proven below a height
    /// rounds up to it.
    #[cfg(feature = "heuristics")]
    pub(crate) fn height_grain(&self) -> i64 {
        if self.has_windows() {
            return 1;
        }
        let grain = self.buffers.iter().fold(0, |g, b| {
            let step = b.offset.unwrap_or(b.alignment);
            crate::base::math::gcd(crate::base::math::gcd(g, b.size), step)
        });
        // (No buffers: every height is 0, and 1 divides it.)
        grain.max(1)
    }

    /// Whether any buffer carries a gap with a window.
    pub fn has_windows(&self) -> bool {
        self.buffers
            .iter()
            .any(|b| b.gaps.iter().any(|g| g.window.is_some()))
    }

    /// The problem's reach with `b` added as buffer `index` (replacing the
    /// buffer there, with `replacing`), or the error if it passes
    /// `i64::MAX`: then two of its buffers' offsets and sizes might add up
    /// past what 64 bits hold, and a placement could not be trusted.
    fn check_reach(
        &self,
        index: usize,
        b: &Buffer,
        replacing: Option<usize>,
    ) -> Result<(i64, i64), Error> {
        // Sizes and alignments are positive, so `size + alignment - 1`
        // only overflows past i64::MAX, which is refused anyway.
        let own = |b: &Buffer| b.size.checked_add(b.alignment - 1);
        // The highest fixed offset only grows (a replaced fixed buffer's
        // offset still counts): conservative, and cheap for the tiny build.
        let (mut reach, fixed) = (Some(self.reach), self.fixed_reach);
        if let Some(old) = replacing {
            reach = own(&self.buffers[old]).and_then(|o| self.reach.checked_sub(o));
        }
        let fixed = fixed.max(b.offset.unwrap_or(0));
        let reach = reach.zip(own(b)).and_then(|(r, o)| r.checked_add(o));
        match reach.filter(|r| r.checked_add(fixed).is_some()) {
            Some(reach) => Ok((reach, fixed)),
            None => Err(Error::Buffer {
                index,
                id: b.id.clone(),
                field: Field::Size,
                reason: BufferError::TotalTooLarge,
            }),
        }
    }

    fn check_buffer(&self, index: usize, b: &mut Buffer) -> Result<(), Error> {
        let fail = |field: Field, reason: BufferError| Error::Buffer {
            index,
            id: b.id.clone(),
            field,
            reason,
        };
        if b.lower < 0 {
            return Err(fail(Field::Lower, BufferError::Negative(b.lower)));
        }
        if b.upper <= b.lower {
            return Err(fail(
                Field::Upper,
                BufferError::EmptyLifetime {
                    lower: b.lower,
                    upper: b.upper,
                },
            ));
        }
        if b.size <= 0 {
            return Err(fail(Field::Size, BufferError::NotPositive(b.size)));
        }
        if b.alignment <= 0 {
            return Err(fail(
                Field::Alignment,
                BufferError::NotPositive(b.alignment),
            ));
        }
        for (i, g) in b.gaps.iter().enumerate() {
            if g.upper <= g.lower {
                return Err(fail(
                    Field::Gap(i),
                    BufferError::EmptyGap {
                        lower: g.lower,
                        upper: g.upper,
                    },
                ));
            }
            if g.lower < b.lower || g.upper > b.upper {
                return Err(fail(
                    Field::Gap(i),
                    BufferError::GapOutsideLifetime {
                        lower: g.lower,
                        upper: g.upper,
                        life_lower: b.lower,
                        life_upper: b.upper,
                    },
                ));
            }
            if let Some(w) = g.window {
                if w.lower < 0 || w.upper <= w.lower || w.upper > b.size {
                    return Err(fail(
                        Field::Gap(i),
                        BufferError::BadWindow {
                            lower: w.lower,
                            upper: w.upper,
                            size: b.size,
                        },
                    ));
                }
            }
        }
        // Report overlaps by the gaps' positions as given, then keep them
        // sorted so that pieces come out in time order.
        let mut order: Vec<usize> = (0..b.gaps.len()).collect();
        crate::base::sort::sort_by_key(&mut order, |&i| (b.gaps[i].lower, i));
        for pair in order.windows(2) {
            let (a, c) = (&b.gaps[pair[0]], &b.gaps[pair[1]]);
            if a.upper > c.lower {
                let (first, second) = (pair[0].min(pair[1]), pair[0].max(pair[1]));
                let (g, o) = (&b.gaps[second], &b.gaps[first]);
                return Err(fail(
                    Field::Gap(second),
                    BufferError::GapsOverlap {
                        lower: g.lower,
                        upper: g.upper,
                        other_lower: o.lower,
                        other_upper: o.upper,
                    },
                ));
            }
        }
        crate::base::sort::sort_by_key(&mut b.gaps, |g| g.lower);
        for (field, value) in [(Field::Offset, b.offset), (Field::Hint, b.hint)] {
            let Some(offset) = value else { continue };
            if offset < 0 {
                return Err(fail(field, BufferError::Negative(offset)));
            }
            if offset % b.alignment != 0 {
                return Err(fail(
                    field,
                    BufferError::Misaligned {
                        offset,
                        alignment: b.alignment,
                    },
                ));
            }
            let Some(end) = offset.checked_add(b.size) else {
                return Err(fail(
                    field,
                    BufferError::Overflow {
                        offset,
                        size: b.size,
                    },
                ));
            };
            if end > self.capacity {
                return Err(fail(
                    field,
                    BufferError::ExceedsCapacity {
                        offset,
                        size: b.size,
                        capacity: self.capacity,
                    },
                ));
            }
        }
        Ok(())
    }

    /// Rejects duplicate non-empty ids, naming the earliest repeat.
    fn check_ids(&self) -> Result<(), Error> {
        let id = |i: u32| self.buffers[i as usize].id.as_str();
        // Sorting a million ids as strings takes a quarter of a second;
        // sorting their hashes takes a few milliseconds. Equal ids have
        // equal hashes, so only runs of equal hashes (collisions and
        // repeats: almost always none) are then sorted by the ids.
        let mut keys: Vec<(u64, u32)> = (0..self.buffers.len() as u32)
            .filter(|&i| !id(i).is_empty())
            .map(|i| (fnv1a(id(i).as_bytes()), i))
            .collect();
        crate::base::sort::sort(&mut keys);
        let mut order: Vec<u32> = keys.iter().map(|&(_, i)| i).collect();
        let mut from = 0;
        while from < keys.len() {
            let to = from
                + keys[from..]
                    .iter()
                    .take_while(|k| k.0 == keys[from].0)
                    .count();
            if to - from > 1 {
                crate::base::sort::sort_by_key(&mut order[from..to], |&i| (id(i), i));
            }
            from = to;
        }
        // Within a run of equal ids the first two entries are the first
        // occurrence and its earliest repeat.
        let repeat = order
            .windows(2)
            .zip(keys.windows(2))
            .filter(|(w, k)| k[0].0 == k[1].0 && id(w[0]) == id(w[1]))
            .map(|(w, _)| w)
            .min_by_key(|w| w[1]);
        match repeat {
            None => Ok(()),
            Some(w) => {
                // The window found may not start the run: find the first.
                let first = order
                    .iter()
                    .find(|&&i| id(i) == id(w[1]))
                    .copied()
                    .unwrap_or(w[0]);
                Err(Error::Buffer {
                    index: w[1] as usize,
                    id: id(w[1]).into(),
                    field: Field::Id,
                    reason: BufferError::DuplicateId {
                        first: first as usize,
                    },
                })
            }
        }
    }
}

/// The 64-bit FNV-1a hash: short keys, no dependencies, good enough to
/// group equal ids.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
