//! Reading the columns that declare more than a buffer: `colocation`,
//! `separation`, `penalty` and `pools`. Each takes its column as (line,
//! field) per row, in row order, and on error says the line and why.

use std::string::String;
#[cfg(feature = "constraints")]
use std::{collections::HashMap, format, string::ToString, vec::Vec};

#[cfg(feature = "constraints")]
use crate::model::error::Error;
use crate::model::problem::Problem;

#[cfg(feature = "constraints")]
pub(super) type PoolList<'a> = &'a [crate::model::pools::Pool];
#[cfg(not(feature = "constraints"))]
pub(super) type PoolList<'a> = &'a [()];

/// The rows of a column: each row's line and field.
type Cells<'a> = [(usize, &'a str)];

/// Applies a `pools` column (names of `pools`, space-separated, preferred
/// first).
pub(super) fn pool_column(
    problem: &mut Problem,
    cells: &Cells<'_>,
    pools: PoolList<'_>,
) -> Result<(), (usize, String)> {
    #[cfg(feature = "constraints")]
    {
        if pools.is_empty() {
            return Err((
                1,
                "a pools column needs pools (--pool NAME:CAPACITY)".into(),
            ));
        }
        for (row, &(line, cell)) in cells.iter().enumerate() {
            let mut list = Vec::new();
            for name in cell.split_whitespace() {
                let p = pools
                    .iter()
                    .position(|p| p.name == name)
                    .ok_or_else(|| (line, format!("no pool is named {name:?}")))?;
                list.push(p);
            }
            problem
                .set_pools(row, &list)
                .map_err(|e| (line, e.to_string()))?;
        }
        Ok(())
    }
    #[cfg(not(feature = "constraints"))]
    {
        let _ = (problem, cells, pools);
        Err((1, "pools are not in this build".into()))
    }
}

/// Rows grouped by label, in the order labels first appear: each row's
/// labels are its whole field (`whole`) or its space-separated tokens,
/// each cut by `label` into the group's label and what the row says of it.
#[cfg(feature = "constraints")]
fn groups<'a>(cells: &Cells<'a>, whole: bool) -> (Vec<&'a str>, Vec<Vec<usize>>) {
    let mut labels: Vec<&str> = Vec::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    // Each label's group, found by hashing: a kernel may declare its
    // separations as thousands of labels (one per pair).
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (row, &(_, cell)) in cells.iter().enumerate() {
        let tokens: Vec<&str> = match whole {
            true => Some(cell).filter(|c| !c.is_empty()).into_iter().collect(),
            false => cell.split_whitespace().collect(),
        };
        for label in tokens {
            let g = *index.entry(label).or_insert_with(|| {
                labels.push(label);
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[g].push(row);
        }
    }
    (labels, groups)
}

/// The line of the row an error about `group` is about: the second buffer
/// of a link error, else the group's last row.
#[cfg(feature = "constraints")]
fn line_of(e: &Error, group: &[usize], cells: &Cells<'_>) -> usize {
    let row = match e {
        Error::Link { second, .. } => *second,
        _ => group[group.len() - 1],
    };
    cells.get(row).map_or(0, |c| c.0)
}

/// Applies a `colocation` column (rows with the same non-empty label share
/// an offset) or a `separation` column (space-separated labels; rows that
/// share a label may not share a byte).
pub(super) fn link_column(
    problem: &mut Problem,
    cells: &Cells<'_>,
    colocation: bool,
) -> Result<(), (usize, String)> {
    #[cfg(feature = "constraints")]
    {
        for group in groups(cells, colocation).1 {
            let done = match colocation {
                true => problem.colocate(&group),
                false => problem.separate(&group),
            };
            if let Err(e) = done {
                return Err((line_of(&e, &group, cells), e.to_string()));
            }
        }
        Ok(())
    }
    #[cfg(not(feature = "constraints"))]
    {
        let _ = (problem, cells, colocation);
        Err((
            1,
            "colocations and separations are not in this build".into(),
        ))
    }
}

/// Applies a `penalty` column: space-separated `label:cost` tokens; every
/// two rows that share a label may share bytes at that cost (a reuse
/// penalty). A label names one cost and at least two rows.
pub(super) fn penalty_column(
    problem: &mut Problem,
    cells: &Cells<'_>,
) -> Result<(), (usize, String)> {
    #[cfg(feature = "constraints")]
    {
        // Each token split into label and cost, checked as it comes; the
        // labels in the order they first appear, with their cost, first
        // line and rows.
        let mut order: Vec<&str> = Vec::new();
        let mut labels: HashMap<&str, (i64, usize, Vec<usize>)> = HashMap::new();
        for (row, &(line, cell)) in cells.iter().enumerate() {
            for token in cell.split_whitespace() {
                let Some((label, cost)) = token.split_once(':') else {
                    return Err((line, format!("expected label:cost, got {token:?}")));
                };
                let cost: i64 = cost.parse().map_err(|e: core::num::ParseIntError| {
                    (line, super::number::integer_error(cost, e.kind()))
                })?;
                let entry = labels.entry(label).or_insert_with(|| {
                    order.push(label);
                    (cost, line, Vec::new())
                });
                if entry.0 != cost {
                    let (first, first_line) = (entry.0, entry.1);
                    return Err((
                        line,
                        format!(
                            "penalty {label:?} costs {cost} here but {first} on line {first_line}"
                        ),
                    ));
                }
                entry.2.push(row);
            }
        }
        for label in order {
            let (cost, line, rows) = &labels[label];
            if rows.len() < 2 {
                return Err((
                    *line,
                    format!("penalty {label:?} names one row; it needs two or more"),
                ));
            }
            for (i, &a) in rows.iter().enumerate() {
                for &b in &rows[i + 1..] {
                    if let Err(e) = problem.penalize(a, b, *cost) {
                        return Err((cells.get(b).map_or(0, |c| c.0), e.to_string()));
                    }
                }
            }
        }
        Ok(())
    }
    #[cfg(not(feature = "constraints"))]
    {
        let _ = (problem, cells);
        Err((1, "reuse penalties are not in this build".into()))
    }
}
