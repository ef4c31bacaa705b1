//! The merges, one pass each: chains (one size, touching in time),
//! stacks guided by a neighbour's size, paired stacks of neighbouring
//! lifetimes, and the unguided stacks of last resort.

use alloc::vec::Vec;

use super::rect::{Members, Rect};
use crate::deadline::{sort_polled, Poll, Stop};
use crate::math::lcm_within;

/// Stacks plain rectangles that share a lifetime, one on the other: with
/// `guided`, only a set whose sizes add up to the size of a rectangle that
/// ends where they start or starts where they end (at most one set per
/// lifetime a pass); else, of the lifetimes, the quarter whose
/// rectangles cover the least area, all of each.
pub(super) fn stack_pass(
    rects: &mut [Rect],
    members: &mut Members,
    alive: &mut Vec<u32>,
    guided: bool,
    poll: &mut Poll<'_>,
) -> Result<(), Stop> {
    let plain: Vec<u32> = alive
        .iter()
        .copied()
        .filter(|&r| rects[r as usize].plain)
        .collect();
    let keys = sorted_keys(rects, &plain, |r| (r.lower, r.upper), poll)?;
    // The sizes that end at a time, and that start at one.
    let mut ends: Vec<(i64, i64)> = Vec::new();
    let mut starts: Vec<(i64, i64)> = Vec::new();
    if guided {
        ends = plain
            .iter()
            .map(|&r| (rects[r as usize].upper, rects[r as usize].size))
            .collect();
        starts = plain
            .iter()
            .map(|&r| (rects[r as usize].lower, rects[r as usize].size))
            .collect();
        sort_polled(&mut ends, poll)?;
        sort_polled(&mut starts, poll)?;
        ends.dedup();
        starts.dedup();
    }
    let mut gone = alloc::vec![false; rects.len()];
    let mut group: Vec<u32> = Vec::new();
    let mut pending: Vec<(i128, Vec<u32>)> = Vec::new();
    let mut i = 0;
    while i < keys.len() {
        let (lower, upper, _) = keys[i];
        let mut j = i;
        group.clear();
        while j < keys.len() && keys[j].0 == lower && keys[j].1 == upper {
            group.push(keys[j].2);
            j += 1;
        }
        poll.tick((j - i) as u64)?;
        i = j;
        if group.len() < 2 {
            continue;
        }
        if !guided {
            // Only the smallest stacks of the pass (a quarter of them):
            // small rectangles of one lifetime are the likeliest to be two
            // halves of one cut, and merging every lifetime at once would
            // merge coincidences too.
            let area: i128 = group
                .iter()
                .map(|&r| {
                    let r = rects[r as usize];
                    i128::from(r.size) * i128::from(r.upper - r.lower)
                })
                .sum();
            pending.push((area, group.clone()));
            continue;
        }
        {
            // Sizes met on both sides first: a stack that fits the
            // rectangle before it and the one after it is seldom a
            // coincidence.
            let before: Vec<i64> = sizes_at(&ends, lower).collect();
            let after: Vec<i64> = sizes_at(&starts, upper).collect();
            let both = before.iter().copied().filter(|s| after.contains(s));
            let wanted = both
                .chain(before.iter().copied())
                .chain(after.iter().copied());
            let mut chosen = None;
            for target in wanted {
                if let Some(set) = subset_with_sum(rects, &group, target) {
                    chosen = Some(set);
                    break;
                }
            }
            let Some(set) = chosen else { continue };
            group = set;
        }
        stack(rects, members, &group, &mut gone);
    }
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

/// The sizes listed at time `t` in `list` (sorted by time).
fn sizes_at(list: &[(i64, i64)], t: i64) -> impl Iterator<Item = i64> + '_ {
    let from = list.partition_point(|&(x, _)| x < t);
    list[from..]
        .iter()
        .take_while(move |&&(x, _)| x == t)
        .map(|&(_, size)| size)
}

/// Stacks sets of rectangles in two neighbouring lifetimes, `[l, u)` and
/// `[u, v)`, whose sizes add up to one total (all of each lifetime first,
/// else the first pair of sets found), at least one set of two or more:
/// the two stacks then chain.
pub(super) fn paired_stack_pass(
    rects: &mut [Rect],
    members: &mut Members,
    alive: &mut Vec<u32>,
    poll: &mut Poll<'_>,
) -> Result<(), Stop> {
    let keys = sorted_keys(rects, alive, |r| (r.lower, r.upper), poll)?;
    // The lifetimes: (lower, upper, first key, end key).
    let mut groups: Vec<(i64, i64, usize, usize)> = Vec::new();
    let mut i = 0;
    while i < keys.len() {
        let mut j = i;
        while j < keys.len() && keys[j].0 == keys[i].0 && keys[j].1 == keys[i].1 {
            j += 1;
        }
        groups.push((keys[i].0, keys[i].1, i, j));
        i = j;
    }
    poll.tick(keys.len() as u64)?;
    let mut gone = alloc::vec![false; rects.len()];
    let (mut sums_g, mut sums_h) = (Vec::new(), Vec::new());
    let (mut g_items, mut h_items) = (Vec::new(), Vec::new());
    for &(_, upper, from, to) in &groups {
        g_items.clear();
        g_items.extend(
            keys[from..to]
                .iter()
                .map(|k| k.2)
                .filter(|&r| !gone[r as usize]),
        );
        if g_items.is_empty() {
            continue;
        }
        subset_sums(rects, &g_items, &mut sums_g);
        let first = groups.partition_point(|g| g.0 < upper);
        for &(lower, _, hf, ht) in &groups[first..] {
            if lower != upper {
                break;
            }
            h_items.clear();
            h_items.extend(
                keys[hf..ht]
                    .iter()
                    .map(|k| k.2)
                    .filter(|&r| !gone[r as usize]),
            );
            if h_items.is_empty() || g_items.len() + h_items.len() < 3 {
                continue;
            }
            subset_sums(rects, &h_items, &mut sums_h);
            poll.tick((sums_g.len() + sums_h.len()) as u64)?;
            // Whole lifetimes first (the last sums: every bit set).
            let whole = |sums: &[(i64, u32)], n: usize| {
                sums.iter()
                    .find(|s| s.1.count_ones() as usize == n)
                    .map(|s| s.0)
            };
            let mut found = None;
            if whole(&sums_g, g_items.len().min(12)) == whole(&sums_h, h_items.len().min(12)) {
                let all = |n: usize| (1u32 << n.min(12)) - 1;
                found = Some((all(g_items.len()), all(h_items.len())));
            } else {
                for &(sum, mh) in &sums_h {
                    let at = sums_g.partition_point(|x| x.0 < sum);
                    if let Some(&(_, mg)) = sums_g[at..]
                        .iter()
                        .take_while(|x| x.0 == sum)
                        .find(|x| x.1.count_ones() + mh.count_ones() >= 3)
                    {
                        found = Some((mg, mh));
                        break;
                    }
                }
            }
            let Some((mg, mh)) = found else { continue };
            for (mask, items) in [(mg, &g_items), (mh, &h_items)] {
                let set: Vec<u32> = (0..items.len().min(12))
                    .filter(|&k| mask >> k & 1 == 1)
                    .map(|k| items[k])
                    .collect();
                if set.len() >= 2 {
                    stack(rects, members, &set, &mut gone);
                }
            }
            break;
        }
    }
    alive.retain(|&r| !gone[r as usize]);
    Ok(())
}

/// Every non-empty subset of the first 12 of `items` as (sum of sizes,
/// bit mask), by sum.
fn subset_sums(rects: &[Rect], items: &[u32], out: &mut Vec<(i64, u32)>) {
    let k = items.len().min(12);
    out.clear();
    for mask in 1u32..(1 << k) {
        let sum = (0..k)
            .filter(|&b| mask >> b & 1 == 1)
            .map(|b| rects[items[b] as usize].size)
            .fold(0i64, |a, x| a.saturating_add(x));
        out.push((sum, mask));
    }
    out.sort_unstable();
}

/// Stacks `group` (rectangles of one lifetime) into its first one, each
/// above the last, skipping one whose alignment the stack would break.
fn stack(rects: &mut [Rect], members: &mut Members, group: &[u32], gone: &mut [bool]) {
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

/// Two or more of `group` whose sizes add up to `target`, if any (a
/// search over the first 16 of them).
fn subset_with_sum(rects: &[Rect], group: &[u32], target: i64) -> Option<Vec<u32>> {
    let items = &group[..group.len().min(16)];
    let total = items.len();
    // Depth-first over include/exclude, pruned by what is left to add.
    let mut suffix = alloc::vec![0i64; total + 1];
    for k in (0..total).rev() {
        suffix[k] = suffix[k + 1].saturating_add(rects[items[k] as usize].size);
    }
    let mut picked: Vec<u32> = Vec::new();
    fn walk(
        rects: &[Rect],
        items: &[u32],
        suffix: &[i64],
        k: usize,
        left: i64,
        picked: &mut Vec<u32>,
    ) -> bool {
        if left == 0 {
            return picked.len() >= 2;
        }
        if k == items.len() || left < 0 || suffix[k] < left {
            return false;
        }
        picked.push(items[k]);
        if walk(
            rects,
            items,
            suffix,
            k + 1,
            left - rects[items[k] as usize].size,
            picked,
        ) {
            return true;
        }
        picked.pop();
        walk(rects, items, suffix, k + 1, left, picked)
    }
    walk(rects, items, &suffix, 0, target, &mut picked).then_some(picked)
}

/// The plain rectangles among `alive` as `(key, r)`, sorted.
fn sorted_keys(
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

/// Chains plain rectangles of one size where one ends as another starts.
pub(super) fn chain_pass(
    rects: &mut [Rect],
    members: &mut Members,
    alive: &mut Vec<u32>,
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
    let mut gone = alloc::vec![false; rects.len()];
    let mut taken = alloc::vec![false; rects.len()];
    // In order of start, so that a chain grows forward in one pass.
    let mut order: Vec<(i64, i64, u32)> = starts.iter().map(|&(s, l, r)| (l, s, r)).collect();
    sort_polled(&mut order, poll)?;
    for &(_, size, r) in &order {
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
            if rivals {
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
