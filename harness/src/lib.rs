//! The harness of the workspace's programs as they run for real, reached as `cargo xtask bench`,
//! `cargo xtask soak` and `cargo xtask demo` (xtask hands these over to this crate's binary,
//! `cargo run -p harness --locked -- COMMAND`), so that xtask itself depends on no server crate.
//!
//! This crate owns
//! - [`base`]: what every part stands on: the programs built ([`base::binaries`]), the places of
//!   a run and a `termsprawl-headless serve` in them ([`base::server`]), the machine table
//!   ([`base::machine`]), a child waited for until a deadline ([`base::wait_child`]);
//! - `bench` ([`bench`]): measured speed and memory of `termsprawlctl` against the physical floor
//!   of its task, written to `docs/performance.md`, with the `bench-support` binary (tool server,
//!   in-process client and the measuring sides against headless) that it builds in release;
//! - `demo` ([`demo`]): a scripted tour of the headless server, an agent and the MCP bridge;
//! - `soak` ([`soak`]): the headless server and `termsprawlctl` (one-shot and MCP bridges) under
//!   load while the server is killed and restarted and its endpoint file torn, with every call
//!   matched against the server's execution log; figures written to `docs/reliability.md`;
//! - the end-to-end test of every operation through the real binaries (`tests/it`).
//!
//! It must never be a dependency of another crate nor published, and it must never assert on
//! time: the bench reports figures and `--check` compares them with the goals. Printing is this
//! crate's job, so the print lints are allowed here once, for the whole crate.
//!
//! Start reading at [`flags`] (the command line), then [`base`], [`bench::run`] and [`soak::run`].
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the harness is a command-line tool: reporting to the terminal is its job"
)]
#![allow(
    clippy::format_push_string,
    reason = "the reports build text; `write!` into a String needs an ignored Result"
)]

pub mod base;
pub mod bench;
pub mod demo;
pub mod flags;
pub mod soak;

use std::path::PathBuf;
use std::process::ExitCode;

/// Runs one command and turns its outcome into the process exit code
/// (`termsprawl_test_support::exit_code`: 0 on success, 1 when a check failed or an error
/// occurred, the error printed to stderr).
pub fn run(harness: flags::Harness) -> ExitCode {
    termsprawl_test_support::exit_code(harness.exec(&project_root()))
}

/// The repository root (`termsprawl_test_support::workspace_root`, the one owner).
pub fn project_root() -> PathBuf {
    termsprawl_test_support::workspace_root()
}
