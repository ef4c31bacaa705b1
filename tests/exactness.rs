//! The exact search against an independent brute-force solver on thousands
//! of random small instances with alignment, gaps, windows, fixed offsets
//! and hints. Every solution goes through the validator.

mod common;

use common::{brute_force, random_problem, Rng, Shape};
use minimalloc::Params;
use minimalloc::{plan, validate, Method, Options, Problem, Status};

/// Runs the exact search alone and checks its answer against brute force.
fn check(problem: &Problem, params: &Params, what: &str) -> (Status, Option<bool>) {
    let options = Options {
        solver: params.clone(),
        method: Method::Exact,
        ..Options::default()
    };
    check_with(problem, &options, what)
}

/// Plans with `options` and checks the answer against brute force; returns
/// the status and whether brute force places the buffers.
fn check_with(problem: &Problem, options: &Options, what: &str) -> (Status, Option<bool>) {
    let outcome = plan(problem, options);
    let brute = brute_force(problem);
    let dump = || minimalloc::io::csv::write_problem(problem, None);
    match outcome.status {
        Status::Solved => {
            let s = outcome.solution.as_ref().unwrap();
            if let Err(e) = validate(problem, s) {
                panic!(
                    "{what}: invalid solution {:?}: {e}\ncapacity {}\n{}",
                    s.offsets,
                    problem.capacity(),
                    dump()
                );
            }
            assert!(
                brute.is_some(),
                "{what}: solved what brute force calls infeasible\n{}",
                dump()
            );
        }
        Status::Infeasible => {
            assert!(
                brute.is_none(),
                "{what}: called infeasible, but brute force places {:?}\ncapacity {}\n{}",
                brute,
                problem.capacity(),
                dump()
            );
        }
        Status::NotFound => {
            assert!(
                outcome.stats.interleaving > 0,
                "{what}: 'not found' is only for interleaving windows\n{}",
                dump()
            );
        }
        s => panic!("{what}: unexpected status {s:?}"),
    }
    (outcome.status, brute.map(|_| true))
}

#[test]
fn search_matches_brute_force_on_5000_random_instances() {
    let mut rng = Rng::new(2023);
    let mut counts = [0usize; 3]; // solved, infeasible, not found
    let mut interleaving_missed = 0;
    for i in 0..6000 {
        let problem = random_problem(&mut rng, Shape::SMALL);
        let (status, brute) = check(&problem, &Params::default(), &format!("instance {i}"));
        match status {
            Status::Solved => counts[0] += 1,
            Status::Infeasible => counts[1] += 1,
            _ => {
                counts[2] += 1;
                interleaving_missed += usize::from(brute.is_some());
            }
        }
    }
    eprintln!("solved, infeasible, not found: {counts:?}; feasible among not found: {interleaving_missed}");
    // Both outcomes must be well represented for the test to mean anything.
    assert!(
        counts[0] > 1500 && counts[1] > 1500,
        "unbalanced sample: {counts:?}"
    );
    // Interleaving windows are rare; stacking still solves most of them.
    assert!(
        counts[2] < 300,
        "too many unproven answers: {counts:?} ({interleaving_missed} feasible)"
    );
}

#[test]
fn search_without_windows_is_always_decisive() {
    let shape = Shape {
        windows: false,
        ..Shape::SMALL
    };
    let mut rng = Rng::new(7);
    for i in 0..2000 {
        let problem = random_problem(&mut rng, shape);
        let (status, _) = check(&problem, &Params::default(), &format!("instance {i}"));
        assert_ne!(status, Status::NotFound, "instance {i}");
    }
}

/// Each pruning rule, switched off alone, must not change any answer, and
/// neither must a single ordering, the input order or the orderings
/// without their shaken restarts.
#[test]
fn every_rule_is_sound_on_its_own() {
    type Switch = fn(&mut Params);
    let variants: Vec<(&str, Switch)> = vec![
        ("no inference", |p| p.section_inference = false),
        ("no effective floor", |p| p.effective_floor = false),
        ("no monotonic floor", |p| p.monotonic_floor = false),
        ("no dominance", |p| p.dominance = false),
        ("no hatless", |p| p.hatless = false),
        ("no decomposition", |p| p.decomposition = false),
        ("no reordering of parts", |p| p.dynamic_preordering = false),
        ("input order", |p| p.static_preordering = false),
        ("not canonical", |p| p.canonical = false),
        ("one ordering", |p| p.preorders.truncate(1)),
        ("no shaken restarts", |p| p.shaken_restarts = false),
        ("nothing but canonical", |p| {
            *p = Params {
                section_inference: false,
                effective_floor: false,
                monotonic_floor: false,
                dominance: false,
                hatless: false,
                decomposition: false,
                dynamic_preordering: false,
                ..Params::default()
            }
        }),
    ];
    let mut rng = Rng::new(99);
    for i in 0..800 {
        let problem = random_problem(&mut rng, Shape::SMALL);
        for (name, switch) in &variants {
            let mut params = Params::default();
            switch(&mut params);
            check(&problem, &params, &format!("{name}, instance {i}"));
        }
    }
}

/// The default plan (heuristics first, then the exact search) answers as
/// brute force does too.
#[test]
fn default_plan_matches_brute_force() {
    let mut rng = Rng::new(404);
    for i in 0..2000 {
        let problem = random_problem(&mut rng, Shape::SMALL);
        check_with(
            &problem,
            &Options::default(),
            &format!("default plan, instance {i}"),
        );
    }
}
