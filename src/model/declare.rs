//! Declaring what a compiler pass says beyond lifetimes and sizes:
//! colocations, separations, reuse penalties and pools, each checked as
//! it comes and refused, changing nothing, when it cannot hold.

use alloc::vec::Vec;

use super::error::{Error, LinkError, PoolError};
use super::links::Links;
use super::pools::Pool;
use super::problem::Problem;
use crate::base::math::lcm;

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
        // One more moment must fit after the latest lifetime; the buffer
        // that ends last is looked for only to name it when it does not.
        if self
            .check_separation_time(0, "", self.latest_upper, 1)
            .is_err()
        {
            if let Some(latest) = (0..self.len()).max_by_key(|&i| self.buffers()[i].upper) {
                let upper = self.buffers()[latest].upper;
                self.check_separation_time(latest, &self.buffers()[latest].id, upper, 1)?;
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

    /// Declares that buffers `a` and `b` may share bytes at a `cost` (a
    /// reuse penalty: a pipeline stall, a false dependency): the penalty
    /// objective fits the capacity, then pays as little as it can. A pair
    /// declared again costs the sum. Pairs alive together or separated
    /// never share (their cost is never paid); colocated pairs always do.
    /// Refused, changing nothing, if a buffer does not exist, `a == b`,
    /// the cost is negative, or the costs of all pairs together would
    /// pass 2^63-1.
    pub fn penalize(&mut self, a: usize, b: usize, cost: i64) -> Result<(), Error> {
        let pair = members_of(self, &[a, b])?;
        if pair.len() < 2 {
            return Err(self.link_error(a as u32, a as u32, LinkError::SelfPenalty));
        }
        let (a, b) = (pair[0], pair[1]);
        if cost < 0 {
            return Err(self.link_error(a, b, LinkError::NegativePenalty { cost }));
        }
        let Some(total) = self.links.penalty_total.checked_add(cost) else {
            return Err(self.link_error(a, b, LinkError::PenaltiesOverflow));
        };
        self.links.penalty_total = total;
        *self.links.penalties.entry((a, b)).or_insert(0) += cost;
        Ok(())
    }

    /// The reuse penalties: (first buffer, second buffer, cost), the lower
    /// index first, in increasing order of the pair.
    pub fn penalties(&self) -> impl Iterator<Item = (usize, usize, i64)> + '_ {
        self.links
            .penalties
            .iter()
            .map(|(&(a, b), &cost)| (a as usize, b as usize, cost))
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

    /// Checks that a lifetime ending at `upper` (buffer `index`, id `id`)
    /// leaves the separation groups, with `more` to come, their moments
    /// after it (two each; see `Problem::lowered`) within 64 bits.
    pub(crate) fn check_separation_time(
        &self,
        index: usize,
        id: &str,
        upper: i64,
        more: usize,
    ) -> Result<(), Error> {
        let groups = (self.links.separations.len() + more) as i64;
        if groups == 0
            || groups
                .checked_mul(2)
                .and_then(|t| upper.checked_add(t))
                .is_some()
        {
            return Ok(());
        }
        let other = match self.links.separations.first().and_then(|g| g.first()) {
            Some(&m) if m as usize != index => m as usize,
            _ => (0..self.len()).find(|&i| i != index).unwrap_or(index),
        };
        Err(Error::Link {
            first: index,
            first_id: id.into(),
            second: other,
            second_id: self
                .buffers()
                .get(other)
                .map_or_else(Default::default, |b| b.id.clone()),
            reason: LinkError::NoTimeAfter { upper },
        })
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

impl Problem {
    /// Adds a pool; returns its index. Refused, changing nothing, if its
    /// capacity or alignment is not positive, its base is negative or not
    /// a multiple of its alignment. Once a problem has pools, its own
    /// capacity only bounds fixed offsets and hints.
    pub fn add_pool(&mut self, pool: Pool) -> Result<usize, Error> {
        let index = self.pools.list.len();
        let fail = |reason| Error::Pool {
            pool: index,
            name: pool.name.clone(),
            reason,
        };
        if pool.capacity <= 0 {
            return Err(fail(PoolError::Capacity(pool.capacity)));
        }
        if pool.alignment <= 0 {
            return Err(fail(PoolError::Alignment(pool.alignment)));
        }
        if pool.base < 0 || pool.base % pool.alignment != 0 {
            return Err(fail(PoolError::Base {
                base: pool.base,
                alignment: pool.alignment,
            }));
        }
        if pool.base.checked_add(pool.capacity).is_none() {
            return Err(fail(PoolError::Base {
                base: pool.base,
                alignment: pool.alignment,
            }));
        }
        self.pools.list.push(pool);
        Ok(index)
    }

    /// Says which pools buffer `buffer` may go to, preferred first (empty:
    /// any, in the pools' order). Refused, changing nothing, if the buffer
    /// or a pool does not exist, or a pool is named twice.
    pub fn set_pools(&mut self, buffer: usize, pools: &[usize]) -> Result<(), Error> {
        if buffer >= self.len() {
            return Err(Error::NoSuchBuffer {
                index: buffer,
                len: self.len(),
            });
        }
        let count = self.pools.list.len();
        let mut list: Vec<u32> = Vec::with_capacity(pools.len());
        for &p in pools {
            if p >= count {
                return Err(Error::NoSuchPool {
                    pool: p,
                    pools: count,
                });
            }
            if list.contains(&(p as u32)) {
                return Err(Error::Pool {
                    pool: p,
                    name: self.pools.list[p].name.clone(),
                    reason: PoolError::Repeated { buffer },
                });
            }
            list.push(p as u32);
        }
        if self.pools.choices.len() <= buffer {
            self.pools.choices.resize(buffer + 1, Vec::new());
        }
        self.pools.choices[buffer] = list;
        Ok(())
    }

    /// The pools.
    pub fn pools(&self) -> &[Pool] {
        &self.pools.list
    }

    /// Whether buffer `buffer` may go to pool `pool` (without a list: any).
    pub fn lists_pool(&self, buffer: usize, pool: u32) -> bool {
        match self.pools.choices.get(buffer) {
            Some(list) if !list.is_empty() => list.contains(&pool),
            _ => (pool as usize) < self.pools.list.len(),
        }
    }

    /// The pool buffer `buffer` prefers (without a list: the first).
    pub fn first_pool(&self, buffer: usize) -> Option<u32> {
        match self.pools.choices.get(buffer) {
            Some(list) if !list.is_empty() => list.first().copied(),
            _ => (!self.pools.list.is_empty()).then_some(0),
        }
    }

    /// The pools buffer `buffer` may go to, preferred first.
    pub fn pools_of(&self, buffer: usize) -> Vec<u32> {
        match self.pools.choices.get(buffer) {
            Some(list) if !list.is_empty() => list.clone(),
            _ => (0..self.pools.list.len() as u32).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::buffer::Buffer;

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

    /// The moments of separations must fit after the latest lifetime: a
    /// group that would need one past `i64::MAX` is refused, naming the
    /// buffer that ends last, and changes nothing. The latest end follows
    /// the buffers as they are pushed, replaced and dropped.
    #[test]
    fn separations_need_time_after_the_latest_lifetime() {
        let near_end = i64::MAX - 3;
        let buffers = alloc::vec![
            Buffer::new("a", 0, 10, 1),
            Buffer::new("late", 5, near_end, 1),
            Buffer::new("b", 2, 4, 1),
        ];
        let mut p = Problem::new(100, buffers).unwrap();
        // One group takes two moments: they fit, and a second's do not.
        p.separate(&[0, 2]).unwrap();
        let refused = p.separate(&[0, 1]).unwrap_err();
        match &refused {
            Error::Link {
                first,
                first_id,
                reason: LinkError::NoTimeAfter { upper },
                ..
            } => {
                assert_eq!((*first, first_id.as_str(), *upper), (1, "late", near_end));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(p.separations().len(), 1);
        // Once the late buffer ends sooner, the group fits.
        p.replace(1, Buffer::new("late", 5, 20, 1)).unwrap();
        p.separate(&[0, 1]).unwrap();
        // A buffer pushed that late is refused as well: no room for the
        // moments of the groups there are.
        assert!(p.push(Buffer::new("later", 0, near_end, 1)).is_err());
        assert_eq!(p.latest_upper, 20);
        // Another buffer replaced: later, or sooner (no scan needed).
        p.replace(2, Buffer::new("b", 2, 30, 1)).unwrap();
        assert_eq!(p.latest_upper, 30);
        p.replace(0, Buffer::new("a", 0, 8, 1)).unwrap();
        assert_eq!(p.latest_upper, 30);
        p.truncate(1);
        assert_eq!(p.latest_upper, 8);
    }
}
