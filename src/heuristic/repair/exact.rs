//! The exact search on a repair's window: the window's buffers placed
//! among the memory the others hold, which the search sees as fixed
//! blocks. Zero-waste corners (where the load is tight and first-fit's
//! orders leave a sliver) are exactly what it solves on a small window.

use alloc::vec::Vec;

use super::super::layout::{Layout, LocalTime};
use super::super::occupancy::Blocks;
use crate::base::math::{align_down, lcm_within};
use crate::deadline::{Poll, Stop};

/// Windows up to this many buffers may be placed by the exact search,
/// with this many nodes (how often: see the repair's `StepKinds`).
pub(super) const EXACT_WINDOW: usize = 64;
const EXACT_NODES: u64 = 4_000;

/// `window` (buffers of `layout`) placed by the exact search between
/// `floor` and strictly below `old_top`, every other buffer held where it
/// is (as fixed blocks of memory per run of slots of `time`, read off
/// `blocks`); the highest top, with the offsets in `placed`, or `None` when
/// it finds nothing within its node limit or the window has a buffer
/// with a window of its own (those are first-fit's).
pub(super) fn exact_window(
    (layout, window): (&Layout, &[u32]),
    placed: &mut Vec<i64>,
    (blocks, time): (&Blocks, &LocalTime),
    (floor, old_top): (i64, i64),
    poll: &mut Poll<'_>,
) -> Result<Option<i64>, Stop> {
    use crate::model::problem::{Buffer, Problem};
    // Offsets shift down by `base`, a multiple of every alignment in
    // the window, so that the shifted problem keeps them.
    let mut lcm = 1i64;
    for &x in window {
        let b = x as usize;
        // Pieces that hold the whole buffer (a separated buffer's lifetime
        // and moments) become gaps; a piece with a window is first-fit's.
        let full = |p: &crate::heuristic::layout::Slot| p.lower == 0 && p.upper == layout.size[b];
        if !layout.pieces_of(b).iter().all(full) {
            return Ok(None);
        }
        let a = layout.align[b];
        lcm = match lcm_within(lcm, a, 1 << 30) {
            Some(l) => l,
            None => return Ok(None),
        };
    }
    let base = align_down(floor, lcm);
    let capacity = match old_top.checked_sub(base) {
        Some(room) if room > 1 => room - 1,
        _ => return Ok(None),
    };
    let mut buffers: Vec<Buffer> = Vec::with_capacity(window.len());
    let mut gapped = false;
    for &x in window {
        let b = x as usize;
        buffers.push(local_buffer(layout, b, time));
        gapped |= buffers.last().is_some_and(|b| !b.gaps.is_empty());
    }
    held_blocks((blocks, time), (base, capacity), &mut buffers, poll)?;
    let Ok(problem) = Problem::new(capacity, buffers) else {
        return Ok(None);
    };
    // With buffers in pieces (separations lowered), the search on the
    // conflict graph takes turns with the sweep's.
    let params = crate::exact::Params {
        node_limit: Some(EXACT_NODES),
        conflict_graph: gapped,
        ..crate::exact::Params::default()
    };
    let (verdict, stats) = crate::exact::solve(&problem, capacity, &params, poll.deadline());
    // A node scans the window and the blocks held around it: charged by
    // both, so that a step's work follows its time at any size (the
    // repair shares work between kinds of step by it).
    let len = problem.len() as u64;
    poll.tick(2 * stats.nodes * len + 16 * len)?;
    let crate::exact::Verdict::Solved(offsets) = verdict else {
        return Ok(None);
    };
    placed.clear();
    let mut top = i64::MIN;
    for (i, &x) in window.iter().enumerate() {
        let at = offsets[i] + base;
        placed.push(at);
        top = top.max(at + layout.size[x as usize]);
    }
    Ok(Some(top))
}

/// Appends to `buffers` what is in use around the window between `base`
/// and `base + capacity`, shifted down by `base`: fixed blocks, each
/// running over the slots of `time` where the same interval is in use.
fn held_blocks(
    (blocks, time): (&Blocks, &LocalTime),
    (base, capacity): (i64, i64),
    buffers: &mut Vec<crate::model::problem::Buffer>,
    poll: &mut Poll<'_>,
) -> Result<(), Stop> {
    use crate::model::problem::Buffer;
    let slots = time.slots() as u32;
    let mut open: alloc::collections::BTreeMap<(i64, i64), u32> = Default::default();
    let mut now: Vec<(i64, i64)> = Vec::new();
    let mut closed: Vec<((i64, i64), u32)> = Vec::new();
    let block = |buffers: &mut Vec<Buffer>, (lo, hi): (i64, i64), from: u32, to: u32| {
        let (lo, hi) = (lo.max(base), hi.min(base + capacity));
        if lo < hi {
            let fixed = Buffer::new("", i64::from(from), i64::from(to), hi - lo);
            buffers.push(fixed.with_offset(lo - base));
        }
    };
    for t in 0..=slots {
        if t < slots {
            blocks.in_use_at(t, &mut now);
        } else {
            now.clear();
        }
        closed.clear();
        closed.extend(
            open.iter()
                .filter(|(k, _)| now.binary_search(k).is_err())
                .map(|(&k, &v)| (k, v)),
        );
        for &(k, from) in &closed {
            open.remove(&k);
            block(buffers, k, from, t);
        }
        for &k in &now {
            open.entry(k).or_insert(t);
        }
        poll.tick(4 + now.len() as u64)?;
    }
    Ok(())
}

/// Buffer `b` of `layout` in the window's local `time`: its pieces (each
/// holding the whole buffer) in local slots, the time between them gaps.
/// Local time only widens a piece, so what fits here fits the problem.
fn local_buffer(layout: &Layout, b: usize, time: &LocalTime) -> crate::model::problem::Buffer {
    use crate::model::problem::{Buffer, Gap};
    let mut spans: Vec<(i64, i64)> = Vec::new();
    for p in layout.pieces_of(b) {
        let (f, t) = LocalTime::map(Some(time), p.first, p.end);
        let (f, t) = (i64::from(f), i64::from(t).max(i64::from(f) + 1));
        match spans.last_mut() {
            Some(last) if f <= last.1 => last.1 = last.1.max(t),
            _ => spans.push((f, t)),
        }
    }
    let (lower, upper) = match (spans.first(), spans.last()) {
        (Some(first), Some(last)) => (first.0, last.1),
        _ => (0, 1),
    };
    let mut buffer = Buffer::new("", lower, upper, layout.size[b]);
    buffer.alignment = layout.align[b];
    buffer.gaps = spans
        .windows(2)
        .map(|w| Gap {
            lower: w[0].1,
            upper: w[1].0,
            window: None,
        })
        .collect();
    buffer
}
