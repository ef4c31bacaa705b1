//! Shared test helpers: a seeded generator of small random problems, an
//! independent brute-force solver that shares no code with the library's
//! search or sweep, and a clock of work.
#![allow(dead_code)]

use minimalloc::{Buffer, Gap, Problem, Window};

/// A clock that reads the work done, not the time: each read moves it 20
/// microseconds on. Timeouts on it are budgets of work, the same on a
/// quiet machine as on a loaded one. One counter per test binary: two
/// tests of a binary reading it at once would move each other's clocks,
/// so at most one test of each uses it.
pub fn counting_clock() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static READS: AtomicU64 = AtomicU64::new(0);
    READS.fetch_add(1, Ordering::Relaxed) * 20_000
}

/// xorshift64*: small, seeded, reproducible.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// What kinds of features random problems may carry.
#[derive(Clone, Copy)]
pub struct Shape {
    pub max_buffers: i64,
    pub horizon: i64,
    pub max_size: i64,
    pub max_capacity: i64,
    pub alignment: bool,
    pub gaps: bool,
    pub windows: bool,
    pub fixed: bool,
    pub hints: bool,
}

impl Shape {
    pub const SMALL: Shape = Shape {
        max_buffers: 8,
        horizon: 10,
        max_size: 6,
        max_capacity: 16,
        alignment: true,
        gaps: true,
        windows: true,
        fixed: true,
        hints: true,
    };
}

/// A random valid problem of the given shape.
pub fn random_problem(rng: &mut Rng, shape: Shape) -> Problem {
    let n = rng.range(1, shape.max_buffers);
    let capacity = rng.range(1, shape.max_capacity);
    let mut buffers = Vec::new();
    for i in 0..n {
        let lower = rng.range(0, shape.horizon - 1);
        let upper = rng.range(lower + 1, shape.horizon);
        let size = rng.range(1, shape.max_size);
        let mut b = Buffer::new(format!("b{i}"), lower, upper, size);
        if shape.alignment && rng.chance(30) {
            b.alignment = [2, 3, 4][rng.range(0, 2) as usize];
        }
        if shape.gaps && upper - lower >= 2 && rng.chance(30) {
            let gl = rng.range(lower, upper - 1);
            let gu = rng.range(gl + 1, upper);
            let window = if shape.windows && rng.chance(50) {
                let wl = rng.range(0, size - 1);
                let wu = rng.range(wl + 1, size);
                Some(Window {
                    lower: wl,
                    upper: wu,
                })
            } else {
                None
            };
            b.gaps.push(Gap {
                lower: gl,
                upper: gu,
                window,
            });
        }
        if shape.fixed && size <= capacity && rng.chance(12) {
            let slots = (capacity - size) / b.alignment;
            b.offset = Some(rng.range(0, slots) * b.alignment);
        }
        if shape.hints && size <= capacity && rng.chance(15) {
            let slots = (capacity - size) / b.alignment;
            b.hint = Some(rng.range(0, slots) * b.alignment);
        }
        buffers.push(b);
    }
    Problem::new(capacity, buffers).expect("generated problems are valid")
}

/// The bytes `[lo, hi)` relative to its offset that buffer `b` occupies at
/// time `t`, from the definition (lifetime minus gaps, windows inside gaps).
fn occupied(b: &Buffer, t: i64) -> Option<(i64, i64)> {
    if t < b.lower || t >= b.upper {
        return None;
    }
    for g in &b.gaps {
        if g.lower <= t && t < g.upper {
            return g.window.map(|w| (w.lower, w.upper));
        }
    }
    Some((0, b.size))
}

/// Whether buffers `a` at `oa` and `b` at `ob` share a byte at some time.
pub fn conflict(a: &Buffer, oa: i64, b: &Buffer, ob: i64) -> bool {
    let (lo, hi) = (a.lower.max(b.lower), a.upper.min(b.upper));
    (lo..hi).any(|t| match (occupied(a, t), occupied(b, t)) {
        (Some((a0, a1)), Some((b0, b1))) => oa + a0 < ob + b1 && ob + b0 < oa + a1,
        _ => false,
    })
}

/// Independent exact solver for tiny problems: a constraint-satisfaction
/// search with forward checking over every aligned offset of every buffer.
/// Returns a placement if one exists.
pub fn brute_force(problem: &Problem) -> Option<Vec<i64>> {
    brute_force_with(problem, |_, _, _, _| None)
}

/// Which pairs of buffers are colocated, and which separated, from the
/// problem's groups: two n-by-n tables.
pub fn link_tables(problem: &Problem) -> (Vec<Vec<bool>>, Vec<Vec<bool>>) {
    let n = problem.len();
    let mut colocated = vec![vec![false; n]; n];
    let mut separated = vec![vec![false; n]; n];
    for (groups, table) in [
        (problem.colocations(), &mut colocated),
        (problem.separations(), &mut separated),
    ] {
        for g in groups {
            for &a in g {
                for &b in g {
                    table[a as usize][b as usize] = a != b;
                }
            }
        }
    }
    (colocated, separated)
}

/// [`brute_force`] honouring the problem's colocations (same offset, and
/// no conflict between them) and separations (no shared byte at all), from
/// their definitions.
pub fn brute_force_linked(problem: &Problem) -> Option<Vec<i64>> {
    let (colocated, separated) = link_tables(problem);
    let sizes: Vec<i64> = problem.buffers().iter().map(|b| b.size).collect();
    brute_force_with(problem, |i, oi, j, oj| {
        if colocated[i][j] {
            Some(oi == oj)
        } else if separated[i][j] {
            Some(oi + sizes[i] <= oj || oj + sizes[j] <= oi)
        } else {
            None
        }
    })
}

/// The brute-force search; `rule(i, oi, j, oj)` may decide whether buffers
/// `i` at `oi` and `j` at `oj` go together (`None`: they do unless they
/// share a byte at some time).
pub fn brute_force_with(
    problem: &Problem,
    rule: impl Fn(usize, i64, usize, i64) -> Option<bool>,
) -> Option<Vec<i64>> {
    let bs = problem.buffers();
    let cap = problem.capacity();
    let n = bs.len();
    // Domains as lists of candidate offsets.
    let domains: Vec<Vec<i64>> = bs
        .iter()
        .map(|b| match b.offset {
            Some(f) => vec![f],
            None => (0..=cap - b.size)
                .filter(|o| o % b.alignment == 0)
                .collect(),
        })
        .collect();
    assert!(
        domains.iter().all(|d| d.len() <= 64),
        "brute force is for tiny problems"
    );
    let masks: Vec<u64> = domains
        .iter()
        .map(|d| {
            if d.len() == 64 {
                u64::MAX
            } else {
                (1u64 << d.len()) - 1
            }
        })
        .collect();
    // compatible[i][j][k]: mask of j's domain values compatible with i at domains[i][k].
    let mut compatible = vec![vec![Vec::new(); n]; n];
    for i in 0..n {
        for j in 0..n {
            if i == j {
                continue;
            }
            compatible[i][j] = domains[i]
                .iter()
                .map(|&oi| {
                    domains[j]
                        .iter()
                        .enumerate()
                        .filter(|&(_, &oj)| {
                            rule(i, oi, j, oj).unwrap_or_else(|| !conflict(&bs[i], oi, &bs[j], oj))
                        })
                        .fold(0u64, |m, (k, _)| m | (1 << k))
                })
                .collect();
        }
    }
    let mut assignment = vec![usize::MAX; n];
    fn go(
        live: &mut Vec<u64>,
        assignment: &mut Vec<usize>,
        compatible: &Vec<Vec<Vec<u64>>>,
    ) -> bool {
        let n = live.len();
        // Most constrained unassigned buffer first.
        let next = (0..n)
            .filter(|&i| assignment[i] == usize::MAX)
            .min_by_key(|&i| live[i].count_ones());
        let Some(i) = next else { return true };
        let mut values = live[i];
        while values != 0 {
            let k = values.trailing_zeros() as usize;
            values &= values - 1;
            assignment[i] = k;
            let saved = live.clone();
            let mut ok = true;
            for j in 0..n {
                if assignment[j] == usize::MAX {
                    live[j] &= compatible[i][j][k];
                    if live[j] == 0 {
                        ok = false;
                        break;
                    }
                }
            }
            if ok && go(live, assignment, compatible) {
                return true;
            }
            *live = saved;
            assignment[i] = usize::MAX;
        }
        false
    }
    let mut live = masks;
    if live.contains(&0) {
        return None;
    }
    if go(&mut live, &mut assignment, &compatible) {
        Some((0..n).map(|i| domains[i][assignment[i]]).collect())
    } else {
        None
    }
}

/// The least reuse penalty of any valid placement of a tiny linked
/// problem (`None`: nothing fits), by enumerating every placement: each
/// buffer at each aligned offset below the capacity (or its fixed one),
/// kept when it conflicts with no buffer placed before it (time, gaps,
/// windows, colocations, separations, all from their definitions), and
/// priced by the penalised pairs whose bytes meet.
pub fn least_penalty(problem: &Problem) -> Option<i64> {
    let bs = problem.buffers();
    let n = bs.len();
    let (colocated, separated) = link_tables(problem);
    let mut cost = vec![vec![0i64; n]; n];
    for (a, b, c) in problem.penalties() {
        cost[a][b] += c;
        cost[b][a] += c;
    }
    let meet = |i: usize, oi: i64, j: usize, oj: i64| oi < oj + bs[j].size && oj < oi + bs[i].size;
    let fits = |i: usize, oi: i64, j: usize, oj: i64| {
        if colocated[i][j] {
            oi == oj
        } else if separated[i][j] {
            !meet(i, oi, j, oj)
        } else {
            !conflict(&bs[i], oi, &bs[j], oj)
        }
    };
    let domain = |i: usize| -> Vec<i64> {
        match bs[i].offset {
            Some(f) => vec![f],
            None => (0..=problem.capacity() - bs[i].size)
                .filter(|o| o % bs[i].alignment == 0)
                .collect(),
        }
    };
    let domains: Vec<Vec<i64>> = (0..n).map(domain).collect();
    let mut best: Option<i64> = None;
    let mut offsets = vec![0i64; n];
    fn go(
        i: usize,
        paid: i64,
        offsets: &mut Vec<i64>,
        best: &mut Option<i64>,
        domains: &[Vec<i64>],
        fits: &dyn Fn(usize, i64, usize, i64) -> bool,
        price: &dyn Fn(usize, i64, usize, i64) -> i64,
    ) {
        if best.is_some_and(|b| paid >= b) {
            return;
        }
        if i == offsets.len() {
            *best = Some(best.map_or(paid, |b| b.min(paid)));
            return;
        }
        for &o in &domains[i] {
            if (0..i).all(|j| fits(i, o, j, offsets[j])) {
                let more: i64 = (0..i).map(|j| price(i, o, j, offsets[j])).sum();
                offsets[i] = o;
                go(i + 1, paid + more, offsets, best, domains, fits, price);
            }
        }
    }
    let price = |i: usize, oi: i64, j: usize, oj: i64| {
        if cost[i][j] > 0 && meet(i, oi, j, oj) {
            cost[i][j]
        } else {
            0
        }
    };
    go(0, 0, &mut offsets, &mut best, &domains, &fits, &price);
    best
}
