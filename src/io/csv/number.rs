//! Saying what is wrong with a number, one way for every reader (the CSV
//! columns and the command's flags).

use std::string::String;

/// What is wrong with `text` as a 64-bit integer: not a number at all,
/// or one outside the range (the CLI's flags say it the same way).
pub fn integer_error(text: &str, kind: &std::num::IntErrorKind) -> String {
    use std::num::IntErrorKind;
    match kind {
        IntErrorKind::PosOverflow => {
            std::format!("{text:?} is above the largest 64-bit integer, 2^63 - 1")
        }
        IntErrorKind::NegOverflow => {
            std::format!("{text:?} is below the smallest 64-bit integer, -2^63")
        }
        _ => std::format!("expected an integer, got {text:?}"),
    }
}
