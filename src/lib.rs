//! minimalloc: static memory allocation for machine-learning compilers.
//!
//! Each buffer has a lifetime `[lower, upper)` in logical time and a size.
//! The library assigns every buffer an offset so that buffers alive at the
//! same time never overlap in memory, below a capacity.
//!
//! This first part holds the input model and the validator:
//!
//! ```
//! use minimalloc::{validate, Buffer, Problem, Solution};
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
//! let solution = Solution { offsets: vec![8, 8, 4, 4, 0] };
//! validate(&problem, &solution).unwrap();
//! assert_eq!(solution.height(&problem), 12);
//! ```
//!
//! The core uses only `core` and `alloc`: build with
//! `--no-default-features` for a `no_std` library.
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

extern crate alloc;

// Without `std`, a build that unwinds on panic still needs std's panic
// runtime to link the cdylib; the core code below never names `std`.
#[cfg(all(not(feature = "std"), panic = "unwind"))]
extern crate std;

#[cfg(feature = "std")]
pub mod csv;
pub mod error;
pub mod problem;
pub mod solution;

pub use problem::{Buffer, BufferError, Error, Field, Gap, Lifetime, Problem, Window};
pub use solution::{validate, Solution, ValidationError};
