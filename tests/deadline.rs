//! Timeouts and cancellation stop the search with the right status. How
//! quickly they stop is measured by the benchmark, not asserted here.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use minimalloc::io::csv;
use minimalloc::{plan, Options, Problem, Status};

/// Instance J at its max load: a search that runs for many seconds. (D
/// at its max load was one until fitting took the coarse level, which
/// places D there in milliseconds.)
fn long_search() -> Problem {
    let path = format!(
        "{}/benchmarks/challenging/J.1048576.csv",
        env!("CARGO_MANIFEST_DIR")
    );
    csv::read(&std::fs::read_to_string(path).unwrap(), 989184)
        .unwrap()
        .0
}

#[test]
fn a_set_cancel_flag_stops_before_searching() {
    let options = Options {
        cancel: Some(Arc::new(AtomicBool::new(true))),
        ..Options::default()
    };
    let outcome = plan(&long_search(), &options);
    assert_eq!(outcome.status, Status::Cancelled);
    assert!(outcome.solution.is_none());
}

#[test]
fn another_thread_can_cancel_a_running_search() {
    let flag = Arc::new(AtomicBool::new(false));
    let options = Options {
        cancel: Some(flag.clone()),
        ..Options::default()
    };
    let problem = long_search();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        flag.store(true, Ordering::Relaxed);
    });
    let outcome = plan(&problem, &options);
    canceller.join().unwrap();
    assert_eq!(outcome.status, Status::Cancelled);
    assert!(outcome.stats.nodes > 0, "the search had started");
}

#[test]
fn a_timeout_stops_a_running_search() {
    let options = Options {
        timeout: Some(Duration::from_millis(100)),
        ..Options::default()
    };
    let outcome = plan(&long_search(), &options);
    assert_eq!(outcome.status, Status::TimedOut);
    assert!(outcome.stats.elapsed >= Duration::from_millis(100));
}

#[test]
fn without_a_clock_a_timeout_cannot_fire() {
    // no_std callers supply the clock; with none, only cancellation and
    // node limits stop the search.
    let mut options = Options {
        timeout: Some(Duration::from_nanos(1)),
        clock: None,
        ..Options::default()
    };
    options.solver.node_limit = Some(1000);
    let outcome = plan(&long_search(), &options);
    assert_eq!(outcome.status, Status::NotFound);
}
