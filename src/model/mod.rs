//! The input model: buffers, the problem that holds them, what compiler
//! passes declare beyond lifetimes and sizes (colocations, separations,
//! pools), and the errors that refuse bad input.
//!
//! Uses go down this list, never up: `error` and `buffer` are leaves;
//! `links` and `pools` hold the declared groups as data; `problem` holds
//! buffers and groups and checks buffers as they come; `declare` checks
//! and records groups on a problem; `lower` derives problems from one,
//! with `cover` for the moments of separations.

pub mod buffer;
#[cfg(feature = "constraints")]
mod cover;
#[cfg(feature = "constraints")]
mod declare;
pub mod error;
#[cfg(feature = "constraints")]
pub mod links;
pub mod load;
#[cfg(feature = "constraints")]
mod lower;
#[cfg(feature = "constraints")]
pub mod pools;
pub mod problem;
#[cfg(feature = "constraints")]
pub(crate) mod reuse;
pub mod solution;
