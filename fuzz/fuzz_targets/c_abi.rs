//! libFuzzer feeds bytes to the C driver (c_tests/abi_ops.c), which reads
//! them as a program of C-ABI calls: every entry point, with NULLs,
//! out-of-range indices, int64 extremes and unknown enum codes. Coverage
//! is the library's own (cargo fuzz instruments the Rust code); a crash, a
//! leak, an ASan report or a broken check in the driver is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;

// The library's C symbols, which the driver calls.
use minimalloc as _;

extern "C" {
    fn minimalloc_abi_drive(data: *const u8, size: usize);
}

fuzz_target!(|data: &[u8]| {
    // Safety: `data` is `size` readable bytes.
    unsafe { minimalloc_abi_drive(data.as_ptr(), data.len()) }
});
