//! Plans generated NPU kernels as a kernel compiler does: one call per
//! kernel, one thread, a short timeout. Prints, per share of separated
//! pairs, how many kernels were minimised to a proven optimum and how long
//! they took in all, then the same kernels fitted at their max load (a
//! capacity that only some meet): found, proven infeasible, or neither.
//!
//!     cargo bench --bench kernels -- [--kernels N] [--timeout SECS] [--seed S] [--memories | --pairs | --drawn | --planted] [--staged] [--detail]
//!
//! Kernels are `minimalloc gen --family=kernel` with 2-250 buffers and 0,
//! 10, 25 or 50% of their pairs separated, seeds from S (default 1). With
//! `--drawn` the share is the generator's own (`gen --family=kernel`
//! without `--separated`: drawn from 0-50%, where the tiers put a
//! quarter of the kernels at half), and the rows are the quarters of the
//! share each kernel got (with `--planted` too, the planted kernels'
//! own draw). With
//! `--planted` the kernels are `gen --family=planted-kernel`: zero-waste
//! packings (alignment 32) whose separations keep the packing valid, so
//! the optimum is known (the max load); a table then says how far above
//! it the heights end, and the bench fails if any bound passes it or any
//! fit at it is called infeasible. With
//! `--memories` (`gen --family=kernel --memories`) each kernel is spread
//! over 1-5 memories (pools) with reserved ranges and in-place
//! colocations; it is then minimised within its memories (a kernel none
//! of whose assignments is found counts as not placed) and fitted at the
//! memories' own capacities; its reuse penalties are then paid as little
//! as the penalty objective can (how many kernels it proves, what they pay
//! in all, against what first-fit's own placement pays, and how many pay
//! more than first-fit: there must be none). With `--pairs` each kernel's separations are
//! declared pair by pair instead of by group (as some compilers write
//! them: thousands of pairs for a hundred buffers). With `--staged` the
//! kernels are `gen --family=staged-kernel`: the same buffers, each
//! separation group every buffer alive during a run of consecutive ops
//! (a pipeline stage), not a random subset of the kernel (combines with
//! the others but `--planted`). With `--detail` a
//! line per kernel too: its height and bound minimised, whether proven,
//! the time, and the fit's status and time. Every placement is
//! validated.

use std::time::{Duration, Instant};

use minimalloc::gen::{
    generate_problem, kernel_problem, kernel_with_memories, planted_optimum, Family, Spec,
};
use minimalloc::Strategy;
use minimalloc::{
    max_load, plan, validate, validate_pooled, Method, Objective, Options, Outcome, Problem,
    Solution, Status,
};

const SHARES: [f64; 4] = [0.0, 0.1, 0.25, 0.5];
/// With `--drawn`, the rows: kernels whose share of separated pairs is
/// below each of these.
const DRAWN: [(f64, &str); 4] = [
    (0.125, "0-12.5%"),
    (0.25, "12.5-25%"),
    (0.375, "25-37.5%"),
    (f64::INFINITY, "37.5% and more"),
];

#[derive(Default)]
struct Row {
    kernels: usize,
    proven: usize,
    time: Duration,
    found: usize,
    infeasible: usize,
    neither: usize,
    fit_time: Duration,
    unplaced: usize,
    /// The penalty objective (with `--memories`): kernels placed, proven,
    /// cost in all, first-fit's cost in all, kernels above first-fit, time.
    paid: usize,
    paid_proven: usize,
    cost: i64,
    first_fit_cost: i64,
    above_first_fit: usize,
    penalty_time: Duration,
    /// With `--planted`: the heights' excess over the optimum, summed and
    /// the worst (fractions of the optimum).
    excess: f64,
    worst: f64,
    at_optimum: usize,
}

fn main() {
    let mut kernels = 200usize;
    let mut timeout = 1.0f64;
    let mut seed = 1u64;
    let mut memories = false;
    let mut pairs = false;
    let mut detail = false;
    let mut drawn = false;
    let mut planted = false;
    let mut staged = false;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--kernels" => kernels = value.parse().expect("--kernels N"),
            "--timeout" => timeout = value.parse().expect("--timeout SECS"),
            "--seed" => seed = value.parse().expect("--seed S"),
            "--bench" => {
                i += 1;
                continue;
            }
            "--memories" => {
                memories = true;
                i += 1;
                continue;
            }
            "--pairs" => {
                pairs = true;
                i += 1;
                continue;
            }
            "--planted" => {
                planted = true;
                i += 1;
                continue;
            }
            "--staged" => {
                staged = true;
                i += 1;
                continue;
            }
            "--drawn" => {
                drawn = true;
                i += 1;
                continue;
            }
            "--detail" => {
                detail = true;
                i += 1;
                continue;
            }
            other => panic!("unknown argument {other}"),
        }
        i += 2;
    }
    assert!(
        !(planted && staged),
        "--planted and --staged do not combine: a planted kernel's groups keep what its packing allows"
    );
    let mut rows: Vec<Row> = SHARES.iter().map(|_| Row::default()).collect();
    let mut state = seed.max(1);
    for k in 0..kernels {
        // xorshift: the kernel's size and share, reproducibly.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let buffers = 2 + (state % 249) as usize;
        let mut share = k % SHARES.len();
        let family = match (planted, staged) {
            (true, _) => Family::PlantedKernel,
            (false, true) => Family::StagedKernel,
            (false, false) => Family::Kernel,
        };
        let spec = Spec::new(buffers, seed.wrapping_add(k as u64)).with_family(family);
        let mut separated = SHARES[share];
        let problem = match (memories, drawn) {
            (true, _) => kernel_with_memories(
                spec,
                Some(SHARES[share]),
                minimalloc::plan::first_fit_height,
            ),
            (false, true) => generate_problem(spec).inspect(|problem| {
                separated = separated_share(problem);
                share = DRAWN
                    .iter()
                    .position(|&(below, _)| separated < below)
                    .unwrap_or(3);
            }),
            (false, false) => kernel_problem(spec, SHARES[share]),
        }
        .expect("a generated kernel is valid");
        let problem = match pairs && !memories {
            true => pairwise(&problem),
            false => problem,
        };
        let row = &mut rows[share];
        row.kernels += 1;

        let fit = Options {
            threads: 1,
            timeout: Some(Duration::from_secs_f64(timeout)),
            ..Options::default()
        };
        let minimise = Options {
            objective: Objective::Minimize,
            ..fit.clone()
        };
        let start = Instant::now();
        let outcome = plan(&problem, &minimise);
        let took = start.elapsed();
        row.time += took;
        match outcome.solution.as_ref() {
            Some(solution) => check(&problem, solution, &outcome),
            None if memories => row.unplaced += 1,
            None => panic!("minimising without memories always places"),
        }
        row.proven += usize::from(outcome.optimal);
        if let Some(optimum) = planted_optimum(spec).filter(|_| planted) {
            // The optimum is known: no bound may pass it, no height beat it.
            assert!(
                outcome.lower_bound <= optimum,
                "kernel {k}: a bound above the optimum"
            );
            let height = outcome
                .solution
                .as_ref()
                .map_or(i64::MAX, |s| s.height(&problem));
            assert!(height >= optimum, "kernel {k}: below the optimum");
            let excess = (height - optimum) as f64 / optimum as f64;
            row.excess += excess;
            row.at_optimum += usize::from(height == optimum);
            row.worst = row.worst.max(excess);
        }
        let minimised = (
            took,
            outcome.solution.as_ref().map(|s| s.height(&problem)),
            outcome.lower_bound,
            outcome.optimal,
        );

        // Fitted at the memories' capacities, or else at the max load.
        let at_load = match memories {
            true => problem.clone(),
            false => problem
                .with_capacity(max_load(&problem).max(1))
                .expect("the max load is a capacity"),
        };
        if memories {
            penalties(&problem, &fit, row);
        }
        let start = Instant::now();
        let outcome = plan(&at_load, &fit);
        let fit_took = start.elapsed();
        row.fit_time += fit_took;
        match outcome.status {
            Status::Solved => {
                check(&at_load, outcome.solution.as_ref().unwrap(), &outcome);
                row.found += 1;
            }
            Status::Infeasible => {
                // At a planted kernel's max load its packing fits.
                assert!(
                    !planted,
                    "kernel {k}: its planted packing called infeasible"
                );
                row.infeasible += 1
            }
            _ => row.neither += 1,
        }
        if detail {
            let (time, height, bound, optimal) = minimised;
            let height = height.map_or("-".to_string(), |h| h.to_string());
            println!(
                "kernel {k} buffers {buffers} separated {:.0}% height {height} bound {bound} optimal {optimal} time {:.3} fit {:?} {:.3} max-load {}",
                separated * 100.0,
                time.as_secs_f64(),
                outcome.status,
                fit_took.as_secs_f64(),
                max_load(&problem),
            );
        }
    }
    let (shape, fitted) = match (memories, pairs, drawn) {
        (true, _, _) => (", over 1-5 memories", "their memories' capacities"),
        (false, true, _) => (", separations declared in pairs", "the max load"),
        (false, false, true) => (", shares as the generator draws them", "the max load"),
        (false, false, false) if planted => {
            (", planted: optimum known", "the max load (the optimum)")
        }
        (false, false, false) => ("", "the max load"),
    };
    let shape = match staged && !planted {
        true => format!(", separations by pipeline stage{shape}"),
        false => shape.to_string(),
    };
    let labels: Vec<String> = match drawn {
        true => DRAWN.iter().map(|&(_, label)| label.to_string()).collect(),
        false => SHARES
            .iter()
            .map(|s| format!("{:.0}%", s * 100.0))
            .collect(),
    };
    println!(
        "{kernels} kernels (2-250 buffers{shape}), one thread, --timeout={timeout}s, seeds from {seed}\n"
    );
    println!("| separated pairs | kernels | minimised: proven optimal | not placed | time (s) | share of the budgets | fit at {fitted}: found / infeasible / neither | time (s) |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let mut total = Row::default();
    for (label, row) in labels.iter().zip(&rows) {
        print_row(label, row, timeout);
        total.kernels += row.kernels;
        total.proven += row.proven;
        total.time += row.time;
        total.found += row.found;
        total.infeasible += row.infeasible;
        total.neither += row.neither;
        total.fit_time += row.fit_time;
        total.unplaced += row.unplaced;
        total.paid += row.paid;
        total.paid_proven += row.paid_proven;
        total.cost += row.cost;
        total.first_fit_cost += row.first_fit_cost;
        total.above_first_fit += row.above_first_fit;
        total.penalty_time += row.penalty_time;
        total.excess += row.excess;
        total.worst = total.worst.max(row.worst);
        total.at_optimum += row.at_optimum;
    }
    print_row("all", &total, timeout);
    if planted {
        println!("\nHeights minimised, above the optimum (the planted packing's):\n");
        println!("| separated pairs | at the optimum | mean above | worst above |");
        println!("| ---: | ---: | ---: | ---: |");
        for (label, row) in labels
            .iter()
            .chain(["all".to_string()].iter())
            .zip(rows.iter().chain([&total]))
        {
            println!(
                "| {label} | {} of {} | {:.1}% | {:.1}% |",
                row.at_optimum,
                row.kernels,
                100.0 * row.excess / row.kernels.max(1) as f64,
                100.0 * row.worst
            );
        }
    }
    if memories {
        println!("\nReuse penalties (the penalty objective, same timeout):\n");
        println!("| separated pairs | placed | proven least | cost in all | first-fit's cost in all | above first-fit | time (s) |");
        println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        for (label, row) in labels.iter().zip(&rows) {
            print_penalty_row(label, row);
        }
        print_penalty_row("all", &total);
    }
}

/// The share of `problem`'s pairs its separation groups separate.
fn separated_share(problem: &Problem) -> f64 {
    let n = problem.len();
    let mut marked = vec![false; n * n];
    for group in problem.separations() {
        for (k, &a) in group.iter().enumerate() {
            for &b in &group[k + 1..] {
                let (a, b) = (a.min(b) as usize, a.max(b) as usize);
                marked[a * n + b] = true;
            }
        }
    }
    let pairs = (n * n.saturating_sub(1) / 2).max(1);
    marked.iter().filter(|&&m| m).count() as f64 / pairs as f64
}

/// The penalty objective on `problem` against first-fit's own placement
/// (fitted, its plain order): what each pays, whether the objective
/// proved its cost the least.
fn penalties(problem: &Problem, fit: &Options, row: &mut Row) {
    let options = Options {
        objective: Objective::Penalty,
        ..fit.clone()
    };
    let start = Instant::now();
    let outcome = plan(problem, &options);
    row.penalty_time += start.elapsed();
    let Some(solution) = outcome.solution.as_ref() else {
        return;
    };
    check(problem, solution, &outcome);
    let report = outcome.penalty.expect("the penalty objective reports");
    assert_eq!(report.cost, solution.penalty(problem));
    let first_fit = Options {
        method: Method::Heuristic(Strategy::FirstFit),
        restarts: Some(0),
        ..fit.clone()
    };
    let ff = plan(problem, &first_fit);
    let ff_cost = match ff.solution.as_ref() {
        Some(s) => {
            check(problem, s, &ff);
            s.penalty(problem)
        }
        None => return,
    };
    row.paid += 1;
    row.paid_proven += usize::from(outcome.optimal);
    row.cost += report.cost;
    row.first_fit_cost += ff_cost;
    row.above_first_fit += usize::from(report.cost > ff_cost);
}

fn print_penalty_row(name: &str, row: &Row) {
    println!(
        "| {name} | {} | {} ({:.0}%) | {} | {} | {} | {:.1} |",
        row.paid,
        row.paid_proven,
        100.0 * row.paid_proven as f64 / row.paid.max(1) as f64,
        row.cost,
        row.first_fit_cost,
        row.above_first_fit,
        row.penalty_time.as_secs_f64(),
    );
}

/// Validates a placement, in its pools when the kernel has memories.
fn check(problem: &Problem, solution: &Solution, outcome: &Outcome) {
    match &outcome.pooled {
        Some(pooled) => validate_pooled(problem, solution, &pooled.pool_of),
        None => validate(problem, solution),
    }
    .expect("a valid placement");
}

fn print_row(name: &str, row: &Row, timeout: f64) {
    let budgets = row.kernels as f64 * timeout;
    println!(
        "| {name} | {} | {} ({:.0}%) | {} | {:.1} | {:.0}% | {} / {} / {} | {:.1} |",
        row.kernels,
        row.proven,
        100.0 * row.proven as f64 / row.kernels.max(1) as f64,
        row.unplaced,
        row.time.as_secs_f64(),
        100.0 * row.time.as_secs_f64() / budgets.max(f64::MIN_POSITIVE),
        row.found,
        row.infeasible,
        row.neither,
        row.fit_time.as_secs_f64(),
    );
}

/// `problem` with each separation group declared as its pairs.
fn pairwise(problem: &Problem) -> Problem {
    let mut out =
        Problem::new(problem.capacity(), problem.buffers().to_vec()).expect("the same buffers");
    let mut seen = std::collections::HashSet::new();
    for group in problem.separations() {
        for (i, &a) in group.iter().enumerate() {
            for &b in &group[i + 1..] {
                let (a, b) = (a.min(b) as usize, a.max(b) as usize);
                if a != b && seen.insert((a, b)) {
                    out.separate(&[a, b]).expect("a separated pair");
                }
            }
        }
    }
    out
}
