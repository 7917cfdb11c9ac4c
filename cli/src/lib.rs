//! `termsprawlctl`, the command line of the termsprawl agent tool protocol, as a library.
//!
//! This crate owns the program's two surfaces:
//! - the compatibility forms `doctor`, `call OPERATION [JSON_ARGS]` and `mcp` that the app's
//!   launch files and guides use (`spec/protocol.md` §8, module `compat`);
//! - the direct form `termsprawlctl [--session F] [--out DIR] OP [--flag value]... [JSON | -]`,
//!   whose flags, help and usage Markdown are derived from each operation's JSON Schema
//!   (`spec/shell-conventions.md`).
//!
//! It must never speak HTTP itself (every call goes through `termsprawl_transport`), never build
//! the operation table for a compatibility `call` or `doctor`, never start an async runtime of
//! its own (a call runs on the one current-thread runtime of `call_blocking`), and never print
//! except through the [`Streams`] a run is given. The session token never appears in its output.
//!
//! Start reading at [`run`], which assigns a command line to one of the two forms. Then:
//! `compat` for the compatibility forms; `direct` for the direct form's dispatch, which reads
//! operations through [`describe`], scans flags with `flags` (Go `flag` rules, values converted
//! by `convert`), combines them with the JSON argument in `json_arg`, and prints through `output`
//! and `image`; `usage`, `skills` and `generate` render the Markdown, skills, completions and man
//! page from the same descriptions; `exit` holds the exit statuses.

mod acp_command;
mod compat;
mod convert;
pub mod describe;
mod direct;
mod exit;
mod flags;
mod generate;
mod image;
mod json_arg;
mod mode_help;
mod output;
mod quote;
mod session;
mod skills;
mod streams;
mod usage;

use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::process::ExitCode;

use describe::Command;

pub use exit::ExitStatus;
pub use session::{MISSING_SESSION, SESSION_ENV};
pub use streams::Streams;

/// The program's entry point: runs the process's arguments on its own standard streams.
pub fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let session_env = std::env::var_os(SESSION_ENV);
    let mut stdin = io::stdin();
    let mut stdout = io::stdout();
    let mut stderr = io::stderr();
    let mut streams = Streams { stdin: &mut stdin, stdout: &mut stdout, stderr: &mut stderr };
    run(&args, session_env.as_deref(), &mut streams)
}

/// Runs one command line (`args` without the program name); `session_env` is the value of
/// `TERMSPRAWL_SESSION_FILE`.
///
/// The `mcp` mode runs the bridge on the process's own stdin and stdout, whatever `streams` are.
pub fn run(args: &[OsString], session_env: Option<&OsStr>, streams: &mut Streams<'_>) -> ExitCode {
    let removed = session::remove_session_flag(args);
    if let Some(mode) = removed.rest.first().and_then(compat::Mode::from_word) {
        if mode == compat::Mode::Mcp && removed.rest.get(1).is_some_and(asks_for_help) {
            // Help needs no session (issue 16 item 8).
            let _ = streams.write_stdout(mode_help::MCP.as_bytes());
            return ExitCode::SUCCESS;
        }
        let session = session::resolve(&removed.flag, session_env);
        return match compat::run(mode, &removed.rest, session, streams) {
            Ok(status) => status.into(),
            Err(compat::McpRequested(session)) => {
                acp_command::mark_bridge_started();
                termsprawl_mcp::run_stdio(&session)
            }
        };
    }
    direct::run(args, session_env, streams).into()
}

/// Whether a word is `-h`, `--h`, `-help` or `--help`.
fn asks_for_help(word: &OsString) -> bool {
    matches!(word.as_encoded_bytes(), b"-h" | b"--h" | b"-help" | b"--help")
}

/// What the words after an operation's name ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperationArgs {
    /// `-h` or `--help` (no flag has that name): print the operation's help.
    Help,
    /// The `args` JSON text the call sends: the JSON argument byte for byte when there are no
    /// flags, the merged object when there are, `{}` when there is neither.
    Args(String),
}

/// Parses the words after an operation's name the way the direct form does (flags, then at most
/// one JSON argument or `-` for `stdin`; `spec/shell-conventions.md` §3 – §5) without calling
/// anything: the `args` that `termsprawlctl OPERATION WORDS...` would send, or its usage error
/// (the message after `termsprawlctl: OPERATION: `). `stdin` is read only for `-`.
pub fn operation_args(
    operation: &str,
    words: &[OsString],
    stdin: &mut dyn Read,
) -> Result<OperationArgs, String> {
    let Some(operation) = termsprawl_protocol::operation(operation) else {
        return Err(format!("unknown command {}", quote::go_quote(operation.as_bytes())));
    };
    parse_operation(&Command::from_operation(operation), words, stdin)
}

/// [`operation_args`] for a described command; the direct form's one parsing path.
fn parse_operation(
    command: &Command,
    words: &[OsString],
    stdin: &mut dyn Read,
) -> Result<OperationArgs, String> {
    let (flags, positionals) = match flags::scan_operation(command, words)? {
        flags::Scanned::Help => return Ok(OperationArgs::Help),
        flags::Scanned::Args(flags, positionals) => (flags, positionals),
    };
    Ok(OperationArgs::Args(
        match json_arg::build_args(command.name(), &flags, positionals, stdin)? {
            json_arg::Args::Empty => "{}".to_owned(),
            json_arg::Args::Raw(text) | json_arg::Args::Merged(text) => text,
        },
    ))
}

/// The program's version, as `--version` prints it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The whole usage Markdown of `termsprawlctl usage`: the Calling section, then one section per
/// operation in table order (`spec/shell-conventions.md` §7). `cargo xtask codegen` writes it
/// into `docs/reference/`.
pub fn usage_markdown() -> String {
    usage::usage(&catalog())
}

/// The help of `termsprawlctl help`: the Calling section, an index of the operations and the
/// program's own commands.
pub fn help_markdown() -> String {
    usage::help(&catalog())
}

/// The skills of `termsprawlctl skills`, as (directory name, `SKILL.md` content) per guide topic.
pub fn skill_documents() -> Vec<(String, String)> {
    skills::skill_documents(&catalog())
}

/// The `clap` command tree that the completion scripts and the man page are generated from
/// (never used to parse).
pub fn clap_command() -> clap::Command {
    generate::clap_command(&catalog())
}

/// Every operation of the table, described as a command.
fn catalog() -> Vec<Command> {
    termsprawl_protocol::operations().iter().map(Command::from_operation).collect()
}

#[cfg(test)]
mod tests;
