//! The exact search the planner calls: with the constraints, the one that
//! takes turns on conflict graphs where a problem suits them (`graph`);
//! without (the tiny build), the sweep's alone (`exact`). Both have the
//! same `solve`, `solve_remembering` and `Memo`.

#[cfg(not(feature = "constraints"))]
pub(super) use crate::exact::solve;
#[cfg(all(not(feature = "constraints"), feature = "heuristics"))]
pub(super) use crate::exact::{solve_remembering, Memo};
#[cfg(feature = "constraints")]
pub(super) use crate::graph::solve;
#[cfg(all(feature = "constraints", feature = "heuristics"))]
pub(super) use crate::graph::{solve_remembering, Memo};
