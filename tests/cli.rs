//! The command-line program, run as the reference is run.

use std::path::PathBuf;
use std::process::{Command, Output};

use minimalloc::io::csv;
use minimalloc::{validate, Solution};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_minimalloc"))
}

fn repo(path: &str) -> String {
    format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("minimalloc-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Reads a CLI output file back: the problem (with the offsets as fixed
/// offsets) and the offsets.
fn offsets_of(path: &PathBuf, capacity: i64) -> Vec<i64> {
    let text = std::fs::read_to_string(path).unwrap();
    let (p, _) = csv::read(&text, capacity).unwrap();
    p.buffers().iter().map(|b| b.offset.unwrap()).collect()
}

#[test]
fn solves_a_challenging_instance_like_the_reference() {
    let input = repo("benchmarks/challenging/A.1048576.csv");
    let out = temp("A.out.csv");
    let o = bin()
        .args([
            "--capacity=1048576",
            &format!("--input={input}"),
            &format!("--output={}", out.display()),
            "--validate",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let written = std::fs::read_to_string(&out).unwrap();
    let original = std::fs::read_to_string(&input).unwrap();
    // Every input column plus offset, rows in the input's order.
    assert!(written.starts_with("id,lower,upper,size,offset\n"));
    for (a, b) in original.lines().skip(1).zip(written.lines().skip(1)) {
        assert!(b.starts_with(&format!("{a},")), "{a} vs {b}");
    }
    let (problem, _) = csv::read(&original, 1048576).unwrap();
    let offsets = offsets_of(&out, 1048576);
    validate(&problem, &Solution { offsets }).unwrap();
}

#[test]
fn flags_take_values_either_way_and_report_stats() {
    let o = bin()
        .args([
            "--capacity",
            "12",
            "--input",
            &repo("benchmarks/examples/paper.12.csv"),
            "--stats",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let stdout = String::from_utf8(o.stdout.clone()).unwrap();
    assert!(
        stdout.starts_with("id,lower,upper,size,offset\nb1,0,3,4,"),
        "{stdout}"
    );
    let err = stderr(&o);
    for field in [
        "buffers        5",
        "max load       12",
        "height         12",
        "fragmentation  0.00%",
        "nodes",
        "time",
    ] {
        assert!(err.contains(field), "missing {field:?} in\n{err}");
    }
}

#[test]
fn exit_codes() {
    let paper = repo("benchmarks/examples/paper.12.csv");
    let run = |args: &[&str]| bin().args(args).output().unwrap();

    // The reference's time line, then the verdict.
    let o = run(&["--capacity=11", &format!("--input={paper}")]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(lines[0].parse::<f64>().is_ok(), "{err}");
    assert_eq!(
        lines[1],
        "minimalloc: infeasible: no placement fits capacity 11; buffers b1, b3 and b5 cannot fit together"
    );

    let o = run(&[
        "--capacity=12",
        &format!("--input={paper}"),
        "--timeout=1ns",
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(
        stderr(&o),
        "minimalloc: timed out before finding a placement\n"
    );
    // Zero is no timeout, as timeout_ms = 0 is in C.
    let o = run(&["--capacity=12", &format!("--input={paper}"), "--timeout=0"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    let o = run(&["--capacity=12", "--input=/no/such/file.csv", "--quiet"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with("minimalloc: cannot read /no/such/file.csv:"));

    let bad = temp("bad.csv");
    std::fs::write(&bad, "id,lower,upper,size\na,0,3,4\nb,2,1,4\n").unwrap();
    let o = run(&[
        "--capacity=12",
        &format!("--input={}", bad.display()),
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).ends_with(
            "line 3, column upper: buffer 1 (id \"b\"): upper lifetime [2, 1) is empty: upper must be greater than lower\n"
        ),
        "{}",
        stderr(&o)
    );

    let o = run(&["--capacity=twelve", &format!("--input={paper}")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(
            "invalid value 'twelve' for '--capacity <N>': expected an integer, got \"twelve\""
        ),
        "{}",
        stderr(&o)
    );

    let o = run(&[
        "--capacity=12",
        &format!("--input={paper}"),
        "--timeout=soon",
    ]);
    assert_eq!(o.status.code(), Some(1));

    let o = run(&["--input", &paper]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "minimalloc: --capacity is required unless minimising (see --help)\n"
    );

    let o = run(&["--capacity=0", &format!("--input={paper}")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("for '--capacity <N>': must be at least 1, got 0"),
        "{}",
        stderr(&o)
    );
}

/// The problem of a CSV file, read with `capacity`.
fn problem_of(path: &str, capacity: i64) -> minimalloc::Problem {
    csv::read(&std::fs::read_to_string(path).unwrap(), capacity)
        .unwrap()
        .0
}

#[test]
fn minimising_needs_no_capacity_and_proves_the_max_load() {
    let paper = repo("benchmarks/examples/paper.12.csv");
    for args in [
        vec!["--minimize".to_string()],
        vec!["--minimize_capacity".into(), "--capacity=100".into()],
    ] {
        let out = temp("paper.min.csv");
        let o = bin()
            .args(&args)
            .arg(format!("--input={paper}"))
            .arg(format!("--output={}", out.display()))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("height 12 (proven optimal)"),
            "{}",
            stderr(&o)
        );
        let offsets = offsets_of(&out, 12);
        validate(&problem_of(&paper, 12), &Solution { offsets }).unwrap();
    }
    // Below the max load even as an upper bound: infeasible.
    let o = bin()
        .args(["--minimize", "--capacity=11", &format!("--input={paper}")])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("the lower bound is 12"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn gen_is_reproducible_and_heuristics_with_seeds_too() {
    let gen = |seed: &str, name: &str| {
        let path = temp(name);
        let o = bin()
            .args(["gen", "--buffers=3000", &format!("--seed={seed}")])
            .arg(format!("--output={}", path.display()))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        std::fs::read_to_string(&path).unwrap()
    };
    let a = gen("5", "g5.csv");
    assert_eq!(a, gen("5", "g5b.csv"));
    assert_ne!(a, gen("6", "g6.csv"));
    assert_eq!(a.lines().count(), 3001);
    let o = bin().args(["gen", "--seed=1"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("required arguments were not provided")
            && stderr(&o).contains("--buffers <N>"),
        "{}",
        stderr(&o)
    );

    let input = temp("g5.csv").display().to_string();
    let place = |heuristic: &str, threads: &str| {
        let o = bin()
            .args([
                "--minimize",
                &format!("--input={input}"),
                &format!("--heuristic={heuristic}"),
                "--restarts=8",
                "--seed=9",
                &format!("--threads={threads}"),
                "--quiet",
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    let problem = problem_of(&input, i64::MAX);
    for heuristic in ["online", "first-fit", "skyline"] {
        let one = place(heuristic, "1");
        assert_eq!(one, place(heuristic, "3"), "{heuristic}");
        let (placed, _) = csv::read(&one, i64::MAX).unwrap();
        let offsets = placed.buffers().iter().map(|b| b.offset.unwrap()).collect();
        validate(&problem, &Solution { offsets }).unwrap();
    }
    let o = bin()
        .args([
            "--minimize",
            &format!("--input={input}"),
            "--heuristic=worst-fit",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("unknown heuristic \"worst-fit\""));
}

#[test]
fn lifetime_conventions_and_a_base_address() {
    // The paper's example with inclusive ends.
    let inclusive = temp("paper.inclusive.csv");
    std::fs::write(
        &inclusive,
        "id,lower,upper,size\nb1,0,2,4\nb2,3,8,4\nb3,0,8,4\nb4,9,20,4\nb5,0,20,4\n",
    )
    .unwrap();
    let o = bin()
        .args([
            "--capacity=12",
            &format!("--input={}", inclusive.display()),
            "--lifetime=inclusive",
            "--base=0x1000",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (placed, _) = csv::read(&String::from_utf8(o.stdout).unwrap(), i64::MAX).unwrap();
    let offsets: Vec<i64> = placed
        .buffers()
        .iter()
        .map(|b| b.offset.unwrap() - 0x1000)
        .collect();
    let paper = problem_of(&repo("benchmarks/examples/paper.12.csv"), 12);
    validate(&paper, &Solution { offsets }).unwrap();
    // And with exclusive starts.
    let exclusive = temp("paper.exclusive.csv");
    std::fs::write(
        &exclusive,
        "id,lower,upper,size\nb1,-1,3,4\nb2,2,9,4\nb3,-1,9,4\nb4,8,21,4\nb5,-1,21,4\n",
    )
    .unwrap();
    let o = bin()
        .args([
            "--capacity=12",
            &format!("--input={}", exclusive.display()),
            "--lifetime=exclusive",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The input's columns are written back as given: take the offsets.
    let offsets = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').next().unwrap().parse().unwrap())
        .collect();
    validate(&paper, &Solution { offsets }).unwrap();

    let o = bin()
        .args([
            "--capacity=12",
            &format!("--input={}", inclusive.display()),
            "--lifetime=closed",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("invalid value 'closed' for '--lifetime <KIND>'")
            && stderr(&o).contains("[possible values: half-open, inclusive, exclusive]"),
        "{}",
        stderr(&o)
    );

    let aligned = temp("aligned.csv");
    std::fs::write(&aligned, "id,lower,upper,size,alignment\na,0,2,64,64\n").unwrap();
    let o = bin()
        .args([
            "--capacity=128",
            &format!("--input={}", aligned.display()),
            "--base=96",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o)
            .contains("base address 96 is not a multiple of buffer 0 (id \"a\")'s alignment 64"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn svg_draws_every_piece() {
    let input = repo("benchmarks/challenging/C.1048576.csv");
    let svg = temp("C.svg");
    let o = bin()
        .args([
            "--capacity=1048576",
            &format!("--input={input}"),
            &format!("--svg={}", svg.display()),
            "--quiet",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&svg).unwrap();
    let problem = problem_of(&input, 1048576);
    let pieces: usize = problem.buffers().iter().map(|b| b.pieces().count()).sum();
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    assert_eq!(text.matches("<rect x=").count(), pieces);
    assert!(text.contains("capacity 1048576") && text.contains("max load"));
}

#[test]
fn long_runs_show_progress_on_stderr() {
    let o = bin()
        .args([
            "--minimize",
            // J runs to the timeout (D is now proven optimal at once).
            &format!("--input={}", repo("benchmarks/challenging/J.1048576.csv")),
            "--timeout=1.6s",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    // Not a terminal: whole lines, the first after a second (when it
    // comes depends on the machine's load, so only its order is checked).
    let first = err
        .lines()
        .find_map(|l| l.split_once(" s minimising: best height"))
        .and_then(|(head, _)| head.strip_prefix("minimalloc: "))
        .and_then(|secs| secs.parse::<f64>().ok());
    assert!(first.is_some_and(|secs| secs >= 1.0), "{err}");
    assert!(err.contains("stopped by the timeout"), "{err}");
    // Quick runs say nothing but the reference's time line and the summary.
    let o = bin()
        .args([
            "--minimize",
            &format!("--input={}", repo("benchmarks/examples/paper.12.csv")),
        ])
        .output()
        .unwrap();
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(lines[0].parse::<f64>().is_ok(), "{err}");
    assert!(
        lines[1].starts_with("minimalloc: height 12 (proven optimal); max load 12; from "),
        "{err}"
    );
}

/// `gen --family=kernel --memories` writes a pools column and prints the
/// `--pool` flags that go with it; fed back, the kernel is planned in its
/// memories. `--memories` belongs to the kernel family only.
#[test]
fn gen_kernels_over_memories_round_trip_through_their_pool_flags() {
    let path = temp("memories.csv");
    let mut flags = Vec::new();
    for seed in 0..20 {
        let o = bin()
            .args(["gen", "--family=kernel", "--memories", "--buffers=60"])
            .arg(format!("--seed={seed}"))
            .arg(format!("--output={}", path.display()))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let line = stderr(&o);
        let pools = line.trim().strip_prefix("pools: ").expect("the pool flags");
        flags = pools.split(' ').map(String::from).collect::<Vec<_>>();
        if flags.len() > 1 {
            break;
        }
    }
    assert!(
        flags.len() > 1,
        "no kernel over several memories in 20 seeds"
    );
    assert!(std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .contains(",pools"));
    let o = bin()
        .args(["--minimize", "--timeout=2s", "--threads=1", "--validate"])
        .arg(format!("--input={}", path.display()))
        .args(&flags)
        .output()
        .unwrap();
    // Planned in its memories, or said plainly that they cannot take it.
    assert!(
        o.status.code() == Some(0) || stderr(&o).contains("no assignment to pools"),
        "{}",
        stderr(&o)
    );
    let o = bin()
        .args(["gen", "--family=planted", "--memories", "--buffers=10"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("--memories: only the kernel families"),
        "{}",
        stderr(&o)
    );
}

/// `gen --family=staged-kernel` writes its separations (over memories
/// too), and the kernel is planned with them: the plan is validated, and
/// separated buffers alive apart in time take disjoint bytes.
#[test]
fn staged_kernels_write_their_separations_and_plan() {
    let path = temp("staged-kernel.csv");
    let o = bin()
        .args([
            "gen",
            "--family=staged-kernel",
            "--buffers=80",
            "--separated=0.5",
        ])
        .arg(format!("--output={}", path.display()))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.lines().next().unwrap().contains("separation"));
    let o = bin()
        .args(["--minimize", "--timeout=1s", "--threads=1", "--validate"])
        .arg(format!("--input={}", path.display()))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = bin()
        .args([
            "gen",
            "--family=staged-kernel",
            "--memories",
            "--buffers=60",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("pools: "), "{}", stderr(&o));
}

/// `gen --family=planted-kernel` says its optimum (its max load), writes
/// its separations, and keeps them to buffers its packing put apart: so
/// minimising never reports a bound above that optimum or a height below
/// it, and fitting at it is never called infeasible (a wrong proof).
#[test]
fn planted_kernels_say_their_optimum_and_no_answer_contradicts_it() {
    let path = temp("planted-kernel.csv");
    for seed in 0..6 {
        let o = bin()
            .args(["gen", "--family=planted-kernel", "--buffers=50"])
            .arg(format!("--separated={}", [0.1, 0.5][seed % 2]))
            .arg(format!("--seed={seed}"))
            .arg(format!("--output={}", path.display()))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let said = stderr(&o);
        let optimum: i64 = said
            .split("the optimal height is ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no optimum in {said}"));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.lines().next().unwrap().contains("separation"));
        let o = bin()
            .args([
                "--minimize",
                "--timeout=1s",
                "--threads=1",
                "--validate",
                "--json",
            ])
            .arg(format!("--input={}", path.display()))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let report = stderr(&o);
        let field = |name: &str| -> i64 {
            let at = report.find(&format!("\"{name}\":")).expect(name) + name.len() + 3;
            let digits: String = report[at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().expect(name)
        };
        assert!(field("lower_bound") <= optimum, "seed {seed}: {report}");
        assert!(field("height") >= optimum, "seed {seed}: {report}");
        let o = bin()
            .args(["--timeout=1s", "--threads=1", "--validate"])
            .arg(format!("--capacity={optimum}"))
            .arg(format!("--input={}", path.display()))
            .output()
            .unwrap();
        assert_ne!(o.status.code(), Some(2), "seed {seed}: {}", stderr(&o));
    }
}

/// `--stats` and `--json` say where the search started, the best plain
/// order's height, and how much of its gap to the max load the search
/// closed: the plain order is no lower than the height returned, and the
/// share closed follows from the three figures. A pinwheel packing of 201
/// pieces, minimised with a fixed count of restarts (no clock in it).
#[test]
fn stats_say_the_plain_order_and_the_gap_closed() {
    let path = temp("pinwheel-201.csv");
    let o = bin()
        .args(["gen", "--family=pinwheel", "--buffers=201", "--seed=4"])
        .arg(format!("--output={}", path.display()))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = bin()
        .args(["--minimize", "--restarts=20", "--threads=1", "--json"])
        .arg(format!("--input={}", path.display()))
        .arg("--output=/dev/null")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    let json: serde_json::Value = serde_json::from_str(err.lines().last().unwrap()).unwrap();
    let (plain, height, load) = (
        json["plain_height"].as_i64().expect("a plain order ran"),
        json["height"].as_i64().unwrap(),
        json["max_load"].as_i64().unwrap(),
    );
    assert!(plain >= height && height >= load, "{err}");
    let o = bin()
        .args(["--minimize", "--restarts=20", "--threads=1", "--stats"])
        .arg(format!("--input={}", path.display()))
        .arg("--output=/dev/null")
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(err.contains(&format!("plain order    {plain} ")), "{err}");
    if plain > load {
        let closed = 100.0 * (plain - height) as f64 / (plain - load) as f64;
        assert!(
            err.contains(&format!("gap closed     {closed:.1}%")),
            "{err}"
        );
    }
}
