//! `--trace FILE`: every wire message, both directions, appended as one JSON line
//! `{"dir":"in"|"out","time":<RFC 3339>,"msg":<message>}`.

#[cfg(test)]
mod tests;

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::Mutex;
use std::time::SystemTime;

/// The direction of a traced message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// From the agent to us.
    In,
    /// From us to the agent.
    Out,
}

/// An open trace file.
#[derive(Debug)]
pub(crate) struct Trace {
    file: Mutex<File>,
}

impl Trace {
    /// Opens `path` for appending, creating it if needed.
    pub(crate) fn open(path: &Path) -> io::Result<Trace> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Trace { file: Mutex::new(file) })
    }

    /// Appends one message; `message` is the JSON text of the message as it travelled, or, for an
    /// incoming line that is not JSON, any text (recorded as a JSON string).
    pub(crate) fn record(&self, direction: Direction, message: &str) {
        let line = trace_line(direction, SystemTime::now(), message);
        if let Ok(mut file) = self.file.lock() {
            let _ = file.write_all(line.as_bytes());
        }
    }
}

/// Builds one trace line, newline included.
pub(crate) fn trace_line(direction: Direction, time: SystemTime, message: &str) -> String {
    let dir = match direction {
        Direction::In => "in",
        Direction::Out => "out",
    };
    let msg = match serde_json::from_str::<&serde_json::value::RawValue>(message) {
        Ok(raw) => raw.get().to_owned(),
        Err(_) => serde_json::Value::String(message.to_owned()).to_string(),
    };
    format!("{{\"dir\":\"{dir}\",\"time\":\"{}\",\"msg\":{msg}}}\n", rfc3339(time))
}

/// Formats a time as RFC 3339 in UTC with milliseconds (the protocol's one formatter of times).
pub(crate) use termsprawl_protocol::results::iso_utc as rfc3339;
