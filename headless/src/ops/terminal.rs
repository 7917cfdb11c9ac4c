//! The terminal operations: `terminal_open`, `terminal_run`, `terminal_read`, `terminal_wait`,
//! `terminal_submit`, `terminal_input`, `terminal_interrupt`, `terminal_kill`,
//! `terminal_external` and `terminal_close`.
//!
//! `terminal_run` and `terminal_wait` do their waiting after the caller's turn in the project
//! queue has ended ([`Wait`]), so a wait never holds up other operations of the project.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use termsprawl_protocol::args::{
    NodeArgs, ReadView, TerminalInputArgs, TerminalOpenArgs, TerminalReadArgs, TerminalRunArgs,
    TerminalSubmitArgs, TerminalWaitArgs, WaitUntil,
};
use termsprawl_protocol::results::{TerminalRunResult, TerminalWaitResult, signal_name};
use termsprawl_transport::server::Caller;
use tokio::time::Instant;

use crate::canvas::NodeKind;
use crate::engine::{Engine, tmux_error};
use crate::error::{ToolError, messages};
use crate::foreground::{INPUT_QUIET, INPUT_RECHECK, Processes};
use crate::matcher::Matcher;
use crate::ops::access::{self, Access};
use crate::ops::canvas::lexical_normal;
use crate::streams::{Look, Stream};
use crate::tmux::{PaneState, Screen, TmuxError};

/// The default wait of `terminal_run` and `terminal_wait`, in milliseconds (the contract's).
#[expect(clippy::cast_precision_loss, reason = "10 000 is exact in an f64")]
pub(crate) const DEFAULT_TIMEOUT_MS: f64 = termsprawl_protocol::results::DEFAULT_WAIT_MS as f64;
/// The longest wait, in milliseconds: a call always answers inside the client's 45 s cap.
#[expect(clippy::cast_precision_loss, reason = "30 000 is exact in an f64")]
pub(crate) const MAX_TIMEOUT_MS: f64 = termsprawl_protocol::results::MAX_WAIT_MS as f64;
/// The default `quietMs` of `terminal_wait`.
pub(crate) const DEFAULT_QUIET_MS: f64 = 1_000.0;
/// The shortest `quietMs`.
pub(crate) const MIN_QUIET_MS: f64 = 100.0;
/// The longest `output` of `terminal_run` and `terminal_wait`, in UTF-16 units (the contract's).
pub(crate) const WAIT_OUTPUT_CHARS: usize = termsprawl_protocol::results::MAX_OUTPUT_UTF16;
/// After an exit, the output is complete once it has not grown for this long ...
const EXIT_SETTLE_QUIET: Duration = Duration::from_millis(25);
/// ... or after this long at most.
const EXIT_SETTLE_LIMIT: Duration = Duration::from_millis(500);
/// How often, and how far apart, a recorded exit is confirmed with tmux.
const EXIT_CONFIRM_TRIES: u32 = 20;
const EXIT_CONFIRM_RETRY: Duration = Duration::from_millis(10);
/// How long `terminal_kill` waits for the killed process to be reaped.
const KILL_SETTLE: Duration = Duration::from_secs(2);
/// How often `terminal_kill` asks tmux meanwhile.
const KILL_RETRY: Duration = Duration::from_millis(10);

/// The default of `terminal_read`'s `maxChars`.
pub const DEFAULT_MAX_CHARS: f64 = 16_000.0;
/// The largest `terminal_read` answer, in UTF-16 units.
pub const MAX_CHARS: f64 = 100_000.0;
/// Lines of scrollback `terminal_read` includes.
pub const HISTORY_LINES: u32 = 200;

pub(super) async fn open(
    engine: &Engine,
    caller: &Caller,
    args: TerminalOpenArgs,
) -> Result<Value, ToolError> {
    let title =
        args.title.filter(|title| !title.is_empty()).unwrap_or_else(|| "Terminal".to_owned());
    let node_id = engine.open_terminal(caller.project_id(), &title).await?;
    Ok(json!({ "nodeId": node_id }))
}

/// `terminal_run`: checks the arguments, starts the run node, and waits for its exit after the
/// caller's turn.
pub(super) async fn run(
    engine: &Engine,
    caller: &Caller,
    args: TerminalRunArgs,
) -> Result<Wait, ToolError> {
    let started = SystemTime::now();
    if args.command.trim().is_empty() {
        return Err(messages::RUN_COMMAND_EMPTY.into());
    }
    let folder = engine.with_project(caller.project_id(), |project| project.folder.clone())?;
    let cwd = match &args.cwd {
        Some(cwd) => run_cwd(&folder, Path::new(cwd))?,
        None => folder,
    };
    let env = run_env(args.env.as_deref().unwrap_or_default())?;
    let title = args
        .title
        .filter(|title| !title.is_empty())
        .unwrap_or_else(|| default_title(&args.command));
    let node_id = engine.open_run(caller.project_id(), &title, &args.command, &cwd, &env).await?;
    if args.keep == Some(false) {
        engine.mark_discard(&node_id).map_err(|error| {
            ToolError::new(format!("cannot record keep false for {node_id}: {error}"))
        })?;
    }
    // Only an agent node is told (§4.9): a caller of another kind gets no notice.
    let caller_is_agent = engine
        .with_project(caller.project_id(), |project| {
            project.node(caller.node_id()).is_some_and(|node| node.kind == NodeKind::Agent)
        })
        .unwrap_or(false);
    if args.notify == Some(true) && caller_is_agent {
        engine.notices.arm(&node_id, caller.node_id(), caller.project_id(), &args.command, started);
    }
    let stream = engine.streams.get(&node_id);
    Ok(Wait {
        reader: caller.node_id().to_owned(),
        project_id: caller.project_id().to_owned(),
        node_id,
        stream,
        condition: Condition::Exit,
        since: Some(0),
        timeout: clamp_ms(args.timeout_ms, DEFAULT_TIMEOUT_MS, 0.0, MAX_TIMEOUT_MS),
        searched: None,
        found: None,
        reached_member: false,
        reading: None,
        input_by: None,
    })
}

/// `terminal_wait`: checks the node and the arguments; the waiting is [`Wait::finish`].
pub(super) async fn wait(
    engine: &Engine,
    caller: &Caller,
    args: TerminalWaitArgs,
) -> Result<Wait, ToolError> {
    access::terminal(engine, caller, &args.node_id, Access::Read)?;
    let condition = match args.until {
        WaitUntil::Exit => Condition::Exit,
        WaitUntil::Text => {
            // Validation has refused anyOf beside text, and empty anyOf items.
            let texts = match (args.text, args.any_of) {
                (None, Some(any_of)) if !any_of.is_empty() => any_of,
                (Some(text), None) if !text.is_empty() => vec![text],
                _ => return Err(messages::WAIT_TEXT_REQUIRED.into()),
            };
            Condition::Text(Matcher::new(&texts, args.regex == Some(true))?)
        }
        WaitUntil::Quiet => Condition::Quiet(clamp_ms(
            args.quiet_ms,
            DEFAULT_QUIET_MS,
            MIN_QUIET_MS,
            MAX_TIMEOUT_MS,
        )),
        WaitUntil::Change => Condition::Change,
        WaitUntil::Input => Condition::Input,
    };
    // A node whose pane is already gone cannot be waited on (tmux is asked when its files
    // show an end).
    if !engine.runs_by_its_files(&args.node_id) {
        engine.pane_state(&args.node_id).await.map_err(tmux_error)?;
    }
    if matches!(condition, Condition::Input) {
        engine.know_pane(&args.node_id).await;
    }
    let stream = engine.streams.get(&args.node_id);
    // Without since, a change is output after the call started.
    let since = match (args.since, &condition) {
        (Some(since), _) => Some(cursor_of(since)),
        (None, Condition::Change) => Some(stream.cursor()),
        (None, _) => None,
    };
    Ok(Wait {
        reader: caller.node_id().to_owned(),
        project_id: caller.project_id().to_owned(),
        node_id: args.node_id,
        stream,
        condition,
        since,
        timeout: clamp_ms(args.timeout_ms, DEFAULT_TIMEOUT_MS, 0.0, MAX_TIMEOUT_MS),
        searched: None,
        found: None,
        reached_member: true,
        reading: None,
        input_by: None,
    })
}

pub(super) async fn read(
    engine: &Engine,
    caller: &Caller,
    args: &TerminalReadArgs,
) -> Result<Value, ToolError> {
    access::terminal(engine, caller, &args.node_id, Access::Read)?;
    let _answering = engine.notices.answering(&args.node_id, caller.node_id());
    if args.view == Some(ReadView::Screen) {
        let value = read_screen(engine, &args.node_id).await?;
        let cursor = value["cursor"].as_u64().unwrap_or_default();
        let running = value["running"] == Value::Bool(true);
        engine.notices.answered(&args.node_id, caller.node_id(), cursor, running);
        return Ok(value);
    }
    let limit = clamp_max_chars(args.max_chars);
    let stream = engine.streams.get(&args.node_id);
    let (output, cursor, state) = match args.since {
        None => {
            // The cursor from before the capture: reading on from it may repeat a little of the
            // screen, never miss what came after it.
            let cursor = stream.cursor();
            let (text, state) = finished_or_captured(engine, &args.node_id).await?;
            (tail(&text, limit), cursor, state)
        }
        Some(since) => {
            // The text comes from the stream, and so may the state (its files).
            let state = if engine.runs_by_its_files(&args.node_id) {
                PaneState::default()
            } else {
                engine.pane_state(&args.node_id).await.map_err(tmux_error)?
            };
            let (text, _, cursor) = stream.after(Some(cursor_of(since)));
            (tail(&text, limit), cursor, state)
        }
    };
    engine.notices.answered(&args.node_id, caller.node_id(), cursor, !state.dead);
    let mut value = json!({ "nodeId": args.node_id, "output": output });
    add_state(&mut value, cursor, state);
    Ok(value)
}

/// The screen and scrollback without the blank rows below the last written one, and the state:
/// a finished run node's from its final record (retiring it when that is due), so neither
/// tmux's dead-pane line nor the empty rows below the output are shown.
async fn finished_or_captured(
    engine: &Engine,
    node_id: &str,
) -> Result<(String, PaneState), ToolError> {
    if let Some(record) = engine.final_record(node_id) {
        return Ok((record.history.clone(), record.state()));
    }
    let (text, state) = match engine.capture_or_gone(node_id, HISTORY_LINES).await {
        Ok(captured) => captured,
        Err(error) => match engine.final_record(node_id) {
            Some(record) => return Ok((record.history.clone(), record.state())),
            None => return Err(tmux_error(error)),
        },
    };
    if state.dead
        && let Ok(Some(record)) = engine.retire_run(node_id).await
    {
        return Ok((record.history.clone(), record.state()));
    }
    let state = engine.with_recorded_status(node_id, state);
    Ok((trim_blank_end(&text).to_owned(), state))
}

/// `terminal_read` with `view: "screen"`: exactly the visible rows, with the size, the cursor
/// position and whether the alternate screen is on (protocol 1.4.0).
async fn read_screen(engine: &Engine, node_id: &str) -> Result<Value, ToolError> {
    let stream = engine.streams.get(node_id);
    let cursor = stream.cursor();
    let (screen, state) = match engine.final_record(node_id) {
        Some(record) => (record.screen.clone(), record.state()),
        None => match engine.tmux.capture_screen(node_id).await {
            Ok((screen, state)) => {
                engine.saw(node_id, Some(&state));
                (screen, engine.with_recorded_status(node_id, state))
            }
            Err(error) => match engine.final_record(node_id) {
                Some(record) => (record.screen.clone(), record.state()),
                // Its session is gone (a shell that exited, a killed tmux server): not running,
                // as the other reads answer (issue 29).
                None => match (&error, engine.gone_screen(node_id)) {
                    (TmuxError::NotRunning(_), Some(gone)) => gone,
                    _ => return Err(tmux_error(error)),
                },
            },
        },
    };
    let Screen { text, rows, cols, cursor_row, cursor_col, alternate } = screen;
    let mut value = json!({ "nodeId": node_id, "output": text });
    add_state(&mut value, cursor, state);
    value["rows"] = Value::from(rows);
    value["cols"] = Value::from(cols);
    value["cursorRow"] = Value::from(cursor_row);
    value["cursorCol"] = Value::from(cursor_col);
    value["alternateScreen"] = Value::Bool(alternate);
    // A finished program reads nothing; the look is of `/proc` only (protocol 1.5.0).
    let input_by = if state.dead {
        None
    } else {
        engine.input_by(node_id, stream.look().last_change, &mut Processes::default())
    };
    value["waitingForInput"] = Value::Bool(input_by.is_some());
    value["inputBy"] = input_by.map_or(Value::Null, Value::from);
    Ok(value)
}

/// `terminal_kill`: SIGKILL to the process group of a run node's program.
pub(super) async fn kill(
    engine: &Engine,
    caller: &Caller,
    args: &NodeArgs,
) -> Result<Value, ToolError> {
    let node = access::terminal(engine, caller, &args.node_id, Access::Drive)?;
    if node.command.is_none() {
        return Err(messages::KILL_RUN_ONLY.into());
    }
    let _answering = engine.notices.answering(&args.node_id, caller.node_id());
    let stream = engine.streams.get(&args.node_id);
    let mut changes = stream.subscribe();
    let mut state = engine.pane_state(&args.node_id).await.map_err(tmux_error)?;
    if !state.dead
        && let Some(pid) = state.pid.and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        // Other waiters on this node learn of the kill even if tmux is slow to notice the exit.
        engine.streams.wake(&args.node_id);
        let deadline = Instant::now() + KILL_SETTLE;
        loop {
            state = engine.pane_state(&args.node_id).await.map_err(tmux_error)?;
            if state.dead {
                break;
            }
            if Instant::now() >= deadline {
                break;
            }
            // tmux 3.3a may never fire `pane-died` (it sometimes never reaps the program), so no
            // file need change: tmux is asked again after a short while too.
            tokio::select! {
                update = changes.changed() => if update.is_err() { break },
                () = tokio::time::sleep_until(deadline.min(Instant::now() + KILL_RETRY)) => {}
            }
        }
        // Waits that asked before tmux saw the end ask again.
        engine.streams.wake(&args.node_id);
    }
    let cursor = stream.cursor();
    engine.notices.answered(&args.node_id, caller.node_id(), cursor, !state.dead);
    let mut value = json!({ "nodeId": args.node_id });
    add_state(&mut value, cursor, state);
    if state.dead {
        // The answer reports the finish: the node lets go of its processes (a keep-false node
        // stays, §4.6), as it would at a wait's answer.
        let _ = engine.retire_run(&args.node_id).await;
    }
    Ok(value)
}

pub(super) async fn submit(
    engine: &Engine,
    caller: &Caller,
    args: &TerminalSubmitArgs,
) -> Result<Value, ToolError> {
    let node = access::terminal(engine, caller, &args.node_id, Access::Drive)?;
    if node.kind == NodeKind::Agent {
        return Err(messages::SUBMIT_TO_SHELL.into());
    }
    let cursor = engine.streams.get(&args.node_id).cursor();
    engine.tmux.send_text(&args.node_id, &args.command).await.map_err(tmux_error)?;
    engine.tmux.send_key(&args.node_id, "Enter").await.map_err(tmux_error)?;
    Ok(delivered(&args.node_id, Some(cursor)))
}

pub(super) async fn input(
    engine: &Engine,
    caller: &Caller,
    args: &TerminalInputArgs,
) -> Result<Value, ToolError> {
    access::terminal(engine, caller, &args.node_id, Access::Drive)?;
    let cursor = engine.streams.get(&args.node_id).cursor();
    // Validation has checked every key and that text or keys is given: the text first, as is,
    // then the keys by name.
    let text = args.text.as_deref().unwrap_or_default();
    let keys = args.keys.as_deref().unwrap_or_default();
    if !text.is_empty() || keys.is_empty() {
        engine.tmux.send_text(&args.node_id, text).await.map_err(tmux_error)?;
    }
    if !keys.is_empty() {
        engine.tmux.send_keys(&args.node_id, keys).await.map_err(tmux_error)?;
    }
    Ok(delivered(&args.node_id, Some(cursor)))
}

pub(super) async fn interrupt(
    engine: &Engine,
    caller: &Caller,
    args: &NodeArgs,
) -> Result<Value, ToolError> {
    access::terminal(engine, caller, &args.node_id, Access::Drive)?;
    engine.tmux.send_key(&args.node_id, "C-c").await.map_err(tmux_error)?;
    Ok(delivered(&args.node_id, None))
}

/// `terminal_external`: an operating-system terminal window attached to the node's session.
pub(super) async fn external(
    engine: &Engine,
    caller: &Caller,
    args: &NodeArgs,
) -> Result<Value, ToolError> {
    access::terminal(engine, caller, &args.node_id, Access::Attach)?;
    let options = termsprawl_external_term::OpenOptions {
        search_path: engine.config.search_path.clone(),
        tmux: Some(engine.tmux.location().clone()),
        ..termsprawl_external_term::OpenOptions::default()
    };
    let user_data = engine.layout.user_data().to_path_buf();
    let node = args.node_id.clone();
    let opened = tokio::task::spawn_blocking(move || {
        termsprawl_external_term::open(&node, &user_data, &options)
    })
    .await
    .map_err(|_| ToolError::new("Tool failed"))?;
    opened.map_err(|error| ToolError::new(error.to_string()))?;
    Ok(termsprawl_external_term::result_value(&args.node_id))
}

pub(super) async fn close(
    engine: &Engine,
    caller: &Caller,
    args: &NodeArgs,
) -> Result<Value, ToolError> {
    access::terminal(engine, caller, &args.node_id, Access::Close)?;
    engine.close_node(caller.project_id(), &args.node_id).await?;
    Ok(json!({ "nodeId": args.node_id, "cleanupPendingIds": [] }))
}

/// `{"nodeId","delivered":true}`, with `cursor` for `terminal_submit` and `terminal_input`.
fn delivered(node_id: &str, cursor: Option<u64>) -> Value {
    let mut value = json!({ "nodeId": node_id, "delivered": true });
    if let Some(cursor) = cursor {
        value["cursor"] = Value::from(cursor);
    }
    value
}

/// Adds `cursor`, `running`, `exitCode` and `signal` to an answer.
fn add_state(value: &mut Value, cursor: u64, state: PaneState) {
    value["cursor"] = Value::from(cursor);
    value["running"] = Value::Bool(!state.dead);
    value["exitCode"] = state.exit_code.map_or(Value::Null, Value::from);
    value["signal"] = state.signal.map_or(Value::Null, |number| Value::from(signal_name(number)));
}

/// What a [`Wait`] waits for.
#[derive(Debug, Clone)]
pub(super) enum Condition {
    /// The program has exited.
    Exit,
    /// One of the texts or patterns matches after `since` (`anyOf` and `regex`, 1.5.0).
    Text(Matcher),
    /// No output for this long.
    Quiet(Duration),
    /// Any output after `since` (protocol 1.4.0).
    Change,
    /// The foreground program sleeps reading the terminal and nothing is printed (protocol
    /// 1.5.0, `spec/protocol.md` §4.8).
    Input,
}

/// The waiting half of `terminal_run` and `terminal_wait`, run after the caller's queue turn.
#[derive(Debug)]
pub(super) struct Wait {
    /// The caller's node: its read access is checked again when the wait ends.
    reader: String,
    /// The caller's project.
    project_id: String,
    node_id: String,
    stream: Arc<Stream>,
    condition: Condition,
    since: Option<u64>,
    /// Where the next search for a text starts: the text before it was searched already.
    searched: Option<u64>,
    /// With a text condition reached: the index of the text that matched and the cursor at the
    /// start of its match.
    found: Option<(u32, u64)>,
    timeout: Duration,
    /// `terminal_wait` answers `reached`; `terminal_run` does not.
    reached_member: bool,
    /// `until: "input"`: when a program was first seen reading the terminal, and the cursor then.
    reading: Option<(Instant, u64)>,
    /// `until: "input"`: the program that was reading when the wait was reached.
    input_by: Option<String>,
}

impl Wait {
    /// Whether the condition holds now, and for a quiet condition not yet met, when to look
    /// again (the instant the quiet period would end without a change).
    fn holds(
        &mut self,
        engine: &Engine,
        state: &PaneState,
        look: &Look,
    ) -> (bool, Option<Instant>) {
        match &self.condition {
            // The wrapper records the status as the command exits; tmux may see the pane die
            // later, or (tmux 3.3, rarely) never reap it and so never fire `pane-died`.
            Condition::Exit => {
                (state.dead || engine.recorded_status(&self.node_id).is_some(), None)
            }
            // Only what is new since the last look is searched.
            Condition::Text(matcher) => {
                match self.stream.search(self.searched.or(self.since), matcher) {
                    Ok(found) => {
                        self.found = Some(found);
                        (true, None)
                    }
                    Err(searched) => {
                        self.searched = Some(searched);
                        (false, None)
                    }
                }
            }
            Condition::Change => (look.cursor > self.since.unwrap_or_default(), None),
            Condition::Input => self.reads_input(engine, look),
            Condition::Quiet(quiet) => {
                let since_change = look
                    .last_change
                    .and_then(|at| SystemTime::now().duration_since(at).ok())
                    .unwrap_or(*quiet);
                if since_change >= *quiet {
                    (true, None)
                } else {
                    (false, Some(Instant::now() + quiet.saturating_sub(since_change)))
                }
            }
        }
    }

    /// `until: "input"`: reached once a program has been seen reading the terminal at two looks
    /// [`INPUT_RECHECK`] apart, nothing printed between them and for [`INPUT_QUIET`] before; while
    /// not, the next look is due after the quiet period or the recheck interval (output wakes the
    /// wait too, and resets it).
    fn reads_input(&mut self, engine: &Engine, look: &Look) -> (bool, Option<Instant>) {
        let now = Instant::now();
        let since_output = look
            .last_change
            .and_then(|at| SystemTime::now().duration_since(at).ok())
            .unwrap_or(INPUT_QUIET);
        if since_output < INPUT_QUIET {
            self.reading = None;
            return (false, Some(now + INPUT_QUIET.saturating_sub(since_output)));
        }
        let Some(program) = engine.foreground_reader(&self.node_id, &mut Processes::default())
        else {
            self.reading = None;
            return (false, Some(now + INPUT_RECHECK));
        };
        match self.reading {
            Some((seen, cursor)) if cursor == look.cursor && now >= seen + INPUT_RECHECK => {
                self.input_by = Some(program);
                (true, None)
            }
            Some((seen, cursor)) if cursor == look.cursor => (false, Some(seen + INPUT_RECHECK)),
            _ => {
                self.reading = Some((now, look.cursor));
                (false, Some(now + INPUT_RECHECK))
            }
        }
    }

    /// Waits until the condition holds, the timeout passes (not an error) or the node is closed
    /// (an error). Wakes on every change of the node's stream files, never on a timer alone.
    /// The answer counts for the node's run notice (§4.9): it may make it due, move its cursor
    /// or make it unnecessary; a `terminal_run` that fails has none.
    pub(super) async fn finish(self, engine: &Engine) -> Result<Value, ToolError> {
        let node_id = self.node_id.clone();
        let answer = self.answer(engine).await;
        if answer.is_err() {
            engine.notices.disarm(&node_id);
        }
        answer
    }

    async fn answer(mut self, engine: &Engine) -> Result<Value, ToolError> {
        let _answering = engine.notices.answering(&self.node_id, &self.reader);
        let mut changes = self.stream.subscribe();
        let deadline = Instant::now() + self.timeout;
        // Whether the pane had ended before the wait: an end during it may be tmux going away.
        let ended_before = engine.streams.end_file(&self.node_id).exists();
        // Every change of the node's files wakes the loop; an exit is asked of tmux, the one
        // witness when tmux 3.3a never fires `pane-died` for a program that already ended.
        let mut state = if matches!(self.condition, Condition::Exit) {
            pane_state(engine, &self.node_id).await?
        } else {
            state_by_files(engine, &self.node_id).await?
        };
        // The change signal's value of the last wake (`None`: read the file regardless).
        let mut signal = None;
        let reached = loop {
            let look = match signal {
                Some(signal) => self.stream.look_at(signal),
                None => self.stream.look(),
            };
            if look.closed {
                return Err(messages::CLOSED_WHILE_WAITING.into());
            }
            let (reached, wake) = self.holds(engine, &state, &look);
            let wake_at = wake.map_or(deadline, |wake| wake.min(deadline));
            if reached {
                break true;
            }
            if Instant::now() >= deadline {
                break false;
            }
            tokio::select! {
                update = changes.changed() => {
                    if update.is_err() {
                        return Err(messages::CLOSED_WHILE_WAITING.into());
                    }
                    signal = Some(*changes.borrow_and_update());
                    if !ended_before && engine.streams.end_file(&self.node_id).exists() {
                        fail_if_tmux_gone(engine, &self.node_id).await?;
                    }
                    if matches!(self.condition, Condition::Exit) {
                        state = pane_state(engine, &self.node_id).await?;
                        // Gone (no pane left to ask) rather than dead: maybe tmux went away.
                        if !ended_before && state.dead && state.pid.is_none() {
                            fail_if_tmux_gone(engine, &self.node_id).await?;
                        }
                    }
                }
                () = tokio::time::sleep_until(wake_at) => signal = None,
            }
        };
        if !reached {
            state = pane_state(engine, &self.node_id).await?;
        } else if !matches!(self.condition, Condition::Exit) {
            // So many waits answering at once do not queue behind each other at tmux.
            state = state_by_files(engine, &self.node_id).await?;
        }
        if matches!(self.condition, Condition::Exit) && reached && !state.dead {
            state = exited_state(engine, &self.node_id).await?;
        }
        // A link that allowed reading another agent's node may have been disabled meanwhile.
        let permitted = engine.with_project(&self.project_id, |project| {
            project
                .node(&self.node_id)
                .map_or(Ok(()), |node| access::permits(project, &self.reader, node, Access::Read))
        });
        if let Ok(permitted) = permitted {
            permitted?;
        }
        if state.dead {
            if engine.recorded_status(&self.node_id).is_some() {
                // The wrapper printed its exit mark before it recorded the exit: once the mark
                // is in the stream, so is everything the command printed (issue 29).
                engine.output_complete(&self.node_id).await;
            } else {
                // Killed with its wrapper, or a shell: no mark is coming.
                self.stream.settle(EXIT_SETTLE_QUIET, EXIT_SETTLE_LIMIT).await;
            }
        }
        let value = self.value(reached, state)?;
        let cursor = value["cursor"].as_u64().unwrap_or_default();
        engine.notices.answered(&self.node_id, &self.reader, cursor, !state.dead);
        if state.dead {
            // The answer reports the finish: a keep-false node goes, any other lets go of its
            // processes.
            if engine.discards(&self.node_id) {
                let _ = engine.close_node(&self.project_id, &self.node_id).await;
            } else {
                let _ = engine.retire_run(&self.node_id).await;
            }
        }
        Ok(value)
    }
    /// The answer: `terminal_wait`'s, or `terminal_run`'s (without `reached`), with the output
    /// after `since`.
    fn value(&self, reached: bool, state: PaneState) -> Result<Value, ToolError> {
        let (text, dropped, cursor) = self.stream.after(self.since);
        let output = tail(&text, WAIT_OUTPUT_CHARS);
        let truncated = dropped || output.len() < text.len();
        let (running, exit_code) = (!state.dead, state.exit_code.map(i64::from));
        let signal = state.signal.map(signal_name);
        let answer = if self.reached_member {
            // matched and matchCursor answer a text condition only.
            let text = matches!(self.condition, Condition::Text(_));
            serde_json::to_value(TerminalWaitResult {
                node_id: self.node_id.clone(),
                reached,
                running,
                exit_code,
                signal,
                output,
                truncated,
                cursor,
                matched: text.then_some(self.found.map(|(index, _)| index)),
                match_cursor: text.then_some(self.found.map(|(_, at)| at)),
                input_by: matches!(self.condition, Condition::Input).then(|| self.input_by.clone()),
            })
        } else {
            serde_json::to_value(TerminalRunResult {
                node_id: self.node_id.clone(),
                running,
                exit_code,
                signal,
                output,
                truncated,
                cursor,
            })
        };
        answer.map_err(|error| ToolError::new(error.to_string()))
    }
}

/// [`pane_state`], except that a pane whose files show no end ([`Engine::runs_by_its_files`])
/// runs without asking tmux.
async fn state_by_files(engine: &Engine, node_id: &str) -> Result<PaneState, ToolError> {
    if engine.runs_by_its_files(node_id) {
        return Ok(PaneState::default());
    }
    pane_state(engine, node_id).await
}

/// The state of a run node whose wrapper recorded the exit: tmux is asked a few more times (the
/// pane dies a moment after the record); if it still shows the pane running, the record is the
/// answer.
async fn exited_state(engine: &Engine, node_id: &str) -> Result<PaneState, ToolError> {
    for _ in 0..EXIT_CONFIRM_TRIES {
        let state = pane_state(engine, node_id).await?;
        if state.dead {
            return Ok(state);
        }
        tokio::time::sleep(EXIT_CONFIRM_RETRY).await;
    }
    let state = PaneState { dead: true, ..PaneState::default() };
    Ok(engine.with_recorded_status(node_id, state))
}

/// After the node's pane ended during a wait: when its session is gone because the managed tmux
/// server went away, [`messages::TMUX_GONE_WHILE_WAITING`]. A dying server may answer for a
/// moment after the pipes closed, so it is asked a few times (at most half a second).
async fn fail_if_tmux_gone(engine: &Engine, node_id: &str) -> Result<(), ToolError> {
    for _ in 0..TMUX_GONE_TRIES {
        if engine.tmux.has_session(node_id).await.unwrap_or(false) {
            return Ok(());
        }
        if !engine.tmux.server_runs().await.unwrap_or(true) {
            return Err(messages::TMUX_GONE_WHILE_WAITING.into());
        }
        tokio::time::sleep(TMUX_GONE_RETRY).await;
    }
    Ok(())
}

/// How often, and how far apart, [`fail_if_tmux_gone`] asks.
const TMUX_GONE_TRIES: u32 = 10;
const TMUX_GONE_RETRY: Duration = Duration::from_millis(50);

/// The pane's state while waiting: a closed node (or a gone pane) ends the wait with an error.
async fn pane_state(engine: &Engine, node_id: &str) -> Result<PaneState, ToolError> {
    match engine.pane_state(node_id).await {
        Ok(state) => Ok(state),
        Err(TmuxError::NotRunning(_)) if engine.streams.get(node_id).look().closed => {
            Err(messages::CLOSED_WHILE_WAITING.into())
        }
        // A session that is gone answers a state while its node is on the canvas
        // (`Engine::gone_state`): the node was closed, and its stream may already be removed.
        Err(TmuxError::NotRunning(_)) if engine.gone_state(node_id).is_none() => {
            Err(messages::CLOSED_WHILE_WAITING.into())
        }
        Err(error) => Err(tmux_error(error)),
    }
}

/// A `since` or cursor argument as a cursor: fractions cut off, negative numbers are 0.
pub(super) fn cursor_of(value: f64) -> u64 {
    if value.is_nan() || value <= 0.0 {
        return 0;
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "positive, and saturating at u64::MAX is the right answer for larger values"
    )]
    let cursor = value.trunc() as u64;
    cursor
}

/// A millisecond argument, `default` when omitted, clamped to `min..=max`.
fn clamp_ms(value: Option<f64>, default: f64, min: f64, max: f64) -> Duration {
    let value = value.filter(|value| !value.is_nan()).unwrap_or(default).clamp(min, max);
    Duration::from_secs_f64(value / 1000.0)
}

/// `cwd` of `terminal_run`: absolute, an existing directory, inside the project folder after
/// resolving links.
fn run_cwd(folder: &Path, cwd: &Path) -> Result<std::path::PathBuf, ToolError> {
    if !cwd.is_absolute() || !lexical_normal(cwd).starts_with(folder) {
        return Err(messages::RUN_CWD.into());
    }
    match cwd.canonicalize() {
        Ok(canonical) if canonical.is_dir() && canonical.starts_with(folder) => Ok(canonical),
        _ => Err(messages::RUN_CWD.into()),
    }
}

/// `env` of `terminal_run` as pairs; each item `NAME=value` with a portable name.
fn run_env(items: &[String]) -> Result<Vec<(String, String)>, ToolError> {
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let (name, value) =
                item.split_once('=').ok_or_else(|| ToolError::new(messages::run_env(index)))?;
            let valid = name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            if valid {
                Ok((name.to_owned(), value.to_owned()))
            } else {
                Err(ToolError::new(messages::run_env(index)))
            }
        })
        .collect()
}

/// A run node's title when none is given: its command, shortened to one line of 60 characters.
fn default_title(command: &str) -> String {
    let line = command.lines().next().unwrap_or_default().trim();
    let mut title: String = line.chars().take(60).collect();
    if title.len() < line.len() || command.trim().lines().count() > 1 {
        title.push('…');
    }
    title
}

/// `min(max(maxChars, 1), 100000)`, fractions cut off (§4.5).
pub fn clamp_max_chars(max_chars: Option<f64>) -> usize {
    let value = max_chars.unwrap_or(DEFAULT_MAX_CHARS);
    let value = if value.is_nan() { DEFAULT_MAX_CHARS } else { value.clamp(1.0, MAX_CHARS) };
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "clamped to 1..=100000"
    )]
    let limit = value.trunc() as usize;
    limit
}

/// The last `limit` UTF-16 units of `text`, never splitting a character.
pub fn tail(text: &str, limit: usize) -> String {
    termsprawl_protocol::results::utf16_tail(text, limit).to_owned()
}

/// The pane text without the blank lines below the last written one.
pub(crate) fn trim_blank_end(text: &str) -> &str {
    let trimmed = text.trim_end_matches(['\n', ' ']);
    let line_end =
        text[trimmed.len()..].find('\n').map_or(text.len(), |offset| trimmed.len() + offset + 1);
    if trimmed.is_empty() { "" } else { &text[..line_end] }
}
