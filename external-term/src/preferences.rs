//! The `externalTerminal` member of `agent-tools/preferences.json` (`spec/protocol.md` §2.6, §9.1),
//! re-read on every use.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::Error;

/// The argument that is replaced by the whole attach command.
pub const PLACEHOLDER: &str = "{command}";

/// A validated `externalTerminal` template: a non-empty executable and arguments with exactly one
/// element equal to [`PLACEHOLDER`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalTerminal {
    executable: String,
    args: Vec<String>,
}

impl ExternalTerminal {
    /// Checks a template. An empty executable or a placeholder count other than one fails with
    /// [`Error::InvalidTemplate`]; an element that merely contains the placeholder (`{command}x`)
    /// does not count and is later passed through literally.
    pub fn new(executable: String, args: Vec<String>) -> Result<Self, Error> {
        let placeholders = args.iter().filter(|arg| *arg == PLACEHOLDER).count();
        if executable.is_empty() || placeholders != 1 {
            return Err(Error::InvalidTemplate);
        }
        Ok(ExternalTerminal { executable, args })
    }

    /// Checks the JSON value of `externalTerminal`: an object whose `executable` is a string and
    /// whose `args` is an array of strings, then as [`ExternalTerminal::new`]. Anything else
    /// (including a value that is not an object) fails with [`Error::InvalidTemplate`]. Unknown
    /// members are ignored.
    pub fn from_json(value: &Value) -> Result<Self, Error> {
        let Some(object) = value.as_object() else { return Err(Error::InvalidTemplate) };
        let Some(executable) = object.get("executable").and_then(Value::as_str) else {
            return Err(Error::InvalidTemplate);
        };
        let Some(args) = object.get("args").and_then(Value::as_array) else {
            return Err(Error::InvalidTemplate);
        };
        let args = args
            .iter()
            .map(|arg| arg.as_str().map(str::to_owned))
            .collect::<Option<Vec<String>>>()
            .ok_or(Error::InvalidTemplate)?;
        ExternalTerminal::new(executable.to_owned(), args)
    }

    /// The executable as configured: an absolute path or a bare name.
    pub fn executable(&self) -> &str {
        &self.executable
    }

    /// The arguments, with exactly one [`PLACEHOLDER`].
    pub fn args(&self) -> &[String] {
        &self.args
    }
}

/// `<userData>/agent-tools/preferences.json`.
pub fn preferences_path(user_data: &Path) -> PathBuf {
    user_data.join("agent-tools").join("preferences.json")
}

/// Reads `externalTerminal` from [`preferences_path`], afresh on every call.
///
/// - A missing file, a missing member and `"externalTerminal": null` mean no preference (`None`).
/// - A file that is not JSON, or JSON that is not an object, fails with
///   [`Error::InvalidPreferences`] (`Invalid agent-tools/preferences.json`).
/// - A file that exists but cannot be read fails with [`Error::ReadPreferences`].
/// - A bad template fails as [`ExternalTerminal::from_json`] does.
pub fn load_external_terminal(user_data: &Path) -> Result<Option<ExternalTerminal>, Error> {
    let path = preferences_path(user_data);
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(Error::ReadPreferences { path, error }),
    };
    let Ok(Value::Object(preferences)) = serde_json::from_slice::<Value>(&bytes) else {
        return Err(Error::InvalidPreferences { path });
    };
    match preferences.get("externalTerminal") {
        None | Some(Value::Null) => Ok(None),
        Some(value) => ExternalTerminal::from_json(value).map(Some),
    }
}
