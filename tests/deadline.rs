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

/// Stopped before any work (a cancel flag set beforehand), every objective
/// and method, with and without links and pools, reports at least the max
/// load as its lower bound (the promise of every outcome), never 0.
#[test]
fn an_early_stop_still_bounds_by_the_max_load() {
    use minimalloc::model::pools::Pool;
    use minimalloc::{max_load, Buffer, Method, Objective};
    let plain = || {
        let buffers = (0..200)
            .map(|i| Buffer::new(format!("b{i}"), i % 50, i % 50 + 1 + i % 7, 8 + i % 13))
            .collect();
        Problem::new(i64::MAX, buffers).unwrap()
    };
    let mut linked = plain();
    linked.colocate(&[0, 1]).unwrap();
    linked.separate(&[2, 3, 4]).unwrap();
    let mut pooled = plain();
    pooled.add_pool(Pool::new("a", 1 << 20)).unwrap();
    let cancelled = Arc::new(AtomicBool::new(true));
    for (name, problem) in [("plain", plain()), ("linked", linked), ("pooled", pooled)] {
        let load = max_load(&problem);
        assert!(load > 0);
        for objective in [Objective::Fit, Objective::Minimize] {
            for method in [Method::Auto, Method::Exact] {
                let options = Options {
                    objective,
                    method,
                    cancel: Some(cancelled.clone()),
                    ..Options::default()
                };
                let outcome = plan(&problem, &options);
                // (A pool's share may be placed before the flag is read.)
                assert!(
                    outcome.status == Status::Cancelled || outcome.solution.is_some(),
                    "{name} {objective:?} {method:?}: {:?}",
                    outcome.status
                );
                assert!(
                    outcome.lower_bound >= load,
                    "{name} {objective:?} {method:?}: lower bound {} under the max load {load}",
                    outcome.lower_bound
                );
            }
        }
    }
}

/// Minimising a large problem with a timeout, the online strategy's plain
/// order is placed before the layout and reported at once: a plan
/// cancelled at that first report (as a deadline or a busy machine would
/// stop it during the layout) returns that placement, not the stacked one.
#[test]
fn a_plan_stopped_at_its_first_report_returns_that_placement() {
    use minimalloc::gen::{generate, Family, Spec};
    use minimalloc::heuristic::{run, Strategy};
    use minimalloc::{validate, Objective, Progress, Source};
    use std::sync::Mutex;

    let mut spec = Spec::new(100_000, 1);
    spec.family = Family::Issued;
    let problem = Problem::new(i64::MAX, generate(spec)).unwrap();
    let flag = Arc::new(AtomicBool::new(false));
    let first: Arc<Mutex<Option<i64>>> = Arc::new(Mutex::new(None));
    let progress = {
        let (flag, first) = (flag.clone(), first.clone());
        Progress(Arc::new(move |r: &minimalloc::Report| {
            let mut first = first.lock().unwrap();
            if first.is_none() {
                *first = r.height;
                flag.store(true, Ordering::Relaxed);
            }
        }))
    };
    let options = Options {
        objective: Objective::Minimize,
        timeout: Some(Duration::from_secs(600)),
        cancel: Some(flag),
        progress: Some(progress),
        ..Options::default()
    };
    let outcome = plan(&problem, &options);
    assert_eq!(outcome.status, Status::Solved);
    assert_eq!(outcome.stopped, Some(minimalloc::Stop::Cancelled));
    let solution = outcome.solution.expect("a placement");
    validate(&problem, &solution).unwrap();
    let online = run(&problem, Strategy::Online).unwrap();
    assert_eq!(solution.height(&problem), online.height(&problem));
    assert_eq!(*first.lock().unwrap(), Some(online.height(&problem)));
    assert_eq!(outcome.source, Some(Source::Heuristic(Strategy::Online, 0)));
}
