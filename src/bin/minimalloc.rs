//! The `minimalloc` command: reads buffers from a CSV file, places them,
//! writes the input's columns plus `offset`.
//!
//! Exit codes: 0 solved, 2 infeasible (or no placement found), 3 timed
//! out, 1 bad input or I/O error, each with a one-line message on stderr.

use std::process::ExitCode;
use std::time::Duration;

use minimalloc::{csv, max_load, plan, validate, Options, Status};

const USAGE: &str = "\
usage: minimalloc --capacity=N --input=FILE [--output=FILE] [options]

  --capacity N      memory capacity every buffer must fit below
  --input FILE      buffers as CSV: id,lower,upper,size[,alignment][,hint][,gaps][,offset]
  --output FILE     where to write the input's columns plus offset (default: stdout)
  --timeout DUR     give up after DUR, e.g. 60s, 500ms, 2m (default: none)
  --validate        check the solution before writing it
  --stats           print buffers, max load, height, fragmentation, nodes, time to stderr
  --help            this text

exit codes: 0 solved, 2 infeasible, 3 timed out, 1 bad input or I/O error";

struct Args {
    capacity: Option<i64>,
    input: Option<String>,
    output: Option<String>,
    timeout: Option<Duration>,
    validate: bool,
    stats: bool,
}

fn parse_duration(text: &str) -> Result<Option<Duration>, String> {
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
        .map_err(|_| format!("bad duration {text:?}: expected e.g. 60s, 500ms, 2m"))?;
    let seconds = match unit {
        "" | "s" => value,
        "ms" => value / 1e3,
        "us" => value / 1e6,
        "ns" => value / 1e9,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(format!("bad duration {text:?}: unknown unit {unit:?}")),
    };
    if !seconds.is_finite() || seconds < 0.0 {
        return Err(format!("bad duration {text:?}"));
    }
    Ok(Some(Duration::from_secs_f64(seconds)))
}

fn parse_bool(flag: &str, value: Option<&str>) -> Result<bool, String> {
    match value {
        None | Some("true") | Some("1") => Ok(true),
        Some("false") | Some("0") => Ok(false),
        Some(v) => Err(format!("--{flag} takes true or false, got {v:?}")),
    }
}

fn parse_args(raw: Vec<String>) -> Result<Option<Args>, String> {
    let mut args = Args {
        capacity: None,
        input: None,
        output: None,
        timeout: None,
        validate: false,
        stats: false,
    };
    let mut it = raw.into_iter();
    while let Some(arg) = it.next() {
        let Some(flag) = arg.strip_prefix("--") else {
            return Err(format!("unexpected argument {arg:?}"));
        };
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (flag.to_string(), None),
        };
        let mut value = |inline: Option<String>| -> Result<String, String> {
            inline
                .or_else(|| it.next())
                .ok_or_else(|| format!("--{name} needs a value"))
        };
        match name.as_str() {
            "help" => return Ok(None),
            "capacity" => {
                let v = value(inline)?;
                args.capacity = Some(
                    v.parse()
                        .map_err(|_| format!("--capacity takes an integer, got {v:?}"))?,
                );
            }
            "input" => args.input = Some(value(inline)?),
            "output" => args.output = Some(value(inline)?),
            "timeout" => args.timeout = parse_duration(&value(inline)?)?,
            "validate" => args.validate = parse_bool(&name, inline.as_deref())?,
            "stats" => args.stats = parse_bool(&name, inline.as_deref())?,
            _ => return Err(format!("unknown flag --{name} (see --help)")),
        }
    }
    Ok(Some(args))
}

fn fail(code: u8, message: impl std::fmt::Display) -> ExitCode {
    eprintln!("minimalloc: {message}");
    ExitCode::from(code)
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1).collect()) {
        Ok(Some(a)) => a,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => return fail(1, e),
    };
    let Some(capacity) = args.capacity else {
        return fail(1, "--capacity is required (see --help)");
    };
    let Some(input) = args.input.as_deref() else {
        return fail(1, "--input is required (see --help)");
    };
    let text = match std::fs::read_to_string(input) {
        Ok(t) => t,
        Err(e) => return fail(1, format!("cannot read {input}: {e}")),
    };
    let (problem, table) = match csv::read(&text, capacity) {
        Ok(p) => p,
        Err(e) => return fail(1, format!("{input}: {e}")),
    };
    let options = Options {
        timeout: args.timeout,
        ..Options::default()
    };
    let outcome = plan(&problem, &options);
    if args.stats {
        let load = max_load(&problem);
        let height = outcome.height(&problem);
        eprintln!("buffers        {}", problem.len());
        eprintln!("max load       {load}");
        match outcome.status {
            Status::Solved => {
                let frag = if load > 0 {
                    100.0 * (height - load) as f64 / load as f64
                } else {
                    0.0
                };
                eprintln!("height         {height}");
                eprintln!("fragmentation  {frag:.2}%");
            }
            _ => eprintln!("height         -"),
        }
        eprintln!("nodes          {}", outcome.stats.nodes);
        eprintln!("backtracks     {}", outcome.stats.backtracks);
        eprintln!(
            "time           {:.3} s",
            outcome.stats.elapsed.as_secs_f64()
        );
        let used: Vec<String> = outcome
            .stats
            .solved_by
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(p, n)| format!("{p}:{n}"))
            .collect();
        eprintln!("orderings      {}", used.join(" "));
    }
    let solution = match outcome.status {
        Status::Solved => outcome.solution.expect("a solved outcome has a solution"),
        Status::Infeasible => {
            return fail(2, format!("infeasible: no placement fits capacity {capacity}"))
        }
        Status::NotFound => {
            return fail(
                2,
                format!(
                    "no placement found below capacity {capacity} (not a proof: {} pairs of buffers could interleave through gap windows)",
                    outcome.stats.interleaving
                ),
            )
        }
        Status::TimedOut => return fail(3, "timed out before finding a placement"),
        Status::Cancelled => return fail(3, "cancelled before finding a placement"),
    };
    if args.validate {
        if let Err(e) = validate(&problem, &solution) {
            return fail(1, format!("internal error: the solution is invalid: {e}"));
        }
    }
    let out = table.write(&solution.offsets);
    match args.output.as_deref() {
        None | Some("-") => print!("{out}"),
        Some(path) => {
            if let Err(e) = std::fs::write(path, out) {
                return fail(1, format!("cannot write {path}: {e}"));
            }
        }
    }
    ExitCode::SUCCESS
}
