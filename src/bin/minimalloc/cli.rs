//! The command line, defined once with clap: the flags, the subcommands,
//! `--help`, the completions and the man page all come from [`command`].
//!
//! Scripts written for the C++ reference keep working: its flags are all
//! here with their meanings, and [`absl_forms`] rewrites the spellings
//! absl accepts and clap does not (`--novalidate`, `-validate`) before
//! clap sees them.

use std::time::Duration;

use clap::builder::TypedValueParser;
use clap::{ArgAction, Args, CommandFactory, Parser, Subcommand, ValueEnum};
use minimalloc::gen::Family;
use minimalloc::Strategy;

use crate::values::{
    absl_bool, duration, fraction, natural, pool, positive, preorders, strategy, Preorders,
};

const EXIT_CODES: &str = "\
Exit codes: 0 placed, 2 infeasible (or no placement found), 3 timed out or
cancelled with no placement, 1 bad input or I/O error, 130 interrupted
(SIGINT; 143 for SIGTERM: the best placement found so far is written).";

/// The `minimalloc` command.
#[derive(Parser, Debug)]
#[command(
    name = "minimalloc",
    version,
    about = "Static memory allocation: give every buffer an offset so that buffers alive at the same time never overlap",
    long_about = "Static memory allocation for machine-learning compilers.\n\n\
        Reads buffers (a lifetime and a size each) from a CSV file and gives \
        every buffer an offset so that buffers alive at the same time never \
        share a byte: either all below --capacity (or a proof that they \
        cannot fit), or, with --minimize, as low as it can within --timeout, \
        with a proven lower bound. Writes the input's columns plus `offset`.",
    after_help = EXIT_CODES,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub place: Place,
}

/// The subcommands; without one, `minimalloc` places buffers.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Write a synthetic instance shaped like one training step as CSV
    Gen(Gen),
    /// Print a completion script for SHELL (e.g. `minimalloc completions bash > /etc/bash_completion.d/minimalloc`)
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff; e.g. `minimalloc man | man -l -`)
    Man,
}

/// Placing buffers: the flags of the C++ reference and minimalloc's own.
#[derive(Args, Debug)]
pub struct Place {
    /// Buffers as CSV (- reads standard input)
    ///
    /// Columns, in any order: id, lower, upper, size, and optionally alignment, hint (-1: none),
    /// gaps (space-separated lower-upper or lower-upper@wlo:whi), colocation (a label: rows with
    /// one label share an offset), separation (space-separated labels: rows with a label in common
    /// never share a byte), penalty (space-separated label:cost: rows with a label in common may
    /// share bytes at that cost; see --penalty), pools (names from --pool, preferred first),
    /// offset (fixed). Aliases:
    /// start/begin for lower, buffer/buffer_id for id, end for an inclusive upper. Other columns
    /// are kept and written back.
    #[arg(long, value_name = "FILE", required = true)]
    pub input: Option<String>,

    /// Memory every buffer must fit below (decimal or 0x..); with --minimize, an upper bound
    #[arg(long, value_name = "N", value_parser = positive, allow_negative_numbers = true)]
    pub capacity: Option<i64>,

    /// Where to write the input's columns plus offset (default and -: standard output); checked before solving, made only when written
    #[arg(long, value_name = "FILE")]
    pub output: Option<String>,

    /// Find the lowest height instead of fitting a capacity; the best found is kept at the timeout, with a proven lower bound
    #[arg(long, alias = "minimize_capacity")]
    pub minimize: bool,

    /// Fit the capacity (or every pool), then pay as little as possible for the pairs of the penalty column whose bytes meet; the cost and a proven lower bound on it are reported
    #[arg(long, conflicts_with = "minimize")]
    pub penalty: bool,

    /// Stop after DUR: 60s, 1m30s, 500ms, 1.5h, or inf; 0 means no timeout, as in the C API
    #[arg(long, value_name = "DUR", value_parser = duration)]
    pub timeout: Option<Duration>,

    /// Check the placement before writing it; the time line on stderr ends in PASS or FAIL
    #[arg(long)]
    pub validate: bool,

    /// Only this heuristic, with its restarts and local repair (if it places nothing within
    /// --timeout, the online placement stands in; --stats names the source)
    #[arg(long, value_name = "NAME", value_parser = strategy, conflicts_with = "exact")]
    pub heuristic: Option<Strategy>,

    /// Only the exact search
    #[arg(long)]
    pub exact: bool,

    /// Seed of the improving restarts: the same seed gives the same offsets
    #[arg(long, value_name = "N", default_value = "0", value_parser = natural, allow_negative_numbers = true, allow_negative_numbers = true)]
    pub seed: i64,

    /// Improving restarts to run: placements in perturbed orders after the plain ones, what --stats counts as restarts (default: until the timeout, or 64; fewer above 100,000 buffers)
    #[arg(long, value_name = "N", value_parser = natural, allow_negative_numbers = true, allow_negative_numbers = true)]
    pub restarts: Option<i64>,

    /// Threads for the restarts (0: every core)
    #[arg(long, value_name = "N", default_value = "0", value_parser = natural, allow_negative_numbers = true, allow_negative_numbers = true)]
    pub threads: i64,

    /// How lifetimes are written; an `end` column is always inclusive
    #[arg(long, value_name = "KIND", value_enum, default_value_t = LifetimeKind::HalfOpen)]
    pub lifetime: LifetimeKind,

    /// Address of the arena, added to every output offset (decimal or 0x..)
    #[arg(long, value_name = "N", default_value = "0", value_parser = natural, allow_negative_numbers = true, allow_negative_numbers = true)]
    pub base: i64,

    /// Draw the placement as SVG into FILE: time on x, offset on y (one panel per pool)
    #[arg(long, value_name = "FILE")]
    pub svg: Option<String>,

    /// A memory pool, repeatable: NAME:CAPACITY[:BASE[:ALIGNMENT]] (decimal or 0x..). Buffers go to the pools their `pools` column lists (any, in this order, if none), preferred first; what does not fit spills to the next
    #[arg(long = "pool", value_name = "SPEC", value_parser = pool)]
    pub pools: Vec<minimalloc::model::pools::Pool>,

    /// Print a LaTeX (TikZ) picture of the placement on standard output, as the reference does (needs --output)
    #[arg(long = "print_solution")]
    pub print_solution: bool,

    /// Print buffers, max load, height, lower bound, time and more on stderr
    #[arg(long)]
    pub stats: bool,

    /// Print the same figures as one JSON object on stderr (and nothing else there but errors)
    #[arg(long)]
    pub json: bool,

    /// No progress line, time line or summary on stderr
    #[arg(long)]
    pub quiet: bool,

    /// Exact search: canonical partial solutions only
    #[arg(
        long = "canonical_only",
        default_value_t = true,
        help_heading = "Rules of the exact search (as in the reference; all on by default)"
    )]
    pub canonical_only: bool,

    /// Exact search: section inference
    #[arg(
        long = "section_inference",
        default_value_t = true,
        help_heading = "Rules of the exact search (as in the reference; all on by default)"
    )]
    pub section_inference: bool,

    /// Exact search: reorder a part split off by the totals left
    #[arg(
        long = "dynamic_ordering",
        default_value_t = true,
        help_heading = "Rules of the exact search (as in the reference; all on by default)"
    )]
    pub dynamic_ordering: bool,

    /// Exact search: dominance (no buffer at or above another's lowest possible top)
    #[arg(
        long = "check_dominance",
        default_value_t = true,
        help_heading = "Rules of the exact search (as in the reference; all on by default)"
    )]
    pub check_dominance: bool,

    /// Exact search: raise section floors to their unplaced buffers' lowest offsets
    #[arg(
        long = "unallocated_floor",
        default_value_t = true,
        help_heading = "Rules of the exact search (as in the reference; all on by default)"
    )]
    pub unallocated_floor: bool,

    /// Exact search: rank buffers by the preorderings (else by input order)
    #[arg(
        long = "static_preordering",
        default_value_t = true,
        help_heading = "Rules of the exact search (as in the reference; all on by default)"
    )]
    pub static_preordering: bool,

    /// Exact search: split into independent parts
    #[arg(
        long = "dynamic_decomposition",
        default_value_t = true,
        help_heading = "Rules of the exact search (as in the reference; all on by default)"
    )]
    pub dynamic_decomposition: bool,

    /// Exact search: offsets never decrease along a branch
    #[arg(
        long = "monotonic_floor",
        default_value_t = true,
        help_heading = "Rules of the exact search (as in the reference; all on by default)"
    )]
    pub monotonic_floor: bool,

    /// Exact search: after a buffer with nothing above it fails, skip its siblings
    #[arg(
        long = "hatless_pruning",
        default_value_t = true,
        help_heading = "Rules of the exact search (as in the reference; all on by default)"
    )]
    pub hatless_pruning: bool,

    /// Exact search: between rounds of the preorderings, short restarts of them shaken at random (not in the reference)
    #[arg(
        long = "shaken_restarts",
        default_value_t = true,
        help_heading = "Rules of the exact search (as in the reference; all on by default)"
    )]
    pub shaken_restarts: bool,

    /// Exact search: the preorderings tried round-robin (W width, A area, T total)
    #[arg(long = "preordering_heuristics", value_name = "LIST", default_value = "WAT,TAW,TWA", value_parser = preorders, help_heading = "Rules of the exact search (as in the reference; all on by default)")]
    pub preordering_heuristics: Preorders,
}

/// `minimalloc gen`.
#[derive(Args, Debug)]
#[command(
    long_about = "Writes N buffers shaped like one training step of a compiled model as CSV: \
        activations saved in the forward pass and freed in the backward pass, short \
        temporaries, weight gradients and weights. The same N, seed, alignment and family \
        always give the same file."
)]
pub struct Gen {
    /// Number of buffers
    #[arg(long, value_name = "N", value_parser = positive, allow_negative_numbers = true)]
    pub buffers: i64,
    /// Seed of the generator
    #[arg(long, value_name = "S", default_value = "0", value_parser = natural, allow_negative_numbers = true, allow_negative_numbers = true)]
    pub seed: i64,
    /// Alignment of every buffer (sizes are rounded up to it)
    #[arg(long, value_name = "A", default_value = "1", value_parser = positive, allow_negative_numbers = true)]
    pub alignment: i64,
    /// step: sizes from 64 B to 8 MiB; long-lived: 2% of the buffers alive for 5-50% of the step, sizes from 16 B to 32 MiB; independent: sizes 10 B-10 MB whatever the lifetime; issued: the same sizes, buffers issued one after another in program order; planted: a zero-waste packing cut by guillotine, whose optimum is its max load; pinwheel: a zero-waste packing no guillotine cut decomposes (a centre ringed by four blades, recursively), optimum the same; swept: a zero-waste packing not cut by guillotine (holes refilled as pieces end), optimum the same; kernel: an accelerator kernel, alignment 32, up to half of all pairs separated; planted-kernel: a planted packing (alignment 32) with separations between buffers it put apart, optimum its max load; staged-kernel: the kernel's buffers, each separation group every buffer alive during a run of consecutive ops (a pipeline stage)
    #[arg(long, value_name = "F", default_value = "step", value_parser = family_names())]
    pub family: Family,
    /// kernel, planted-kernel, staged-kernel: the share of all pairs of buffers that are separated (default: drawn from 0-0.5; a planted kernel's as many as its packing allows)
    #[arg(long, value_name = "FRACTION", value_parser = fraction, allow_negative_numbers = true)]
    pub separated: Option<f64>,
    /// kernel, staged-kernel: spread over 1-5 on-chip memories (a pools column; their --pool flags are printed on standard error), with reserved ranges and in-place colocations
    #[arg(long)]
    pub memories: bool,
    /// Where to write the CSV (default and -: standard output)
    #[arg(long, value_name = "FILE")]
    pub output: Option<String>,
}

/// `--lifetime`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LifetimeKind {
    /// [lower, upper)
    HalfOpen,
    /// [lower, upper]
    Inclusive,
    /// (lower, upper)
    Exclusive,
}

/// `gen --family`: the library's family names, each mapped to its
/// family (one list, the library's).
fn family_names() -> impl TypedValueParser<Value = Family> {
    clap::builder::PossibleValuesParser::new(Family::ALL.map(Family::name))
        .map(|name| Family::from_name(&name).unwrap_or_default())
}

/// Every yes/no flag of the place command: these take absl's forms.
const BOOLEANS: [&str; 19] = [
    "minimize",
    "minimize_capacity",
    "penalty",
    "validate",
    "exact",
    "print_solution",
    "stats",
    "json",
    "quiet",
    "canonical_only",
    "section_inference",
    "dynamic_ordering",
    "check_dominance",
    "unallocated_floor",
    "static_preordering",
    "dynamic_decomposition",
    "monotonic_floor",
    "hatless_pruning",
    "shaken_restarts",
];

/// Long flags that take a value (`--name VALUE` consumes the next word).
const VALUED: [&str; 17] = [
    "input",
    "capacity",
    "output",
    "timeout",
    "heuristic",
    "seed",
    "restarts",
    "threads",
    "lifetime",
    "base",
    "svg",
    "preordering_heuristics",
    "buffers",
    "alignment",
    "family",
    "pool",
    "separated",
];

/// The command with every yes/no flag taking absl's forms: `--flag`,
/// `--flag=true|false` (also t/f, yes/no, y/n, 1/0, any case); the
/// `--noflag` form is rewritten by [`absl_forms`].
pub fn command() -> clap::Command {
    let mut cmd = Cli::command();
    for name in BOOLEANS {
        if name == "minimize_capacity" {
            continue; // an alias of minimize
        }
        cmd = cmd.mut_arg(name, |a| {
            // Derive's implicit "false" goes with its SetTrue action.
            let a = if a.get_default_values().is_empty() {
                a.default_value("false")
            } else {
                a
            };
            a.action(ArgAction::Set)
                .num_args(0..=1)
                .require_equals(true)
                .default_missing_value("true")
                .value_parser(absl_bool)
                .value_name("BOOL")
                .hide_possible_values(true)
        });
    }
    // A flag given twice takes its last value, as absl does
    // (`--timeout=1s --timeout=2s`, `--validate --novalidate`).
    cmd.args_override_self(true)
}

/// Parses the arguments (without the program name).
pub fn parse(args: Vec<String>) -> Result<Cli, clap::Error> {
    use clap::FromArgMatches;
    let mut argv = vec!["minimalloc".to_string()];
    argv.extend(absl_forms(args));
    let matches = command().try_get_matches_from(argv)?;
    Cli::from_arg_matches(&matches)
}

/// Rewrites absl's spellings that clap does not take: `-flag` for
/// `--flag` (a long name after one dash), `--noflag` for `--flag=false`,
/// and `--some-flag` for `--some_flag`. Values (the word after a flag that
/// takes one) and everything after `--` pass unchanged.
pub fn absl_forms(args: Vec<String>) -> Vec<String> {
    let known = |name: &str| {
        BOOLEANS.contains(&name) || VALUED.contains(&name) || name == "help" || name == "version"
    };
    let mut out = Vec::with_capacity(args.len());
    let mut value_next = false;
    let mut rest = false;
    for arg in args {
        if rest || value_next {
            value_next = false;
            out.push(arg);
            continue;
        }
        if arg == "--" {
            rest = true;
            out.push(arg);
            continue;
        }
        let body = if let Some(b) = arg.strip_prefix("--") {
            b
        } else if let Some(b) = arg.strip_prefix('-').filter(|b| b.len() > 1) {
            b
        } else {
            out.push(arg);
            continue;
        };
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n.replace('-', "_"), Some(v)),
            None => (body.replace('-', "_"), None),
        };
        if known(&name) {
            value_next = value.is_none() && VALUED.contains(&name.as_str());
            out.push(match value {
                Some(v) => format!("--{name}={v}"),
                None => format!("--{name}"),
            });
        } else if let Some(flag) = name.strip_prefix("no").filter(|n| BOOLEANS.contains(n)) {
            // `--novalidate=x` is no absl form: leave it for clap to reject.
            out.push(match value {
                None => format!("--{flag}=false"),
                Some(_) => arg.clone(),
            });
        } else {
            out.push(arg);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::integer;

    fn words(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn absl_spellings_become_clap_ones() {
        assert_eq!(
            absl_forms(words(&[
                "--novalidate",
                "-capacity=5",
                "--print-solution",
                "-canonical_only=false",
                "--input",
                "-validate",
                "--nosuch",
                "-h",
                "-",
            ])),
            words(&[
                "--validate=false",
                "--capacity=5",
                "--print_solution",
                "--canonical_only=false",
                "--input",
                "-validate",
                "--nosuch",
                "-h",
                "-",
            ])
        );
    }

    #[test]
    fn every_boolean_form() {
        for (form, want) in [
            ("--validate", true),
            ("--validate=true", true),
            ("--validate=false", false),
            ("--validate=1", true),
            ("--validate=0", false),
            ("--validate=yes", true),
            ("--validate=NO", false),
            ("--novalidate", false),
            ("-validate", true),
            ("-novalidate", false),
        ] {
            let cli = parse(words(&["--input=x.csv", "--capacity=1", form])).unwrap();
            assert_eq!(cli.place.validate, want, "{form}");
        }
        let cli = parse(words(&["--input=x", "--minimize_capacity"])).unwrap();
        assert!(cli.place.minimize);
        let cli = parse(words(&["--input=x", "--nominimize_capacity"])).unwrap();
        assert!(!cli.place.minimize);
        assert!(parse(words(&["--input=x", "--validate=maybe"])).is_err());
        // absl takes no separate value for a boolean.
        assert!(parse(words(&["--input=x", "--validate", "false"])).is_err());
    }

    #[test]
    fn durations_as_absl_writes_them() {
        let d = |t| duration(t).unwrap();
        assert_eq!(d("1m30s"), Duration::from_secs(90));
        assert_eq!(d("1.5h"), Duration::from_secs(5400));
        assert_eq!(d("500ms"), Duration::from_millis(500));
        assert_eq!(d("2h45m"), Duration::from_secs(9900));
        assert_eq!(d("60"), Duration::from_secs(60));
        assert_eq!(d("0"), Duration::ZERO);
        assert_eq!(d("inf"), Duration::ZERO);
        for bad in ["", "5 parsecs", "1x", "-1s", "s", "1m30"] {
            assert!(duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn numbers_and_lists() {
        assert_eq!(natural("0x1000"), Ok(4096));
        assert_eq!(positive("1_048_576"), Ok(1 << 20));
        assert!(natural("-1").unwrap_err().contains("negative"));
        assert!(positive("0").unwrap_err().contains("at least 1"));
        assert!(integer("x").is_err());
        assert_eq!(preorders("WAT,,TAW").unwrap().0.len(), 2);
        assert!(preorders("WAX").is_err());
    }

    #[test]
    fn the_definition_is_consistent() {
        command().debug_assert();
    }
}
