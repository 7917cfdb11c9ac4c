//! `--trace FILE`: every wire message, both directions, appended as one JSON line
//! `{"dir":"in"|"out","time":<RFC 3339>,"msg":<message>}`.

#[cfg(test)]
mod tests;

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

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

/// Formats a time as RFC 3339 in UTC with milliseconds, such as `2026-12-01T00:01:59.123Z`.
pub(crate) fn rfc3339(time: SystemTime) -> String {
    let since_epoch = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = since_epoch.as_secs();
    let days = i64::try_from(seconds / 86_400).unwrap_or(0);
    let second_of_day = seconds % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        second_of_day / 3600,
        second_of_day / 60 % 60,
        second_of_day % 60,
        since_epoch.subsec_millis()
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = u32::try_from(day_of_year - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let month = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
