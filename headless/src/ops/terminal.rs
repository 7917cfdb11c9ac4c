//! The terminal operations: `terminal_open`, `terminal_run`, `terminal_read`, `terminal_wait`,
//! `terminal_submit`, `terminal_input`, `terminal_interrupt`, `terminal_kill`,
//! `terminal_external` and `terminal_close`.
//!
//! `terminal_run` starts its node here and does its waiting after the caller's turn in the
//! project queue has ended ([`Wait`], `ops/wait.rs`, with `terminal_wait`), so a wait never holds
//! up other operations of the project. Every answer is a type of `termsprawl_protocol::results`;
//! every terminal is reached through the engine's `Terminals`.

use std::path::Path;
use std::time::SystemTime;

use serde_json::Value;
use termsprawl_protocol::args::{
    NodeArgs, ReadView, TerminalInputArgs, TerminalOpenArgs, TerminalReadArgs, TerminalRunArgs,
    TerminalSubmitArgs,
};
use termsprawl_protocol::results::{
    DeliveredResult, NodeResult, ProgramState, TerminalCloseResult, TerminalKillResult,
    TerminalReadResult, TerminalScreenResult,
};
use termsprawl_transport::server::Caller;

use crate::canvas::NodeKind;
use crate::engine::Engine;
use crate::error::{ToolError, messages};
use crate::foreground::Processes;
use crate::ops::access::{self, Access};
use crate::ops::answer;
use crate::ops::canvas::lexical_normal;
use crate::ops::wait::{Wait, cursor_of};
use crate::terminals::{Ask, PaneState, Screen, tail, tmux_error};

/// The default of `terminal_read`'s `maxChars`.
pub(crate) const DEFAULT_MAX_CHARS: f64 = 16_000.0;
/// The largest `terminal_read` answer, in UTF-16 units.
pub(crate) const MAX_CHARS: f64 = 100_000.0;

pub(super) async fn open(
    engine: &Engine,
    caller: &Caller,
    args: TerminalOpenArgs,
) -> Result<Value, ToolError> {
    let title =
        args.title.filter(|title| !title.is_empty()).unwrap_or_else(|| "Terminal".to_owned());
    let node_id = engine.open_terminal(caller.project_id(), &title).await?;
    Ok(answer(&NodeResult { node_id }))
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
        engine.terminals().mark_discard(&node_id).map_err(|error| {
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
        engine.notices().arm(
            &node_id,
            caller.node_id(),
            caller.project_id(),
            &args.command,
            started,
        );
    }
    Ok(Wait::for_run(engine, caller, node_id, args.timeout_ms))
}

pub(super) async fn read(
    engine: &Engine,
    caller: &Caller,
    args: &TerminalReadArgs,
) -> Result<Value, ToolError> {
    access::terminal(engine, caller, &args.node_id, Access::Read)?;
    let terminals = engine.terminals();
    let _answering = engine.notices().answering(&args.node_id, caller.node_id());
    if args.view == Some(ReadView::Screen) {
        let screen = read_screen(engine, &args.node_id).await?;
        let (cursor, running) = (screen.cursor, screen.running);
        engine.notices().answered(&args.node_id, caller.node_id(), cursor, running);
        return Ok(answer(&screen));
    }
    let limit = clamp_max_chars(args.max_chars);
    let stream = terminals.stream(&args.node_id);
    let (output, cursor, state) = match args.since {
        None => {
            // The cursor from before the capture: reading on from it may repeat a little of the
            // screen, never miss what came after it.
            let cursor = stream.cursor();
            let (text, state) = terminals.history(&args.node_id).await.map_err(tmux_error)?;
            (tail(&text, limit), cursor, state)
        }
        Some(since) => {
            // The text comes from the stream, and so may the state (its files).
            let state = terminals.state(&args.node_id, Ask::Files).await.map_err(tmux_error)?;
            let (text, _, cursor) = stream.after(Some(cursor_of(since)));
            (tail(&text, limit), cursor, state)
        }
    };
    engine.notices().answered(&args.node_id, caller.node_id(), cursor, !state.dead);
    let ProgramState { running, exit_code, signal } = program(state);
    Ok(answer(&TerminalReadResult {
        node_id: args.node_id.clone(),
        output,
        cursor,
        running,
        exit_code,
        signal,
    }))
}

/// `terminal_read` with `view: "screen"`: exactly the visible rows, with the size, the cursor
/// position and whether the alternate screen is on (protocol 1.4.0), and who reads the terminal
/// (1.5.0).
async fn read_screen(engine: &Engine, node_id: &str) -> Result<TerminalScreenResult, ToolError> {
    let terminals = engine.terminals();
    let stream = terminals.stream(node_id);
    let cursor = stream.cursor();
    let (screen, state) = terminals.screen(node_id).await.map_err(tmux_error)?;
    let Screen { text, rows, cols, cursor_row, cursor_col, alternate } = screen;
    // A finished program reads nothing; the look is of `/proc` only (protocol 1.5.0).
    let input_by = if state.dead {
        None
    } else {
        terminals.input_by(node_id, stream.look().last_change, &mut Processes::default())
    };
    let ProgramState { running, exit_code, signal } = program(state);
    Ok(TerminalScreenResult {
        node_id: node_id.to_owned(),
        output: text,
        cursor,
        running,
        exit_code,
        signal,
        rows,
        cols,
        cursor_row,
        cursor_col,
        alternate_screen: alternate,
        waiting_for_input: input_by.is_some(),
        input_by,
    })
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
    let terminals = engine.terminals();
    let _answering = engine.notices().answering(&args.node_id, caller.node_id());
    let state = terminals.kill(&args.node_id).await.map_err(tmux_error)?;
    let cursor = terminals.stream(&args.node_id).cursor();
    engine.notices().answered(&args.node_id, caller.node_id(), cursor, !state.dead);
    let ProgramState { running, exit_code, signal } = program(state);
    let value = answer(&TerminalKillResult {
        node_id: args.node_id.clone(),
        cursor,
        running,
        exit_code,
        signal,
    });
    if state.dead {
        // The answer reports the finish: the node lets go of its processes (a keep-false node
        // stays, §4.6), as it would at a wait's answer.
        let _ = terminals.retire_run(&args.node_id).await;
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
    let terminals = engine.terminals();
    let cursor = terminals.stream(&args.node_id).cursor();
    terminals.submit_line(&args.node_id, &args.command).await.map_err(tmux_error)?;
    Ok(delivered(&args.node_id, Some(cursor)))
}

pub(super) async fn input(
    engine: &Engine,
    caller: &Caller,
    args: &TerminalInputArgs,
) -> Result<Value, ToolError> {
    access::terminal(engine, caller, &args.node_id, Access::Drive)?;
    let terminals = engine.terminals();
    let cursor = terminals.stream(&args.node_id).cursor();
    // Validation has checked every key and that text or keys is given: the text first, as is,
    // then the keys by name.
    let text = args.text.as_deref().unwrap_or_default();
    let keys = args.keys.as_deref().unwrap_or_default();
    if !text.is_empty() || keys.is_empty() {
        terminals.type_text(&args.node_id, text).await?;
    }
    if !keys.is_empty() {
        terminals.press_keys(&args.node_id, keys).await?;
    }
    Ok(delivered(&args.node_id, Some(cursor)))
}

pub(super) async fn interrupt(
    engine: &Engine,
    caller: &Caller,
    args: &NodeArgs,
) -> Result<Value, ToolError> {
    access::terminal(engine, caller, &args.node_id, Access::Drive)?;
    engine.terminals().interrupt(&args.node_id).await?;
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
        search_path: engine.config().search_path.clone(),
        tmux: Some(engine.terminals().location().clone()),
        ..termsprawl_external_term::OpenOptions::default()
    };
    let user_data = engine.layout().user_data().to_path_buf();
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
    Ok(answer(&TerminalCloseResult {
        node_id: args.node_id.clone(),
        cleanup_pending_ids: Vec::new(),
    }))
}

/// `{"nodeId","delivered":true}`, with `cursor` for `terminal_submit` and `terminal_input`.
fn delivered(node_id: &str, cursor: Option<u64>) -> Value {
    answer(&DeliveredResult { node_id: node_id.to_owned(), delivered: true, cursor })
}

/// `running`, `exitCode` and `signal` of an answer about a terminal in `state`.
fn program(state: PaneState) -> ProgramState {
    ProgramState::new(state.dead, state.exit_code, state.signal)
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
pub(crate) fn clamp_max_chars(max_chars: Option<f64>) -> usize {
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
