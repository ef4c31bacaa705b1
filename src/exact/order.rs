//! Static preorderings: the rank that breaks ties between buffers placed at
//! the same offset, and so decides which buffer the search tries first.

use alloc::vec::Vec;
use core::fmt;
use core::str::FromStr;

use crate::base::trees::MaxTree;
use crate::deadline::{sort_polled, Poll, Stop};
use crate::exact::sweep::Sweep;
use crate::model::problem::Problem;

/// A property of a buffer that a preordering sorts by, largest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    /// `A`: size times lifetime length (the moments a lowering gives its
    /// separations left out, as for `W`).
    Area,
    /// `C`: number of sections the buffer's lifetime covers.
    Sections,
    /// `L`: lifetime start.
    Lower,
    /// `O`: number of overlapping buffers.
    Overlaps,
    /// `T`: total live size of the most contended section it is in.
    Total,
    /// `U`: lifetime end.
    Upper,
    /// `W`: lifetime length, up to the end of the buffer's last live piece
    /// before the moments a lowering gives its separations.
    Width,
    /// `Z`: size.
    Size,
}

impl Key {
    fn letter(self) -> char {
        match self {
            Key::Area => 'A',
            Key::Sections => 'C',
            Key::Lower => 'L',
            Key::Overlaps => 'O',
            Key::Total => 'T',
            Key::Upper => 'U',
            Key::Width => 'W',
            Key::Size => 'Z',
        }
    }

    fn from_letter(c: char) -> Option<Key> {
        Some(match c {
            'A' => Key::Area,
            'C' => Key::Sections,
            'L' => Key::Lower,
            'O' => Key::Overlaps,
            'T' => Key::Total,
            'U' => Key::Upper,
            'W' => Key::Width,
            'Z' => Key::Size,
            _ => return None,
        })
    }
}

/// A static preordering: buffers sorted by these keys, each largest first,
/// ties by input position. Written as letters, e.g. `"WAT"`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Preorder {
    keys: [Option<Key>; 4],
}

impl Preorder {
    /// The orderings MiniMalloc tries round-robin by default: width, area,
    /// total; total, area, width; total, width, area.
    pub const DEFAULTS: [Preorder; 3] = [
        Preorder::of(&[Key::Width, Key::Area, Key::Total]),
        Preorder::of(&[Key::Total, Key::Area, Key::Width]),
        Preorder::of(&[Key::Total, Key::Width, Key::Area]),
    ];

    /// An ordering by up to four keys (further keys are ignored).
    pub const fn of(keys: &[Key]) -> Preorder {
        let mut out = [None; 4];
        let mut i = 0;
        while i < keys.len() && i < 4 {
            out[i] = Some(keys[i]);
            i += 1;
        }
        Preorder { keys: out }
    }

    /// A sort key (smaller first) of a buffer with traits `t` whose most
    /// contended section holds `total`.
    #[inline]
    pub(crate) fn key(&self, t: &Traits, total: i64) -> [i128; 4] {
        let mut out = [0i128; 4];
        for (o, key) in out.iter_mut().zip(self.keys.iter().flatten()) {
            *o = -match key {
                Key::Area => t.area,
                Key::Sections => t.sections as i128,
                Key::Lower => t.lower as i128,
                Key::Overlaps => t.overlaps as i128,
                Key::Total => total as i128,
                Key::Upper => t.upper as i128,
                Key::Width => t.width as i128,
                Key::Size => t.size as i128,
            };
        }
        out
    }

    /// Whether the ordering depends on section totals.
    pub(crate) fn uses_totals(&self) -> bool {
        self.keys.contains(&Some(Key::Total))
    }

    /// `rank[b]`: position of buffer `b` in this ordering, by the sweep's
    /// initial section totals.
    pub(crate) fn ranks(&self, traits: &[Traits], poll: &mut Poll<'_>) -> Result<Vec<u32>, Stop> {
        let n = traits.len();
        let mut order: Vec<([i128; 4], u32)> = (0..n as u32)
            .map(|b| (self.key(&traits[b as usize], traits[b as usize].total), b))
            .collect();
        sort_polled(&mut order, poll)?;
        let mut rank = alloc::vec![0u32; n];
        for (r, &(_, b)) in order.iter().enumerate() {
            rank[b as usize] = r as u32;
        }
        Ok(rank)
    }
}

/// The orderings a search tries: their keys, the buffers' traits, and
/// per ordering the rank of each buffer.
pub(crate) struct Orderings<'a> {
    pub(crate) preorders: &'a [Preorder],
    pub(crate) traits: &'a [Traits],
    pub(crate) ranks: Vec<Vec<u32>>,
}

/// The properties of a buffer that orderings sort by. `total`, the
/// largest section total along the buffer, is the initial one; the search
/// may reorder parts by the totals left.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Traits {
    total: i64,
    area: i128,
    sections: i64,
    lower: i64,
    overlaps: i64,
    upper: i64,
    width: i64,
    size: i64,
}

impl Traits {
    pub(crate) fn of(problem: &Problem, sweep: &Sweep) -> Vec<Traits> {
        let totals = MaxTree::new(&sweep.totals);
        problem
            .buffers()
            .iter()
            .enumerate()
            .map(|(b, buf)| (b, buf, problem.lived(b)))
            .map(|(b, buf, (lower, end))| Traits {
                total: sweep
                    .spans(b as u32)
                    .iter()
                    .map(|s| totals.max(s.first as usize, s.end as usize))
                    .max()
                    .unwrap_or(0),
                area: i128::from(buf.size) * i128::from(end - lower),
                sections: (sweep.hull[b][1] - sweep.hull[b][0]) as i64,
                lower: buf.lower,
                overlaps: (sweep.nbr_at[b + 1] - sweep.nbr_at[b]) as i64,
                upper: buf.upper,
                width: end - lower,
                size: buf.size,
            })
            .collect()
    }
}

impl fmt::Display for Preorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.keys[0].is_none() {
            return f.write_str("input");
        }
        for key in self.keys.iter().flatten() {
            fmt::Write::write_char(f, key.letter())?;
        }
        Ok(())
    }
}

impl fmt::Debug for Preorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A preordering spelled with letters other than `ACLOTUWZ`, or too long.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct BadPreorder(pub alloc::string::String);

impl fmt::Display for BadPreorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::base::text::fill(
            f,
            "bad preordering \"{}\": use up to four of the letters A C L O T U W Z",
            &[crate::base::text::Arg::S(&self.0)],
        )
    }
}

impl FromStr for Preorder {
    type Err = BadPreorder;

    fn from_str(s: &str) -> Result<Preorder, BadPreorder> {
        let bad = || BadPreorder(s.into());
        if s.chars().count() > 4 {
            return Err(bad());
        }
        let mut keys = [None; 4];
        for (i, c) in s.chars().enumerate() {
            keys[i] = Some(Key::from_letter(c).ok_or_else(bad)?);
        }
        Ok(Preorder { keys })
    }
}
