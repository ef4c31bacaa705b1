//! Where results go: a file checked before the solve (so that a bad path
//! fails at once, not after an hour) and made only when it is written (so
//! that a run stopped early, even by a signal that kills it, leaves no
//! empty file), or standard output, whose reader may go away (`| head
//! -1`): that ends the program quietly, not in a panic.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::Path;

/// Why writing failed.
pub enum WriteError {
    /// The reader of standard output closed it: not an error of ours.
    Closed,
    /// Anything else, as a message naming the path.
    Failed(String),
}

/// An output checked before the solve, written once after it.
pub struct Sink {
    /// The path, or `None` for standard output.
    path: Option<String>,
    /// An existing file, opened (not truncated) to check it is writable;
    /// `None` for a file to be made when written.
    file: Option<File>,
}

impl Sink {
    /// Checks that `path` (`None` or `-`: standard output) can be written,
    /// changing nothing: an existing file is opened without truncating it
    /// (a run that fails leaves it as it was); a new one is made and
    /// removed again at once, and made for good only when written.
    pub fn open(path: Option<&str>) -> Result<Sink, String> {
        let Some(path) = path.filter(|p| *p != "-") else {
            return Ok(Sink {
                path: None,
                file: None,
            });
        };
        let existed = Path::new(path).exists();
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| format!("cannot write {path}: {e}"))?;
        let file = if existed {
            Some(file)
        } else {
            drop(file);
            let _ = std::fs::remove_file(path);
            None
        };
        Ok(Sink {
            path: Some(path.to_string()),
            file,
        })
    }

    /// Whether this is standard output.
    pub fn is_stdout(&self) -> bool {
        self.path.is_none()
    }

    /// Writes `bytes` as the whole content.
    pub fn write(mut self, bytes: &[u8]) -> Result<(), WriteError> {
        let Some(path) = &self.path else {
            return write_stdout(bytes);
        };
        let failed = |e: std::io::Error| WriteError::Failed(format!("cannot write {path}: {e}"));
        let mut file = match self.file.take() {
            Some(file) => file,
            None => File::create(path).map_err(failed)?,
        };
        // Devices and pipes (/dev/stdout) cannot be truncated.
        if file.metadata().map(|m| m.is_file()).unwrap_or(false) {
            file.set_len(0).map_err(failed)?;
        }
        file.write_all(bytes).map_err(failed)?;
        file.flush().map_err(failed)
    }
}

/// Writes to standard output; a closed pipe is [`WriteError::Closed`].
pub fn write_stdout(bytes: &[u8]) -> Result<(), WriteError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Err(WriteError::Closed),
        Err(e) => Err(WriteError::Failed(format!(
            "cannot write to standard output: {e}"
        ))),
    }
}

/// Writes a line to standard error; errors there have nowhere to go.
pub fn say(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(line.as_bytes());
    let _ = err.write_all(b"\n");
}
