//! Integer helpers, one home each: rounding up or down to an alignment,
//! greatest common divisor, least common multiple. Every other module
//! calls these.
// The smallest builds use some of them only.
#![cfg_attr(
    not(all(feature = "heuristics", feature = "constraints")),
    allow(dead_code)
)]

/// The least multiple of `a` (>= 1) at or above `v`, saturating at
/// `i64::MAX` (a saturated offset never fits a capacity, so the caller
/// sees it fail rather than wrap).
#[inline]
pub(crate) fn align_up(v: i64, a: i64) -> i64 {
    if a == 1 {
        return v;
    }
    let r = v.rem_euclid(a);
    if r == 0 {
        v
    } else {
        v.saturating_add(a - r)
    }
}

/// The greatest multiple of `a` (>= 1) at or below `v`.
#[inline]
pub(crate) fn align_down(v: i64, a: i64) -> i64 {
    v - v.rem_euclid(a)
}

/// The greatest common divisor of `a` and `b` (at least 1).
pub(crate) fn gcd(mut a: i64, mut b: i64) -> i64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.checked_abs().unwrap_or(1).max(1)
}

/// The least common multiple of positive `a` and `b`, if it fits in 64
/// bits.
pub(crate) fn lcm(a: i64, b: i64) -> Option<i64> {
    (a / gcd(a, b)).checked_mul(b)
}

/// The least common multiple of positive `a` and `b` if it is at most
/// `limit`.
pub(crate) fn lcm_within(a: i64, b: i64, limit: i64) -> Option<i64> {
    lcm(a, b).filter(|&l| l <= limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn align_up_rounds_to_the_next_multiple_and_saturates() {
        for a in 1..20i64 {
            for v in -50..50i64 {
                let r = align_up(v, a);
                assert!(r >= v && r - v < a && r.rem_euclid(a) == 0, "{v} {a}");
            }
        }
        assert_eq!(align_up(i64::MAX - 1, 4), i64::MAX);
    }

    #[test]
    fn gcd_and_lcm_agree_with_their_definitions() {
        for a in 1..40i64 {
            for b in 1..40i64 {
                let l = lcm(a, b).unwrap();
                assert!(l % a == 0 && l % b == 0);
                assert!((1..l).all(|m| m % a != 0 || m % b != 0));
                assert_eq!(gcd(a, b) * l, a * b);
            }
        }
        assert_eq!(lcm(i64::MAX, i64::MAX - 1), None);
        assert_eq!(lcm_within(4, 6, 11), None);
        assert_eq!(lcm_within(4, 6, 12), Some(12));
    }
}
