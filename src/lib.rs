//! minimalloc: static memory allocation for machine-learning compilers.
//!
//! Each buffer has a lifetime `[lower, upper)` in logical time and a size.
//! The library assigns every buffer an offset so that buffers alive at the
//! same time never overlap in memory, and either everything fits below a
//! capacity or the search proves that nothing can.
//!
//! The exact strategy is MiniMalloc (Moffitt, ASPLOS 2023): a depth-first
//! search over canonical partial solutions with section inference,
//! dominance pruning and dynamic temporal decomposition (docs/DESIGN.md).
//!
//! ```
//! use minimalloc::{plan, Buffer, Options, Problem, Status};
//!
//! let problem = Problem::new(
//!     12,
//!     vec![
//!         Buffer::new("b1", 0, 3, 4),
//!         Buffer::new("b2", 3, 9, 4),
//!         Buffer::new("b3", 0, 9, 4),
//!         Buffer::new("b4", 9, 21, 4),
//!         Buffer::new("b5", 0, 21, 4),
//!     ],
//! )
//! .unwrap();
//! let outcome = plan(&problem, &Options::default());
//! assert_eq!(outcome.status, Status::Solved);
//! let solution = outcome.solution.unwrap();
//! minimalloc::validate(&problem, &solution).unwrap();
//! ```
//!
//! The core (everything but [`io`] and the threads) uses only `core` and
//! `alloc`: build with `--no-default-features` for a `no_std` library.
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

extern crate alloc;

// Without `std`, a build that unwinds on panic still needs std's panic
// runtime to link the cdylib; the core code below never names `std`. The
// tiny profile (panic = "abort") links no std at all.
#[cfg(all(not(feature = "std"), panic = "unwind"))]
extern crate std;

// The rooms, lowest first: base (with deadline and runtime beside it),
// model, gen, exact, graph, heuristic, plan, io, ffi; each imports only
// from those before it (see docs/ARCHITECTURE.md).
//
// Public: what the faces need (the planner, the model, files, instance
// families, the C ABI). The searches' own rooms are public only with the
// feature `internals`, for the benches and the tests that drive them
// directly; the types the public API names are re-exported below.
mod base;
#[cfg(not(feature = "internals"))]
mod deadline;
#[cfg(feature = "internals")]
pub mod deadline;
#[cfg(not(feature = "internals"))]
mod exact;
#[cfg(feature = "internals")]
pub mod exact;
pub mod ffi;
#[cfg(any(test, feature = "gen"))]
pub mod gen;
#[cfg(feature = "constraints")]
mod graph;
#[cfg(all(feature = "heuristics", not(feature = "internals")))]
mod heuristic;
#[cfg(all(feature = "heuristics", feature = "internals"))]
pub mod heuristic;
#[cfg(feature = "std")]
pub mod io;
pub mod model;
pub mod plan;
#[cfg(not(feature = "std"))]
mod runtime;

pub use deadline::{Clock, Deadline, Stop};
pub use exact::{BadPreorder, Key, Params, Preorder, Stats};
#[cfg(feature = "heuristics")]
pub use heuristic::{BadStrategy, Strategy, Variant};
pub use model::load::max_load;
pub use model::problem::{Buffer, BufferError, Error, Field, Gap, Lifetime, Problem, Window};
#[cfg(feature = "constraints")]
pub use model::solution::validate_pooled;
pub use model::solution::{validate, Solution, ValidationError};
pub use plan::{plan, Method, Objective, Options, Outcome, Source, Status};
#[cfg(feature = "heuristics")]
pub use plan::{Progress, Report};
