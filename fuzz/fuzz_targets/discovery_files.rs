//! Fuzz target: session-file and endpoint-file parsing on arbitrary bytes
//! (`termsprawl_transport::discovery::{read_token, read_endpoint, discover}`, `spec/protocol.md`
//! §2.2, §7.1 steps 1–3).
//!
//! The input is the session file's bytes, a separator line `%%`, then the endpoint file's bytes
//! (without a separator, both files get the whole input). They are written into the real layout,
//! `D/sessions/agent-1.json` and `D/endpoint.json`, in a fresh temporary directory per input (on
//! `/dev/shm` when there is one), and read through the crate's public functions.
//!
//! Oracle, from the spec: a file that is not JSON is `NotJson`; a session file's `token` must be a
//! non-empty string of visible ASCII (the crate's reading of "valid in an HTTP header"), else
//! `NoToken`; an endpoint file's `url` must be a string that the strict literal check accepts,
//! with that port, else `InvalidEndpoint`; `discover` is the token check, then the endpoint check.
//! The errors must equal the oracle's, which carry only the kind and the path, so no byte of a file
//! can show in one; and a token read shows as `<redacted>` in its `Debug` and `Display`.

#![no_main]

use std::path::{Path, PathBuf};

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use termsprawl_fuzz::endpoint::literal_port;
use termsprawl_transport::discovery::{DiscoveryError, discover, read_endpoint, read_token};

const SEPARATOR: &[u8] = b"\n%%\n";

fuzz_target!(|data: &[u8]| {
    let (session_bytes, endpoint_bytes) = match find(data, SEPARATOR) {
        Some(at) => (&data[..at], &data[at + SEPARATOR.len()..]),
        None => (data, data),
    };
    let base = if Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let root = tempfile::Builder::new()
        .prefix("termsprawl-fuzz-")
        .tempdir_in(base)
        .expect("a temporary directory");
    let sessions = root.path().join("sessions");
    std::fs::create_dir(&sessions).expect("the sessions directory");
    let session_file = sessions.join("agent-1.json");
    let endpoint_file = root.path().join("endpoint.json");
    std::fs::write(&session_file, session_bytes).expect("the session file");
    std::fs::write(&endpoint_file, endpoint_bytes).expect("the endpoint file");

    let token = read_token(&session_file);
    let expected_token = expected_token(session_bytes, &session_file);
    match (&token, &expected_token) {
        (Ok(token), Ok(expected)) => {
            assert_eq!(token.expose(), expected, "read_token read another token");
            assert_eq!(format!("{token:?}"), "SessionToken(<redacted>)");
            assert_eq!(token.to_string(), "<redacted>");
        }
        (Err(error), Err(expected)) => assert_eq!(error, expected, "read_token failed otherwise"),
        _ => panic!("read_token gave {token:?}, the oracle {expected_token:?}"),
    }

    let port = read_endpoint(&endpoint_file);
    let expected_port = expected_port(endpoint_bytes, &endpoint_file);
    assert_eq!(port, expected_port, "read_endpoint and the oracle disagree");

    let discovered = discover(&session_file);
    match (&discovered, &token, &port) {
        (Ok((token, port)), Ok(expected_token), Ok(expected_port)) => {
            assert_eq!(token, expected_token);
            assert_eq!(port, expected_port);
        }
        (Err(error), Err(expected), _) | (Err(error), Ok(_), Err(expected)) => {
            assert_eq!(error, expected, "discover failed otherwise");
        }
        _ => panic!("discover gave {discovered:?}, the parts {token:?} and {port:?}"),
    }
});

/// What a session file with `bytes` must give, by §7.1 step 1.
fn expected_token(bytes: &[u8], path: &Path) -> Result<String, DiscoveryError> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|_| DiscoveryError::NotJson { path: path.to_path_buf() })?;
    match value.get("token") {
        Some(Value::String(token))
            if !token.is_empty() && token.chars().all(|c| ('!'..='~').contains(&c)) =>
        {
            Ok(token.clone())
        }
        _ => Err(DiscoveryError::NoToken),
    }
}

/// What an endpoint file with `bytes` must give, by §7.1 steps 2–3.
fn expected_port(bytes: &[u8], path: &Path) -> Result<u16, DiscoveryError> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|_| DiscoveryError::NotJson { path: path.to_path_buf() })?;
    let invalid = DiscoveryError::InvalidEndpoint(termsprawl_transport::discovery::InvalidEndpoint);
    match value.get("url") {
        Some(Value::String(url)) => literal_port(url).ok_or(invalid),
        _ => Err(invalid),
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}
