//! What a compiler pass declares on a `minimalloc_problem` beyond its
//! buffers: colocations, separations, reuse penalties and memory pools.

use super::minimalloc_status;
use super::problem::minimalloc_problem;
use core::ffi::c_char;

/// Declares that buffers `indices[0..n]` share one offset: they alias
/// (XLA's colocated buffers, an in-place update). Each keeps its lifetime
/// and size; the group is placed as one unit, live where any member is
/// live and as tall as its tallest live member. Groups that share a
/// buffer merge. A member that does not exist, members fixed at different
/// offsets (or at an offset that misaligns or overflows the group), or
/// members also separated make it an invalid argument that changes
/// nothing. The tiny build returns `MINIMALLOC_STATUS_UNSUPPORTED`.
///
/// # Safety
/// `problem` is NULL or a live handle; `indices` is NULL or has `n`
/// readable elements.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_problem_colocate(
    problem: *mut minimalloc_problem,
    indices: *const usize,
    n: usize,
) -> minimalloc_status {
    #[cfg(not(feature = "constraints"))]
    {
        let _ = (problem, indices, n);
        super::unsupported()
    }
    // Safety: as the caller passed them.
    #[cfg(feature = "constraints")]
    unsafe {
        link(problem, indices, n, true)
    }
}

/// Declares that no two of buffers `indices[0..n]` may share a byte,
/// whatever their lifetimes (buffers of different pipelines, of an
/// accelerator's two banks...). Members that do not exist, or two that
/// are colocated, make it an invalid argument that changes nothing. The
/// tiny build returns `MINIMALLOC_STATUS_UNSUPPORTED`.
///
/// # Safety
/// `problem` is NULL or a live handle; `indices` is NULL or has `n`
/// readable elements.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_problem_separate(
    problem: *mut minimalloc_problem,
    indices: *const usize,
    n: usize,
) -> minimalloc_status {
    #[cfg(not(feature = "constraints"))]
    {
        let _ = (problem, indices, n);
        super::unsupported()
    }
    // Safety: as the caller passed them.
    #[cfg(feature = "constraints")]
    unsafe {
        link(problem, indices, n, false)
    }
}

/// Declares that buffers `a` and `b` may share bytes at a `cost` (a reuse
/// penalty: a pipeline stall, a false dependency); the same pair again
/// costs the sum. Only `MINIMALLOC_OBJECTIVE_PENALTY` looks at it: it fits
/// the capacity, then pays as little as it can. A buffer that does not
/// exist, `a == b`, a negative cost, or costs that would add up past
/// 2^63-1 make it an invalid argument that changes nothing. The tiny
/// build returns `MINIMALLOC_STATUS_UNSUPPORTED`.
///
/// # Safety
/// `problem` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_problem_penalize(
    problem: *mut minimalloc_problem,
    a: usize,
    b: usize,
    cost: i64,
) -> minimalloc_status {
    #[cfg(not(feature = "constraints"))]
    {
        let _ = (problem, a, b, cost);
        super::unsupported()
    }
    #[cfg(feature = "constraints")]
    ffi_guard!(on mut h = problem => {
        match h.problem.penalize(a, b, cost) {
            Ok(()) => minimalloc_status::Ok,
            Err(e) => {
                h.error.set_error(&e);
                minimalloc_status::InvalidArgument
            }
        }
    })
}

/// Both link calls.
///
/// # Safety
/// As theirs.
#[cfg(feature = "constraints")]
unsafe fn link(
    problem: *mut minimalloc_problem,
    indices: *const usize,
    n: usize,
    colocate: bool,
) -> minimalloc_status {
    ffi_guard!(on mut h = problem => {
            if n > 0 && indices.is_null() {
                return minimalloc_status::NullPointer;
            }
            {
                let members: &[usize] = if n == 0 {
                    &[]
                } else {
                    // Safety: non-NULL, with n elements, by contract.
                    unsafe { core::slice::from_raw_parts(indices, n) }
                };
                let done = if colocate {
                    h.problem.colocate(members)
                } else {
                    h.problem.separate(members)
                };
                match done {
                    Ok(()) => minimalloc_status::Ok,
                    Err(e) => {
                        h.error.set_error(&e);
                        minimalloc_status::InvalidArgument
                    }
                }
            }
    })
}

/// Adds a memory pool to `problem`: `name` (may be NULL) for reports,
/// every buffer placed in it ends at or below `capacity`, its offsets are
/// multiples of `alignment` and its buffers' addresses are `base` plus
/// their offsets. Writes its index to `out_index`. Buffers may go to any
/// pool, in the order added, unless `minimalloc_problem_set_pools` says
/// otherwise; a fitting solve fills preferred pools first and spills the
/// rest, a minimising one then lowers each pool's height in that order.
/// With pools, the problem's own capacity only bounds fixed offsets and
/// hints, and a buffer with a fixed offset stays in the pool it lists
/// first.
///
/// # Safety
/// `problem` is NULL or a live handle; `name` is NULL or a NUL-terminated
/// string; `out_index` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_problem_add_pool(
    problem: *mut minimalloc_problem,
    name: *const c_char,
    capacity: i64,
    base: i64,
    alignment: i64,
    out_index: *mut usize,
) -> minimalloc_status {
    #[cfg(not(feature = "constraints"))]
    {
        let _ = (problem, name, capacity, base, alignment, out_index);
        super::unsupported()
    }
    #[cfg(feature = "constraints")]
    ffi_guard!(on mut h = problem => {
            if out_index.is_null() {
                return minimalloc_status::NullPointer;
            }
            #[cfg(feature = "constraints")]
            {
                let name = if name.is_null() {
                    alloc::string::String::new()
                } else {
                    // Safety: NUL-terminated, by contract.
                    alloc::string::String::from_utf8_lossy(
                        unsafe { core::ffi::CStr::from_ptr(name) }.to_bytes(),
                    )
                    .into_owned()
                };
                let pool = crate::model::pools::Pool {
                    name,
                    capacity,
                    base,
                    alignment,
                };
                match h.problem.add_pool(pool) {
                    Ok(index) => {
                        // Safety: checked non-NULL; writable by contract.
                        unsafe { *out_index = index };
                        minimalloc_status::Ok
                    }
                    Err(e) => {
                        h.error.set_error(&e);
                        minimalloc_status::InvalidArgument
                    }
                }
            }
    })
}

/// Says which pools buffer `index` may go to: `pools[0..n]`, preferred
/// first (`n == 0`: any, in the order the pools were added). A buffer or
/// pool that does not exist, or a pool named twice, is an invalid
/// argument that changes nothing.
///
/// # Safety
/// `problem` is NULL or a live handle; `pools` is NULL or has `n` readable
/// elements.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_problem_set_pools(
    problem: *mut minimalloc_problem,
    index: usize,
    pools: *const usize,
    n: usize,
) -> minimalloc_status {
    #[cfg(not(feature = "constraints"))]
    {
        let _ = (problem, index, pools, n);
        super::unsupported()
    }
    #[cfg(feature = "constraints")]
    ffi_guard!(on mut h = problem => {
            if n > 0 && pools.is_null() {
                return minimalloc_status::NullPointer;
            }
            #[cfg(feature = "constraints")]
            {
                let list: &[usize] = if n == 0 {
                    &[]
                } else {
                    // Safety: non-NULL, with n elements, by contract.
                    unsafe { core::slice::from_raw_parts(pools, n) }
                };
                match h.problem.set_pools(index, list) {
                    Ok(()) => minimalloc_status::Ok,
                    Err(e) => {
                        h.error.set_error(&e);
                        minimalloc_status::InvalidArgument
                    }
                }
            }
    })
}
