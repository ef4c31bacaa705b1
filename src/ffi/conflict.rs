//! Why a fit failed: the buffers the last solve with some options found
//! cannot fit together, read back from those options.

use core::ffi::c_int;

use super::minimalloc_status;
use super::options::minimalloc_options;

/// The conflict the last solve with these options found: after
/// `MINIMALLOC_STATUS_INFEASIBLE`, a small set of buffers that cannot fit
/// below the capacity together (the busiest moment's largest buffers, or
/// what the exact search shrank the problem to within the timeout); none
/// otherwise. The tiny build returns `MINIMALLOC_STATUS_UNSUPPORTED`. Writes the number of buffers to
/// `*out_count`, the first `min(len, count)` indices (increasing) to
/// `out_indices` (which may be NULL when `len` is 0: call once to learn the
/// count), and, if `out_irreducible` is not NULL, 1 there if the set is
/// proven minimal (without any one of them the others fit), else 0.
///
/// # Safety
/// `options` is NULL or a live handle; `out_indices` is NULL or has `len`
/// writable elements; `out_count` and `out_irreducible` are NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn minimalloc_options_conflict(
    options: *const minimalloc_options,
    out_indices: *mut usize,
    len: usize,
    out_count: *mut usize,
    out_irreducible: *mut c_int,
) -> minimalloc_status {
    #[cfg(not(feature = "constraints"))]
    {
        let _ = (options, out_indices, len, out_count, out_irreducible);
        super::unsupported()
    }
    #[cfg(feature = "constraints")]
    ffi_guard!(reading _o = options => {
            if out_count.is_null() || (len > 0 && out_indices.is_null()) {
                return minimalloc_status::NullPointer;
            }
            let (count, irreducible) = _o.conflict.with(|c| {
                let n = c.len().min(len);
                // Safety: `out_indices` has `len >= n` elements (n > 0
                // only when it is not NULL).
                unsafe { core::ptr::copy_nonoverlapping(c.as_ptr(), out_indices, n) };
                (
                    c.len(),
                    _o.conflict_irreducible
                        .load(core::sync::atomic::Ordering::Relaxed),
                )
            });
            // Safety: checked non-NULL; writable by contract.
            unsafe { *out_count = count };
            if !out_irreducible.is_null() {
                // Safety: writable by contract.
                unsafe { *out_irreducible = c_int::from(irreducible) };
            }
            minimalloc_status::Ok
    })
}
