//! What crosses a file (feature `std`): the reference CSV format, read and
//! written, and the SVG picture of a placement.

pub mod csv;
pub mod svg;
