//! `minimalloc_solution`: the offsets of a solved problem.

use alloc::boxed::Box;
use alloc::vec::Vec;

use super::minimalloc_status;

/// The offsets of a solved problem, one per buffer in the order added.
/// Opaque; made by `minimalloc_solve*`, released by
/// `minimalloc_solution_free`.
pub struct minimalloc_solution {
    pub(crate) offsets: Vec<i64>,
    pub(crate) height: i64,
    /// With pools, the pool of each buffer.
    #[cfg(feature = "constraints")]
    pub(crate) pools: Vec<u32>,
    /// What it pays in reuse penalties, and the proven least (0 unless
    /// the objective was the penalty).
    #[cfg(feature = "constraints")]
    pub(crate) penalty: (i64, i64),
}

/// Number of offsets (the problem's buffer count); 0 for NULL.
///
/// # Safety
/// `solution` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_solution_len(solution: *const minimalloc_solution) -> usize {
    // Safety: NULL or a live handle, by contract.
    ffi_guard!(or 0 => {
        unsafe { solution.as_ref() }.map_or(0, |s| s.offsets.len())
    })
}

/// Copies the offsets into `out_offsets`, which holds `len` elements;
/// `len` smaller than `minimalloc_solution_len` is an invalid argument and
/// writes nothing.
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
        if s.offsets.is_empty() {
            return minimalloc_status::Ok;
        }
        if out_offsets.is_null() {
            return minimalloc_status::NullPointer;
        }
        if len < s.offsets.len() {
            return minimalloc_status::InvalidArgument;
        }
        // Safety: `out_offsets` has at least `len >= offsets.len()` elements.
        unsafe { core::ptr::copy_nonoverlapping(s.offsets.as_ptr(), out_offsets, s.offsets.len()) };
        minimalloc_status::Ok
    })
}

/// The height of the placement: the highest `offset + size`, 0 for no
/// buffers, -1 for NULL.
///
/// # Safety
/// `solution` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_solution_height(solution: *const minimalloc_solution) -> i64 {
    // Safety: NULL or a live handle, by contract.
    ffi_guard!(or -1 => {
        unsafe { solution.as_ref() }.map_or(-1, |s| s.height)
    })
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
/// in it. Without pools every buffer is in pool 0.
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
        let n = s.offsets.len();
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
            let p = s.pools.get(i).map_or(0, |&p| p as usize);
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
/// other objectives. Equal when the cost is proven the least. The tiny
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
        if out_cost.is_null() || out_lower_bound.is_null() {
            return minimalloc_status::NullPointer;
        }
        // Safety: both non-NULL and writable, by contract.
        unsafe {
            *out_cost = s.penalty.0;
            *out_lower_bound = s.penalty.1;
        }
        minimalloc_status::Ok
    })
}
