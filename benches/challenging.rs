//! Solves the challenging suite several times and prints, per instance, the
//! median time and the nodes, then the total and the geometric mean.
//!
//!     cargo bench --bench challenging -- [--runs N] [--dir DIR]
//!         [--capacity C] [--timeout SECS] [--variants V1,V2,...]
//!
//! A variant is `default` or rules switched off, joined by `+`:
//! `no-inference`, `no-effective-floor`, `no-monotonic`, `no-dominance`,
//! `no-hatless`, `no-decomposition`, `no-preordering`, `no-canonical`, or
//! `order=WAT` (one preordering). Variants are run alternately, so that
//! machine noise hits them alike.

use std::time::Duration;

use minimalloc::io::csv;
use minimalloc::{plan, validate, Options, Status};
use minimalloc::{Params, Preorder};

struct Variant {
    name: String,
    params: Params,
}

fn variant(name: &str) -> Result<Variant, String> {
    let mut params = Params::default();
    for rule in name.split('+') {
        match rule {
            "default" => {}
            "no-inference" => params.section_inference = false,
            "no-effective-floor" => params.effective_floor = false,
            "no-monotonic" => params.monotonic_floor = false,
            "no-dominance" => params.dominance = false,
            "no-hatless" => params.hatless = false,
            "no-decomposition" => params.decomposition = false,
            "no-preordering" => params.static_preordering = false,
            "no-dynamic-preordering" => params.dynamic_preordering = false,
            "no-canonical" => params.canonical = false,
            r if r.starts_with("order=") => {
                let orders: Result<Vec<Preorder>, _> =
                    r[6..].split('/').map(|o| o.parse::<Preorder>()).collect();
                params.preorders = orders.map_err(|e| e.to_string())?;
            }
            _ => return Err(format!("unknown rule {rule:?}")),
        }
    }
    Ok(Variant {
        name: name.into(),
        params,
    })
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() {
    let mut runs = 3usize;
    let mut dir = String::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benchmarks/challenging"
    ));
    let mut capacity = 1048576i64;
    let mut timeout: Option<f64> = None;
    let mut names = String::from("default");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) => (f.to_string(), Some(v.to_string())),
            None => (a.clone(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next())
                .expect("flag needs a value")
        };
        match flag.as_str() {
            "--runs" => runs = value().parse().expect("--runs N"),
            "--dir" => dir = value(),
            "--capacity" => capacity = value().parse().expect("--capacity N"),
            "--timeout" => timeout = Some(value().parse().expect("--timeout SECS")),
            "--variants" => names = value(),
            "--bench" => {}
            _ => panic!("unknown argument {a:?}"),
        }
    }
    let variants: Vec<Variant> = names
        .split(',')
        .map(|n| variant(n).unwrap_or_else(|e| panic!("{e}")))
        .collect();

    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {dir}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .collect();
    files.sort();
    let problems: Vec<_> = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let (p, _) = csv::read(&text, capacity).unwrap();
            (f.file_stem().unwrap().to_string_lossy().to_string(), p)
        })
        .collect();

    // times[variant][instance][run], nodes and status per variant/instance.
    let mut times = vec![vec![Vec::new(); problems.len()]; variants.len()];
    let mut nodes = vec![vec![0u64; problems.len()]; variants.len()];
    let mut status = vec![vec![String::new(); problems.len()]; variants.len()];
    for _ in 0..runs {
        for (v, var) in variants.iter().enumerate() {
            for (i, (_, problem)) in problems.iter().enumerate() {
                let options = Options {
                    timeout: timeout.map(Duration::from_secs_f64),
                    solver: var.params.clone(),
                    ..Options::default()
                };
                let outcome = plan(problem, &options);
                if let Some(s) = &outcome.solution {
                    validate(problem, s).expect("the solution must be valid");
                }
                times[v][i].push(outcome.stats.elapsed.as_secs_f64());
                nodes[v][i] = outcome.stats.nodes;
                status[v][i] = match outcome.status {
                    Status::Solved => "solved".into(),
                    s => format!("{s:?}").to_lowercase(),
                };
            }
        }
    }

    let mut medians = vec![vec![0f64; problems.len()]; variants.len()];
    for (v, var) in variants.iter().enumerate() {
        println!(
            "\nvariant {} (median of {runs} runs, capacity {capacity})",
            var.name
        );
        println!(
            "{:<10} {:>7} {:>10} {:>12} {:>12}",
            "instance", "buffers", "status", "time (s)", "nodes"
        );
        let mut total = 0.0;
        let mut log_sum = 0.0;
        for (i, (name, problem)) in problems.iter().enumerate() {
            let m = median(&mut times[v][i]);
            medians[v][i] = m;
            total += m;
            log_sum += m.max(1e-6).ln();
            println!(
                "{:<10} {:>7} {:>10} {:>12.4} {:>12}",
                name,
                problem.len(),
                status[v][i],
                m,
                nodes[v][i]
            );
        }
        let geo = (log_sum / problems.len() as f64).exp();
        println!(
            "{:<10} {:>7} {:>10} {:>12.4} {:>12}",
            "total",
            "",
            "",
            total,
            nodes[v].iter().sum::<u64>()
        );
        println!("{:<10} {:>7} {:>10} {:>12.4}", "geomean", "", "", geo);
    }
    if variants.len() > 1 {
        println!(
            "\ntime ratio to {} (per instance, median of runs)",
            variants[0].name
        );
        for (v, var) in variants.iter().enumerate().skip(1) {
            let ratios: Vec<String> = (0..problems.len())
                .map(|i| {
                    format!(
                        "{}={:.2}",
                        problems[i].0.split('.').next().unwrap(),
                        medians[v][i] / medians[0][i].max(1e-9)
                    )
                })
                .collect();
            println!("{:<28} {}", var.name, ratios.join(" "));
        }
    }
}
