//! How a flag's text becomes its value: absl's booleans, integers in
//! decimal or hexadecimal, durations as absl writes them, pools,
//! strategies, preorderings, fractions. Each names what it expected.

use std::time::Duration;

use minimalloc::Strategy;

use minimalloc::Preorder;

/// A number from 0 to 1.
pub(crate) fn fraction(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("{s:?} is not a number from 0 to 1")),
    }
}

/// absl's boolean values.
pub(crate) fn absl_bool(text: &str) -> Result<bool, String> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "t" | "yes" | "y" | "1" => Ok(true),
        "false" | "f" | "no" | "n" | "0" => Ok(false),
        _ => Err(format!(
            "expected true or false (or yes/no, 1/0), got {text:?}"
        )),
    }
}

/// An integer, decimal or `0x` hexadecimal, `_` allowed between digits.
pub(crate) fn integer(text: &str) -> Result<i64, String> {
    let t = text.trim().replace('_', "");
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => i64::from_str_radix(hex, 16),
        None => t.parse(),
    };
    parsed.map_err(|e| minimalloc::io::csv::integer_error(text, e.kind()))
}

/// An integer of at least 1.
pub(crate) fn positive(text: &str) -> Result<i64, String> {
    match integer(text)? {
        v if v >= 1 => Ok(v),
        v => Err(format!("must be at least 1, got {v}")),
    }
}

/// An integer of at least 0.
pub(crate) fn natural(text: &str) -> Result<i64, String> {
    match integer(text)? {
        v if v >= 0 => Ok(v),
        v => Err(format!("must not be negative, got {v}")),
    }
}

/// `NAME:CAPACITY[:BASE[:ALIGNMENT]]`.
pub(crate) fn pool(text: &str) -> Result<minimalloc::model::pools::Pool, String> {
    let parts: Vec<&str> = text.split(':').collect();
    if parts.len() < 2 || parts.len() > 4 || parts[0].is_empty() {
        return Err(format!(
            "expected NAME:CAPACITY[:BASE[:ALIGNMENT]], got {text:?}"
        ));
    }
    Ok(minimalloc::model::pools::Pool {
        name: parts[0].to_string(),
        capacity: positive(parts[1])?,
        base: parts.get(2).map_or(Ok(0), |b| natural(b))?,
        alignment: parts.get(3).map_or(Ok(1), |a| positive(a))?,
    })
}

pub(crate) fn strategy(text: &str) -> Result<Strategy, String> {
    text.parse().map_err(|_| {
        let names: Vec<&str> = Strategy::ALL.iter().map(|s| s.name()).collect();
        format!(
            "unknown heuristic {text:?}: use one of {}",
            names.join(", ")
        )
    })
}

/// `--preordering_heuristics`: the orderings in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preorders(pub Vec<Preorder>);

pub(crate) fn preorders(text: &str) -> Result<Preorders, String> {
    text.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| p.parse::<Preorder>().map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()
        .map(Preorders)
}

/// A duration as absl writes them: a sequence of decimal numbers, each
/// with a unit (ns, us, ms, s, m, h), as in `1m30s` or `1.5h`; `inf` for
/// none. A bare number is seconds. Zero means no timeout, as everywhere
/// else in minimalloc; `inf` (or `none`) is returned as zero too.
pub fn duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    if matches!(t, "inf" | "+inf" | "none") {
        return Ok(Duration::ZERO);
    }
    let bad = |why: &str| format!("bad duration {text:?}: {why} (e.g. 60s, 1m30s, 500ms, inf)");
    if t.is_empty() {
        return Err(bad("empty"));
    }
    if let Ok(seconds) = t.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds).map_err(|_| bad("negative or too long"));
    }
    let mut seconds = 0.0f64;
    let mut rest = t;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(digits);
        let value: f64 = number.parse().map_err(|_| bad("expected a number"))?;
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_len);
        let scale = match unit {
            "ns" => 1e-9,
            "us" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            "" => return Err(bad("a unit is missing")),
            other => return Err(bad(&format!("unknown unit {other:?}"))),
        };
        seconds += value * scale;
        rest = next;
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| bad("too long"))
}
