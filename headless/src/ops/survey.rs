//! The survey of a caller's terminals (protocol 1.5.0): `terminal_list` and `terminal_search`.
//!
//! Both answer from what the server already knows, with no tmux command and no process: the
//! canvas (which nodes, in which order, their commands and start times), each node's stream
//! (cursor, last output, retained text; a stream's file is read only when it changed,
//! `Terminals::current`) and the files that record how a program ended
//! (`Terminals::ended`). A caller sees exactly the terminals it may `terminal_read` ([`access`]).

use std::time::SystemTime;

use serde_json::Value;
use termsprawl_protocol::DEFAULT_SEARCH_LIMIT;
use termsprawl_protocol::args::TerminalSearchArgs;
use termsprawl_protocol::results::{
    SearchMatch, TerminalKind, TerminalListEntry, TerminalSearchResult, iso_utc, signal_name,
};
use termsprawl_transport::server::Caller;

use crate::canvas::{Node, NodeKind};
use crate::engine::Engine;
use crate::error::ToolError;
use crate::foreground::Processes;
use crate::matcher::Matcher;
use crate::ops::access::{self, Access};
use crate::ops::wait::cursor_of;

/// `terminal_list`: every terminal node the caller may read, in canvas order.
pub(super) fn list(engine: &Engine, caller: &Caller) -> Result<Value, ToolError> {
    // One scan of `/proc`, when a look needs it, serves every node.
    let mut processes = Processes::default();
    let entries: Vec<TerminalListEntry> =
        readable(engine, caller)?.iter().map(|node| entry(engine, node, &mut processes)).collect();
    serde_json::to_value(entries).map_err(|error| ToolError::new(error.to_string()))
}

/// `terminal_search`: the matching lines of one terminal or of every terminal the caller may
/// read, oldest first per terminal, terminals in `terminal_list`'s order. A pattern that does not
/// compile fails the call before anything is searched.
pub(super) fn search(
    engine: &Engine,
    caller: &Caller,
    args: &TerminalSearchArgs,
) -> Result<Value, ToolError> {
    let matcher = Matcher::new(std::slice::from_ref(&args.pattern), args.regex == Some(true))?;
    let nodes = match &args.node_id {
        Some(node_id) => vec![access::terminal(engine, caller, node_id, Access::Read)?],
        None => readable(engine, caller)?,
    };
    // Validation checked both: whole numbers, limit in 1..=200, context in 0..=5.
    let limit = args.limit.map_or(DEFAULT_SEARCH_LIMIT, whole);
    let context = args.context.map_or(0, whole);
    let since = args.since.map(cursor_of);
    let mut hits: Vec<SearchMatch> = Vec::new();
    let mut truncated = false;
    for node in &nodes {
        let (stream, _, _) = engine.terminals().current(&node.id);
        let left = limit - hits.len();
        let (found, more) = stream.matching_lines(&node.id, since, &matcher, context, left);
        hits.extend(found);
        if more {
            truncated = true;
            break;
        }
    }
    serde_json::to_value(TerminalSearchResult { matches: hits, truncated })
        .map_err(|error| ToolError::new(error.to_string()))
}

/// Whether a running terminal's foreground program is blocked reading the terminal with nothing
/// printed since `last_output` for a moment, and its name (`Terminals::input_by`, the rule
/// `terminal_read`'s screen view and `until: "input"` share): `/proc` reads only, no process.
fn waiting_for_input(
    engine: &Engine,
    node: &Node,
    last_output: Option<SystemTime>,
    processes: &mut Processes,
) -> Option<String> {
    engine.terminals().input_by(&node.id, last_output, processes)
}

/// Whether a notice goes to the caller of `terminal_run` when this node's command ends (its
/// `notify`, `spec/protocol.md` §4.9): the one place `terminal_list` asks.
fn notifies(engine: &Engine, node: &Node) -> bool {
    engine.notices().notifies(&node.id)
}

/// The terminal nodes of the caller's project it may read, in canvas order.
fn readable(engine: &Engine, caller: &Caller) -> Result<Vec<Node>, ToolError> {
    engine.with_project(caller.project_id(), |project| {
        project
            .nodes
            .iter()
            .filter(|node| node.kind.is_terminal())
            .filter(|node| access::permits(project, caller.node_id(), node, Access::Read).is_ok())
            .cloned()
            .collect()
    })
}

/// One node's `terminal_list` entry.
fn entry(engine: &Engine, node: &Node, processes: &mut Processes) -> TerminalListEntry {
    let (_, signal, look) = engine.terminals().current(&node.id);
    let ended = engine.terminals().ended(&node.id, signal);
    let state = ended.map(|ended| ended.state).unwrap_or_default();
    let kind = match (node.kind, &node.command) {
        (NodeKind::Agent, _) => TerminalKind::Agent,
        (_, Some(_)) => TerminalKind::Run,
        (_, None) => TerminalKind::Shell,
    };
    // The time the stream's file last grew with text (a retired run's as recorded then); the
    // pipe may write it a moment after the program's end, never later than that end.
    let recorded = ended.and_then(|ended| ended.last_output);
    let last_output = recorded.or(look.last_output).map(|at| match ended {
        Some(ended) => at.min(ended.at),
        None => at,
    });
    let input_by = match ended {
        None => waiting_for_input(engine, node, last_output, processes),
        Some(_) => None,
    };
    TerminalListEntry {
        node_id: node.id.clone(),
        title: node.title.clone(),
        kind,
        command: node.command.clone(),
        running: ended.is_none(),
        exit_code: state.exit_code.map(i64::from),
        signal: state.signal.map(signal_name),
        started_at: iso_utc(engine.terminals().started(node)),
        ended_at: ended.map(|ended| iso_utc(ended.at)),
        cursor: look.cursor,
        last_output_at: last_output.map(iso_utc),
        waiting_for_input: input_by.is_some(),
        input_by,
        notify: notifies(engine, node),
    }
}

/// A validated whole number argument as a count.
fn whole(value: f64) -> usize {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "validation keeps it a whole number in 0..=200"
    )]
    let count = value as usize;
    count
}
