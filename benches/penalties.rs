//! The penalty objective: what it pays and what it proves.
//!
//!     cargo bench --bench penalties -- [--runs N] [--budgets 1,10]
//!         [--kernels N] [--only A,B,...]
//!
//! First the DSA-RP instances A-K (benchmarks/dsa-rp, priced lifts of the
//! challenging suite by tonibohnlein/dsa-solver; each pool at its file's
//! capacity): per instance and budget, one thread, the median over the runs
//! of the cost, the bound and the cost's spread, beside the best cost any
//! of that solver's methods published (its
//! benchmarks/results/minimalloc-dsa-rp-v1/summary.csv at commit a8d1257,
//! every method, runs of 0.5-13 s). Then generated kernels with memories
//! (pools, separations, colocations, prices of 1-1024 cycles): what the
//! objective pays in all against first-fit's placement, and how many it
//! proves. Every placement is validated and its cost recomputed.

use std::time::Duration;

use minimalloc::gen::{kernel_with_memories, Family, Spec};
use minimalloc::io::csv;
use minimalloc::plan::first_fit_height;
use minimalloc::{plan, validate, validate_pooled, Method, Objective, Options, Problem, Strategy};

/// The best cost of any method in the peer's published results, per
/// instance (file and commit above).
const PUBLISHED: [(&str, i64); 11] = [
    ("A", 285),
    ("B", 329),
    ("C", 365),
    ("D", 248),
    ("E", 403),
    ("F", 129),
    ("G", 450),
    ("H", 474),
    ("I", 902),
    ("J", 572),
    ("K", 1408),
];

fn median(v: &mut [i64]) -> i64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// Plans `problem` for its least penalty in `seconds` on one thread;
/// returns (cost, bound, proven), after checking the placement.
fn solve(problem: &Problem, seconds: f64) -> Option<(i64, i64, bool)> {
    let options = Options {
        objective: Objective::Penalty,
        threads: 1,
        timeout: Some(Duration::from_secs_f64(seconds)),
        ..Options::default()
    };
    let outcome = plan(problem, &options);
    let solution = outcome.solution.as_ref()?;
    check(
        problem,
        solution,
        outcome.pooled.as_ref().map(|p| &p.pool_of[..]),
    );
    let report = outcome.penalty.expect("the penalty objective reports");
    assert_eq!(report.cost, solution.penalty(problem));
    Some((report.cost, report.lower_bound, outcome.optimal))
}

fn check(problem: &Problem, solution: &minimalloc::Solution, pool_of: Option<&[u32]>) {
    let valid = match pool_of {
        Some(p) => validate_pooled(problem, solution, p),
        None => validate(problem, solution),
    };
    valid.expect("every placement is valid");
}

fn main() {
    let mut runs = 3usize;
    let mut budgets = vec![1.0f64, 10.0];
    let mut kernels = 100usize;
    let mut only: Option<Vec<String>> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) => (f.to_string(), Some(v.to_string())),
            None => (a.clone(), None),
        };
        let mut value = || inline.clone().or_else(|| args.next());
        match flag.as_str() {
            "--runs" => runs = value().and_then(|v| v.parse().ok()).expect("--runs N"),
            "--budgets" => {
                budgets = value()
                    .expect("--budgets 1,10")
                    .split(',')
                    .map(|b| b.parse().expect("--budgets 1,10"))
                    .collect()
            }
            "--kernels" => kernels = value().and_then(|v| v.parse().ok()).expect("--kernels N"),
            "--only" => {
                only = Some(
                    value()
                        .expect("--only A,B")
                        .split(',')
                        .map(String::from)
                        .collect(),
                )
            }
            "--bench" => {}
            _ => panic!("unknown argument {a:?}"),
        }
    }
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/benchmarks/dsa-rp");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {dir}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .collect();
    files.sort();
    println!("DSA-RP A-K, one thread, median of {runs} runs (cost, bound; min-max of the cost):\n");
    let head: Vec<String> = budgets.iter().map(|b| format!("{b} s")).collect();
    println!("| instance | published best | {} |", head.join(" | "));
    println!("| --- | ---: |{}", " ---: |".repeat(budgets.len()));
    let (mut below, mut at_or_below) = (vec![0; budgets.len()], vec![0; budgets.len()]);
    for file in &files {
        let stem = file.file_stem().unwrap().to_string_lossy().to_string();
        let (name, capacity) = stem.split_once('.').expect("NAME.CAPACITY.csv");
        if only.as_ref().is_some_and(|o| !o.iter().any(|x| x == name)) {
            continue;
        }
        let capacity: i64 = capacity.parse().expect("NAME.CAPACITY.csv");
        let text = std::fs::read_to_string(file).unwrap();
        let (problem, _) = csv::read(&text, capacity).unwrap();
        let published = PUBLISHED.iter().find(|p| p.0 == name).map(|p| p.1);
        let mut cells = Vec::new();
        for (k, &budget) in budgets.iter().enumerate() {
            let mut costs = Vec::new();
            let mut bounds = Vec::new();
            for _ in 0..runs {
                let (cost, bound, _) = solve(&problem, budget).expect("A-K fit their pools");
                costs.push(cost);
                bounds.push(bound);
            }
            let (lo, hi) = (*costs.iter().min().unwrap(), *costs.iter().max().unwrap());
            let cost = median(&mut costs);
            let bound = median(&mut bounds);
            if let Some(p) = published {
                below[k] += usize::from(cost < p);
                at_or_below[k] += usize::from(cost <= p);
            }
            cells.push(format!("{cost}, {bound} ({lo}-{hi})"));
        }
        let published = published.map_or("-".into(), |p| p.to_string());
        println!("| {name} | {published} | {} |", cells.join(" | "));
    }
    for (k, b) in budgets.iter().enumerate() {
        println!(
            "\nat {b} s: at or below the published best on {}, strictly below on {}",
            at_or_below[k], below[k]
        );
    }

    if kernels == 0 {
        return;
    }
    println!("\nKernels with memories and prices, {kernels} kernels, one thread:\n");
    println!("| budget | kernels | proven least | cost in all | first-fit's cost in all | above first-fit |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
    for &budget in &budgets {
        let (mut placed, mut proven, mut cost, mut ff_cost, mut above) = (0, 0, 0i64, 0i64, 0);
        for k in 0..kernels {
            let spec = Spec::new(20 + (k * 37) % 230, k as u64).with_family(Family::Kernel);
            let share = [0.0, 0.1, 0.25][k % 3];
            let Ok(problem) = kernel_with_memories(spec, Some(share), first_fit_height) else {
                continue;
            };
            let first_fit = Options {
                method: Method::Heuristic(Strategy::FirstFit),
                restarts: Some(0),
                threads: 1,
                timeout: Some(Duration::from_secs_f64(budget)),
                ..Options::default()
            };
            let ff = plan(&problem, &first_fit);
            let Some(ff_solution) = ff.solution.as_ref() else {
                continue;
            };
            check(
                &problem,
                ff_solution,
                ff.pooled.as_ref().map(|p| &p.pool_of[..]),
            );
            let Some((paid, _, optimal)) = solve(&problem, budget) else {
                continue;
            };
            let ff_paid = ff_solution.penalty(&problem);
            placed += 1;
            proven += usize::from(optimal);
            cost += paid;
            ff_cost += ff_paid;
            above += usize::from(paid > ff_paid);
        }
        println!("| {budget} s | {placed} | {proven} | {cost} | {ff_cost} | {above} |");
    }
}
