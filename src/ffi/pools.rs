//! Memory pools through the C ABI: declare pools on a problem, say which
//! a buffer may go to, read back where each buffer went and each pool's
//! figures. The tiny build returns `MINIMALLOC_STATUS_UNSUPPORTED`.

use core::ffi::c_char;

use super::minimalloc_status;
use super::options::minimalloc_options;
use super::problem::minimalloc_problem;
use super::solution::minimalloc_solution;

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

/// Figures of pool `pool` from the last solve with these options: its
/// height (the highest offset + size in it, without its base), a lower
/// bound on that height for the buffers it got (their max load), and how
/// many buffers it got. Any of the out-parameters may be NULL. A pool
/// that does not exist (or no pools) is an invalid argument.
///
/// # Safety
/// `options` is NULL or a live handle; each out-parameter is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_pool_report(
    options: *const minimalloc_options,
    pool: usize,
    out_height: *mut i64,
    out_lower_bound: *mut i64,
    out_buffers: *mut usize,
) -> minimalloc_status {
    #[cfg(not(feature = "constraints"))]
    {
        let _ = (options, pool, out_height, out_lower_bound, out_buffers);
        super::unsupported()
    }
    #[cfg(feature = "constraints")]
    ffi_guard!(reading _o = options => {
            #[cfg(feature = "constraints")]
            {
                let Some((height, lower_bound, buffers)) = _o.pools.with(|r| r.get(pool).copied())
                else {
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
            }
    })
}
