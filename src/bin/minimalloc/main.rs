//! The `minimalloc` command: reads buffers from a CSV file, places them
//! (below a capacity, or as low as it can), writes the input's columns
//! plus `offset`; `minimalloc gen` writes a synthetic instance.
//!
//! Exit codes: 0 placed, 2 infeasible (or no placement found), 3 timed
//! out or cancelled with no placement, 1 bad input or I/O error, each with
//! a one-line message on stderr.

mod args;
mod progress;

use std::process::ExitCode;

use args::Flags;
use minimalloc::gen::{generate, Family, Spec};
use minimalloc::heuristic::Strategy;
use minimalloc::plan::describe;
use minimalloc::{
    csv, max_load, plan, svg, validate, Lifetime, Method, Objective, Options, Problem, Status,
};

const USAGE: &str = "\
usage: minimalloc --input=FILE --capacity=N [options]       place below a capacity
       minimalloc --input=FILE --minimize [--capacity=N]   place as low as possible
       minimalloc gen --buffers=N [--seed=S] [--family=F] [--output=FILE]

  --input FILE        buffers as CSV: id,lower,upper,size[,alignment][,hint][,gaps][,offset]
  --capacity N        memory every buffer must fit below (with --minimize: an upper bound)
  --minimize          find the lowest height (also --minimize_capacity); the best
                      found is returned at the timeout, with a proven lower bound
  --output FILE       where to write the input's columns plus offset (default: stdout)
  --timeout DUR       stop after DUR, e.g. 60s, 500ms, 2m (default: none)
  --heuristic NAME    only this heuristic (online, skyline, first-fit, layered,
                      big-rocks, best-fit) with its restarts and local repair
  --exact             only the exact search
  --seed N            seed of the improving restarts (default 0): same seed, same offsets
  --restarts N        improving restarts to run (default: until the timeout, or 64,
                      fewer above 100,000 buffers)
  --threads N         threads for the restarts (default 0: every core)
  --lifetime KIND     half-open [lower, upper) (default), inclusive [lower, upper]
                      or exclusive (lower, upper); an `end` column is always inclusive
  --base N            address of the arena, added to every output offset (decimal or 0x..)
  --svg FILE          draw the placement: time on x, offset on y
  --validate          check the placement before writing it
  --stats             print buffers, max load, height, bound, time and more to stderr
  --quiet             no progress line or summary on stderr
  --help              this text

exit codes: 0 placed, 2 infeasible, 3 timed out, 1 bad input or I/O error";

fn fail(code: u8, message: impl std::fmt::Display) -> ExitCode {
    eprintln!("minimalloc: {message}");
    ExitCode::from(code)
}

fn main() -> ExitCode {
    let mut raw: Vec<String> = std::env::args().skip(1).collect();
    if raw.first().map(String::as_str) == Some("gen") {
        raw.remove(0);
        return match gen(raw) {
            Ok(code) => code,
            Err(e) => fail(1, e),
        };
    }
    match place(raw) {
        Ok(code) => code,
        Err(e) => fail(1, e),
    }
}

/// What `place` was asked for.
struct Job {
    input: Option<String>,
    output: Option<String>,
    capacity: Option<i64>,
    objective: Objective,
    method: Method,
    lifetime: Lifetime,
    base: i64,
    svg: Option<String>,
    validate: bool,
    stats: bool,
    quiet: bool,
    options: Options,
}

fn parse_job(raw: Vec<String>) -> Result<Option<Job>, String> {
    let booleans = [
        "help",
        "minimize",
        "minimize_capacity",
        "exact",
        "validate",
        "stats",
        "quiet",
    ];
    let flags = Flags::parse(raw, &booleans)?;
    let mut job = Job {
        input: None,
        output: None,
        capacity: None,
        objective: Objective::Fit,
        method: Method::Auto,
        lifetime: Lifetime::HalfOpen,
        base: 0,
        svg: None,
        validate: false,
        stats: false,
        quiet: false,
        options: Options::default(),
    };
    for (name, value) in flags.iter() {
        let text = || args::required(name, value).map(String::from);
        match name {
            "help" => return Ok(None),
            "input" => job.input = Some(text()?),
            "output" => job.output = Some(text()?),
            "svg" => job.svg = Some(text()?),
            "capacity" => job.capacity = Some(args::integer(name, value, 1)?),
            "minimize" | "minimize_capacity" => {
                if args::boolean(name, value)? {
                    job.objective = Objective::Minimize;
                }
            }
            "exact" => {
                if args::boolean(name, value)? {
                    job.method = Method::Exact;
                }
            }
            "heuristic" => {
                let strategy: Strategy = args::required(name, value)?
                    .parse()
                    .map_err(|e| format!("--heuristic: {e}"))?;
                job.method = Method::Heuristic(strategy);
            }
            "timeout" => job.options.timeout = args::duration(name, value)?,
            "seed" => job.options.seed = args::integer(name, value, 0)? as u64,
            "restarts" => job.options.restarts = Some(args::integer(name, value, 0)? as u64),
            "threads" => job.options.threads = args::integer(name, value, 0)? as usize,
            "base" => job.base = args::integer(name, value, 0)?,
            "lifetime" => {
                job.lifetime = match args::required(name, value)? {
                    "half-open" => Lifetime::HalfOpen,
                    "inclusive" => Lifetime::Inclusive,
                    "exclusive" => Lifetime::Exclusive,
                    other => {
                        return Err(format!(
                            "--lifetime takes half-open, inclusive or exclusive, got {other:?}"
                        ))
                    }
                }
            }
            "validate" => job.validate = args::boolean(name, value)?,
            "stats" => job.stats = args::boolean(name, value)?,
            "quiet" => job.quiet = args::boolean(name, value)?,
            _ => return Err(format!("unknown flag --{name} (see --help)")),
        }
    }
    job.options.objective = job.objective;
    job.options.method = job.method;
    Ok(Some(job))
}

fn place(raw: Vec<String>) -> Result<ExitCode, String> {
    let Some(mut job) = parse_job(raw)? else {
        println!("{USAGE}");
        return Ok(ExitCode::SUCCESS);
    };
    let minimizing = job.objective == Objective::Minimize;
    let capacity = match (job.capacity, minimizing) {
        (Some(c), _) => c,
        (None, true) => i64::MAX,
        (None, false) => return Err("--capacity is required unless minimising (see --help)".into()),
    };
    let input = job
        .input
        .clone()
        .ok_or("--input is required (see --help)")?;
    let text = std::fs::read_to_string(&input).map_err(|e| format!("cannot read {input}: {e}"))?;
    let (problem, table) =
        csv::read_with(&text, capacity, job.lifetime).map_err(|e| format!("{input}: {e}"))?;
    drop(text);
    problem
        .check_base(job.base)
        .map_err(|e| format!("--base: {e}"))?;

    let ticker = if job.quiet {
        None
    } else {
        let what = if minimizing {
            "minimising".to_string()
        } else {
            format!("placing below {capacity}")
        };
        let (ticker, progress) = progress::Ticker::start(what);
        job.options.progress = Some(progress);
        Some(ticker)
    };
    let outcome = plan(&problem, &job.options);
    if let Some(t) = ticker {
        t.stop();
    }
    let load = max_load(&problem);
    if job.stats {
        print_stats(&problem, &outcome, load);
    }
    let bound = if capacity == i64::MAX {
        String::new()
    } else {
        format!(" {capacity}")
    };
    let solution = match outcome.status {
        Status::Solved => outcome
            .solution
            .clone()
            .ok_or("internal error: solved without a placement")?,
        Status::Infeasible if minimizing => {
            return Ok(fail(
                2,
                format!(
                    "infeasible: no placement fits the upper bound{bound} (the lower bound is {})",
                    outcome.lower_bound
                ),
            ))
        }
        Status::Infeasible => {
            return Ok(fail(2, format!("infeasible: no placement fits capacity {capacity}")))
        }
        Status::NotFound => {
            return Ok(fail(
                2,
                format!(
                    "no placement found below capacity{bound} (not a proof: {} pairs of buffers could interleave through gap windows, or a node limit ran out)",
                    outcome.stats.interleaving
                ),
            ))
        }
        Status::TimedOut => return Ok(fail(3, "timed out before finding a placement")),
        Status::Cancelled => return Ok(fail(3, "cancelled before finding a placement")),
    };
    let height = solution.height(&problem);
    if minimizing && !job.quiet {
        let how = if outcome.optimal {
            "proven optimal".to_string()
        } else {
            let cut = if outcome.stopped.is_some() {
                ", stopped by the timeout"
            } else {
                ""
            };
            format!("lower bound {}{cut}", outcome.lower_bound)
        };
        eprintln!(
            "minimalloc: height {height} ({how}); max load {load}; from {}",
            describe(outcome.source)
        );
    }
    if job.validate {
        validate(&problem, &solution)
            .map_err(|e| format!("internal error: the placement is invalid: {e}"))?;
    }
    let addresses = solution
        .addresses(&problem, job.base)
        .map_err(|e| format!("--base: {e}"))?;
    if let Some(path) = &job.svg {
        let marks = svg::Marks {
            capacity: (capacity != i64::MAX).then_some(capacity),
            max_load: load,
            title: input.clone(),
        };
        std::fs::write(path, svg::render(&problem, &solution.offsets, &marks))
            .map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    let out = table.write(&addresses);
    match job.output.as_deref() {
        None | Some("-") => print!("{out}"),
        Some(path) => std::fs::write(path, out).map_err(|e| format!("cannot write {path}: {e}"))?,
    }
    Ok(ExitCode::SUCCESS)
}

fn print_stats(problem: &Problem, outcome: &minimalloc::Outcome, load: i64) {
    let height = outcome.height(problem);
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
    eprintln!("lower bound    {}", outcome.lower_bound);
    eprintln!(
        "optimal        {}",
        if outcome.optimal { "yes" } else { "not proven" }
    );
    eprintln!("source         {}", describe(outcome.source));
    eprintln!("restarts       {}", outcome.restarts);
    eprintln!("nodes          {}", outcome.stats.nodes);
    eprintln!("backtracks     {}", outcome.stats.backtracks);
    eprintln!(
        "time           {:.3} s",
        outcome.stats.elapsed.as_secs_f64()
    );
    if let Some(stop) = outcome.stopped {
        eprintln!("stopped        {stop:?}");
    }
    let used: Vec<String> = outcome
        .stats
        .solved_by
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(p, n)| format!("{p}:{n}"))
        .collect();
    eprintln!("orderings      {}", used.join(" "));
}

const GEN_USAGE: &str = "\
usage: minimalloc gen --buffers=N [--seed=S] [--alignment=A] [--family=F] [--output=FILE]

Writes N buffers shaped like one training step of a compiled model as CSV:
activations saved in the forward pass and freed in the backward pass,
short temporaries, weight gradients and weights. --family=step (default:
sizes from 64 B to 8 MiB) or --family=long-lived (2% of the buffers alive
for 5-50% of the step, starting anywhere; sizes from 16 B to 32 MiB). The
same N, seed, alignment and family always give the same file.";

fn gen(raw: Vec<String>) -> Result<ExitCode, String> {
    let flags = Flags::parse(raw, &["help"])?;
    let mut spec = Spec::new(0, 0);
    let mut output = None;
    let mut have_count = false;
    for (name, value) in flags.iter() {
        match name {
            "help" => {
                println!("{GEN_USAGE}");
                return Ok(ExitCode::SUCCESS);
            }
            "buffers" => {
                spec.buffers = args::integer(name, value, 1)? as usize;
                have_count = true;
            }
            "seed" => spec.seed = args::integer(name, value, 0)? as u64,
            "alignment" => spec.alignment = args::integer(name, value, 1)?,
            "family" => {
                let v = args::required(name, value)?;
                spec.family = Family::from_name(v).ok_or_else(|| {
                    format!("unknown family \"{v}\" for gen: use step or long-lived")
                })?;
            }
            "output" => output = Some(args::required(name, value)?.to_string()),
            _ => return Err(format!("unknown flag --{name} for gen (see gen --help)")),
        }
    }
    if !have_count {
        return Err("gen: --buffers is required (see gen --help)".into());
    }
    let problem = Problem::new(i64::MAX, generate(spec)).map_err(|e| e.to_string())?;
    let text = csv::write_problem(&problem, None);
    match output.as_deref() {
        None | Some("-") => print!("{text}"),
        Some(path) => {
            std::fs::write(path, text).map_err(|e| format!("cannot write {path}: {e}"))?
        }
    }
    Ok(ExitCode::SUCCESS)
}
