//! Colocations and separations against an independent brute force on
//! thousands of small random instances: the exact search and the default
//! plan agree with it on feasibility, every placement passes the
//! validator (which checks the links from their definitions), and the
//! exact search never gives up ("not found") because of colocations.

mod common;

use common::{brute_force_linked, random_problem, Rng, Shape};
use minimalloc::{plan, validate, Method, Objective, Options, Problem, Solution, Status};

/// Random colocations (of buffers without windows) and separations.
fn link_randomly(rng: &mut Rng, problem: &mut Problem) {
    let n = problem.len() as i64;
    if n < 2 {
        return;
    }
    let plain: Vec<usize> = (0..problem.len())
        .filter(|&i| problem.buffers()[i].gaps.iter().all(|g| g.window.is_none()))
        .collect();
    for _ in 0..rng.range(0, 2) {
        if plain.len() >= 2 {
            let k = rng.range(2, 3.min(plain.len() as i64));
            let group: Vec<usize> = (0..k)
                .map(|_| plain[rng.range(0, plain.len() as i64 - 1) as usize])
                .collect();
            // Refused (fixed apart, separated): the problem is unchanged.
            let before = problem.clone();
            if problem.colocate(&group).is_err() {
                assert_eq!(*problem, before);
            }
        }
    }
    for _ in 0..rng.range(0, 2) {
        let k = rng.range(2, 3.min(n));
        let group: Vec<usize> = (0..k).map(|_| rng.range(0, n - 1) as usize).collect();
        let before = problem.clone();
        if problem.separate(&group).is_err() {
            assert_eq!(*problem, before);
        }
    }
}

fn check(problem: &Problem, options: &Options, brute: &Option<Vec<i64>>, what: &str) -> Status {
    let outcome = plan(problem, options);
    let dump = || {
        format!(
            "{}colocations {:?} separations {:?} capacity {}",
            minimalloc::io::csv::write_problem(problem, None),
            problem.colocations(),
            problem.separations(),
            problem.capacity()
        )
    };
    match outcome.status {
        Status::Solved => {
            let s = outcome.solution.as_ref().unwrap();
            if let Err(e) = validate(problem, s) {
                panic!("{what}: invalid {:?}: {e}\n{}", s.offsets, dump());
            }
            assert!(
                brute.is_some(),
                "{what}: solved what brute force cannot\n{}",
                dump()
            );
        }
        Status::Infeasible => assert!(
            brute.is_none(),
            "{what}: infeasible, but brute force places {brute:?}\n{}",
            dump()
        ),
        Status::NotFound => assert!(
            outcome.stats.interleaving > 0,
            "{what}: not found without interleaving windows\n{}",
            dump()
        ),
        s => panic!("{what}: unexpected {s:?}"),
    }
    outcome.status
}

/// Minimising on one thread with two restarts: cheap enough for
/// thousands of instances.
fn quick_minimize() -> Options {
    Options {
        objective: Objective::Minimize,
        threads: 1,
        restarts: Some(2),
        ..Options::default()
    }
}

/// [`check`] with the exact search alone, then with the default plan on
/// one thread; the exact search's status.
fn check_exact_and_auto(problem: &Problem, brute: &Option<Vec<i64>>, i: usize) -> Status {
    let exact = Options {
        method: Method::Exact,
        ..Options::default()
    };
    let status = check(problem, &exact, brute, &format!("exact {i}"));
    let auto = Options {
        threads: 1,
        ..Options::default()
    };
    check(problem, &auto, brute, &format!("auto {i}"));
    status
}

#[test]
fn links_match_brute_force_on_6000_random_instances() {
    let mut rng = Rng::new(11);
    let (mut linked, mut solved, mut infeasible) = (0, 0, 0);
    let mut i = 0;
    while linked < 6000 {
        i += 1;
        let mut problem = random_problem(&mut rng, Shape::SMALL);
        link_randomly(&mut rng, &mut problem);
        if problem.colocations().is_empty() && problem.separations().is_empty() {
            continue;
        }
        linked += 1;
        let brute = brute_force_linked(&problem);
        // Every brute-force placement is one the validator accepts.
        if let Some(offsets) = &brute {
            validate(
                &problem,
                &Solution {
                    offsets: offsets.clone(),
                },
            )
            .unwrap();
        }
        match check_exact_and_auto(&problem, &brute, i) {
            Status::Solved => solved += 1,
            Status::Infeasible => infeasible += 1,
            _ => {}
        }
        // Minimising: valid, and never below what brute force allows.
        let minimize = quick_minimize();
        let outcome = plan(&problem, &minimize);
        if let Some(s) = &outcome.solution {
            validate(&problem, s).unwrap_or_else(|e| panic!("minimise {i}: {e}"));
            assert!(s.height(&problem) >= outcome.lower_bound);
        }
    }
    eprintln!("{linked} linked instances: {solved} solved, {infeasible} infeasible");
    assert!(
        solved > 500 && infeasible > 500,
        "{solved} solved, {infeasible} infeasible"
    );
}

#[test]
fn colocated_buffers_share_an_offset_and_alias() {
    // Two buffers that alias (an in-place update) and a third alive with
    // both: colocating the first two frees a slot.
    let mut p = Problem::new(
        8,
        vec![
            minimalloc::Buffer::new("x", 0, 4, 4),
            minimalloc::Buffer::new("x2", 2, 6, 4),
            minimalloc::Buffer::new("y", 0, 6, 4),
        ],
    )
    .unwrap();
    assert_eq!(plan(&p, &Options::default()).status, Status::Infeasible);
    p.colocate(&[0, 1]).unwrap();
    let outcome = plan(&p, &Options::default());
    let s = outcome.solution.expect("fits once x and x2 alias");
    assert_eq!(s.offsets[0], s.offsets[1]);
    validate(&p, &s).unwrap();
    // The validator catches a split group and separated buffers that meet.
    let split = Solution {
        offsets: vec![0, 4, 4],
    };
    assert!(validate(&p, &split)
        .unwrap_err()
        .to_string()
        .contains("colocated"));
    let mut q = Problem::new(
        8,
        vec![
            minimalloc::Buffer::new("a", 0, 2, 4),
            minimalloc::Buffer::new("b", 5, 9, 4),
        ],
    )
    .unwrap();
    validate(
        &q,
        &Solution {
            offsets: vec![0, 0],
        },
    )
    .unwrap();
    q.separate(&[0, 1]).unwrap();
    assert!(validate(
        &q,
        &Solution {
            offsets: vec![0, 2]
        }
    )
    .unwrap_err()
    .to_string()
    .contains("separated"));
    let s = plan(&q, &Options::default()).solution.unwrap();
    validate(&q, &s).unwrap();
    assert_eq!(minimalloc::max_load(&q), 8);
}

#[test]
fn links_that_cannot_hold_are_refused() {
    let mut p = Problem::new(
        16,
        vec![
            minimalloc::Buffer::new("a", 0, 2, 4).with_offset(0),
            minimalloc::Buffer::new("b", 1, 3, 4).with_offset(4),
            minimalloc::Buffer::new("c", 1, 3, 4),
        ],
    )
    .unwrap();
    let e = p.colocate(&[0, 1]).unwrap_err().to_string();
    assert_eq!(
        e,
        "buffer 0 (id \"a\") and buffer 1 (id \"b\"): colocated but fixed at different offsets, 0 and 4"
    );
    p.separate(&[0, 2]).unwrap();
    let e = p.colocate(&[2, 0]).unwrap_err().to_string();
    assert!(e.contains("cannot be both colocated and separated"), "{e}");
    p.colocate(&[1, 2]).unwrap();
    let e = p.separate(&[2, 1]).unwrap_err().to_string();
    assert!(e.contains("cannot be both colocated and separated"), "{e}");
    assert!(p
        .colocate(&[0, 9])
        .unwrap_err()
        .to_string()
        .contains("does not exist"));
    // A member fixed later must agree with its group.
    let mut moved = p.buffers()[2].clone();
    moved.offset = Some(8);
    let e = p.replace(2, moved).unwrap_err().to_string();
    assert!(e.contains("fixed at different offsets, 4 and 8"), "{e}");
}

#[test]
fn separations_after_the_last_moment_of_64_bits_are_refused() {
    // Separations are planned in moments after every lifetime: a lifetime
    // ending in the last moments of 64 bits is refused with them, whichever
    // comes first, and the refusal changes nothing.
    let late = minimalloc::Buffer::new("z", 1, i64::MAX - 1, 4);
    let two = vec![
        minimalloc::Buffer::new("a", 0, 2, 4),
        minimalloc::Buffer::new("b", 3, 4, 4),
    ];
    let mut p = Problem::new(16, two.clone()).unwrap();
    p.separate(&[0, 1]).unwrap();
    let e = p.push(late.clone()).unwrap_err().to_string();
    assert!(
        e.contains("buffer 2 (id \"z\")") && e.contains("too late to leave time for separations"),
        "{e}"
    );
    let e = p.replace(1, late.clone()).unwrap_err().to_string();
    assert!(e.contains("buffer 1 (id \"z\")"), "{e}");
    assert_eq!(p.len(), 2);
    let mut q = Problem::new(16, [two, vec![late]].concat()).unwrap();
    let e = q.separate(&[0, 1]).unwrap_err().to_string();
    assert!(e.contains("buffer 2 (id \"z\")"), "{e}");
    assert!(q.separations().is_empty());
    // The separation that was accepted is planned.
    let out = plan(&p, &Options::default());
    let s = out.solution.expect("placed");
    validate(&p, &s).unwrap();
}

/// The sub-problem of `problem` with only buffers `keep` (links dropped).
fn subset(problem: &Problem, keep: &[usize]) -> Problem {
    let buffers = keep.iter().map(|&i| problem.buffers()[i].clone()).collect();
    Problem::new(problem.capacity(), buffers).unwrap()
}

#[test]
fn conflicts_cannot_fit_and_irreducible_ones_are_minimal() {
    let mut rng = Rng::new(77);
    let (mut checked, mut by_search, mut irreducible) = (0, 0, 0);
    for i in 0..20000 {
        if checked >= 1500 {
            break;
        }
        let problem = random_problem(&mut rng, Shape::SMALL);
        let outcome = plan(&problem, &Options::default());
        if outcome.status != Status::Infeasible {
            assert!(outcome.conflict.is_none());
            continue;
        }
        checked += 1;
        let c = outcome.conflict.expect("an infeasible fit explains itself");
        assert!(!c.buffers.is_empty() && c.buffers.windows(2).all(|w| w[0] < w[1]));
        let dump = || minimalloc::io::csv::write_problem(&problem, None);
        // The conflict alone cannot fit.
        assert!(
            common::brute_force(&subset(&problem, &c.buffers)).is_none(),
            "instance {i}: conflict {:?} fits\n{}",
            c.buffers,
            dump()
        );
        if minimalloc::max_load(&subset(&problem, &c.buffers)) <= problem.capacity() {
            by_search += 1;
        }
        if c.irreducible {
            irreducible += 1;
            for drop in 0..c.buffers.len() {
                let mut rest = c.buffers.clone();
                rest.remove(drop);
                assert!(
                    common::brute_force(&subset(&problem, &rest)).is_some(),
                    "instance {i}: conflict {:?} is not minimal without {}\n{}",
                    c.buffers,
                    c.buffers[drop],
                    dump()
                );
            }
        }
    }
    eprintln!("{checked} conflicts, {by_search} found by the search, {irreducible} irreducible");
    assert!(checked >= 1500 && by_search >= 50 && irreducible * 10 >= checked * 9);
}

#[test]
fn the_paper_example_at_11_names_its_conflict() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benchmarks/examples/paper.12.csv"
    ))
    .unwrap();
    let (problem, _) = minimalloc::io::csv::read(&text, 11).unwrap();
    let outcome = plan(&problem, &Options::default());
    assert_eq!(outcome.status, Status::Infeasible);
    let c = outcome.conflict.unwrap();
    let ids: Vec<&str> = c
        .buffers
        .iter()
        .map(|&i| problem.buffers()[i].id.as_str())
        .collect();
    assert_eq!(ids, ["b1", "b3", "b5"]);
    assert!(c.irreducible);
    // With colocations, the conflict names every member of a group in it.
    let mut linked = problem.clone();
    linked.colocate(&[0, 1]).unwrap();
    let c = plan(&linked, &Options::default()).conflict.unwrap();
    assert!(
        c.buffers.contains(&0) == c.buffers.contains(&1),
        "{:?}",
        c.buffers
    );
}

/// The lowest height brute force finds for a linked problem, scanning
/// capacities up from 1 to the problem's own (hints dropped: they never
/// change feasibility, but one above a capacity makes it invalid).
fn lowest_linked_height(problem: &Problem) -> Option<i64> {
    let mut unhinted = problem.clone();
    for i in 0..problem.len() {
        let mut b = problem.buffers()[i].clone();
        b.hint = None;
        unhinted.replace(i, b).unwrap();
    }
    (1..=problem.capacity()).find(|&c| {
        unhinted
            .with_capacity(c)
            .is_ok_and(|p| brute_force_linked(&p).is_some())
    })
}

/// A small random problem of three buffers or more with dense
/// separations (several groups of up to four) and random links.
fn densely_separated(rng: &mut Rng) -> Option<Problem> {
    let mut problem = random_problem(rng, Shape::SMALL);
    let n = problem.len() as i64;
    if n < 3 {
        return None;
    }
    for _ in 0..rng.range(1, 4) {
        let k = rng.range(2, 4.min(n));
        let group: Vec<usize> = (0..k).map(|_| rng.range(0, n - 1) as usize).collect();
        let _ = problem.separate(&group);
    }
    link_randomly(rng, &mut problem);
    Some(problem)
}

/// On 5,000 instances: the minimiser's lower bound (the max load, and
/// with separations the heaviest clique of buffers that conflict) never
/// exceeds the lowest height brute force finds; where it meets the
/// minimiser's height, that height is brute force's. Dense separations,
/// colocations and gaps.
#[test]
fn the_conflict_bound_is_sound_against_brute_force() {
    let mut rng = Rng::new(29);
    let (mut checked, mut proven, mut above_load) = (0, 0, 0);
    let mut i = 0;
    while checked < 5000 {
        i += 1;
        let Some(problem) = densely_separated(&mut rng) else {
            continue;
        };
        if problem.separations().is_empty() {
            continue;
        }
        let Some(lowest) = lowest_linked_height(&problem) else {
            continue;
        };
        checked += 1;
        let options = quick_minimize();
        let outcome = plan(&problem, &options);
        assert!(
            outcome.lower_bound <= lowest,
            "instance {i}: bound {} above the lowest height {lowest}\n{}separations {:?} colocations {:?}",
            outcome.lower_bound,
            minimalloc::io::csv::write_problem(&problem, None),
            problem.separations(),
            problem.colocations()
        );
        // Within a capacity at the optimum, two restarts may place
        // nothing; the exact search then gives up only for interleaving
        // windows (as in `check`).
        let Some(s) = outcome.solution.as_ref() else {
            assert!(
                outcome.status == Status::NotFound && outcome.stats.interleaving > 0,
                "instance {i}: minimising placed nothing ({:?}), brute force {lowest}\n{}",
                outcome.status,
                minimalloc::io::csv::write_problem(&problem, None),
            );
            continue;
        };
        validate(&problem, s).unwrap();
        if outcome.optimal {
            assert_eq!(s.height(&problem), lowest, "instance {i}");
            proven += 1;
        }
        above_load += usize::from(outcome.lower_bound > minimalloc::max_load(&problem));
    }
    eprintln!("{checked} checked, {proven} proven optimal, {above_load} bounds above the max load");
    assert!(above_load > 50, "{above_load}");
}

/// Separations declared pair by pair, densely (each pair separated with
/// even odds), beside colocations and other groups: lowering shares
/// moments among such pairs (a cover by sets that must lie apart anyway),
/// and feasibility still agrees with brute force on 5,000 instances;
/// on every fourth, a height the minimiser proves is the lowest brute
/// force finds, and its bound is never above it.
#[test]
fn dense_pairwise_separations_match_brute_force() {
    let mut rng = Rng::new(41);
    let (mut checked, mut solved, mut infeasible, mut proven) = (0, 0, 0, 0);
    let mut i = 0;
    while checked < 5000 {
        i += 1;
        let mut problem = random_problem(&mut rng, Shape::SMALL);
        let n = problem.len();
        for a in 0..n {
            for b in a + 1..n {
                if rng.range(0, 1) == 1 {
                    let _ = problem.separate(&[a, b]);
                }
            }
        }
        link_randomly(&mut rng, &mut problem);
        if problem.separations().len() < 2 {
            continue;
        }
        checked += 1;
        let brute = brute_force_linked(&problem);
        match check_exact_and_auto(&problem, &brute, i) {
            Status::Solved => solved += 1,
            Status::Infeasible => infeasible += 1,
            _ => {}
        }
        if checked % 4 != 0 {
            continue;
        }
        let Some(lowest) = lowest_linked_height(&problem) else {
            continue;
        };
        let minimize = quick_minimize();
        let outcome = plan(&problem, &minimize);
        assert!(outcome.lower_bound <= lowest, "instance {i}");
        let Some(s) = outcome.solution.as_ref() else {
            assert!(outcome.status == Status::NotFound && outcome.stats.interleaving > 0);
            continue;
        };
        validate(&problem, s).unwrap();
        if outcome.optimal {
            assert_eq!(s.height(&problem), lowest, "instance {i}");
            proven += 1;
        }
    }
    eprintln!("{checked} checked: {solved} solved, {infeasible} infeasible, {proven} proven");
    assert!(solved > 500 && infeasible > 500 && proven > 150);
}

/// A problem with every size, alignment, fixed offset, hint and window
/// `k` times larger: its placements are the original's scaled (offsets
/// too), so its lowest height is `k` times the original's.
fn scaled(problem: &Problem, k: i64) -> Problem {
    let buffers = problem
        .buffers()
        .iter()
        .map(|b| {
            let mut b = b.clone();
            b.size *= k;
            b.alignment *= k;
            b.offset = b.offset.map(|o| o * k);
            b.hint = b.hint.map(|h| h * k);
            for g in &mut b.gaps {
                if let Some(w) = &mut g.window {
                    (w.lower, w.upper) = (w.lower * k, w.upper * k);
                }
            }
            b
        })
        .collect();
    let mut out = Problem::new(problem.capacity() * k, buffers).unwrap();
    let members = |g: &[u32]| g.iter().map(|&m| m as usize).collect::<Vec<_>>();
    for g in problem.separations() {
        out.separate(&members(g)).unwrap();
    }
    for g in problem.colocations() {
        out.colocate(&members(g)).unwrap();
    }
    out
}

/// Heights are multiples of the sizes' and alignments' common divisor,
/// and the minimiser rounds its proven bounds up to it: on 2,000 problems
/// scaled by 2-8 (dense separations, colocations, gaps, fixed buffers),
/// the bound never passes `k` times the original's brute-force optimum,
/// and a height marked optimal is that.
#[test]
fn bounds_rounded_to_the_height_grain_stay_below_the_optimum() {
    let mut rng = Rng::new(47);
    let (mut checked, mut proven) = (0, 0);
    let mut i = 0;
    while checked < 2000 {
        i += 1;
        let Some(problem) = densely_separated(&mut rng) else {
            continue;
        };
        let Some(lowest) = lowest_linked_height(&problem) else {
            continue;
        };
        checked += 1;
        let k = rng.range(2, 8);
        let big = scaled(&problem, k);
        let outcome = plan(&big, &quick_minimize());
        assert!(
            outcome.lower_bound <= k * lowest,
            "instance {i}: bound {} above {k} x {lowest}\n{}",
            outcome.lower_bound,
            minimalloc::io::csv::write_problem(&big, None),
        );
        if let Some(s) = outcome.solution.as_ref() {
            validate(&big, s).unwrap();
            if outcome.optimal {
                assert_eq!(s.height(&big), k * lowest, "instance {i}");
                proven += 1;
            }
        }
    }
    eprintln!("{checked} checked, {proven} proven optimal");
    assert!(proven > 1000, "{proven}");
}
