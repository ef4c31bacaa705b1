//! Heuristics, restarts and minimisation: every placement validated, bounds
//! honest, results reproducible.

mod common;

use std::time::Duration;

use common::{brute_force, counting_clock, random_problem, Rng, Shape};
use minimalloc::gen::{generate, Spec};
use minimalloc::heuristic::{run, run_variant, Strategy, Variant};
use minimalloc::io::csv;
use minimalloc::model::solution::validate_below;
use minimalloc::{max_load, plan, validate, Method, Objective, Options, Problem, Source, Status};

fn challenging(name: char) -> Problem {
    let path = format!(
        "{}/benchmarks/challenging/{name}.1048576.csv",
        env!("CARGO_MANIFEST_DIR")
    );
    csv::read(&std::fs::read_to_string(path).unwrap(), 1048576)
        .unwrap()
        .0
}

/// Every strategy with every depth of layer it has.
fn variants() -> impl Iterator<Item = Variant> {
    Strategy::ALL.into_iter().flat_map(Strategy::variants)
}

#[test]
fn every_heuristic_places_the_challenging_suite_validly() {
    for name in "ABCDEFGHIJK".chars() {
        let problem = challenging(name);
        let load = max_load(&problem);
        for variant in variants() {
            let s = run_variant(&problem, variant).unwrap();
            validate_below(&problem, &s, i64::MAX)
                .unwrap_or_else(|e| panic!("{name} {variant:?}: {e}"));
            assert!(
                s.height(&problem) >= load,
                "{name} {variant:?} is below the max load"
            );
        }
    }
}

#[test]
fn every_heuristic_honours_alignment_gaps_windows_and_fixed_offsets() {
    let shape = Shape {
        max_buffers: 30,
        horizon: 40,
        max_size: 24,
        max_capacity: 64,
        ..Shape::SMALL
    };
    let mut rng = Rng::new(17);
    let mut placed = 0;
    for i in 0..1500 {
        let problem = random_problem(&mut rng, shape);
        for strategy in variants() {
            // None only when fixed buffers clash, which validation confirms.
            match run_variant(&problem, strategy) {
                Some(s) => {
                    validate_below(&problem, &s, i64::MAX)
                        .unwrap_or_else(|e| panic!("instance {i}, {strategy:?}: {e}\n{problem:?}"));
                    placed += 1;
                }
                None => {
                    let fixed: Vec<i64> = problem
                        .buffers()
                        .iter()
                        .map(|b| b.offset.unwrap_or(0))
                        .collect();
                    let only_fixed = Problem::new(
                        problem.capacity(),
                        problem
                            .buffers()
                            .iter()
                            .filter(|b| b.offset.is_some())
                            .cloned()
                            .collect(),
                    )
                    .unwrap();
                    let offsets = fixed
                        .iter()
                        .zip(problem.buffers())
                        .filter(|(_, b)| b.offset.is_some())
                        .map(|(&o, _)| o)
                        .collect();
                    assert!(
                        validate(&only_fixed, &minimalloc::Solution { offsets }).is_err(),
                        "instance {i}"
                    );
                }
            }
        }
    }
    // About a fifth of these instances have clashing fixed buffers.
    assert!(placed > 4000, "{placed}");
}

fn lowest_height_by_brute_force(problem: &Problem) -> Option<i64> {
    let load = max_load(problem);
    // Hints never change feasibility, but one above a candidate capacity
    // would make that capacity fail validation: drop them for the scan.
    let unhinted: Vec<_> = problem
        .buffers()
        .iter()
        .cloned()
        .map(|mut b| {
            b.hint = None;
            b
        })
        .collect();
    let mut found = None;
    // Scan upward from the load to the problem's own capacity.
    for c in load.max(1)..=problem.capacity() {
        // Capacities below a fixed buffer's top are invalid, hence skipped.
        let Ok(p) = Problem::new(c, unhinted.clone()) else {
            continue;
        };
        if brute_force(&p).is_some() {
            found = Some(c);
            break;
        }
    }
    found
}

#[test]
fn minimisation_bounds_are_honest() {
    let shape = Shape {
        windows: false,
        max_capacity: 14,
        ..Shape::SMALL
    };
    let mut rng = Rng::new(31);
    let mut optimal = 0;
    for i in 0..400 {
        let problem = random_problem(&mut rng, shape);
        // The capacity only bounds the search from above here.
        let open = problem.with_capacity(64).unwrap();
        let best = lowest_height_by_brute_force(&open);
        let options = Options {
            objective: Objective::Minimize,
            restarts: Some(8),
            ..Options::default()
        };
        let outcome = plan(&open, &options);
        match best {
            None => assert!(
                outcome.solution.is_none(),
                "instance {i}: {open:?} {outcome:?}"
            ),
            Some(best) => {
                let s = outcome
                    .solution
                    .as_ref()
                    .unwrap_or_else(|| panic!("instance {i}: nothing"));
                validate(&open, s).unwrap();
                let height = s.height(&open);
                assert!(
                    outcome.lower_bound <= best,
                    "instance {i}: bound {} above the optimum {best}",
                    outcome.lower_bound
                );
                assert!(height >= outcome.lower_bound, "instance {i}");
                if outcome.optimal {
                    assert_eq!(height, best, "instance {i}: marked optimal");
                    assert_eq!(height, outcome.lower_bound, "instance {i}");
                    optimal += 1;
                }
                // Small problems are solved exactly.
                assert_eq!(height, best, "instance {i}");
            }
        }
    }
    assert!(optimal > 300, "{optimal}");
}

fn generated(n: usize) -> Problem {
    Problem::new(i64::MAX, generate(Spec::new(n, 7))).unwrap()
}

#[test]
fn a_one_millisecond_deadline_still_returns_a_valid_placement() {
    let problem = generated(200_000);
    let options = Options {
        objective: Objective::Minimize,
        timeout: Some(Duration::from_millis(1)),
        ..Options::default()
    };
    let outcome = plan(&problem, &options);
    assert_eq!(outcome.status, Status::Solved);
    assert!(outcome.stopped.is_some());
    validate(&problem, outcome.solution.as_ref().unwrap()).unwrap();
}

#[test]
fn same_seed_same_offsets_on_any_number_of_threads() {
    let problem = generated(3_000);
    let run = |seed: u64, threads: usize| {
        let options = Options {
            objective: Objective::Minimize,
            method: Method::Heuristic(Strategy::FirstFit),
            restarts: Some(12),
            seed,
            threads,
            ..Options::default()
        };
        let outcome = plan(&problem, &options);
        let s = outcome.solution.unwrap();
        validate(&problem, &s).unwrap();
        (s.offsets, outcome.source)
    };
    let (one, source) = run(5, 1);
    assert_eq!(run(5, 1).0, one);
    assert_eq!(run(5, 2).0, one);
    assert_eq!(run(5, 4).0, one);
    // First-fit's placements, or its best one lowered by local repair.
    assert!(matches!(
        source,
        Some(Source::Heuristic(Strategy::FirstFit, _) | Source::Repaired)
    ));
}

#[test]
fn restarts_never_do_worse_than_the_plain_order() {
    let problem = generated(5_000);
    for strategy in Strategy::ALL {
        let plain = run(&problem, strategy).unwrap().height(&problem);
        let options = Options {
            objective: Objective::Minimize,
            method: Method::Heuristic(strategy),
            restarts: Some(6),
            ..Options::default()
        };
        let outcome = plan(&problem, &options);
        let s = outcome.solution.unwrap();
        validate(&problem, &s).unwrap();
        assert!(s.height(&problem) <= plain, "{strategy}");
    }
}

#[test]
fn fit_mode_uses_a_heuristic_when_one_fits_and_proves_infeasibility_by_load() {
    let problem = generated(2_000);
    let load = max_load(&problem);
    let plain = run(&problem, Strategy::FirstFit).unwrap().height(&problem);
    let roomy = problem.with_capacity(plain).unwrap();
    let outcome = plan(&roomy, &Options::default());
    assert_eq!(outcome.status, Status::Solved);
    assert!(matches!(outcome.source, Some(Source::Heuristic(..))));
    validate(&roomy, outcome.solution.as_ref().unwrap()).unwrap();
    let tight = problem.with_capacity(load - 1).unwrap();
    let outcome = plan(&tight, &Options::default());
    assert_eq!(outcome.status, Status::Infeasible);
    assert!(outcome.lower_bound >= load);
}

/// With one thread the scheduler's work does not depend on the clock, so
/// a larger budget does all that a smaller one does, and more: it never
/// ends higher. The budgets are of work (a clock that counts its reads),
/// so that a loaded machine cannot make a larger one do less.
#[test]
fn a_larger_budget_never_ends_higher_on_one_thread() {
    use minimalloc::gen::Family;
    let inputs = [
        challenging('D').with_capacity(1 << 21).unwrap(),
        challenging('J').with_capacity(1 << 21).unwrap(),
        Problem::new(i64::MAX, generate(Spec::new(3_000, 2))).unwrap(),
        Problem::new(
            i64::MAX,
            generate(Spec::new(5_000, 3).with_family(Family::LongLived)),
        )
        .unwrap(),
    ];
    for (i, problem) in inputs.iter().enumerate() {
        let mut last = i64::MAX;
        for ms in [25, 50, 100, 200, 400] {
            let options = Options {
                objective: Objective::Minimize,
                timeout: Some(Duration::from_millis(ms)),
                clock: Some(counting_clock),
                threads: 1,
                seed: 11,
                ..Options::default()
            };
            let outcome = plan(problem, &options);
            let s = outcome.solution.expect("a placement");
            validate(problem, &s).unwrap();
            let height = s.height(problem);
            assert!(
                height <= last,
                "input {i}: {ms} ms ends at {height}, above {last}"
            );
            assert!(height >= outcome.lower_bound);
            last = height;
        }
    }
}

/// The long-lived family: 2 % of buffers alive for 5-50 % of the step,
/// the same buffers for the same spec.
#[test]
fn the_long_lived_family_has_its_long_lived_buffers() {
    use minimalloc::gen::Family;
    let spec = Spec::new(20_000, 4).with_family(Family::LongLived);
    let buffers = generate(spec);
    assert_eq!(buffers, generate(spec));
    // Only the long-lived kind starts in the backward pass (the second
    // half) and lives a fifth of the step or more without reaching its
    // end (weight gradients that live long reach the update).
    let cuts_across = |buffers: &[minimalloc::Buffer]| {
        let end = buffers.iter().map(|b| b.upper).max().unwrap();
        buffers
            .iter()
            .filter(|b| 2 * b.lower >= end && 5 * (b.upper - b.lower) >= end && b.upper + 4 < end)
            .count()
    };
    let long = cuts_across(&buffers);
    assert!((20..=200).contains(&long), "{long} long-lived buffers");
    assert_eq!(cuts_across(&generate(Spec::new(20_000, 4))), 0);
    let sizes: Vec<i64> = buffers.iter().map(|b| b.size).collect();
    let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
    assert!(hi / lo >= 1_000_000, "sizes {lo}..{hi}");
    let problem = Problem::new(i64::MAX, buffers).unwrap();
    let s = run(&problem, Strategy::Online).unwrap();
    validate(&problem, &s).unwrap();
}

/// The largest capacity there is still asks for a placement (the
/// scheduler's "no placement yet" must not read as one that fits).
#[test]
fn fitting_the_largest_capacity_places_everything() {
    for problem in [
        generated(500),
        challenging('A').with_capacity(i64::MAX).unwrap(),
    ] {
        for threads in [1, 2] {
            let options = Options {
                threads,
                timeout: Some(Duration::from_secs(60)),
                ..Options::default()
            };
            for options in [
                options.clone(),
                Options {
                    timeout: None,
                    ..options
                },
            ] {
                let outcome = plan(&problem, &options);
                assert_eq!(outcome.status, Status::Solved);
                validate(&problem, outcome.solution.as_ref().unwrap()).unwrap();
            }
        }
    }
}

/// The bound from alignment (the highest piece alive at a time starts at
/// an aligned offset) never passes the optimum, and does rise above the
/// max load: checked against brute force, with no search to raise it.
#[test]
fn the_alignment_bound_is_sound_and_rises_above_the_max_load() {
    let shape = Shape {
        max_capacity: 14,
        fixed: false,
        ..Shape::SMALL
    };
    let mut rng = Rng::new(47);
    let (mut above, mut tight) = (0, 0);
    for i in 0..1500 {
        let problem = random_problem(&mut rng, shape).with_capacity(40).unwrap();
        let Some(best) = lowest_height_by_brute_force(&problem) else {
            continue;
        };
        let options = Options {
            objective: Objective::Minimize,
            method: Method::Heuristic(Strategy::Online),
            restarts: Some(0),
            ..Options::default()
        };
        let outcome = plan(&problem, &options);
        let load = max_load(&problem);
        assert!(
            outcome.lower_bound <= best,
            "instance {i}: bound {} above the optimum {best}\n{problem:?}",
            outcome.lower_bound
        );
        above += usize::from(outcome.lower_bound > load);
        tight += usize::from(outcome.lower_bound > load && outcome.lower_bound == best);
    }
    assert!(
        above > 20 && tight > 10,
        "above the load {above}, tight {tight}"
    );
}

/// The restarts an outcome reports are the perturbed placements run after
/// the plain orders, and `Options::restarts` bounds exactly that number:
/// one heuristic (whose six layers are its plain orders) on a 3,000-buffer
/// step, no timeout, asked for 0, 1, 2 and 5 restarts, reports 0, 1, 2
/// and 5 (it once reported 34 for 1, and 15 for both 2 and 5).
#[test]
fn restarts_count_and_bound_the_perturbed_placements() {
    let problem = generated(3_000);
    let load = max_load(&problem);
    for asked in [0u64, 1, 2, 5] {
        let options = Options {
            objective: Objective::Minimize,
            method: Method::Heuristic(Strategy::Online),
            restarts: Some(asked),
            threads: 1,
            ..Options::default()
        };
        let outcome = plan(&problem, &options);
        let solution = outcome.solution.expect("a placement");
        validate(&problem, &solution).unwrap();
        if solution.height(&problem) > load {
            assert_eq!(outcome.restarts, asked, "asked for {asked}");
        } else {
            assert!(outcome.restarts <= asked, "asked for {asked}");
        }
    }
}

/// Minimising with a timeout by one heuristic that places nothing in it,
/// the online placement made first stands in (valid, its source online),
/// not every buffer stacked above the other; given the time to finish,
/// the result is that heuristic's own (its placement, restarts or repair).
/// Both ways the stand-in is made: before the layout, and (a buffer with a
/// fixed offset) on it.
#[test]
fn the_online_placement_stands_in_for_a_heuristic_that_places_nothing_in_the_time() {
    // A clock of its own (the shared one is another test's): each read
    // moves it 20 microseconds on, so budgets are of work.
    fn clock() -> u64 {
        use std::sync::atomic::{AtomicU64, Ordering};
        static READS: AtomicU64 = AtomicU64::new(0);
        READS.fetch_add(1, Ordering::Relaxed) * 20_000
    }
    // Plain buffers (the online order placed before the layout), and the
    // same with one offset fixed (placed on the layout).
    let buffers = generate(Spec::new(3_000, 3));
    let mut fixed = buffers.clone();
    fixed[0] = fixed[0].clone().with_offset(0);
    let online = Strategy::Online.variants().next().unwrap();
    for problem in [buffers, fixed].map(|b| Problem::new(i64::MAX, b).unwrap()) {
        for strategy in [Strategy::FirstFit, Strategy::BestFit] {
            for (us, stands_in) in [(2_000, true), (10_000, true), (200_000, false)] {
                let options = Options {
                    objective: Objective::Minimize,
                    method: Method::Heuristic(strategy),
                    timeout: Some(Duration::from_micros(us)),
                    clock: Some(clock),
                    threads: 1,
                    ..Options::default()
                };
                let outcome = plan(&problem, &options);
                let s = outcome.solution.expect("a placement");
                validate(&problem, &s).unwrap();
                let source = outcome.source.unwrap();
                let online_placement = run_variant(&problem, online).unwrap();
                match stands_in {
                    true => {
                        assert_eq!(
                            source,
                            Source::Heuristic(Strategy::Online, 0),
                            "{strategy:?}"
                        );
                        assert_eq!(s.height(&problem), online_placement.height(&problem));
                    }
                    false => assert!(
                        !matches!(
                            source,
                            Source::Heuristic(Strategy::Online, _) | Source::Stacked
                        ),
                        "{strategy:?} at {us} us: {source:?}"
                    ),
                }
            }
        }
    }
}
