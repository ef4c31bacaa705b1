//! Memory pools: several arenas (SRAM and PSRAM, a kernel's banks), each
//! with a capacity, a base address and an alignment; each buffer lists the
//! pools it may go to, preferred first. The planner (`plan::spill`) fills
//! preferred pools first and spills the rest.

use alloc::string::String;
use alloc::vec::Vec;

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

/// A problem's pools and each buffer's choice of them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Pools {
    /// The pools; none: the one arena below the problem's capacity.
    pub(crate) list: Vec<Pool>,
    /// For each buffer that has them, the pools it may go to, preferred
    /// first (a buffer without may go to any, in the pools' order).
    pub(crate) choices: Vec<Vec<u32>>,
}
