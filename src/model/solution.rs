//! Solutions and the validator every solution in the tests goes through.
//!
//! The validator does not share the solver's sweep: it walks the live
//! pieces of all buffers in time order and keeps the memory ranges in use
//! in an ordered map, so a placement is checked in O(pieces log pieces)
//! whatever the number of overlapping pairs.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::model::problem::{Error, Problem};

/// An offset for every buffer, in the problem's order.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Solution {
    /// `offsets[i]` is where buffer `i` starts.
    pub offsets: Vec<i64>,
}

impl Solution {
    /// The highest byte used plus one: `max(offset + size)`, 0 if empty.
    pub fn height(&self, problem: &Problem) -> i64 {
        self.offsets
            .iter()
            .zip(problem.buffers())
            .map(|(&o, b)| o.saturating_add(b.size))
            .max()
            .unwrap_or(0)
    }

    /// The offsets plus `base`: the buffers' addresses in an arena that
    /// starts at `base`. `base` must not be negative, must keep every
    /// buffer aligned (be a multiple of each alignment), and base plus the
    /// height must fit in 64 bits; otherwise the error says which rule
    /// fails and for which buffer.
    pub fn addresses(&self, problem: &Problem, base: i64) -> Result<Vec<i64>, Error> {
        problem.check_base(base)?;
        let height = self.height(problem);
        if height.checked_add(base).is_none() {
            return Err(Error::BaseOverflow { base, height });
        }
        Ok(self.offsets.iter().map(|&o| o + base).collect())
    }
}

/// Why a solution is not valid for a problem.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValidationError {
    /// The solution has a different number of offsets.
    Length {
        /// Buffers in the problem.
        expected: usize,
        /// Offsets in the solution.
        got: usize,
    },
    /// A negative offset.
    Negative {
        /// Buffer index.
        buffer: usize,
        /// Its offset.
        offset: i64,
    },
    /// An offset that is not a multiple of the buffer's alignment.
    Misaligned {
        /// Buffer index.
        buffer: usize,
        /// Its offset.
        offset: i64,
        /// Its alignment.
        alignment: i64,
    },
    /// A buffer that ends above the capacity.
    ExceedsCapacity {
        /// Buffer index.
        buffer: usize,
        /// Its offset.
        offset: i64,
        /// Its size.
        size: i64,
        /// The capacity.
        capacity: i64,
    },
    /// A buffer with a fixed offset placed elsewhere.
    FixedMoved {
        /// Buffer index.
        buffer: usize,
        /// Its offset in the solution.
        offset: i64,
        /// The fixed offset.
        fixed: i64,
    },
    /// Two buffers that use the same memory at the same time.
    Overlap {
        /// One buffer.
        first: usize,
        /// The other.
        second: usize,
        /// A time at which both are alive.
        time: i64,
    },
    /// Colocated buffers at different offsets.
    #[cfg(feature = "constraints")]
    Split {
        /// One buffer.
        first: usize,
        /// The other.
        second: usize,
    },
    /// Separated buffers that share memory.
    #[cfg(feature = "constraints")]
    Separated {
        /// One buffer.
        first: usize,
        /// The other.
        second: usize,
    },
    /// A buffer in a pool it does not list (or in none).
    #[cfg(feature = "constraints")]
    WrongPool {
        /// Buffer index.
        buffer: usize,
        /// The pool it was put in (`u32::MAX`: none).
        pool: u32,
    },
    /// A problem with pools checked without the pool of each buffer (see
    /// [`validate_pooled`]).
    #[cfg(feature = "constraints")]
    Pooled,
}

impl core::fmt::Display for ValidationError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        use crate::base::text::{
            fill,
            Arg::{I, U},
        };
        let u = |v: usize| U(v as u64);
        match *self {
            ValidationError::Length { expected, got } => fill(
                f,
                "the solution has {} offsets for {} buffers",
                &[u(got), u(expected)],
            ),
            ValidationError::Negative { buffer, offset } => fill(
                f,
                "buffer {}: offset {} is negative",
                &[u(buffer), I(offset)],
            ),
            ValidationError::Misaligned {
                buffer,
                offset,
                alignment,
            } => fill(
                f,
                "buffer {}: offset {} is not a multiple of its alignment {}",
                &[u(buffer), I(offset), I(alignment)],
            ),
            ValidationError::ExceedsCapacity {
                buffer,
                offset,
                size,
                capacity,
            } => fill(
                f,
                "buffer {}: offset {} + size {} exceeds the capacity {}",
                &[u(buffer), I(offset), I(size), I(capacity)],
            ),
            ValidationError::FixedMoved {
                buffer,
                offset,
                fixed,
            } => fill(
                f,
                "buffer {}: placed at {} but fixed at {}",
                &[u(buffer), I(offset), I(fixed)],
            ),
            ValidationError::Overlap {
                first,
                second,
                time,
            } => fill(
                f,
                "buffers {} and {} overlap in memory at time {}",
                &[u(first), u(second), I(time)],
            ),
            #[cfg(feature = "constraints")]
            ValidationError::Split { first, second } => fill(
                f,
                "buffers {} and {} are colocated but at different offsets",
                &[u(first), u(second)],
            ),
            #[cfg(feature = "constraints")]
            ValidationError::Separated { first, second } => fill(
                f,
                "buffers {} and {} are separated but share memory",
                &[u(first), u(second)],
            ),
            #[cfg(feature = "constraints")]
            ValidationError::WrongPool { buffer, pool } => fill(
                f,
                "buffer {} is in pool {}, which it does not list",
                &[
                    u(buffer),
                    I(if pool == u32::MAX {
                        -1
                    } else {
                        i64::from(pool)
                    }),
                ],
            ),
            #[cfg(feature = "constraints")]
            ValidationError::Pooled => f.write_str(
                "the problem has pools: check it with validate_pooled and the pool of each buffer",
            ),
        }
    }
}

/// Checks that `solution` places every buffer of `problem` at a non-negative
/// aligned offset, inside the capacity, at its fixed offset if it has one,
/// and that no two buffers use the same byte at the same time (gap windows
/// included).
pub fn validate(problem: &Problem, solution: &Solution) -> Result<(), ValidationError> {
    validate_below(problem, solution, problem.capacity())
}

/// [`validate`] against another capacity (for heights below the problem's).
pub fn validate_below(
    problem: &Problem,
    solution: &Solution,
    capacity: i64,
) -> Result<(), ValidationError> {
    let buffers = problem.buffers();
    if solution.offsets.len() != buffers.len() {
        return Err(ValidationError::Length {
            expected: buffers.len(),
            got: solution.offsets.len(),
        });
    }
    #[cfg(feature = "constraints")]
    if !problem.pools().is_empty() {
        return Err(ValidationError::Pooled);
    }
    for (i, (b, &offset)) in buffers.iter().zip(&solution.offsets).enumerate() {
        if offset < 0 {
            return Err(ValidationError::Negative { buffer: i, offset });
        }
        if offset % b.alignment != 0 {
            return Err(ValidationError::Misaligned {
                buffer: i,
                offset,
                alignment: b.alignment,
            });
        }
        if offset.checked_add(b.size).is_none_or(|end| end > capacity) {
            return Err(ValidationError::ExceedsCapacity {
                buffer: i,
                offset,
                size: b.size,
                capacity,
            });
        }
        if let Some(fixed) = b.offset {
            if fixed != offset {
                return Err(ValidationError::FixedMoved {
                    buffer: i,
                    offset,
                    fixed,
                });
            }
        }
    }

    // Pieces in order of their start, each with its memory range, so that
    // the sweep reads them in sequence (a million buffers: looking pieces
    // up by id in time order missed the cache on every event).
    struct Live {
        start: i64,
        end: i64,
        lower: i64,
        upper: i64,
        buffer: u32,
    }
    let mut pieces: Vec<Live> = Vec::with_capacity(buffers.len());
    // Colocated buffers alias: each group is checked as one buffer whose
    // memory at each moment is the union of its live members' bytes.
    #[cfg(feature = "constraints")]
    let group = {
        let links = problem.links();
        check_separations(problem, &solution.offsets)?;
        let group = links.group_index(buffers.len());
        for members in &links.colocations {
            let first = members[0] as usize;
            let offset = solution.offsets[first];
            if let Some(&m) = members
                .iter()
                .find(|&&m| solution.offsets[m as usize] != offset)
            {
                return Err(ValidationError::Split {
                    first,
                    second: m as usize,
                });
            }
            for (start, end, lower, upper) in union_pieces(buffers, members) {
                pieces.push(Live {
                    start,
                    end,
                    lower: offset + lower,
                    upper: offset + upper,
                    buffer: first as u32,
                });
            }
        }
        group
    };
    for (i, (b, &offset)) in buffers.iter().zip(&solution.offsets).enumerate() {
        #[cfg(feature = "constraints")]
        if group[i] != u32::MAX {
            continue;
        }
        for p in b.pieces() {
            pieces.push(Live {
                start: p.lower,
                end: p.upper,
                lower: offset + p.window.lower,
                upper: offset + p.window.upper,
                buffer: i as u32,
            });
        }
    }
    crate::base::sort::sort_by_key(&mut pieces, |p| p.start);

    // Memory ranges in use, keyed by their start and holding (end,
    // buffer): disjoint (so their starts differ) as long as the placement
    // is valid, and the only range that can meet a new one is the last
    // one starting below its end; the first meeting ends the walk. Pieces
    // ending at a time leave before those starting then.
    let mut active: BTreeMap<i64, (i64, u32)> = BTreeMap::new();
    // Every piece ending by a start began before it, so it is in `active`
    // when its end comes up: the ends, sorted once, replace a heap.
    let mut ends: Vec<(i64, i64)> = pieces.iter().map(|p| (p.end, p.lower)).collect();
    crate::base::sort::sort(&mut ends);
    let mut next_end = 0;
    for p in &pieces {
        while let Some(&(t, lower)) = ends.get(next_end) {
            if t > p.start {
                break;
            }
            next_end += 1;
            active.remove(&lower);
        }
        if let Some((_, &(end, other))) = active.range(..p.upper).next_back() {
            if end > p.lower {
                let (a, b) = (other, p.buffer);
                return Err(ValidationError::Overlap {
                    first: a.min(b) as usize,
                    second: a.max(b) as usize,
                    time: p.start,
                });
            }
        }
        active.insert(p.lower, (p.upper, p.buffer));
    }
    Ok(())
}

/// Checks that no two buffers of a separation group share a byte.
#[cfg(feature = "constraints")]
fn check_separations(problem: &Problem, offsets: &[i64]) -> Result<(), ValidationError> {
    let buffers = problem.buffers();
    for members in problem.separations() {
        let mut spans: Vec<(i64, i64, usize)> = members
            .iter()
            .map(|&m| {
                let m = m as usize;
                (offsets[m], offsets[m] + buffers[m].size, m)
            })
            .collect();
        spans.sort_unstable();
        let mut reach: Option<(i64, usize)> = None;
        for (start, end, m) in spans {
            if let Some((top, owner)) = reach {
                if top > start {
                    return Err(ValidationError::Separated {
                        first: owner.min(m),
                        second: owner.max(m),
                    });
                }
            }
            if reach.is_none_or(|(top, _)| end > top) {
                reach = Some((end, m));
            }
        }
    }
    Ok(())
}

/// The memory a colocation group uses, relative to its offset: for each
/// stretch of time between two ends of its members' pieces, the union of
/// the byte ranges of the pieces live then, as disjoint
/// `(start, end, lower, upper)`.
#[cfg(feature = "constraints")]
fn union_pieces(
    buffers: &[crate::model::problem::Buffer],
    members: &[u32],
) -> Vec<(i64, i64, i64, i64)> {
    let mut parts: Vec<(i64, i64, i64, i64)> = Vec::new();
    for &m in members {
        for p in buffers[m as usize].pieces() {
            parts.push((p.lower, p.upper, p.window.lower, p.window.upper));
        }
    }
    let mut times: Vec<i64> = parts.iter().flat_map(|p| [p.0, p.1]).collect();
    times.sort_unstable();
    times.dedup();
    let mut out = Vec::new();
    let mut ranges: Vec<(i64, i64)> = Vec::new();
    for w in times.windows(2) {
        let (t0, t1) = (w[0], w[1]);
        ranges.clear();
        ranges.extend(
            parts
                .iter()
                .filter(|p| p.0 <= t0 && t1 <= p.1)
                .map(|p| (p.2, p.3)),
        );
        ranges.sort_unstable();
        let mut current: Option<(i64, i64)> = None;
        for &(lo, hi) in ranges.iter() {
            match current {
                Some((a, b)) if lo <= b => current = Some((a, b.max(hi))),
                Some((a, b)) => {
                    out.push((t0, t1, a, b));
                    current = Some((lo, hi));
                }
                None => current = Some((lo, hi)),
            }
        }
        if let Some((a, b)) = current {
            out.push((t0, t1, a, b));
        }
    }
    out
}

/// Checks a placement of a problem with pools: buffer `i` is in pool
/// `pool_of[i]`, which it lists, at address `solution.offsets[i]` (the
/// pool's base plus its offset there); a buffer with a fixed offset is in
/// the pool it lists first. In each pool, as [`validate`]
/// checks one arena: offsets aligned (to the buffer's and the pool's
/// alignment), below the pool's capacity, fixed ones in place, no two
/// buffers sharing a byte at one time, colocated ones at one offset,
/// separated ones apart; colocated buffers share a pool too.
#[cfg(feature = "constraints")]
pub fn validate_pooled(
    problem: &Problem,
    solution: &Solution,
    pool_of: &[u32],
) -> Result<(), ValidationError> {
    let n = problem.len();
    for got in [solution.offsets.len(), pool_of.len()] {
        if got != n {
            return Err(ValidationError::Length { expected: n, got });
        }
    }
    let pools = problem.pools();
    for (i, &p) in pool_of.iter().enumerate() {
        // A fixed buffer stays in the pool it lists first.
        let allowed = match problem.buffers()[i].offset {
            Some(_) => problem.first_pool(i) == Some(p),
            None => problem.lists_pool(i, p),
        };
        if p as usize >= pools.len() || !allowed {
            return Err(ValidationError::WrongPool { buffer: i, pool: p });
        }
    }
    for members in problem.colocations() {
        let first = members[0] as usize;
        if let Some(&m) = members
            .iter()
            .find(|&&m| pool_of[m as usize] != pool_of[first])
        {
            return Err(ValidationError::Split {
                first,
                second: m as usize,
            });
        }
    }
    // Each buffer against its pool, with its own index in the errors; the
    // per-pool check below then finds nothing of this kind.
    for (i, b) in problem.buffers().iter().enumerate() {
        let pool = &pools[pool_of[i] as usize];
        let offset = solution.offsets[i] - pool.base;
        let alignment = crate::base::math::lcm(b.alignment, pool.alignment).unwrap_or(i64::MAX);
        if offset < 0 {
            return Err(ValidationError::Negative { buffer: i, offset });
        }
        if offset % alignment != 0 {
            return Err(ValidationError::Misaligned {
                buffer: i,
                offset,
                alignment,
            });
        }
        if offset
            .checked_add(b.size)
            .is_none_or(|top| top > pool.capacity)
        {
            return Err(ValidationError::ExceedsCapacity {
                buffer: i,
                offset,
                size: b.size,
                capacity: pool.capacity,
            });
        }
        if let Some(fixed) = b.offset.filter(|&f| f != offset) {
            return Err(ValidationError::FixedMoved {
                buffer: i,
                offset,
                fixed,
            });
        }
    }
    for (p, pool) in pools.iter().enumerate() {
        let members: Vec<usize> = (0..n).filter(|&i| pool_of[i] == p as u32).collect();
        let sub = problem
            .subproblem(&members, pool.capacity, pool.alignment)
            .map_err(|_| ValidationError::WrongPool {
                buffer: members.first().copied().unwrap_or(0),
                pool: p as u32,
            })?;
        let offsets = members
            .iter()
            .map(|&m| solution.offsets[m] - pool.base)
            .collect();
        validate(&sub, &Solution { offsets }).map_err(|e| renumber(e, &members))?;
    }
    Ok(())
}

/// `e` about buffers of a subproblem, made about the buffers `members`.
#[cfg(feature = "constraints")]
fn renumber(e: ValidationError, members: &[usize]) -> ValidationError {
    let m = |i: usize| members.get(i).copied().unwrap_or(i);
    match e {
        ValidationError::Negative { buffer, offset } => ValidationError::Negative {
            buffer: m(buffer),
            offset,
        },
        ValidationError::Misaligned {
            buffer,
            offset,
            alignment,
        } => ValidationError::Misaligned {
            buffer: m(buffer),
            offset,
            alignment,
        },
        ValidationError::ExceedsCapacity {
            buffer,
            offset,
            size,
            capacity,
        } => ValidationError::ExceedsCapacity {
            buffer: m(buffer),
            offset,
            size,
            capacity,
        },
        ValidationError::FixedMoved {
            buffer,
            offset,
            fixed,
        } => ValidationError::FixedMoved {
            buffer: m(buffer),
            offset,
            fixed,
        },
        ValidationError::Overlap {
            first,
            second,
            time,
        } => ValidationError::Overlap {
            first: m(first),
            second: m(second),
            time,
        },
        ValidationError::Split { first, second } => ValidationError::Split {
            first: m(first),
            second: m(second),
        },
        ValidationError::Separated { first, second } => ValidationError::Separated {
            first: m(first),
            second: m(second),
        },
        other => other,
    }
}
