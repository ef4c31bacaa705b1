//! The command line's edges, run on the built binary: help and version,
//! unknown flags, every flag of the C++ reference in every boolean form,
//! pipes closed early, signals, outputs checked before the solve, stdin,
//! the JSON figures, completions and the man page.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use minimalloc::io::csv;
use minimalloc::{validate, Solution};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_minimalloc"))
}

fn repo(path: &str) -> String {
    format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("minimalloc-edges-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

/// Checks a CSV the CLI wrote (input columns plus offset) against the
/// input it was given.
fn assert_valid(input: &str, written: &str, capacity: i64) {
    let (problem, _) = csv::read(&std::fs::read_to_string(input).unwrap(), capacity).unwrap();
    let (placed, _) = csv::read(written, i64::MAX).unwrap();
    let offsets = placed.buffers().iter().map(|b| b.offset.unwrap()).collect();
    validate(&problem, &Solution { offsets }).unwrap();
}

/// A generated instance of `n` buffers, made once per name.
fn generated(n: usize, family: &str, name: &str) -> String {
    let path = temp(name);
    if !path.exists() {
        let o = run(&[
            "gen",
            &format!("--family={family}"),
            &format!("--buffers={n}"),
            &format!("--output={}", path.display()),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    }
    path.display().to_string()
}

#[test]
fn version_and_help() {
    for flag in ["--version", "-V"] {
        let o = run(&[flag]);
        assert_eq!(o.status.code(), Some(0));
        assert_eq!(
            text(&o.stdout),
            format!("minimalloc {}\n", env!("CARGO_PKG_VERSION"))
        );
    }
    for flag in ["-h", "--help"] {
        let o = run(&[flag]);
        assert_eq!(o.status.code(), Some(0));
        let out = text(&o.stdout);
        for part in [
            "Usage: minimalloc",
            "--capacity",
            "--canonical_only",
            "gen",
            "Exit codes",
        ] {
            assert!(out.contains(part), "{flag}: no {part:?} in\n{out}");
        }
    }
    let o = run(&["gen", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stdout).contains("--buffers <N>"));
}

#[test]
fn unknown_flags_get_a_suggestion_and_exit_1() {
    for (typo, meant) in [
        ("--minimise", "--minimize"),
        ("--stat", "--stats"),
        ("--canonical-onl", "--canonical_only"),
    ] {
        let o = run(&[typo, "--input=x.csv"]);
        assert_eq!(o.status.code(), Some(1), "{typo}");
        let err = text(&o.stderr);
        assert!(
            err.contains(&format!("unexpected argument '{typo}'")) && err.contains(meant),
            "{typo}: {err}"
        );
        assert!(!err.contains("panicked"));
    }
}

#[test]
fn every_reference_flag_in_every_boolean_form() {
    let paper = repo("benchmarks/examples/paper.12.csv");
    let switches = [
        "validate",
        "canonical_only",
        "section_inference",
        "dynamic_ordering",
        "check_dominance",
        "unallocated_floor",
        "static_preordering",
        "dynamic_decomposition",
        "monotonic_floor",
        "hatless_pruning",
    ];
    for name in switches {
        for form in [
            format!("--{name}"),
            format!("--{name}=true"),
            format!("--{name}=false"),
            format!("--{name}=1"),
            format!("--{name}=0"),
            format!("--{name}=yes"),
            format!("--no{name}"),
            format!("-{name}"),
            format!("-{name}=false"),
        ] {
            // The exact search alone, so that its switches decide.
            let o = run(&[
                "--exact",
                "--capacity=12",
                &format!("--input={paper}"),
                &form,
            ]);
            assert_eq!(o.status.code(), Some(0), "{form}: {}", text(&o.stderr));
            assert_valid(&paper, &text(&o.stdout), 12);
            let validated = text(&o.stderr).lines().next().unwrap().ends_with("PASS");
            let on = !(form.ends_with("=false") || form.ends_with("=0") || form.contains("-no"));
            if name == "validate" {
                assert_eq!(validated, on, "{form}");
            }
        }
        let o = run(&[
            "--capacity=12",
            &format!("--input={paper}"),
            &format!("--{name}=maybe"),
        ]);
        assert_eq!(o.status.code(), Some(1), "{name}=maybe");
    }
    // Still exact with every rule off: 11 stays infeasible.
    let mut all_off: Vec<String> = switches[1..]
        .iter()
        .map(|n| format!("--{n}=false"))
        .collect();
    all_off.extend([
        "--exact".into(),
        "--capacity=11".into(),
        format!("--input={paper}"),
    ]);
    let o = bin().args(&all_off).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));

    for list in ["WAT,TAW,TWA", "TWA", "AWT,,TAW"] {
        let o = run(&[
            "--exact",
            "--capacity=12",
            &format!("--input={paper}"),
            &format!("--preordering_heuristics={list}"),
        ]);
        assert_eq!(o.status.code(), Some(0), "{list}: {}", text(&o.stderr));
    }
    let o = run(&[
        "--capacity=12",
        &format!("--input={paper}"),
        "--preordering_heuristics=WAX",
    ]);
    assert_eq!(o.status.code(), Some(1));
    // --print_solution: the LaTeX picture on stdout, the CSV in --output.
    let out = temp("paper.latex.csv");
    let o = run(&[
        "--capacity=12",
        &format!("--input={paper}"),
        &format!("--output={}", out.display()),
        "--print_solution",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let picture = text(&o.stdout);
    assert!(
        picture.starts_with("\\documentclass[tikz]{standalone}"),
        "{picture}"
    );
    assert_eq!(picture.matches("rectangle").count(), 5 + 1, "{picture}");
    assert_valid(&paper, &std::fs::read_to_string(&out).unwrap(), 12);
    // Without --output both would go to stdout: refused before solving.
    let o = run(&[
        "--capacity=12",
        &format!("--input={paper}"),
        "--print_solution",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("give --output"));
}

#[test]
fn durations_as_the_reference_writes_them() {
    let paper = repo("benchmarks/examples/paper.12.csv");
    for timeout in ["1m30s", "60s", "1.5h", "500ms", "inf", "0"] {
        let o = run(&[
            "--capacity=12",
            &format!("--input={paper}"),
            &format!("--timeout={timeout}"),
        ]);
        assert_eq!(o.status.code(), Some(0), "{timeout}: {}", text(&o.stderr));
    }
    let o = run(&[
        "--capacity=12",
        &format!("--input={paper}"),
        "--timeout=5 parsecs",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("bad duration"));
}

/// Runs `args` with stdout piped, reads one line and closes the pipe, as
/// `| head -1` does; returns the exit code and stderr.
fn head_one(args: &[&str]) -> (Option<i32>, String) {
    let mut child = bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("id,"), "{first}");
    // The reader is gone: the next writes hit a closed pipe.
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (child.wait().unwrap().code(), err)
}

#[test]
fn a_closed_stdout_ends_quietly() {
    let (code, err) = head_one(&["gen", "--buffers=300000"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(err, "");
    let input = generated(100_000, "step", "g100k.csv");
    let (code, err) = head_one(&[
        "--minimize",
        &format!("--input={input}"),
        "--timeout=2s",
        "--quiet",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe"),
        "{err}"
    );
}

/// Starts minimising `input` into `out` with a ten-minute timeout: a run
/// that only a signal ends in a test's time, on an input that no plan
/// proves optimal (the `issued` family: the default `step` one is placed
/// at its max load, and proven, within about a second).
fn long_minimisation(input: &str, out: &std::path::Path, stderr: Stdio) -> std::process::Child {
    bin()
        .args([
            "--minimize",
            &format!("--input={input}"),
            &format!("--output={}", out.display()),
            "--timeout=10m",
        ])
        .stderr(stderr)
        .spawn()
        .unwrap()
}

#[test]
fn sigint_writes_the_best_placement_and_exits_130() {
    let input = generated(100_000, "issued", "g100k-int.csv");
    let out = temp("g100k.int.out.csv");
    let mut child = long_minimisation(&input, &out, Stdio::piped());
    // The progress line comes once the solve runs (after a second): the
    // signal handlers are in place by then.
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "stderr ended early");
        if line.contains("minimising") {
            break;
        }
    }
    let sent = Instant::now();
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{rest}");
    // Stopped in about the time a solve takes to notice, not at the timeout.
    assert!(sent.elapsed() < Duration::from_secs(120));
    assert!(
        rest.contains("interrupted: wrote the best placement found"),
        "{rest}"
    );
    assert_valid(&input, &std::fs::read_to_string(&out).unwrap(), i64::MAX);
}

#[test]
fn a_bad_output_fails_before_the_input_is_solved() {
    let input = generated(100_000, "step", "g100k-out.csv");
    let start = Instant::now();
    let o = run(&[
        "--minimize",
        &format!("--input={input}"),
        "--output=/nonexistent/dir/x.csv",
        "--timeout=60s",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).starts_with("minimalloc: cannot write /nonexistent/dir/x.csv"),
        "{}",
        text(&o.stderr)
    );
    // The 60 s solve never started (a generous bound for a slow machine).
    assert!(start.elapsed() < Duration::from_secs(10));
    // A failed run leaves no empty file behind.
    let out = temp("never.csv");
    let o = run(&[
        "--capacity=11",
        &format!("--input={}", repo("benchmarks/examples/paper.12.csv")),
        &format!("--output={}", out.display()),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!out.exists());
}

#[test]
fn input_from_stdin_and_figures_as_json() {
    let paper = repo("benchmarks/examples/paper.12.csv");
    let mut child = bin()
        .args(["--capacity=12", "--input=-", "--json"])
        .stdin(std::fs::File::open(&paper).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0), "{err}");
    assert_valid(&paper, &out, 12);
    // stderr holds the one object and nothing else.
    assert_eq!(err.lines().count(), 1, "{err}");
    let json: serde_json::Value = serde_json::from_str(&err).unwrap();
    assert_eq!(json["buffers"], 5);
    assert_eq!(json["max_load"], 12);
    assert_eq!(json["height"], 12);
    assert_eq!(json["lower_bound"], 12);
    assert_eq!(json["optimal"], true);
    assert_eq!(json["status"], "solved");
    assert!(json["source"].is_string());
    assert!(json["nodes"].is_u64() && json["time_s"].is_f64());
    assert!(json["stop_reason"].is_null());
    // Infeasible: the object, then the verdict.
    let o = run(&[
        "--capacity=11",
        &format!("--input={paper}"),
        "--json",
        "--exact",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    let json: serde_json::Value = serde_json::from_str(err.lines().next().unwrap()).unwrap();
    assert_eq!(json["status"], "infeasible");
    assert!(json["height"].is_null());
    // Stopped by the timeout.
    let o = run(&[
        "--minimize",
        &format!("--input={}", repo("benchmarks/challenging/J.1048576.csv")),
        "--timeout=300ms",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_str(text(&o.stderr).trim()).unwrap();
    assert_eq!(json["stop_reason"], "timeout");
    // --stats in words.
    let o = run(&["--capacity=12", &format!("--input={paper}"), "--stats"]);
    let err = text(&o.stderr);
    assert!(err.contains("stopped        no (ran to the end)"), "{err}");
    assert!(!err.contains("TimedOut") && !err.contains("Some("), "{err}");
}

#[test]
fn completions_and_man_page() {
    for shell in ["bash", "zsh", "fish"] {
        let o = run(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}");
        let script = text(&o.stdout);
        assert!(
            script.contains("minimalloc") && script.contains("canonical_only"),
            "{shell}"
        );
    }
    let o = run(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(1));
    let o = run(&["man"]);
    assert_eq!(o.status.code(), Some(0));
    let page = text(&o.stdout);
    assert!(page.contains(".TH minimalloc 1"), "{page}");
    assert!(page.contains("section_inference"));
}

/// The reference's flags over the challenging suite, by the script users
/// would write for the reference (scripts/run_like_reference.sh).
#[test]
fn reference_script_runs_unchanged() {
    let o = Command::new("bash")
        .arg(repo("scripts/run_like_reference.sh"))
        .arg(env!("CARGO_BIN_EXE_minimalloc"))
        .arg(repo("benchmarks/challenging"))
        .output()
        .unwrap();
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    let files = std::fs::read_dir(repo("benchmarks/challenging"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "csv")
        })
        .count();
    assert!(files >= 10);
    assert_eq!(out.matches(" PASS\n").count(), files, "{out}");
}

/// A flag given twice takes its last value, as absl's flags do.
#[test]
fn a_repeated_flag_takes_its_last_value() {
    let input = format!("--input={}", repo("benchmarks/examples/paper.12.csv"));
    // 12 fits the paper's example, 11 does not (exit 2: infeasible).
    let o = run(&[&input, "--capacity=11", "--capacity=12"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = run(&[&input, "--capacity=12", "--capacity=11"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    // Yes/no flags and durations too: the last --validate wins.
    let o = run(&[
        &input,
        "--capacity=12",
        "--novalidate",
        "--validate",
        "--timeout=1s",
        "--timeout=2s",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("PASS"), "{}", text(&o.stderr));
}

/// The messages a new user met: a number past 64 bits is named as such
/// (in a flag and in a CSV field), a conflict of one buffer reads as one,
/// and the README's first command says what its time line was about.
#[test]
fn messages_say_what_is_wrong() {
    let big = temp("big.csv");
    std::fs::write(&big, "id,lower,upper,size\na,0,2,99999999999999999999\n").unwrap();
    let out = run(&["--input", big.to_str().unwrap(), "--capacity=10"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("line 2, column size") && err.contains("above the largest 64-bit integer"),
        "{err}"
    );
    let out = run(&[
        "--input",
        big.to_str().unwrap(),
        "--capacity=-99999999999999999999",
    ]);
    assert!(text(&out.stderr).contains("below the smallest 64-bit integer"));

    let one = temp("one.csv");
    std::fs::write(&one, "id,lower,upper,size\na,0,2,20\nb,2,4,5\n").unwrap();
    let out = run(&["--input", one.to_str().unwrap(), "--capacity=10"]);
    let err = text(&out.stderr);
    assert!(err.contains("buffer a cannot fit"), "{err}");
    assert!(!err.contains("buffers a"), "{err}");

    let out = run(&[
        "--capacity=12",
        &format!("--input={}", repo("benchmarks/examples/paper.12.csv")),
    ]);
    assert!(out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("minimalloc: 5 buffers placed below capacity 12: height 12; max load 12"),
        "{err}"
    );
}

/// Sends SIGINT to `child` and waits for it to end, sending it again each
/// three seconds it runs on: one sent before the handlers are in place is
/// lost where SIGINT starts ignored (a test run as a background job), and
/// the long minimisation would then run for its whole timeout. (A caught
/// one ends the run within a second: a second signal, which would end
/// it at once, comes only after the first was lost.) Past a minute the
/// child is killed and the test fails rather than hang.
fn interrupt_until_it_ends(
    child: &mut std::process::Child,
    what: &str,
) -> std::process::ExitStatus {
    let started = std::time::Instant::now();
    loop {
        let _ = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
        let sent = std::time::Instant::now();
        while sent.elapsed() < Duration::from_secs(3) {
            if let Some(status) = child.try_wait().unwrap() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running a minute after the first SIGINT");
        }
    }
}

/// A signal while the input is still being read (the plan not started)
/// leaves no output file: none exists until the result is written. Sent at
/// several moments from the start; whatever the moment, the file is either
/// absent or a whole valid placement.
#[test]
fn an_early_signal_leaves_no_empty_file() {
    let input = generated(100_000, "issued", "g100k-early.csv");
    for (k, wait_ms) in [0u64, 5, 20, 60, 150].into_iter().enumerate() {
        let out = temp(&format!("early-{k}.csv"));
        let _ = std::fs::remove_file(&out);
        let mut child = long_minimisation(&input, &out, Stdio::null());
        std::thread::sleep(Duration::from_millis(wait_ms));
        let status = interrupt_until_it_ends(&mut child, &format!("{k} ({wait_ms} ms)"));
        assert!(!status.success(), "{k}: the run was not stopped");
        match std::fs::read_to_string(&out) {
            Err(_) => {}
            Ok(written) => {
                assert!(!written.is_empty(), "{k}: an empty file after {wait_ms} ms");
                assert_valid(&input, &written, i64::MAX);
            }
        }
    }
}

/// --help and the manual page name every column the reader takes.
#[test]
fn help_and_man_list_every_column() {
    for args in [&["--help"][..], &["man"][..]] {
        let out = run(args);
        assert!(out.status.success());
        let page = text(&out.stdout);
        for column in [
            "id",
            "lower",
            "upper",
            "size",
            "alignment",
            "hint",
            "gaps",
            "colocation",
            "separation",
            "penalty",
            "pools",
            "offset",
            "start",
            "begin",
            "buffer_id",
            "end",
        ] {
            assert!(page.contains(column), "{args:?} does not name {column}");
        }
    }
}

/// A negative number after a flag is that flag's value, refused by its
/// own check (not taken for an unknown flag), in either form; every error
/// the command line gives starts with the program's name, clap's too; and
/// one buffer is "1 buffer".
#[test]
fn negative_values_one_prefix_and_one_buffer() {
    let path = temp("one-buffer.csv");
    std::fs::write(&path, "id,lower,upper,size\nb0,0,2,4\n").unwrap();
    let input = format!("--input={}", path.display());
    // The exit code and standard error of the command with `args`.
    let run = |args: &[&str]| {
        let o = bin().args(args).arg(&input).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        (o.status.code(), err)
    };
    for args in [["--capacity", "-5"], ["--capacity=-5", "--threads=0"]] {
        let (code, err) = run(&args);
        assert_eq!(code, Some(1), "{err}");
        assert!(
            err.starts_with(
                "minimalloc: invalid value '-5' for '--capacity <N>': must be at least 1, got -5"
            ),
            "{err}"
        );
    }
    let (_, err) = run(&["--threads", "-1", "--capacity=8"]);
    assert!(
        err.starts_with("minimalloc: invalid value '-1' for '--threads <N>'"),
        "{err}"
    );
    let (code, err) = run(&["--bogus"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.starts_with("minimalloc: unexpected argument '--bogus'"),
        "{err}"
    );
    assert!(!err.contains("error:"), "{err}");
    let (_, err) = run(&["--capacity=8", "--output=-"]);
    assert!(
        err.contains("minimalloc: 1 buffer placed below capacity 8"),
        "{err}"
    );
}

/// With pools, `--stats` does not add a pool's base address into a
/// height or compare it with the whole problem's max load: it gives the
/// top address and its bound, the pools' fragmentation against their own
/// bounds, and each pool's line with what placed it; the summary names
/// each pool's height. The source is the pools' (it read "-").
#[test]
fn stats_with_pools_speak_of_pools() {
    let path = temp("two-pools.csv");
    std::fs::write(
        &path,
        "id,lower,upper,size,pools\na,0,4,100,sram\nb,2,6,100,sram\nc,0,5,300,dram\nd,1,3,50,dram\n",
    )
    .unwrap();
    let o = bin()
        .args([
            "--pool=sram:1000:0",
            "--pool=dram:4096:1048576",
            "--stats",
            "--output=/dev/null",
        ])
        .arg(format!("--input={}", path.display()))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "{err}");
    let line = |name: &str| {
        err.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in {err}"))
            .to_string()
    };
    assert!(line("top address").ends_with(" 1048926"), "{err}");
    assert!(line("address bound").ends_with(" 1048926"), "{err}");
    assert!(line("fragmentation").contains(" 0.00% "), "{err}");
    assert!(!err.contains("max load"), "{err}");
    assert!(!line("source").ends_with(" -"), "{err}");
    assert!(
        line("pool sram").contains("height 200 of 1000, lower bound 200, from "),
        "{err}"
    );
    assert!(
        line("pool dram").contains("height 350 of 4096, lower bound 350, from "),
        "{err}"
    );
    assert!(
        err.contains(
            "4 buffers placed in 2 pools: heights sram 200 of 1000, dram 350 of 4096; from "
        ),
        "{err}"
    );
}

/// `--json` is JSON whatever the ids hold (a backslash, a non-ASCII
/// letter): an infeasible fit names the buffers in conflict by their ids,
/// read back as they were written.
#[test]
fn json_carries_any_id() {
    let path = temp("odd-ids.csv");
    std::fs::write(&path, "id,lower,upper,size\na\\b,0,4,8\nété,1,3,8\n").unwrap();
    let o = bin()
        .args(["--capacity=12", "--json", "--output=/dev/null"])
        .arg(format!("--input={}", path.display()))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    // (The JSON line, then the error line that says why.)
    let line = err
        .lines()
        .find(|l| l.starts_with('{'))
        .expect("a JSON line");
    let json: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(json["status"], "infeasible");
    let conflict: Vec<&str> = json["conflict"]
        .as_array()
        .expect("a conflict")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(conflict, ["a\\b", "été"], "{err}");
}
