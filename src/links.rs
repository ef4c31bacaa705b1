//! What compiler passes say about buffers beyond lifetimes and sizes:
//! colocations (buffers that alias: one offset for all) and separations
//! (buffers that may not share a byte, whatever their lifetimes).
//!
//! The problem keeps them as declared and checks them as they come; the
//! planner lowers them to plain buffers ([`Problem::lowered`]) so that
//! every strategy honours them, and the validator checks them from their
//! definition.

use alloc::vec::Vec;

use crate::math::lcm;
use crate::problem::{Error, LinkError, Problem};

/// The colocations and separations of a problem.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Links {
    /// Disjoint groups of two or more buffers sharing one offset, sorted.
    pub(crate) colocations: Vec<Vec<u32>>,
    /// Groups of two or more buffers no two of which share a byte, sorted.
    pub(crate) separations: Vec<Vec<u32>>,
    /// Memory pools (see `crate::pools`); none: the one arena below the
    /// problem's capacity.
    pub(crate) pools: Vec<crate::pools::Pool>,
    /// For each buffer that has them, the pools it may go to, preferred
    /// first (a buffer without may go to any, in the pools' order).
    pub(crate) choices: Vec<Vec<u32>>,
    /// Indexes kept with the groups, so that declaring one costs its size,
    /// not the number of groups: each buffer's colocation group (`u32::MAX`
    /// or past the end: none) and the separations it is in.
    group: Vec<u32>,
    separated_in: Vec<Vec<u32>>,
}

impl Links {
    /// Whether there are no colocations and no separations.
    pub fn is_empty(&self) -> bool {
        self.colocations.is_empty() && self.separations.is_empty()
    }

    /// The colocation group holding buffer `b`, by position.
    fn group_of(&self, b: u32) -> Option<usize> {
        match self.group.get(b as usize) {
            Some(&g) if g != u32::MAX => Some(g as usize),
            _ => None,
        }
    }

    /// For each buffer of `n`, the index of its colocation group, or
    /// `u32::MAX`.
    pub(crate) fn group_index(&self, n: usize) -> Vec<u32> {
        let mut index = self.group.clone();
        index.resize(n, u32::MAX);
        index
    }

    /// Records that the members of colocation group `g` are in it.
    fn index_group(&mut self, g: usize) {
        for &m in &self.colocations[g] {
            let m = m as usize;
            if self.group.len() <= m {
                self.group.resize(m + 1, u32::MAX);
            }
            self.group[m] = g as u32;
        }
    }
}

/// `members` sorted, without repeats, each checked to name a buffer.
fn members_of(problem: &Problem, members: &[usize]) -> Result<Vec<u32>, Error> {
    let len = problem.len();
    let mut out = Vec::with_capacity(members.len());
    for &m in members {
        if m >= len {
            return Err(Error::NoSuchBuffer { index: m, len });
        }
        out.push(m as u32);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

impl Problem {
    /// Declares that `members` share one offset (they alias): each keeps
    /// its lifetime and size, and the group is placed as one unit, live
    /// where any member is live and as tall as its tallest live member.
    /// Groups that share a buffer merge. Refused, changing nothing, if a
    /// member does not exist, if two members are fixed at different
    /// offsets, if two members are separated, or if their alignments have
    /// no common multiple in 64 bits.
    pub fn colocate(&mut self, members: &[usize]) -> Result<(), Error> {
        let mut group = members_of(self, members)?;
        // Merge with every group that shares a buffer.
        let mut merged: Vec<usize> = Vec::new();
        for &m in &group {
            if let Some(g) = self.links.group_of(m) {
                if !merged.contains(&g) {
                    merged.push(g);
                }
            }
        }
        for &g in &merged {
            group.extend_from_slice(&self.links.colocations[g]);
        }
        group.sort_unstable();
        group.dedup();
        if group.len() < 2 {
            return Ok(());
        }
        self.check_colocation(&group, None)?;
        merged.sort_unstable();
        for &g in merged.iter().rev() {
            // The last group moves into g's place.
            self.links.colocations.swap_remove(g);
            if g < self.links.colocations.len() {
                self.links.index_group(g);
            }
        }
        self.links.colocations.push(group);
        self.links.index_group(self.links.colocations.len() - 1);
        Ok(())
    }

    /// Declares that no two of `members` may share a byte, whatever their
    /// lifetimes (as if they were all alive at one more moment). Refused,
    /// changing nothing, if a member does not exist or two members are
    /// colocated.
    pub fn separate(&mut self, members: &[usize]) -> Result<(), Error> {
        let group = members_of(self, members)?;
        if group.len() < 2 {
            return Ok(());
        }
        for (i, &a) in group.iter().enumerate() {
            if let Some(g) = self.links.group_of(a) {
                if let Some(&b) = group[i + 1..]
                    .iter()
                    .find(|&&b| self.links.colocations[g].binary_search(&b).is_ok())
                {
                    return Err(self.link_error(a, b, LinkError::ColocatedAndSeparated));
                }
            }
        }
        let id = self.links.separations.len() as u32;
        for &m in &group {
            let m = m as usize;
            if self.links.separated_in.len() <= m {
                self.links.separated_in.resize(m + 1, Vec::new());
            }
            self.links.separated_in[m].push(id);
        }
        self.links.separations.push(group);
        Ok(())
    }

    /// The colocation groups (disjoint, each sorted).
    pub fn colocations(&self) -> &[Vec<u32>] {
        &self.links.colocations
    }

    /// The separation groups (each sorted).
    pub fn separations(&self) -> &[Vec<u32>] {
        &self.links.separations
    }

    /// The colocations and separations.
    pub fn links(&self) -> &Links {
        &self.links
    }

    /// Checks a would-be colocation group: fixed offsets agree and suit
    /// the whole group (aligned for every member, the tallest below the
    /// capacity), no two members are separated, the alignments have a
    /// common multiple. `change` is a member about to get another fixed
    /// offset.
    fn check_colocation(
        &self,
        group: &[u32],
        change: Option<(u32, Option<i64>)>,
    ) -> Result<(), Error> {
        let buffers = self.buffers();
        let fixed_of = |m: u32| match change {
            Some((c, offset)) if c == m => offset,
            _ => buffers[m as usize].offset,
        };
        let mut fixed: Option<(u32, i64)> = None;
        let mut alignment = 1i64;
        let mut tallest = group[0];
        for &m in group {
            let b = &buffers[m as usize];
            if b.size > buffers[tallest as usize].size {
                tallest = m;
            }
            if let Some(offset) = fixed_of(m) {
                match fixed {
                    Some((first, at)) if at != offset => {
                        return Err(self.link_error(
                            first,
                            m,
                            LinkError::FixedApart {
                                first: at,
                                second: offset,
                            },
                        ))
                    }
                    None => fixed = Some((m, offset)),
                    _ => {}
                }
            }
            alignment = lcm(alignment, b.alignment)
                .ok_or_else(|| self.link_error(group[0], m, LinkError::Alignment))?;
        }
        if let Some((m, offset)) = fixed {
            let size = buffers[tallest as usize].size;
            if offset % alignment != 0 {
                return Err(self.link_error(
                    m,
                    tallest,
                    LinkError::FixedMisaligned { offset, alignment },
                ));
            }
            if offset
                .checked_add(size)
                .is_none_or(|top| top > self.capacity())
            {
                return Err(self.link_error(
                    m,
                    tallest,
                    LinkError::FixedTooHigh {
                        offset,
                        size,
                        capacity: self.capacity(),
                    },
                ));
            }
        }
        if change.is_some() {
            return Ok(());
        }
        // Two members in one separation: (separation, member) pairs
        // sorted, a repeated separation is a conflict.
        let mut seen: Vec<(u32, u32)> = group
            .iter()
            .flat_map(|&m| {
                let ids = self.links.separated_in.get(m as usize);
                ids.into_iter().flatten().map(move |&id| (id, m))
            })
            .collect();
        seen.sort_unstable();
        if let Some(w) = seen.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(self.link_error(w[0].1, w[1].1, LinkError::ColocatedAndSeparated));
        }
        Ok(())
    }

    /// Checks that buffer `index`, about to be fixed at `fixed` (or
    /// released), leaves its colocation group placeable.
    pub(crate) fn check_linked_offset(
        &self,
        index: usize,
        fixed: Option<i64>,
    ) -> Result<(), Error> {
        match self.links.group_of(index as u32) {
            Some(g) => {
                self.check_colocation(&self.links.colocations[g], Some((index as u32, fixed)))
            }
            None => Ok(()),
        }
    }

    fn link_error(&self, first: u32, second: u32, reason: LinkError) -> Error {
        let buffers = self.buffers();
        Error::Link {
            first: first as usize,
            first_id: buffers[first as usize].id.clone(),
            second: second as usize,
            second_id: buffers[second as usize].id.clone(),
            reason,
        }
    }
}

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
/// alive then.
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
        use crate::problem::{Buffer, Gap};
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
        for members in &self.links.separations {
            moment += 1;
            let mut units: Vec<(u32, i64)> = members
                .iter()
                .map(|&m| (unit[m as usize], buffers[m as usize].size))
                .collect();
            units.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            units.dedup_by_key(|u| u.0);
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
                        window: Some(crate::problem::Window {
                            lower: 0,
                            upper: tallest,
                        }),
                    });
                }
                b.upper = moment + 1;
            }
            moment += 1;
        }
        Ok(Lowered {
            problem: Problem::new(self.capacity(), out)?,
            unit,
        })
    }
}

/// The one buffer that carries colocation group `members`.
fn colocated(
    buffers: &[crate::problem::Buffer],
    members: &[u32],
    capacity: i64,
) -> crate::problem::Buffer {
    use crate::problem::{Buffer, Gap, Window};
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Buffer;

    /// The per-buffer index follows merges (a removed group's place taken
    /// by the last one) and matches the groups it indexes.
    #[test]
    fn the_group_index_follows_merges() {
        let buffers = (0..12).map(|i| Buffer::new("", i, i + 1, 1)).collect();
        let mut p = Problem::new(100, buffers).unwrap();
        for g in [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]] {
            p.colocate(&g).unwrap();
        }
        // Merges groups 0, 2 and 4 (positions move as they go).
        p.colocate(&[1, 5, 9]).unwrap();
        p.colocate(&[10, 11]).unwrap();
        let mut expected = alloc::vec![u32::MAX; 12];
        for (g, members) in p.colocations().iter().enumerate() {
            for &m in members {
                assert_eq!(expected[m as usize], u32::MAX, "buffer {m} in two groups");
                expected[m as usize] = g as u32;
            }
        }
        assert_eq!(p.links().group_index(12), expected);
        let mut merged = p
            .colocations()
            .iter()
            .find(|g| g.contains(&0))
            .unwrap()
            .clone();
        merged.sort_unstable();
        assert_eq!(merged, [0, 1, 4, 5, 8, 9]);
        // Separations are indexed too: colocating two separated buffers fails.
        p.separate(&[2, 10]).unwrap();
        assert!(p.colocate(&[3, 11]).is_err());
        assert!(p.separate(&[0, 8]).is_err());
    }
}
