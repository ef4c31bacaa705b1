//! The bundled examples and the challenging suite, solved and validated.

use minimalloc::io::csv;
use minimalloc::{plan, validate, Options, Problem, Status};

fn read(path: &str, capacity: i64) -> Problem {
    let full = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"));
    csv::read(&text, capacity).unwrap().0
}

#[test]
fn paper_example_fits_12_and_not_11() {
    let problem = read("benchmarks/examples/paper.12.csv", 12);
    let outcome = plan(&problem, &Options::default());
    assert_eq!(outcome.status, Status::Solved);
    let solution = outcome.solution.unwrap();
    validate(&problem, &solution).unwrap();
    assert_eq!(solution.height(&problem), 12);

    let tight = read("benchmarks/examples/paper.12.csv", 11);
    let outcome = plan(&tight, &Options::default());
    assert_eq!(outcome.status, Status::Infeasible);
    assert!(outcome.solution.is_none());
}

#[test]
fn shared_memory_example_fits_its_max_load() {
    // Six buffers are live at time 5 with 37 bytes in all: 37 is a lower
    // bound, the search reaches it, and 36 is proven infeasible.
    let problem = read("benchmarks/examples/shared-memory.csv", 37);
    assert_eq!(minimalloc::max_load(&problem), 37);
    let outcome = plan(&problem, &Options::default());
    assert_eq!(outcome.status, Status::Solved);
    validate(&problem, outcome.solution.as_ref().unwrap()).unwrap();
    let below = problem.with_capacity(36).unwrap();
    assert_eq!(plan(&below, &Options::default()).status, Status::Infeasible);
}

#[test]
fn challenging_suite_is_solved_at_1048576() {
    for name in "ABCDEFGHIJK".chars() {
        let problem = read(
            &format!("benchmarks/challenging/{name}.1048576.csv"),
            1048576,
        );
        let outcome = plan(&problem, &Options::default());
        assert_eq!(outcome.status, Status::Solved, "instance {name}");
        let solution = outcome.solution.unwrap();
        validate(&problem, &solution).unwrap_or_else(|e| panic!("instance {name}: {e}"));
        assert!(solution.height(&problem) <= 1048576);
    }
}
