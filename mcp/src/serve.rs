//! The async plumbing around the pure core: one loop that reads lines, answers at once what can be
//! answered at once, runs `initialize` and `tools/call` as concurrent tasks, and is the only writer
//! of the output (`spec/mcp.md` §3.6, §3.7).
//!
//! The loop waits on two things with `select!`: the next input frame and the next finished task.
//! All bookkeeping (which task answers which id, cancellations, the handshake state) lives in the
//! loop itself, so there is no lock. Each answer is written as one line plus LF and flushed before
//! the next one, so lines never interleave.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Write as _};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use termsprawl_protocol::{ToolRequest, ToolResult};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::Semaphore;
use tokio::task::{AbortHandle, Id, JoinError, JoinSet};

use crate::caller::ToolCaller;
use crate::dispatch::{Action, State, classify};
use crate::framing::{Frame, LineReader, MAX_LINE_BYTES};
use crate::jsonrpc::{RequestId, Response};
use crate::tools::call_response_line;

/// Where log lines go, without the `termsprawlctl mcp: ` prefix.
pub type LogSink = Arc<dyn Fn(&str) + Send + Sync>;

/// Settings of [`serve_with`]; [`Options::default`] is what `termsprawlctl mcp` uses.
#[derive(Clone)]
pub struct Options {
    log: LogSink,
    eof_grace: Duration,
    max_calls_in_flight: usize,
}

impl Default for Options {
    /// Logs to stderr, allows 2 s after end of input, runs at most 64 tool-server calls at once.
    fn default() -> Options {
        Options {
            log: Arc::new(log_to_stderr),
            eof_grace: Duration::from_secs(2),
            max_calls_in_flight: 64,
        }
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("eof_grace", &self.eof_grace)
            .field("max_calls_in_flight", &self.max_calls_in_flight)
            .finish_non_exhaustive()
    }
}

impl Options {
    /// Sends log lines (without the `termsprawlctl mcp: ` prefix) to `log` instead of stderr.
    #[must_use]
    pub fn log_with(mut self, log: impl Fn(&str) + Send + Sync + 'static) -> Options {
        self.log = Arc::new(log);
        self
    }

    /// How long in-flight answers may still be written after end of input (default 2 s).
    #[must_use]
    pub fn eof_grace(mut self, grace: Duration) -> Options {
        self.eof_grace = grace;
        self
    }

    /// How many tool-server calls may run at once (default 64, at least 1). Further calls wait
    /// for a slot; reading, `ping` and cancellation carry on meanwhile.
    #[must_use]
    pub fn max_calls_in_flight(mut self, limit: usize) -> Options {
        self.max_calls_in_flight = limit.max(1);
        self
    }
}

/// Serves MCP on `input` and `output` until end of input, with [`Options::default`].
///
/// Returns `Ok` at end of input (or after a read error, which is logged), once the in-flight
/// answers are written or the grace period is over; returns the error when writing fails, at once.
/// Must run inside a tokio runtime with the time driver enabled.
pub async fn serve<R, W>(input: R, output: W, caller: Arc<dyn ToolCaller>) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    serve_with(input, output, caller, Options::default()).await
}

/// [`serve`] with explicit [`Options`].
pub async fn serve_with<R, W>(
    input: R,
    mut output: W,
    caller: Arc<dyn ToolCaller>,
    options: Options,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = LineReader::new(input);
    let mut bridge = Bridge {
        state: State::default(),
        tasks: JoinSet::new(),
        pending: HashMap::new(),
        serial: 0,
        slots: Arc::new(Semaphore::new(options.max_calls_in_flight)),
        caller,
        log: options.log,
    };
    loop {
        tokio::select! {
            frame = reader.next_frame() => match frame {
                Ok(Some(Frame::Line(line))) => {
                    if let Some(answer) = bridge.on_line(&line) {
                        write_line(&mut output, answer).await?;
                    }
                }
                Ok(Some(Frame::Oversized(length))) => bridge.log(&format!(
                    "ignored a line of {length} bytes, over the {MAX_LINE_BYTES}-byte limit"
                )),
                Ok(None) => break,
                Err(error) => {
                    bridge.log(&format!("stopped reading input: {error}"));
                    break;
                }
            },
            Some(joined) = bridge.tasks.join_next_with_id() => {
                if let Some(answer) = bridge.on_task_done(joined) {
                    write_line(&mut output, answer).await?;
                }
            }
        }
    }
    let drain = async {
        while let Some(joined) = bridge.tasks.join_next_with_id().await {
            if let Some(answer) = bridge.on_task_done(joined) {
                write_line(&mut output, answer).await?;
            }
        }
        io::Result::Ok(())
    };
    if let Ok(drained) = tokio::time::timeout(options.eof_grace, drain).await {
        return drained;
    }
    bridge.log(&format!(
        "end of input: {} answers still in flight after {:?}, not written",
        bridge.pending.len(),
        options.eof_grace
    ));
    Ok(())
}

/// What one spawned task produces.
enum Done {
    /// The `session_info` result of an `initialize`.
    SessionInfo(ToolResult),
    /// The finished answer line of a `tools/call`.
    Answer(String),
}

/// A running task and the request it answers.
struct Pending {
    id: RequestId,
    /// Increases with every request, so that the most recent of equal ids can be found.
    serial: u64,
    kind: PendingKind,
}

enum PendingKind {
    Initialize { protocol_version: &'static str },
    Call { abort: AbortHandle },
}

struct Bridge {
    state: State,
    tasks: JoinSet<Done>,
    pending: HashMap<Id, Pending>,
    serial: u64,
    slots: Arc<Semaphore>,
    caller: Arc<dyn ToolCaller>,
    log: LogSink,
}

impl Bridge {
    /// Handles one input line; the answer to write at once, if any.
    fn on_line(&mut self, line: &[u8]) -> Option<String> {
        match classify(line, &self.state) {
            Action::Ignore => None,
            Action::Log(message) => {
                self.log(&message);
                None
            }
            Action::Respond(response) => Some(response.to_line()),
            Action::Initialize { id, protocol_version } => {
                let caller = Arc::clone(&self.caller);
                let abort = self.tasks.spawn(async move {
                    let request = ToolRequest::new("session_info", &json!({}));
                    Done::SessionInfo(caller.call(request).await)
                });
                self.track(abort.id(), id, PendingKind::Initialize { protocol_version });
                None
            }
            Action::Call { id, request } => {
                let caller = Arc::clone(&self.caller);
                let slots = Arc::clone(&self.slots);
                let answer_id = id.clone();
                let abort = self.tasks.spawn(async move {
                    // The semaphore is never closed; the permit is held for the whole call.
                    let _slot = slots.acquire().await;
                    Done::Answer(call_response_line(answer_id, caller.call(request).await))
                });
                self.track(abort.id(), id, PendingKind::Call { abort });
                None
            }
            Action::Cancel { request_id } => {
                self.cancel(&request_id);
                None
            }
        }
    }

    fn track(&mut self, task: Id, id: RequestId, kind: PendingKind) {
        self.serial += 1;
        self.pending.insert(task, Pending { id, serial: self.serial, kind });
    }

    /// Forgets the most recent in-flight `tools/call` with `id` and aborts its task, so that its
    /// answer is never written. Unknown, finished and `initialize` ids are ignored.
    fn cancel(&mut self, id: &RequestId) {
        let newest = self
            .pending
            .iter()
            .filter(|(_, pending)| {
                pending.id == *id && matches!(pending.kind, PendingKind::Call { .. })
            })
            .max_by_key(|(_, pending)| pending.serial)
            .map(|(task, _)| *task);
        if let Some(Pending { kind: PendingKind::Call { abort }, .. }) =
            newest.and_then(|task| self.pending.remove(&task))
        {
            abort.abort();
        }
    }

    /// Handles a finished task; the answer to write, if it is still wanted.
    fn on_task_done(&mut self, joined: Result<(Id, Done), JoinError>) -> Option<String> {
        match joined {
            Ok((task, done)) => {
                // Absent when the call was cancelled after it finished but before it was reaped.
                let pending = self.pending.remove(&task)?;
                match (done, pending.kind) {
                    (Done::Answer(answer), _) => Some(answer),
                    (Done::SessionInfo(result), PendingKind::Initialize { protocol_version }) => {
                        let response =
                            self.state.complete_initialize(pending.id, protocol_version, &result);
                        Some(response.to_line())
                    }
                    (Done::SessionInfo(_), PendingKind::Call { .. }) => {
                        unreachable!("only initialize tasks produce session_info results")
                    }
                }
            }
            Err(error) => {
                // A cancelled task was removed from `pending` when it was aborted.
                let pending = self.pending.remove(&error.id())?;
                let what = if error.is_panic() { "panicked" } else { "was cancelled" };
                self.log(&format!("the task answering id {} {what}", pending.id));
                let detail = format!("the bridge's task for this request {what}");
                Some(Response::internal_error(pending.id, &detail).to_line())
            }
        }
    }

    fn log(&self, message: &str) {
        (self.log)(message);
    }
}

async fn write_line<W: AsyncWrite + Unpin>(output: &mut W, mut line: String) -> io::Result<()> {
    line.push('\n');
    output.write_all(line.as_bytes()).await?;
    output.flush().await
}

/// The default log sink: one line on stderr, prefixed `termsprawlctl mcp: `. A failing stderr is
/// ignored; logging must never end the bridge.
pub(crate) fn log_to_stderr(message: &str) {
    let _ = writeln!(io::stderr().lock(), "termsprawlctl mcp: {message}");
}
