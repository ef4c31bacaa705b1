//! Reuse penalties: declaring them (refused, changing nothing, when they
//! cannot hold), what a placement pays, and the penalty objective against
//! an independent brute force that enumerates every placement.

mod common;

use common::{least_penalty, random_problem, Rng, Shape};
use minimalloc::Strategy;
use minimalloc::{plan, validate, Buffer, Method, Objective, Options, Problem, Solution, Status};

/// Random colocations, separations and penalised pairs on `problem`.
fn link_and_penalize(rng: &mut Rng, problem: &mut Problem, pairs: i64) {
    let n = problem.len() as i64;
    if n < 2 {
        return;
    }
    let plain: Vec<usize> = (0..problem.len())
        .filter(|&i| problem.buffers()[i].gaps.iter().all(|g| g.window.is_none()))
        .collect();
    if plain.len() >= 2 && rng.chance(30) {
        let a = plain[rng.range(0, plain.len() as i64 - 1) as usize];
        let b = plain[rng.range(0, plain.len() as i64 - 1) as usize];
        let _ = problem.colocate(&[a, b]);
    }
    if rng.chance(40) {
        let a = rng.range(0, n - 1) as usize;
        let b = rng.range(0, n - 1) as usize;
        let _ = problem.separate(&[a, b]);
    }
    for _ in 0..rng.range(1, pairs) {
        let a = rng.range(0, n - 1) as usize;
        let b = rng.range(0, n - 1) as usize;
        let before = problem.clone();
        match problem.penalize(a, b, rng.range(0, 9)) {
            Ok(()) => {}
            Err(_) => {
                assert_eq!(a, b, "only a pair with itself is refused here");
                assert_eq!(*problem, before);
            }
        }
    }
}

/// What a placement pays, from the definition.
fn paid(problem: &Problem, offsets: &[i64]) -> i64 {
    let b = problem.buffers();
    problem
        .penalties()
        .filter(|&(x, y, _)| {
            offsets[x] < offsets[y] + b[y].size && offsets[y] < offsets[x] + b[x].size
        })
        .map(|(_, _, c)| c)
        .sum()
}

fn penalty_options() -> Options {
    Options {
        objective: Objective::Penalty,
        threads: 1,
        ..Options::default()
    }
}

/// On 20,000 tiny instances with colocations, separations, gaps, windows,
/// fixed offsets and up to 8 penalised pairs: the penalty objective places
/// exactly when something fits (or says it could not tell, only where
/// windows interleave), every placement is valid, the cost it reports is
/// what the placement pays, its bound never passes brute force's least
/// cost, and a cost it calls optimal is brute force's.
#[test]
fn the_least_penalty_matches_brute_force() {
    let shape = Shape {
        max_buffers: 6,
        max_capacity: 12,
        ..Shape::SMALL
    };
    let mut rng = Rng::new(0x9e4a1);
    let (mut proven, mut placed, mut costly) = (0, 0, 0);
    for i in 0..20_000 {
        let mut problem = random_problem(&mut rng, shape);
        link_and_penalize(&mut rng, &mut problem, 8);
        let brute = least_penalty(&problem);
        let outcome = plan(&problem, &penalty_options());
        let dump = || {
            format!(
                "instance {i}\n{}colocations {:?} separations {:?} penalties {:?} capacity {}",
                minimalloc::io::csv::write_problem(&problem, None),
                problem.colocations(),
                problem.separations(),
                problem.penalties().collect::<Vec<_>>(),
                problem.capacity()
            )
        };
        match outcome.status {
            Status::Solved => {
                let s = outcome.solution.as_ref().unwrap();
                if let Err(e) = validate(&problem, s) {
                    panic!("invalid {:?}: {e}\n{}", s.offsets, dump());
                }
                let least = brute.unwrap_or_else(|| panic!("placed the impossible\n{}", dump()));
                let report = outcome.penalty.expect("the penalty objective reports");
                assert_eq!(report.cost, paid(&problem, &s.offsets), "{}", dump());
                assert_eq!(report.cost, s.penalty(&problem), "{}", dump());
                assert!(report.cost >= least, "{}", dump());
                assert!(
                    report.lower_bound <= least,
                    "bound {} > {least}\n{}",
                    report.lower_bound,
                    dump()
                );
                assert_eq!(outcome.optimal, report.lower_bound >= report.cost);
                if outcome.optimal {
                    assert_eq!(report.cost, least, "{}", dump());
                    proven += 1;
                }
                placed += 1;
                costly += usize::from(least > 0);
            }
            Status::Infeasible => assert!(
                brute.is_none(),
                "infeasible, but brute force places\n{}",
                dump()
            ),
            Status::NotFound => assert!(outcome.stats.interleaving > 0, "{}", dump()),
            s => panic!("unexpected {s:?}\n{}", dump()),
        }
    }
    // Only interleaving windows keep the exact search from its proofs.
    println!("placed {placed}, proven {proven}, {costly} had to pay");
    assert!(
        placed >= 6000 && costly >= 1000,
        "placed {placed}, {costly} had to pay"
    );
    assert!(proven * 10 >= placed * 9, "proven {proven} of {placed}");
}

/// Denser: up to 9 buffers without gaps, 20 penalised pairs, a capacity
/// near the max load (so that sharing is forced); every answer proven.
#[test]
fn forced_sharing_is_priced_exactly() {
    let shape = Shape {
        max_buffers: 7,
        max_capacity: 10,
        gaps: false,
        windows: false,
        ..Shape::SMALL
    };
    let mut rng = Rng::new(77);
    let mut costly = 0;
    for i in 0..600 {
        let mut problem = random_problem(&mut rng, shape);
        link_and_penalize(&mut rng, &mut problem, 20);
        let brute = least_penalty(&problem);
        let outcome = plan(&problem, &penalty_options());
        match (outcome.status, brute) {
            (Status::Solved, Some(least)) => {
                let s = outcome.solution.as_ref().unwrap();
                validate(&problem, s).unwrap();
                let report = outcome.penalty.unwrap();
                assert!(outcome.optimal, "instance {i} not proven");
                assert_eq!(report.cost, least, "instance {i}");
                costly += usize::from(least > 0);
            }
            (Status::Infeasible, None) => {}
            (status, brute) => panic!("instance {i}: {status:?} against {brute:?}"),
        }
    }
    assert!(costly > 50, "only {costly} instances had to pay");
}

/// The penalty objective never pays more than first-fit's own placement
/// (its plain order, fitted) on kernels of 20-120 buffers with penalised
/// pairs, one thread, a short timeout.
#[test]
fn never_above_first_fit() {
    use minimalloc::gen::{kernel_problem, Family, Spec};
    let mut rng = Rng::new(5);
    let (mut compared, mut lower) = (0, 0);
    for seed in 0..24u64 {
        let n = rng.range(20, 120) as usize;
        let spec = Spec::new(n, seed).with_family(Family::Kernel);
        let problem = kernel_problem(spec, 0.1).unwrap();
        let capacity = minimalloc::max_load(&problem) * 11 / 10;
        let mut problem = problem.with_capacity(capacity).unwrap();
        for _ in 0..3 * n {
            let (a, b) = (
                rng.range(0, n as i64 - 1) as usize,
                rng.range(0, n as i64 - 1) as usize,
            );
            if a != b {
                problem.penalize(a, b, rng.range(1, 100)).unwrap();
            }
        }
        let first_fit = plan(
            &problem,
            &Options {
                method: Method::Heuristic(Strategy::FirstFit),
                restarts: Some(0),
                threads: 1,
                ..Options::default()
            },
        );
        let options = Options {
            timeout: Some(std::time::Duration::from_millis(200)),
            ..penalty_options()
        };
        let outcome = plan(&problem, &options);
        let Some(ff) = first_fit.solution else {
            continue;
        };
        compared += 1;
        let s = outcome
            .solution
            .expect("first-fit fits, so the objective places");
        validate(&problem, &s).unwrap();
        let report = outcome.penalty.unwrap();
        assert!(
            report.cost <= ff.penalty(&problem),
            "seed {seed}: {} above first-fit's {}",
            report.cost,
            ff.penalty(&problem)
        );
        assert!(report.lower_bound <= report.cost);
        lower += usize::from(report.cost < ff.penalty(&problem));
    }
    assert!(
        compared >= 12 && lower >= compared / 2,
        "{lower} of {compared} lower"
    );
}

#[test]
fn penalties_that_cannot_hold_are_refused() {
    let buffers = vec![Buffer::new("a", 0, 2, 4), Buffer::new("b", 2, 4, 4)];
    let mut problem = Problem::new(8, buffers).unwrap();
    let before = problem.clone();
    let self_pair = problem.penalize(1, 1, 3).unwrap_err().to_string();
    assert!(self_pair.contains("two different buffers"), "{self_pair}");
    let negative = problem.penalize(0, 1, -1).unwrap_err().to_string();
    assert!(
        negative.contains("must not be negative, got -1"),
        "{negative}"
    );
    assert!(
        negative.contains("buffer 0 (id \"a\") and buffer 1 (id \"b\")"),
        "{negative}"
    );
    let missing = problem.penalize(0, 2, 1).unwrap_err().to_string();
    assert!(missing.contains("buffer 2 does not exist"), "{missing}");
    assert_eq!(problem, before);
    problem.penalize(1, 0, i64::MAX - 1).unwrap();
    let before = problem.clone();
    let overflow = problem.penalize(0, 1, 2).unwrap_err().to_string();
    assert!(overflow.contains("past 2^63-1"), "{overflow}");
    assert_eq!(problem, before);
    // The same pair again adds up; listed once, lower index first.
    problem.penalize(0, 1, 1).unwrap();
    assert_eq!(
        problem.penalties().collect::<Vec<_>>(),
        vec![(0, 1, i64::MAX)]
    );
}

/// Two buffers one after the other, penalised: with room for both apart
/// the plan pays nothing; with room for one only, it pays the cost, and
/// proves it; the other objectives ignore penalties.
#[test]
fn room_decides_what_is_paid() {
    let buffers = vec![Buffer::new("a", 0, 2, 4), Buffer::new("b", 2, 4, 4)];
    for (capacity, cost) in [(8, 0), (4, 5), (6, 5)] {
        let mut problem = Problem::new(capacity, buffers.clone()).unwrap();
        problem.penalize(0, 1, 5).unwrap();
        let outcome = plan(&problem, &penalty_options());
        let s: Solution = outcome.solution.clone().unwrap();
        validate(&problem, &s).unwrap();
        let report = outcome.penalty.unwrap();
        assert_eq!(
            (report.cost, report.lower_bound),
            (cost, cost),
            "capacity {capacity}"
        );
        assert!(outcome.optimal);
        let fit = plan(&problem, &Options::default());
        assert!(fit.penalty.is_none());
    }
}
