//! The waiting half of `terminal_run` and `terminal_wait` (protocol 1.3.0; `anyOf`, `regex` and
//! `until: "input"` 1.5.0): [`Wait`], run after the caller's turn in the project queue has ended,
//! so a wait never holds up other operations of the project.
//!
//! A wait wakes on every change of its node's files (the stream watch), never on a timer alone;
//! whether the node's program runs, and how it ended, is the terminals' one answer
//! ([`crate::terminals::Terminals::state`]), asked by the node's files while the program runs by them and of tmux
//! when they show an end.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use termsprawl_protocol::args::{TerminalWaitArgs, WaitUntil};
use termsprawl_protocol::results::{ProgramState, TerminalRunResult, TerminalWaitResult};
use termsprawl_transport::server::Caller;
use tokio::time::Instant;

use crate::engine::Engine;
use crate::error::{ToolError, messages};
use crate::foreground::{INPUT_QUIET, INPUT_RECHECK, Processes};
use crate::matcher::Matcher;
use crate::ops::access::{self, Access};
use crate::terminals::{Ask, Look, PaneState, Stream, TmuxError, tail, tmux_error};

/// The default wait of `terminal_run` and `terminal_wait`, in milliseconds (the contract's).
#[expect(clippy::cast_precision_loss, reason = "10 000 is exact in an f64")]
pub(super) const DEFAULT_TIMEOUT_MS: f64 = termsprawl_protocol::results::DEFAULT_WAIT_MS as f64;
/// The longest wait, in milliseconds: a call always answers inside the client's 45 s cap.
#[expect(clippy::cast_precision_loss, reason = "30 000 is exact in an f64")]
const MAX_TIMEOUT_MS: f64 = termsprawl_protocol::results::MAX_WAIT_MS as f64;
/// The default `quietMs` of `terminal_wait`.
const DEFAULT_QUIET_MS: f64 = 1_000.0;
/// The shortest `quietMs`.
const MIN_QUIET_MS: f64 = 100.0;
/// The longest `output` of `terminal_run` and `terminal_wait`, in UTF-16 units (the contract's).
const WAIT_OUTPUT_CHARS: usize = termsprawl_protocol::results::MAX_OUTPUT_UTF16;

/// What a [`Wait`] waits for.
#[derive(Debug, Clone)]
enum Condition {
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
    let terminals = engine.terminals();
    // A node whose pane is already gone cannot be waited on (tmux is asked when its files
    // show an end).
    terminals.state(&args.node_id, Ask::Files).await.map_err(tmux_error)?;
    if matches!(condition, Condition::Input) {
        terminals.know_pane(&args.node_id).await;
    }
    let stream = terminals.stream(&args.node_id);
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

impl Wait {
    /// `terminal_run`'s wait for the exit of the run node `node_id` it started for `caller`, its
    /// output from the start, at most `timeout_ms` (clamped as `terminal_wait`'s).
    pub(super) fn for_run(
        engine: &Engine,
        caller: &Caller,
        node_id: String,
        timeout_ms: Option<f64>,
    ) -> Wait {
        let stream = engine.terminals().stream(&node_id);
        Wait {
            reader: caller.node_id().to_owned(),
            project_id: caller.project_id().to_owned(),
            node_id,
            stream,
            condition: Condition::Exit,
            since: Some(0),
            timeout: clamp_ms(timeout_ms, DEFAULT_TIMEOUT_MS, 0.0, MAX_TIMEOUT_MS),
            searched: None,
            found: None,
            reached_member: false,
            reading: None,
            input_by: None,
        }
    }

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
                (state.dead || engine.terminals().recorded_status(&self.node_id).is_some(), None)
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
        let reader = engine.terminals().foreground_reader(&self.node_id, &mut Processes::default());
        let Some(program) = reader else {
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
    pub(super) async fn finish(self, engine: &Engine) -> Result<serde_json::Value, ToolError> {
        let node_id = self.node_id.clone();
        let answer = self.answer(engine).await;
        if answer.is_err() {
            engine.notices().disarm(&node_id);
        }
        answer
    }

    async fn answer(mut self, engine: &Engine) -> Result<serde_json::Value, ToolError> {
        let terminals = engine.terminals();
        let _answering = engine.notices().answering(&self.node_id, &self.reader);
        let mut changes = self.stream.subscribe();
        let deadline = Instant::now() + self.timeout;
        // Whether the pane had ended before the wait: an end during it may be tmux going away.
        let ended_before = terminals.pane_ended(&self.node_id);
        // Every change of the node's files wakes the loop; an exit is asked of tmux, the one
        // witness when tmux 3.3a never fires `pane-died` for a program that already ended.
        let exit = matches!(self.condition, Condition::Exit);
        let first = if exit { Ask::Tmux } else { Ask::Files };
        let mut state = state_of(engine, &self.node_id, first).await?;
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
                    if !ended_before && terminals.pane_ended(&self.node_id) {
                        fail_if_tmux_gone(engine, &self.node_id).await?;
                    }
                    if exit {
                        state = state_of(engine, &self.node_id, Ask::Tmux).await?;
                        // Gone (no pane left to ask) rather than dead: maybe tmux went away.
                        if !ended_before && state.dead && state.pid.is_none() {
                            fail_if_tmux_gone(engine, &self.node_id).await?;
                        }
                    }
                }
                () = tokio::time::sleep_until(wake_at) => signal = None,
            }
        };
        let ask = match (reached, exit, state.dead) {
            (false, _, _) => Some(Ask::Tmux),
            // So many waits answering at once do not queue behind each other at tmux.
            (true, false, _) => Some(Ask::Files),
            // The wrapper recorded the exit: tmux confirms it, or the record answers.
            (true, true, false) => Some(Ask::Exited),
            (true, true, true) => None,
        };
        if let Some(ask) = ask {
            state = state_of(engine, &self.node_id, ask).await?;
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
            // Everything the command printed is in the stream once the wrapper's exit mark is
            // (issue 29); a killed command or a shell prints none.
            terminals.settle_output(&self.node_id, &self.stream).await;
        }
        let (value, cursor) = self.value(reached, state)?;
        engine.notices().answered(&self.node_id, &self.reader, cursor, !state.dead);
        if state.dead {
            // The answer reports the finish: a keep-false node goes, any other lets go of its
            // processes.
            if terminals.discards(&self.node_id) {
                let _ = engine.close_node(&self.project_id, &self.node_id).await;
            } else {
                let _ = terminals.retire_run(&self.node_id).await;
            }
        }
        Ok(value)
    }

    /// The answer, `terminal_wait`'s or `terminal_run`'s (without `reached`), with the output
    /// after `since`, and its cursor. A text wait not reached searches the answer's text too
    /// (printed since its last look): what the answer holds, it reports.
    fn value(
        &mut self,
        mut reached: bool,
        state: PaneState,
    ) -> Result<(serde_json::Value, u64), ToolError> {
        let (text, dropped, cursor) = match &self.condition {
            Condition::Text(matcher) if !reached => {
                let from = self.searched.or(self.since);
                let (after, found) = self.stream.after_searched(self.since, from, matcher);
                if found.is_some() {
                    self.found = found;
                    reached = true;
                }
                after
            }
            _ => self.stream.after(self.since),
        };
        let output = tail(&text, WAIT_OUTPUT_CHARS);
        let truncated = dropped || output.len() < text.len();
        let ProgramState { running, exit_code, signal } =
            ProgramState::new(state.dead, state.exit_code, state.signal);
        // matched and matchCursor answer a text condition only.
        let text = matches!(self.condition, Condition::Text(_));
        let wait = TerminalWaitResult {
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
        };
        let answer = if self.reached_member {
            serde_json::to_value(wait)
        } else {
            serde_json::to_value(TerminalRunResult::from(wait))
        };
        let value = answer.map_err(|error| ToolError::new(error.to_string()))?;
        Ok((value, cursor))
    }
}

/// The pane's state while waiting, looked at as `ask` says: a node closed meanwhile (the
/// terminals no longer answer for it) ends the wait with an error.
async fn state_of(engine: &Engine, node_id: &str, ask: Ask) -> Result<PaneState, ToolError> {
    match engine.terminals().state(node_id, ask).await {
        Ok(state) => Ok(state),
        Err(TmuxError::NotRunning(_)) => Err(messages::CLOSED_WHILE_WAITING.into()),
        Err(error) => Err(tmux_error(error)),
    }
}

/// After the node's pane ended during a wait: when its session is gone because the managed tmux
/// server went away, [`messages::TMUX_GONE_WHILE_WAITING`].
async fn fail_if_tmux_gone(engine: &Engine, node_id: &str) -> Result<(), ToolError> {
    if engine.terminals().tmux_went_away(node_id).await {
        return Err(messages::TMUX_GONE_WHILE_WAITING.into());
    }
    Ok(())
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
