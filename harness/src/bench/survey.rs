//! Part 4's survey rows (protocol 1.5.0): `terminal_list` with [`LIST_TERMINALS`] terminals on
//! the server and `terminal_search` over [`SEARCH_TERMINALS`] terminals that each retain
//! [`SEARCH_CHARS`] characters, measured by the measuring side after its reads, on the same
//! server and with the same client, beside the same `guide_read` baseline.
//!
//! The measuring side (`terminals::run`) first fills the server: [`SEARCH_TERMINALS`] run nodes print [`SEARCH_CHARS`] characters
//! and more (`yes` through `head`), the last of them then [`NEEDLE`]; short run nodes make up the
//! rest of [`LIST_TERMINALS`] ([`run_args`]). Every node has ended (and holds no process) before the first
//! measured call, and one unmeasured call of each reads every stream into the server's memory.

use anyhow::{Context as _, ensure};
use serde_json::{Value, json};
use termsprawl_protocol::ToolRequest;
use termsprawl_protocol::results::{TerminalListEntry, TerminalRunResult};

/// The terminals on the server when `terminal_list` is measured (the agent node and part 4's run
/// node included).
pub const LIST_TERMINALS: usize = 256;

/// The terminals `terminal_search` searches through.
pub const SEARCH_TERMINALS: usize = 64;

/// The characters each of them retains (the retained window of `spec/protocol.md` §4.6).
pub const SEARCH_CHARS: usize = 1_000_000;

/// The line the last of them prints after its bulk, and the measured search's pattern.
pub const NEEDLE: &str = "FAILED test_needle";

/// The rows as the table shows them.
pub const TERMINAL_LIST: &str = "`terminal_list` `{}` (256 terminals)";
/// See [`TERMINAL_LIST`]: measured while [`LIST_TERMINALS`] terminals are live, once every shell
/// is idle at its prompt ([`busy_shells`]; issue 37).
pub const TERMINAL_LIST_LIVE: &str = "`terminal_list` `{}` (256 live terminals, 254 idle shells)";
/// See [`TERMINAL_LIST`].
pub const TERMINAL_SEARCH: &str =
    r#"`terminal_search` `{"pattern":"FAILED test_needle"}` (64 x 1 000 000 characters)"#;

/// The line every bulk node repeats (61 characters with its line feed).
const BULK_LINE: &str = "bench survey line: lorem ipsum dolor sit amet, consectetur";

/// The two measured requests.
pub fn requests() -> [ToolRequest; 2] {
    [
        ToolRequest::new("terminal_list", &json!({})),
        ToolRequest::new("terminal_search", &json!({"pattern": NEEDLE})),
    ]
}

/// The command of bulk node `index` of [`SEARCH_TERMINALS`]: a little more than [`SEARCH_CHARS`]
/// characters of [`BULK_LINE`], the last node then [`NEEDLE`].
pub fn bulk_command(index: usize) -> String {
    let needle =
        if index + 1 == SEARCH_TERMINALS { format!("; echo '{NEEDLE}'") } else { String::new() };
    let bytes = SEARCH_CHARS + SEARCH_CHARS / 20;
    format!("yes '{BULK_LINE}' | head -c {bytes}; echo{needle}")
}

/// Checks a measured answer: the list shows [`LIST_TERMINALS`] terminals, the search finds the
/// one [`NEEDLE`] line.
pub fn check(operation: &str, value: &Value) -> anyhow::Result<()> {
    if operation == "terminal_list" {
        let count = value.as_array().map_or(0, Vec::len);
        ensure!(
            count == LIST_TERMINALS,
            "terminal_list showed {count} terminals, not {LIST_TERMINALS}"
        );
        return Ok(());
    }
    let lines: Vec<&str> = value["matches"]
        .as_array()
        .map(|matches| matches.iter().filter_map(|m| m["line"].as_str()).collect())
        .unwrap_or_default();
    ensure!(lines == [NEEDLE], "terminal_search found {lines:?}, not the one {NEEDLE:?}: {value}");
    Ok(())
}

/// Checks a `terminal_list` answer of the live row: [`LIST_TERMINALS`] terminals, every one
/// running.
pub fn check_live(entries: &[TerminalListEntry]) -> anyhow::Result<()> {
    ensure!(
        entries.len() == LIST_TERMINALS,
        "terminal_list showed {} terminals, not {LIST_TERMINALS}",
        entries.len()
    );
    let ended: Vec<&str> =
        entries.iter().filter(|entry| !entry.running).map(|entry| entry.node_id.as_str()).collect();
    ensure!(
        ended.is_empty(),
        "terminal_list showed ended terminals among the live ones: {ended:?}"
    );
    Ok(())
}

/// Of `shells` (node ids), those a `terminal_list` answer does not show idle at their prompts:
/// absent, ended, or not waiting for input (a shell still running its start files, say).
pub fn busy_shells<'a>(entries: &[TerminalListEntry], shells: &'a [String]) -> Vec<&'a str> {
    let idle = |node_id: &str| {
        entries
            .iter()
            .any(|entry| entry.node_id == node_id && entry.running && entry.waiting_for_input)
    };
    shells.iter().map(String::as_str).filter(|node_id| !idle(node_id)).collect()
}

/// How many short run nodes make up [`LIST_TERMINALS`] with the bulk nodes and `existing`
/// terminals.
pub fn short_nodes(existing: usize) -> anyhow::Result<usize> {
    LIST_TERMINALS
        .checked_sub(existing + SEARCH_TERMINALS)
        .context("the server already has more terminals than the survey rows measure")
}

/// The arguments of the `terminal_run` that starts bulk node `index`, or short node `index`
/// when `bulk` is false; each waits for its end (30 s at most).
pub fn run_args(bulk: bool, index: usize) -> Value {
    let command = if bulk { bulk_command(index) } else { format!("echo short {index}") };
    json!({"command": command, "title": format!("survey {index}"), "timeoutMs": 30_000})
}

/// Whether a `terminal_run` answer reports its command ended with status 0.
pub fn ended(run: &TerminalRunResult) -> bool {
    !run.running && run.exit_code == Some(0)
}

#[cfg(test)]
mod tests;
