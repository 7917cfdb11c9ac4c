//! `termsprawlctl`, the command line of the termsprawl agent tool protocol, as a library.
//!
//! This crate owns the program's two surfaces:
//! - the compatibility forms `doctor`, `call OPERATION [JSON_ARGS]` and `mcp` that the app's
//!   launch files and guides use (`spec/protocol.md` §8, module `compat`);
//! - the direct form `termsprawlctl [--session F] [--out DIR] [--progress] OP [--flag value]... [JSON | -]`,
//!   whose flags, help and usage Markdown are derived from each operation's JSON Schema
//!   (`spec/shell-conventions.md`).
//!
//! It must never speak HTTP itself (every call goes through `termsprawl_transport`), never build
//! the operation table for a compatibility `call` or `doctor`, never start an async runtime of
//! its own (a call runs on the one current-thread runtime of
//! `termsprawl_transport::long_wait::call_waiting_blocking`), and never print
//! except through the [`Streams`] a run is given. The session token never appears in its output.
//!
//! This file is only the entry and the module list. Start reading at [`run`], which assigns a
//! command line to one of the two forms. Then: `compat` for the compatibility forms (with
//! `refusal`, the startup mistakes `mcp` answers to its host); `direct` for
//! the direct form's dispatch, which reads operations through [`describe`] and parses an
//! operation's words in `operation_args`: flags scanned with `flags` (Go `flag` rules, values
//! converted by `convert`), combined with the JSON argument in `json_arg`; it prints through
//! `output` and `image`. `catalog` describes the whole table, from which `usage`, `skills` and
//! `generate` render the Markdown, skills, completions and man page. The exit statuses are
//! [`ExitStatus`], `protocol`'s, shared with the `mcp` and `acp` modes.

mod acp_command;
mod catalog;
mod compat;
mod convert;
pub mod describe;
mod direct;
mod flags;
mod generate;
mod image;
mod json_arg;
mod mode_help;
mod operation_args;
mod output;
mod quote;
mod refusal;
mod session;
mod skills;
mod streams;
mod usage;

use std::ffi::{OsStr, OsString};
use std::io::{self, IsTerminal as _};
use std::process::ExitCode;

pub use catalog::{clap_command, help_markdown, skill_documents, usage_markdown};
pub use direct::VERSION;
pub use operation_args::{OperationArgs, operation_args};
pub use refusal::MCP_MISSING_SESSION;
pub use session::{MISSING_SESSION, SESSION_ENV};
pub use streams::Streams;
pub use termsprawl_protocol::ExitStatus;

/// The program's entry point: runs the process's arguments on its own standard streams.
pub fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let session_env = std::env::var_os(SESSION_ENV);
    let mut stdin = io::stdin();
    let mut stdout = io::stdout();
    let mut stderr = io::stderr();
    let stderr_is_terminal = stderr.is_terminal();
    let mut streams =
        Streams { stdin: &mut stdin, stdout: &mut stdout, stderr: &mut stderr, stderr_is_terminal };
    run(&args, session_env.as_deref(), &mut streams)
}

/// Runs one command line (`args` without the program name); `session_env` is the value of
/// `TERMSPRAWL_SESSION_FILE`.
///
/// The `mcp` mode runs the bridge on the process's own stdin and stdout, whatever `streams` are.
pub fn run(args: &[OsString], session_env: Option<&OsStr>, streams: &mut Streams<'_>) -> ExitCode {
    let removed = session::remove_session_flag(args);
    if let Some(mode) = removed.rest.first().and_then(compat::Mode::from_word) {
        if mode == compat::Mode::Mcp && asks_mcp_for_help(&removed.rest[1..]) {
            // Help needs no session (issue 16 item 8).
            let _ = streams.write_stdout(mode_help::MCP.as_bytes());
            return ExitCode::SUCCESS;
        }
        let session = session::resolve(&removed.flag, session_env);
        return match compat::run(mode, &removed.rest, session, streams) {
            compat::Outcome::Done(status) => status.into(),
            compat::Outcome::Bridge(session, tools, max_wait_ms) => {
                acp_command::mark_bridge_started();
                termsprawl_mcp::run_stdio(&session, tools, max_wait_ms)
            }
            compat::Outcome::Refuse(refusal) => {
                streams.error_line(refusal.message());
                termsprawl_mcp::run_stdio_refusing(refusal.message(), refusal.data())
            }
        };
    }
    direct::run(args, session_env, streams).into()
}

/// Whether `mcp`'s options ask for help: a help word among them, before any `--`.
fn asks_mcp_for_help(options: &[OsString]) -> bool {
    options.iter().take_while(|word| *word != "--").any(asks_for_help)
}

/// Whether a word is `-h`, `--h`, `-help` or `--help`.
fn asks_for_help(word: &OsString) -> bool {
    matches!(word.as_encoded_bytes(), b"-h" | b"--h" | b"-help" | b"--help")
}

#[cfg(test)]
mod tests;
