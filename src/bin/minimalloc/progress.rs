//! The progress line on stderr: nothing for runs under a second, then the
//! best height and the lower bound as they move. On a terminal one line
//! is rewritten in place; in a log, a line is written when the figures
//! change (at most once a second) and every ten seconds otherwise.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use minimalloc::{Progress, Report};

const QUIET_FOR: Duration = Duration::from_secs(1);
const HEARTBEAT: Duration = Duration::from_secs(10);

/// A running progress line; [`Ticker::stop`] ends it.
pub struct Ticker {
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Ticker {
    /// Starts the line for a plan described by `what` (e.g. "minimising");
    /// returns the callback for the plan's options.
    pub fn start(what: String) -> (Ticker, Progress) {
        let latest: Arc<Mutex<Option<Report>>> = Arc::new(Mutex::new(None));
        let done = Arc::new(AtomicBool::new(false));
        let progress = {
            let latest = latest.clone();
            Progress(Arc::new(move |r: &Report| {
                if let Ok(mut l) = latest.lock() {
                    *l = Some(*r);
                }
            }))
        };
        let thread = {
            let done = done.clone();
            std::thread::spawn(move || run(&what, &latest, &done))
        };
        (
            Ticker {
                done,
                thread: Some(thread),
            },
            progress,
        )
    }

    /// Ends the line (and the thread).
    pub fn stop(mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn run(what: &str, latest: &Mutex<Option<Report>>, done: &AtomicBool) {
    let start = Instant::now();
    let terminal = std::io::stderr().is_terminal();
    let mut shown: Option<(Option<i64>, i64)> = None;
    let mut last_line = start;
    let mut wrote = false;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(50));
        let now = Instant::now();
        if now - start < QUIET_FOR || now - last_line < Duration::from_secs(1) {
            continue;
        }
        let report = latest.lock().ok().and_then(|l| *l);
        let figures = report.map(|r| (r.height, r.lower_bound));
        if !terminal && figures == shown && now - last_line < HEARTBEAT {
            continue;
        }
        let line = describe(what, now - start, report);
        let mut err = std::io::stderr().lock();
        let _ = if terminal {
            write!(err, "\r\x1b[K{line}")
        } else {
            writeln!(err, "{line}")
        };
        let _ = err.flush();
        shown = figures;
        last_line = now;
        wrote = true;
    }
    if wrote && terminal {
        let _ = writeln!(std::io::stderr());
    }
}

fn describe(what: &str, elapsed: Duration, report: Option<Report>) -> String {
    let secs = elapsed.as_secs_f64();
    match report {
        Some(Report {
            height: Some(h),
            lower_bound,
            ..
        }) => {
            let apart = if lower_bound > 0 {
                100.0 * (h - lower_bound) as f64 / lower_bound as f64
            } else {
                0.0
            };
            format!(
                "minimalloc: {secs:.1} s {what}: best height {h}, lower bound {lower_bound} ({apart:.2}% apart)"
            )
        }
        Some(Report { lower_bound, .. }) => {
            format!("minimalloc: {secs:.1} s {what}: no placement yet, lower bound {lower_bound}")
        }
        None => format!("minimalloc: {secs:.1} s {what}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_say_what_is_known() {
        let r = |height| Report {
            height,
            lower_bound: 1000,
            elapsed: Duration::ZERO,
        };
        let s = Duration::from_millis(2500);
        assert_eq!(
            describe("minimising", s, Some(r(Some(1050)))),
            "minimalloc: 2.5 s minimising: best height 1050, lower bound 1000 (5.00% apart)"
        );
        assert!(describe("minimising", s, Some(r(None))).contains("no placement yet"));
        assert_eq!(
            describe("fitting below 8", s, None),
            "minimalloc: 2.5 s fitting below 8"
        );
    }
}
