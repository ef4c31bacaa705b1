//! Pools against an independent brute force on thousands of small random
//! instances with pools, colocations and separations: the planner agrees
//! on feasibility, and every placement passes `validate_pooled`.

mod common;

use common::{conflict, random_problem, Rng, Shape};
use minimalloc::model::pools::Pool;
use minimalloc::{plan, validate_pooled, Objective, Options, Problem, Solution, Status};

/// Whether buffers `a` and `b` are in one group of `groups`.
fn together(groups: &[Vec<u32>], a: usize, b: usize) -> bool {
    groups
        .iter()
        .any(|g| g.contains(&(a as u32)) && g.contains(&(b as u32)))
}

/// Every (pool, offset) a buffer may take, from the definitions: a listed
/// pool (a fixed buffer: its first, at its offset), aligned to the
/// buffer's and the pool's alignment, below the pool's capacity.
fn domain(problem: &Problem, i: usize) -> Vec<(u32, i64)> {
    let b = &problem.buffers()[i];
    let mut out = Vec::new();
    let listed = problem.pools_of(i);
    let pools: &[u32] = if b.offset.is_some() {
        &listed[..listed.len().min(1)]
    } else {
        &listed
    };
    for &p in pools {
        let pool = &problem.pools()[p as usize];
        for o in 0..=(pool.capacity - b.size) {
            if o % b.alignment == 0 && o % pool.alignment == 0 && b.offset.is_none_or(|f| f == o) {
                out.push((p, o));
            }
        }
    }
    out
}

/// Backtracking over every buffer's (pool, offset): a placement if any.
fn brute_force(problem: &Problem) -> Option<Vec<(u32, i64)>> {
    let n = problem.len();
    let domains: Vec<Vec<(u32, i64)>> = (0..n).map(|i| domain(problem, i)).collect();
    let bs = problem.buffers();
    let ok = |i: usize, (pi, oi): (u32, i64), j: usize, (pj, oj): (u32, i64)| {
        if together(problem.colocations(), i, j) {
            pi == pj && oi == oj
        } else if pi != pj {
            true
        } else if together(problem.separations(), i, j) {
            oi + bs[i].size <= oj || oj + bs[j].size <= oi
        } else {
            !conflict(&bs[i], oi, &bs[j], oj)
        }
    };
    let mut chosen: Vec<(u32, i64)> = Vec::with_capacity(n);
    fn go(
        k: usize,
        domains: &[Vec<(u32, i64)>],
        chosen: &mut Vec<(u32, i64)>,
        ok: &dyn Fn(usize, (u32, i64), usize, (u32, i64)) -> bool,
    ) -> bool {
        if k == domains.len() {
            return true;
        }
        for &v in &domains[k] {
            if (0..k).all(|j| ok(j, chosen[j], k, v)) {
                chosen.push(v);
                if go(k + 1, domains, chosen, ok) {
                    return true;
                }
                chosen.pop();
            }
        }
        false
    }
    go(0, &domains, &mut chosen, &ok).then_some(chosen)
}

/// A random small problem with 1-3 pools, buffers listing some of them,
/// and perhaps colocations and separations.
fn random_pooled(rng: &mut Rng) -> Problem {
    let shape = Shape {
        max_buffers: 6,
        max_capacity: 12,
        ..Shape::SMALL
    };
    let mut p = random_problem(rng, shape);
    let pools = rng.range(1, 3);
    for k in 0..pools {
        let alignment = if rng.chance(25) { 2 } else { 1 };
        let pool = Pool {
            name: format!("p{k}"),
            capacity: rng.range(2, 12),
            base: rng.range(0, 3) * 64,
            alignment,
        };
        p.add_pool(pool).unwrap();
    }
    for i in 0..p.len() {
        if rng.chance(70) {
            let mut list: Vec<usize> = (0..pools as usize).collect();
            // A random order of a random non-empty part.
            for a in (1..list.len()).rev() {
                list.swap(a, rng.range(0, a as i64) as usize);
            }
            list.truncate(rng.range(1, pools) as usize);
            p.set_pools(i, &list).unwrap();
        }
    }
    let n = p.len() as i64;
    if n >= 2 && rng.chance(40) {
        let plain: Vec<usize> = (0..p.len())
            .filter(|&i| p.buffers()[i].gaps.iter().all(|g| g.window.is_none()))
            .collect();
        if plain.len() >= 2 {
            let a = plain[rng.range(0, plain.len() as i64 - 1) as usize];
            let b = plain[rng.range(0, plain.len() as i64 - 1) as usize];
            let _ = p.colocate(&[a, b]);
        }
    }
    if n >= 2 && rng.chance(40) {
        let _ = p.separate(&[rng.range(0, n - 1) as usize, rng.range(0, n - 1) as usize]);
    }
    p
}

#[test]
fn pools_match_brute_force_on_5000_random_instances() {
    let mut rng = Rng::new(5);
    let (mut solved, mut infeasible, mut not_found) = (0, 0, 0);
    for i in 0..5000 {
        let problem = random_pooled(&mut rng);
        let brute = brute_force(&problem);
        if let Some(placement) = &brute {
            let pool_of: Vec<u32> = placement.iter().map(|v| v.0).collect();
            let offsets = placement
                .iter()
                .map(|&(p, o)| problem.pools()[p as usize].base + o)
                .collect();
            validate_pooled(&problem, &Solution { offsets }, &pool_of)
                .unwrap_or_else(|e| panic!("instance {i}: brute force placement refused: {e}"));
        }
        let dump = || {
            format!(
                "{}pools {:?}\nlists {:?}\ncolocations {:?} separations {:?}",
                minimalloc::io::csv::write_problem(&problem, None),
                problem.pools(),
                (0..problem.len())
                    .map(|b| problem.pools_of(b))
                    .collect::<Vec<_>>(),
                problem.colocations(),
                problem.separations()
            )
        };
        for objective in [Objective::Fit, Objective::Minimize] {
            let options = Options {
                objective,
                threads: 1,
                restarts: Some(2),
                ..Options::default()
            };
            let outcome = plan(&problem, &options);
            let pooled = outcome.pooled.as_ref().expect("pools are reported");
            match outcome.status {
                Status::Solved => {
                    let s = outcome.solution.as_ref().unwrap();
                    if let Err(e) = validate_pooled(&problem, s, &pooled.pool_of) {
                        panic!("instance {i} {objective:?}: invalid: {e}\n{}", dump());
                    }
                    assert!(
                        brute.is_some(),
                        "instance {i}: placed what brute force cannot\n{}",
                        dump()
                    );
                    assert!(pooled.unplaced.is_empty());
                    for (p, r) in pooled.reports.iter().enumerate() {
                        assert!(
                            r.height >= r.lower_bound && r.height <= problem.pools()[p].capacity
                        );
                    }
                    if objective == Objective::Fit {
                        solved += 1;
                    }
                }
                Status::Infeasible => {
                    assert!(
                        brute.is_none(),
                        "instance {i}: infeasible but brute force places {brute:?}\n{}",
                        dump()
                    );
                    assert!(!pooled.unplaced.is_empty());
                    if objective == Objective::Fit {
                        infeasible += 1;
                    }
                }
                Status::NotFound => {
                    assert!(
                        problem.has_windows(),
                        "instance {i}: not found without windows\n{}",
                        dump()
                    );
                    if objective == Objective::Fit {
                        not_found += 1;
                    }
                }
                s => panic!("instance {i}: unexpected {s:?}"),
            }
        }
    }
    eprintln!("pools: {solved} solved, {infeasible} infeasible, {not_found} not found");
    assert!(solved > 1000 && infeasible > 500 && not_found < 100);
}

/// Two pools, 1 MiB preferred and 64 MiB, for a generated training step:
/// every buffer placed and validated, the first pool filled with buffers
/// that prefer it, the rest (all that are larger than it, among them)
/// reported as spilled, and each pool's height as its buffers show it.
#[test]
fn a_generated_step_spills_from_1_mib_to_64_mib() {
    use minimalloc::gen::{generate, Spec};
    const MIB: i64 = 1 << 20;
    let mut problem = Problem::new(i64::MAX, generate(Spec::new(600, 3))).unwrap();
    let sram = problem
        .add_pool(Pool {
            name: "sram".into(),
            capacity: MIB,
            base: 0,
            alignment: 64,
        })
        .unwrap();
    let dram = problem
        .add_pool(Pool {
            name: "dram".into(),
            capacity: 64 * MIB,
            base: 1 << 32,
            alignment: 64,
        })
        .unwrap();
    for objective in [Objective::Fit, Objective::Minimize] {
        let options = Options {
            objective,
            timeout: Some(std::time::Duration::from_secs(2)),
            ..Options::default()
        };
        let outcome = plan(&problem, &options);
        assert_eq!(outcome.status, Status::Solved, "{objective:?}");
        let s = outcome.solution.as_ref().unwrap();
        let pooled = outcome.pooled.as_ref().unwrap();
        validate_pooled(&problem, s, &pooled.pool_of).unwrap();
        let in_pool = |p: usize| -> Vec<usize> {
            (0..problem.len())
                .filter(|&i| pooled.pool_of[i] == p as u32)
                .collect()
        };
        for (p, report) in pooled.reports.iter().enumerate() {
            let pool = &problem.pools()[p];
            assert_eq!(report.buffers, in_pool(p));
            let height = report
                .buffers
                .iter()
                .map(|&b| s.offsets[b] - pool.base + problem.buffers()[b].size)
                .max()
                .unwrap_or(0);
            assert_eq!(report.height, height);
            assert!(report.lower_bound <= report.height && report.height <= pool.capacity);
        }
        let (first, second) = (&pooled.reports[sram], &pooled.reports[dram]);
        // Everyone prefers sram: exactly those in dram spilled.
        assert!(first.spilled.is_empty());
        assert_eq!(second.spilled, second.buffers);
        assert!(!first.buffers.is_empty() && !second.buffers.is_empty());
        for (i, b) in problem.buffers().iter().enumerate() {
            if b.size > MIB {
                assert_eq!(pooled.pool_of[i], dram as u32, "buffer {i} cannot fit sram");
            }
        }
        // The preferred pool is used, not left nearly empty.
        assert!(first.height * 10 >= 9 * MIB, "sram height {}", first.height);
        eprintln!(
            "{objective:?}: sram {} buffers, height {}; dram {} buffers, height {} (lower bound {})",
            first.buffers.len(),
            first.height,
            second.buffers.len(),
            second.height,
            second.lower_bound
        );
    }
}

/// validate_pooled names the buffer (by its own index) and the rule.
#[test]
fn pooled_errors_name_the_buffer_and_the_rule() {
    let mut p = Problem::new(
        i64::MAX,
        vec![
            minimalloc::Buffer::new("a", 0, 2, 8),
            minimalloc::Buffer::new("b", 0, 2, 8),
        ],
    )
    .unwrap();
    p.add_pool(Pool {
        name: "s".into(),
        capacity: 64,
        base: 1000,
        alignment: 8,
    })
    .unwrap();
    let check = |offsets: Vec<i64>, pools: Vec<u32>| {
        validate_pooled(&p, &Solution { offsets }, &pools)
            .unwrap_err()
            .to_string()
    };
    assert!(check(vec![1000, 1004], vec![0, 0])
        .contains("buffer 1: offset 4 is not a multiple of its alignment 8"));
    assert!(check(vec![1000, 1064], vec![0, 0])
        .contains("buffer 1: offset 64 + size 8 exceeds the capacity 64"));
    assert!(check(vec![1000, 1000], vec![0, 0]).contains("buffers 0 and 1 overlap"));
    assert!(check(vec![1000, 1008], vec![0, 1]).contains("buffer 1 is in pool 1"));
    validate_pooled(
        &p,
        &Solution {
            offsets: vec![1000, 1008],
        },
        &[0, 0],
    )
    .unwrap();
}
