//! Placement that looks at prices: put a buffer, among the offsets where
//! it fits, where it pays least in reuse penalties (ties: the lowest), and
//! a search that lowers what a placement pays by taking a few buffers out
//! and putting them back that way ([`search`]).
//!
//! The frame ([`frame::Priced`]) knows, for each buffer, the buffers whose bytes
//! it may never meet (alive at the same time, or separated) and its priced
//! partners. A buffer the search may move has no fixed offset, no gaps and
//! no colocation; every other buffer stays where it is and is only an
//! obstacle (its live pieces, as the validator sees them) or a partner.
//! Putting a buffer back looks at its obstacles and partners only, so a
//! step costs its neighbourhood, not the problem.
//!
//! Sound by construction: a buffer is only ever put at an offset that is
//! aligned, inside `[0, capacity)` and clear of every obstacle, so every
//! placement the frame holds is valid when the one it started from was.

mod frame;
mod search;

pub(crate) use search::{improve, Effort};
