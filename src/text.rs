//! Messages without `core::fmt`'s formatting machinery: a template with
//! `{}` holes filled from a list of values. The on-device build counts
//! kilobytes, and every `write!` with arguments costs some; this costs
//! one small function for all messages.

use core::fmt::{self, Write};

/// A value for a `{}` hole.
#[derive(Clone, Copy)]
pub(crate) enum Arg<'a> {
    /// A signed integer.
    I(i64),
    /// An unsigned integer.
    U(u64),
    /// Text, written as it is.
    S(&'a str),
}

/// Writes `template` to `out`, each `{}` replaced by the next of `args`.
pub(crate) fn fill(out: &mut dyn Write, template: &str, args: &[Arg<'_>]) -> fmt::Result {
    let mut args = args.iter();
    let bytes = template.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] != b'{' || bytes[i + 1] != b'}' {
            i += 1;
            continue;
        }
        out.write_str(template.get(start..i).unwrap_or(""))?;
        match args.next() {
            Some(Arg::I(v)) => {
                if *v < 0 {
                    out.write_char('-')?;
                }
                write_u64(out, v.unsigned_abs())?;
            }
            Some(Arg::U(v)) => write_u64(out, *v)?,
            Some(Arg::S(s)) => out.write_str(s)?,
            None => out.write_str("{}")?,
        }
        i += 2;
        start = i;
    }
    out.write_str(template.get(start..).unwrap_or(""))
}

fn write_u64(out: &mut dyn Write, mut v: u64) -> fmt::Result {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for &d in &digits[i..] {
        out.write_char(d as char)?;
    }
    Ok(())
}

/// `fill` into a new string.
pub(crate) fn format(template: &str, args: &[Arg<'_>]) -> alloc::string::String {
    let mut s = alloc::string::String::new();
    let _ = fill(&mut s, template, args);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(template: &str, args: &[Arg<'_>]) -> alloc::string::String {
        let mut s = alloc::string::String::new();
        fill(&mut s, template, args).unwrap();
        s
    }

    #[test]
    fn fills_holes_in_order() {
        assert_eq!(
            render(
                "a {} b {} c {} d",
                &[Arg::I(-42), Arg::U(u64::MAX), Arg::S("x")]
            ),
            "a -42 b 18446744073709551615 c x d"
        );
        assert_eq!(render("{}", &[Arg::I(i64::MIN)]), "-9223372036854775808");
        assert_eq!(render("{}{}", &[Arg::I(0)]), "0{}");
        assert_eq!(render("plain", &[]), "plain");
    }
}
