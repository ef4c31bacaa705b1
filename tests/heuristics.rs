//! Heuristics: every placement validated.

mod common;

use common::{random_problem, Rng, Shape};
use minimalloc::heuristic::{run, Strategy};
use minimalloc::solution::validate_below;
use minimalloc::{csv, max_load, validate, Problem};

fn challenging(name: char) -> Problem {
    let path = format!(
        "{}/benchmarks/challenging/{name}.1048576.csv",
        env!("CARGO_MANIFEST_DIR")
    );
    csv::read(&std::fs::read_to_string(path).unwrap(), 1048576)
        .unwrap()
        .0
}

#[test]
fn every_heuristic_places_the_challenging_suite_validly() {
    for name in "ABCDEFGHIJK".chars() {
        let problem = challenging(name);
        let load = max_load(&problem);
        for strategy in Strategy::ALL {
            let s = run(&problem, strategy).unwrap();
            validate_below(&problem, &s, i64::MAX)
                .unwrap_or_else(|e| panic!("{name} {strategy}: {e}"));
            assert!(
                s.height(&problem) >= load,
                "{name} {strategy} is below the max load"
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
        for strategy in Strategy::ALL {
            // None only when fixed buffers clash, which validation confirms.
            match run(&problem, strategy) {
                Some(s) => {
                    validate_below(&problem, &s, i64::MAX)
                        .unwrap_or_else(|e| panic!("instance {i}, {strategy}: {e}\n{problem:?}"));
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
