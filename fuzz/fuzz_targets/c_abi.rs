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

/// Runs once before the first input: what a process sets up once, on its
/// first use, must not be charged to one input as a leak. The main
/// thread's handle (`std::thread::current`, taken by the scoped threads of
/// a solve with two threads or a progress callback) is such: glibc keeps
/// the node that destroys it at the thread's exit (32 bytes, from
/// `__cxa_thread_atexit_impl`), and LeakSanitizer reported it against the
/// input that happened to spawn threads first.
fn warm_up() {
    use minimalloc::{plan, Buffer, Objective, Options, Problem};
    let _ = std::thread::current();
    let problem = Problem::new(8, vec![Buffer::new("a", 0, 2, 4), Buffer::new("b", 1, 3, 4)])
        .expect("a valid problem");
    for objective in [Objective::Fit, Objective::Minimize, Objective::Penalty] {
        let options = Options {
            objective,
            threads: 2,
            timeout: Some(std::time::Duration::from_millis(50)),
            ..Options::default()
        };
        let _ = plan(&problem, &options);
    }
}

fuzz_target!(init: warm_up(), |data: &[u8]| {
    // Safety: `data` is `size` readable bytes.
    unsafe { minimalloc_abi_drive(data.as_ptr(), data.len()) }
});
