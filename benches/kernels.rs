//! Plans generated NPU kernels as a kernel compiler does: one call per
//! kernel, one thread, a short timeout. Prints, per share of separated
//! pairs, how many kernels were minimised to a proven optimum and how long
//! they took in all, then the same kernels fitted at their max load (a
//! capacity that only some meet): found, proven infeasible, or neither.
//!
//!     cargo bench --bench kernels -- [--kernels N] [--timeout SECS] [--seed S] [--memories | --pairs] [--detail]
//!
//! Kernels are `minimalloc gen --family=kernel` with 2-250 buffers and 0,
//! 10, 25 or 50% of their pairs separated, seeds from S (default 1). With
//! `--memories` (`gen --family=kernel --memories`) each kernel is spread
//! over 1-5 memories (pools) with reserved ranges and in-place
//! colocations; it is then minimised within its memories (a kernel none
//! of whose assignments is found counts as not placed) and fitted at the
//! memories' own capacities; its reuse penalties are then paid as little
//! as the penalty objective can (how many kernels it proves, what they pay
//! in all, against what first-fit's own placement pays, and how many pay
//! more than first-fit: there must be none). With `--pairs` each kernel's separations are
//! declared pair by pair instead of by group (as some compilers write
//! them: thousands of pairs for a hundred buffers). With `--detail` a
//! line per kernel too: its height and bound minimised, whether proven,
//! the time, and the fit's status and time. Every placement is
//! validated.

use std::time::{Duration, Instant};

use minimalloc::gen::{kernel_problem, kernel_with_memories, Family, Spec};
use minimalloc::heuristic::Strategy;
use minimalloc::{
    max_load, plan, validate, validate_pooled, Method, Objective, Options, Outcome, Problem,
    Solution, Status,
};

const SHARES: [f64; 4] = [0.0, 0.1, 0.25, 0.5];

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
}

fn main() {
    let mut kernels = 200usize;
    let mut timeout = 1.0f64;
    let mut seed = 1u64;
    let mut memories = false;
    let mut pairs = false;
    let mut detail = false;
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
            "--detail" => {
                detail = true;
                i += 1;
                continue;
            }
            other => panic!("unknown argument {other}"),
        }
        i += 2;
    }
    let mut rows: Vec<Row> = SHARES.iter().map(|_| Row::default()).collect();
    let mut state = seed.max(1);
    for k in 0..kernels {
        // xorshift: the kernel's size and share, reproducibly.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let buffers = 2 + (state % 249) as usize;
        let share = k % SHARES.len();
        let spec = Spec::new(buffers, seed.wrapping_add(k as u64)).with_family(Family::Kernel);
        let problem = match memories {
            true => kernel_with_memories(spec, Some(SHARES[share])),
            false => kernel_problem(spec, SHARES[share]),
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
            Status::Infeasible => row.infeasible += 1,
            _ => row.neither += 1,
        }
        if detail {
            let (time, height, bound, optimal) = minimised;
            let height = height.map_or("-".to_string(), |h| h.to_string());
            println!(
                "kernel {k} buffers {buffers} separated {:.0}% height {height} bound {bound} optimal {optimal} time {:.3} fit {:?} {:.3} max-load {}",
                SHARES[share] * 100.0,
                time.as_secs_f64(),
                outcome.status,
                fit_took.as_secs_f64(),
                max_load(&problem),
            );
        }
    }
    let (shape, fitted) = match (memories, pairs) {
        (true, _) => (", over 1-5 memories", "their memories' capacities"),
        (false, true) => (", separations declared in pairs", "the max load"),
        (false, false) => ("", "the max load"),
    };
    println!(
        "{kernels} kernels (2-250 buffers{shape}), one thread, --timeout={timeout}s, seeds from {seed}\n"
    );
    println!("| separated pairs | kernels | minimised: proven optimal | not placed | time (s) | share of the budgets | fit at {fitted}: found / infeasible / neither | time (s) |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let mut total = Row::default();
    for (share, row) in SHARES.iter().zip(&rows) {
        print_row(&format!("{:.0}%", share * 100.0), row, timeout);
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
    }
    print_row("all", &total, timeout);
    if memories {
        println!("\nReuse penalties (the penalty objective, same timeout):\n");
        println!("| separated pairs | placed | proven least | cost in all | first-fit's cost in all | above first-fit | time (s) |");
        println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        for (share, row) in SHARES.iter().zip(&rows) {
            print_penalty_row(&format!("{:.0}%", share * 100.0), row);
        }
        print_penalty_row("all", &total);
    }
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
