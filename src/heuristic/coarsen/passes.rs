//! The merges that are guesses, one pass each: chains (one size,
//! touching in time), stacks that fit a neighbour, stacks of neighbouring
//! lifetimes that fit each other, and the unguided stacks of last resort.
//! [`super::forced`] holds the merges that are not guesses; the coarsening
//! loop runs these only when none of those is left, the likeliest first.

use alloc::vec::Vec;

use super::rect::{Members, Rect};
use crate::base::math::lcm_within;
use crate::deadline::{sort_polled, Poll, Stop};

/// Stacks every plain rectangle of a lifetime whose sizes add up to the
/// size of a rectangle that ends where they start or starts where they
/// end (then the stack and that one chain).
pub(super) fn fitting_stack_pass(
    rects: &mut [Rect],
    members: &mut Members,
    alive: &mut Vec<u32>,
    poll: &mut Poll<'_>,
) -> Result<(), Stop> {
    let keys = sorted_keys(rects, alive, |r| (r.lower, r.upper), poll)?;
    // (time, size) of the plain rectangles that end at a time, and that
    // start at one.
    let mut ends: Vec<(i64, i64)> = keys
        .iter()
        .map(|&(_, u, r)| (u, rects[r as usize].size))
        .collect();
    let mut starts: Vec<(i64, i64)> = keys
        .iter()
        .map(|&(l, _, r)| (l, rects[r as usize].size))
        .collect();
    sort_polled(&mut ends, poll)?;
    sort_polled(&mut starts, poll)?;
    let has = |list: &[(i64, i64)], key: (i64, i64)| list.binary_search(&key).is_ok();
    let mut gone = alloc::vec![false; rects.len()];
    for (lower, upper, group) in lifetimes(&keys) {
        poll.tick(group.len() as u64)?;
        if group.len() < 2 {
            continue;
        }
        let Some(total) = total_size(rects, group.iter().map(|k| k.2)) else {
            continue;
        };
        if has(&ends, (lower, total)) || has(&starts, (upper, total)) {
            let group: Vec<u32> = group.iter().map(|k| k.2).collect();
            stack(rects, members, &group, &mut gone);
        }
    }
    alive.retain(|&r| !gone[r as usize]);
    Ok(())
}

/// Stacks the plain rectangles of two neighbouring lifetimes, `[l, u)`
/// and `[u, v)`, whose sizes add up to one total, three or more in all:
/// the two stacks then chain.
pub(super) fn paired_stack_pass(
    rects: &mut [Rect],
    members: &mut Members,
    alive: &mut Vec<u32>,
    poll: &mut Poll<'_>,
) -> Result<(), Stop> {
    let keys = sorted_keys(rects, alive, |r| (r.lower, r.upper), poll)?;
    // (lower, upper, total size, first key, end key) per lifetime.
    let groups: Vec<(i64, i64, Option<i64>, usize, usize)> = {
        let mut groups = Vec::new();
        let mut at = 0;
        for (lower, upper, group) in lifetimes(&keys) {
            let total = total_size(rects, group.iter().map(|k| k.2));
            groups.push((lower, upper, total, at, at + group.len()));
            at += group.len();
        }
        groups
    };
    poll.tick(keys.len() as u64)?;
    let mut used = alloc::vec![false; groups.len()];
    let mut gone = alloc::vec![false; rects.len()];
    let mut set: Vec<u32> = Vec::new();
    for g in 0..groups.len() {
        poll.tick(2)?;
        let (_, upper, total, from, to) = groups[g];
        if used[g] || total.is_none() {
            continue;
        }
        let first = groups.partition_point(|x| x.0 < upper);
        let partner = (first..groups.len())
            .take_while(|&h| groups[h].0 == upper)
            .find(|&h| {
                let (_, _, t, hf, ht) = groups[h];
                !used[h] && t == total && (to - from) + (ht - hf) >= 3
            });
        let Some(h) = partner else { continue };
        used[g] = true;
        used[h] = true;
        for (from, to) in [(from, to), (groups[h].3, groups[h].4)] {
            if to - from >= 2 {
                set.clear();
                set.extend(keys[from..to].iter().map(|k| k.2));
                stack(rects, members, &set, &mut gone);
            }
        }
    }
    alive.retain(|&r| !gone[r as usize]);
    Ok(())
}

/// Of the lifetimes shared by two or more plain rectangles, stacks the
/// quarter whose rectangles cover the least area, all of each: small
/// rectangles of one lifetime are the likeliest to be the halves of one
/// cut, and merging every lifetime at once would merge coincidences too.
pub(super) fn unguided_stack_pass(
    rects: &mut [Rect],
    members: &mut Members,
    alive: &mut Vec<u32>,
    poll: &mut Poll<'_>,
) -> Result<(), Stop> {
    let keys = sorted_keys(rects, alive, |r| (r.lower, r.upper), poll)?;
    let mut pending: Vec<(i128, Vec<u32>)> = Vec::new();
    for (_, _, group) in lifetimes(&keys) {
        poll.tick(group.len() as u64)?;
        if group.len() < 2 {
            continue;
        }
        let area: i128 = group
            .iter()
            .map(|k| {
                let r = rects[k.2 as usize];
                i128::from(r.size) * i128::from(r.upper - r.lower)
            })
            .sum();
        pending.push((area, group.iter().map(|k| k.2).collect()));
    }
    let mut gone = alloc::vec![false; rects.len()];
    if !pending.is_empty() {
        let quarter = pending.len().div_ceil(4);
        pending.select_nth_unstable_by_key(quarter - 1, |p| p.0);
        for (_, group) in &pending[..quarter] {
            stack(rects, members, group, &mut gone);
        }
    }
    alive.retain(|&r| !gone[r as usize]);
    Ok(())
}

/// Chains plain rectangles of one size where one ends as another starts,
/// when no other of that size ends or starts there. `wary`: also not
/// where either shares its lifetime with another plain rectangle (then
/// it may as well be half of a cut across memory, to be stacked first).
pub(super) fn chain_pass(
    rects: &mut [Rect],
    members: &mut Members,
    alive: &mut Vec<u32>,
    wary: bool,
    poll: &mut Poll<'_>,
) -> Result<(), Stop> {
    // By (size, lower): the rectangle that starts at a time, of a size.
    let starts = sorted_keys(rects, alive, |r| (r.size, r.lower), poll)?;
    // By (size, upper): the rectangles that end at a time, of a size.
    let mut ends: Vec<(i64, i64, u32)> = starts
        .iter()
        .map(|&(s, _, r)| (s, rects[r as usize].upper, r))
        .collect();
    sort_polled(&mut ends, poll)?;
    let mut shared: Vec<(i64, i64)> = Vec::new();
    if wary {
        shared = starts
            .iter()
            .map(|&(_, _, r)| (rects[r as usize].lower, rects[r as usize].upper))
            .collect();
        sort_polled(&mut shared, poll)?;
    }
    let shares = |r: Rect| {
        let from = shared.partition_point(|&x| x < (r.lower, r.upper));
        shared[from..]
            .iter()
            .take(2)
            .filter(|&&x| x == (r.lower, r.upper))
            .count()
            >= 2
    };
    let mut gone = alloc::vec![false; rects.len()];
    let mut taken = alloc::vec![false; rects.len()];
    // In order of start, so that a chain grows forward in one pass.
    let mut order: Vec<(i64, i64, u32)> = starts.iter().map(|&(s, l, r)| (l, s, r)).collect();
    sort_polled(&mut order, poll)?;
    for &(_, size, r) in &order {
        // Each visit searches two sorted lists.
        poll.tick(2)?;
        if gone[r as usize] {
            continue;
        }
        loop {
            let rect = rects[r as usize];
            let from = starts.partition_point(|&(s, l, _)| (s, l) < (size, rect.upper));
            let mut nexts = starts[from..]
                .iter()
                .take_while(|&&(s, l, _)| s == size && l == rect.upper)
                .map(|&(_, _, x)| x)
                .filter(|&x| !taken[x as usize] && x != r);
            // Only a match with no rival on either side: two of one size
            // starting (or ending) together are as likely a coincidence.
            let (Some(next), None) = (nexts.next(), nexts.next()) else {
                break;
            };
            let at = ends.partition_point(|&(s, u, _)| (s, u) < (size, rect.upper));
            let rivals = ends[at..]
                .iter()
                .take_while(|&&(s, u, _)| s == size && u == rect.upper)
                .any(|&(_, _, x)| {
                    x != r && !gone[x as usize] && rects[x as usize].upper == rect.upper
                });
            // The lifetimes are as they were when the pass began: a chain
            // grown in this pass no longer shares one.
            if rivals || (wary && (shares(rect) || shares(rects[next as usize]))) {
                break;
            }
            let Some(align) = lcm_within(rect.align, rects[next as usize].align, 1 << 40) else {
                break;
            };
            taken[next as usize] = true;
            gone[next as usize] = true;
            members.absorb(r, next, 0);
            rects[r as usize].upper = rects[next as usize].upper;
            rects[r as usize].align = align;
            poll.tick(4)?;
        }
    }
    alive.retain(|&r| !gone[r as usize]);
    Ok(())
}

/// The plain rectangles among `alive` as `(key, r)`, sorted.
pub(super) fn sorted_keys(
    rects: &[Rect],
    alive: &[u32],
    key: impl Fn(&Rect) -> (i64, i64),
    poll: &mut Poll<'_>,
) -> Result<Vec<(i64, i64, u32)>, Stop> {
    let mut keys: Vec<(i64, i64, u32)> = alive
        .iter()
        .filter(|&&r| rects[r as usize].plain)
        .map(|&r| {
            let (a, b) = key(&rects[r as usize]);
            (a, b, r)
        })
        .collect();
    sort_polled(&mut keys, poll)?;
    Ok(keys)
}

/// The runs of one lifetime in `keys` (sorted by lifetime), as (lower,
/// upper, run).
fn lifetimes(keys: &[(i64, i64, u32)]) -> impl Iterator<Item = (i64, i64, &[(i64, i64, u32)])> {
    let mut rest = keys;
    core::iter::from_fn(move || {
        let &(lower, upper, _) = rest.first()?;
        let len = rest.partition_point(|k| (k.0, k.1) <= (lower, upper));
        let (run, tail) = rest.split_at(len);
        rest = tail;
        Some((lower, upper, run))
    })
}

/// The sum of the rectangles' sizes, if it fits in an `i64`.
pub(super) fn total_size(rects: &[Rect], mut group: impl Iterator<Item = u32>) -> Option<i64> {
    group.try_fold(0i64, |a, r| a.checked_add(rects[r as usize].size))
}

/// Stacks `group` (rectangles of one lifetime) into its first one, each
/// above the last, skipping one whose alignment the stack would break.
pub(super) fn stack(rects: &mut [Rect], members: &mut Members, group: &[u32], gone: &mut [bool]) {
    let first = group[0];
    for &top in &group[1..] {
        let (b, t) = (rects[first as usize], rects[top as usize]);
        // The top's members keep their alignment at `b.size` above.
        let fits = b.size % t.align == 0;
        let merged = b.size.checked_add(t.size);
        if let (true, Some(size), Some(align)) =
            (fits, merged, lcm_within(b.align, t.align, 1 << 40))
        {
            members.absorb(first, top, b.size);
            rects[first as usize].size = size;
            rects[first as usize].align = align;
            gone[top as usize] = true;
        }
    }
}
