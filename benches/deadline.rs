//! How soon a search stops after its timeout or its cancel flag, set-up
//! included, on generated instances from 1,000 to 100,000 buffers, and the
//! peak memory of the process.
//!
//!     cargo bench --bench deadline -- [--runs N] [--sizes 1000,28526]
//!
//! Each instance is planned at its max load (a hard capacity), once with a
//! timeout and once cancelled from another thread, by the exact search
//! alone (`Method::Exact`) and by the default portfolio (`Method::Auto`,
//! heuristics and restarts on every core, with the exact search where it
//! applies); the table gives the median time from the timeout, or from the
//! moment the flag was set, to the return ("-": the plan ended before the
//! stop).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;
use common::peak_rss_mb;

use minimalloc::gen::{generate, Spec};
use minimalloc::{max_load, plan, Method, Options, Problem};

/// Median overshoot in ms, or "-" when the plan ended before the stop in
/// most runs (negative entries).
fn median(mut v: Vec<f64>) -> String {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let m = v[v.len() / 2];
    if m < 0.0 {
        "-".into()
    } else {
        format!("{m:.2}")
    }
}

fn main() {
    let mut runs = 5;
    let mut sizes = vec![1_000usize, 10_000, 28_526, 100_000];
    let mut stop_ms = 50u64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => runs = args.next().unwrap().parse().unwrap(),
            "--sizes" => {
                sizes = args
                    .next()
                    .unwrap()
                    .split(',')
                    .map(|s| s.parse().unwrap())
                    .collect()
            }
            "--stop-ms" => stop_ms = args.next().unwrap().parse().unwrap(),
            "--bench" => {}
            _ => panic!("unknown argument {a:?}"),
        }
    }
    let stop = Duration::from_millis(stop_ms);
    println!("stop requested after {stop_ms} ms; overshoot = return time - {stop_ms} ms (median of {runs})");
    println!(
        "{:>8} {:>10} {:>14} {:>14} {:>14} {:>14} {:>10}",
        "buffers",
        "pairs/buf",
        "exact timeout",
        "exact cancel",
        "auto timeout",
        "auto cancel",
        "peak MB"
    );
    for &n in &sizes {
        let buffers = generate(Spec::new(n, 1));
        let probe = Problem::new(i64::MAX, buffers.clone()).unwrap();
        let problem = probe.with_capacity(max_load(&probe)).unwrap();
        let mut cells = Vec::new();
        for method in [Method::Exact, Method::Auto] {
            let (timeout, cancel) = overshoots(&problem, method, stop, runs);
            cells.push(median(timeout));
            cells.push(median(cancel));
        }
        let pairs_per_buffer = overlap_pairs(&problem) as f64 / n as f64;
        println!(
            "{:>8} {:>10.1} {:>14} {:>14} {:>14} {:>14} {:>10.0}",
            n,
            pairs_per_buffer,
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            peak_rss_mb(),
        );
    }
}

/// Overshoots in ms after the timeout and after the cancel flag, one per
/// run (-1 when the plan ended before the stop).
fn overshoots(
    problem: &Problem,
    method: Method,
    stop: Duration,
    runs: usize,
) -> (Vec<f64>, Vec<f64>) {
    let stop_ms = stop.as_secs_f64() * 1e3;
    let mut timeout_over = Vec::new();
    let mut cancel_over = Vec::new();
    for _ in 0..runs {
        let options = Options {
            timeout: Some(stop),
            method,
            ..Options::default()
        };
        let t = Instant::now();
        let o = plan(problem, &options);
        let over = t.elapsed().as_secs_f64() * 1e3 - stop_ms;
        let timed_out = o.status == minimalloc::Status::TimedOut;
        timeout_over.push(if timed_out { over } else { -1.0 });

        let flag = Arc::new(AtomicBool::new(false));
        let options = Options {
            cancel: Some(flag.clone()),
            method,
            ..Options::default()
        };
        // The overshoot counts from the moment the other thread set the
        // flag, not from when it was asked to wake up.
        let setter = std::thread::spawn(move || {
            std::thread::sleep(stop);
            flag.store(true, Ordering::Relaxed);
            Instant::now()
        });
        let o = plan(problem, &options);
        let returned = Instant::now();
        let set_at = setter.join().unwrap();
        let over = returned.saturating_duration_since(set_at).as_secs_f64() * 1e3;
        let cancelled = o.status == minimalloc::Status::Cancelled;
        cancel_over.push(if cancelled { over } else { -1.0 });
    }
    (timeout_over, cancel_over)
}

/// Overlapping pairs, counted by a sweep (for the table only).
fn overlap_pairs(problem: &Problem) -> u64 {
    let mut events: Vec<(i64, i8)> = Vec::new();
    for b in problem.buffers() {
        events.push((b.lower, 1));
        events.push((b.upper, -1));
    }
    events.sort();
    let (mut live, mut pairs) = (0u64, 0u64);
    for (_, d) in events {
        if d > 0 {
            pairs += live;
            live += 1;
        } else {
            live -= 1;
        }
    }
    pairs
}
