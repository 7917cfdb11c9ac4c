//! The fixtures that the tests of every crate share, written once (a dev-dependency of any crate,
//! and a dependency of `xtask` and the `harness`, whose bench server, demo and soak use them;
//! never of a published crate). This crate owns:
//! - [`cargo`]: the workspace's programs built with cargo and found through its JSON messages;
//! - [`fake`]: the fake termsprawl app, a real loopback tool server in a temp dir with a
//!   provisioned session, recorded requests and scripted answers;
//! - [`mcp`]: the envelope check of every MCP stdout line (`spec/mcp.md` §3.1, §3.8), request
//!   builders, and [`mcp::Mcp`], the driver of a real `termsprawlctl mcp` process;
//! - [`serve`]: a `termsprawl-headless serve` process started and waited for until its ready line;
//! - [`tmux`]: the guard that ends a private data directory's managed tmux server;
//! - [`xvfb`]: a private X server, and the lookup of the system programs end-to-end tests need;
//! - [`peers`]: where the pinned third-party peers (Python SDKs, npm packages) that
//!   `cargo xtask test` provisions are found;
//! - [`exit_code`]: the exit code of the workspace's command-line tools (`cargo xtask`, the
//!   harness and its helper) from their outcome.
//!
//! It must never be a normal dependency of a published crate, hide a missing program or peer (a
//! test that lacks one fails and names the command that provides it), or leave a process running
//! after its value is dropped.
//!
//! Start reading at [`fake`], then [`serve`].

pub mod cargo;
pub mod fake;
pub mod mcp;
pub mod peers;
pub mod serve;
pub mod tmux;
pub mod xvfb;

use std::ffi::OsStr;
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// The exit code of a command-line tool (`cargo xtask`, the harness and its helper) from its
/// outcome: 0 when it worked, 1 when a check failed (`Ok(false)`) or an error occurred, which is
/// printed to stderr with its causes (`{:#}`).
#[allow(clippy::print_stderr, reason = "a failed command says why on stderr")]
pub fn exit_code<E: Display>(outcome: Result<bool, E>) -> ExitCode {
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// The root of this workspace (the folder holding `Cargo.lock`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("test-support sits in the workspace")
        .to_path_buf()
}

/// The node `node_id` of a `canvas_list` value, or `null`.
pub fn canvas_node(list: &serde_json::Value, node_id: &str) -> serde_json::Value {
    list.as_array()
        .and_then(|nodes| nodes.iter().find(|node| node["nodeId"] == node_id))
        .cloned()
        .unwrap_or(serde_json::Value::Null)
}

/// The first line of `program argument…`'s stdout, when it runs and succeeds and prints one.
pub fn first_line_of(program: &OsStr, arguments: &[&str]) -> Option<String> {
    let output = Command::new(program)
        .args(arguments)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines().next().map(|line| line.trim().to_owned()).filter(|line| !line.is_empty())
}
