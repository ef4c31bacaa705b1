//! The compiler model on the command line: colocation, separation and
//! pools columns, `--pool`, the conflict named with ids, one SVG panel
//! per pool. Every placement read back goes through the validator.

use std::path::PathBuf;
use std::process::{Command, Output};

use minimalloc::io::csv;
use minimalloc::model::pools::Pool;
use minimalloc::{validate, validate_pooled, Lifetime, Solution};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_minimalloc"))
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("minimalloc-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn text(o: &[u8]) -> String {
    String::from_utf8_lossy(o).into_owned()
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

/// The offsets of an output CSV (its last `offset` column).
fn offsets(csv_text: &str) -> Vec<i64> {
    let mut lines = csv_text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = header.iter().position(|h| *h == "offset").unwrap();
    lines
        .map(|l| l.split(',').nth(at).unwrap().parse().unwrap())
        .collect()
}

#[test]
fn colocation_and_separation_columns() {
    let input = temp("linked.csv");
    std::fs::write(
        &input,
        "id,lower,upper,size,colocation,separation\n\
         x,0,4,4,g,\nx2,2,6,4,g,\ny,0,6,4,,\na,7,9,2,,s\nb,10,12,2,,s\n",
    )
    .unwrap();
    let o = run(&[
        "--capacity=8",
        &format!("--input={}", input.display()),
        "--validate",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.starts_with("id,lower,upper,size,colocation,separation,offset\n"),
        "{out}"
    );
    let (problem, _) = csv::read(&std::fs::read_to_string(&input).unwrap(), 8).unwrap();
    assert_eq!(problem.colocations(), &[vec![0, 1]]);
    assert_eq!(problem.separations(), &[vec![3, 4]]);
    validate(
        &problem,
        &Solution {
            offsets: offsets(&out),
        },
    )
    .unwrap();
    // Without the colocation the same buffers do not fit 8.
    let plain = temp("plain.csv");
    std::fs::write(&plain, "id,lower,upper,size\nx,0,4,4\nx2,2,6,4\ny,0,6,4\n").unwrap();
    let o = run(&["--capacity=8", &format!("--input={}", plain.display())]);
    assert_eq!(o.status.code(), Some(2));
    // Links that cannot hold name the line and the buffers.
    let bad = temp("bad-link.csv");
    std::fs::write(
        &bad,
        "id,lower,upper,size,offset,colocation\np,0,4,4,0,g\nq,2,6,4,4,g\n",
    )
    .unwrap();
    let o = run(&["--capacity=8", &format!("--input={}", bad.display())]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("line 3, column colocation")
            && err.contains("fixed at different offsets, 0 and 4"),
        "{err}"
    );
}

#[test]
fn an_infeasible_fit_names_its_conflict() {
    let paper = format!(
        "{}/benchmarks/examples/paper.12.csv",
        env!("CARGO_MANIFEST_DIR")
    );
    let o = run(&["--capacity=11", &format!("--input={paper}"), "--quiet"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "minimalloc: infeasible: no placement fits capacity 11; buffers b1, b3 and b5 cannot fit together\n"
    );
    let o = run(&["--capacity=11", &format!("--input={paper}"), "--json"]);
    let json: serde_json::Value =
        serde_json::from_str(text(&o.stderr).lines().next().unwrap()).unwrap();
    assert_eq!(json["conflict"], serde_json::json!(["b1", "b3", "b5"]));
    assert_eq!(json["conflict_irreducible"], true);
}

#[test]
fn pools_spill_and_draw_one_panel_each() {
    let input = temp("step.csv");
    let o = run(&[
        "gen",
        "--buffers=600",
        "--seed=3",
        &format!("--output={}", input.display()),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let svg = temp("pools.svg");
    let pools = [
        "--pool=sram:1048576:0:64",
        "--pool=dram:0x4000000:0x100000000:64",
    ];
    let o = bin()
        .args(pools)
        .args([
            &format!("--input={}", input.display()),
            "--validate",
            "--json",
            &format!("--svg={}", svg.display()),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.starts_with("id,lower,upper,size,offset,pool\n"),
        "{}",
        &out[..80]
    );
    // Read back: the pool of each row, its address; checked against the
    // input with the same pools.
    let defs = [
        Pool {
            name: "sram".into(),
            capacity: 1 << 20,
            base: 0,
            alignment: 64,
        },
        Pool {
            name: "dram".into(),
            capacity: 1 << 26,
            base: 1 << 32,
            alignment: 64,
        },
    ];
    let (problem, _) = csv::read_pooled(
        &std::fs::read_to_string(&input).unwrap(),
        i64::MAX,
        Lifetime::HalfOpen,
        &defs,
    )
    .unwrap();
    let pool_of: Vec<u32> = out
        .lines()
        .skip(1)
        .map(|l| {
            if l.ends_with(",sram") {
                0
            } else {
                assert!(l.ends_with(",dram"));
                1
            }
        })
        .collect();
    validate_pooled(
        &problem,
        &Solution {
            offsets: offsets(&out),
        },
        &pool_of,
    )
    .unwrap();
    let json: serde_json::Value = serde_json::from_str(text(&o.stderr).trim()).unwrap();
    let pools_json = json["pools"].as_array().unwrap();
    assert_eq!(pools_json.len(), 2);
    assert_eq!(pools_json[0]["name"], "sram");
    assert!(pools_json[0]["height"].as_i64().unwrap() <= 1 << 20);
    let spilled = pools_json[1]["spilled"].as_array().unwrap().len();
    assert_eq!(spilled as u64, pools_json[1]["buffers"].as_u64().unwrap());
    assert_eq!(json["unplaced"], serde_json::json!([]));
    let drawing = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(
        drawing.matches("<svg ").count(),
        3,
        "one panel per pool in one picture"
    );
    assert!(drawing.contains("pool sram") && drawing.contains("pool dram"));

    // A pool too small for everyone: the buffers left are named.
    let o = run(&[&format!("--input={}", input.display()), "--pool=tiny:1024"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("no pool could take"),
        "{}",
        text(&o.stderr)
    );
    // Bad pool specifications and names.
    let o = run(&[&format!("--input={}", input.display()), "--pool=sram"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("NAME:CAPACITY"));
    let named = temp("named.csv");
    std::fs::write(
        &named,
        "id,lower,upper,size,pools\na,0,2,4,sram\nb,0,2,4,l3\n",
    )
    .unwrap();
    let o = run(&[&format!("--input={}", named.display()), "--pool=sram:8"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("line 3, column pools: no pool is named \"l3\""),
        "{}",
        text(&o.stderr)
    );
}

/// Link columns are read by position even when the first field is empty.
#[test]
fn link_columns_with_an_empty_first_field() {
    let input = temp("empty-id.csv");
    std::fs::write(
        &input,
        "id,lower,upper,size,colocation\n,0,4,4,g\nx2,2,6,4,g\ny,0,6,4,\n",
    )
    .unwrap();
    let o = run(&[
        "--capacity=8",
        &format!("--input={}", input.display()),
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let (problem, _) = csv::read(&std::fs::read_to_string(&input).unwrap(), 8).unwrap();
    assert_eq!(problem.colocations(), &[vec![0, 1]]);
    let out = text(&o.stdout);
    validate(
        &problem,
        &Solution {
            offsets: offsets(&out),
        },
    )
    .unwrap();
}

/// The penalty column and `--penalty`: labels with a cost, shared by the
/// rows they price; the objective keeps the dear pair apart and says what
/// it pays (in words and in `--json`); the column reads back as written;
/// bad cells name their line and column.
#[test]
fn penalty_column_and_objective() {
    // a, b, c one after another, d beside b and c; room for two: b and c
    // must share (1), a goes beside d rather than above b (5). Python's
    // test reads and writes the same file.
    let input = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/penalty.csv");
    let input = input.to_str().unwrap();
    let o = run(&["--input", input, "--capacity=128", "--penalty", "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let json = text(&o.stderr);
    assert!(
        json.contains("\"penalty\":1,\"penalty_lower_bound\":1"),
        "{json}"
    );
    let (problem, _) = csv::read(&out, 128).unwrap();
    let solution = Solution {
        offsets: offsets(&out),
    };
    validate(&problem, &solution).unwrap();
    assert_eq!(solution.penalty(&problem), 1);
    assert_eq!(
        problem.penalties().collect::<Vec<_>>(),
        vec![(0, 1, 5), (1, 2, 1)]
    );
    let words = run(&["--input", input, "--capacity=128", "--penalty"]);
    assert!(
        text(&words.stderr).contains("penalty 1 (proven optimal)"),
        "{}",
        text(&words.stderr)
    );
    // Without --penalty nothing is paid for on purpose, and nothing said.
    let fit = run(&["--input", input, "--capacity=128", "--json"]);
    assert!(text(&fit.stderr).contains("\"penalty\":null"));
    // What the library writes reads back as the same problem.
    let (problem, _) = csv::read(&std::fs::read_to_string(input).unwrap(), 128).unwrap();
    let written = csv::write_problem(&problem, None);
    assert_eq!(written, std::fs::read_to_string(input).unwrap());
    // Bad cells.
    for (cell, says) in [
        ("ab", "expected label:cost"),
        ("ab:x", "expected an integer"),
        ("ab:-3 cd:-3", "costs -3 here but 5 on line 2"),
        ("ab:6", "costs 6 here but 5 on line 2"),
        ("zz:1", "names one row"),
    ] {
        let bad = format!("id,lower,upper,size,penalty\na,0,2,64,ab:5\nb,2,4,64,{cell}\n");
        let e = csv::read(&bad, 128).unwrap_err().to_string();
        assert!(
            e.contains("column penalty") && e.contains(says),
            "{cell}: {e}"
        );
    }
    let negative = "id,lower,upper,size,penalty\na,0,2,64,ab:-5\nb,2,4,64,ab:-5\n";
    let e = csv::read(negative, 128).unwrap_err().to_string();
    assert!(
        e.contains("line 3, column penalty") && e.contains("must not be negative"),
        "{e}"
    );
    let both = run(&[
        "--input",
        input,
        "--capacity=128",
        "--penalty",
        "--minimize",
    ]);
    assert!(!both.status.success());
}
