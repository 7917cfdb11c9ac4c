//! `termsprawlctl acp`: an Agent Client Protocol (ACP v1) client that hosts any ACP agent inside a
//! termsprawl terminal node as a line-oriented chat (spec: `spec/acp.md`).
//!
//! This crate owns the whole front end: the agent process, the JSON-RPC connection, the chat loop
//! and its rendering, the fail-closed permission asks with the true change of a file edit (the
//! agent's proposal against the file on disk, `change.rs`), the confined file system and the
//! agent's terminals: on a local tmux server, or as canvas nodes through the tool server's
//! `terminal_run` and `terminal_wait` (protocol 1.3.0, their answers read with
//! `termsprawl_protocol::results`), chosen by `--terminals`; a local pane's state is read with
//! `termsprawl_external_term::pane`, as headless reads its own. The `cli` crate
//! parses the command line (with its Go-style flag scanner, the workspace's one) into [`Options`]
//! and calls [`run`].
//!
//! It must never: answer a permission ask `selected` with anything but the person's explicit choice
//! (or a kind-based policy the person chose on the command line); touch a file outside the session
//! roots, checked both lexically and after resolving symlinks; block the message reader on a
//! handler; leave a terminal's process or the agent's process group running after it exits.
//!
//! Design decision: the JSON-RPC layer is written by hand (LF-framed JSON over `serde_json`, ids
//! correlated in both directions) with our own lenient serde types for the v1 subset we use
//! (`spec/acp.md` §3.3), not the `agent-client-protocol` SDK crate. The client surface is small
//! (about nine inbound methods, four outbound requests and one notification); the SDK's dispatch
//! loop waits for each handler (`spec/acp.md` §3.2), its major versions break the API often, and
//! this mirrors the MCP bridge, which owns its loop the same way. Every inbound request runs in its
//! own task, so the reader only decodes and dispatches.
//!
//! Where to start reading: [`run`] in this file, then `startup.rs` (the checks and the first start),
//! `launch.rs` (the agent spawned and the connection started, again on `/restart`), `chat.rs` (the chat, its `Session` from the handshake and its `Turn`
//! with the renderer and the asks) and its submodules `handshake`, `turn`, `ask_queue` and
//! `forms` (the chat's jobs; `commands` and `sessions` the front end's own slash commands and the
//! agent's sessions), `offers.rs` (the agent's modes, options and commands, and the local check of every
//! choice before it is sent), `connection.rs` (the JSON-RPC connection: framing and correlation),
//! `messages.rs` (the lenient message types) and `client.rs` (the agent's requests to us).

mod agent;
mod change;
mod chat;
mod client;
mod connection;
mod elicitation;
mod extras;
mod fs;
mod highlight;
mod input;
mod launch;
mod markdown;
mod mentions;
mod messages;
mod offers;
mod options;
mod permission;
mod render;
mod startup;
mod style;
mod terminal;
mod trace;
mod ui;
mod wrap;

use std::path::PathBuf;

pub use termsprawl_protocol::ExitStatus;

pub use options::{
    AgentLog, DEFAULT_PERMISSION_TIMEOUT, McpNarrowing, Options, PermissionMode, TerminalBackend,
};

/// The variable in the environment of the injected MCP server (`termsprawlctl mcp`) that names a
/// file the bridge creates when it starts, so that the front end can tell a person whose agent
/// never started it (issue 16 item 7). `cli`'s `mcp` mode creates it.
pub const BRIDGE_MARK_VARIABLE: &str = "TERMSPRAWL_ACP_BRIDGE_MARK";

/// Runs `termsprawlctl acp` with parsed options and returns how it ended, as the one exit status
/// of every mode (`termsprawl_protocol::ExitStatus`, which converts into an
/// `std::process::ExitCode`; `spec/acp.md` §2.1): `OK` when a `--prompt` turn ended with
/// `end_turn` or the person ended an interactive session; `FAILED` for another stop reason, an
/// agent that exited or broke the protocol, failed authentication or an ignored cancel; `USAGE`
/// for a usage error or an agent that could not be started.
///
/// `session_file` is the session file the caller resolved from `--session` and the environment it
/// was handed (`termsprawl_transport::discovery::session_file`, the one rule); this crate never
/// reads `TERMSPRAWL_SESSION_FILE` itself.
pub fn run(options: Options, session_file: Option<PathBuf>) -> ExitStatus {
    let mut ui = ui::Ui::new();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            ui.error(&format!("cannot start the async runtime: {error}"));
            return ExitStatus::FAILED;
        }
    };
    let status = runtime.block_on(startup::run(options, session_file, ui));
    // The person's input is read by a detached thread; do not wait for it.
    runtime.shutdown_background();
    status
}
