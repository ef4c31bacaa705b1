//! Problems derived from a problem: its links lowered to plain buffers
//! (what every strategy places), and some of its buffers alone (one pool's
//! share).

use alloc::vec::Vec;

use super::buffer::{Buffer, Gap, Window};
use super::error::{Error, LinkError};
use super::problem::Problem;
use crate::base::math::lcm;

/// A problem with its links lowered to plain buffers, and the way back.
///
/// A colocation group becomes one buffer: alive from its first member's
/// start to its last member's end, as tall as its tallest member, with a
/// gap wherever no member is alive and a gap with the window `[lo, hi)`
/// wherever the members alive use less: `[lo, hi)` is the hull of their
/// bytes then (for members without windows of their own, `[0, tallest
/// live size)`). A separation group gets a moment of its own after every
/// lifetime, at which all its members (or their groups) are alive at full
/// size (a colocation group with the size of its tallest separated
/// member), so that any two of them take disjoint memory; nothing else is
/// alive then. Separations declared pair by pair share moments instead,
/// where that makes fewer (see `cover`).
///
/// The exact search stays complete for colocations of buffers without
/// windows: the windows of a group all start at 0, so for any two placed
/// buffers the offsets they may not take relative to each other form one
/// interval around zero, the case the search's canonical order covers
/// (the sweep counts the pairs for which that fails as "interleaving",
/// and then reports an exhausted search as not found, never as proof).
pub(crate) struct Lowered {
    /// The plain problem.
    pub problem: Problem,
    /// For each original buffer, the lowered buffer that carries it.
    unit: Vec<u32>,
}

impl Lowered {
    /// The original buffers' offsets from the lowered problem's.
    pub fn lift(&self, offsets: &[i64]) -> Vec<i64> {
        self.unit.iter().map(|&u| offsets[u as usize]).collect()
    }

    /// For each lowered buffer, the original buffers it carries.
    pub fn members(&self) -> Vec<Vec<usize>> {
        let mut out = alloc::vec![Vec::new(); self.problem.len()];
        for (i, &u) in self.unit.iter().enumerate() {
            out[u as usize].push(i);
        }
        out
    }
}

impl Problem {
    /// The problem with its colocations and separations lowered to plain
    /// buffers (see [`Lowered`]). A problem with no links lowers to a copy.
    pub(crate) fn lowered(&self) -> Result<Lowered, Error> {
        let buffers = self.buffers();
        let n = buffers.len();
        let group = self.links.group_index(n);
        let mut unit = alloc::vec![u32::MAX; n];
        let mut out: Vec<Buffer> = Vec::with_capacity(n);
        for i in 0..n {
            if unit[i] != u32::MAX {
                continue;
            }
            let at = out.len() as u32;
            if group[i] == u32::MAX {
                unit[i] = at;
                out.push(buffers[i].clone());
                continue;
            }
            let members = &self.links.colocations[group[i] as usize];
            for &m in members {
                unit[m as usize] = at;
            }
            out.push(colocated(buffers, members, self.capacity()));
        }
        // One moment per separation group, after every lifetime. A group
        // of colocated buffers takes there only the bytes of its separated
        // members: [0, the tallest of them).
        let mut moment = out.iter().map(|b| b.upper).max().unwrap_or(0);
        let lifetimes_end = moment;
        let groups = self.links.separations.len() as i64;
        if let (Some(members), None) = (
            self.links.separations.first(),
            groups.checked_mul(2).and_then(|t| moment.checked_add(t)),
        ) {
            let latest = (0..n).max_by_key(|&i| buffers[i].upper).unwrap_or(0);
            let member = members.first().map_or(0, |&m| m as usize);
            return Err(Error::Link {
                first: latest,
                first_id: buffers[latest].id.clone(),
                second: member,
                second_id: buffers[member].id.clone(),
                reason: LinkError::NoTimeAfter { upper: moment },
            });
        }
        // At most one moment per group (checked above): see `cover`.
        for units in super::cover::moments(buffers, &self.links.separations, &unit, &out) {
            moment += 1;
            for &(u, tallest) in &units {
                let b = &mut out[u as usize];
                if b.upper < moment {
                    b.gaps.push(Gap {
                        lower: b.upper,
                        upper: moment,
                        window: None,
                    });
                }
                if tallest < b.size {
                    b.gaps.push(Gap {
                        lower: moment,
                        upper: moment + 1,
                        window: Some(Window {
                            lower: 0,
                            upper: tallest,
                        }),
                    });
                }
                b.upper = moment + 1;
            }
            moment += 1;
        }
        let mut problem = Problem::new(self.capacity(), out)?;
        if !self.links.separations.is_empty() {
            problem.set_moments_from(lifetimes_end);
        }
        Ok(Lowered { problem, unit })
    }
}

/// The one buffer that carries colocation group `members`.
fn colocated(buffers: &[Buffer], members: &[u32], capacity: i64) -> Buffer {
    let all = || members.iter().map(|&m| &buffers[m as usize]);
    let lower = all().map(|b| b.lower).min().unwrap_or(0);
    let upper = all().map(|b| b.upper).max().unwrap_or(0);
    let size = all().map(|b| b.size).max().unwrap_or(1);
    // Checked when the group was made: a common multiple exists.
    let alignment = all().fold(1, |a, b| lcm(a, b.alignment).unwrap_or(a));
    let mut b = Buffer::new(alloc::string::String::new(), lower, upper, size);
    b.alignment = alignment;
    b.offset = all().find_map(|b| b.offset);
    b.hint = all()
        .find_map(|b| b.hint)
        .filter(|&h| h % alignment == 0 && h <= capacity - size);
    // The hull of the members' live bytes on each stretch between two
    // ends of their pieces; stretches alike are joined.
    let mut parts: Vec<(i64, i64, i64, i64)> = Vec::new();
    for m in all() {
        for p in m.pieces() {
            parts.push((p.lower, p.upper, p.window.lower, p.window.upper));
        }
    }
    // The lifetime's ends too: a stretch no piece covers is dead.
    let mut times: Vec<i64> = parts.iter().flat_map(|p| [p.0, p.1]).collect();
    times.extend([lower, upper]);
    times.sort_unstable();
    times.dedup();
    // (start, end, hull or None for dead)
    type Stretch = (i64, i64, Option<(i64, i64)>);
    let mut stretches: Vec<Stretch> = Vec::new();
    let mut push = |t0: i64, t1: i64, hull: Option<(i64, i64)>| match stretches.last_mut() {
        Some(last) if last.1 == t0 && last.2 == hull => last.1 = t1,
        _ => stretches.push((t0, t1, hull)),
    };
    for w in times.windows(2) {
        let (t0, t1) = (w[0], w[1]);
        let hull = parts.iter().filter(|p| p.0 <= t0 && t1 <= p.1).fold(
            None,
            |h: Option<(i64, i64)>, p| match h {
                None => Some((p.2, p.3)),
                Some((lo, hi)) => Some((lo.min(p.2), hi.max(p.3))),
            },
        );
        push(t0, t1, hull);
    }
    for (t0, t1, hull) in stretches {
        match hull {
            Some((0, top)) if top == size => {}
            Some((lo, hi)) => b.gaps.push(Gap {
                lower: t0,
                upper: t1,
                window: Some(Window {
                    lower: lo,
                    upper: hi,
                }),
            }),
            None => b.gaps.push(Gap {
                lower: t0,
                upper: t1,
                window: None,
            }),
        }
    }
    b
}

impl Problem {
    /// Buffers `members` alone, below `capacity`, their alignments raised
    /// to multiples of `alignment`, with the colocations and separations
    /// among them. Buffers keep their fixed offsets and hints where those
    /// still fit; the caller makes sure that fixed ones do.
    pub(crate) fn subproblem(
        &self,
        members: &[usize],
        capacity: i64,
        alignment: i64,
    ) -> Result<Problem, Error> {
        let mut at = alloc::vec![u32::MAX; self.len()];
        let mut buffers = Vec::with_capacity(members.len());
        for (k, &m) in members.iter().enumerate() {
            at[m] = k as u32;
            let mut b = self.buffers()[m].clone();
            b.alignment = lcm(b.alignment, alignment).unwrap_or(b.alignment);
            b.hint = b
                .hint
                .filter(|&h| h % b.alignment == 0 && h <= capacity - b.size);
            buffers.push(b);
        }
        let mut sub = Problem::new(capacity, buffers)?;
        let inside = |g: &Vec<u32>| -> Vec<usize> {
            g.iter()
                .filter(|&&m| at[m as usize] != u32::MAX)
                .map(|&m| at[m as usize] as usize)
                .collect()
        };
        for g in &self.links.colocations {
            sub.colocate(&inside(g))?;
        }
        for g in &self.links.separations {
            sub.separate(&inside(g))?;
        }
        Ok(sub)
    }
}
