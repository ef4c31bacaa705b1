//! The portfolio never ends above one of its own strategies, and the
//! generator families are what they claim to be.
//!
//! Dominance, as the scheduler promises it (see `src/plan/schedule.rs`):
//! with one lane every strategy's plain order runs before anything else,
//! none is left out for its cost, so
//! - a plan with no restarts ends at or below the best plain order (the
//!   schedule is counted in work, not time, so this is exact and
//!   repeatable);
//! - a plan given twice the time the plain orders take alone ends at or
//!   below each of them;
//! - more time, or more threads, never ends higher than that.
//!
//! Every placement is validated. The families: step, long-lived,
//! independent (sizes unrelated to lifetimes), planted and swept (zero-
//! waste packings whose optimum is known, by guillotine cuts and not) and
//! kernel (dense separations).

use std::time::{Duration, Instant};

mod common;
use common::counting_clock;

use minimalloc::gen::{
    generate_problem, kernel_problem, kernel_with_memories, planted_optimum, Family, Spec,
};
use minimalloc::heuristic::{run, run_variant, Strategy};
use minimalloc::{max_load, plan, validate, validate_pooled, Objective, Options, Problem};

/// Each strategy's plain order alone: its height and how long it took.
fn plain_orders(problem: &Problem) -> Vec<(Strategy, i64, Duration)> {
    Strategy::ALL
        .into_iter()
        .map(|s| {
            let t = Instant::now();
            let solution = run(problem, s).expect("a placement");
            let took = t.elapsed();
            validate(problem, &solution).unwrap_or_else(|e| panic!("{s}: {e}"));
            (s, solution.height(problem), took)
        })
        .collect()
}

fn minimized(problem: &Problem, options: Options) -> i64 {
    let outcome = plan(
        problem,
        &Options {
            objective: Objective::Minimize,
            ..options
        },
    );
    let solution = outcome.solution.expect("a placement");
    validate(problem, &solution).expect("a valid placement");
    solution.height(problem)
}

fn small_instances() -> Vec<(String, Problem)> {
    let mut out = Vec::new();
    for seed in 0..6u64 {
        for family in [
            Family::Step,
            Family::LongLived,
            Family::Independent,
            Family::Planted,
            Family::Swept,
        ] {
            let n = 40 + 37 * seed as usize;
            let spec = Spec::new(n, seed).with_family(family);
            out.push((
                format!("{} n={n} seed={seed}", family.name()),
                generate_problem(spec).unwrap(),
            ));
        }
        let spec = Spec::new(20 + 15 * seed as usize, seed).with_family(Family::Kernel);
        out.push((
            format!("kernel seed={seed}"),
            kernel_problem(spec, 0.5).unwrap(),
        ));
    }
    out
}

/// Counted in work, not time: no restarts, one thread (the order of
/// work does not depend on the clock then). The timeout only ends the
/// exact search that follows the plain orders, which on separated kernels
/// would go on for long without one.
#[test]
fn with_no_restarts_the_portfolio_ends_at_or_below_every_plain_order() {
    for (name, problem) in small_instances() {
        let best = plain_orders(&problem).iter().map(|p| p.1).min().unwrap();
        let height = minimized(
            &problem,
            Options {
                restarts: Some(0),
                threads: 1,
                timeout: Some(Duration::from_millis(300)),
                ..Options::default()
            },
        );
        assert!(
            height <= best,
            "{name}: {height} above the best plain order {best}"
        );
    }
}

/// Plain orders stop once they reach the lowest plain height found (they
/// could only end there or higher): the lowest plain height the outcome
/// reports is still the lowest of every variant run alone. On problems
/// large enough that no proof ends the plan before its plain orders. The
/// budget is of work (one thread, a clock that counts its reads), so
/// that a loaded machine cannot stop the plain orders before they end.
#[test]
fn the_lowest_plain_height_reported_is_every_variants() {
    let mut compared = 0;
    for (k, family) in [
        Family::LongLived,
        Family::Swept,
        Family::Issued,
        // Pinwheel packings coarsen to one rectangle and are proven: a
        // second swept packing (another seed) is compared too.
        Family::Swept,
        Family::Pinwheel,
    ]
    .into_iter()
    .enumerate()
    {
        let problem = generate_problem(Spec::new(1500, k as u64).with_family(family)).unwrap();
        let outcome = plan(
            &problem,
            &Options {
                objective: Objective::Minimize,
                restarts: Some(0),
                threads: 1,
                // Of work: the plain orders end within a budget of
                // 20 ms here (6 ms stops one first), the repair after.
                timeout: Some(Duration::from_millis(50)),
                clock: Some(counting_clock),
                ..Options::default()
            },
        );
        if outcome.optimal {
            continue;
        }
        let every = Strategy::ALL
            .into_iter()
            .flat_map(|s| s.variants())
            .map(|v| {
                run_variant(&problem, v)
                    .expect("a placement")
                    .height(&problem)
            })
            .min();
        assert_eq!(outcome.plain_height, every, "{}", family.name());
        compared += 1;
    }
    assert!(compared >= 2, "only {compared} plans were not proven");
}

/// Twice the time the plain orders take (never less than a few
/// milliseconds: the plan's own set-up is not free), one thread.
#[test]
fn twice_the_plain_orders_time_never_ends_above_them() {
    for (name, problem) in small_instances() {
        let plain = plain_orders(&problem);
        let all: Duration = plain.iter().map(|p| p.2).sum();
        let budget = (2 * all).max(Duration::from_millis(20));
        let height = minimized(
            &problem,
            Options {
                timeout: Some(budget),
                threads: 1,
                ..Options::default()
            },
        );
        for (s, h, _) in &plain {
            assert!(
                height <= *h,
                "{name}: {height} above {s}'s {h} in {budget:?}"
            );
        }
        // A larger budget, and more threads, do not end higher than the
        // plain orders either.
        let more = minimized(
            &problem,
            Options {
                timeout: Some(4 * budget),
                threads: 2,
                ..Options::default()
            },
        );
        let best = plain.iter().map(|p| p.1).min().unwrap();
        assert!(more <= best, "{name}: two threads {more} above {best}");
    }
}

/// A planted instance is a zero-waste packing: its optimum is its max
/// load, which the generator reports; a larger instance of a family is not
/// a copy of a smaller one, and the same spec gives the same instance.
#[test]
fn planted_instances_have_their_max_load_as_optimum() {
    for (seed, family) in (0..20u64).flat_map(|s| [(s, Family::Planted), (s, Family::Swept)]) {
        for n in [1usize, 2, 7, 100, 1000] {
            let spec = Spec::new(n, seed).with_family(family);
            let problem = generate_problem(spec).unwrap();
            assert_eq!(problem.len(), n);
            let optimum = planted_optimum(spec).unwrap();
            assert_eq!(max_load(&problem), optimum, "seed {seed} n {n}");
            // Every moment is full: the area is the rectangle's.
            let area: i128 = problem.buffers().iter().map(|b| b.area()).sum();
            let time = problem.buffers().iter().map(|b| b.upper).max().unwrap();
            assert_eq!(area, i128::from(optimum) * i128::from(time));
            assert_eq!(generate_problem(spec).unwrap().buffers(), problem.buffers());
        }
    }
    assert_eq!(planted_optimum(Spec::new(10, 1)), None);
}

/// The exact search finds the planted and swept optimum on small
/// instances, which confirms it is reachable (the generator's claim).
#[test]
fn small_planted_instances_are_solved_at_their_optimum() {
    for (seed, family) in (0..10u64).flat_map(|s| [(s, Family::Planted), (s, Family::Swept)]) {
        let spec = Spec::new(8, seed).with_family(family);
        let problem = generate_problem(spec).unwrap();
        let optimum = planted_optimum(spec).unwrap();
        let outcome = plan(
            &problem,
            &Options {
                objective: Objective::Minimize,
                ..Options::default()
            },
        );
        let solution = outcome.solution.unwrap();
        validate(&problem, &solution).unwrap();
        assert_eq!(solution.height(&problem), optimum, "{family:?} seed {seed}");
        assert!(outcome.optimal);
    }
}

/// Sizes in the independent family do not follow lifetimes; kernels have
/// the separated share they are asked for, alignment 32.
#[test]
fn independent_and_kernel_families_have_their_shape() {
    let spec = Spec::new(20_000, 3).with_family(Family::Independent);
    let problem = generate_problem(spec).unwrap();
    let (mut short, mut long) = (Vec::new(), Vec::new());
    for b in problem.buffers() {
        assert!((10..=10_000_000).contains(&b.size), "{}", b.size);
        if b.upper - b.lower <= 6 {
            short.push(b.size as f64);
        } else {
            long.push(b.size as f64);
        }
    }
    let mean_log = |v: &[f64]| v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64;
    assert!(short.len() > 14_000 && long.len() > 3_000);
    assert!((mean_log(&short) - mean_log(&long)).abs() < 0.3);

    for seed in 0..5 {
        let n = 126;
        let problem = kernel_problem(Spec::new(n, seed), 0.5).unwrap();
        let mut separated = vec![false; n * n];
        for group in problem.separations() {
            for (i, &a) in group.iter().enumerate() {
                for &b in &group[i + 1..] {
                    separated[a as usize * n + b as usize] = true;
                }
            }
        }
        let pairs = separated.iter().filter(|&&s| s).count();
        assert!(pairs >= n * (n - 1) / 4, "{pairs} pairs separated");
        assert!(problem.buffers().iter().all(|b| b.alignment == 32));
    }
}

/// Kernels over their memories: 1-5 pools, each buffer in one, reserved
/// blocks fixed at a memory's bottom, in-place colocations, capacities at
/// least the memory's max load; every kernel's plan is valid in its pools,
/// and where first-fit's height was the capacity (most kernels) it fits.
#[test]
fn kernels_over_memories_have_their_shape_and_plan_validly() {
    let (mut pools_seen, mut reserved, mut colocated, mut fitted) = (0u32, 0, 0, 0);
    for seed in 0..40u64 {
        let spec = Spec::new(20 + (seed as usize * 7) % 120, seed);
        let problem = kernel_with_memories(
            spec,
            Some(0.1 * (seed % 4) as f64),
            minimalloc::plan::first_fit_height,
        )
        .unwrap();
        let pools = problem.pools();
        assert!((1..=5).contains(&pools.len()));
        pools_seen |= 1 << pools.len();
        for (i, b) in problem.buffers().iter().enumerate() {
            assert_eq!(problem.pools_of(i).len(), 1, "buffer {i} lists one memory");
            if let Some(offset) = b.offset {
                assert!(b.id.starts_with("reserved-") && offset == 0);
                reserved += 1;
            }
        }
        colocated += problem.colocations().len();
        for (p, pool) in pools.iter().enumerate() {
            let members: Vec<_> = (0..problem.len())
                .filter(|&i| problem.pools_of(i)[0] == p as u32)
                .map(|i| {
                    let mut b = problem.buffers()[i].clone();
                    b.offset = None;
                    b
                })
                .collect();
            let load = max_load(&Problem::new(i64::MAX, members).unwrap());
            assert!(pool.capacity >= load && pool.capacity % 32 == 0);
        }
        let options = Options {
            threads: 1,
            timeout: Some(Duration::from_secs(2)),
            ..Options::default()
        };
        let outcome = plan(&problem, &options);
        if let Some(solution) = &outcome.solution {
            let pooled = outcome.pooled.as_ref().expect("a pooled outcome");
            validate_pooled(&problem, solution, &pooled.pool_of).unwrap();
            fitted += 1;
        }
    }
    assert!(
        pools_seen.count_ones() >= 4,
        "memories counts seen: {pools_seen:b}"
    );
    assert!(
        reserved >= 10 && colocated >= 10,
        "{reserved} reserved, {colocated} colocated"
    );
    assert!(fitted >= 20, "{fitted} of 40 kernels fitted their memories");
}

/// Zero-waste packings of thousands of buffers: the coarse level's forced
/// merges and guesses rebuild them (the plain orders alone end 10-35%
/// above), and the plan ends at the known optimum, proven (in well under
/// a second; the timeout only bounds a failure).
#[test]
fn planted_thousands_end_at_their_optimum() {
    for (n, seed) in [
        (1000, 1),
        (1000, 2),
        (1000, 3),
        (5000, 1),
        (5000, 2),
        (5000, 3),
    ] {
        let spec = Spec::new(n, seed).with_family(Family::Planted);
        let problem = generate_problem(spec).unwrap();
        let optimum = planted_optimum(spec).unwrap();
        let height = minimized(
            &problem,
            Options {
                timeout: Some(Duration::from_secs(20)),
                ..Options::default()
            },
        );
        assert_eq!(height, optimum, "{n} buffers, seed {seed}");
    }
}

/// Fitting agrees with minimising: on generated kernels (10% and 25% of
/// their pairs separated, one thread, with a timeout, so that the fit's
/// exact rounds also try capacities above the one asked, as the
/// minimiser's do), where the minimiser proves a height optimal, fitting
/// that height finds a valid placement and fitting one byte less finds
/// none.
#[test]
fn fitting_a_kernel_at_its_proven_optimum_places_it() {
    let timeout = Some(Duration::from_secs(20));
    let mut proven = 0;
    for k in 0..24u64 {
        let n = 40 + 4 * k as usize;
        let share = [0.1, 0.25][k as usize % 2];
        let spec = Spec::new(n, 500 + k).with_family(Family::Kernel);
        let problem = kernel_problem(spec, share).unwrap();
        let options = Options {
            threads: 1,
            timeout,
            ..Options::default()
        };
        let minimised = plan(
            &problem,
            &Options {
                objective: Objective::Minimize,
                ..options.clone()
            },
        );
        if !minimised.optimal {
            continue;
        }
        proven += 1;
        let height = minimised.solution.expect("placed").height(&problem);
        let at = problem.with_capacity(height).unwrap();
        let fitted = plan(&at, &options);
        let solution = fitted
            .solution
            .unwrap_or_else(|| panic!("kernel {k}: {:?} at {height}", fitted.status));
        validate(&at, &solution).unwrap_or_else(|e| panic!("kernel {k}: {e}"));
        let below = problem.with_capacity(height - 1).unwrap();
        let fitted = plan(&below, &options);
        assert!(
            fitted.solution.is_none(),
            "kernel {k}: placed below {height}"
        );
    }
    assert!(proven >= 16, "{proven} of 24 proven");
}
