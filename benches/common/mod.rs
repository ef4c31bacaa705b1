//! What the benchmarks share.
#![allow(dead_code)] // each bench uses a part

/// The process's peak resident memory (VmHWM) in MB; NaN where
/// `/proc/self/status` does not say (not Linux).
pub fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// The comma-separated list that follows a flag such as `--only`.
pub fn list(value: Option<String>, flag: &str) -> Vec<String> {
    value
        .unwrap_or_else(|| panic!("{flag} needs a comma-separated list"))
        .split(',')
        .map(String::from)
        .collect()
}

/// Runs this benchmark again as a child with `args` (one row, so that the
/// row's peak memory is its own); its tab-separated output fields, or the
/// child's error output when it failed or printed fewer than `fields`.
pub fn child_row(args: &[&str], fields: usize) -> Result<Vec<String>, String> {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let f: Vec<String> = text.trim().split('\t').map(String::from).collect();
    if !out.status.success() || f.len() < fields {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(f)
}
