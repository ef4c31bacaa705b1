//! The reference CSV format: aliases, inclusive ends, gaps, round trips and
//! errors that name the line and column.

mod common;

use common::{random_problem, Rng, Shape};
use minimalloc::io::csv::{read, read_with, write_problem};
use minimalloc::{Gap, Lifetime, Window};

#[test]
fn reads_the_reference_columns_in_any_order() {
    let text = "size,upper,id,lower,alignment,hint,gaps,offset\n\
                4,10,a,0,2,-1,1-3 5-7@0:2,\n\
                8,12,b,2,4,8,,16\n";
    let (p, _) = read(text, 64).unwrap();
    let a = &p.buffers()[0];
    assert_eq!(
        (a.id.as_str(), a.lower, a.upper, a.size, a.alignment),
        ("a", 0, 10, 4, 2)
    );
    assert_eq!(a.hint, None, "-1 means no hint");
    assert_eq!(a.offset, None);
    assert_eq!(
        a.gaps,
        vec![
            Gap {
                lower: 1,
                upper: 3,
                window: None
            },
            Gap {
                lower: 5,
                upper: 7,
                window: Some(Window { lower: 0, upper: 2 })
            }
        ]
    );
    let b = &p.buffers()[1];
    assert_eq!((b.hint, b.offset, b.alignment), (Some(8), Some(16), 4));
}

#[test]
fn aliases_and_inclusive_end() {
    let text = "buffer_id,start,end,size,gaps\nx,0,9,4,2-3\n";
    let (p, _) = read(text, 64).unwrap();
    let x = &p.buffers()[0];
    assert_eq!((x.lower, x.upper), (0, 10), "an end column is inclusive");
    assert_eq!(
        x.gaps[0],
        Gap {
            lower: 2,
            upper: 4,
            window: None
        }
    );
    let (p, _) = read("buffer,begin,upper,size\ny,1,5,2\n", 64).unwrap();
    assert_eq!(
        (
            p.buffers()[0].id.as_str(),
            p.buffers()[0].lower,
            p.buffers()[0].upper
        ),
        ("y", 1, 5)
    );
    let (p, _) = read_with("id,lower,upper,size\nz,1,5,2\n", 64, Lifetime::Exclusive).unwrap();
    assert_eq!((p.buffers()[0].lower, p.buffers()[0].upper), (2, 5));
}

#[test]
fn output_repeats_the_input_and_adds_offset() {
    let text = "id,lower,upper,size,note\r\na,0,3,4,first\r\n\r\nb,1,5,2,second\r\n";
    let (_, table) = read(text, 64).unwrap();
    assert_eq!(
        table.write(&[0, 4]),
        "id,lower,upper,size,note,offset\na,0,3,4,first,0\nb,1,5,2,second,4\n"
    );
    // An existing offset column is filled in, not repeated.
    let (_, table) = read("id,offset,lower,upper,size\na,,0,3,4\n", 64).unwrap();
    assert_eq!(table.write(&[8]), "id,offset,lower,upper,size\na,8,0,3,4\n");
}

#[test]
fn random_problems_round_trip() {
    let mut rng = Rng::new(11);
    for _ in 0..500 {
        let p = random_problem(&mut rng, Shape::SMALL);
        let text = write_problem(&p, None);
        let (back, _) = read(&text, p.capacity()).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(back, p, "{text}");
    }
}

#[test]
fn errors_name_the_line_and_column() {
    let cases = [
        (
            "",
            "line 1: the input is empty: expected a header such as id,lower,upper,size",
        ),
        (
            "id,lower,size\n",
            r#"line 1: missing column "upper" (the header is "id,lower,size")"#,
        ),
        (
            "id,lower,upper,end,size\n",
            r#"line 1: columns "upper" and "end" name the same field"#,
        ),
        (
            "id,lower,upper,size\na,0,3\n",
            "line 2: expected 4 fields as in the header, found 3",
        ),
        (
            "id,lower,upper,size\na,0,3,4\nb,0,x,4\n",
            r#"line 3, column upper: expected an integer, got "x""#,
        ),
        (
            "id,lower,upper,size,gaps\na,0,9,4,3~5\n",
            r#"line 2, column gaps: bad gap "3~5": expected lower-upper or lower-upper@a:b"#,
        ),
        (
            "id,lower,upper,size\na,0,3,4\n\nb,0,3,0\n",
            r#"line 4, column size: buffer 1 (id "b"): size must be positive, got 0"#,
        ),
        (
            "id,start,end,size\na,4,2,1\n",
            r#"line 2, column end: buffer 0 (id "a"): upper lifetime [4, 3) is empty: upper must be greater than lower"#,
        ),
        (
            "buffer,lower,upper,size\na,0,3,4\na,0,3,4\n",
            r#"line 3, column buffer: buffer 1 (id "a"): id already names buffer 0"#,
        ),
    ];
    for (text, want) in cases {
        assert_eq!(
            read(text, 64).unwrap_err().to_string(),
            want,
            "input {text:?}"
        );
    }
}

/// tests/data/links.csv holds every column the writer knows (alignment,
/// a hint of -1 for none, gaps with a window, colocation and separation
/// labels): read and written again it is the same text. The Python
/// package's test reads and writes the same file (one grammar).
#[test]
fn the_shared_file_reads_and_writes_back_unchanged() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/links.csv");
    let text = std::fs::read_to_string(path).unwrap();
    let (problem, _) = read(&text, 128).unwrap();
    assert_eq!(problem.buffers()[0].hint, None);
    assert_eq!(problem.buffers()[1].hint, Some(0));
    assert_eq!(problem.colocations(), &[vec![0, 1], vec![4, 5]]);
    assert_eq!(problem.separations(), &[vec![0, 2, 5], vec![2, 3]]);
    assert_eq!(write_problem(&problem, None), text);
}

/// A byte-order mark before the header (as spreadsheets save CSV) is read
/// past: the columns are found, and line numbers in errors stay right.
#[test]
fn a_byte_order_mark_is_read_past() {
    let (problem, _) = read("\u{feff}id,lower,upper,size\na,0,3,4\nb,1,2,8\n", 64).unwrap();
    assert_eq!(problem.len(), 2);
    assert_eq!(problem.buffers()[0].id, "a");
    let error = read("\u{feff}id,lower,upper,size\na,0,3,0\n", 64).unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"line 2, column size: buffer 0 (id "a"): size must be positive, got 0"#
    );
}

/// Quoted fields (RFC 4180) hold commas, quotes and line breaks: they read
/// as one field, errors after them name the right line, and the output
/// quotes them again, so that it reads back as the same problem.
#[test]
fn quoted_fields_read_and_write_back() {
    let text = "id,lower,upper,size,note\r\n\
                \"conv, 3x3\",0,3,4,\"say \"\"hi\"\"\"\r\n\
                \"two\nlines\",1,4,4,plain\r\n\
                c,2,5,4,\r\n";
    let (p, table) = read(text, 64).unwrap();
    let ids: Vec<&str> = p.buffers().iter().map(|b| b.id.as_str()).collect();
    assert_eq!(ids, ["conv, 3x3", "two\nlines", "c"]);
    let out = table.write(&[0, 4, 8]);
    assert_eq!(
        out,
        "id,lower,upper,size,note,offset\n\
         \"conv, 3x3\",0,3,4,\"say \"\"hi\"\"\",0\n\
         \"two\nlines\",1,4,4,plain,4\n\
         c,2,5,4,,8\n"
    );
    let (again, _) = read(&out, 64).unwrap();
    let fields = |p: &minimalloc::Problem| -> Vec<(String, i64, i64, i64)> {
        p.buffers()
            .iter()
            .map(|b| (b.id.clone(), b.lower, b.upper, b.size))
            .collect()
    };
    assert_eq!(fields(&again), fields(&p));
    // A generated problem's odd ids are quoted too.
    let text = write_problem(&p, None);
    let (back, _) = read(&text, 64).unwrap();
    assert_eq!(back, p, "{text}");
    // A bad field after a quoted line break: line 4, where the row starts.
    let bad = "id,lower,upper,size\n\"a\nb\",0,3,4\n\nc,0,3,0\n";
    let e = read(bad, 64).unwrap_err();
    assert_eq!((e.line, e.column.as_deref()), (5, Some("size")), "{e}");
    // An unterminated quote is an error with a line, not a panic.
    let e = read("id,lower,upper,size\n\"a,0,3,4\n", 64).unwrap_err();
    assert!(e.line >= 2, "{e}");
}
