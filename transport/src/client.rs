//! The client of the loopback tool server (`spec/protocol.md` §7): one call, one POST, one result.
//!
//! [`Client::call`] never fails and never retries. Every step, from reading the session file to
//! parsing the response, turns its problem into a one-line reason, and [`connection_unavailable`]
//! turns the reason into the contract's `ok:false` result.

use std::fmt;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use termsprawl_protocol::{SessionToken, ToolRequest, ToolResult};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

use crate::discovery;

/// The whole-call timeout of a default client: connect to end of body.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(45);

/// The largest response body the client reads: 64 MiB.
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;

/// The client of the loopback tool server.
///
/// Cheap to create and to clone; it holds no connection and caches nothing. The default client
/// waits [`DEFAULT_TIMEOUT`] for a whole exchange.
#[derive(Debug, Clone)]
pub struct Client {
    timeout: Duration,
}

impl Default for Client {
    fn default() -> Client {
        Client { timeout: DEFAULT_TIMEOUT }
    }
}

impl Client {
    /// A client whose whole-call timeout is `timeout` instead of 45 s (tests and benchmarks).
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Client {
        self.timeout = timeout;
        self
    }

    /// One call. Never fails: every problem is an `ok:false` result made by
    /// [`connection_unavailable`].
    ///
    /// Steps, on every call (`spec/protocol.md` §7.1): read the session file's token; read
    /// `<grandparent of session_file>/endpoint.json` (a relative `session_file` is made absolute
    /// against the current directory first); check its `url` with
    /// [`discovery::validate_endpoint`] before the token is used; send one `POST /call` to
    /// `127.0.0.1:<port>`; refuse any 3xx; read at most [`MAX_RESPONSE_BYTES`]; return the body
    /// as a [`ToolResult`] whatever the HTTP status. The timeout covers connect to end of body.
    /// Nothing is retried.
    ///
    /// Must run inside a tokio runtime with I/O and time enabled.
    pub async fn call(&self, session_file: &Path, request: &ToolRequest) -> ToolResult {
        let (token, port) = match discovery::discover(session_file) {
            Ok(found) => found,
            Err(error) => return connection_unavailable(&error.to_string()),
        };
        let body = request.to_body();
        let exchange = exchange(port, &token, body);
        let outcome = match tokio::time::timeout(self.timeout, exchange).await {
            Ok(outcome) => outcome,
            Err(_elapsed) => Err(format!("no response within {}", Seconds(self.timeout))),
        };
        match outcome {
            Ok(result) => result,
            Err(reason) => connection_unavailable(&redact(&reason, &token)),
        }
    }

    /// [`Client::call`] from synchronous code, on a current-thread runtime of its own.
    ///
    /// Must not be called from inside a tokio runtime.
    pub fn call_blocking(&self, session_file: &Path, request: &ToolRequest) -> ToolResult {
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build();
        match runtime {
            Ok(runtime) => runtime.block_on(self.call(session_file, request)),
            Err(error) => connection_unavailable(&format!("cannot start the I/O runtime: {error}")),
        }
    }
}

/// One call with the default client. See [`Client::call`].
pub async fn call(session_file: &Path, request: &ToolRequest) -> ToolResult {
    Client::default().call(session_file, request).await
}

/// One call from synchronous code, on a current-thread runtime of its own, with the default
/// client. See [`Client::call_blocking`].
pub fn call_blocking(session_file: &Path, request: &ToolRequest) -> ToolResult {
    Client::default().call_blocking(session_file, request)
}

/// How the failure of [`connection_unavailable`] starts: a caller tells "the server could not be
/// reached" from "the server answered with an error" by it.
pub const UNAVAILABLE_PREFIX: &str = "Tool connection unavailable: ";

/// The failure result of the client contract for `reason`:
/// `Tool connection unavailable: <reason>. Check that termsprawl is running. Mutations are not
/// automatically retried.`
///
/// The reason is made to fit the contract: control characters (line breaks included) become
/// spaces, and trailing periods and whitespace are dropped.
pub fn connection_unavailable(reason: &str) -> ToolResult {
    let one_line: String =
        reason.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>();
    let reason = one_line.trim_end_matches(|c: char| c == '.' || c.is_whitespace());
    ToolResult::failure(format!(
        "{UNAVAILABLE_PREFIX}{reason}. Check that termsprawl is running. Mutations are not automatically retried."
    ))
}

/// No reason is built from header values, so the token cannot be in one; this is the second
/// line of defence. Very short "tokens" are left alone: redacting them would garble the reason
/// and they guard nothing.
fn redact(reason: &str, token: &SessionToken) -> String {
    let secret = token.expose();
    if secret.len() < 8 {
        return reason.to_owned();
    }
    reason.replace(secret, "<redacted>")
}

/// The read buffer of a call's connection.
const READ_BUFFER_BYTES: usize = 4096;

/// Connect, send, read: everything the timeout covers. `Err` is the reason of a failure.
async fn exchange(port: u16, token: &SessionToken, body: String) -> Result<ToolResult, String> {
    let address = SocketAddrV4::new(Ipv4Addr::LOCALHOST, port);
    let stream = TcpStream::connect(address)
        .await
        .map_err(|error| format!("cannot connect to {address}: {error}"))?;
    // One small request written at once: Nagle's algorithm would only add latency.
    let _ = stream.set_nodelay(true);
    // A fixed read buffer of READ_BUFFER_BYTES instead of hyper's adaptive one (8 KiB at first):
    // a result is one small JSON body, and each call in flight holds one buffer (issue 26: the
    // MCP bridge with 32 calls in flight).
    let (mut sender, connection) = hyper::client::conn::http1::Builder::new()
        .read_buf_exact_size(Some(READ_BUFFER_BYTES))
        .handshake::<_, Full<Bytes>>(TokioIo::new(stream))
        .await
        .map_err(|error| format!("HTTP handshake with {address} failed: {}", Chain(&error)))?;
    // Dropping the guard (end of call, or timeout) closes the connection.
    let _connection = AbortOnDrop(tokio::spawn(connection));

    let request = build_request(port, token, body)?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|error| format!("request to {address} failed: {}", Chain(&error)))?;
    let status = response.status();
    if status.is_redirection() {
        return Err(format!("unexpected redirect (HTTP {})", status.as_u16()));
    }
    let bytes = read_body(response.into_body(), address).await?;
    interpret(status, &bytes)
}

fn build_request(
    port: u16,
    token: &SessionToken,
    body: String,
) -> Result<Request<Full<Bytes>>, String> {
    // `discovery::read_token` admits only visible ASCII, so this cannot fail; if it did, the
    // error would not name the token.
    let mut authorization = HeaderValue::try_from(format!("Bearer {}", token.expose()))
        .map_err(|_| "session file has no token".to_owned())?;
    authorization.set_sensitive(true);
    Request::builder()
        .method(Method::POST)
        .uri("/call")
        .header(HOST, format!("127.0.0.1:{port}"))
        .header(AUTHORIZATION, authorization)
        .header(CONTENT_TYPE, "application/json")
        .header(CONTENT_LENGTH, body.len())
        .body(Full::new(Bytes::from(body)))
        .map_err(|error| format!("cannot build the request: {error}"))
}

/// Reads the whole body, refusing more than [`MAX_RESPONSE_BYTES`] while it streams in.
async fn read_body(
    mut body: hyper::body::Incoming,
    address: SocketAddrV4,
) -> Result<Vec<u8>, String> {
    const TOO_LARGE: &str = "response body exceeds 64 MiB";
    let declared = hyper::body::Body::size_hint(&body).exact();
    if declared.is_some_and(|length| length > MAX_RESPONSE_BYTES as u64) {
        return Err(TOO_LARGE.to_owned());
    }
    let capacity = declared.map_or(0, |length| usize::try_from(length).unwrap_or(0));
    let mut bytes = Vec::with_capacity(capacity.min(1024 * 1024));
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|error| {
            format!("reading the response from {address} failed: {}", Chain(&error))
        })?;
        let Ok(data) = frame.into_data() else { continue };
        if data.len() > MAX_RESPONSE_BYTES - bytes.len() {
            return Err(TOO_LARGE.to_owned());
        }
        bytes.extend_from_slice(&data);
    }
    Ok(bytes)
}

/// The body as a tool result, whatever the status (`spec/protocol.md` §7.1 step 8).
fn interpret(status: StatusCode, body: &[u8]) -> Result<ToolResult, String> {
    let status = status.as_u16();
    let value: Value = serde_json::from_slice(body)
        .map_err(|_| format!("response is not JSON (HTTP {status})"))?;
    ToolResult::from_value(value)
        .ok_or_else(|| format!("response is not a tool result (HTTP {status})"))
}

/// Aborts a spawned task when dropped.
struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// An error and its sources on one line: `error: source: source`.
struct Chain<'a>(&'a (dyn std::error::Error + 'static));

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(error) = source {
            write!(f, ": {error}")?;
            source = error.source();
        }
        Ok(())
    }
}

/// A timeout as people write it: `45 s`, or `250 ms` below a second or when not whole.
struct Seconds(Duration);

impl fmt::Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.subsec_nanos() == 0 {
            write!(f, "{} s", self.0.as_secs())
        } else {
            write!(f, "{} ms", self.0.as_millis())
        }
    }
}

#[cfg(test)]
mod tests;
