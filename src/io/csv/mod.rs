//! The reference CSV format (feature `std`), read and written with the
//! `csv` crate (RFC 4180: quoted fields may hold commas, quotes and line
//! breaks; a UTF-8 byte-order mark is skipped; blank lines are ignored).
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

/// The input as read, kept so that the output repeats it (each field
/// trimmed, quoted again where it needs it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    header: Vec<String>,
    /// Every field of every row, trimmed, one after the other (one
    /// allocation, not one per field: a million rows read in a third of
    /// the time).
    cells: String,
    /// Where each field starts in `cells`, row after row, `header.len()`
    /// to a row; one more entry marks the end.
    field_at: Vec<usize>,
    /// The line each row starts on.
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
    let mut reader = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let read_error = |e: ::csv::Error| CsvError {
        line: e.position().map_or(1, |p| p.line() as usize),
        column: None,
        message: e.to_string(),
    };
    let mut record = ::csv::StringRecord::new();
    // The next record that is not a line of blanks (a record of one empty
    // field), or `None` at the end.
    let mut next = |record: &mut ::csv::StringRecord| -> Result<bool, CsvError> {
        loop {
            if !reader.read_record(record).map_err(read_error)? {
                return Ok(false);
            }
            if !(record.len() == 1 && record[0].trim().is_empty()) {
                return Ok(true);
            }
        }
    };
    if !next(&mut record)? {
        return Err(CsvError {
            line: 1,
            column: None,
            message: "the input is empty: expected a header such as id,lower,upper,size".into(),
        });
    }
    let columns = Columns::parse(&record)?;
    // An `end` column is inclusive; otherwise the chosen convention holds.
    let convention = if columns.inclusive_end {
        Lifetime::Inclusive
    } else {
        lifetime
    };
    let mut table = Table {
        header: columns.header.clone(),
        cells: String::new(),
        field_at: std::vec![0],
        lines: Vec::new(),
        offset: columns.offset,
    };
    let mut buffers = Vec::new();
    // Lines counted from the bytes (the reader's own count skips blank
    // lines, and a record's position is where the blank lines before it
    // begin): where the last record began, and its line.
    let bytes = text.as_bytes();
    let (mut seen, mut line) = (0, 1);
    while next(&mut record)? {
        let mut at = record
            .position()
            .map_or(seen, |p| p.byte() as usize)
            .max(seen);
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        line += newlines(&bytes[seen..at]);
        seen = at;
        buffers.push(columns.buffer(&record, line, convention)?);
        for f in &record {
            table.cells.push_str(f.trim());
            table.field_at.push(table.cells.len());
        }
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

/// How many line breaks `bytes` holds.
fn newlines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
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
    fn parse(head: &::csv::StringRecord) -> Result<Columns, CsvError> {
        let header: Vec<String> = head.iter().map(|h| h.trim().to_string()).collect();
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
                    "missing column {name:?} (the header is {:?})",
                    header.join(",")
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
        fields: &::csv::StringRecord,
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
        // Spaces around a field are no part of it.
        let field = |col: usize| fields[col].trim();
        let int = |col: usize| -> Result<i64, CsvError> {
            field(col)
                .parse::<i64>()
                .map_err(|e| error(col, integer_error(field(col), e.kind())))
        };
        let optional = |col: Option<usize>| -> Result<Option<i64>, CsvError> {
            match col {
                Some(c) if !field(c).is_empty() => int(c).map(Some),
                _ => Ok(None),
            }
        };
        let convert = |col: usize, lo: i64, hi: i64| {
            convention
                .to_half_open(lo, hi)
                .ok_or_else(|| error(col, format!("[{lo}, {hi}] overflows when made half-open")))
        };
        let (lower, upper) = convert(self.upper, int(self.lower)?, int(self.upper)?)?;
        let mut buffer = Buffer::new(field(self.id), lower, upper, int(self.size)?);
        if let Some(a) = optional(self.alignment)? {
            buffer.alignment = a;
        }
        // The reference writes -1 for "no hint".
        buffer.hint = optional(self.hint)?.filter(|&h| h != -1);
        buffer.offset = optional(self.offset)?;
        if let Some(c) = self.gaps {
            for token in field(c).split_whitespace() {
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
    /// The fields of row `row`.
    fn row(&self, row: usize) -> impl Iterator<Item = &str> {
        let width = self.header.len();
        self.field_at[row * width..=(row + 1) * width]
            .windows(2)
            .map(|w| &self.cells[w[0]..w[1]])
    }

    /// Each row's line and field in column `col`.
    fn column(&self, col: usize) -> Vec<(usize, &str)> {
        let width = self.header.len();
        self.lines
            .iter()
            .enumerate()
            .map(|(row, &line)| {
                let at = row * width + col;
                (line, &self.cells[self.field_at[at]..self.field_at[at + 1]])
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
        let mut out = ::csv::WriterBuilder::new()
            .terminator(::csv::Terminator::Any(b'\n'))
            .from_writer(Vec::with_capacity(self.cells.len() + 16 * offsets.len()));
        let mut header: Vec<&str> = self.header.iter().map(String::as_str).collect();
        if self.offset.is_none() {
            header.push("offset");
        }
        if let Some((name, _)) = extra {
            header.push(name);
        }
        // Writing to memory fails only where the fields do not fit it.
        let _ = out.write_record(&header);
        let mut number = String::new();
        for (row, offset) in offsets.iter().enumerate().take(self.lines.len()) {
            number.clear();
            let _ = fmt::Write::write_fmt(&mut number, format_args!("{offset}"));
            for (col, field) in self.row(row).enumerate() {
                let _ = out.write_field(if Some(col) == self.offset {
                    &number
                } else {
                    field
                });
            }
            if self.offset.is_none() {
                let _ = out.write_field(&number);
            }
            if let Some((_, values)) = extra {
                let _ = out.write_field(values.get(row).copied().unwrap_or(""));
            }
            let _ = out.write_record(None::<&[u8]>);
        }
        let bytes = out.into_inner().unwrap_or_default();
        // Every field came in as UTF-8 text.
        String::from_utf8(bytes).unwrap_or_default()
    }
}
