//! What merging passes on the way to the coarse problem: the levels of
//! rectangles it keeps (a finer level for the planner to refine on), and
//! the rectangles as they stood before the first unguided stack (the
//! coarse problem a coarsening without those guesses makes).

use alloc::vec::Vec;

use super::rect::{Members, Rect};
use crate::deadline::{Poll, Stop};
use crate::model::problem::Buffer;

/// A level of merging.
#[derive(Clone)]
pub(super) struct Level {
    /// Its rectangles as buffers.
    pub(super) buffers: Vec<Buffer>,
    /// Per original buffer, its rectangle and its offset inside it.
    pub(super) at: Vec<(u32, i64)>,
}

/// The levels merging passes on the way: at the start of a round, once
/// at most half as many rectangles are left as at the last one kept (and
/// at most half the buffers), the rectangles are kept as a level; the
/// last few are held. Each costs a pass over the buffers, a few in all.
pub(super) struct Passed<'b> {
    /// Whether levels are kept at all.
    pub(super) keeps: bool,
    pub(super) buffers: &'b [Buffer],
    pub(super) levels: Vec<Level>,
    /// The rectangles and the levels held just before the first unguided
    /// stack (see `Coarse::guided`).
    pub(super) guided: Option<Guided>,
}

/// Merging as it stood before the first unguided stack.
pub(super) struct Guided {
    pub(super) level: Level,
    pub(super) levels: Vec<Level>,
}

/// The levels [`Passed`] holds: enough that one has at least twice the
/// rectangles of the last round's (the last level kept can be that
/// round's own).
const LEVELS_HELD: usize = 3;

impl Passed<'_> {
    pub(super) fn round(
        &mut self,
        rects: &[Rect],
        members: &Members,
        alive: &[u32],
        poll: &mut Poll<'_>,
    ) -> Result<(), Stop> {
        let last = self
            .levels
            .last()
            .map_or(self.buffers.len(), |l| l.buffers.len());
        if !self.keeps || 2 * alive.len() > last {
            return Ok(());
        }
        if self.levels.len() == LEVELS_HELD {
            self.levels.remove(0);
        }
        let level = coarse_buffers(self.buffers, rects, members, alive, poll)?;
        self.levels.push(level);
        Ok(())
    }

    /// Keeps the rectangles as they are and the levels held, once: the
    /// first unguided stack is about to be made.
    pub(super) fn before_unguided(
        &mut self,
        rects: &[Rect],
        members: &Members,
        alive: &[u32],
        poll: &mut Poll<'_>,
    ) -> Result<(), Stop> {
        if self.guided.is_none() {
            let level = coarse_buffers(self.buffers, rects, members, alive, poll)?;
            let levels = self.levels.clone();
            self.guided = Some(Guided { level, levels });
        }
        Ok(())
    }
}

/// The buffers of the coarse problem (one per rectangle left), and where
/// each buffer of the original lies: (its coarse buffer, its offset in it).
pub(super) fn coarse_buffers(
    buffers: &[Buffer],
    rects: &[Rect],
    members: &Members,
    alive: &[u32],
    poll: &mut Poll<'_>,
) -> Result<Level, Stop> {
    let mut at = alloc::vec![(0u32, 0i64); buffers.len()];
    let mut coarse: Vec<Buffer> = Vec::with_capacity(alive.len());
    for (k, &r) in alive.iter().enumerate() {
        let rect = rects[r as usize];
        let list = &members.lists[r as usize];
        for &(m, inside) in list {
            at[m as usize] = (k as u32, inside + members.base[r as usize]);
        }
        let buffer = if list.len() == 1 {
            let mut b = buffers[rect.origin as usize].clone();
            b.id = alloc::string::String::new();
            b.hint = None;
            b
        } else {
            Buffer::new("", rect.lower, rect.upper, rect.size).with_alignment(rect.align)
        };
        coarse.push(buffer);
        poll.tick(1 + list.len() as u64)?;
    }
    Ok(Level {
        buffers: coarse,
        at,
    })
}
