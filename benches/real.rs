//! The automatic minimiser on real and hard workloads: height above the
//! max load after each budget, the lower bound, the time the best
//! placement was found, and peak memory.
//!
//!     cargo bench --bench real -- [--budgets 1,10,60] [--only NAME,...] [--threads N]
//!
//! Rows (each in a child process of its own, so that its peak memory,
//! VmHWM, is its own; every placement is validated):
//! - `iopddl/X`: the thirteen IOPDDL training graphs, read from
//!   `../shared/benchmarks/iopddl/` beside the repository (rows are
//!   skipped when it is not there);
//! - `challenging/X`: the challenging suite minimised from 1048576;
//! - `long-lived 1M`: `gen --family=long-lived` with a million buffers,
//!   at budgets of 2 s and 10 s;
//! - `planted N`: zero-waste packings (`gen --family=planted`, seeds 1-3:
//!   `#2` is seed 2), whose optimum is the max load (the row says so);
//!   `swept N` the same, not cut by guillotine (`gen --family=swept`);
//! - `independent N`: sizes independent of lifetimes, up to a million;
//! - `kernel 126, 1 thread`: a kernel with about half its pairs
//!   separated, on one thread, against first-fit's plain order alone
//!   (the portfolio must not end above it).
//!
//! The time is that of `plan` alone; "best at" is when the placement it
//! returned was found (the last progress report that lowered the height).

use std::sync::{Arc, Mutex};
use std::time::Duration;

mod common;
use common::peak_rss_mb;

use minimalloc::gen::{generate, generate_problem, kernel_problem, Family, Spec};
use minimalloc::io::csv;
use minimalloc::plan::describe;
use minimalloc::{max_load, plan, validate, Objective, Options, Problem, Progress};

fn iopddl_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/benchmarks/iopddl")
}

fn load(spec: &str) -> Problem {
    let parts: Vec<&str> = spec.split(':').collect();
    match parts[0] {
        "iopddl" => {
            let path = iopddl_dir().join(format!("{}.csv", parts[1]));
            let text = std::fs::read_to_string(&path).expect("an IOPDDL graph");
            csv::read(&text, i64::MAX).unwrap().0
        }
        "challenging" => {
            let path = format!(
                "{}/benchmarks/challenging/{}.1048576.csv",
                env!("CARGO_MANIFEST_DIR"),
                parts[1]
            );
            let text = std::fs::read_to_string(&path).expect("the challenging suite");
            csv::read(&text, 1048576).unwrap().0
        }
        "long-lived" => {
            let n: usize = parts[1].parse().unwrap();
            let spec = Spec::new(n, 1).with_family(Family::LongLived);
            Problem::new(i64::MAX, generate(spec)).unwrap()
        }
        "planted" | "swept" | "independent" => {
            let n: usize = parts[1].parse().unwrap();
            let seed: u64 = parts.get(2).map_or(1, |s| s.parse().unwrap());
            let family = Family::from_name(parts[0]).unwrap();
            generate_problem(Spec::new(n, seed).with_family(family)).unwrap()
        }
        "kernel" => {
            let n: usize = parts[1].parse().unwrap();
            kernel_problem(Spec::new(n, 1), 0.5).unwrap()
        }
        _ => panic!("unknown row {spec}"),
    }
}

/// One row, run in this process: prints it as tab-separated fields.
fn row(spec: &str, seconds: f64, threads: usize) {
    let problem = load(spec);
    let load = max_load(&problem);
    let best_at = Arc::new(Mutex::new(0.0f64));
    let last = Arc::new(Mutex::new(i64::MAX));
    let progress = {
        let (best_at, last) = (best_at.clone(), last.clone());
        Progress(Arc::new(move |r: &minimalloc::Report| {
            if let Some(h) = r.height {
                let mut last = last.lock().unwrap();
                if h < *last {
                    *last = h;
                    *best_at.lock().unwrap() = r.elapsed.as_secs_f64();
                }
            }
        }))
    };
    let options = Options {
        objective: Objective::Minimize,
        timeout: Some(Duration::from_secs_f64(seconds)),
        threads,
        progress: Some(progress),
        ..Options::default()
    };
    let outcome = plan(&problem, &options);
    let solution = outcome.solution.clone().expect("a placement");
    validate(&problem, &solution).expect("a valid placement");
    let height = solution.height(&problem);
    // The source column also says, for kernels, first-fit's plain order
    // alone (the portfolio must end at or below it).
    let mut source = describe(outcome.source);
    if spec.starts_with("kernel") {
        let ff = minimalloc::heuristic::run(&problem, minimalloc::heuristic::Strategy::FirstFit)
            .expect("first-fit");
        validate(&problem, &ff).expect("a valid placement");
        let h = ff.height(&problem);
        source = format!(
            "{source} (first-fit alone {h}: {})",
            if height <= h { "at or below" } else { "ABOVE" }
        );
    }
    if spec.starts_with("planted") || spec.starts_with("swept") {
        source = format!("{source} (optimum known: the max load)");
    }
    let best_at = *best_at.lock().unwrap();
    println!(
        "{}\t{height}\t{load}\t{}\t{}\t{:.3}\t{best_at:.3}\t{:.0}\t{}",
        problem.len(),
        outcome.lower_bound,
        outcome.optimal,
        outcome.stats.elapsed.as_secs_f64(),
        peak_rss_mb(),
        source
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut budgets: Vec<f64> = vec![1.0, 10.0, 60.0];
    let mut only: Option<Vec<String>> = None;
    let mut threads = 0usize;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--one" => {
                let spec = args.next().expect("--one SPEC SECONDS THREADS");
                let secs = args.next().and_then(|s| s.parse().ok()).expect("seconds");
                let threads = args.next().and_then(|s| s.parse().ok()).unwrap_or(0);
                return row(&spec, secs, threads);
            }
            "--budgets" => {
                budgets = common::list(args.next(), "--budgets")
                    .iter()
                    .map(|s| s.parse().expect("seconds"))
                    .collect()
            }
            "--threads" => threads = args.next().and_then(|s| s.parse().ok()).expect("N"),
            "--only" => only = Some(common::list(args.next(), "--only")),
            "--bench" => {}
            _ => panic!("unknown argument {a:?}"),
        }
    }
    let mut rows: Vec<(String, String, f64)> = Vec::new();
    let graphs = "ABCDKLNPQRTUV";
    if iopddl_dir().is_dir() {
        for x in graphs.chars() {
            for &b in &budgets {
                rows.push((format!("iopddl/{x}  {b}s"), format!("iopddl:{x}"), b));
            }
        }
    } else {
        println!("(no {}: IOPDDL rows skipped)", iopddl_dir().display());
    }
    for x in "ABCDEFGHIJK".chars() {
        for &b in &budgets {
            rows.push((
                format!("challenging/{x}  {b}s"),
                format!("challenging:{x}"),
                b,
            ));
        }
    }
    for b in [2.0, 10.0] {
        rows.push((
            format!("long-lived 1M  {b}s"),
            "long-lived:1000000".into(),
            b,
        ));
    }
    for (label, spec) in [
        ("planted 20k", "planted:20000"),
        ("planted 20k #2", "planted:20000:2"),
        ("planted 20k #3", "planted:20000:3"),
        ("planted 100k", "planted:100000"),
        ("planted 100k #2", "planted:100000:2"),
        ("planted 100k #3", "planted:100000:3"),
        ("swept 20k", "swept:20000"),
        ("swept 100k", "swept:100000"),
        ("independent 100k", "independent:100000"),
        ("independent 1M", "independent:1000000"),
    ] {
        for &b in &budgets {
            rows.push((format!("{label}  {b}s"), spec.into(), b));
        }
    }
    rows.push(("kernel 126, 1 thread  1s".into(), "kernel:126".into(), 1.0));
    if let Some(only) = &only {
        rows.retain(|(label, _, _)| only.iter().any(|o| label.contains(o.as_str())));
    }
    println!(
        "{:<24} {:>9} {:>15} {:>15} {:>19} {:>9} {:>8} {:>8} {:>8}  from",
        "row",
        "buffers",
        "height",
        "max load",
        "lower bound",
        "above",
        "time s",
        "best at",
        "peak MB"
    );
    let mut above_sum: std::collections::BTreeMap<String, (f64, usize, usize)> = Default::default();
    for (label, spec, secs) in rows {
        let threads = if spec.starts_with("kernel") {
            1
        } else {
            threads
        };
        let (secs, threads) = (secs.to_string(), threads.to_string());
        let f = match common::child_row(&["--one", &spec, &secs, &threads], 9) {
            Ok(f) => f,
            Err(e) => {
                println!("{label:<24} failed: {e}");
                continue;
            }
        };
        let (height, load): (f64, f64) = (f[1].parse().unwrap(), f[2].parse().unwrap());
        let above = if load > 0.0 {
            100.0 * (height - load) / load
        } else {
            0.0
        };
        if let Some(group) = spec
            .strip_prefix("iopddl:")
            .map(|_| format!("iopddl {secs}s"))
        {
            let e = above_sum.entry(group).or_default();
            e.0 += above;
            e.1 += 1;
            e.2 += usize::from(height == load);
        }
        let bound = if f[4] == "true" {
            format!("{} opt", f[3])
        } else {
            f[3].to_string()
        };
        println!(
            "{label:<24} {:>9} {:>15} {:>15} {:>19} {:>8.4}% {:>8} {:>8} {:>8}  {}",
            f[0], f[1], f[2], bound, above, f[5], f[6], f[7], f[8]
        );
    }
    for (group, (sum, n, at_load)) in above_sum {
        println!(
            "{group}: mean {:.4}% above the max load, {at_load} of {n} at it",
            sum / n as f64
        );
    }
}
