//! What a build without `std` takes from the C library: a monotonic clock
//! for timeouts and, in the tiny build (`panic = "abort"`), the heap and
//! the panic handler. With `panic = "unwind"` std's runtime is linked
//! instead (see lib.rs), and with `std` none of this is compiled.

use core::ffi::{c_int, c_long};

use crate::deadline::Clock;

/// The C library's monotonic clock, where there is one.
pub(crate) fn monotonic_clock() -> Option<Clock> {
    if cfg!(unix) {
        Some(monotonic_ns)
    } else {
        None
    }
}

/// cbindgen:ignore
#[repr(C)]
struct Timespec {
    tv_sec: c_long,
    tv_nsec: c_long,
}

/// cbindgen:ignore
#[allow(unused_doc_comments)]
extern "C" {
    fn clock_gettime(clock: c_int, now: *mut Timespec) -> c_int;
}

const CLOCK_MONOTONIC: c_int = if cfg!(any(target_os = "macos", target_os = "ios")) {
    6
} else {
    1
};

fn monotonic_ns() -> u64 {
    let mut now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // Safety: `now` is a valid, writable timespec.
    if unsafe { clock_gettime(CLOCK_MONOTONIC, &mut now) } != 0 {
        return 0;
    }
    (now.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(now.tv_nsec as u64)
}

/// The heap and the panic handler of the tiny build: malloc, and abort.
#[cfg(panic = "abort")]
mod tiny {
    use core::alloc::{GlobalAlloc, Layout};
    use core::ffi::c_void;

    /// cbindgen:ignore
    #[allow(unused_doc_comments)]
    extern "C" {
        fn malloc(size: usize) -> *mut c_void;
        fn realloc(p: *mut c_void, size: usize) -> *mut c_void;
        fn free(p: *mut c_void);
        fn posix_memalign(p: *mut *mut c_void, align: usize, size: usize) -> core::ffi::c_int;
        fn abort() -> !;
    }

    /// malloc guarantees this alignment on the platforms we build for.
    const MALLOC_ALIGN: usize = 16;

    struct Malloc;

    // Safety: forwards to the C allocator, honouring alignment.
    unsafe impl GlobalAlloc for Malloc {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            if layout.align() <= MALLOC_ALIGN {
                // Safety: plain malloc.
                return unsafe { malloc(layout.size()) }.cast();
            }
            let mut p = core::ptr::null_mut();
            // Safety: alignment is a power of two and a multiple of the
            // pointer size here.
            match unsafe { posix_memalign(&mut p, layout.align(), layout.size()) } {
                0 => p.cast(),
                _ => core::ptr::null_mut(),
            }
        }

        unsafe fn dealloc(&self, p: *mut u8, _layout: Layout) {
            // Safety: `p` came from malloc or posix_memalign.
            unsafe { free(p.cast()) }
        }

        unsafe fn realloc(&self, p: *mut u8, layout: Layout, size: usize) -> *mut u8 {
            if layout.align() <= MALLOC_ALIGN {
                // Safety: `p` came from malloc.
                return unsafe { realloc(p.cast(), size) }.cast();
            }
            // Safety: the default implementation, through alloc/dealloc.
            unsafe {
                let new = self.alloc(Layout::from_size_align_unchecked(size, layout.align()));
                if !new.is_null() {
                    core::ptr::copy_nonoverlapping(p, new, layout.size().min(size));
                    self.dealloc(p, layout);
                }
                new
            }
        }
    }

    #[global_allocator]
    static HEAP: Malloc = Malloc;

    /// The unwinder's personality routine, which the prebuilt core still
    /// names though nothing calls it (panic = "abort"): defined here, so
    /// that the static library links from plain C as the shared one does.
    /// (The shared library exports it too; a host with a real one keeps
    /// its own, by the usual order of symbol lookup.)
    #[no_mangle]
    extern "C" fn rust_eh_personality() {}

    #[panic_handler]
    fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
        // Safety: abort never returns.
        unsafe { abort() }
    }
}
