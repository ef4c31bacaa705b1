//! Heights, times and peak memory: the challenging suite minimised, and
//! generated training steps of 10k, 100k and 1M buffers.
//!
//!     cargo bench --bench scale -- [--quick] [--only NAME,...]
//!
//! Every row runs in a child process of its own, so that its peak memory
//! (VmHWM, which includes making the instance) is its own. Rows:
//! - `challenging/X`: minimised from the upper bound 1048576 with a 10 s
//!   timeout (60 s for D and J, whose max load the search alone does not
//!   reach; D is placed there through the coarse level in milliseconds);
//! - `gen N first`: the first placement, `plan` fitting an unbounded
//!   capacity (the cheapest strategy that runs is kept);
//! - `gen N minimize 10s`: minimised for 10 s, restarts on every core;
//! - `gen N first-fit`: plain first-fit by decreasing size, the usual
//!   baseline.
//!
//! The time is that of `plan` alone (the instance is made and validated
//! outside it); every placement is validated.
//! `--quick` shortens the timeouts to 2 s and skips the 1M rows and
//! the 100k first-fit (about 40 s on its own).

use std::time::{Duration, Instant};

mod common;
use common::peak_rss_mb;

use minimalloc::gen::{generate, Spec};
use minimalloc::heuristic::{run, Strategy};
use minimalloc::io::csv;
use minimalloc::plan::describe;
use minimalloc::{max_load, plan, validate, Objective, Options, Problem, Solution};

/// One row, run in this process: prints it as tab-separated fields.
fn row(spec: &str) {
    let parts: Vec<&str> = spec.split(':').collect();
    let (problem, what) = match parts[0] {
        "challenging" => {
            let path = format!(
                "{}/benchmarks/challenging/{}.1048576.csv",
                env!("CARGO_MANIFEST_DIR"),
                parts[1]
            );
            let text = std::fs::read_to_string(&path).expect("the challenging suite");
            (csv::read(&text, 1048576).unwrap().0, parts[2])
        }
        "gen" => {
            let n: usize = parts[1].parse().unwrap();
            (
                Problem::new(i64::MAX, generate(Spec::new(n, 1))).unwrap(),
                parts[2],
            )
        }
        _ => panic!("unknown row {spec}"),
    };
    let load = max_load(&problem);
    let start = Instant::now();
    let (solution, bound, optimal, source) = if what == "first-fit" {
        let s = run(&problem, Strategy::FirstFit).unwrap();
        (s, load, false, "first-fit".to_string())
    } else {
        let mut options = Options::default();
        if let Some(secs) = what.strip_prefix("min") {
            options.objective = Objective::Minimize;
            options.timeout = Some(Duration::from_secs(secs.parse().unwrap()));
        }
        let outcome = plan(&problem, &options);
        let s: Solution = outcome.solution.clone().expect("a placement");
        (
            s,
            outcome.lower_bound,
            outcome.optimal,
            describe(outcome.source),
        )
    };
    let seconds = start.elapsed().as_secs_f64();
    validate(&problem, &solution).expect("a valid placement");
    let height = solution.height(&problem);
    println!(
        "{}\t{height}\t{load}\t{bound}\t{optimal}\t{seconds:.3}\t{:.0}\t{source}",
        problem.len(),
        peak_rss_mb()
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut quick = false;
    let mut only: Option<Vec<String>> = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--one" => return row(&args.next().expect("--one SPEC")),
            "--quick" => quick = true,
            "--only" => only = Some(common::list(args.next(), "--only")),
            "--bench" => {}
            _ => panic!("unknown argument {a:?}"),
        }
    }
    let long = if quick { 2 } else { 60 };
    let short = if quick { 2 } else { 10 };
    let mut rows: Vec<(String, String)> = Vec::new();
    for x in "ABCDEFGHIJK".chars() {
        let secs = if x == 'D' || x == 'J' { long } else { short };
        rows.push((
            format!("challenging/{x}  minimize {secs}s"),
            format!("challenging:{x}:min{secs}"),
        ));
    }
    for n in [10_000usize, 100_000, 1_000_000] {
        if quick && n == 1_000_000 {
            continue;
        }
        let label = match n {
            1_000_000 => "1M".to_string(),
            n => format!("{}k", n / 1000),
        };
        rows.push((format!("gen {label}  first"), format!("gen:{n}:first")));
        rows.push((
            format!("gen {label}  minimize {short}s"),
            format!("gen:{n}:min{short}"),
        ));
        if n <= 100_000 && !(quick && n == 100_000) {
            rows.push((
                format!("gen {label}  first-fit"),
                format!("gen:{n}:first-fit"),
            ));
        }
    }
    if let Some(only) = &only {
        rows.retain(|(label, _)| only.iter().any(|o| label.contains(o.as_str())));
    }
    println!(
        "{:<28} {:>9} {:>14} {:>14} {:>14} {:>9} {:>9} {:>9}  from",
        "row", "buffers", "height", "max load", "lower bound", "above", "time s", "peak MB"
    );
    for (label, spec) in rows {
        let f = match common::child_row(&["--one", &spec], 8) {
            Ok(f) => f,
            Err(e) => {
                println!("{label:<28} failed: {e}");
                continue;
            }
        };
        let (height, load): (f64, f64) = (f[1].parse().unwrap(), f[2].parse().unwrap());
        let above = if load > 0.0 {
            format!("{:.3}%", 100.0 * (height - load) / load)
        } else {
            "-".into()
        };
        let bound = if f[4] == "true" {
            format!("{} opt", f[3])
        } else {
            f[3].to_string()
        };
        println!(
            "{label:<28} {:>9} {:>14} {:>14} {:>14} {above:>9} {:>9} {:>9}  {}",
            f[0], f[1], f[2], bound, f[5], f[6], f[7]
        );
    }
}
