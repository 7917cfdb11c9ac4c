//! The async plumbing around the pure core: one loop that reads lines, answers at once what can be
//! answered at once, runs `initialize`, `server/discover`, modern `tools/list` and `tools/call` as
//! concurrent tasks, and is the only writer of the output (`spec/mcp.md` §3.6, §3.7).
//!
//! The loop waits on two things with `select!`: the next input frame and the next finished task.
//! All bookkeeping (which task answers which id, cancellations, the handshake state, the legacy
//! `tools/list` requests held until the `initialize` before them has its `session_info` answer)
//! lives in the loop itself, so there is no lock. Each answer is written as one line plus LF and
//! flushed before the next one, so lines never interleave.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Write as _};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use termsprawl_protocol::{ToolRequest, ToolResult};
use termsprawl_transport::long_wait::{WaitOptions, WaitProgress};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::{AbortHandle, Id, JoinError, JoinSet};

use crate::caller::ToolCaller;
use crate::dispatch::{Action, State, classify, listed_by};
use crate::framing::{Frame, LineReader, MAX_LINE_BYTES};
use crate::jsonrpc::{ErrorCode, RequestId, Response};
use crate::progress::Notifier;
use crate::tools::{ToolFilter, call_response_line, modern_call_response_line};

/// The bridge's longest wait when `--max-wait-ms` is not given: a `terminal_wait` or
/// `terminal_run` answers within 50 s, inside the 60 s that Codex, Claude Desktop and hosts on
/// the MCP TypeScript SDK allow a tool call by default (`docs/hosts.md`).
pub const DEFAULT_MAX_WAIT_MS: u64 = 50_000;

/// Where log lines go, without the `termsprawlctl mcp: ` prefix.
pub type LogSink = Arc<dyn Fn(&str) + Send + Sync>;

/// Settings of [`serve_with`]; [`Options::default`] is what `termsprawlctl mcp` uses.
#[derive(Clone)]
pub struct Options {
    log: LogSink,
    eof_grace: Duration,
    max_calls_in_flight: usize,
    tools: ToolFilter,
    wait: WaitOptions,
}

impl Default for Options {
    /// Logs to stderr, allows 2 s after end of input, runs at most 64 tool-server calls at once,
    /// serves every operation, waits at most [`DEFAULT_MAX_WAIT_MS`].
    fn default() -> Options {
        Options {
            log: Arc::new(log_to_stderr),
            eof_grace: Duration::from_secs(2),
            max_calls_in_flight: 64,
            tools: ToolFilter::all(),
            wait: WaitOptions::new(DEFAULT_MAX_WAIT_MS),
        }
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("eof_grace", &self.eof_grace)
            .field("max_calls_in_flight", &self.max_calls_in_flight)
            .field("tools", &self.tools)
            .field("wait", &self.wait)
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

    /// Lists and serves only what `filter` keeps (`termsprawlctl mcp --read-only`, `--tools`).
    #[must_use]
    pub fn tools(mut self, filter: ToolFilter) -> Options {
        self.tools = filter;
        self
    }

    /// How `terminal_wait` and `terminal_run` calls wait: their longest wait
    /// (`termsprawlctl mcp --max-wait-ms`, default [`DEFAULT_MAX_WAIT_MS`]) and turns.
    #[must_use]
    pub fn wait(mut self, wait: WaitOptions) -> Options {
        self.wait = wait;
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
    let removed = options.tools.removed_by_read_only();
    if !removed.is_empty() {
        (options.log)(&format!(
            "--read-only removes {} from --tools: not listed or served",
            name_list(&removed)
        ));
    }
    let mut bridge = Bridge {
        state: State::new(options.tools),
        gone_logged: false,
        unlisted_noticed: false,
        tasks: JoinSet::new(),
        pending: HashMap::new(),
        held_lists: Vec::new(),
        serial: 0,
        slots: Arc::new(Semaphore::new(options.max_calls_in_flight)),
        caller,
        log: options.log,
        wait: options.wait,
        notices: mpsc::unbounded_channel(),
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
                for answer in bridge.on_task_done(joined) {
                    write_line(&mut output, answer).await?;
                }
            }
            Some((task, notice)) = bridge.notices.1.recv() => {
                if bridge.pending.contains_key(&task) {
                    write_line(&mut output, notice).await?;
                }
            }
        }
    }
    let drain = async {
        while let Some(joined) = bridge.tasks.join_next_with_id().await {
            for answer in bridge.on_task_done(joined) {
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
        bridge.pending.len() + bridge.held_lists.len(),
        options.eof_grace
    ));
    Ok(())
}

/// What one spawned task produces; with a failure, the caller's guidance
/// ([`ToolCaller::diagnose`]).
enum Done {
    /// The `session_info` result of an `initialize`, `server/discover` or modern `tools/list`.
    SessionInfo(ToolResult, Option<String>),
    /// The finished answer line of a `tools/call`.
    Answer(String, Option<String>),
}

/// A progress notification line and the task whose request it is about.
type Notice = (Id, String);

/// A running task and the request it answers.
struct Pending {
    id: RequestId,
    /// Increases with every request, so that the most recent of equal ids can be found.
    serial: u64,
    kind: PendingKind,
    /// How to stop the task when the request is cancelled; `None` for `initialize`, which is
    /// never cancelled.
    abort: Option<AbortHandle>,
}

enum PendingKind {
    Initialize { protocol_version: &'static str },
    Discover,
    ModernToolsList,
    Call,
}

/// A legacy `tools/list` that arrived while `initialize` requests were waiting for their
/// `session_info` answers; it is answered once all of those have finished.
struct HeldList {
    id: RequestId,
    serial: u64,
    awaiting: Vec<Id>,
}

struct Bridge {
    state: State,
    /// Whether the caller's guidance about a failure was logged (it is, once).
    gone_logged: bool,
    /// Whether the `--tools` names the server does not list were named (once, at the first
    /// `session_info` that lists operations).
    unlisted_noticed: bool,
    tasks: JoinSet<Done>,
    pending: HashMap<Id, Pending>,
    held_lists: Vec<HeldList>,
    serial: u64,
    slots: Arc<Semaphore>,
    caller: Arc<dyn ToolCaller>,
    log: LogSink,
    wait: WaitOptions,
    /// The progress notifications of calls, by task: written while the task's request is
    /// pending (never after its answer, never after its cancellation).
    notices: (mpsc::UnboundedSender<Notice>, mpsc::UnboundedReceiver<Notice>),
}

impl Bridge {
    /// Handles one input line; the answer to write at once, if any.
    fn on_line(&mut self, line: &[u8]) -> Option<String> {
        match classify(line, &mut self.state) {
            Action::Ignore => None,
            Action::Log(message) => {
                self.log(&message);
                None
            }
            Action::Respond(response) => Some(response.to_line()),
            Action::Initialize { id, protocol_version } => {
                let task = self.session_info_task();
                self.track(task.id(), id, PendingKind::Initialize { protocol_version }, None);
                None
            }
            Action::ToolsList { id } => {
                let awaiting: Vec<Id> = self
                    .pending
                    .iter()
                    .filter(|(_, pending)| matches!(pending.kind, PendingKind::Initialize { .. }))
                    .map(|(task, _)| *task)
                    .collect();
                if awaiting.is_empty() {
                    return Some(self.state.tools_list(id).to_line());
                }
                self.serial += 1;
                self.held_lists.push(HeldList { id, serial: self.serial, awaiting });
                None
            }
            Action::Discover { id } => {
                let task = self.session_info_task();
                self.track(task.id(), id, PendingKind::Discover, Some(task));
                None
            }
            Action::ModernToolsList { id } => {
                let task = self.session_info_task();
                self.track(task.id(), id, PendingKind::ModernToolsList, Some(task));
                None
            }
            Action::Call { id, request, modern, progress } => {
                let caller = Arc::clone(&self.caller);
                let slots = Arc::clone(&self.slots);
                let answer_id = id.clone();
                let wait = self.wait;
                let watch = progress.map(|target| (Notifier::new(target), self.notices.0.clone()));
                let task = self.tasks.spawn(async move {
                    // The semaphore is never closed; the permit is held for the whole call.
                    let _slot = slots.acquire().await;
                    let result = match watch {
                        None => caller.call_waiting(request, wait, None).await,
                        Some((mut notifier, notices)) => {
                            let task = tokio::task::id();
                            let mut notify = |progress: &WaitProgress| {
                                // The loop outlives every task; a send cannot fail before it ends.
                                let _ = notices.send((task, notifier.line(progress)));
                            };
                            caller.call_waiting(request, wait, Some(&mut notify)).await
                        }
                    };
                    let hint = if result.is_ok() { None } else { caller.diagnose() };
                    let line = if modern {
                        modern_call_response_line(answer_id, result)
                    } else {
                        call_response_line(answer_id, result)
                    };
                    Done::Answer(line, hint)
                });
                self.track(task.id(), id, PendingKind::Call, Some(task));
                None
            }
            Action::Cancel { request_id } => {
                self.cancel(&request_id);
                None
            }
        }
    }

    /// Spawns one `session_info` call with `{}`.
    fn session_info_task(&mut self) -> AbortHandle {
        let caller = Arc::clone(&self.caller);
        self.tasks.spawn(async move {
            let request = ToolRequest::new("session_info", &json!({}));
            let result = caller.call(request).await;
            let hint = if result.is_ok() { None } else { caller.diagnose() };
            Done::SessionInfo(result, hint)
        })
    }

    fn track(&mut self, task: Id, id: RequestId, kind: PendingKind, abort: Option<AbortHandle>) {
        self.serial += 1;
        self.pending.insert(task, Pending { id, serial: self.serial, kind, abort });
    }

    /// Forgets the most recent in-flight request with `id` (a task or a held `tools/list`) so
    /// that its answer is never written, and aborts its task. Unknown, finished and `initialize`
    /// ids are ignored.
    fn cancel(&mut self, id: &RequestId) {
        let task = self
            .pending
            .iter()
            .filter(|(_, pending)| pending.id == *id && pending.abort.is_some())
            .max_by_key(|(_, pending)| pending.serial)
            .map(|(task, pending)| (*task, pending.serial));
        let held = self
            .held_lists
            .iter()
            .enumerate()
            .filter(|(_, held)| held.id == *id)
            .max_by_key(|(_, held)| held.serial)
            .map(|(index, held)| (index, held.serial));
        match (task, held) {
            (Some((_, task_serial)), Some((index, held_serial))) if held_serial > task_serial => {
                self.held_lists.remove(index);
            }
            (Some((task, _)), _) => {
                if let Some(Pending { abort: Some(abort), .. }) = self.pending.remove(&task) {
                    abort.abort();
                }
            }
            (None, Some((index, _))) => {
                self.held_lists.remove(index);
            }
            (None, None) => {}
        }
    }

    /// Handles a finished task; the answers to write: its own, if it is still wanted, then those
    /// of the held `tools/list` requests that no longer wait for anything.
    fn on_task_done(&mut self, joined: Result<(Id, Done), JoinError>) -> Vec<String> {
        // Progress a task sent before it finished goes out before its answer.
        let mut answers: Vec<String> = Vec::new();
        while let Ok((task, notice)) = self.notices.1.try_recv() {
            if self.pending.contains_key(&task) {
                answers.push(notice);
            }
        }
        let (task, answer) = match joined {
            Ok((task, done)) => (task, self.answer(task, done)),
            Err(error) => {
                // A cancelled task was removed from `pending` when it was aborted.
                let answer = self.pending.remove(&error.id()).map(|pending| {
                    let what = if error.is_panic() { "panicked" } else { "was cancelled" };
                    self.log(&format!("the task answering id {} {what}", pending.id));
                    let detail = format!("the bridge's task for this request {what}");
                    Response::internal_error(pending.id, &detail).to_line()
                });
                (error.id(), answer)
            }
        };
        answers.extend(answer);
        if self.held_lists.iter().any(|held| held.awaiting.contains(&task)) {
            for held in &mut self.held_lists {
                held.awaiting.retain(|awaited| *awaited != task);
            }
            let (ready, waiting): (Vec<HeldList>, Vec<HeldList>) =
                std::mem::take(&mut self.held_lists)
                    .into_iter()
                    .partition(|held| held.awaiting.is_empty());
            self.held_lists = waiting;
            answers.extend(ready.into_iter().map(|held| self.state.tools_list(held.id).to_line()));
        }
        answers
    }

    /// The answer of a task that finished, if it is still wanted.
    fn answer(&mut self, task: Id, done: Done) -> Option<String> {
        // Absent when the request was cancelled after it finished but before it was reaped.
        let pending = self.pending.remove(&task)?;
        let (result, hint) = match done {
            Done::Answer(answer, hint) => {
                self.log_hint(hint.as_deref());
                return Some(answer);
            }
            Done::SessionInfo(result, hint) => (result, hint),
        };
        self.notice_unlisted(&result);
        let response = match pending.kind {
            PendingKind::Initialize { protocol_version } => {
                self.state.complete_initialize(pending.id, protocol_version, &result)
            }
            PendingKind::Discover => self.state.complete_discover(pending.id, &result),
            PendingKind::ModernToolsList => {
                self.state.complete_modern_tools_list(pending.id, &result)
            }
            PendingKind::Call => unreachable!("tools/call tasks produce answer lines"),
        };
        self.log_hint(hint.as_deref());
        // The contract's message stays the failure's text; the guidance goes beside it.
        let response = match hint {
            Some(hint) if response.is_error() => response.with_data(json!({"hint": hint})),
            _ => response,
        };
        Some(response.to_line())
    }

    /// Logs the caller's guidance about a failure, the first time there is one.
    fn log_hint(&mut self, hint: Option<&str>) {
        if let Some(hint) = hint
            && !self.gone_logged
        {
            self.gone_logged = true;
            self.log(hint);
        }
    }

    /// Names, once, the `--tools` names that the first `session_info` listing operations leaves
    /// out.
    fn notice_unlisted(&mut self, session_info: &ToolResult) {
        if self.unlisted_noticed {
            return;
        }
        let Some(listed) = listed_by(session_info) else { return };
        self.unlisted_noticed = true;
        let unlisted = self.state.filter().unlisted(&listed);
        if !unlisted.is_empty() {
            self.log(&format!(
                "--tools names {}, which the server does not list (session_info operations): not listed",
                name_list(&unlisted)
            ));
        }
    }

    fn log(&self, message: &str) {
        (self.log)(message);
    }
}

/// Names, each once, in the order given, separated by `, `.
fn name_list(names: &[&str]) -> String {
    let mut distinct: Vec<&str> = Vec::new();
    for name in names {
        if !distinct.contains(name) {
            distinct.push(name);
        }
    }
    distinct.join(", ")
}

/// Serves a bridge that cannot work, `termsprawlctl mcp` with a startup mistake (no session, an
/// unknown option, a session file that cannot serve): every request (any
/// line [`classify`] would answer, `initialize` and `server/discover` included) is answered with
/// the error `-32603` `message` and `data`, so that the host shows why instead of "connection
/// closed"; notifications and stray responses are not answered, and what is not a request is
/// logged as usual. Returns at end of input (or after a read error, which is logged); returns the
/// error when writing fails.
pub async fn serve_refusing<R, W>(
    input: R,
    mut output: W,
    message: &str,
    data: &serde_json::Value,
    log: LogSink,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = LineReader::new(input);
    let mut state = State::new(ToolFilter::all());
    loop {
        match reader.next_frame().await {
            Ok(Some(Frame::Line(line))) => {
                let action = classify(&line, &mut state);
                if let Action::Log(text) = &action {
                    log(text);
                }
                if let Some(id) = action.request_id() {
                    let error = Response::error_with_data(
                        id.clone(),
                        ErrorCode::INTERNAL_ERROR,
                        message,
                        data.clone(),
                    );
                    write_line(&mut output, error.to_line()).await?;
                }
            }
            Ok(Some(Frame::Oversized(length))) => {
                log(&format!(
                    "ignored a line of {length} bytes, over the {MAX_LINE_BYTES}-byte limit"
                ));
            }
            Ok(None) => return Ok(()),
            Err(error) => {
                log(&format!("stopped reading input: {error}"));
                return Ok(());
            }
        }
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
