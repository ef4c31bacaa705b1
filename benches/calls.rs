//! What one call of the C ABI costs while a problem is declared, and
//! whether that cost grows with the problem: a compiler declares its
//! buffers one call at a time, so a call that scans the buffers makes the
//! declaration quadratic (setting a hint on each of 100,000 buffers once
//! took 12.3 s that way, and no test times it).
//!
//!     cargo bench --bench calls -- [--sizes 1000,10000,100000] [--repeats R]
//!
//! For each size N: a problem of N buffers (random lifetimes in a step of
//! N/2 moments, sizes 1-4096) is declared through the C calls, each kind
//! of call made once per buffer (separations, colocations and penalties on
//! disjoint pairs, N/2 calls each). The table gives nanoseconds per call,
//! the median of `--repeats` runs (default 5), and the last column the
//! ratio of the largest size's cost per call to the smallest's: a cost
//! that does not grow stays near 1 (caches make it drift a little), a
//! call that scans the buffers grows in proportion to N (measured: 15
//! times the cost at ten times the buffers).

use std::time::Instant;

use minimalloc::ffi::declare::{
    minimalloc_problem_colocate, minimalloc_problem_penalize, minimalloc_problem_separate,
};
use minimalloc::ffi::minimalloc_status;
use minimalloc::ffi::problem::{
    minimalloc_problem, minimalloc_problem_add_buffer, minimalloc_problem_add_buffers,
    minimalloc_problem_add_gap, minimalloc_problem_free, minimalloc_problem_new,
    minimalloc_problem_set_hint, minimalloc_problem_set_offset,
};

mod common;

/// The calls timed, in the order they are made on one problem.
const CALLS: [&str; 9] = [
    "add_buffer",
    "add_buffers (per buffer)",
    "set_hint",
    "set_offset (and back)",
    "add_gap",
    "separate (a pair)",
    "colocate (a pair)",
    "penalize (a pair)",
    "free (per buffer)",
];

/// Lifetimes and sizes of `n` buffers, reproducibly.
fn buffers(n: usize) -> (Vec<i64>, Vec<i64>, Vec<i64>) {
    let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ n as u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let moments = (n as u64 / 2).max(2);
    let (mut lower, mut upper, mut size) = (vec![], vec![], vec![]);
    for _ in 0..n {
        let l = (next() % moments) as i64;
        lower.push(l);
        upper.push(l + 1 + (next() % 8) as i64);
        size.push(1 + (next() % 4096) as i64);
    }
    (lower, upper, size)
}

fn ok(status: minimalloc_status, call: &str) {
    assert!(
        matches!(status, minimalloc_status::Ok),
        "{call} failed: {status:?}"
    );
}

/// Nanoseconds per call of each kind in [`CALLS`], declaring `n` buffers.
fn once(n: usize) -> [f64; CALLS.len()] {
    let (lower, upper, size) = buffers(n);
    let mut per_call = [0.0; CALLS.len()];
    let mut time = |k: usize, calls: usize, run: &mut dyn FnMut()| {
        let start = Instant::now();
        run();
        per_call[k] = start.elapsed().as_nanos() as f64 / calls.max(1) as f64;
    };
    let problem: *mut minimalloc_problem = minimalloc_problem_new(i64::MAX / 4);
    assert!(!problem.is_null());
    time(0, n, &mut || {
        for i in 0..n {
            let mut index = 0usize;
            // SAFETY: a live problem and a live out pointer.
            let status = unsafe {
                minimalloc_problem_add_buffer(problem, lower[i], upper[i], size[i], 1, &mut index)
            };
            ok(status, "add_buffer");
        }
    });
    // The same buffers again, in one call.
    let alignment = vec![1i64; n];
    time(1, n, &mut || {
        let mut first = 0usize;
        // SAFETY: a live problem; four arrays of n values and an out pointer.
        let status = unsafe {
            minimalloc_problem_add_buffers(
                problem,
                lower.as_ptr(),
                upper.as_ptr(),
                size.as_ptr(),
                alignment.as_ptr(),
                n,
                &mut first,
            )
        };
        ok(status, "add_buffers");
    });
    // The calls below touch the first n buffers (the second n are their
    // copies, so the problem holds 2n throughout).
    time(2, n, &mut || {
        for i in 0..n {
            // SAFETY: a live problem.
            ok(
                unsafe { minimalloc_problem_set_hint(problem, i, 0) },
                "set_hint",
            );
        }
    });
    time(3, 2 * n, &mut || {
        for i in 0..n {
            // SAFETY: a live problem.
            unsafe {
                ok(minimalloc_problem_set_offset(problem, i, 0), "set_offset");
                ok(minimalloc_problem_set_offset(problem, i, -1), "set_offset");
            }
        }
    });
    // A gap over the first moment of each buffer alive for two or more.
    let gapped: Vec<usize> = (0..n).filter(|&i| upper[i] - lower[i] >= 2).collect();
    time(4, gapped.len(), &mut || {
        for &i in &gapped {
            let l = lower[i];
            // SAFETY: a live problem.
            let status = unsafe { minimalloc_problem_add_gap(problem, i, l, l + 1) };
            ok(status, "add_gap");
        }
    });
    let pairs = n / 2;
    time(5, pairs, &mut || {
        for p in 0..pairs {
            let pair = [2 * p, 2 * p + 1];
            // SAFETY: a live problem and two indices.
            ok(
                unsafe { minimalloc_problem_separate(problem, pair.as_ptr(), 2) },
                "separate",
            );
        }
    });
    // Colocations on the copies (the separated pairs are the originals);
    // penalties on the original pairs, which the call accepts.
    time(6, pairs, &mut || {
        for p in 0..pairs {
            let pair = [n + 2 * p, n + 2 * p + 1];
            // SAFETY: a live problem and two indices.
            ok(
                unsafe { minimalloc_problem_colocate(problem, pair.as_ptr(), 2) },
                "colocate",
            );
        }
    });
    time(7, pairs, &mut || {
        for p in 0..pairs {
            // SAFETY: a live problem.
            let status = unsafe { minimalloc_problem_penalize(problem, 2 * p, 2 * p + 1, 1) };
            ok(status, "penalize");
        }
    });
    time(8, 2 * n, &mut || {
        // SAFETY: the live problem, freed once.
        unsafe { minimalloc_problem_free(problem) };
    });
    per_call
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut sizes = vec![1_000usize, 10_000, 100_000];
    let mut repeats = 5usize;
    let mut i = 1;
    while i < args.len() {
        match args[i].as_str() {
            "--sizes" => {
                sizes = common::list(args.get(i + 1).cloned(), "--sizes")
                    .iter()
                    .map(|s| s.parse().expect("--sizes takes numbers"))
                    .collect();
            }
            "--repeats" => {
                repeats = args[i + 1].parse().expect("--repeats takes a number");
            }
            // (cargo bench passes --bench.)
            "--bench" => {
                i += 1;
                continue;
            }
            other => panic!("unknown argument {other}"),
        }
        i += 2;
    }
    assert!(!sizes.is_empty() && repeats > 0);
    let table: Vec<[f64; CALLS.len()]> = sizes
        .iter()
        .map(|&n| {
            let runs: Vec<[f64; CALLS.len()]> = (0..repeats).map(|_| once(n)).collect();
            std::array::from_fn(|k| median(runs.iter().map(|r| r[k]).collect()))
        })
        .collect();
    print!("| call (ns per call) |");
    for n in &sizes {
        print!(" {n} buffers |");
    }
    println!(" largest / smallest |");
    println!("| --- |{}---: |", " ---: |".repeat(sizes.len()));
    for (k, call) in CALLS.iter().enumerate() {
        print!("| {call} |");
        for row in &table {
            print!(" {:.0} |", row[k]);
        }
        let (first, last) = (table[0][k], table[table.len() - 1][k]);
        println!(" {:.1} |", last / first.max(f64::MIN_POSITIVE));
    }
}
