//! The merges that are not guesses: at a time where rectangles meet and
//! the memory is full on both sides, what ends frees exactly the memory
//! what starts takes. Where one rectangle ends there and one starts, the
//! one that starts sits where the other was, in any placement at the max
//! load: the two chain. Where one ends and several of one lifetime start
//! there, together its size, they lie in its band, one on another: they
//! stack (and the stack chains with it on the next pass); the same where
//! one starts as several of one lifetime end. A zero-waste packing (the
//! memory full at every time, no buffer with gaps) keeps its optimum
//! through these merges, however many: every placement at its max load
//! makes them (tested against the placement it was cut from, on guillotine
//! and on other packings). Elsewhere they are as good a guess as a chain.

use alloc::vec::Vec;

use super::passes::{stack, total_size};
use super::rect::{Members, Rect};
use crate::base::math::lcm_within;
use crate::deadline::{sort_polled, Poll, Stop};

/// One pass of the forced merges: chains, then stacks. Returns whether
/// anything merged.
pub(super) fn forced_pass(
    rects: &mut [Rect],
    members: &mut Members,
    alive: &mut Vec<u32>,
    poll: &mut Poll<'_>,
) -> Result<bool, Stop> {
    let before = alive.len();
    let meetings = meetings(rects, alive, poll)?;
    forced_chains(rects, members, alive, &meetings, poll)?;
    // Chains change where rectangles end: the meetings are found again.
    let meetings = if alive.len() < before {
        self::meetings(rects, alive, poll)?
    } else {
        meetings
    };
    forced_stacks(rects, members, alive, &meetings, poll)?;
    Ok(alive.len() < before)
}

/// Every rectangle alive (plain or not: all take memory) as `(time, r)`,
/// by the time it ends and by the time it starts.
fn meetings(rects: &[Rect], alive: &[u32], poll: &mut Poll<'_>) -> Result<Meetings, Stop> {
    let mut ends: Vec<(i64, u32)> = alive
        .iter()
        .map(|&r| (rects[r as usize].upper, r))
        .collect();
    let mut starts: Vec<(i64, u32)> = alive
        .iter()
        .map(|&r| (rects[r as usize].lower, r))
        .collect();
    sort_polled(&mut ends, poll)?;
    sort_polled(&mut starts, poll)?;
    Ok(Meetings { ends, starts })
}

/// The rectangles that end at one time and those that start at it.
type Meeting<'a> = (&'a [(i64, u32)], &'a [(i64, u32)]);

struct Meetings {
    ends: Vec<(i64, u32)>,
    starts: Vec<(i64, u32)>,
}

impl Meetings {
    /// The times where something ends, each with the rectangles that end
    /// there and those that start there.
    fn each(&self) -> impl Iterator<Item = Meeting<'_>> {
        let mut i = 0;
        core::iter::from_fn(move || {
            let &(t, _) = self.ends.get(i)?;
            let len = self.ends[i..].partition_point(|&(x, _)| x == t);
            let ending = &self.ends[i..i + len];
            i += len;
            let from = self.starts.partition_point(|&(x, _)| x < t);
            let count = self.starts[from..].partition_point(|&(x, _)| x == t);
            Some((ending, &self.starts[from..from + count]))
        })
    }
}

/// Chains every pair that alone ends and alone starts at a time, one size.
fn forced_chains(
    rects: &mut [Rect],
    members: &mut Members,
    alive: &mut Vec<u32>,
    meetings: &Meetings,
    poll: &mut Poll<'_>,
) -> Result<(), Stop> {
    // Each rectangle's successor in a chain; chains are then followed
    // from their first rectangle.
    let mut next = alloc::vec![u32::MAX; rects.len()];
    let mut has_prev = alloc::vec![false; rects.len()];
    for (ending, starting) in meetings.each() {
        poll.tick(1)?;
        if let ([(_, a)], [(_, b)]) = (ending, starting) {
            let (ra, rb) = (rects[*a as usize], rects[*b as usize]);
            if ra.plain && rb.plain && ra.size == rb.size {
                next[*a as usize] = *b;
                has_prev[*b as usize] = true;
            }
        }
    }
    let mut gone = alloc::vec![false; rects.len()];
    for &r in alive.iter() {
        if has_prev[r as usize] {
            continue;
        }
        let mut b = next[r as usize];
        while b != u32::MAX {
            let Some(align) = lcm_within(rects[r as usize].align, rects[b as usize].align, 1 << 40)
            else {
                break;
            };
            members.absorb(r, b, 0);
            rects[r as usize].upper = rects[b as usize].upper;
            rects[r as usize].align = align;
            gone[b as usize] = true;
            b = next[b as usize];
        }
        poll.tick(1)?;
    }
    alive.retain(|&r| !gone[r as usize]);
    Ok(())
}

/// Stacks the rectangles of one lifetime that alone start where one
/// ends, or alone end where one starts, when their sizes add up to its.
fn forced_stacks(
    rects: &mut [Rect],
    members: &mut Members,
    alive: &mut Vec<u32>,
    meetings: &Meetings,
    poll: &mut Poll<'_>,
) -> Result<(), Stop> {
    let mut gone = alloc::vec![false; rects.len()];
    let mut group: Vec<u32> = Vec::new();
    for (ending, starting) in meetings.each() {
        poll.tick((ending.len() + starting.len()) as u64)?;
        let (one, many) = match (ending, starting) {
            ([(_, one)], many) | (many, [(_, one)]) if many.len() >= 2 => (*one, many),
            _ => continue,
        };
        group.clear();
        group.extend(many.iter().map(|&(_, r)| r));
        let first = rects[group[0] as usize];
        let alike = group.iter().all(|&r| {
            let x = rects[r as usize];
            x.plain && !gone[r as usize] && (x.lower, x.upper) == (first.lower, first.upper)
        });
        let (gone_one, one) = (gone[one as usize], rects[one as usize]);
        if alike
            && !gone_one
            && one.plain
            && total_size(rects, group.iter().copied()) == Some(one.size)
        {
            stack(rects, members, &group, &mut gone);
        }
    }
    alive.retain(|&r| !gone[r as usize]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deadline::Deadline;
    use crate::model::problem::{Buffer, Problem};

    /// A zero-waste packing not cut by guillotine (`gen --family=swept`),
    /// `rows` of 8 bytes tall (few rows: sizes often meet, so that many
    /// merges are forced): the buffers, their offsets, and the height.
    fn swept(n: usize, seed: u64, rows: i64) -> (Vec<Buffer>, Vec<i64>, i64) {
        let spec = crate::gen::Spec::new(n, seed).with_family(crate::gen::Family::Swept);
        let (buffers, height, offsets) = crate::gen::swept_with_offsets(spec, 8 * rows);
        (buffers, offsets, height)
    }

    /// Forced merges to the end, the rectangles and their members.
    fn merge_forced(buffers: &[Buffer]) -> (Vec<Rect>, Members, Vec<u32>) {
        let (mut rects, mut members, mut alive) = super::super::rect::singletons(buffers);
        let deadline = Deadline::none();
        let mut poll = Poll::new(&deadline, u64::MAX);
        while forced_pass(&mut rects, &mut members, &mut alive, &mut poll).unwrap() {}
        (rects, members, alive)
    }

    /// Every forced merge is one the packing itself makes: the members of
    /// each rectangle fill, where they were cut from, a band exactly as
    /// tall as the rectangle (so the merged problem still fits at the max
    /// load), on guillotine cuts and on swept packings.
    #[test]
    fn forced_merges_are_made_by_every_zero_waste_placement() {
        let mut merged = [0, 0];
        for seed in 0..40 {
            let spec = crate::gen::Spec::new(50 + 100 * seed as usize, seed)
                .with_family(crate::gen::Family::Planted);
            let (planted, _, planted_offsets) = crate::gen::planted_with_offsets(spec);
            let (swept, swept_offsets, _) =
                swept(50 + 100 * seed as usize, seed, 2 + seed as i64 % 30);
            for (k, (buffers, offsets)) in [(planted, planted_offsets), (swept, swept_offsets)]
                .into_iter()
                .enumerate()
            {
                let (rects, members, alive) = merge_forced(&buffers);
                merged[k] += buffers.len() - alive.len();
                for &r in &alive {
                    let list = &members.lists[r as usize];
                    let bottom = list
                        .iter()
                        .map(|&(m, _)| offsets[m as usize])
                        .min()
                        .unwrap();
                    let top = list
                        .iter()
                        .map(|&(m, _)| offsets[m as usize] + buffers[m as usize].size)
                        .max()
                        .unwrap();
                    assert_eq!(top - bottom, rects[r as usize].size, "seed {seed}");
                }
            }
        }
        assert!(
            merged[0] > 10_000 && merged[1] > 1_000,
            "only {merged:?} merges"
        );
    }

    /// On small packings, the exact search fits the merged problem at the
    /// max load, and its placement lifts to a valid one of the original.
    #[test]
    fn small_packings_merged_still_fit_at_their_max_load() {
        for seed in 0..60 {
            let (buffers, _, height) = swept(4 + seed as usize % 9, seed, 2 + seed as i64 % 5);
            let (rects, members, alive) = merge_forced(&buffers);
            let coarse: Vec<Buffer> = alive
                .iter()
                .map(|&r| {
                    let x = rects[r as usize];
                    Buffer::new(alloc::format!("{r}"), x.lower, x.upper, x.size)
                })
                .collect();
            let problem = Problem::new(height, coarse).unwrap();
            let deadline = crate::deadline::Deadline::new(None, None, None);
            let params = crate::exact::Params::default();
            let (verdict, _) = crate::exact::solve(&problem, height, &params, &deadline);
            let crate::exact::Verdict::Solved(offsets) = verdict else {
                panic!("seed {seed}: no fit at the max load: {verdict:?}");
            };
            let solution = crate::model::solution::Solution { offsets };
            crate::model::solution::validate(&problem, &solution).unwrap();
            // Lifted: each member at its rectangle's offset plus its own.
            let mut offsets = alloc::vec![0; buffers.len()];
            for (k, &r) in alive.iter().enumerate() {
                let base = members.base[r as usize];
                for &(m, inside) in &members.lists[r as usize] {
                    offsets[m as usize] = solution.offsets[k] + base + inside;
                }
            }
            let original = Problem::new(height, buffers).unwrap();
            crate::model::solution::validate(
                &original,
                &crate::model::solution::Solution { offsets },
            )
            .unwrap();
        }
    }
}
