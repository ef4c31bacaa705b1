//! The `minimalloc` command: reads buffers from a CSV file, places them
//! (below a capacity, or as low as it can), writes the input's columns
//! plus `offset`; `minimalloc gen` writes a synthetic instance;
//! `completions` and `man` print what shells and man need.
//!
//! Exit codes: 0 placed, 2 infeasible (or no placement found), 3 timed
//! out or cancelled with no placement, 1 bad input or I/O error, 128 + the
//! signal's number when SIGINT or SIGTERM stopped the run; each failure
//! with a one-line message on stderr. A reader that closes standard output
//! early ends the program quietly with 0.

mod cli;
mod exit;
mod place;
mod progress;
mod report;
mod sink;
mod values;

use std::process::ExitCode;

use clap::error::ErrorKind;
use cli::{Command, Gen};
use exit::Exit;
use minimalloc::gen::{
    generate_problem, kernel_problem, kernel_with_memories, planted_optimum, Family, Spec,
};
use minimalloc::io::csv;
use sink::Sink;

fn main() -> ExitCode {
    let exit = run(std::env::args().skip(1).collect());
    if let Some(message) = exit.message {
        sink::say(&format!("minimalloc: {message}"));
    }
    ExitCode::from(exit.code)
}

fn run(args: Vec<String>) -> Exit {
    let parsed = match cli::parse(args) {
        Ok(parsed) => parsed,
        Err(e) => return usage_error(e),
    };
    match parsed.command {
        None => place::run(parsed.place),
        Some(Command::Gen(g)) => gen(g).unwrap_or_else(|e| e),
        Some(Command::Completions { shell }) => {
            let mut bytes = Vec::new();
            clap_complete::generate(shell, &mut cli::command(), "minimalloc", &mut bytes);
            sink::write_stdout(&bytes).map_or_else(Exit::from, |()| Exit::ok())
        }
        Some(Command::Man) => {
            let mut bytes = Vec::new();
            if let Err(e) = clap_mangen::Man::new(cli::command()).render(&mut bytes) {
                return Exit::fail(1, format!("cannot render the man page: {e}"));
            }
            sink::write_stdout(&bytes).map_or_else(Exit::from, |()| Exit::ok())
        }
    }
}

/// `--help` and `--version` print on stdout and succeed; anything else
/// clap rejects is bad input (exit 1: 2 means infeasible here).
fn usage_error(e: clap::Error) -> Exit {
    // clap writes help and version to stdout (in colour on a terminal; a
    // closed pipe is ignored like every other); an error is said as every
    // other error is, after the program's name.
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            Exit::ok()
        }
        _ => {
            let text = e.render().to_string();
            let text = text
                .trim_end()
                .strip_prefix("error: ")
                .unwrap_or(text.trim_end());
            Exit::fail(1, text.to_string())
        }
    }
}

fn gen(args: Gen) -> Result<Exit, Exit> {
    // Open the output first: a bad path fails before the work.
    let sink = Sink::open(args.output.as_deref())?;
    let spec = Spec {
        buffers: usize::try_from(args.buffers).map_err(|_| "--buffers: too many".to_string())?,
        seed: args.seed as u64,
        alignment: args.alignment,
        family: args.family,
    };
    if args.memories && !matches!(spec.family, Family::Kernel | Family::StagedKernel) {
        return Err(
            "--memories: only the kernel families (kernel, staged-kernel) have memories"
                .to_string()
                .into(),
        );
    }
    let problem = match args.separated {
        _ if args.memories => {
            kernel_with_memories(spec, args.separated, minimalloc::plan::first_fit_height)
        }
        Some(f)
            if matches!(
                spec.family,
                Family::Kernel | Family::PlantedKernel | Family::StagedKernel
            ) =>
        {
            kernel_problem(spec, f)
        }
        _ => generate_problem(spec),
    }
    .map_err(|e| e.to_string())?;
    if !problem.pools().is_empty() {
        let flags: Vec<String> = problem
            .pools()
            .iter()
            .map(|p| {
                format!(
                    "--pool={}:{}:{}:{}",
                    p.name, p.capacity, p.base, p.alignment
                )
            })
            .collect();
        eprintln!("pools: {}", flags.join(" "));
    }
    if let Some(optimum) = planted_optimum(spec) {
        eprintln!(
            "{}: the optimal height is {optimum} (the max load)",
            spec.family.name()
        );
    }
    let text = csv::write_problem(&problem, None);
    sink.write(text.as_bytes())?;
    Ok(Exit::ok())
}
