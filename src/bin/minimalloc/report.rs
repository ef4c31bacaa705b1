//! What a run tells on stderr: the figures (`--stats` in words, `--json`
//! as one object), the reference's time line, and the LaTeX picture of
//! `--print_solution`.

use std::fmt::Write as _;
use std::time::Duration;

use minimalloc::plan::describe;
use minimalloc::{Outcome, Problem, Status, Stop};
use serde_json::json;

/// The figures of one run.
pub struct Figures<'a> {
    pub problem: &'a Problem,
    pub outcome: &'a Outcome,
    pub max_load: i64,
    /// Wall time of the solve.
    pub elapsed: Duration,
    /// A signal stopped the run.
    pub interrupted: bool,
}

impl Figures<'_> {
    fn height(&self) -> Option<i64> {
        self.outcome
            .solution
            .as_ref()
            .map(|s| s.height(self.problem))
    }

    fn status(&self) -> &'static str {
        match self.outcome.status {
            Status::Solved => "solved",
            Status::Infeasible => "infeasible",
            Status::NotFound => "not found",
            Status::TimedOut => "timed out",
            Status::Cancelled => "cancelled",
        }
    }

    /// Why the run stopped before it was done, if it did.
    fn stop_reason(&self) -> Option<&'static str> {
        match self.outcome.stopped {
            _ if self.interrupted => Some("interrupted"),
            Some(Stop::TimedOut) => Some("timeout"),
            Some(Stop::Cancelled) => Some("cancelled"),
            None => None,
        }
    }

    /// `--stats`: one figure a line, in words.
    pub fn text(&self) -> String {
        let o = self.outcome;
        let mut s = String::new();
        let mut row = |name: &str, value: String| {
            let _ = writeln!(s, "{name:<15}{value}");
        };
        row("buffers", self.problem.len().to_string());
        match &o.pooled {
            // Pools are memories of their own: the whole problem's max
            // load and height mean nothing across them, and the offsets
            // are addresses (a pool's base plus the offset in it).
            Some(p) => {
                row(
                    "pools",
                    format!("{} (each on a line below)", p.reports.len()),
                );
                row("status", self.status().to_string());
                let heights: i64 = p.reports.iter().map(|r| r.height).sum();
                let bounds: i64 = p.reports.iter().map(|r| r.lower_bound).sum();
                if self.height().is_some() && bounds > 0 {
                    let frag = 100.0 * (heights - bounds) as f64 / bounds as f64;
                    row(
                        "fragmentation",
                        format!("{frag:.2}% (the pools' heights over their bounds)"),
                    );
                }
                if let Some(top) = self.height() {
                    row("top address", top.to_string());
                }
                row("address bound", o.lower_bound.to_string());
            }
            None => {
                row("max load", self.max_load.to_string());
                row("status", self.status().to_string());
                match self.height() {
                    Some(h) => {
                        row("height", h.to_string());
                        let frag = if self.max_load > 0 {
                            100.0 * (h - self.max_load) as f64 / self.max_load as f64
                        } else {
                            0.0
                        };
                        row("fragmentation", format!("{frag:.2}%"));
                    }
                    None => row("height", "none".into()),
                }
                row("lower bound", o.lower_bound.to_string());
            }
        }
        row(
            "optimal",
            if o.optimal { "yes" } else { "not proven" }.into(),
        );
        if let Some(p) = o.penalty {
            row("penalty", p.cost.to_string());
            row("penalty bound", p.lower_bound.to_string());
        }
        row("source", describe(o.source));
        if let (Some(plain), Some(h)) = (o.plain_height, self.height()) {
            row(
                "plain order",
                format!("{plain} (the best strategy's first placement)"),
            );
            if plain > self.max_load {
                let closed = 100.0 * (plain - h) as f64 / (plain - self.max_load) as f64;
                row("gap closed", format!("{closed:.1}% of it to the max load"));
            }
        }
        row("restarts", o.restarts.to_string());
        row("nodes", o.stats.nodes.to_string());
        row("backtracks", o.stats.backtracks.to_string());
        row("time", format!("{:.3} s", self.elapsed.as_secs_f64()));
        let stopped = match self.stop_reason() {
            Some("interrupted") => "early, by a signal",
            Some("timeout") => "early, by the timeout",
            Some(_) => "early, cancelled",
            None => "no (ran to the end)",
        };
        row("stopped", stopped.into());
        let mut used: Vec<String> = o
            .stats
            .solved_by
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(p, n)| format!("{p} solved {n}"))
            .collect();
        if o.stats.shaken > 0 {
            used.push(format!("shaken solved {}", o.stats.shaken));
        }
        if !used.is_empty() {
            row("orderings", used.join(", "));
        }
        if let Some(p) = &o.pooled {
            for (pool, r) in self.problem.pools().iter().zip(&p.reports) {
                row(
                    &format!("pool {}", pool.name),
                    format!(
                        "{} buffers ({} spilled in), height {} of {}, lower bound {}, from {}",
                        r.buffers.len(),
                        r.spilled.len(),
                        r.height,
                        pool.capacity,
                        r.lower_bound,
                        describe(r.source)
                    ),
                );
            }
            if !p.unplaced.is_empty() {
                row("unplaced", p.unplaced.len().to_string());
            }
        }
        s
    }

    /// `--json`: the same figures as one JSON object on one line.
    pub fn json(&self) -> String {
        let o = self.outcome;
        let ids = |list: &[usize]| -> Vec<&str> {
            list.iter()
                .map(|&i| self.problem.buffers()[i].id.as_str())
                .collect()
        };
        let pools = o.pooled.as_ref().map(|p| {
            self.problem
                .pools()
                .iter()
                .zip(&p.reports)
                .map(|(pool, r)| {
                    json!({
                        "name": pool.name,
                        "capacity": pool.capacity,
                        "buffers": r.buffers.len(),
                        "height": r.height,
                        "lower_bound": r.lower_bound,
                        "spilled": ids(&r.spilled),
                        "source": r.source.map(|s| describe(Some(s))),
                    })
                })
                .collect::<Vec<_>>()
        });
        json!({
            "buffers": self.problem.len(),
            "max_load": self.max_load,
            "status": self.status(),
            "height": self.height(),
            "lower_bound": o.lower_bound,
            "optimal": o.optimal,
            "source": o.source.map(|s| describe(Some(s))),
            "plain_height": o.plain_height,
            "restarts": o.restarts,
            "nodes": o.stats.nodes,
            "backtracks": o.stats.backtracks,
            "time_s": self.elapsed.as_secs_f64(),
            "stop_reason": self.stop_reason(),
            "conflict": o.conflict.as_ref().map(|c| ids(&c.buffers)),
            "conflict_irreducible": o.conflict.as_ref().is_some_and(|c| c.irreducible),
            "pools": pools,
            "unplaced": o.pooled.as_ref().map(|p| ids(&p.unplaced)),
            "penalty": o.penalty.map(|p| p.cost),
            "penalty_lower_bound": o.penalty.map(|p| p.lower_bound),
        })
        .to_string()
    }
}

/// The line the C++ reference writes on stderr after a solve: the
/// seconds it took with three decimals, then, with `--validate`, PASS or
/// FAIL right after them (as the reference prints them, with no space).
pub fn time_line(elapsed: Duration, validated: Option<bool>) -> String {
    let verdict = match validated {
        Some(true) => "PASS",
        Some(false) => "FAIL",
        None => "",
    };
    format!("{:.3}{verdict}", elapsed.as_secs_f64())
}

/// `--print_solution`: a standalone LaTeX document with one TikZ picture,
/// time across, offsets up, a grey box for each live stretch of each
/// buffer (gaps left out) and a frame at the capacity (or the height).
pub fn latex_picture(problem: &Problem, offsets: &[i64], capacity: Option<i64>) -> String {
    // The drawing area in centimetres: a landscape page's text width.
    const WIDTH_CM: f64 = 17.0;
    const HEIGHT_CM: f64 = 8.5;
    let buffers = problem.buffers();
    let first = buffers.iter().map(|b| b.lower).min().unwrap_or(0);
    let last = buffers.iter().map(|b| b.upper).max().unwrap_or(1);
    let height = buffers
        .iter()
        .zip(offsets)
        .map(|(b, o)| o + b.size)
        .max()
        .unwrap_or(0);
    let top = capacity.unwrap_or(height).max(1);
    let sx = WIDTH_CM / (last - first).max(1) as f64;
    let sy = HEIGHT_CM / top as f64;
    let mut s = String::new();
    s.push_str("\\documentclass[tikz]{standalone}\n\\begin{document}\n\\begin{tikzpicture}\n");
    for (b, &offset) in buffers.iter().zip(offsets) {
        // The stretches of the lifetime outside its gaps.
        let mut start = b.lower;
        let mut pieces = Vec::new();
        for g in &b.gaps {
            pieces.push((start, g.lower));
            start = g.upper;
        }
        pieces.push((start, b.upper));
        for (from, to) in pieces.into_iter().filter(|(a, b)| a < b) {
            let _ = writeln!(
                s,
                "  \\filldraw[fill=lightgray, draw=darkgray] ({:.4},{:.4}) rectangle ({:.4},{:.4}); % {}",
                sx * (from - first) as f64,
                sy * offset as f64,
                sx * (to - first) as f64,
                sy * (offset + b.size) as f64,
                latex_comment(&b.id),
            );
        }
    }
    let _ = writeln!(
        s,
        "  \\draw[thick] (0,0) rectangle ({:.4},{:.4});",
        sx * (last - first) as f64,
        sy * top as f64
    );
    s.push_str("\\end{tikzpicture}\n\\end{document}\n");
    s
}

/// An id made safe for the end of a LaTeX comment line.
fn latex_comment(id: &str) -> String {
    id.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_line_is_the_reference_one() {
        assert_eq!(time_line(Duration::from_millis(1234), None), "1.234");
        assert_eq!(time_line(Duration::from_millis(5), Some(true)), "0.005PASS");
        assert_eq!(time_line(Duration::ZERO, Some(false)), "0.000FAIL");
    }
}
