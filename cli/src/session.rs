//! Finding the session file: the `--session` rule of the compatibility surface and the
//! `TERMSPRAWL_SESSION_FILE` variable (`spec/protocol.md` §8.1).

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

pub use termsprawl_transport::discovery::SESSION_ENV;

/// The line printed (plus a newline, on stderr, exit 2) when no session file is known.
pub const MISSING_SESSION: &str = "Launch this helper from a termsprawl agent, or provide --session /absolute/path/to/session.json";

/// After a failed call whose session file is gone, the guidance line for stderr (`hint: …`), put
/// beside the failure the call prints as the contract says
/// (`termsprawl_transport::discovery::session_gone`).
pub(crate) fn gone_hint(
    session: &std::path::Path,
    result: &termsprawl_protocol::ToolResult,
) -> Option<String> {
    if result.is_ok() {
        return None;
    }
    termsprawl_transport::discovery::session_gone(session).map(|hint| format!("hint: {hint}"))
}

/// What the compatibility check removed from the arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Removed {
    /// The arguments without the first `--session` and the argument after it.
    pub(crate) rest: Vec<OsString>,
    /// The flag, if it was there.
    pub(crate) flag: SessionFlag,
}

/// The `--session` flag of the compatibility surface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SessionFlag {
    /// No argument was exactly `--session`: the environment variable is used.
    Absent,
    /// `--session` was the last argument: no session, the environment is ignored.
    WithoutValue,
    /// `--session FILE`.
    Value(OsString),
}

/// Removes the first argument exactly equal to `--session` together with the argument after it.
pub(crate) fn remove_session_flag(args: &[OsString]) -> Removed {
    let Some(index) = args.iter().position(|arg| arg == "--session") else {
        return Removed { rest: args.to_vec(), flag: SessionFlag::Absent };
    };
    let flag = match args.get(index + 1) {
        Some(value) => SessionFlag::Value(value.clone()),
        None => SessionFlag::WithoutValue,
    };
    let end = (index + 2).min(args.len());
    let rest = args[..index].iter().chain(&args[end..]).cloned().collect();
    Removed { rest, flag }
}

/// The session file: the flag's value when the flag was given (a flag without a value counts as
/// an empty one), otherwise the environment variable; an empty value counts as missing
/// (`termsprawl_transport::discovery::session_file`, the one rule).
pub(crate) fn resolve(flag: &SessionFlag, env: Option<&OsStr>) -> Option<PathBuf> {
    let flag = match flag {
        SessionFlag::Absent => None,
        SessionFlag::WithoutValue => Some(OsStr::new("")),
        SessionFlag::Value(value) => Some(value.as_os_str()),
    };
    termsprawl_transport::discovery::session_file(flag, env)
}

#[cfg(test)]
mod tests;
