//! The exact search's switches, each a rule of the paper that can be
//! turned off (to measure it, or to match the reference's flags).

use alloc::vec::Vec;

use super::order::Preorder;

/// Switches for the search's rules, and the orderings it tries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    /// Canonical partial solutions only (offset-, then index-monotonic).
    pub canonical: bool,
    /// Section inference (eq. 3 of the paper).
    pub section_inference: bool,
    /// Raise each section's floor to the lowest min offset of its unplaced
    /// members ("unallocated floor").
    pub effective_floor: bool,
    /// Everything unplaced lies above the last offset used (needs
    /// `canonical`).
    pub monotonic_floor: bool,
    /// Skip buffers at or above the lowest top of an unplaced buffer.
    pub dominance: bool,
    /// Stop trying siblings after a buffer with nothing unplaced above it.
    pub hatless: bool,
    /// Split into independent parts when no buffer crosses a boundary.
    pub decomposition: bool,
    /// Rank buffers by `preorders`; otherwise by input position.
    pub static_preordering: bool,
    /// When the search splits into parts, reorder each part by the section
    /// totals left (for orderings that use totals).
    pub dynamic_preordering: bool,
    /// Orderings tried round-robin (one: no node limit per round).
    pub preorders: Vec<Preorder>,
    /// Between rounds of the orderings, short restarts of them shaken at
    /// random (not in the reference; see `exact::rounds::solve_part`).
    pub shaken_restarts: bool,
    /// Give up after this many nodes in all.
    pub node_limit: Option<u64>,
    /// Search small problems whose buffers have gaps but no windows (a
    /// kernel's separations, lowered) on their conflict graph too, in turns
    /// with the sweep's search and a walk over orders that looks for a
    /// placement (see `graph::search`, `graph::walk`); the rules above rule
    /// the sweep's turns only. The planner sets it for problems with
    /// separations; builds without the `constraints` feature ignore it.
    pub conflict_graph: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            canonical: true,
            section_inference: true,
            effective_floor: true,
            monotonic_floor: true,
            dominance: true,
            hatless: true,
            decomposition: true,
            static_preordering: true,
            dynamic_preordering: true,
            preorders: Preorder::DEFAULTS.to_vec(),
            shaken_restarts: true,
            node_limit: None,
            conflict_graph: false,
        }
    }
}
