//! The command-line program, run as the reference is run.

use std::path::PathBuf;
use std::process::{Command, Output};

use minimalloc::{csv, validate, Solution};

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

    let o = run(&["--capacity=11", &format!("--input={paper}")]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "minimalloc: infeasible: no placement fits capacity 11\n"
    );

    let o = run(&["--capacity=12", &format!("--input={paper}"), "--timeout=0s"]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(
        stderr(&o),
        "minimalloc: timed out before finding a placement\n"
    );

    let o = run(&["--capacity=12", "--input=/no/such/file.csv"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with("minimalloc: cannot read /no/such/file.csv:"));

    let bad = temp("bad.csv");
    std::fs::write(&bad, "id,lower,upper,size\na,0,3,4\nb,2,1,4\n").unwrap();
    let o = run(&["--capacity=12", &format!("--input={}", bad.display())]);
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
    assert_eq!(
        stderr(&o),
        "minimalloc: --capacity takes an integer, got \"twelve\"\n"
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
        "minimalloc: --capacity is required (see --help)\n"
    );

    let o = run(&["--capacity=0", &format!("--input={paper}")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("capacity must be positive, got 0"),
        "{}",
        stderr(&o)
    );
}
