//! Fewer moments for separations: a cover of the separated pairs by
//! cliques of buffers that must lie apart anyway.
//!
//! Lowering gives every separation group a moment of its own, at which
//! all its members are alive (see `lower`). A compiler that declares its
//! separations pair by pair (thousands of pairs among a hundred buffers)
//! then gets thousands of moments, and every buffer dozens of gaps. But a
//! moment may hold any set of buffers that must take disjoint bytes in
//! every valid placement: pairs separated, and pairs alive together at
//! full size. So the separated pairs not already alive together are
//! covered by such sets, greedily, and each set gets one moment instead.
//! Nothing changes meaning: every pair a moment keeps apart had to be
//! apart, and every separated pair is kept apart by a moment or by its
//! lifetimes. The cover replaces the groups only when it has no more
//! moments and fewer members in all (each membership is a gap to place
//! around), so it is never the worse encoding.
//!
//! Before either, a group that another holds is dropped: one whose units
//! all belong to a second group, each at a size there at least its own
//! (of two alike, the later goes). Its pairs are kept apart at the
//! second's moment, over as many bytes or more. A compiler that declares
//! a stage's buffers again with every window of it that it checks (a
//! group per window) gives hundreds of groups that nest; they shrink to
//! the few that are not held by another.

use alloc::vec::Vec;

use super::buffer::Buffer;

/// Units (lowered buffers) whose pairs a cover is worth building for:
/// beyond this, the groups stay as they are (kernels have a few hundred).
const MAX_UNITS: usize = 512;
/// And at most this many separated pairs.
const MAX_PAIRS: usize = 1 << 17;

/// The sets of units alive together at the separation moments, with the
/// size each takes there (that of its tallest separated member): one set
/// per group in `groups`, or fewer and smaller sets where a cover of the
/// separated pairs gives them. `unit` maps buffers to units, `units` are
/// the lowered buffers before any moment.
pub(super) fn moments(
    buffers: &[Buffer],
    groups: &[Vec<u32>],
    unit: &[u32],
    units: &[Buffer],
) -> Vec<Vec<(u32, i64)>> {
    let per_group: Vec<Vec<(u32, i64)>> = groups
        .iter()
        .map(|members| {
            let mut set: Vec<(u32, i64)> = members
                .iter()
                .map(|&m| (unit[m as usize], buffers[m as usize].size))
                .collect();
            set.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            set.dedup_by_key(|u| u.0);
            set
        })
        .collect();
    let kept = not_held(&per_group, units.len());
    if kept.len() == groups.len() {
        return cover(groups, unit, units, &per_group).unwrap_or(per_group);
    }
    let groups: Vec<Vec<u32>> = kept.iter().map(|&g| groups[g].clone()).collect();
    let mut per_group = per_group;
    let mut index = 0;
    per_group.retain(|_| {
        index += 1;
        kept.binary_search(&(index - 1)).is_ok()
    });
    cover(&groups, unit, units, &per_group).unwrap_or(per_group)
}

/// Above this many words of bit sets (a group's units, one bit a unit)
/// the groups are kept as they are.
const MAX_SET_WORDS: usize = 1 << 20;
/// Nor are more words compared than this, in all: a held group that is
/// kept changes nothing but the encoding's size.
const MAX_COMPARED: u64 = 1 << 26;

/// The groups of `sets` (each its units, sorted, with their sizes) that
/// no other group holds: `h` holds `g` when each unit of `g` is in `h` at
/// a size at least the one it has in `g`, and `g` does not hold `h` in
/// turn or comes after it. Each group is checked against the groups of
/// its unit in the fewest, with bit sets over the units (the words its
/// own units span).
fn not_held(sets: &[Vec<(u32, i64)>], units: usize) -> Vec<usize> {
    let all = || (0..sets.len()).collect();
    let words = units.div_ceil(64);
    if sets.len() < 2 || sets.len().saturating_mul(words) > MAX_SET_WORDS {
        return all();
    }
    let mut bits = alloc::vec![0u64; sets.len() * words];
    let mut groups_of: Vec<Vec<u32>> = alloc::vec![Vec::new(); units];
    for (g, set) in sets.iter().enumerate() {
        for &(u, _) in set {
            bits[g * words + u as usize / 64] |= 1 << (u % 64);
            groups_of[u as usize].push(g as u32);
        }
    }
    // The words group `g`'s units span (its units are sorted).
    let span = |g: usize| match (sets[g].first(), sets[g].last()) {
        (Some(&(a, _)), Some(&(b, _))) => a as usize / 64..b as usize / 64 + 1,
        _ => 0..0,
    };
    let compared = core::cell::Cell::new(0u64);
    let within = |g: usize, h: usize| {
        let words_g = span(g);
        compared.set(compared.get() + words_g.len() as u64);
        words_g
            .map(|w| (bits[g * words + w], bits[h * words + w]))
            .all(|(a, b)| a & !b == 0)
    };
    // Sizes differ between groups only for a colocated unit (its tallest
    // separated member): checked unit by unit, both sets being sorted.
    let sized = |g: usize, h: usize| {
        sets[g].iter().all(|&(u, size)| {
            let at = sets[h].partition_point(|&(v, _)| v < u);
            sets[h]
                .get(at)
                .is_some_and(|&(v, held)| v == u && held >= size)
        })
    };
    let mut kept = Vec::with_capacity(sets.len());
    for (g, set) in sets.iter().enumerate() {
        let Some(rarest) = set
            .iter()
            .map(|&(u, _)| u as usize)
            .min_by_key(|&u| groups_of[u].len())
        else {
            kept.push(g);
            continue;
        };
        let mut held = false;
        for &h in &groups_of[rarest] {
            let h = h as usize;
            let holds_g = h != g && within(g, h) && sized(g, h);
            if holds_g && (h < g || !(within(h, g) && sized(h, g))) {
                held = true;
                break;
            }
        }
        if compared.get() > MAX_COMPARED {
            return all();
        }
        if !held {
            kept.push(g);
        }
    }
    kept
}

/// The cover, if it applies and beats the groups.
fn cover(
    groups: &[Vec<u32>],
    unit: &[u32],
    units: &[Buffer],
    per_group: &[Vec<(u32, i64)>],
) -> Option<Vec<Vec<(u32, i64)>>> {
    // Only units that carry one buffer take part: a colocated unit's
    // size at a moment depends on which of its members is separated.
    let mut carried = alloc::vec![0u32; units.len()];
    for &u in unit {
        carried[u as usize] += 1;
    }
    let simple = |g: &Vec<u32>| g.iter().all(|&m| carried[unit[m as usize] as usize] == 1);
    let covered: Vec<usize> = (0..groups.len()).filter(|&g| simple(&groups[g])).collect();
    if covered.len() < 2 {
        return None;
    }
    // The units involved, numbered 0..k.
    let mut index = alloc::vec![u32::MAX; units.len()];
    let mut vertex: Vec<u32> = Vec::new();
    let mut pairs = 0usize;
    for &g in &covered {
        let len = per_group[g].len();
        pairs = pairs.saturating_add(len * len.saturating_sub(1) / 2);
        for &(u, _) in &per_group[g] {
            if index[u as usize] == u32::MAX {
                index[u as usize] = vertex.len() as u32;
                vertex.push(u);
            }
        }
    }
    // Groups that are fewer than their buffers already share moments
    // well (a kernel's pipeline stages: a few dozen groups of dozens);
    // the cover pays where groups outnumber buffers, as pairs do.
    if vertex.len() > MAX_UNITS || pairs > MAX_PAIRS || covered.len() <= vertex.len() {
        return None;
    }
    let k = vertex.len();
    let words = k.div_ceil(64);
    let set = |rows: &mut [u64], a: usize, b: usize| {
        rows[a * words + b / 64] |= 1 << (b % 64);
        rows[b * words + a / 64] |= 1 << (a % 64);
    };
    let unset = |rows: &mut [u64], a: usize, b: usize| {
        rows[a * words + b / 64] &= !(1 << (b % 64));
        rows[b * words + a / 64] &= !(1 << (a % 64));
    };
    let has = |rows: &[u64], a: usize, b: usize| rows[a * words + b / 64] >> (b % 64) & 1 == 1;
    // Pairs that must lie apart: separated, or alive together at full
    // size (no gaps, lifetimes overlapping). The separated ones of the
    // first kind only are left to cover.
    let mut apart = alloc::vec![0u64; k * words];
    let mut uncovered = alloc::vec![0u64; k * words];
    for &g in &covered {
        let set_g = &per_group[g];
        for (i, &(a, _)) in set_g.iter().enumerate() {
            for &(b, _) in &set_g[i + 1..] {
                let (x, y) = (index[a as usize] as usize, index[b as usize] as usize);
                set(&mut apart, x, y);
                set(&mut uncovered, x, y);
            }
        }
    }
    for x in 0..k {
        for y in x + 1..k {
            let (a, b) = (&units[vertex[x] as usize], &units[vertex[y] as usize]);
            if a.gaps.is_empty() && b.gaps.is_empty() && a.lower < b.upper && b.lower < a.upper {
                set(&mut apart, x, y);
                unset(&mut uncovered, x, y);
            }
        }
    }
    let row_count = |rows: &[u64], x: usize| -> u32 {
        rows[x * words..(x + 1) * words]
            .iter()
            .map(|w| w.count_ones())
            .sum()
    };
    let mut left: Vec<u32> = (0..k).map(|x| row_count(&uncovered, x)).collect();
    let mut cliques: Vec<Vec<usize>> = Vec::new();
    let mut gain = alloc::vec![0u32; k];
    let mut clique: Vec<usize> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    // Greedy: the unit with the most pairs left to cover, then, among
    // those apart from every member so far, the one with the most pairs
    // left into the set (ties: the most left at all), while one adds any.
    while let Some(first) = (0..k)
        .filter(|&x| left[x] > 0)
        .max_by_key(|&x| (left[x], k - x))
    {
        clique.clear();
        clique.push(first);
        open.clear();
        open.extend((0..k).filter(|&y| y != first && has(&apart, first, y)));
        for &y in &open {
            gain[y] = u32::from(has(&uncovered, first, y));
        }
        while let Some(at) = (0..open.len())
            .filter(|&i| gain[open[i]] > 0)
            .max_by_key(|&i| (gain[open[i]], left[open[i]], k - open[i]))
        {
            let next = open.swap_remove(at);
            clique.push(next);
            open.retain(|&y| has(&apart, next, y));
            for &y in &open {
                gain[y] += u32::from(has(&uncovered, next, y));
            }
        }
        for (i, &x) in clique.iter().enumerate() {
            for &y in &clique[i + 1..] {
                if has(&uncovered, x, y) {
                    unset(&mut uncovered, x, y);
                    left[x] -= 1;
                    left[y] -= 1;
                }
            }
        }
        cliques.push(clique.clone());
    }
    let by_groups: usize = covered.iter().map(|&g| per_group[g].len()).sum();
    let by_cover: usize = cliques.iter().map(Vec::len).sum();
    if cliques.len() > covered.len() || by_cover >= by_groups {
        return None;
    }
    let mut out: Vec<Vec<(u32, i64)>> = (0..groups.len())
        .filter(|&g| !simple(&groups[g]))
        .map(|g| per_group[g].clone())
        .collect();
    for clique in cliques {
        let mut set: Vec<(u32, i64)> = clique
            .iter()
            .map(|&x| {
                let u = vertex[x];
                (u, units[u as usize].size)
            })
            .collect();
        set.sort_unstable();
        out.push(set);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::rng::Rng;

    /// Buffers `0..n` of random lifetimes (some with gaps), and random
    /// groups: pairs mostly, some larger; every buffer its own unit.
    fn instance(rng: &mut Rng, n: usize) -> (Vec<Buffer>, Vec<Vec<u32>>) {
        let buffers: Vec<Buffer> = (0..n)
            .map(|i| {
                let lower = rng.below(0, 20);
                let mut b = Buffer::new(
                    alloc::format!("{i}"),
                    lower,
                    lower + rng.below(1, 8),
                    rng.below(1, 9),
                );
                if rng.below(0, 6) == 0 && b.upper - b.lower >= 3 {
                    b.gaps.push(super::super::buffer::Gap {
                        lower: b.lower + 1,
                        upper: b.lower + 2,
                        window: None,
                    });
                }
                b
            })
            .collect();
        let mut groups = Vec::new();
        let density = rng.below(1, 10);
        for a in 0..n as u32 {
            for b in a + 1..n as u32 {
                if rng.below(0, 10) < density {
                    groups.push(alloc::vec![a, b]);
                }
            }
        }
        for _ in 0..rng.below(0, 3) {
            let k = rng.below(2, 6) as usize;
            let mut g: Vec<u32> = (0..k).map(|_| rng.below(0, n as i64) as u32).collect();
            g.sort_unstable();
            g.dedup();
            if g.len() >= 2 {
                groups.push(g);
            }
        }
        (buffers, groups)
    }

    /// Whether two buffers must take disjoint bytes whatever the placement
    /// for their lifetimes alone: alive together, at full size.
    fn alive_together(a: &Buffer, b: &Buffer) -> bool {
        a.gaps.is_empty() && b.gaps.is_empty() && a.lower < b.upper && b.lower < a.upper
    }

    /// The moments keep exactly the separations: every separated pair not
    /// alive together shares a moment, every pair sharing a moment is
    /// separated or alive together, each unit at its size; and there are
    /// never more moments, nor more memberships, than groups give.
    #[test]
    fn moments_cover_every_separated_pair_and_nothing_else() {
        let mut rng = Rng::new(5);
        let mut shrunk = 0;
        for _ in 0..3000 {
            let n = rng.below(2, 40) as usize;
            let (buffers, groups) = instance(&mut rng, n);
            let unit: Vec<u32> = (0..n as u32).collect();
            let sets = moments(&buffers, &groups, &unit, &buffers);
            let mut separated = alloc::vec![alloc::vec![false; n]; n];
            for g in &groups {
                for &a in g {
                    for &b in g {
                        separated[a as usize][b as usize] |= a != b;
                    }
                }
            }
            let mut together = alloc::vec![alloc::vec![false; n]; n];
            for set in &sets {
                for &(a, size) in set {
                    assert_eq!(size, buffers[a as usize].size);
                    for &(b, _) in set {
                        if a != b {
                            let (x, y) = (a as usize, b as usize);
                            assert!(separated[x][y] || alive_together(&buffers[x], &buffers[y]));
                            together[x][y] = true;
                        }
                    }
                }
            }
            for x in 0..n {
                for y in 0..n {
                    if separated[x][y] && !alive_together(&buffers[x], &buffers[y]) {
                        assert!(together[x][y], "{x} and {y} separated, no moment");
                    }
                }
            }
            let members = |s: &[Vec<(u32, i64)>]| s.iter().map(Vec::len).sum::<usize>();
            let by_groups: usize = groups
                .iter()
                .map(|g| {
                    let mut g = g.clone();
                    g.sort_unstable();
                    g.dedup();
                    g.len()
                })
                .sum();
            assert!(sets.len() <= groups.len());
            assert!(members(&sets) <= by_groups);
            shrunk += usize::from(sets.len() < groups.len());
        }
        assert!(shrunk > 1000, "the cover was used {shrunk} times");
    }

    /// Groups that nest (every window of a stage declared again), over
    /// units that carry one buffer or several (colocated, of different
    /// sizes), fewer groups than units (so no cover is built): the
    /// moments are the groups no other holds. Every group is held by a
    /// moment (its units there, each at its size or more), every moment
    /// is one of the groups, and no moment holds another.
    #[test]
    fn groups_held_by_another_are_dropped() {
        let mut rng = Rng::new(11);
        let (mut dropped, mut by_size) = (0, 0);
        for _ in 0..2000 {
            let n = rng.below(4, 40) as usize;
            // Units: most buffers alone, some two or three to a unit.
            let mut unit: Vec<u32> = Vec::with_capacity(n);
            let mut next = 0u32;
            while unit.len() < n {
                let k = [1, 1, 1, 2, 3][rng.below(0, 5) as usize].min(n - unit.len());
                unit.extend(core::iter::repeat_n(next, k));
                next += 1;
            }
            let units: Vec<Buffer> = (0..next)
                .map(|u| Buffer::new(alloc::format!("u{u}"), 0, 1, 1))
                .collect();
            let buffers: Vec<Buffer> = (0..n)
                .map(|i| Buffer::new(alloc::format!("{i}"), 0, 1, rng.below(1, 9)))
                .collect();
            // Groups: windows of the buffers' order, nested often, and
            // some drawn again; at most as many as the units.
            let mut groups: Vec<Vec<u32>> = Vec::new();
            for _ in 0..rng.below(1, next as i64 + 1) {
                let start = rng.below(0, n as i64 - 1) as u32;
                let end = (start + rng.below(2, 12) as u32).min(n as u32);
                let g: Vec<u32> = (start..end).collect();
                if rng.below(0, 4) == 0 {
                    groups.push(g.clone());
                }
                groups.push(g);
            }
            groups.truncate(next as usize);
            let sets = moments(&buffers, &groups, &unit, &units);
            let size_in =
                |set: &[(u32, i64)], u: u32| set.iter().find(|&&(v, _)| v == u).map(|&(_, s)| s);
            // A group's own set: its units, each at its tallest member.
            let own: Vec<Vec<(u32, i64)>> = groups
                .iter()
                .map(|g| {
                    let mut set: Vec<(u32, i64)> = Vec::new();
                    for &m in g {
                        let (u, size) = (unit[m as usize], buffers[m as usize].size);
                        match set.iter_mut().find(|(v, _)| *v == u) {
                            Some(entry) => entry.1 = entry.1.max(size),
                            None => set.push((u, size)),
                        }
                    }
                    set.sort_unstable();
                    set
                })
                .collect();
            let holds = |h: &[(u32, i64)], g: &[(u32, i64)]| {
                g.iter()
                    .all(|&(u, size)| size_in(h, u).is_some_and(|s| s >= size))
            };
            for (g, set) in own.iter().enumerate() {
                let held = sets.iter().any(|m| holds(m, set));
                assert!(held, "group {g} {set:?} is in no moment: {sets:?}");
            }
            for (i, m) in sets.iter().enumerate() {
                assert!(own.contains(m), "moment {m:?} is no group's");
                for (j, other) in sets.iter().enumerate() {
                    assert!(i == j || !holds(other, m), "{other:?} holds {m:?}");
                }
            }
            dropped += usize::from(sets.len() < groups.len());
            // A group whose units another holds, but one at a smaller size.
            by_size += usize::from(own.iter().enumerate().any(|(g, set)| {
                own.iter().enumerate().any(|(h, other)| {
                    g != h
                        && set.iter().all(|&(u, _)| size_in(other, u).is_some())
                        && !holds(other, set)
                })
            }));
        }
        assert!(
            dropped > 500 && by_size > 50,
            "{dropped} dropped, {by_size} by size"
        );
    }

    /// Past the bit sets' limit nothing is dropped (each group keeps its
    /// moment, as before the check): two alike groups stay two; within
    /// it, one goes.
    #[test]
    fn past_the_limits_every_group_is_kept() {
        let set = alloc::vec![(3u32, 1i64), (70, 2)];
        let sets = [set.clone(), set];
        assert_eq!(not_held(&sets, 128), [0]);
        assert_eq!(not_held(&sets, 64 * (MAX_SET_WORDS / 2 + 1)), [0, 1]);
    }

    /// Separations declared pair by pair among three sets of buffers
    /// that never meet in time: the cover finds the three sets.
    #[test]
    fn pairs_of_three_cliques_come_back_as_three_moments() {
        let buffers: Vec<Buffer> = (0..30)
            .map(|i| Buffer::new(alloc::format!("{i}"), 2 * i, 2 * i + 1, 1 + i % 4))
            .collect();
        let mut groups = Vec::new();
        for c in 0..3u32 {
            for a in 0..10 {
                for b in a + 1..10 {
                    groups.push(alloc::vec![c * 10 + a, c * 10 + b]);
                }
            }
        }
        let unit: Vec<u32> = (0..30).collect();
        let mut sets = moments(&buffers, &groups, &unit, &buffers);
        sets.sort_unstable();
        assert_eq!(sets.len(), 3);
        for (c, set) in sets.iter().enumerate() {
            let members: Vec<u32> = set.iter().map(|&(u, _)| u).collect();
            assert_eq!(
                members,
                (10 * c as u32..10 * c as u32 + 10).collect::<Vec<_>>()
            );
        }
    }
}
