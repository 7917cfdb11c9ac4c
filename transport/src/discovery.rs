//! Discovery: from a session file to the token and the port (`spec/protocol.md` §2, §7.1 steps 1–3).
//!
//! Everything here is synchronous and small: two tiny files are read per call, nothing is cached.
//! [`validate_endpoint`] is the gate that keeps the token on loopback; it is pure so that it can be
//! fuzzed.

use std::ffi::OsStr;
use std::io;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use serde_json::Value;
use termsprawl_protocol::SessionToken;
use url::{Host, Url};

/// The environment variable that names the session file when `--session` is not given
/// (`spec/protocol.md` §8.1).
pub const SESSION_ENV: &str = "TERMSPRAWL_SESSION_FILE";

/// The session file of a frontend, the one rule of every mode (`spec/protocol.md` §8.1): the
/// `--session` value when the flag was given (`Some`, even an empty value), otherwise `env`, the
/// value of [`SESSION_ENV`] the program was handed; an empty value counts as missing.
///
/// Pure: the caller reads its environment once and hands it over, so that a program run as a
/// library with an environment of its own is resolved the same way.
pub fn session_file(flag: Option<&OsStr>, env: Option<&OsStr>) -> Option<PathBuf> {
    flag.or(env).filter(|value| !value.is_empty()).map(PathBuf::from)
}

/// The name of the endpoint file, which sits two levels above every session file.
pub const ENDPOINT_FILE: &str = "endpoint.json";

/// The only URL form that may receive a session token, with an optional port:
/// `http://127.0.0.1[:<port>]/call`.
pub const ENDPOINT_PREFIX: &str = "http://127.0.0.1";

/// A URL in `endpoint.json` that must not receive the token.
///
/// Its `Display` is the contract's reason, exactly `Invalid local endpoint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("Invalid local endpoint")]
pub struct InvalidEndpoint;

/// Checks an endpoint URL and returns the port to connect to on `127.0.0.1`.
///
/// Accepted is exactly the literal form `http://127.0.0.1/call` or `http://127.0.0.1:<port>/call`
/// with a port of one or more ASCII digits whose value is at most 65535 (absent means 80). The
/// URL must also parse as a WHATWG URL (the `url` crate) to the same scheme, host, port, path and
/// the absence of userinfo, query and fragment, so that the two readings cannot disagree.
/// Everything else is refused: other schemes or their uppercase spellings, userinfo, `localhost`,
/// `127.1`, `[::1]` and any other host spelling, `/call/`, an empty `?` or `#`, surrounding or
/// embedded whitespace and control characters.
///
/// Pure: no I/O, no allocation beyond what the URL parser does.
pub fn validate_endpoint(url: &str) -> Result<u16, InvalidEndpoint> {
    let port = literal_port(url).ok_or(InvalidEndpoint)?;
    let parsed = Url::parse(url).map_err(|_| InvalidEndpoint)?;
    let same_reading = parsed.scheme() == "http"
        && parsed.username().is_empty()
        && parsed.password().is_none()
        && parsed.host() == Some(Host::Ipv4(Ipv4Addr::LOCALHOST))
        && parsed.port_or_known_default() == Some(port)
        && parsed.path() == "/call"
        && parsed.query().is_none()
        && parsed.fragment().is_none();
    if !same_reading {
        return Err(InvalidEndpoint);
    }
    Ok(port)
}

/// The port of the literal form `http://127.0.0.1[:<digits>]/call`, or `None`.
fn literal_port(url: &str) -> Option<u16> {
    let authority_rest = url.strip_prefix(ENDPOINT_PREFIX)?.strip_suffix("/call")?;
    if authority_rest.is_empty() {
        return Some(80);
    }
    let digits = authority_rest.strip_prefix(':')?;
    if digits.is_empty() {
        return None;
    }
    digits.bytes().try_fold(0_u16, |port, digit| {
        if !digit.is_ascii_digit() {
            return None;
        }
        port.checked_mul(10)?.checked_add(u16::from(digit - b'0'))
    })
}

/// The endpoint file that belongs to `session_file`: `<grandparent>/endpoint.json`.
///
/// A relative `session_file` is first made absolute against the current directory, lexically (no
/// symlink resolution); the parents are then taken lexically (`spec/protocol.md` §7.1 step 2).
/// Fails only when the current directory cannot be determined.
pub fn endpoint_file(session_file: &Path) -> io::Result<PathBuf> {
    let absolute = absolute(session_file)?;
    // The parent of the root is the root, as in `dirname`.
    let parent = absolute.parent().unwrap_or(&absolute);
    let directory = parent.parent().unwrap_or(parent);
    Ok(directory.join(ENDPOINT_FILE))
}

/// `path` made absolute against the current directory, lexically.
pub fn absolute(path: &Path) -> io::Result<PathBuf> {
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    Ok(std::env::current_dir()?.join(path))
}

/// Why discovery failed: the reason of a connection-unavailable result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiscoveryError {
    /// A file could not be read.
    #[error("cannot read {path}: {message}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's message.
        message: String,
    },
    /// A file is not JSON.
    #[error("{path} is not valid JSON")]
    NotJson {
        /// The file.
        path: PathBuf,
    },
    /// The session file has no usable token.
    #[error("session file has no token")]
    NoToken,
    /// The endpoint has no `url`, or one that must not receive the token.
    #[error(transparent)]
    InvalidEndpoint(#[from] InvalidEndpoint),
    /// The current directory is needed for a relative session path and is not available.
    #[error("cannot resolve {path}: {message}")]
    Resolve {
        /// The relative session path.
        path: PathBuf,
        /// The operating system's message.
        message: String,
    },
}

/// Reads the token of a session file (`spec/protocol.md` §7.1 step 1).
///
/// The file must be JSON; unknown members are ignored. `token` must be a non-empty string of
/// visible ASCII characters (what every HTTP stack accepts in a header), else
/// [`DiscoveryError::NoToken`].
pub fn read_token(session_file: &Path) -> Result<SessionToken, DiscoveryError> {
    let value = read_json(session_file)?;
    let Some(Value::String(token)) = value.get("token") else {
        return Err(DiscoveryError::NoToken);
    };
    if !is_header_safe(token) {
        return Err(DiscoveryError::NoToken);
    }
    Ok(SessionToken::new(token.clone()))
}

/// Reads an endpoint file and checks its `url` (`spec/protocol.md` §7.1 steps 2–3); returns the
/// port.
pub fn read_endpoint(endpoint_file: &Path) -> Result<u16, DiscoveryError> {
    let value = read_json(endpoint_file)?;
    let Some(Value::String(url)) = value.get("url") else {
        return Err(DiscoveryError::InvalidEndpoint(InvalidEndpoint));
    };
    Ok(validate_endpoint(url)?)
}

/// Session file and endpoint file of one call: the token and the port, or why not.
pub fn discover(session_file: &Path) -> Result<(SessionToken, u16), DiscoveryError> {
    let token = read_token(session_file)?;
    let endpoint_file = endpoint_file(session_file).map_err(|error| DiscoveryError::Resolve {
        path: session_file.to_path_buf(),
        message: error.to_string(),
    })?;
    let port = read_endpoint(&endpoint_file)?;
    Ok((token, port))
}

/// Guidance for a session file that does not exist, or `None` when it does (or cannot be looked
/// at for another reason): a session file belongs to one termsprawl node and is removed when that
/// node closes, so a missing one almost always means the node is gone.
///
/// The contract's failure text of a call stays as it is (`spec/protocol.md` §7.2); this is the
/// extra line a frontend puts beside it (stderr, JSON-RPC `data`). It names the path, never the
/// token.
pub fn session_gone(session_file: &Path) -> Option<String> {
    match std::fs::symlink_metadata(session_file) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => Some(format!(
            "the session file {} does not exist: the termsprawl node it belonged to was closed, or the app restarted without it. A session file works only while its node is open: start the agent again from a termsprawl node (or `termsprawl-headless launch --json`) and use its session file",
            session_file.display()
        )),
        _ => None,
    }
}

/// What is wrong with a session file, found before any call is made (issue 39): the mistakes a
/// frontend that starts once and then serves (`termsprawlctl mcp`) can name at start. A tool
/// server that is down is none of them: it is found per call, because the app may be restarting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionFileProblem {
    /// The file does not exist, and its folder is an existing `sessions/` folder: the node's
    /// session was removed, because the node was closed or the app restarted without it (a
    /// server that quits keeps its session files, `spec/protocol.md` §2.5).
    Removed {
        /// The node the file was named after (`<nodeId>.json`).
        node_id: String,
    },
    /// The file does not exist and its folder is no `sessions/` folder: not a session file's path.
    Missing,
    /// The file exists and cannot be read.
    Unreadable {
        /// The operating system's message.
        message: String,
    },
    /// The file is not JSON.
    NotJson,
    /// The file is JSON without a usable token.
    NoToken,
}

/// The problem of a session file that cannot serve any call, or `None` when its token can be read
/// (`spec/protocol.md` §7.1 step 1, the rules of [`read_token`]). The endpoint is not looked at.
pub fn session_file_problem(session_file: &Path) -> Option<SessionFileProblem> {
    let message = match read_token(session_file) {
        Ok(_) => return None,
        Err(DiscoveryError::NotJson { .. }) => return Some(SessionFileProblem::NotJson),
        Err(DiscoveryError::NoToken) => return Some(SessionFileProblem::NoToken),
        Err(DiscoveryError::Read { message, .. }) => message,
        Err(DiscoveryError::InvalidEndpoint(_) | DiscoveryError::Resolve { .. }) => {
            unreachable!("reading a token reads no endpoint")
        }
    };
    match std::fs::symlink_metadata(session_file) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        _ => return Some(SessionFileProblem::Unreadable { message }),
    }
    let folder = absolute(session_file).ok().and_then(|path| path.parent().map(Path::to_path_buf));
    let in_sessions = folder.is_some_and(|folder| {
        folder.file_name().is_some_and(|name| name == "sessions") && folder.is_dir()
    });
    let node_id = session_file.file_stem().map(|stem| stem.to_string_lossy().into_owned());
    match node_id {
        Some(node_id) if in_sessions => Some(SessionFileProblem::Removed { node_id }),
        _ => Some(SessionFileProblem::Missing),
    }
}

fn read_json(path: &Path) -> Result<Value, DiscoveryError> {
    let bytes = std::fs::read(path).map_err(|error| DiscoveryError::Read {
        path: path.to_path_buf(),
        message: error.to_string(),
    })?;
    serde_json::from_slice(&bytes).map_err(|_| DiscoveryError::NotJson { path: path.to_path_buf() })
}

/// Non-empty, and only visible ASCII: no space, no control character, nothing outside ASCII.
fn is_header_safe(token: &str) -> bool {
    !token.is_empty() && token.bytes().all(|byte| byte.is_ascii_graphic())
}

#[cfg(test)]
mod tests;
