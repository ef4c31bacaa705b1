//! Command-line flags: `--name value` or `--name=value`; booleans may stand
//! alone. Every bad value names its flag and says what was expected.

use std::time::Duration;

/// The flags of one command, in order, as `(name, value)`.
pub struct Flags {
    items: Vec<(String, Option<String>)>,
}

impl Flags {
    /// Splits `raw` into flags; a value is taken from the next argument
    /// when the flag has no `=` and the next argument is not a flag.
    pub fn parse(raw: Vec<String>, booleans: &[&str]) -> Result<Flags, String> {
        let mut items = Vec::new();
        let mut it = raw.into_iter().peekable();
        while let Some(arg) = it.next() {
            let Some(flag) = arg.strip_prefix("--") else {
                return Err(format!("unexpected argument {arg:?} (flags start with --)"));
            };
            let (name, inline) = match flag.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (flag.to_string(), None),
            };
            let value = match inline {
                Some(v) => Some(v),
                None if booleans.contains(&name.as_str()) => None,
                None => match it.peek() {
                    Some(next) if !next.starts_with("--") => it.next(),
                    _ => return Err(format!("--{name} needs a value")),
                },
            };
            items.push((name, value));
        }
        Ok(Flags { items })
    }

    /// The flags in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Option<&str>)> {
        self.items.iter().map(|(n, v)| (n.as_str(), v.as_deref()))
    }
}

/// The value of `--flag`, or an error if a boolean flag was given none.
pub fn required<'a>(flag: &str, value: Option<&'a str>) -> Result<&'a str, String> {
    value.ok_or_else(|| format!("--{flag} needs a value"))
}

/// A boolean flag: alone, or `=true`/`=false` (also 1/0).
pub fn boolean(flag: &str, value: Option<&str>) -> Result<bool, String> {
    match value {
        None | Some("true") | Some("1") => Ok(true),
        Some("false") | Some("0") => Ok(false),
        Some(v) => Err(format!("--{flag} takes true or false, got {v:?}")),
    }
}

/// An integer, decimal or `0x` hexadecimal, at least `min`.
pub fn integer(flag: &str, value: Option<&str>, min: i64) -> Result<i64, String> {
    let text = required(flag, value)?.trim().replace('_', "");
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => i64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    match parsed {
        Ok(v) if v >= min => Ok(v),
        Ok(v) => Err(format!("--{flag} must be at least {min}, got {v}")),
        Err(_) => Err(format!("--{flag} takes an integer, got {text:?}")),
    }
}

/// A duration such as 60s, 500ms, 2m, 1.5h, or none/inf for no limit.
pub fn duration(flag: &str, value: Option<&str>) -> Result<Option<Duration>, String> {
    let text = required(flag, value)?;
    let t = text.trim();
    if t == "inf" || t == "none" {
        return Ok(None);
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("--{flag}: bad duration {text:?}: expected e.g. 60s, 500ms, 2m"))?;
    let seconds = match unit {
        "" | "s" => value,
        "ms" => value / 1e3,
        "us" => value / 1e6,
        "ns" => value / 1e9,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => {
            return Err(format!(
                "--{flag}: bad duration {text:?}: unknown unit {unit:?}"
            ))
        }
    };
    if !seconds.is_finite() || seconds < 0.0 {
        return Err(format!("--{flag}: bad duration {text:?}"));
    }
    Ok(Some(Duration::from_secs_f64(seconds)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(args: &[&str]) -> Result<Vec<(String, Option<String>)>, String> {
        let f = Flags::parse(args.iter().map(|s| s.to_string()).collect(), &["stats"])?;
        Ok(f.iter()
            .map(|(n, v)| (n.to_string(), v.map(String::from)))
            .collect())
    }

    #[test]
    fn values_inline_or_next_and_booleans_alone() {
        let got = flags(&["--capacity=5", "--input", "a.csv", "--stats", "--seed", "7"]).unwrap();
        assert_eq!(got[0], ("capacity".into(), Some("5".into())));
        assert_eq!(got[1], ("input".into(), Some("a.csv".into())));
        assert_eq!(got[2], ("stats".into(), None));
        assert_eq!(got[3], ("seed".into(), Some("7".into())));
        assert!(flags(&["--input"])
            .unwrap_err()
            .contains("--input needs a value"));
        assert!(flags(&["--input", "--stats"]).is_err());
        assert!(flags(&["x.csv"])
            .unwrap_err()
            .contains("unexpected argument"));
    }

    #[test]
    fn numbers_and_durations() {
        assert_eq!(integer("base", Some("0x1000"), 0), Ok(4096));
        assert_eq!(integer("capacity", Some("1_048_576"), 1), Ok(1 << 20));
        assert!(integer("threads", Some("-1"), 0)
            .unwrap_err()
            .contains("at least 0"));
        assert!(integer("seed", Some("x"), 0)
            .unwrap_err()
            .contains("takes an integer"));
        assert_eq!(
            duration("timeout", Some("1.5s")),
            Ok(Some(Duration::from_millis(1500)))
        );
        assert_eq!(
            duration("timeout", Some("2m")),
            Ok(Some(Duration::from_secs(120)))
        );
        assert_eq!(duration("timeout", Some("none")), Ok(None));
        assert!(duration("timeout", Some("5 parsecs")).is_err());
        assert_eq!(boolean("stats", None), Ok(true));
        assert!(boolean("stats", Some("maybe")).is_err());
    }
}
