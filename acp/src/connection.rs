//! The hand-written JSON-RPC 2.0 layer: LF-framed messages on the agent's stdio, ids correlated in
//! both directions (`spec/acp.md` §2.2).
//!
//! The reader only decodes and dispatches: responses resolve the pending request they answer;
//! requests and notifications go to a callback that must not block (it spawns tasks or queues).
//! Every outgoing message passes through one channel to one writer task, so lines never interleave.

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use crate::trace::{Direction, Trace};

/// The longest incoming line accepted; a longer one fails the connection.
pub(crate) const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// JSON-RPC and ACP error codes (`spec/acp.md` §1.12), as the `i64` an [`RpcError`] carries; the
/// numbers are `protocol`'s [`ErrorCode`](termsprawl_protocol::jsonrpc::ErrorCode).
pub(crate) mod code {
    use termsprawl_protocol::jsonrpc::ErrorCode;

    pub(crate) const PARSE_ERROR: i64 = ErrorCode::PARSE_ERROR.0;
    pub(crate) const INVALID_REQUEST: i64 = ErrorCode::INVALID_REQUEST.0;
    pub(crate) const METHOD_NOT_FOUND: i64 = ErrorCode::METHOD_NOT_FOUND.0;
    pub(crate) const INVALID_PARAMS: i64 = ErrorCode::INVALID_PARAMS.0;
    pub(crate) const INTERNAL_ERROR: i64 = ErrorCode::INTERNAL_ERROR.0;
    pub(crate) const REQUEST_CANCELLED: i64 = ErrorCode::REQUEST_CANCELLED.0;
    pub(crate) const AUTH_REQUIRED: i64 = ErrorCode::AUTH_REQUIRED.0;
    pub(crate) const RESOURCE_NOT_FOUND: i64 = ErrorCode::RESOURCE_NOT_FOUND.0;
}

/// A JSON-RPC error object. It shows as `message (code N)`, followed by `: data` when the error
/// has a `data` member: agents put the cause there (codex-acp `stream disconnected … /v1/responses`
/// under `Internal error`), so it is never hidden.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) struct RpcError {
    pub(crate) code: i64,
    pub(crate) message: String,
    pub(crate) data: Option<Value>,
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)?;
        match &self.data {
            None | Some(Value::Null) => Ok(()),
            Some(Value::String(data)) if data.trim().is_empty() => Ok(()),
            Some(Value::String(data)) => write!(f, ": {}", data.trim()),
            Some(data) => write!(f, ": {data}"),
        }
    }
}

impl RpcError {
    /// An error with a code and a message.
    pub(crate) fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError { code, message: message.into(), data: None }
    }

    /// `-32602` with a message.
    pub(crate) fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::new(code::INVALID_PARAMS, message)
    }

    /// `-32603` with a message.
    pub(crate) fn internal(message: impl Into<String>) -> RpcError {
        RpcError::new(code::INTERNAL_ERROR, message)
    }

    fn to_json(&self) -> Value {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(data) = &self.data {
            error["data"] = data.clone();
        }
        error
    }

    fn from_json(value: &Value) -> RpcError {
        RpcError {
            code: value.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: value.get("message").and_then(Value::as_str).unwrap_or("").to_owned(),
            data: value.get("data").cloned(),
        }
    }
}

/// A request or notification from the agent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Inbound {
    /// A request; `id` keeps its JSON type for the answer.
    Request { id: Value, method: String, params: Option<Value> },
    /// A notification.
    Notification { method: String, params: Option<Value> },
    /// A line that was skipped, with the reason (already answered if it carried an id).
    Malformed(String),
}

/// Why the reader stopped.
#[derive(Debug)]
pub(crate) enum ReadEnd {
    /// The agent closed its stdout.
    Eof,
    /// A line longer than [`MAX_LINE_BYTES`].
    TooLong,
    /// Reading failed.
    Io(io::Error),
}

type Pending = HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>;

/// Our side of the connection; cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Connection {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    out: Mutex<Option<mpsc::UnboundedSender<String>>>,
    pending: Mutex<Option<Pending>>,
    next_id: AtomicU64,
    trace: Option<Arc<Trace>>,
    /// The first line the agent wrote that no ACP agent writes (not JSON-RPC, or a request for a
    /// method agents serve, as `cat` echoes ours), cut to [`STRAY_CHARS`] characters.
    stray: Mutex<Option<String>>,
}

/// How much of a stray line is kept for a report.
const STRAY_CHARS: usize = 120;

impl Connection {
    /// A connection whose outgoing lines arrive on the returned receiver (see [`write_loop`]).
    pub(crate) fn new(trace: Option<Arc<Trace>>) -> (Connection, mpsc::UnboundedReceiver<String>) {
        let (out, lines) = mpsc::unbounded_channel();
        let inner = Inner {
            out: Mutex::new(Some(out)),
            pending: Mutex::new(Some(HashMap::new())),
            next_id: AtomicU64::new(0),
            trace,
            stray: Mutex::new(None),
        };
        (Connection { inner: Arc::new(inner) }, lines)
    }

    /// Sends a request and returns a future of its answer. The request is on its way when this
    /// returns; the future owns nothing borrowed.
    pub(crate) fn request(
        &self,
        method: &str,
        params: &Value,
    ) -> impl Future<Output = Result<Value, RpcError>> + Send + 'static {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (answer, receiver) = oneshot::channel();
        let registered = match self.inner.pending.lock() {
            Ok(mut pending) => match pending.as_mut() {
                Some(pending) => {
                    pending.insert(id, answer);
                    true
                }
                None => false,
            },
            Err(_) => false,
        };
        let sent = registered
            && self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        async move {
            if !sent {
                return Err(closed_error());
            }
            receiver.await.unwrap_or_else(|_| Err(closed_error()))
        }
    }

    /// Sends a notification.
    pub(crate) fn notify(&self, method: &str, params: &Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Answers a request of the agent, with its id as it came.
    pub(crate) fn respond(&self, id: &Value, result: Result<Value, RpcError>) {
        let message = match result {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error.to_json()}),
        };
        self.send(&message);
    }

    /// Closes our output: the writer finishes what is queued, then closes the agent's stdin.
    pub(crate) fn close_output(&self) {
        if let Ok(mut out) = self.inner.out.lock() {
            out.take();
        }
    }

    /// Whether the connection is closed: the agent's output ended, and every request fails.
    pub(crate) fn is_closed(&self) -> bool {
        self.inner.pending.lock().map_or(true, |pending| pending.is_none())
    }

    /// The first line the agent wrote that no ACP agent writes, quoted and cut, if any: a program
    /// that is not an ACP agent (`sh -c 'echo hi; …'`, `cat`) shows itself so.
    pub(crate) fn stray(&self) -> Option<String> {
        self.inner.stray.lock().ok()?.clone()
    }

    fn note_stray(&self, line: &str) {
        if let Ok(mut stray) = self.inner.stray.lock()
            && stray.is_none()
        {
            let cut = match line.char_indices().nth(STRAY_CHARS) {
                Some((at, _)) => format!("{}…", &line[..at]),
                None => line.to_owned(),
            };
            *stray = Some(format!("{cut:?}"));
        }
    }

    /// Fails every pending request and every later one: the agent is gone.
    pub(crate) fn fail_pending(&self) {
        let pending = match self.inner.pending.lock() {
            Ok(mut pending) => pending.take(),
            Err(_) => None,
        };
        for (_, answer) in pending.into_iter().flatten() {
            let _ = answer.send(Err(closed_error()));
        }
    }

    fn send(&self, message: &Value) -> bool {
        // serde_json escapes control characters in strings, so the text never holds a newline.
        let line = message.to_string();
        let Ok(out) = self.inner.out.lock() else {
            return false;
        };
        let Some(out) = out.as_ref() else {
            return false;
        };
        if let Some(trace) = &self.inner.trace {
            trace.record(Direction::Out, &line);
        }
        out.send(line).is_ok()
    }

    fn resolve(&self, id: &Value, result: Result<Value, RpcError>) -> bool {
        let Some(id) = id.as_u64() else {
            return false;
        };
        let answer = match self.inner.pending.lock() {
            Ok(mut pending) => pending.as_mut().and_then(|pending| pending.remove(&id)),
            Err(_) => None,
        };
        match answer {
            Some(answer) => {
                let _ = answer.send(result);
                true
            }
            None => false,
        }
    }

    fn trace_in(&self, line: &str) {
        if let Some(trace) = &self.inner.trace {
            trace.record(Direction::In, line);
        }
    }
}

fn closed_error() -> RpcError {
    RpcError::internal("the connection to the agent is closed")
}

/// Writes queued lines to the agent's stdin until the connection's output closes; then the writer
/// is dropped, which closes the agent's stdin.
pub(crate) async fn write_loop<W: AsyncWrite + Unpin>(
    mut lines: mpsc::UnboundedReceiver<String>,
    mut writer: W,
) {
    while let Some(mut line) = lines.recv().await {
        line.push('\n');
        if writer.write_all(line.as_bytes()).await.is_err() || writer.flush().await.is_err() {
            break;
        }
    }
    let _ = writer.shutdown().await;
}

/// Reads the agent's stdout until it ends: resolves responses, hands requests and notifications
/// to `dispatch` in order, and answers lines that are not JSON-RPC.
pub(crate) async fn read_loop<R: AsyncBufRead + Unpin>(
    mut reader: R,
    connection: &Connection,
    dispatch: &mut (dyn FnMut(Inbound) + Send),
) -> ReadEnd {
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        match read_line(&mut reader, &mut buffer).await {
            Ok(Line::Eof) => return ReadEnd::Eof,
            Ok(Line::TooLong) => return ReadEnd::TooLong,
            Ok(Line::Complete) => {}
            Err(error) => return ReadEnd::Io(error),
        }
        let mut line = buffer.as_slice();
        if let [rest @ .., b'\r'] = line {
            line = rest;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let text = String::from_utf8_lossy(line);
        connection.trace_in(&text);
        match classify(&text) {
            Classified::Response { id, result } => {
                if !connection.resolve(&id, result) {
                    dispatch(Inbound::Malformed(format!(
                        "a response to an unknown request id {id}"
                    )));
                }
            }
            Classified::Inbound(inbound) => {
                if let Inbound::Request { method, .. } = &inbound
                    && served_by_agents(method)
                {
                    connection.note_stray(&text);
                }
                dispatch(inbound);
            }
            Classified::Invalid { id, code, reason } => {
                connection.note_stray(&text);
                connection.respond(&id, Err(RpcError::new(code, reason.clone())));
                dispatch(Inbound::Malformed(reason));
            }
        }
    }
}

/// Whether agents serve `method` (a client never does): a program that sends it back to us echoes
/// what it reads.
fn served_by_agents(method: &str) -> bool {
    matches!(method, "initialize" | "authenticate")
        || (method.starts_with("session/") && method != "session/request_permission")
}

enum Line {
    Complete,
    Eof,
    TooLong,
}

/// Reads up to and excluding the next LF, at most [`MAX_LINE_BYTES`] bytes. A last line without LF
/// still counts as a line.
async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buffer: &mut Vec<u8>,
) -> io::Result<Line> {
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if buffer.is_empty() { Line::Eof } else { Line::Complete });
        }
        let (taken, done) = match available.iter().position(|&byte| byte == b'\n') {
            Some(at) => (at, true),
            None => (available.len(), false),
        };
        if buffer.len() + taken > MAX_LINE_BYTES {
            return Ok(Line::TooLong);
        }
        buffer.extend_from_slice(&available[..taken]);
        reader.consume(if done { taken + 1 } else { taken });
        if done {
            return Ok(Line::Complete);
        }
    }
}

enum Classified {
    Response { id: Value, result: Result<Value, RpcError> },
    Inbound(Inbound),
    Invalid { id: Value, code: i64, reason: String },
}

fn classify(text: &str) -> Classified {
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return Classified::Invalid {
            id: Value::Null,
            code: code::PARSE_ERROR,
            reason: "a line from the agent is not JSON".to_owned(),
        };
    };
    let Value::Object(mut message) = value else {
        return Classified::Invalid {
            id: Value::Null,
            code: code::INVALID_REQUEST,
            reason: "a message from the agent is not a JSON object".to_owned(),
        };
    };
    let id = message.remove("id");
    let params = message.remove("params");
    match (message.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) => {
            Classified::Inbound(Inbound::Request { id, method, params })
        }
        (Some(Value::String(method)), None) => {
            Classified::Inbound(Inbound::Notification { method, params })
        }
        (Some(_), id) => Classified::Invalid {
            id: id.unwrap_or(Value::Null),
            code: code::INVALID_REQUEST,
            reason: "a message from the agent has a method that is not a string".to_owned(),
        },
        (None, Some(id)) => {
            if let Some(error) = message.get("error") {
                Classified::Response { id, result: Err(RpcError::from_json(error)) }
            } else {
                Classified::Response {
                    id,
                    result: Ok(message.remove("result").unwrap_or(Value::Null)),
                }
            }
        }
        (None, None) => Classified::Invalid {
            id: Value::Null,
            code: code::INVALID_REQUEST,
            reason: "a message from the agent has neither a method nor an id".to_owned(),
        },
    }
}
