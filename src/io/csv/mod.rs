//! The reference CSV format (feature `std`).
//!
//! Columns `id,lower,upper,size[,alignment][,hint][,gaps][,offset]` in any
//! order, with the aliases `start`/`begin` for `lower`, `buffer`/`buffer_id`
//! for `id`, and `end` for an inclusive upper bound (`upper = end + 1`, gap
//! ends likewise). Gaps are space separated `lower-upper` or
//! `lower-upper@window_lower:window_upper`. Other columns are kept and
//! written back. Output is the input's columns plus `offset`.

mod links;
mod number;
mod write;

pub use number::integer_error;
pub use write::write_problem;

use links::{link_column, penalty_column, pool_column, PoolList};

use std::fmt;
use std::string::{String, ToString};
use std::vec::Vec;

use crate::model::problem::{Buffer, Error, Field, Gap, Lifetime, Problem, Window};

/// A CSV input that cannot be read: where and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvError {
    /// 1-based line number (the header is line 1).
    pub line: usize,
    /// The column, if the error is about one field.
    pub column: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for CsvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}", self.line)?;
        if let Some(c) = &self.column {
            write!(f, ", column {c}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for CsvError {}

/// The input as read, kept so that the output repeats it exactly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    header: Vec<String>,
    /// Every row's fields, trimmed and joined by commas, one after the
    /// other (one allocation, not one per field: a million rows read in
    /// a third of the time).
    cells: String,
    /// Where each row starts in `cells`; one more entry marks the end.
    row_at: Vec<usize>,
    lines: Vec<usize>,
    offset: Option<usize>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Column {
    Id,
    Lower,
    Upper,
    End,
    Size,
    Alignment,
    Hint,
    Gaps,
    Offset,
    Colocation,
    Separation,
    Penalty,
    Pools,
    Other,
}

fn column_of(name: &str) -> Column {
    match name {
        "id" | "buffer" | "buffer_id" => Column::Id,
        "lower" | "start" | "begin" => Column::Lower,
        "upper" => Column::Upper,
        "end" => Column::End,
        "size" => Column::Size,
        "alignment" => Column::Alignment,
        "hint" => Column::Hint,
        "gaps" => Column::Gaps,
        "offset" => Column::Offset,
        "colocation" => Column::Colocation,
        "separation" => Column::Separation,
        "penalty" => Column::Penalty,
        "pools" => Column::Pools,
        _ => Column::Other,
    }
}

/// Reads a problem with half-open `lower`/`upper` columns.
pub fn read(text: &str, capacity: i64) -> Result<(Problem, Table), CsvError> {
    read_with(text, capacity, Lifetime::HalfOpen)
}

/// Reads a problem whose `lower`/`upper` columns (and gaps) follow
/// `lifetime`. An `end` column is always inclusive.
pub fn read_with(
    text: &str,
    capacity: i64,
    lifetime: Lifetime,
) -> Result<(Problem, Table), CsvError> {
    read_pooled(text, capacity, lifetime, &[])
}

/// Like [`read_with`], with memory pools: a `pools` column lists, by
/// name and preferred first, the pools each buffer may go to (empty: any).
#[cfg(feature = "constraints")]
pub fn read_pooled(
    text: &str,
    capacity: i64,
    lifetime: Lifetime,
    pools: &[crate::model::pools::Pool],
) -> Result<(Problem, Table), CsvError> {
    read_inner(text, capacity, lifetime, pools)
}

#[cfg(not(feature = "constraints"))]
fn read_pooled(
    text: &str,
    capacity: i64,
    lifetime: Lifetime,
    _pools: &[()],
) -> Result<(Problem, Table), CsvError> {
    read_inner(text, capacity, lifetime, _pools)
}

fn read_inner(
    text: &str,
    capacity: i64,
    lifetime: Lifetime,
    pools: PoolList<'_>,
) -> Result<(Problem, Table), CsvError> {
    // A byte-order mark (spreadsheets write one) is no part of the header.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')))
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((_, head)) = lines.next() else {
        return Err(CsvError {
            line: 1,
            column: None,
            message: "the input is empty: expected a header such as id,lower,upper,size".into(),
        });
    };
    let columns = Columns::parse(head)?;
    // An `end` column is inclusive; otherwise the chosen convention holds.
    let convention = if columns.inclusive_end {
        Lifetime::Inclusive
    } else {
        lifetime
    };
    let mut table = Table {
        header: columns.header.clone(),
        cells: String::new(),
        row_at: std::vec![0],
        lines: Vec::new(),
        offset: columns.offset,
    };
    let mut buffers = Vec::new();
    let mut fields: Vec<&str> = Vec::with_capacity(columns.header.len());
    for (line, text) in lines {
        fields.clear();
        fields.extend(text.split(',').map(str::trim));
        buffers.push(columns.buffer(&fields, line, convention)?);
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                table.cells.push(',');
            }
            table.cells.push_str(f);
        }
        table.row_at.push(table.cells.len());
        table.lines.push(line);
    }
    #[allow(unused_mut)]
    let mut problem = Problem::new(capacity, buffers).map_err(|e| table.locate(e))?;
    for (kind, name) in [
        (Column::Colocation, "colocation"),
        (Column::Separation, "separation"),
        (Column::Penalty, "penalty"),
    ] {
        if let Some(col) = columns.find(kind) {
            let cells = table.column(col);
            match kind {
                Column::Penalty => penalty_column(&mut problem, &cells),
                _ => link_column(&mut problem, &cells, kind == Column::Colocation),
            }
            .map_err(|(line, message)| CsvError {
                line,
                column: Some(name.into()),
                message,
            })?;
        }
    }
    #[cfg(feature = "constraints")]
    for pool in pools {
        problem.add_pool(pool.clone()).map_err(|e| CsvError {
            line: 1,
            column: None,
            message: e.to_string(),
        })?;
    }
    if let Some(col) = columns.find(Column::Pools) {
        pool_column(&mut problem, &table.column(col), pools).map_err(|(line, message)| {
            CsvError {
                line,
                column: Some("pools".into()),
                message,
            }
        })?;
    }
    Ok((problem, table))
}

/// The header: each column's field, and where the buffer's fields are.
struct Columns {
    header: Vec<String>,
    kinds: Vec<Column>,
    id: usize,
    lower: usize,
    upper: usize,
    size: usize,
    /// Whether `upper` is an inclusive `end` column.
    inclusive_end: bool,
    alignment: Option<usize>,
    hint: Option<usize>,
    gaps: Option<usize>,
    offset: Option<usize>,
}

impl Columns {
    /// Reads the header line: no field named twice, the four required.
    fn parse(head: &str) -> Result<Columns, CsvError> {
        let header: Vec<String> = head.split(',').map(|s| s.trim().to_string()).collect();
        let kinds: Vec<Column> = header.iter().map(|h| column_of(h)).collect();
        let header_error = |message: String| CsvError {
            line: 1,
            column: None,
            message,
        };
        for (i, k) in kinds.iter().enumerate() {
            if *k == Column::Other {
                continue;
            }
            let same = |j: usize| {
                kinds[j] == *k
                    || matches!(
                        (kinds[j], *k),
                        (Column::Upper, Column::End) | (Column::End, Column::Upper)
                    )
            };
            if let Some(j) = (0..i).find(|&j| same(j)) {
                return Err(header_error(format!(
                    "columns {:?} and {:?} name the same field",
                    header[j], header[i]
                )));
            }
        }
        let find = |k: Column| kinds.iter().position(|&c| c == k);
        let (upper, inclusive_end) = match (find(Column::Upper), find(Column::End)) {
            (Some(u), _) => (Some(u), false),
            (None, Some(e)) => (Some(e), true),
            (None, None) => (None, false),
        };
        let required = [
            ("id", find(Column::Id)),
            ("lower", find(Column::Lower)),
            ("upper", upper),
            ("size", find(Column::Size)),
        ];
        for (name, col) in required {
            if col.is_none() {
                return Err(header_error(format!(
                    "missing column {name:?} (the header is {head:?})"
                )));
            }
        }
        let [id, lower, upper, size] = required.map(|(_, c)| c.unwrap_or(0));
        Ok(Columns {
            id,
            lower,
            upper,
            size,
            inclusive_end,
            alignment: find(Column::Alignment),
            hint: find(Column::Hint),
            gaps: find(Column::Gaps),
            offset: find(Column::Offset),
            header,
            kinds,
        })
    }

    /// The column of field `k`, if the header has one.
    fn find(&self, k: Column) -> Option<usize> {
        self.kinds.iter().position(|&c| c == k)
    }

    /// The buffer a row's `fields` describe (line `line`, lifetimes and
    /// gaps written in `convention`).
    fn buffer(
        &self,
        fields: &[&str],
        line: usize,
        convention: Lifetime,
    ) -> Result<Buffer, CsvError> {
        if fields.len() != self.header.len() {
            return Err(CsvError {
                line,
                column: None,
                message: format!(
                    "expected {} fields as in the header, found {}",
                    self.header.len(),
                    fields.len()
                ),
            });
        }
        let error = |col: usize, message: String| CsvError {
            line,
            column: Some(self.header[col].clone()),
            message,
        };
        let int = |col: usize| -> Result<i64, CsvError> {
            fields[col]
                .parse::<i64>()
                .map_err(|e| error(col, integer_error(fields[col], e.kind())))
        };
        let optional = |col: Option<usize>| -> Result<Option<i64>, CsvError> {
            match col {
                Some(c) if !fields[c].is_empty() => int(c).map(Some),
                _ => Ok(None),
            }
        };
        let convert = |col: usize, lo: i64, hi: i64| {
            convention
                .to_half_open(lo, hi)
                .ok_or_else(|| error(col, format!("[{lo}, {hi}] overflows when made half-open")))
        };
        let (lower, upper) = convert(self.upper, int(self.lower)?, int(self.upper)?)?;
        let mut buffer = Buffer::new(fields[self.id], lower, upper, int(self.size)?);
        if let Some(a) = optional(self.alignment)? {
            buffer.alignment = a;
        }
        // The reference writes -1 for "no hint".
        buffer.hint = optional(self.hint)?.filter(|&h| h != -1);
        buffer.offset = optional(self.offset)?;
        if let Some(c) = self.gaps {
            for token in fields[c].split_whitespace() {
                let gap = parse_gap(token).ok_or_else(|| {
                    error(
                        c,
                        format!("bad gap {token:?}: expected lower-upper or lower-upper@a:b"),
                    )
                })?;
                let (lower, upper) = convert(c, gap.lower, gap.upper)?;
                buffer.gaps.push(Gap {
                    lower,
                    upper,
                    ..gap
                });
            }
        }
        Ok(buffer)
    }
}

fn parse_gap(token: &str) -> Option<Gap> {
    let (span, window) = match token.split_once('@') {
        Some((s, w)) => (s, Some(w)),
        None => (token, None),
    };
    let (lo, hi) = span.split_once('-')?;
    let window = match window {
        None => None,
        Some(w) => {
            let (a, b) = w.split_once(':')?;
            Some(Window {
                lower: a.parse().ok()?,
                upper: b.parse().ok()?,
            })
        }
    };
    Some(Gap {
        lower: lo.parse().ok()?,
        upper: hi.parse().ok()?,
        window,
    })
}

impl Table {
    /// Each row's line and field in column `col`.
    fn column(&self, col: usize) -> Vec<(usize, &str)> {
        self.row_at
            .windows(2)
            .zip(&self.lines)
            .map(|(w, &line)| {
                (
                    line,
                    self.cells[w[0]..w[1]].split(',').nth(col).unwrap_or(""),
                )
            })
            .collect()
    }

    /// Turns a validation error about buffer `i` into one about its line
    /// and column.
    fn locate(&self, e: Error) -> CsvError {
        match &e {
            Error::Buffer { index, field, .. } => {
                let name = match field {
                    Field::Id => &["id", "buffer", "buffer_id"][..],
                    Field::Lower => &["lower", "start", "begin"],
                    Field::Upper => &["upper", "end"],
                    Field::Size => &["size"],
                    Field::Alignment => &["alignment"],
                    Field::Gap(_) => &["gaps"],
                    Field::Offset => &["offset"],
                    Field::Hint => &["hint"],
                };
                CsvError {
                    line: self.lines.get(*index).copied().unwrap_or(0),
                    column: self
                        .header
                        .iter()
                        .find(|h| name.contains(&h.as_str()))
                        .cloned(),
                    message: e.to_string(),
                }
            }
            _ => CsvError {
                line: 1,
                column: None,
                message: e.to_string(),
            },
        }
    }

    /// The input's rows with an `offset` column holding `offsets` (the
    /// input's own offset column, if any, is replaced in place).
    pub fn write(&self, offsets: &[i64]) -> String {
        self.write_with(offsets, None)
    }

    /// Like [`Table::write`], with one more column at the end: `extra` is
    /// its name and the value of each row (e.g. the pool of each buffer).
    pub fn write_with(&self, offsets: &[i64], extra: Option<(&str, &[&str])>) -> String {
        use fmt::Write as _;
        let mut out = String::with_capacity(self.cells.len() + 16 * offsets.len());
        out.push_str(&self.header.join(","));
        if self.offset.is_none() {
            out.push_str(",offset");
        }
        if let Some((name, _)) = extra {
            out.push(',');
            out.push_str(name);
        }
        out.push('\n');
        let rows = self.row_at.windows(2).map(|w| &self.cells[w[0]..w[1]]);
        for (k, (row, offset)) in rows.zip(offsets).enumerate() {
            match self.offset {
                Some(c) => {
                    for (i, f) in row.split(',').enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        if i == c {
                            let _ = write!(out, "{offset}");
                        } else {
                            out.push_str(f);
                        }
                    }
                }
                None => {
                    let _ = write!(out, "{row},{offset}");
                }
            }
            if let Some((_, values)) = extra {
                out.push(',');
                out.push_str(values.get(k).copied().unwrap_or(""));
            }
            out.push('\n');
        }
        out
    }
}
