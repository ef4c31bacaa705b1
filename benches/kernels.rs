//! Plans generated NPU kernels as a kernel compiler does: one call per
//! kernel, one thread, a short timeout. Prints, per share of separated
//! pairs, how many kernels were minimised to a proven optimum and how long
//! they took in all, then the same kernels fitted at their max load (a
//! capacity that only some meet): found, proven infeasible, or neither.
//!
//!     cargo bench --bench kernels -- [--kernels N] [--timeout SECS] [--seed S]
//!
//! Kernels are `minimalloc gen --family=kernel` with 2-250 buffers and 0,
//! 10, 25 or 50% of their pairs separated, seeds from S (default 1). Every
//! placement is validated.

use std::time::{Duration, Instant};

use minimalloc::gen::{kernel_problem, Family, Spec};
use minimalloc::{max_load, plan, validate, Objective, Options, Status};

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
}

fn main() {
    let mut kernels = 200usize;
    let mut timeout = 1.0f64;
    let mut seed = 1u64;
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
        let problem = kernel_problem(spec, SHARES[share]).expect("a generated kernel is valid");
        let row = &mut rows[share];
        row.kernels += 1;

        let minimise = Options {
            objective: Objective::Minimize,
            threads: 1,
            timeout: Some(Duration::from_secs_f64(timeout)),
            ..Options::default()
        };
        let start = Instant::now();
        let outcome = plan(&problem, &minimise);
        row.time += start.elapsed();
        let solution = outcome.solution.as_ref().expect("minimising places");
        validate(&problem, solution).expect("a valid placement");
        row.proven += usize::from(outcome.optimal);

        let at_load = problem
            .with_capacity(max_load(&problem).max(1))
            .expect("the max load is a capacity");
        let fit = Options {
            threads: 1,
            timeout: Some(Duration::from_secs_f64(timeout)),
            ..Options::default()
        };
        let start = Instant::now();
        let outcome = plan(&at_load, &fit);
        row.fit_time += start.elapsed();
        match outcome.status {
            Status::Solved => {
                validate(&at_load, outcome.solution.as_ref().unwrap()).expect("valid");
                row.found += 1;
            }
            Status::Infeasible => row.infeasible += 1,
            _ => row.neither += 1,
        }
    }
    println!(
        "{kernels} kernels (2-250 buffers), one thread, --timeout={timeout}s, seeds from {seed}\n"
    );
    println!("| separated pairs | kernels | minimised: proven optimal | time (s) | share of the budgets | fit at the max load: found / infeasible / neither | time (s) |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
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
    }
    print_row("all", &total, timeout);
}

fn print_row(name: &str, row: &Row, timeout: f64) {
    let budgets = row.kernels as f64 * timeout;
    println!(
        "| {name} | {} | {} ({:.0}%) | {:.1} | {:.0}% | {} / {} / {} | {:.1} |",
        row.kernels,
        row.proven,
        100.0 * row.proven as f64 / row.kernels.max(1) as f64,
        row.time.as_secs_f64(),
        100.0 * row.time.as_secs_f64() / budgets.max(f64::MIN_POSITIVE),
        row.found,
        row.infeasible,
        row.neither,
        row.fit_time.as_secs_f64(),
    );
}
