//! Long waits in one call, on the client side of the hop (protocol 1.5.0, issue 38;
//! `spec/protocol.md` §7.3).
//!
//! A server runs a `terminal_wait` or `terminal_run` for at most [`MAX_WAIT_MS`]; our clients
//! (`termsprawlctl` and its MCP bridge) honour a `timeoutMs` up to [`MAX_CLIENT_WAIT_MS`] by
//! chaining turns: [`call_waiting`] sends the request once with a turn's timeout (a
//! `terminal_run` is never sent again), and while the answer has not reached its condition and
//! time is left, sends `terminal_wait` with the cursor of the previous answer, the same condition
//! and the time left (a turn at most [`MAX_WAIT_MS`]). The answers are joined with
//! [`TerminalWaitResult::follow`] into the answer one wait would have given. The next turn is
//! sent as the previous one answers: the server does nothing between turns.
//!
//! Nothing is missed or repeated between turns: a turn starts at the cursor the previous answer
//! ended at. For `until: "text"` a turn starts a little earlier, so that a text printed across
//! the boundary is still found (the longest text less one character; for patterns, the line the
//! previous answer ended in), and what the earlier start repeats is cut from its output by the
//! cursors. A failure of any turn (node closed, server gone, a refused request) is the answer,
//! as a single wait's failure would be. Dropping the future cancels the chain: no further turn
//! is sent, and the turn in flight is abandoned (its connection closed).

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use termsprawl_protocol::args::{TerminalRunArgs, TerminalWaitArgs, WaitUntil};
use termsprawl_protocol::results::{
    MAX_CLIENT_WAIT_MS, MAX_WAIT_MS, TerminalRunResult, TerminalWaitResult,
};
use termsprawl_protocol::{ToolRequest, ToolResult};
use tokio::time::Instant;

use crate::Client;

/// How often a watched chain reports progress at least, and the longest turn while someone
/// watches (so that each report has fresh output).
pub const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// The most characters of the last line a progress message shows.
const LAST_LINE_CHARS: usize = 60;

/// Where a chained wait stands, for a progress line.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitProgress {
    /// What is waited on: a run's title, else its command; a wait's node id.
    pub label: String,
    /// How long the chain has waited.
    pub waited: Duration,
    /// How long it waits at most (the caller's `timeoutMs`, clamped).
    pub total: Duration,
    /// The output cursor of the last answer; `None` before the first.
    pub cursor: Option<u64>,
    /// Lines printed since the wait's start (counted in the answers' output).
    pub lines: u64,
    /// Whether an answer's output was cut, so that `lines` counts fewer than were printed.
    pub lines_cut: bool,
    /// The last non-empty line of output seen, trimmed.
    pub last_line: Option<String>,
    /// How many turns have answered.
    pub turns: u32,
}

impl WaitProgress {
    /// A short line a person can read in a host:
    /// `make test: 1 234 lines, last: "test_parse ... ok" (42 s)`.
    pub fn message(&self) -> String {
        let mut line = self.label.clone();
        let plus = if self.lines_cut { "+" } else { "" };
        let unit = if self.lines == 1 && !self.lines_cut { "line" } else { "lines" };
        match &self.last_line {
            None if self.turns == 0 => line.push_str(": waiting"),
            None => line.push_str(": no output yet"),
            Some(last) => {
                let _ = write!(line, ": {}{plus} {unit}, last: \"{last}\"", grouped(self.lines));
            }
        }
        let _ = write!(line, " ({} s)", self.waited.as_secs());
        line
    }
}

/// How a chain waits: the longest wait ([`WaitOptions::new`]) and the length of its turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitOptions {
    max_wait_ms: u64,
    turn: Duration,
    progress_every: Duration,
}

impl WaitOptions {
    /// Waits of at most `max_wait_ms` (at most [`MAX_CLIENT_WAIT_MS`]: `termsprawlctl` uses that,
    /// the bridge its `--max-wait-ms`), in turns of [`MAX_WAIT_MS`], or of [`PROGRESS_EVERY`]
    /// while someone watches the progress.
    pub fn new(max_wait_ms: u64) -> WaitOptions {
        WaitOptions {
            max_wait_ms: max_wait_ms.min(MAX_CLIENT_WAIT_MS),
            turn: millis(MAX_WAIT_MS),
            progress_every: PROGRESS_EVERY,
        }
    }

    /// Shorter turns and progress intervals than the contract's (tests and benchmarks): a
    /// `timeoutMs` above `turn` is chained in turns of `turn`.
    #[must_use]
    pub fn with_turns(mut self, turn: Duration, progress_every: Duration) -> WaitOptions {
        self.turn = turn.min(millis(MAX_WAIT_MS));
        self.progress_every = progress_every;
        self
    }

    /// The longest wait.
    pub fn max_wait_ms(&self) -> u64 {
        self.max_wait_ms
    }
}

impl Default for WaitOptions {
    /// `termsprawlctl`'s: [`MAX_CLIENT_WAIT_MS`].
    fn default() -> WaitOptions {
        WaitOptions::new(MAX_CLIENT_WAIT_MS)
    }
}

/// Receives the progress of a chained wait: at every answered turn, and at least every
/// [`PROGRESS_EVERY`] in between.
pub type ProgressSink<'a> = &'a mut (dyn FnMut(&WaitProgress) + Send);

/// One call, chained into turns when it is a `terminal_wait` or `terminal_run` whose `timeoutMs`
/// exceeds [`MAX_WAIT_MS`] (see the module documentation); any other request is one
/// [`Client::call`].
///
/// A `timeoutMs` above the longest wait of `options` is clamped to it. With `progress`, turns
/// are at most [`PROGRESS_EVERY`] long and each reports. Never fails, like [`Client::call`].
/// Dropping the future sends nothing more.
pub async fn call_waiting(
    client: &Client,
    session_file: &Path,
    request: &ToolRequest,
    options: &WaitOptions,
    progress: Option<ProgressSink<'_>>,
) -> ToolResult {
    chained(client, session_file, request, options, progress).await
}

/// [`call_waiting`] from synchronous code, on a current-thread runtime of its own, with the
/// default client; the progress sink need not be `Send`.
///
/// Must not be called from inside a tokio runtime.
pub fn call_waiting_blocking(
    session_file: &Path,
    request: &ToolRequest,
    options: &WaitOptions,
    progress: Option<&mut dyn FnMut(&WaitProgress)>,
) -> ToolResult {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build();
    match runtime {
        Ok(runtime) => {
            runtime.block_on(chained(&Client::default(), session_file, request, options, progress))
        }
        Err(error) => {
            crate::connection_unavailable(&format!("cannot start the I/O runtime: {error}"))
        }
    }
}

async fn chained<P: FnMut(&WaitProgress) + ?Sized>(
    client: &Client,
    session_file: &Path,
    request: &ToolRequest,
    options: &WaitOptions,
    progress: Option<&mut P>,
) -> ToolResult {
    let turn_ms = u64::try_from(options.turn.as_millis()).unwrap_or(MAX_WAIT_MS);
    let plan = plan(request, options.max_wait_ms, turn_ms);
    let mut chain = Chain {
        client,
        session_file,
        options: *options,
        start: Instant::now(),
        total: Duration::ZERO,
        progress,
        report: WaitProgress {
            label: String::new(),
            waited: Duration::ZERO,
            total: Duration::ZERO,
            cursor: None,
            lines: 0,
            lines_cut: false,
            last_line: None,
            turns: 0,
        },
        last_report: Instant::now(),
    };
    match plan {
        Plan::Single(None) => client.call(session_file, request).await,
        Plan::Single(Some(rewritten)) => client.call(session_file, &rewritten).await,
        Plan::Wait(args, total) => {
            chain.begin(&args.node_id, total);
            let first = args.since.and_then(as_cursor);
            chain.waits(args, None, first).await
        }
        Plan::Run(args, total) => {
            // The node's title when the caller named it (`make test`), else its command.
            chain.begin(args.title.as_deref().unwrap_or(&args.command), total);
            chain.run(args).await
        }
    }
}

/// What [`call_waiting`] does with a request.
#[derive(Debug)]
enum Plan {
    /// One call: the request as it is, or with its `timeoutMs` lowered to the caller's limit.
    Single(Option<ToolRequest>),
    /// A chain of waits, for this long in all.
    Wait(TerminalWaitArgs, Duration),
    /// A run, then a chain of waits for its exit, for this long in all.
    Run(TerminalRunArgs, Duration),
}

/// Chooses the plan. Only a well-formed request whose `timeoutMs` is a whole number above the
/// turn is chained; anything else goes to the server as it is, which judges it.
fn plan(request: &ToolRequest, max_wait_ms: u64, turn_ms: u64) -> Plan {
    let timeout = |timeout_ms: Option<f64>| -> Option<u64> {
        let asked = timeout_ms.filter(|ms| ms.fract() == 0.0 && *ms > 0.0)?;
        // The float is whole and positive; `as` saturates above u64's range.
        #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "checked")]
        let asked = asked as u64;
        (asked > max_wait_ms.min(turn_ms)).then_some(asked.min(max_wait_ms))
    };
    match request.operation() {
        Some("terminal_wait") => match request.parse_args::<TerminalWaitArgs>() {
            Ok(mut args) => match timeout(args.timeout_ms) {
                Some(total) if total > turn_ms => Plan::Wait(args, millis(total)),
                Some(total) => {
                    args.timeout_ms = Some(as_f64(total));
                    Plan::Single(Some(rebuild(request, &args)))
                }
                None => Plan::Single(None),
            },
            Err(_) => Plan::Single(None),
        },
        Some("terminal_run") => match request.parse_args::<TerminalRunArgs>() {
            Ok(mut args) => match timeout(args.timeout_ms) {
                Some(total) if total > turn_ms => Plan::Run(args, millis(total)),
                Some(total) => {
                    args.timeout_ms = Some(as_f64(total));
                    Plan::Single(Some(rebuild(request, &args)))
                }
                None => Plan::Single(None),
            },
            Err(_) => Plan::Single(None),
        },
        _ => Plan::Single(None),
    }
}

/// One chain in progress.
struct Chain<'a, 'p, P: ?Sized> {
    client: &'a Client,
    session_file: &'a Path,
    options: WaitOptions,
    start: Instant,
    total: Duration,
    progress: Option<&'p mut P>,
    report: WaitProgress,
    last_report: Instant,
}

impl<P: FnMut(&WaitProgress) + ?Sized> Chain<'_, '_, P> {
    fn begin(&mut self, label: &str, total: Duration) {
        self.start = Instant::now();
        self.last_report = self.start;
        self.total = total;
        self.report.label = clip_chars(label.trim(), LAST_LINE_CHARS);
        self.report.total = total;
    }

    /// The time left, and the next turn's timeout.
    fn turn_timeout(&self) -> (Duration, u64) {
        let left = self.total.saturating_sub(self.start.elapsed());
        let longest = match self.progress {
            Some(_) => self.options.turn.min(self.options.progress_every),
            None => self.options.turn,
        };
        let turn = left.min(longest);
        (left, u64::try_from(turn.as_millis()).unwrap_or(MAX_WAIT_MS))
    }

    /// `terminal_run` once; while it runs and time is left, waits for its exit. A run that
    /// answers finished, or fails, is answered as it came.
    async fn run(&mut self, mut args: TerminalRunArgs) -> ToolResult {
        let (_, turn) = self.turn_timeout();
        args.timeout_ms = Some(as_f64(turn));
        let request = ToolRequest::new("terminal_run", &to_value(&args));
        let result = self.turn(&request).await;
        let Some(run) = success::<TerminalRunResult>(&result) else { return result };
        self.account(&run.output, run.truncated, run.cursor);
        if !run.running || self.turn_timeout().0.is_zero() {
            return result;
        }
        let waits = TerminalWaitArgs {
            node_id: run.node_id.clone(),
            until: WaitUntil::Exit,
            text: None,
            any_of: None,
            regex: None,
            since: Some(as_f64(run.cursor)),
            quiet_ms: None,
            timeout_ms: None,
        };
        let start = TerminalWaitResult {
            node_id: run.node_id.clone(),
            reached: !run.running,
            running: run.running,
            exit_code: run.exit_code,
            signal: run.signal,
            output: run.output,
            truncated: run.truncated,
            cursor: run.cursor,
            matched: None,
            match_cursor: None,
            input_by: None,
        };
        let joined = self.waits(waits, Some(start), None).await;
        let Some(wait) = success::<TerminalWaitResult>(&joined) else { return joined };
        ToolResult::ok(to_value(&TerminalRunResult {
            node_id: run.node_id,
            ..TerminalRunResult::from(wait)
        }))
    }

    /// Waits in turns until the condition is reached or the time is used up; `joined` is what
    /// answered before (a run), `first_since` the cursor the whole wait starts at.
    async fn waits(
        &mut self,
        mut args: TerminalWaitArgs,
        mut joined: Option<TerminalWaitResult>,
        first_since: Option<u64>,
    ) -> ToolResult {
        let overlap_text = match (&args.until, args.regex) {
            (WaitUntil::Text, Some(true)) => Overlap::Line,
            (WaitUntil::Text, _) => Overlap::Chars(longest_text(&args).saturating_sub(1)),
            _ => Overlap::Chars(0),
        };
        let floor = first_since.unwrap_or(0);
        if let Some(previous) = &joined {
            args.since = Some(as_f64(previous.cursor));
        }
        loop {
            let (_, turn) = self.turn_timeout();
            args.timeout_ms = Some(as_f64(turn));
            let request = ToolRequest::new("terminal_wait", &to_value(&args));
            let result = self.turn(&request).await;
            let Some(mut answer) = success::<TerminalWaitResult>(&result) else { return result };
            let seen = joined.as_ref().map(|previous| previous.cursor);
            if let Some(seen) = seen {
                cut_repeated(&mut answer, seen);
            }
            self.account(&answer.output, answer.truncated, answer.cursor);
            let single = joined.is_none();
            let next = match joined.take() {
                None => answer,
                Some(previous) => previous.follow(answer),
            };
            let left = self.turn_timeout().0;
            if next.reached || left.is_zero() {
                if single {
                    return result;
                }
                return ToolResult::ok(to_value(&next));
            }
            let back = match overlap_text {
                Overlap::Chars(chars) => chars as u64,
                Overlap::Line => {
                    next.output.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u64
                }
            };
            args.since = Some(as_f64(next.cursor.saturating_sub(back).max(floor)));
            joined = Some(next);
        }
    }

    /// One call, reporting progress every [`PROGRESS_EVERY`] while it runs.
    async fn turn(&mut self, request: &ToolRequest) -> ToolResult {
        let call = self.client.call(self.session_file, request);
        tokio::pin!(call);
        if self.progress.is_none() {
            return call.await;
        }
        loop {
            let due = self.last_report + self.options.progress_every;
            tokio::select! {
                result = &mut call => return result,
                () = tokio::time::sleep_until(due) => self.emit(),
            }
        }
    }

    /// Counts an answer's output into the progress and reports it.
    fn account(&mut self, output: &str, truncated: bool, cursor: u64) {
        let report = &mut self.report;
        report.turns += 1;
        report.cursor = Some(cursor);
        report.lines += output.matches('\n').count() as u64;
        report.lines_cut |= truncated;
        if let Some(last) = output.lines().rev().map(str::trim).find(|line| !line.is_empty()) {
            report.last_line = Some(clip_chars(last, LAST_LINE_CHARS));
        }
        self.emit();
    }

    fn emit(&mut self) {
        let Some(progress) = self.progress.as_mut() else { return };
        self.last_report = Instant::now();
        self.report.waited = self.start.elapsed();
        progress(&self.report);
    }
}

/// How far before the previous answer's cursor a `text` turn starts.
#[derive(Debug, Clone, Copy)]
enum Overlap {
    /// This many characters (a literal's length less one).
    Chars(usize),
    /// The line the previous answer ended in (patterns).
    Line,
}

/// Removes from `answer.output` what an earlier answer, ending at cursor `seen`, already held.
fn cut_repeated(answer: &mut TerminalWaitResult, seen: u64) {
    let chars = answer.output.chars().count() as u64;
    let starts_at = answer.cursor.saturating_sub(chars);
    let repeated = usize::try_from(seen.saturating_sub(starts_at)).unwrap_or(usize::MAX);
    if repeated == 0 {
        return;
    }
    let cut = answer.output.char_indices().nth(repeated).map_or(answer.output.len(), |(i, _)| i);
    answer.output.drain(..cut);
}

/// The characters of the longest text a `text` wait looks for.
fn longest_text(args: &TerminalWaitArgs) -> usize {
    let text = args.text.iter().map(|text| text.chars().count());
    let any = args.any_of.iter().flatten().map(|text| text.chars().count());
    text.chain(any).max().unwrap_or(0)
}

/// The value of a successful answer as `T`, when it is one.
fn success<T: serde::de::DeserializeOwned>(result: &ToolResult) -> Option<T> {
    match result {
        ToolResult::Success { value: Some(value) } => serde_json::from_value(value.clone()).ok(),
        _ => None,
    }
}

/// The request with the same operation and new arguments.
fn rebuild<T: Serialize>(request: &ToolRequest, args: &T) -> ToolRequest {
    ToolRequest::new(request.operation().unwrap_or_default(), &to_value(args))
}

/// `value` as JSON, whole numbers written as integers (`30000`, not `30000.0`: the argument
/// types hold numbers as `f64`).
fn to_value<T: Serialize>(value: &T) -> Value {
    let mut value = serde_json::to_value(value).expect("argument and result types serialise");
    if let Value::Object(members) = &mut value {
        for member in members.values_mut() {
            let whole = member.as_f64().and_then(as_cursor);
            if let (Some(whole), true) = (whole, member.is_f64()) {
                *member = Value::from(whole);
            }
        }
    }
    value
}

/// A cursor given as a JSON number, when it is a whole non-negative one.
fn as_cursor(value: f64) -> Option<u64> {
    #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "checked")]
    (value.fract() == 0.0 && value >= 0.0).then_some(value as u64)
}

#[expect(clippy::cast_precision_loss, reason = "cursors and timeouts stay below 2^53")]
fn as_f64(value: u64) -> f64 {
    value as f64
}

fn millis(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// `text` cut to `limit` characters, `…` marking a cut.
fn clip_chars(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}…", &text[..end]),
    }
}

/// `1234567` as `1 234 567`.
fn grouped(number: u64) -> String {
    let digits = number.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests;
