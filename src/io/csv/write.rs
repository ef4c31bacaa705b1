//! Writing a problem in the reference format: the columns a problem
//! needs, the link columns (colocation, separation, penalty) included, so that
//! what `minimalloc gen` writes reads back as the same problem.

use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

use crate::model::problem::Problem;

/// Writes a problem (and optionally offsets) in the reference format, with
/// the optional columns only when some buffer needs them.
pub fn write_problem(problem: &Problem, offsets: Option<&[i64]>) -> String {
    let buffers = problem.buffers();
    let alignment = buffers.iter().any(|b| b.alignment != 1);
    let hint = buffers.iter().any(|b| b.hint.is_some());
    let gaps = buffers.iter().any(|b| !b.gaps.is_empty());
    let fixed = buffers.iter().any(|b| b.offset.is_some());
    let (colocation, separation) = link_labels(problem);
    let penalty = penalty_cells(problem);
    let pools = pool_cells(problem);
    let mut header = std::vec!["id", "lower", "upper", "size"];
    for (on, name) in [(alignment, "alignment"), (hint, "hint"), (gaps, "gaps")] {
        if on {
            header.push(name);
        }
    }
    for (labels, name) in [
        (&colocation, "colocation"),
        (&separation, "separation"),
        (&penalty, "penalty"),
        (&pools, "pools"),
    ] {
        if !labels.is_empty() {
            header.push(name);
        }
    }
    if fixed || offsets.is_some() {
        header.push("offset");
    }
    let mut out = ::csv::WriterBuilder::new()
        .terminator(::csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    // Writing to memory fails only where the fields do not fit it.
    let _ = out.write_record(&header);
    for (i, b) in buffers.iter().enumerate() {
        let mut row: Vec<String> = std::vec![
            b.id.clone(),
            b.lower.to_string(),
            b.upper.to_string(),
            b.size.to_string(),
        ];
        if alignment {
            row.push(b.alignment.to_string());
        }
        if hint {
            row.push(b.hint.unwrap_or(-1).to_string());
        }
        if gaps {
            let text: Vec<String> = b
                .gaps
                .iter()
                .map(|g| match g.window {
                    Some(w) => format!("{}-{}@{}:{}", g.lower, g.upper, w.lower, w.upper),
                    None => format!("{}-{}", g.lower, g.upper),
                })
                .collect();
            row.push(text.join(" "));
        }
        for labels in [&colocation, &separation, &penalty, &pools] {
            if !labels.is_empty() {
                row.push(labels[i].clone());
            }
        }
        match (offsets, b.offset) {
            (Some(o), _) => row.push(o[i].to_string()),
            (None, Some(f)) => row.push(f.to_string()),
            (None, None) if fixed => row.push(String::new()),
            _ => {}
        }
        let _ = out.write_record(&row);
    }
    // Every field is UTF-8 text.
    String::from_utf8(out.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// Each buffer's `penalty` cell (`p4:100`: penalised pair 4, costing 100
/// when the two share bytes), or an empty list without penalties.
fn penalty_cells(problem: &Problem) -> Vec<String> {
    #[cfg(feature = "constraints")]
    {
        let mut cells = Vec::new();
        for (k, (a, b, cost)) in problem.penalties().enumerate() {
            if cells.is_empty() {
                cells = std::vec![String::new(); problem.len()];
            }
            for m in [a, b] {
                let cell: &mut String = &mut cells[m];
                if !cell.is_empty() {
                    cell.push(' ');
                }
                cell.push_str(&format!("p{k}:{cost}"));
            }
        }
        cells
    }
    #[cfg(not(feature = "constraints"))]
    {
        let _ = problem;
        Vec::new()
    }
}

/// Each buffer's `pools` cell (the names of the pools it lists, preferred
/// first), or an empty list when no buffer lists pools.
fn pool_cells(problem: &Problem) -> Vec<String> {
    #[cfg(feature = "constraints")]
    {
        let names = problem.pools();
        let listed = |i: usize| problem.pools_of(i).len() < names.len();
        if names.is_empty() || !(0..problem.len()).any(listed) {
            return Vec::new();
        }
        (0..problem.len())
            .map(|i| match listed(i) {
                true => {
                    let list: Vec<&str> = problem
                        .pools_of(i)
                        .iter()
                        .map(|&p| names[p as usize].name.as_str())
                        .collect();
                    list.join(" ")
                }
                false => String::new(),
            })
            .collect()
    }
    #[cfg(not(feature = "constraints"))]
    {
        let _ = problem;
        Vec::new()
    }
}

/// Each buffer's `colocation` and `separation` cells (`c3`: colocation
/// group 3; `s0 s5`: separation groups 0 and 5), or empty lists when the
/// problem has no such links.
fn link_labels(problem: &Problem) -> (Vec<String>, Vec<String>) {
    #[cfg(feature = "constraints")]
    {
        let n = problem.len();
        let mut colocation = Vec::new();
        if !problem.colocations().is_empty() {
            colocation = std::vec![String::new(); n];
            for (g, members) in problem.colocations().iter().enumerate() {
                for &m in members {
                    colocation[m as usize] = format!("c{g}");
                }
            }
        }
        let mut separation: Vec<String> = Vec::new();
        if !problem.separations().is_empty() {
            separation = std::vec![String::new(); n];
            for (g, members) in problem.separations().iter().enumerate() {
                for &m in members {
                    let cell = &mut separation[m as usize];
                    if !cell.is_empty() {
                        cell.push(' ');
                    }
                    cell.push_str(&format!("s{g}"));
                }
            }
        }
        (colocation, separation)
    }
    #[cfg(not(feature = "constraints"))]
    {
        let _ = problem;
        (Vec::new(), Vec::new())
    }
}
