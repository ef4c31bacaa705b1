//! Messages without `core::fmt`'s formatting machinery: a template with
//! `{}` holes filled from a list of values. The on-device build counts
//! kilobytes, and every `write!` with arguments costs some; this costs
//! one small function for all messages.

use core::fmt;

/// Where messages go: a `String` or a `Formatter`. Only `put` is needed,
/// and a trait object of `fmt::Write` would also carry `write_fmt` (and
/// with it `core::fmt::write`) into the on-device build.
pub(crate) trait Out {
    /// Appends `s`.
    fn put(&mut self, s: &str) -> fmt::Result;
}

impl Out for alloc::string::String {
    fn put(&mut self, s: &str) -> fmt::Result {
        self.push_str(s);
        Ok(())
    }
}

impl Out for fmt::Formatter<'_> {
    fn put(&mut self, s: &str) -> fmt::Result {
        self.write_str(s)
    }
}

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
pub(crate) fn fill(out: &mut dyn Out, template: &str, args: &[Arg<'_>]) -> fmt::Result {
    let mut args = args.iter();
    let bytes = template.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] != b'{' || bytes[i + 1] != b'}' {
            i += 1;
            continue;
        }
        out.put(template.get(start..i).unwrap_or(""))?;
        match args.next() {
            Some(Arg::I(v)) => {
                if *v < 0 {
                    out.put("-")?;
                }
                write_u64(out, v.unsigned_abs())?;
            }
            Some(Arg::U(v)) => write_u64(out, *v)?,
            Some(Arg::S(s)) => out.put(s)?,
            None => out.put("{}")?,
        }
        i += 2;
        start = i;
    }
    out.put(template.get(start..).unwrap_or(""))
}

fn write_u64(out: &mut dyn Out, v: u64) -> fmt::Result {
    // Most significant digit first, each a one-character slice of DIGITS.
    const DIGITS: &str = "0123456789";
    let mut scale = 1u64;
    while v / scale >= 10 {
        scale *= 10;
    }
    loop {
        let d = ((v / scale) % 10) as usize;
        out.put(DIGITS.get(d..d + 1).unwrap_or("?"))?;
        if scale == 1 {
            return Ok(());
        }
        scale /= 10;
    }
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
