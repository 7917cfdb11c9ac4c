//! What the direct form prints for a result (`spec/shell-conventions.md` §8): the value itself,
//! never the envelope.

use std::path::PathBuf;

use serde_json::Value;
use termsprawl_protocol::{ExitStatus, ToolResult};

use crate::image::{OutputDir, decode_image};
use crate::streams::Streams;

/// The warning printed when the server answered `ok` but the output could not be written.
const WRITE_FAILED: &str = "termsprawlctl: the call succeeded, but writing its output failed, so do not run it again for that";

/// Prints `result`; once the server has answered `ok`, no later failure changes the status from 0.
pub(crate) fn print_result(
    result: ToolResult,
    out_dir: Option<PathBuf>,
    streams: &mut Streams<'_>,
) -> ExitStatus {
    let value = match result {
        ToolResult::Failure { error } => {
            streams.error_line(&format!("Error: {error}"));
            return ExitStatus::FAILED;
        }
        ToolResult::Success { value } => value,
    };
    let mut out_dir = OutputDir::new(out_dir);
    let written = render(value, &mut out_dir)
        .and_then(|bytes| streams.write_stdout(&bytes).map_err(|error| error.to_string()));
    if let Err(error) = written {
        streams.error_line(&format!("{WRITE_FAILED}: {error}"));
    }
    ExitStatus::OK
}

/// The bytes stdout gets for a successful value, saving an image first.
fn render(value: Option<Value>, out_dir: &mut OutputDir) -> Result<Vec<u8>, String> {
    let value = match value {
        None => return Ok(Vec::new()),
        Some(Value::String(text)) => return Ok(line(text.into_bytes())),
        Some(value) => value,
    };
    if let Value::Object(mut object) = value {
        let image = match object.get("image") {
            Some(Value::String(text)) => decode_image(text),
            _ => None,
        };
        if let Some((bytes, extension)) = image {
            let path = out_dir.save(&bytes, extension)?;
            if object.len() == 1 {
                return Ok(line(path.into_os_string().into_encoded_bytes()));
            }
            object.insert("image".to_owned(), Value::from(path.to_string_lossy().into_owned()));
        }
        return Ok(line(pretty(&Value::Object(object)).into_bytes()));
    }
    Ok(line(pretty(&value).into_bytes()))
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).expect("a JSON value always serialises")
}

/// `bytes` plus a newline if they lack one; nothing stays nothing.
fn line(mut bytes: Vec<u8>) -> Vec<u8> {
    if !bytes.is_empty() && !bytes.ends_with(b"\n") {
        bytes.push(b'\n');
    }
    bytes
}

#[cfg(test)]
mod tests;
