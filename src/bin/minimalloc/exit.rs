//! How a run ends: the exit code and, for failures, the message.

use crate::sink::WriteError;

/// How a run ends: the exit code and, for failures, the message.
pub struct Exit {
    pub code: u8,
    pub message: Option<String>,
}

impl Exit {
    pub fn ok() -> Exit {
        Exit {
            code: 0,
            message: None,
        }
    }

    pub fn fail(code: u8, message: impl Into<String>) -> Exit {
        Exit {
            code,
            message: Some(message.into()),
        }
    }
}

impl From<String> for Exit {
    /// A bad input or an I/O error.
    fn from(message: String) -> Exit {
        Exit::fail(1, message)
    }
}

impl From<WriteError> for Exit {
    fn from(e: WriteError) -> Exit {
        match e {
            // The reader has all it wanted: not a failure.
            WriteError::Closed => Exit::ok(),
            WriteError::Failed(message) => Exit::fail(1, message),
        }
    }
}
