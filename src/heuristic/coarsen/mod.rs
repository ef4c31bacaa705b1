//! A coarser problem whose placements are placements of the original: the
//! multi-level member of the portfolio.
//!
//! Two buffers *fit together exactly* when they make a rectangle of
//! memory by time with nothing wasted: the same lifetime (stack them: one
//! buffer as tall as both) or the same size with one ending where the
//! other starts (chain them: one buffer living through both lifetimes,
//! both at its offset). Merging such pairs again and again, the merged
//! ones included, gives a problem of fewer, larger rectangles. Any
//! placement of it is a valid placement of the original: a stack's members
//! lie one above the other inside its memory, a chain's members never live
//! at once. Where the original was itself cut from larger rectangles (a
//! zero-waste packing), merging rebuilds it cut by cut, much of the way
//! down to one rectangle, and the coarse problem is one an exact search
//! can finish; elsewhere it is one more placement the portfolio measures,
//! and the portfolio keeps its best.
//!
//! Some merges are forced (see `forced`: every placement at the max load
//! of a zero-waste packing makes them), the others are guesses (see
//! `passes`), made only when no forced one is left, the likeliest first.
//! Pairs never rebuild a packing cut in pinwheels, where no two pieces
//! fit together exactly: *blocks* (see `blocks`) merge three to six
//! rectangles that tile a rectangle between them.
//! Only plain buffers merge: no gaps, no fixed offset, and alignments kept
//! (a stacked member's offset inside its stack is a multiple of its
//! alignment). Each pass sorts the rectangles, so a pass costs O(m log m)
//! for m rectangles, and passes run while they merge, within a budget.

mod blocks;
mod forced;
mod levels;
mod passes;
mod rect;
mod tiling;

use alloc::vec::Vec;

use crate::deadline::{Poll, Stop};
use crate::model::problem::Problem;
use blocks::block_pass;
use forced::forced_pass;
use levels::{coarse_buffers, Level, Passed};
use passes::{chain_pass, fitting_stack_pass, paired_stack_pass, unguided_stack_pass};

/// How many times over the merging passes may visit the buffers.
const BUDGET: usize = 64;
use rect::{Members, Rect};

/// The coarse problem and where each original buffer sits in it.
pub(crate) struct Coarse {
    pub(crate) problem: Problem,
    /// Whether unguided stacks were made (without them, the coarse
    /// problem would have come out otherwise).
    pub(crate) unguided: bool,
    /// Per original buffer: its rectangle and its offset inside it.
    at: Vec<(u32, i64)>,
    /// A finer level passed on the way (see [`Passed`]): the merges of
    /// an earlier round, with at least twice the rectangles. Merging only
    /// grows rectangles, so each of its rectangles lies whole, members in
    /// place, inside one of this level's.
    pub(crate) finer: Option<alloc::boxed::Box<Coarse>>,
    /// Where unguided stacks were made: the coarse problem as it stood
    /// before the first of them, which is what a coarsening without them
    /// makes (merging is deterministic, and without them it ends there),
    /// kept so that the planner need not merge it all again; `None` where
    /// that coarsening makes none.
    pub(crate) guided: Option<alloc::boxed::Box<Coarse>>,
}

impl Coarse {
    /// The original buffers' offsets for the coarse `offsets`.
    pub(crate) fn lift(&self, offsets: &[i64]) -> Vec<i64> {
        self.at
            .iter()
            .map(|&(r, inside)| offsets[r as usize].saturating_add(inside))
            .collect()
    }

    /// The coarse offsets that `lift` to `offsets` (a placement of the
    /// original), if there are any: each rectangle's members where they
    /// lie inside it, as in the lift of a coarser level's placement.
    pub(crate) fn offsets_of(&self, offsets: &[i64]) -> Option<Vec<i64>> {
        let mut coarse = alloc::vec![None; self.problem.len()];
        for (&(r, inside), &at) in self.at.iter().zip(offsets) {
            let here = at.checked_sub(inside)?;
            match coarse[r as usize] {
                None => coarse[r as usize] = Some(here),
                Some(o) if o == here => {}
                Some(_) => return None,
            }
        }
        coarse.into_iter().collect()
    }
}

/// What a coarsening makes besides the coarse problem.
#[derive(Clone, Copy)]
pub(crate) struct Making {
    /// Whether to make the unguided stacks, the guesses most often wrong
    /// (see [`passes`]).
    pub(crate) unguided: bool,
    /// Whether to keep a finer level (see [`Coarse::finer`]): only a
    /// caller with the time to refine on it needs one.
    pub(crate) finer: bool,
}

impl Making {
    /// Unguided stacks and a finer level.
    #[cfg(test)]
    const ALL: Making = Making {
        unguided: true,
        finer: true,
    };
}

/// The coarse problem of `problem`, or `None` when it would not have at
/// most half the buffers.
pub(crate) fn coarsen(
    problem: &Problem,
    making: Making,
    poll: &mut Poll<'_>,
) -> Result<Option<Coarse>, Stop> {
    let unguided = making.unguided;
    let buffers = problem.buffers();
    let n = buffers.len();
    let mut rects: Vec<Rect> = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| Rect::of(i, b, b.gaps.is_empty() && b.offset.is_none()))
        .collect();
    let mut members = Members::singletons(n);
    let mut alive: Vec<u32> = (0..n as u32).collect();
    let mut passed = Passed {
        keeps: making.finer,
        buffers,
        levels: Vec::new(),
        guided: None,
    };
    let merged = merge(
        &mut rects,
        &mut members,
        &mut alive,
        unguided,
        &mut passed,
        poll,
    )?;
    let Some(unguided_made) = merged else {
        return Ok(None);
    };
    if 2 * alive.len() > n {
        return Ok(None);
    }
    let level = coarse_buffers(buffers, &rects, &members, &alive, poll)?;
    let guided = match (unguided_made, passed.guided) {
        (true, Some(g)) => {
            finished(problem, g.level, g.levels, false, None).map(alloc::boxed::Box::new)
        }
        _ => None,
    };
    Ok(finished(
        problem,
        level,
        passed.levels,
        unguided_made,
        guided,
    ))
}

/// The coarse problem of `level`, with the finer level among `passed`
/// (the fewest rectangles of those with at least twice this level's);
/// `None` where the level does not halve the problem.
fn finished(
    problem: &Problem,
    level: Level,
    passed: Vec<Level>,
    unguided: bool,
    guided: Option<alloc::boxed::Box<Coarse>>,
) -> Option<Coarse> {
    if 2 * level.buffers.len() > problem.len() {
        return None;
    }
    let finer = passed
        .into_iter()
        .rev()
        .find(|l| l.buffers.len() >= 2 * level.buffers.len())
        .and_then(|l| level_problem(problem, l, unguided, None, None));
    level_problem(
        problem,
        level,
        unguided,
        finer.map(alloc::boxed::Box::new),
        guided,
    )
}

/// The coarse problem of one level's buffers; `None` should they not make
/// a valid problem (they do by construction: the level is then simply
/// not offered).
fn level_problem(
    problem: &Problem,
    level: Level,
    unguided: bool,
    finer: Option<alloc::boxed::Box<Coarse>>,
    guided: Option<alloc::boxed::Box<Coarse>>,
) -> Option<Coarse> {
    let problem = Problem::new(problem.capacity(), level.buffers).ok()?;
    Some(Coarse {
        problem,
        unguided,
        at: level.at,
        finer,
        guided,
    })
}

/// Merges rectangles in rounds, the levels passed kept in `passed`;
/// whether unguided stacks were made, or `None` when a large problem shows
/// early that it will not halve.
fn merge(
    rects: &mut [Rect],
    members: &mut Members,
    alive: &mut Vec<u32>,
    unguided: bool,
    passed: &mut Passed<'_>,
    poll: &mut Poll<'_>,
) -> Result<Option<bool>, Stop> {
    let n = rects.len();
    // Rounds: the forced merges (see `forced`) until none is left, then
    // one kind of guess, the likeliest first, and back to the forced ones
    // (a right guess makes more of them). A wrong guess can end a zero-
    // waste packing's chance of its optimum, and a right one is only
    // worth it when the forced merges cannot go on: so the guesses wait,
    // and each kind waits for the likelier ones. Likeliest: a chain with
    // no rival of its size at that time, neither rectangle sharing its
    // lifetime; a stack of a whole lifetime that fits a neighbour; two
    // stacks of neighbouring lifetimes of one total; any chain without a
    // rival; a block without a rival; the unguided stacks.
    // Merging may stop at any time (every state lifts back valid): it
    // stops once its passes have visited `BUDGET` times n rectangles in
    // all, a few dozen plain orders' sorting. A zero-waste packing is
    // rebuilt well within that (its rounds shrink fast); where merges are
    // rare (real graphs, sizes unrelated to lifetimes) the rounds stay
    // near n and the budget ends them in a few.
    let budget = BUDGET * n;
    let mut spent = 0usize;
    let mut unguided_made = false;
    loop {
        passed.round(rects, members, alive, poll)?;
        let before = alive.len();
        let large = n > 1 << 12;
        loop {
            let now = alive.len();
            spent += now;
            if spent > budget || !forced_pass(rects, members, alive, poll)? {
                break;
            }
            // On large problems each pass costs sorting them all: passes
            // that merge little wait for the next round.
            if large && 64 * (now - alive.len()) < now {
                break;
            }
        }
        // On large problems the first forced merges tell whether the
        // rectangles meet exactly: a zero-waste packing merges a quarter
        // or more at once; where not a 64th merge, guesses are unlikely to
        // halve the problem (and the coarse level is used only then).
        if large && before == n && 64 * (n - alive.len()) < n {
            // Pieces cut as pinwheels meet in no pair: blocks (see
            // `blocks`) get their chance before the round is judged.
            // A packing cut in pinwheels merges a quarter or more in
            // this pass; where blocks are chance sums, far fewer.
            spent += alive.len() + block_pass(rects, members, alive, true, poll)? as usize / 16;
            if 4 * (n - alive.len()) < n {
                return Ok(None);
            }
            continue;
        }
        let kinds = if unguided { 6 } else { 5 };
        for guess in 0..kinds {
            let now = alive.len();
            spent += now;
            if spent > budget {
                break;
            }
            let (r, m, a) = (&mut *rects, &mut *members, &mut *alive);
            match guess {
                0 => chain_pass(r, m, a, true, poll)?,
                1 => fitting_stack_pass(r, m, a, poll)?,
                2 => paired_stack_pass(r, m, a, poll)?,
                3 => chain_pass(r, m, a, false, poll)?,
                4 => spent += block_pass(r, m, a, true, poll)? as usize / 16,
                _ => {
                    passed.before_unguided(r, m, a, poll)?;
                    unguided_stack_pass(r, m, a, poll)?
                }
            }
            unguided_made |= guess == 5 && alive.len() < now;
            if alive.len() < now {
                break;
            }
        }
        if alive.len() == before || spent > budget {
            break;
        }
        // On large problems, while more than half remain, a round must
        // merge a 64th of them: else the coarse level is unlikely to halve
        // the problem (the planner does not use it then) and each further
        // round costs sorting them all again. Small problems (rounds of
        // microseconds) merge on within the budget: the challenging suite
        // halves only after many slow rounds, and is then solved exactly.
        if large && 2 * alive.len() > n && 64 * (before - alive.len()) < before {
            return Ok(None);
        }
    }
    Ok(Some(unguided_made))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::rng::Rng;
    use crate::deadline::Deadline;
    use crate::model::problem::Buffer;
    use crate::model::solution::{validate, Solution};

    /// Whatever the coarse placement, lifted it is valid: placements of
    /// the coarse problem by stacking (every rectangle above the other)
    /// and by first-fit, on problems with many exact fits.
    #[test]
    fn lifted_placements_are_valid() {
        let mut rng = Rng::new(21);
        let deadline = Deadline::none();
        let mut merged = 0;
        for _ in 0..300 {
            let n = rng.below(1, 40) as usize;
            let mut buffers = Vec::new();
            for i in 0..n {
                // Few lifetimes and sizes, so that many pairs fit exactly.
                let lower = rng.below(0, 6) * 2;
                let upper = lower + 2 * rng.below(1, 3);
                let size = 8 * rng.below(1, 4);
                let mut b = Buffer::new(alloc::format!("{i}"), lower, upper, size);
                b.alignment = [1, 8, 16][rng.below(0, 3) as usize];
                if rng.below(0, 8) == 0 {
                    b.gaps.push(crate::model::problem::Gap {
                        lower: lower + 1,
                        upper: lower + 2,
                        window: None,
                    });
                }
                buffers.push(b);
            }
            let problem = Problem::new(i64::MAX, buffers).unwrap();
            let mut poll = Poll::new(&deadline, u64::MAX);
            let Some(coarse) = coarsen(&problem, Making::ALL, &mut poll).unwrap() else {
                continue;
            };
            merged += 1;
            // Only a coarse problem of at most half the buffers is given.
            assert!(2 * coarse.problem.len() <= problem.len());
            for strategy in crate::heuristic::Strategy::ALL {
                let s = crate::heuristic::run(&coarse.problem, strategy).unwrap();
                let lifted = Solution {
                    offsets: coarse.lift(&s.offsets),
                };
                validate(&problem, &lifted).unwrap();
                assert_eq!(lifted.height(&problem), s.height(&coarse.problem));
            }
        }
        assert!(merged > 30, "only {merged} problems merged");
    }

    /// Zero-waste packings of three kinds (guillotine, pinwheel, swept),
    /// seeds 0-3, each with its coarse problem and seed, where it has one.
    fn with_finer_levels() -> Vec<(Problem, Coarse, u64)> {
        use crate::gen::{generate, Family, Spec};
        let deadline = Deadline::none();
        let mut out = Vec::new();
        for (family, n) in [
            (Family::Planted, 3000),
            (Family::Pinwheel, 3001),
            (Family::Swept, 3000),
        ] {
            for seed in 0..4 {
                let spec = Spec::new(n, seed).with_family(family);
                let problem = Problem::new(i64::MAX, generate(spec)).unwrap();
                let mut poll = Poll::new(&deadline, u64::MAX);
                if let Some(coarse) = coarsen(&problem, Making::ALL, &mut poll).unwrap() {
                    out.push((problem, coarse, seed));
                }
            }
        }
        out
    }

    /// The coarse problem a coarsening with unguided stacks keeps from
    /// before the first of them is the one a coarsening without them
    /// makes, finer level and all, and there is one exactly where unguided
    /// stacks were made.
    #[test]
    fn the_coarse_problem_kept_before_unguided_stacks_is_the_one_made_without_them() {
        use crate::gen::{generate, Family, Spec};
        let deadline = Deadline::none();
        let same =
            |a: &Coarse, b: &Coarse| a.problem.buffers() == b.problem.buffers() && a.at == b.at;
        let mut kept = 0;
        for (family, n) in [
            (Family::Planted, 3000),
            (Family::Swept, 3000),
            (Family::Step, 2000),
        ] {
            for seed in 0..8 {
                let spec = Spec::new(n, seed).with_family(family);
                let problem = Problem::new(i64::MAX, generate(spec)).unwrap();
                let mut poll = Poll::new(&deadline, u64::MAX);
                let Some(all) = coarsen(&problem, Making::ALL, &mut poll).unwrap() else {
                    continue;
                };
                let making = Making {
                    unguided: false,
                    finer: true,
                };
                let without = coarsen(&problem, making, &mut poll).unwrap();
                assert_eq!(all.guided.is_some(), all.unguided, "{family:?} {seed}");
                let Some(guided) = &all.guided else {
                    continue;
                };
                let without = without.expect("a coarse problem without unguided stacks");
                assert!(same(guided, &without), "{family:?} {seed}");
                assert!(!guided.unguided && guided.guided.is_none());
                match (&guided.finer, &without.finer) {
                    (Some(a), Some(b)) => assert!(same(a, b), "{family:?} {seed}"),
                    (None, None) => {}
                    _ => panic!("{family:?} {seed}: one finer level, not two"),
                }
                kept += 1;
            }
        }
        assert!(kept >= 6, "only {kept} coarsenings made unguided stacks");
    }

    /// Keeping levels changes nothing of the coarse problem: made without
    /// them, it is the same, with no finer level.
    #[test]
    fn a_coarsening_without_levels_makes_the_same_coarse_problem() {
        let deadline = Deadline::none();
        let mut kept = 0;
        for (problem, coarse, _) in with_finer_levels() {
            let mut poll = Poll::new(&deadline, u64::MAX);
            let making = Making {
                unguided: true,
                finer: false,
            };
            let bare = coarsen(&problem, making, &mut poll).unwrap().unwrap();
            assert!(bare.finer.is_none());
            assert_eq!(bare.problem.buffers(), coarse.problem.buffers());
            assert_eq!(bare.at, coarse.at);
            kept += usize::from(coarse.finer.is_some());
        }
        assert!(kept >= 6, "only {kept} coarsenings kept a finer level");
    }

    /// The finer level a coarsening passes on the way holds the coarse
    /// level's placements: each finer rectangle lies whole inside a
    /// coarse one, so a coarse placement, lifted, has finer offsets,
    /// valid, that lift to it again. A placement whose members leave
    /// their places in the finer rectangles has none.
    #[test]
    fn a_finer_level_holds_the_coarse_placements() {
        use crate::heuristic::{run, Strategy};
        let (mut finer_levels, mut declined) = (0, 0);
        for (problem, coarse, _) in with_finer_levels() {
            let Some(finer) = &coarse.finer else {
                continue;
            };
            assert!(finer.problem.len() >= 2 * coarse.problem.len());
            assert!(2 * finer.problem.len() <= problem.len());
            assert!(finer.finer.is_none());
            finer_levels += 1;
            for strategy in Strategy::ALL {
                let s = run(&coarse.problem, strategy).unwrap();
                let lifted = coarse.lift(&s.offsets);
                let offsets = finer.offsets_of(&lifted).expect("a finer placement");
                validate(
                    &finer.problem,
                    &Solution {
                        offsets: offsets.clone(),
                    },
                )
                .unwrap();
                assert_eq!(finer.lift(&offsets), lifted);
                // The original's own plain order: its members are
                // rarely where the finer rectangles hold them.
                let own = run(&problem, strategy).unwrap().offsets;
                match finer.offsets_of(&own) {
                    Some(o) => assert_eq!(finer.lift(&o), own),
                    None => declined += 1,
                }
            }
        }
        assert!(finer_levels >= 6, "only {finer_levels} finer levels");
        assert!(declined > 0);
    }

    /// Repaired on the finer level from a coarse placement, lifted (as
    /// the planner refines), a placement never rises and stays valid;
    /// and the finer level lowers placements the coarse one holds up,
    /// its rectangles being the coarse ones' pieces. A budget of steps.
    #[test]
    fn the_finer_level_repairs_a_coarse_placement() {
        use crate::heuristic::{run, Layout, Repair, Strategy};
        let deadline = Deadline::none();
        let mut poll = Poll::new(&deadline, u64::MAX);
        let (mut tried, mut lowered) = (0, 0);
        for (problem, coarse, seed) in with_finer_levels() {
            let Some(finer) = &coarse.finer else {
                continue;
            };
            let placed = run(&coarse.problem, Strategy::FirstFit).unwrap();
            let height = placed.height(&coarse.problem);
            let start = finer.offsets_of(&coarse.lift(&placed.offsets)).unwrap();
            let layout = Layout::new(&finer.problem, &mut poll).unwrap();
            let mut repair = Repair::new(&layout, start, seed, &mut poll).unwrap();
            let target = crate::model::load::max_load(&problem);
            for _ in 0..2000 {
                if repair.height() <= target {
                    break;
                }
                repair.step(target, &mut poll).unwrap();
            }
            let offsets = repair.offsets().to_vec();
            let solution = Solution {
                offsets: offsets.clone(),
            };
            validate(&finer.problem, &solution).unwrap();
            let lifted = Solution {
                offsets: finer.lift(&offsets),
            };
            validate(&problem, &lifted).unwrap();
            assert_eq!(lifted.height(&problem), repair.height());
            assert!(repair.height() <= height, "seed {seed}");
            tried += 1;
            lowered += usize::from(repair.height() < height);
        }
        assert!(tried >= 6 && lowered > 0, "{lowered} of {tried} lowered");
    }

    /// Pieces cut from a rectangle by guillotine cuts merge back into a
    /// few rectangles (a tenth as many or fewer).
    #[test]
    fn guillotine_pieces_rebuild_their_rectangle() {
        for seed in 0..20 {
            let spec = crate::gen::Spec::new(200, seed).with_family(crate::gen::Family::Planted);
            let problem = Problem::new(i64::MAX, crate::gen::generate(spec)).unwrap();
            let deadline = Deadline::none();
            let mut poll = Poll::new(&deadline, u64::MAX);
            let coarse = coarsen(&problem, Making::ALL, &mut poll).unwrap().unwrap();
            assert!(
                10 * coarse.problem.len() <= problem.len(),
                "seed {seed}: {}",
                coarse.problem.len()
            );
        }
    }
}
