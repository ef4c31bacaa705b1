//! `minimalloc_solution`: everything one solve produced. A solve always
//! makes one (but for a NULL argument or a caught bug), placed or not: its
//! status, why it failed, the offsets when there are any, the figures
//! (height, lower bound, optimal, nodes, elapsed time, why it stopped),
//! and with the constraints the conflict, the pools and the penalty.
//! Options are input only; two solves never share a result.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::ffi::{c_char, c_int};

use super::{minimalloc_status, Message};

/// The result of one solve. Opaque; made by `minimalloc_solve*`, released
/// by `minimalloc_solution_free`.
pub struct minimalloc_solution {
    /// What the solve returned.
    pub(crate) status: minimalloc_status,
    /// Why it failed ("" when it placed every buffer).
    pub(crate) error: Message,
    /// One per buffer in the order added; `None` when nothing was placed.
    pub(crate) offsets: Option<Vec<i64>>,
    /// The highest top (with pools, in any pool; with a base, without
    /// it); -1 when nothing was placed.
    pub(crate) height: i64,
    pub(crate) lower_bound: i64,
    pub(crate) optimal: bool,
    /// `Ok` when the solve ran to its end, else what cut it short.
    pub(crate) stopped: minimalloc_status,
    pub(crate) nodes: u64,
    pub(crate) elapsed_ns: u64,
    #[cfg(feature = "constraints")]
    pub(crate) found: Found,
}

/// What only the constraints' solves produce.
#[cfg(feature = "constraints")]
#[derive(Default)]
pub(crate) struct Found {
    /// With pools, the pool of each buffer.
    pub(crate) pools: Vec<u32>,
    /// Per pool: height, lower bound, buffers.
    pub(crate) pool_reports: Vec<(i64, i64, usize)>,
    /// What the placement pays in reuse penalties, and the proven least (0
    /// unless the objective was the penalty).
    pub(crate) penalty: (i64, i64),
    /// Buffers that cannot fit together, and whether the set is minimal.
    pub(crate) conflict: Vec<usize>,
    pub(crate) conflict_irreducible: bool,
}

impl minimalloc_solution {
    /// A result with nothing placed, `status` and no figures yet.
    pub(crate) fn unplaced(status: minimalloc_status) -> minimalloc_solution {
        minimalloc_solution {
            status,
            error: Message::new(),
            offsets: None,
            height: -1,
            lower_bound: 0,
            optimal: false,
            stopped: minimalloc_status::Ok,
            nodes: 0,
            elapsed_ns: 0,
            #[cfg(feature = "constraints")]
            found: Found::default(),
        }
    }
}

/// A getter's body: `read` of the solution, or `null` for a NULL one (and
/// for a caught panic, which reading a field cannot raise).
///
/// # Safety
/// `solution` is NULL or a live handle.
unsafe fn get<T: Copy>(
    solution: *const minimalloc_solution,
    null: T,
    read: impl FnOnce(&minimalloc_solution) -> T,
) -> T {
    // Safety: NULL or a live handle, by contract.
    super::guard(null, || unsafe { solution.as_ref() }.map_or(null, read))
}

/// The status of the solve that made `solution`: `MINIMALLOC_STATUS_OK`
/// when every buffer is placed (within the capacity, or as low as it got
/// when minimising), else why not. `MINIMALLOC_STATUS_NULL_POINTER` for NULL.
///
/// # Safety
/// `solution` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_solution_status(
    solution: *const minimalloc_solution,
) -> minimalloc_status {
    // Safety: as the caller passed it.
    unsafe { get(solution, minimalloc_status::NullPointer, |s| s.status) }
}

/// Why the solve did not place every buffer (which buffer, which field,
/// why; or that the capacity is too small, or the timeout passed), or ""
/// when it did. Never NULL; valid until the solution is freed.
///
/// # Safety
/// `solution` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_solution_error(
    solution: *const minimalloc_solution,
) -> *const c_char {
    // Safety: as the caller passed it.
    unsafe { get(solution, c"null pointer".as_ptr(), |s| s.error.as_ptr()) }
}

/// Whether the solve ran to its end (`MINIMALLOC_STATUS_OK`) or what cut
/// it short: `MINIMALLOC_STATUS_TIMEOUT` or `MINIMALLOC_STATUS_CANCELLED`.
/// A minimisation cut short still returns its best placement with status
/// OK; this tells that it may not be the lowest.
///
/// # Safety
/// `solution` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_solution_stopped(
    solution: *const minimalloc_solution,
) -> minimalloc_status {
    // Safety: as the caller passed it.
    unsafe { get(solution, minimalloc_status::NullPointer, |s| s.stopped) }
}

/// Number of offsets: the problem's buffer count when they were placed, 0
/// when nothing was (or for NULL).
///
/// # Safety
/// `solution` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_solution_len(solution: *const minimalloc_solution) -> usize {
    // Safety: as the caller passed it.
    unsafe { get(solution, 0, |s| s.offsets.as_ref().map_or(0, Vec::len)) }
}

/// Copies the offsets into `out_offsets`, which holds `len` elements. When
/// nothing was placed, writes nothing and returns the solve's status (so a
/// caller that checks only this call still learns why); `len` smaller than
/// `minimalloc_solution_len` is an invalid argument and writes nothing.
///
/// # Safety
/// `solution` is NULL or a live handle; `out_offsets` is NULL or has `len`
/// writable elements.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_solution_offsets(
    solution: *const minimalloc_solution,
    out_offsets: *mut i64,
    len: usize,
) -> minimalloc_status {
    ffi_guard!(reading s = solution => {
        let Some(offsets) = &s.offsets else {
            return s.status;
        };
        if offsets.is_empty() {
            return minimalloc_status::Ok;
        }
        if out_offsets.is_null() {
            return minimalloc_status::NullPointer;
        }
        if len < offsets.len() {
            return minimalloc_status::InvalidArgument;
        }
        // Safety: `out_offsets` has at least `len >= offsets.len()` elements.
        unsafe { core::ptr::copy_nonoverlapping(offsets.as_ptr(), out_offsets, offsets.len()) };
        minimalloc_status::Ok
    })
}

/// The height of the placement: the highest `offset + size` (with pools,
/// in any pool, bases included; without the options' base address), 0 for
/// no buffers; -1 when nothing was placed, or for NULL.
///
/// # Safety
/// `solution` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_solution_height(solution: *const minimalloc_solution) -> i64 {
    // Safety: as the caller passed it.
    unsafe { get(solution, -1, |s| s.height) }
}

/// A proven lower bound on the height of any placement: at least the max
/// load (also when the solve stopped before any work), the highest fixed
/// buffer, or more where the search proved it; above the capacity when
/// fitting was proven infeasible. -1 for NULL.
///
/// # Safety
/// `solution` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_solution_lower_bound(
    solution: *const minimalloc_solution,
) -> i64 {
    // Safety: as the caller passed it.
    unsafe { get(solution, -1, |s| s.lower_bound) }
}

/// 1 when the placement's height equals the proven lower bound (no lower
/// height exists; with `MINIMALLOC_OBJECTIVE_PENALTY`, when what it pays is
/// proven the least), else 0 (also when nothing was placed, or for NULL).
///
/// # Safety
/// `solution` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_solution_optimal(
    solution: *const minimalloc_solution,
) -> c_int {
    // Safety: as the caller passed it.
    unsafe { get(solution, 0, |s| c_int::from(s.optimal)) }
}

/// Search nodes the exact search visited (0 for NULL).
///
/// # Safety
/// `solution` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_solution_nodes(solution: *const minimalloc_solution) -> u64 {
    // Safety: as the caller passed it.
    unsafe { get(solution, 0, |s| s.nodes) }
}

/// Wall time of the solve in microseconds (0 for NULL, or without a clock).
///
/// # Safety
/// `solution` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_solution_elapsed_us(
    solution: *const minimalloc_solution,
) -> u64 {
    // Safety: as the caller passed it.
    unsafe { get(solution, 0, |s| s.elapsed_ns / 1000) }
}

/// Releases a solution. NULL is a no-op.
///
/// # Safety
/// `solution` is NULL or a handle from `minimalloc_solve*` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_solution_free(solution: *mut minimalloc_solution) {
    ffi_guard!(or () => {
        if !solution.is_null() {
            // Safety: the caller passes a live handle from Box::into_raw.
            drop(unsafe { Box::from_raw(solution) });
        }
    })
}

/// The pool of each buffer of a solved problem with pools, copied into
/// `out_pools` (`len` elements, at least the solution's length); the
/// solution's offsets are then addresses: the pool's base plus the offset
/// in it. Without pools every buffer is in pool 0. When nothing was
/// placed, writes nothing and returns the solve's status.
///
/// # Safety
/// `solution` is NULL or a live handle; `out_pools` is NULL or has `len`
/// writable elements.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_solution_pools(
    solution: *const minimalloc_solution,
    out_pools: *mut usize,
    len: usize,
) -> minimalloc_status {
    #[cfg(not(feature = "constraints"))]
    {
        let _ = (solution, out_pools, len);
        super::unsupported()
    }
    #[cfg(feature = "constraints")]
    ffi_guard!(reading s = solution => {
        let Some(offsets) = &s.offsets else {
            return s.status;
        };
        let n = offsets.len();
        if n == 0 {
            return minimalloc_status::Ok;
        }
        if out_pools.is_null() {
            return minimalloc_status::NullPointer;
        }
        if len < n {
            return minimalloc_status::InvalidArgument;
        }
        for i in 0..n {
            let p = s.found.pools.get(i).map_or(0, |&p| p as usize);
            // Safety: `out_pools` has `len >= n` elements.
            unsafe { *out_pools.add(i) = p };
        }
        minimalloc_status::Ok
    })
}

/// What the placement pays in reuse penalties (the summed costs of the
/// penalised pairs whose bytes meet), written to `out_cost`, and a proven
/// lower bound on what any placement below the capacity pays, written to
/// `out_lower_bound`: from `MINIMALLOC_OBJECTIVE_PENALTY`, 0 after the
/// other objectives. Equal when the cost is proven the least. When nothing
/// was placed, writes nothing and returns the solve's status. The tiny
/// build returns `MINIMALLOC_STATUS_UNSUPPORTED`.
///
/// # Safety
/// `solution` is NULL or a live handle; `out_cost` and `out_lower_bound`
/// are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_solution_penalty(
    solution: *const minimalloc_solution,
    out_cost: *mut i64,
    out_lower_bound: *mut i64,
) -> minimalloc_status {
    #[cfg(not(feature = "constraints"))]
    {
        let _ = (solution, out_cost, out_lower_bound);
        super::unsupported()
    }
    #[cfg(feature = "constraints")]
    ffi_guard!(reading s = solution => {
        if s.offsets.is_none() {
            return s.status;
        }
        if out_cost.is_null() || out_lower_bound.is_null() {
            return minimalloc_status::NullPointer;
        }
        // Safety: both non-NULL and writable, by contract.
        unsafe {
            *out_cost = s.found.penalty.0;
            *out_lower_bound = s.found.penalty.1;
        }
        minimalloc_status::Ok
    })
}

/// The conflict the solve found: after `MINIMALLOC_STATUS_INFEASIBLE`, a
/// small set of buffers that cannot fit below the capacity together (the
/// busiest moment's largest buffers, or what the exact search shrank the
/// problem to within the timeout); none otherwise. Writes the number of
/// buffers to `*out_count`, the first `min(len, count)` indices
/// (increasing) to `out_indices` (which may be NULL when `len` is 0: call
/// once to learn the count), and, if `out_irreducible` is not NULL, 1
/// there if the set is proven minimal (without any one of them the others
/// fit), else 0. The tiny build returns `MINIMALLOC_STATUS_UNSUPPORTED`.
///
/// # Safety
/// `solution` is NULL or a live handle; `out_indices` is NULL or has `len`
/// writable elements; `out_count` and `out_irreducible` are NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_solution_conflict(
    solution: *const minimalloc_solution,
    out_indices: *mut usize,
    len: usize,
    out_count: *mut usize,
    out_irreducible: *mut c_int,
) -> minimalloc_status {
    #[cfg(not(feature = "constraints"))]
    {
        let _ = (solution, out_indices, len, out_count, out_irreducible);
        super::unsupported()
    }
    #[cfg(feature = "constraints")]
    ffi_guard!(reading s = solution => {
        if out_count.is_null() || (len > 0 && out_indices.is_null()) {
            return minimalloc_status::NullPointer;
        }
        let conflict = &s.found.conflict;
        let n = conflict.len().min(len);
        // Safety: `out_indices` has `len >= n` elements (n > 0 only when
        // it is not NULL); `out_count` checked non-NULL, writable by
        // contract; `out_irreducible` NULL or writable.
        unsafe {
            core::ptr::copy_nonoverlapping(conflict.as_ptr(), out_indices, n);
            *out_count = conflict.len();
            if let Some(p) = out_irreducible.as_mut() {
                *p = c_int::from(s.found.conflict_irreducible);
            }
        }
        minimalloc_status::Ok
    })
}

/// Figures of pool `pool` from the solve: its height (the highest offset +
/// size in it, without its base), a lower bound on that height for the
/// buffers it got (their max load, or more where minimising proved it),
/// and how many buffers it got. Any of the out-parameters may be NULL. A
/// pool that does not exist (or no pools, or nothing placed) is an invalid
/// argument. The tiny build returns `MINIMALLOC_STATUS_UNSUPPORTED`.
///
/// # Safety
/// `solution` is NULL or a live handle; each out-parameter is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_solution_pool_report(
    solution: *const minimalloc_solution,
    pool: usize,
    out_height: *mut i64,
    out_lower_bound: *mut i64,
    out_buffers: *mut usize,
) -> minimalloc_status {
    #[cfg(not(feature = "constraints"))]
    {
        let _ = (solution, pool, out_height, out_lower_bound, out_buffers);
        super::unsupported()
    }
    #[cfg(feature = "constraints")]
    ffi_guard!(reading s = solution => {
        let Some(&(height, lower_bound, buffers)) = s.found.pool_reports.get(pool) else {
            return minimalloc_status::InvalidArgument;
        };
        // Safety: each is NULL or writable, by contract.
        unsafe {
            if let Some(p) = out_height.as_mut() {
                *p = height;
            }
            if let Some(p) = out_lower_bound.as_mut() {
                *p = lower_bound;
            }
            if let Some(p) = out_buffers.as_mut() {
                *p = buffers;
            }
        }
        minimalloc_status::Ok
    })
}
