//! Bad input gets a clear error naming the buffer, the field and why; the
//! validator catches every kind of invalid placement.

mod common;

use common::{conflict, random_problem, Rng, Shape};
use minimalloc::{validate, Buffer, Gap, Problem, Solution, ValidationError, Window};

fn error_of(capacity: i64, buffers: Vec<Buffer>) -> String {
    Problem::new(capacity, buffers).unwrap_err().to_string()
}

fn ok() -> Buffer {
    Buffer::new("ok", 0, 10, 4)
}

#[test]
fn each_invalid_field_is_named() {
    let cases: Vec<(Buffer, &str)> = vec![
        (
            Buffer::new("x", 0, 5, 0),
            r#"buffer 1 (id "x"): size must be positive, got 0"#,
        ),
        (
            Buffer::new("x", 0, 5, -3),
            r#"buffer 1 (id "x"): size must be positive, got -3"#,
        ),
        (
            Buffer::new("x", 5, 5, 1),
            r#"buffer 1 (id "x"): upper lifetime [5, 5) is empty: upper must be greater than lower"#,
        ),
        (
            Buffer::new("x", 7, 3, 1),
            r#"buffer 1 (id "x"): upper lifetime [7, 3) is empty: upper must be greater than lower"#,
        ),
        (
            Buffer::new("x", -1, 3, 1),
            r#"buffer 1 (id "x"): lower must not be negative, got -1"#,
        ),
        (
            Buffer::new("x", 0, 3, 1).with_alignment(0),
            r#"buffer 1 (id "x"): alignment must be positive, got 0"#,
        ),
        (
            Buffer::new("x", 2, 8, 1).with_gap(Gap {
                lower: 1,
                upper: 4,
                window: None,
            }),
            r#"buffer 1 (id "x"): gap 0 gap [1, 4) is outside the lifetime [2, 8)"#,
        ),
        (
            Buffer::new("x", 2, 8, 1).with_gap(Gap {
                lower: 6,
                upper: 9,
                window: None,
            }),
            r#"buffer 1 (id "x"): gap 0 gap [6, 9) is outside the lifetime [2, 8)"#,
        ),
        (
            Buffer::new("x", 0, 9, 1)
                .with_gap(Gap {
                    lower: 1,
                    upper: 4,
                    window: None,
                })
                .with_gap(Gap {
                    lower: 3,
                    upper: 6,
                    window: None,
                }),
            r#"buffer 1 (id "x"): gap 1 gap [3, 6) overlaps gap [1, 4)"#,
        ),
        (
            Buffer::new("x", 0, 9, 1).with_gap(Gap {
                lower: 4,
                upper: 4,
                window: None,
            }),
            r#"buffer 1 (id "x"): gap 0 gap [4, 4) is empty"#,
        ),
        (
            Buffer::new("x", 0, 9, 4).with_gap(Gap {
                lower: 1,
                upper: 4,
                window: Some(Window { lower: 2, upper: 5 }),
            }),
            r#"buffer 1 (id "x"): gap 0 window [2, 5) must be non-empty and inside [0, 4)"#,
        ),
        (
            Buffer::new("x", 0, 3, 4).with_alignment(8).with_offset(12),
            r#"buffer 1 (id "x"): offset 12 is not a multiple of the alignment 8"#,
        ),
        (
            Buffer::new("x", 0, 3, 4).with_offset(98),
            r#"buffer 1 (id "x"): offset 98 + size 4 exceeds the capacity 100"#,
        ),
        (
            Buffer::new("x", 0, 3, 4).with_offset(-4),
            r#"buffer 1 (id "x"): offset must not be negative, got -4"#,
        ),
        (
            Buffer::new("x", 0, 3, 4).with_hint(97),
            r#"buffer 1 (id "x"): hint 97 + size 4 exceeds the capacity 100"#,
        ),
        (
            Buffer::new("x", 0, 3, i64::MAX).with_offset(8),
            r#"buffer 1 (id "x"): offset 8 + size 9223372036854775807 overflows a 64-bit offset"#,
        ),
        (
            Buffer::new("ok", 0, 3, 1),
            r#"buffer 1 (id "ok"): id already names buffer 0"#,
        ),
    ];
    for (bad, want) in cases {
        assert_eq!(error_of(100, vec![ok(), bad]), want);
    }
}

/// The repeat named is the earliest buffer whose id came before, and the
/// first buffer named is where it came first, however the ids repeat.
#[test]
fn a_duplicate_id_names_the_earliest_repeat_and_its_first() {
    let mut rng = Rng::new(17);
    for round in 0..500 {
        let n = 2 + (round % 40) as usize;
        let alphabet = 1 + rng.range(0, 2 * n as i64);
        let ids: Vec<String> = (0..n)
            .map(|_| {
                let k = rng.range(0, alphabet);
                // Some ids empty: those are never duplicates.
                if k == 0 {
                    String::new()
                } else {
                    format!("b{k}")
                }
            })
            .collect();
        let buffers: Vec<Buffer> = ids
            .iter()
            .map(|id| Buffer::new(id.clone(), 0, 1, 1))
            .collect();
        let expected = (0..n).find_map(|j| {
            let first = (0..j).find(|&i| !ids[j].is_empty() && ids[i] == ids[j])?;
            Some(format!(
                "buffer {j} (id {:?}): id already names buffer {first}",
                ids[j]
            ))
        });
        match (Problem::new(10, buffers), expected) {
            (Ok(_), None) => {}
            (Err(e), Some(want)) => assert_eq!(e.to_string(), want, "ids {ids:?}"),
            (got, want) => panic!("ids {ids:?}: got {:?}, want {want:?}", got.err()),
        }
    }
}

#[test]
fn capacity_must_be_positive() {
    assert_eq!(error_of(0, vec![]), "capacity must be positive, got 0");
    assert_eq!(
        error_of(-5, vec![ok()]),
        "capacity must be positive, got -5"
    );
}

#[test]
fn a_rejected_push_changes_nothing() {
    let mut p = Problem::new(10, vec![ok()]).unwrap();
    let before = p.clone();
    assert!(p.push(Buffer::new("y", 3, 1, 2)).is_err());
    assert!(p.push(Buffer::new("ok", 0, 1, 2)).is_err());
    assert_eq!(p, before);
    assert_eq!(p.push(Buffer::new("", 0, 1, 2)).unwrap(), 1);
    assert_eq!(
        p.push(Buffer::new("", 0, 1, 2)).unwrap(),
        2,
        "empty ids may repeat"
    );
}

#[test]
fn validator_names_each_fault() {
    let p = Problem::new(
        10,
        vec![
            Buffer::new("a", 0, 4, 4).with_alignment(2),
            Buffer::new("b", 2, 6, 3),
            Buffer::new("c", 5, 9, 3).with_offset(7),
        ],
    )
    .unwrap();
    let check = |offsets: Vec<i64>| validate(&p, &Solution { offsets });
    assert_eq!(check(vec![0, 4, 7]), Ok(()));
    assert_eq!(
        check(vec![0, 4]),
        Err(ValidationError::Length {
            expected: 3,
            got: 2
        })
    );
    assert_eq!(
        check(vec![-2, 4, 7]),
        Err(ValidationError::Negative {
            buffer: 0,
            offset: -2
        })
    );
    assert_eq!(
        check(vec![1, 5, 7]),
        Err(ValidationError::Misaligned {
            buffer: 0,
            offset: 1,
            alignment: 2
        })
    );
    assert_eq!(
        check(vec![0, 8, 7]),
        Err(ValidationError::ExceedsCapacity {
            buffer: 1,
            offset: 8,
            size: 3,
            capacity: 10
        })
    );
    assert_eq!(
        check(vec![0, 4, 6]),
        Err(ValidationError::FixedMoved {
            buffer: 2,
            offset: 6,
            fixed: 7
        })
    );
    assert_eq!(
        check(vec![0, 2, 7]),
        Err(ValidationError::Overlap {
            first: 0,
            second: 1,
            time: 2
        })
    );
    assert_eq!(
        ValidationError::Overlap {
            first: 0,
            second: 1,
            time: 2
        }
        .to_string(),
        "buffers 0 and 1 overlap in memory at time 2"
    );
}

#[test]
fn touching_lifetimes_do_not_overlap() {
    let p = Problem::new(
        4,
        vec![Buffer::new("a", 0, 3, 4), Buffer::new("b", 3, 6, 4)],
    )
    .unwrap();
    assert_eq!(
        validate(
            &p,
            &Solution {
                offsets: vec![0, 0]
            }
        ),
        Ok(())
    );
}

#[test]
fn windows_are_the_only_part_used_in_a_gap() {
    let p = Problem::new(
        10,
        vec![
            Buffer::new("a", 0, 10, 6).with_gap(Gap {
                lower: 3,
                upper: 7,
                window: Some(Window { lower: 4, upper: 6 }),
            }),
            Buffer::new("b", 4, 6, 4),
        ],
    )
    .unwrap();
    // b fits under a's window during the gap ...
    assert_eq!(
        validate(
            &p,
            &Solution {
                offsets: vec![0, 0]
            }
        ),
        Ok(())
    );
    // ... but not across it.
    assert!(validate(
        &p,
        &Solution {
            offsets: vec![0, 2]
        }
    )
    .is_err());
}

/// The validator agrees with a direct pairwise check on random placements.
#[test]
fn validator_matches_pairwise_check() {
    let mut rng = Rng::new(5);
    let mut both = [0usize; 2];
    for _ in 0..3000 {
        let p = random_problem(&mut rng, Shape::SMALL);
        let offsets: Vec<i64> = p
            .buffers()
            .iter()
            .map(|b| match b.offset {
                Some(f) => f,
                None => {
                    let slots = (p.capacity() - b.size).max(0) / b.alignment;
                    rng.range(0, slots) * b.alignment
                }
            })
            .collect();
        let bs = p.buffers();
        let fits = bs
            .iter()
            .zip(&offsets)
            .all(|(b, &o)| o + b.size <= p.capacity());
        let disjoint = (0..bs.len())
            .all(|i| (i + 1..bs.len()).all(|j| !conflict(&bs[i], offsets[i], &bs[j], offsets[j])));
        let verdict = validate(
            &p,
            &Solution {
                offsets: offsets.clone(),
            },
        );
        assert_eq!(
            verdict.is_ok(),
            fits && disjoint,
            "{offsets:?} for\n{:?}",
            p
        );
        if let Err(ValidationError::Overlap { first, second, .. }) = verdict {
            assert!(conflict(
                &bs[first],
                offsets[first],
                &bs[second],
                offsets[second]
            ));
        }
        both[usize::from(verdict.is_ok())] += 1;
    }
    assert!(both[0] > 300 && both[1] > 300, "{both:?}");
}

/// Sizes, alignments and fixed offsets at the extremes: a problem whose
/// placements could overflow 64 bits is refused, naming the buffer that
/// tips it over, and changes nothing; one just inside is planned and its
/// placement validates (never a wrong answer marked optimal).
#[test]
fn totals_past_64_bits_are_refused_and_the_edge_is_placed_validly() {
    use minimalloc::{plan, Objective, Options};
    let max = i64::MAX;
    let cases: Vec<(Vec<Buffer>, usize)> = vec![
        (
            vec![Buffer::new("a", 0, 2, max), Buffer::new("b", 0, 2, max)],
            1,
        ),
        (
            vec![
                Buffer::new("a", 0, 2, 1 << 62),
                Buffer::new("b", 0, 2, 1 << 62),
                Buffer::new("c", 0, 2, 1 << 62),
            ],
            1,
        ),
        (
            vec![
                Buffer::new("a", 0, 2, 8),
                Buffer::new("b", 0, 2, 1).with_alignment(max),
            ],
            1,
        ),
        (
            vec![
                Buffer::new("a", 0, 2, 8).with_offset(max - 8),
                Buffer::new("b", 5, 9, 16),
            ],
            1,
        ),
    ];
    for (buffers, at) in cases {
        let err = Problem::new(max, buffers.clone()).unwrap_err().to_string();
        assert!(err.contains(&format!("buffer {at}")), "{err}");
        assert!(err.contains("2^63 - 1"), "{err}");
        // Pushed one at a time: the same refusal, and nothing changes.
        let mut p = Problem::new(max, buffers[..at].to_vec()).unwrap();
        let before = p.clone();
        assert!(p.push(buffers[at].clone()).is_err());
        assert_eq!(p, before);
    }
    // Just inside: one buffer of i64::MAX bytes; two that add up to it; a
    // fixed buffer at the top with a small one beside it.
    let fits: Vec<Vec<Buffer>> = vec![
        vec![Buffer::new("a", 0, 2, max)],
        vec![
            Buffer::new("a", 0, 2, max / 2),
            Buffer::new("b", 1, 3, max / 2 + 1),
        ],
        vec![
            Buffer::new("a", 0, 2, 8).with_offset(max - 16),
            Buffer::new("b", 0, 4, 8),
        ],
    ];
    for buffers in fits {
        let problem = Problem::new(max, buffers).unwrap();
        for objective in [Objective::Fit, Objective::Minimize] {
            let outcome = plan(
                &problem,
                &Options {
                    objective,
                    ..Options::default()
                },
            );
            let s = outcome.solution.expect("a placement");
            validate(&problem, &s).unwrap();
            assert!(s.height(&problem) >= outcome.lower_bound);
        }
    }
}
