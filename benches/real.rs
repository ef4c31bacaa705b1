//! The automatic minimiser on real and hard workloads: height above the
//! max load after each budget, the lower bound, the time the best
//! placement was found, and peak memory.
//!
//!     cargo bench --bench real -- [--budgets 1,10,60] [--only NAME,...] [--threads N] [--loaded]
//!
//! Rows of 100,000 buffers or more run once, for the longest budget, and
//! report the height at every budget from that run's progress (the
//! curve: whether the search keeps improving); smaller rows run once per
//! budget. `--loaded` runs every row beside two busy loops at normal
//! priority (`sh -c 'while :; do :; done'`), as on a shared compile
//! machine; figures at a fixed timeout then say what half the CPU costs.
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
//! - `pinwheel N`: zero-waste packings that no guillotine cut decomposes
//!   (`gen --family=pinwheel`, seeds 1-5), optimum the max load;
//! - `independent N`: sizes independent of lifetimes, up to a million;
//!   `issued N` the same sizes, buffers issued in program order;
//! - `kernel 126, 1 thread`: a kernel with about half its pairs
//!   separated, on one thread, against first-fit's plain order alone
//!   (the portfolio must not end above it).
//!
//! The time is that of `plan` alone; "best at" is when the placement it
//! returned was found (the last progress report that lowered the height);
//! rows of 100,000 buffers or more also say when the first placement came.

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
        "planted" | "swept" | "pinwheel" | "independent" | "issued" => {
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

/// One row, run in this process: prints it as tab-separated fields, the
/// last the heights reached by each of `checkpoints` (seconds), read off
/// the progress reports.
fn row(spec: &str, seconds: f64, threads: usize, checkpoints: &[f64]) {
    let problem = load(spec);
    let load = max_load(&problem);
    // Each lower height the progress reported, with when.
    let lowered: Arc<Mutex<Vec<(f64, i64)>>> = Arc::default();
    let progress = {
        let lowered = lowered.clone();
        Progress(Arc::new(move |r: &minimalloc::Report| {
            if let Some(h) = r.height {
                let mut lowered = lowered.lock().unwrap();
                if lowered.last().is_none_or(|&(_, last)| h < last) {
                    lowered.push((r.elapsed.as_secs_f64(), h));
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
        let ff = minimalloc::heuristic::run(&problem, minimalloc::Strategy::FirstFit)
            .expect("first-fit");
        validate(&problem, &ff).expect("a valid placement");
        let h = ff.height(&problem);
        source = format!(
            "{source} (first-fit alone {h}: {})",
            if height <= h { "at or below" } else { "ABOVE" }
        );
    }
    if ["planted", "swept", "pinwheel"]
        .iter()
        .any(|f| spec.starts_with(f))
    {
        source = format!("{source} (optimum known: the max load)");
    }
    let lowered = lowered.lock().unwrap();
    // When the first placement came: what a caller with less time (or
    // less CPU) would have had at all.
    let first_at = lowered.first().map_or(f64::NAN, |&(t, _)| t);
    let best_at = lowered
        .iter()
        .find(|&&(_, h)| h <= height)
        .map_or(0.0, |&(t, _)| t);
    // By each checkpoint: the last height reported by then (the final one
    // at the run's end; none reported yet: the max, unknown).
    let curve: Vec<String> = checkpoints
        .iter()
        .map(|&c| {
            let by = lowered.iter().take_while(|&&(t, _)| t <= c).last();
            match by {
                _ if c >= seconds => height.to_string(),
                Some(&(_, h)) => h.to_string(),
                None => "-".into(),
            }
        })
        .collect();
    println!(
        "{}\t{height}\t{load}\t{}\t{}\t{:.3}\t{best_at:.3}\t{:.0}\t{}\t{}\t{first_at:.3}",
        problem.len(),
        outcome.lower_bound,
        outcome.optimal,
        outcome.stats.elapsed.as_secs_f64(),
        peak_rss_mb(),
        source,
        curve.join(",")
    );
}

/// Two busy loops at normal priority, killed when dropped.
struct Busy(Vec<std::process::Child>);

impl Busy {
    fn start() -> Busy {
        let spin = || {
            std::process::Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .spawn()
                .expect("sh")
        };
        Busy(vec![spin(), spin()])
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The number of buffers a generated row's spec names (`family:N[:seed]`).
fn generated_buffers(spec: &str) -> Option<usize> {
    spec.split(':').nth(1).and_then(|n| n.parse().ok())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut budgets: Vec<f64> = vec![1.0, 10.0, 60.0];
    let mut only: Option<Vec<String>> = None;
    let mut threads = 0usize;
    let mut loaded = false;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--one" => {
                let spec = args.next().expect("--one SPEC SECONDS THREADS CHECKPOINTS");
                let secs = args.next().and_then(|s| s.parse().ok()).expect("seconds");
                let threads = args.next().and_then(|s| s.parse().ok()).unwrap_or(0);
                let checkpoints: Vec<f64> = common::list(args.next(), "checkpoints")
                    .iter()
                    .map(|s| s.parse().expect("seconds"))
                    .collect();
                return row(&spec, secs, threads, &checkpoints);
            }
            "--loaded" => loaded = true,
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
        ("pinwheel 1k", "pinwheel:1001"),
        ("pinwheel 1k #2", "pinwheel:1001:2"),
        ("pinwheel 1k #3", "pinwheel:1001:3"),
        ("pinwheel 1k #4", "pinwheel:1001:4"),
        ("pinwheel 1k #5", "pinwheel:1001:5"),
        ("pinwheel 20k", "pinwheel:20001"),
        ("pinwheel 20k #2", "pinwheel:20001:2"),
        ("pinwheel 20k #3", "pinwheel:20001:3"),
        ("pinwheel 100k", "pinwheel:100001"),
        ("pinwheel 100k #2", "pinwheel:100001:2"),
        ("pinwheel 100k #3", "pinwheel:100001:3"),
        ("independent 100k", "independent:100000"),
        ("independent 1M", "independent:1000000"),
        ("issued 100k", "issued:100000"),
        ("issued 100k #2", "issued:100000:2"),
        ("issued 1M", "issued:1000000"),
    ] {
        if generated_buffers(spec).is_some_and(|n| n >= 100_000) {
            // One run for the longest budget; the others read off its
            // progress.
            let longest = budgets.iter().copied().fold(0.0, f64::max);
            rows.push((label.to_string(), spec.into(), longest));
            continue;
        }
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
    let _busy = loaded.then(Busy::start);
    if loaded {
        println!("(loaded: two busy loops at normal priority beside every row)");
    }
    let checkpoints: Vec<String> = budgets.iter().map(f64::to_string).collect();
    for (label, spec, secs) in rows {
        let threads = if spec.starts_with("kernel") {
            1
        } else {
            threads
        };
        let (secs, threads) = (secs.to_string(), threads.to_string());
        let args = ["--one", &spec, &secs, &threads, &checkpoints.join(",")];
        let f = match common::child_row(&args, 11) {
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
        if generated_buffers(&spec).is_some_and(|n| n >= 100_000) {
            // The curve of this one run: above the max load by each budget.
            let curve: Vec<String> = f[9]
                .split(',')
                .zip(&budgets)
                .map(|(h, b)| match h.parse::<f64>() {
                    Ok(h) => format!("{b}s {:.4}%", 100.0 * (h - load) / load),
                    Err(_) => format!("{b}s none yet"),
                })
                .collect();
            println!(
                "{:<24} curve: {}; first placement at {} s",
                "",
                curve.join(", "),
                f[10]
            );
        }
    }
    for (group, (sum, n, at_load)) in above_sum {
        println!(
            "{group}: mean {:.4}% above the max load, {at_load} of {n} at it",
            sum / n as f64
        );
    }
}
