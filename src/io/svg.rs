//! A placement drawn as people read them (feature `std`): time on x,
//! offset on y (growing upwards), one rectangle per live piece of a buffer
//! (a gap splits a buffer into pieces; a window keeps a thinner one), the
//! capacity, the max load and the height as horizontal lines, and ids on
//! the rectangles large enough to hold them.
//!
//! At 10^2 buffers every rectangle has an outline, a tooltip and usually
//! its id; at 10^5 the outlines and tooltips go (they would hide the
//! colours and weigh megabytes) but every piece is still drawn; beyond
//! [`FULL_DETAIL`] pieces, those smaller than a quarter of a pixel are left
//! out and counted in the caption.

use std::fmt::Write;
use std::string::String;

use crate::model::problem::Problem;

/// Pieces above which sub-pixel pieces are left out.
pub const FULL_DETAIL: usize = 200_000;

/// Buffers up to which rectangles get tooltips.
const OUTLINED: usize = 20_000;

/// Pixels a rectangle must span each way to get an outline: thinner
/// ones would be all outline, and many of them a black picture.
const OUTLINE_PX: f64 = 3.0;

const WIDTH: f64 = 1400.0;
const HEIGHT: f64 = 860.0;
const LEFT: f64 = 96.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 56.0;
const BOTTOM: f64 = 52.0;

/// What to mark besides the placement.
#[derive(Clone, Debug, Default)]
pub struct Marks {
    /// The capacity, drawn if it is not far above the placement.
    pub capacity: Option<i64>,
    /// The max load (the lowest height any placement can have).
    pub max_load: i64,
    /// A line of text above the plot (e.g. the input's name).
    pub title: String,
}

/// The SVG document for `offsets` (one per buffer of `problem`).
pub fn render(problem: &Problem, offsets: &[i64], marks: &Marks) -> String {
    let buffers = problem.buffers();
    let height = buffers
        .iter()
        .zip(offsets)
        .map(|(b, &o)| o + b.size)
        .max()
        .unwrap_or(0);
    let t_min = buffers.iter().map(|b| b.lower).min().unwrap_or(0);
    let t_max = buffers
        .iter()
        .map(|b| b.upper)
        .max()
        .unwrap_or(1)
        .max(t_min + 1);
    // The capacity shows only when it is close enough not to squash the
    // placement into a sliver.
    let capacity = marks
        .capacity
        .filter(|&c| c > 0 && (c as f64) <= 1.25 * height.max(marks.max_load).max(1) as f64);
    let y_top = (height.max(marks.max_load).max(capacity.unwrap_or(0)).max(1) as f64) * 1.03;
    let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let x = |t: i64| LEFT + (t - t_min) as f64 / (t_max - t_min) as f64 * pw;
    let y = |o: i64| TOP + ph - o as f64 / y_top * ph;

    let mut out = String::with_capacity(200 + 80 * buffers.len());
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         viewBox=\"0 0 {WIDTH} {HEIGHT}\" font-family=\"sans-serif\" font-size=\"11\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>"
    );
    let titled = buffers.len() <= OUTLINED;
    let pieces: usize = buffers.iter().map(|b| b.pieces().count()).sum();
    let mut omitted = 0usize;
    let mut labels = String::new();
    out.push_str("<g>\n");
    for (i, (b, &offset)) in buffers.iter().zip(offsets).enumerate() {
        // Golden-ratio hues: neighbours in index get distant colours.
        let hue = (i as f64 * 137.507_764) % 360.0;
        for p in b.pieces() {
            let (x0, x1) = (x(p.lower), x(p.upper));
            let (y0, y1) = (y(offset + p.window.upper), y(offset + p.window.lower));
            let (w, h) = (x1 - x0, y1 - y0);
            if pieces > FULL_DETAIL && w * h < 0.25 {
                omitted += 1;
                continue;
            }
            let _ = write!(
                out,
                "<rect x=\"{x0:.1}\" y=\"{y0:.1}\" width=\"{:.2}\" height=\"{:.2}\" fill=\"hsl({hue:.0},65%,68%)\"",
                w.max(0.1),
                h.max(0.1)
            );
            if w >= OUTLINE_PX && h >= OUTLINE_PX {
                out.push_str(" stroke=\"#333\" stroke-width=\"0.5\"");
            }
            if titled {
                out.push_str("><title>");
                escape(&mut out, &b.id);
                let _ = writeln!(
                    out,
                    ": [{}, {}) size {} at offset {}</title></rect>",
                    b.lower, b.upper, b.size, offset
                );
            } else {
                out.push_str("/>\n");
            }
            // An id fits if it is about 6.5 px a character wide.
            let text_w = 6.5 * b.id.chars().count() as f64 + 4.0;
            if w >= text_w && h >= 13.0 && !b.id.is_empty() {
                let _ = write!(
                    labels,
                    "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" dominant-baseline=\"central\">",
                    x0 + w / 2.0,
                    y0 + h / 2.0
                );
                escape(&mut labels, &b.id);
                labels.push_str("</text>\n");
            }
        }
    }
    out.push_str("</g>\n<g fill=\"#111\">\n");
    out.push_str(&labels);
    out.push_str("</g>\n");

    // Axes, ticks and the marked levels.
    let _ = writeln!(
        out,
        "<g stroke=\"#000\" fill=\"none\"><path d=\"M{LEFT},{TOP}V{:.1}H{:.1}\"/></g>",
        TOP + ph,
        LEFT + pw
    );
    for t in ticks(t_min, t_max, 10) {
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{t}</text>",
            x(t),
            TOP + ph + 16.0
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">time</text>",
        LEFT + pw / 2.0,
        HEIGHT - 10.0
    );
    // Offsets tick at round numbers of one unit, every label in it.
    let (unit, suffix) = [(1i64 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")]
        .into_iter()
        .find(|&(u, _)| y_top as i64 >= 4 * u)
        .unwrap_or((1, ""));
    for t in ticks(0, y_top as i64 / unit, 8) {
        let _ = writeln!(out, "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" dominant-baseline=\"central\">{t}{suffix}</text>",
            LEFT - 6.0,
            y(t * unit),
        );
    }
    // Labels: the height's at the right end, the max load's at the left,
    // and the capacity's at the right, or in the middle when it would
    // run into the height's; so all three read even when they meet.
    #[derive(Clone, Copy)]
    enum At {
        Left,
        Middle,
        Right,
    }
    let mut level = |value: i64, colour: &str, dash: &str, name: &str, at: At| {
        let (lx, anchor) = match at {
            At::Left => (LEFT + 4.0, "start"),
            At::Middle => (LEFT + pw / 2.0, "middle"),
            At::Right => (LEFT + pw - 4.0, "end"),
        };
        let _ = writeln!(out, "<path d=\"M{LEFT},{:.1}H{:.1}\" stroke=\"{colour}\" stroke-width=\"1.5\" stroke-dasharray=\"{dash}\"/>\n\
             <text x=\"{lx:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\" fill=\"{colour}\">{name} {value}</text>",
            y(value),
            LEFT + pw,
            y(value) - 4.0
        );
    };
    if let Some(c) = capacity {
        let near = (y(c) - y(height)).abs() < 14.0;
        level(
            c,
            "#c00",
            "8 4",
            "capacity",
            if near { At::Middle } else { At::Right },
        );
    }
    level(height, "#0050c0", "", "height", At::Right);
    level(marks.max_load, "#080", "3 3", "max load", At::Left);

    let above = if marks.max_load > 0 {
        100.0 * (height - marks.max_load) as f64 / marks.max_load as f64
    } else {
        0.0
    };
    let _ = write!(out, "<text x=\"{LEFT}\" y=\"22\" font-size=\"14\">");
    escape(&mut out, &marks.title);
    let _ = write!(
        out,
        "</text>\n<text x=\"{LEFT}\" y=\"40\">{} buffers, {pieces} pieces; height {height} ({}), \
         {above:.2}% above the max load {}",
        buffers.len(),
        bytes(height),
        marks.max_load
    );
    if omitted > 0 {
        let _ = write!(out, "; {omitted} pieces under a quarter pixel not drawn");
    }
    out.push_str("</text>\n</svg>\n");
    out
}

/// About `count` round values from `lo` to `hi`.
fn ticks(lo: i64, hi: i64, count: i64) -> Vec<i64> {
    let span = (hi - lo).max(1);
    let raw = (span / count).max(1);
    let magnitude = 10i64.pow(raw.ilog10());
    let step = [1, 2, 5, 10]
        .iter()
        .map(|m| m * magnitude)
        .find(|&s| s >= raw)
        .unwrap_or(10 * magnitude);
    let first = (lo + step - 1).div_euclid(step) * step;
    (0..)
        .map(|k| first + k * step)
        .take_while(|&t| t <= hi)
        .collect()
}

/// `n` bytes in a short form: 512, 1.5K, 3M, 2.25G.
fn bytes(n: i64) -> String {
    const UNITS: [(i64, &str); 3] = [(1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")];
    for (scale, unit) in UNITS {
        if n.abs() >= scale {
            let v = n as f64 / scale as f64;
            let text = format!("{v:.2}");
            let text = text.trim_end_matches('0').trim_end_matches('.');
            return format!("{text}{unit}");
        }
    }
    n.to_string()
}

fn escape(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
}

/// Drawings stacked in one picture, one panel under the other (one panel
/// per memory pool).
pub fn stack(panels: &[String]) -> String {
    let total = HEIGHT * panels.len().max(1) as f64;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{total}\" \
         viewBox=\"0 0 {WIDTH} {total}\">"
    );
    for (k, panel) in panels.iter().enumerate() {
        // Each panel is a whole drawing; nested, it takes its place by y.
        let y = HEIGHT * k as f64;
        out.push_str(&panel.replacen("<svg ", &format!("<svg y=\"{y}\" "), 1));
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::problem::{Buffer, Gap};

    #[test]
    fn ticks_are_round_and_inside() {
        assert_eq!(ticks(0, 100, 10), (0..=100).step_by(10).collect::<Vec<_>>());
        assert_eq!(ticks(3, 17, 5), vec![4, 6, 8, 10, 12, 14, 16]);
        assert_eq!(ticks(0, 0, 8), vec![0]);
        assert!(ticks(0, 1 << 30, 8).len() <= 11);
    }

    #[test]
    fn bytes_are_short() {
        assert_eq!(bytes(512), "512");
        assert_eq!(bytes(1536), "1.5K");
        assert_eq!(bytes(3 << 20), "3M");
        assert_eq!(bytes((9 << 30) / 4), "2.25G");
    }

    #[test]
    fn one_rectangle_per_piece_with_ids_and_levels() {
        let problem = Problem::new(
            16,
            vec![
                Buffer::new("a<b", 0, 10, 8).with_gap(Gap {
                    lower: 3,
                    upper: 5,
                    window: None,
                }),
                Buffer::new("wide", 0, 10, 8),
            ],
        )
        .unwrap();
        let svg = render(
            &problem,
            &[0, 8],
            &Marks {
                capacity: Some(16),
                max_load: 16,
                title: "t".into(),
            },
        );
        assert_eq!(svg.matches("<rect x=").count(), 3); // a: two pieces
        assert!(svg.contains(">a&lt;b</text>") && svg.contains(">wide</text>"));
        assert!(svg.contains("capacity 16") && svg.contains("max load 16"));
        assert!(svg.contains("height 16"));
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    }

    /// The offset axis reads in one unit (here M, from 0 to 1200M: never
    /// "1000M" beside "1.17G"), and only rectangles a few pixels wide
    /// each way get an outline (20,000 thin ones once drew a black
    /// picture).
    #[test]
    fn one_unit_on_the_axis_and_outlines_only_where_they_show() {
        let mut buffers = vec![Buffer::new("tall", 0, 10, 1200 << 20)];
        // A thousand slivers, a thousandth of the time each.
        for i in 0..1_000 {
            buffers.push(Buffer::new(alloc::format!("s{i}"), 10 + i, 11 + i, 1 << 20));
        }
        let problem = Problem::new(i64::MAX, buffers).unwrap();
        let offsets = vec![0; problem.len()];
        let marks = Marks {
            capacity: None,
            max_load: 1200 << 20,
            title: "t".into(),
        };
        let svg = render(&problem, &offsets, &marks);
        let labels: Vec<&str> = svg
            .lines()
            .filter(|l| l.contains("text-anchor=\"end\" dominant-baseline"))
            .map(|l| l.rsplit_once("\">").unwrap().1.trim_end_matches("</text>"))
            .collect();
        assert!(labels.len() >= 4, "{labels:?}");
        assert!(labels.iter().all(|l| l.ends_with('M')), "{labels:?}");
        assert!(
            labels.contains(&"1000M") && labels.contains(&"1200M"),
            "{labels:?}"
        );
        assert_eq!(
            svg.matches("stroke=\"#333\"").count(),
            1,
            "only the tall one"
        );
    }
}
