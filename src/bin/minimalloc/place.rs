//! Placing buffers: open the outputs, read the CSV, solve (with a progress
//! line, and signals turned into the cancel flag), report, write.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use minimalloc::io::{csv, svg};
use minimalloc::plan::describe;
use minimalloc::{
    max_load, plan, validate, validate_pooled, Lifetime, Method, Objective, Options, Status,
};

use crate::cli::{LifetimeKind, Place};
use crate::exit::Exit;
use crate::progress;
use crate::report::{latex_picture, time_line, Figures};
use crate::sink::{say, write_stdout, Sink};

/// Runs the place command.
pub fn run(args: Place) -> Exit {
    place(args).unwrap_or_else(|e| e)
}

/// SIGINT and SIGTERM: the first sets the plan's cancel flag (the best
/// placement so far is then written), a second ends the process at once.
struct Signals {
    cancel: Arc<AtomicBool>,
    /// Which signal came, by number (0: none).
    which: Arc<std::sync::atomic::AtomicI32>,
}

impl Signals {
    fn install() -> Signals {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let cancel = Arc::new(AtomicBool::new(false));
        let which = Arc::new(std::sync::atomic::AtomicI32::new(0));
        for signal in [SIGINT, SIGTERM] {
            // The order matters: the shutdown checks the flag before the
            // second handler sets it. Failing to install costs only this.
            let _ = signal_hook::flag::register_conditional_shutdown(
                signal,
                128 + signal,
                cancel.clone(),
            );
            let _ = signal_hook::flag::register(signal, cancel.clone());
            let which = which.clone();
            // Safety: the handler only stores to an atomic, which is
            // async-signal-safe.
            let _ = unsafe {
                signal_hook::low_level::register(signal, move || {
                    which.store(signal, Ordering::Relaxed);
                })
            };
        }
        Signals { cancel, which }
    }

    /// The signal that stopped the run, if one did.
    fn caught(&self) -> Option<i32> {
        match self.which.load(Ordering::Relaxed) {
            0 => None,
            s => Some(s),
        }
    }
}

fn lifetime(kind: LifetimeKind) -> Lifetime {
    match kind {
        LifetimeKind::HalfOpen => Lifetime::HalfOpen,
        LifetimeKind::Inclusive => Lifetime::Inclusive,
        LifetimeKind::Exclusive => Lifetime::Exclusive,
    }
}

/// The plan's options from the flags.
fn options(a: &Place) -> Options {
    let mut o = Options {
        objective: match (a.minimize, a.penalty) {
            (true, _) => Objective::Minimize,
            (false, true) => Objective::Penalty,
            (false, false) => Objective::Fit,
        },
        method: match (a.exact, a.heuristic) {
            (true, _) => Method::Exact,
            (false, Some(s)) => Method::Heuristic(s),
            (false, None) => Method::Auto,
        },
        timeout: a.timeout,
        seed: a.seed as u64,
        threads: a.threads as usize,
        restarts: a.restarts.map(|r| r as u64),
        ..Options::default()
    };
    let s = &mut o.solver;
    s.canonical = a.canonical_only;
    s.section_inference = a.section_inference;
    s.dynamic_preordering = a.dynamic_ordering;
    s.dominance = a.check_dominance;
    s.effective_floor = a.unallocated_floor;
    s.static_preordering = a.static_preordering;
    s.decomposition = a.dynamic_decomposition;
    s.monotonic_floor = a.monotonic_floor;
    s.hatless = a.hatless_pruning;
    s.shaken_restarts = a.shaken_restarts;
    s.preorders = a.preordering_heuristics.0.clone();
    o
}

/// What one run produced, for the steps after the plan: what it says,
/// why it failed, what it writes.
struct Run<'a> {
    a: &'a Place,
    problem: &'a minimalloc::Problem,
    outcome: &'a minimalloc::plan::Outcome,
    /// The capacity the buffers were placed below (`i64::MAX`: none).
    capacity: i64,
    max_load: i64,
    /// The signal that stopped the run, if one did.
    caught: Option<i32>,
    /// The input's name, for messages and the picture.
    title: String,
}

/// The command, step by step: check the flags and open the outputs, read
/// the input, plan, report, then write the placement or say why there is
/// none.
fn place(a: Place) -> Result<Exit, Exit> {
    let capacity = capacity(&a)?;
    // Signals first: from here on, one stops the run rather than killing
    // it. Every output is checked before the input is read and solved.
    let signals = Signals::install();
    let output = Sink::open(a.output.as_deref())?;
    if output.is_stdout() && (a.print_solution || a.svg.as_deref() == Some("-")) {
        return Err(
            "--print_solution and --svg - write to standard output, where the CSV goes \
             without --output FILE: give --output"
                .to_string()
                .into(),
        );
    }
    let picture = a.svg.as_deref().map(|p| Sink::open(Some(p))).transpose()?;
    let (problem, table, title) = read_problem(&a, capacity)?;
    let chatty = !a.quiet && !a.json;
    let (outcome, elapsed) = plan_with_progress(&a, &problem, &signals, capacity, chatty);
    let run = Run {
        a: &a,
        problem: &problem,
        outcome: &outcome,
        capacity,
        max_load: max_load(&problem),
        caught: signals.caught(),
        title,
    };
    let checked = match (&outcome.solution, &outcome.pooled, a.validate) {
        (Some(s), Some(p), true) => Some(validate_pooled(&problem, s, &p.pool_of)),
        (Some(s), None, true) => Some(validate(&problem, s)),
        _ => None,
    };
    if chatty {
        say(&time_line(elapsed, checked.as_ref().map(|c| c.is_ok())));
    }
    let figures = Figures {
        problem: &problem,
        outcome: &outcome,
        max_load: run.max_load,
        elapsed,
        interrupted: run.caught.is_some(),
    };
    if a.json {
        say(&figures.json());
    } else if a.stats {
        let mut err = std::io::stderr().lock();
        let _ = std::io::Write::write_all(&mut err, figures.text().as_bytes());
    }
    let solution = run.placement()?;
    if chatty {
        say(&run.summary(solution.height(&problem)));
    }
    if let Some(Err(e)) = checked {
        return Err(format!("internal error: the placement is invalid: {e}").into());
    }
    run.write(&solution, &table, output, picture)?;
    if run.caught.is_some() {
        return Ok(run.interrupted(&format!(
            "wrote the best placement found (height {}, lower bound {})",
            solution.height(&problem),
            outcome.lower_bound
        )));
    }
    Ok(Exit::ok())
}

/// The capacity to place below: the flag's, or none when minimising or
/// with pools (each has its own).
fn capacity(a: &Place) -> Result<i64, Exit> {
    let pooled = !a.pools.is_empty();
    if pooled && a.print_solution {
        return Err(
            "--print_solution draws one arena: not with --pool (use --svg)"
                .to_string()
                .into(),
        );
    }
    match (a.capacity, a.minimize || pooled) {
        (Some(c), _) => Ok(c),
        (None, true) => Ok(i64::MAX),
        (None, false) => Err("--capacity is required unless minimising (see --help)"
            .to_string()
            .into()),
    }
}

/// The problem of the input file (or standard input), the table that
/// writes it back, and the input's name.
fn read_problem(
    a: &Place,
    capacity: i64,
) -> Result<(minimalloc::Problem, csv::Table, String), Exit> {
    let input = a.input.clone().unwrap_or_else(|| "-".into());
    let (text, title) = if input == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        (text, "standard input".to_string())
    } else {
        let text =
            std::fs::read_to_string(&input).map_err(|e| format!("cannot read {input}: {e}"))?;
        (text, input.clone())
    };
    let (problem, table) = csv::read_pooled(&text, capacity, lifetime(a.lifetime), &a.pools)
        .map_err(|e| format!("{title}: {e}"))?;
    problem
        .check_base(a.base)
        .map_err(|e| format!("--base: {e}"))?;
    Ok((problem, table, title))
}

/// Plans, with the signals as the cancel flag and, when chatty, a
/// progress line; returns the outcome and the plan's wall time.
fn plan_with_progress(
    a: &Place,
    problem: &minimalloc::Problem,
    signals: &Signals,
    capacity: i64,
    chatty: bool,
) -> (minimalloc::plan::Outcome, std::time::Duration) {
    let mut options = options(a);
    options.cancel = Some(signals.cancel.clone());
    let ticker = chatty.then(|| {
        let what = if a.minimize {
            "minimising".to_string()
        } else {
            format!("placing below {capacity}")
        };
        let (ticker, progress) = progress::Ticker::start(what);
        options.progress = Some(progress);
        ticker
    });
    let start = Instant::now();
    let outcome = plan(problem, &options);
    let elapsed = start.elapsed();
    if let Some(t) = ticker {
        t.stop();
    }
    (outcome, elapsed)
}

impl Run<'_> {
    /// The exit of a run a signal (or the cancel flag) stopped.
    fn interrupted(&self, what: &str) -> Exit {
        match self.caught {
            Some(signal) => Exit::fail((128 + signal) as u8, format!("interrupted: {what}")),
            None => Exit::fail(3, format!("cancelled: {what}")),
        }
    }

    /// The placement, or the exit that says why there is none.
    fn placement(&self) -> Result<minimalloc::Solution, Exit> {
        let (outcome, problem) = (self.outcome, self.problem);
        let bound = if self.capacity == i64::MAX {
            String::new()
        } else {
            format!(" {}", self.capacity)
        };
        if let (Some(p), false) = (&outcome.pooled, outcome.status == Status::Solved) {
            if !p.unplaced.is_empty() && self.caught.is_none() {
                let ids: Vec<&str> = p
                    .unplaced
                    .iter()
                    .take(20)
                    .map(|&i| problem.buffers()[i].id.as_str())
                    .collect();
                let more = p.unplaced.len().saturating_sub(20);
                let more = if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                };
                let proof = if outcome.status == Status::Infeasible {
                    "no assignment to pools fits"
                } else {
                    "no assignment to pools found (not a proof)"
                };
                return Err(Exit::fail(
                    2,
                    format!("{proof}: no pool could take {}{more}", ids.join(", ")),
                ));
            }
        }
        let failure = match outcome.status {
            Status::Solved => {
                return outcome
                    .solution
                    .clone()
                    .ok_or_else(|| "internal error: solved without a placement".to_string().into())
            }
            _ if self.caught.is_some() => {
                self.interrupted("stopped before any placement was found")
            }
            Status::Infeasible if self.a.minimize => Exit::fail(
                2,
                format!(
                    "infeasible: no placement fits the upper bound{bound} (the lower bound is {})",
                    outcome.lower_bound
                ),
            ),
            Status::Infeasible => {
                let why = match &outcome.conflict {
                    Some(c) => format!("; {}", conflict_words(problem, c)),
                    None => String::new(),
                };
                Exit::fail(
                    2,
                    format!(
                        "infeasible: no placement fits capacity {}{why}",
                        self.capacity
                    ),
                )
            }
            Status::NotFound => Exit::fail(
                2,
                format!(
                    "no placement found below capacity{bound} (not a proof: {} pairs of buffers could interleave through gap windows, or a node limit ran out)",
                    outcome.stats.interleaving
                ),
            ),
            Status::TimedOut => Exit::fail(3, "timed out before finding a placement"),
            Status::Cancelled => Exit::fail(3, "cancelled before finding a placement"),
        };
        Err(failure)
    }

    /// The line that says what was placed, how high, and from where.
    fn summary(&self, height: i64) -> String {
        let (outcome, problem, capacity) = (self.outcome, self.problem, self.capacity);
        let source = describe(outcome.source);
        if self.a.minimize {
            let how = if outcome.optimal {
                "proven optimal".to_string()
            } else {
                let cut = match (self.caught, outcome.stopped) {
                    (Some(_), _) => ", stopped by a signal",
                    (None, Some(_)) => ", stopped by the timeout",
                    (None, None) => "",
                };
                format!("lower bound {}{cut}", outcome.lower_bound)
            };
            return format!(
                "minimalloc: height {height} ({how}); max load {}; from {source}",
                self.max_load
            );
        }
        if let Some(p) = outcome.penalty {
            let how = match outcome.optimal {
                true => "proven optimal".to_string(),
                false => format!("lower bound {}", p.lower_bound),
            };
            return format!(
                "minimalloc: {} placed below capacity {capacity}: penalty {} ({how}); height {height}; from {source}",
                buffers(problem.len()),
                p.cost,
            );
        }
        // After the reference's bare time line, what it was about.
        let (place, figures) = match &outcome.pooled {
            Some(p) => {
                let heights: Vec<String> = problem
                    .pools()
                    .iter()
                    .zip(&p.reports)
                    .map(|(pool, r)| format!("{} {} of {}", pool.name, r.height, pool.capacity))
                    .collect();
                (
                    format!("in {} pools", p.reports.len()),
                    format!("heights {}", heights.join(", ")),
                )
            }
            None => (
                format!("below capacity {capacity}"),
                format!("height {height}; max load {}", self.max_load),
            ),
        };
        format!(
            "minimalloc: {} placed {place}: {figures}; from {source}",
            buffers(problem.len()),
        )
    }

    /// Writes the placement: the CSV (with each buffer's pool when pooled),
    /// the SVG picture if asked for, the LaTeX picture if asked for.
    fn write(
        &self,
        solution: &minimalloc::Solution,
        table: &csv::Table,
        output: Sink,
        picture: Option<Sink>,
    ) -> Result<(), Exit> {
        let (problem, outcome) = (self.problem, self.outcome);
        let addresses = solution
            .addresses(problem, self.a.base)
            .map_err(|e| format!("--base: {e}"))?;
        let frame = (self.capacity != i64::MAX).then_some(self.capacity);
        if let Some(picture) = picture {
            let drawing = match &outcome.pooled {
                Some(p) => pool_panels(problem, &solution.offsets, p, &self.title),
                None => svg::render(
                    problem,
                    &solution.offsets,
                    &svg::Marks {
                        capacity: frame,
                        max_load: self.max_load,
                        title: self.title.clone(),
                    },
                ),
            };
            picture.write(drawing.as_bytes())?;
        }
        let csv_text = match &outcome.pooled {
            Some(p) => {
                let names: Vec<&str> = p
                    .pool_of
                    .iter()
                    .map(|&q| {
                        problem
                            .pools()
                            .get(q as usize)
                            .map_or("", |pool| pool.name.as_str())
                    })
                    .collect();
                table.write_with(&addresses, Some(("pool", &names)))
            }
            None => table.write(&addresses),
        };
        output.write(csv_text.as_bytes())?;
        if self.a.print_solution {
            write_stdout(latex_picture(problem, &solution.offsets, frame).as_bytes())?;
        }
        Ok(())
    }
}

/// "buffers b1, b3 and b5 cannot fit together" (the first 20 ids), or
/// "buffer b1 cannot fit" for one alone.
fn conflict_words(problem: &minimalloc::Problem, c: &minimalloc::plan::Conflict) -> String {
    const SHOWN: usize = 20;
    let ids: Vec<&str> = c
        .buffers
        .iter()
        .take(SHOWN)
        .map(|&i| problem.buffers()[i].id.as_str())
        .collect();
    let mut list = match ids.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((last, _)) => last.to_string(),
        None => String::new(),
    };
    if c.buffers.len() > SHOWN {
        list = format!("{} and {} more", ids.join(", "), c.buffers.len() - SHOWN);
    }
    let proven = if c.irreducible {
        ""
    } else {
        " (a smaller set may exist)"
    };
    if c.buffers.len() == 1 {
        return format!("buffer {list} cannot fit{proven}");
    }
    format!("buffers {list} cannot fit together{proven}")
}

/// One SVG panel per pool: its buffers at their offsets in it.
fn pool_panels(
    problem: &minimalloc::Problem,
    addresses: &[i64],
    pooled: &minimalloc::plan::Pooled,
    title: &str,
) -> String {
    let panels: Vec<String> = problem
        .pools()
        .iter()
        .zip(&pooled.reports)
        .map(|(pool, report)| {
            let members = &report.buffers;
            let pieces: Vec<minimalloc::Buffer> = members
                .iter()
                .map(|&b| problem.buffers()[b].clone())
                .collect();
            let offsets: Vec<i64> = members.iter().map(|&b| addresses[b] - pool.base).collect();
            let marks = svg::Marks {
                capacity: Some(pool.capacity),
                max_load: report.lower_bound,
                title: format!(
                    "{title}: pool {} ({}, {} spilled in)",
                    pool.name,
                    buffers(members.len()),
                    report.spilled.len()
                ),
            };
            match minimalloc::Problem::new(i64::MAX, pieces) {
                Ok(sub) => svg::render(&sub, &offsets, &marks),
                Err(_) => String::new(),
            }
        })
        .collect();
    svg::stack(&panels)
}

/// "1 buffer", "2 buffers".
pub(crate) fn buffers(n: usize) -> String {
    match n {
        1 => "1 buffer".into(),
        n => format!("{n} buffers"),
    }
}
