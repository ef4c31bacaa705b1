//! Memory pools: several arenas (SRAM and PSRAM, a kernel's banks), each
//! with a capacity, a base address and an alignment; each buffer lists the
//! pools it may go to, preferred first. The planner (`plan::pools`) fills
//! preferred pools first and spills the rest.

use alloc::string::String;
use alloc::vec::Vec;

use crate::math::lcm;
use crate::problem::{Error, PoolError, Problem};

/// One memory pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pool {
    /// A name for reports.
    pub name: String,
    /// Every buffer placed in it must end at or below this.
    pub capacity: i64,
    /// Its address: added to the offsets of its buffers.
    pub base: i64,
    /// Every offset in it is a multiple of this (as well as of the
    /// buffer's own alignment).
    pub alignment: i64,
}

impl Pool {
    /// A pool at base 0 with alignment 1.
    pub fn new(name: impl Into<String>, capacity: i64) -> Pool {
        Pool {
            name: name.into(),
            capacity,
            base: 0,
            alignment: 1,
        }
    }
}

impl Problem {
    /// Adds a pool; returns its index. Refused, changing nothing, if its
    /// capacity or alignment is not positive, its base is negative or not
    /// a multiple of its alignment. Once a problem has pools, its own
    /// capacity only bounds fixed offsets and hints.
    pub fn add_pool(&mut self, pool: Pool) -> Result<usize, Error> {
        let index = self.links.pools.len();
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
        self.links.pools.push(pool);
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
        let count = self.links.pools.len();
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
                    name: self.links.pools[p].name.clone(),
                    reason: PoolError::Repeated { buffer },
                });
            }
            list.push(p as u32);
        }
        if self.links.choices.len() <= buffer {
            self.links.choices.resize(buffer + 1, Vec::new());
        }
        self.links.choices[buffer] = list;
        Ok(())
    }

    /// The pools.
    pub fn pools(&self) -> &[Pool] {
        &self.links.pools
    }

    /// Whether buffer `buffer` may go to pool `pool` (without a list: any).
    pub fn lists_pool(&self, buffer: usize, pool: u32) -> bool {
        match self.links.choices.get(buffer) {
            Some(list) if !list.is_empty() => list.contains(&pool),
            _ => (pool as usize) < self.links.pools.len(),
        }
    }

    /// The pool buffer `buffer` prefers (without a list: the first).
    pub fn first_pool(&self, buffer: usize) -> Option<u32> {
        match self.links.choices.get(buffer) {
            Some(list) if !list.is_empty() => list.first().copied(),
            _ => (!self.links.pools.is_empty()).then_some(0),
        }
    }

    /// The pools buffer `buffer` may go to, preferred first.
    pub fn pools_of(&self, buffer: usize) -> Vec<u32> {
        match self.links.choices.get(buffer) {
            Some(list) if !list.is_empty() => list.clone(),
            _ => (0..self.links.pools.len() as u32).collect(),
        }
    }

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
