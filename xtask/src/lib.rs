//! Project automation for the termsprawl workspace, reached as `cargo xtask <command>`.
//!
//! This crate owns
//! - `codegen` ([`codegen`]): the generated files of `docs/reference/`, derived from the
//!   `termsprawl-protocol` crate, with a `--check` mode that a test runs on every `cargo test`;
//! - `protocol-diff` ([`protocol_diff`]): the classification of operation-table changes against a
//!   git revision, and the rule that a breaking change needs a major bump of `PROTOCOL_VERSION`;
//! - `dist` ([`dist`]): the release archive (static programs, man pages, completions, README,
//!   LICENSE) and its `SHA256SUMS`, verified and its programs run against each other;
//! - `fuzz` ([`fuzz`]): builds the cargo-fuzz targets of `fuzz/` (a workspace of its own) and runs
//!   each for a while, reporting executions per target;
//! - `test` ([`test`]): the README's test command: the system packages and the pinned third-party
//!   peers the tests need (provisioned into `target/peers/`, keyed by their pins), then
//!   `cargo test --workspace --locked`;
//! - the tidy checks ([`tidy`]), which are ordinary `#[test]`s over the source tree and
//!   `cargo metadata`;
//! - the hand-over of `bench`, `soak` and `demo` to the `harness` crate ([`flags::Harness`]:
//!   `cargo run -p harness --locked -- COMMAND`), which runs the programs for real.
//!
//! It must never be a dependency of another crate, nor depend on a server or frontend crate
//! (`headless`, `acp`, `mcp`, `cli`: codegen runs `termsprawlctl usage` as a program, and the
//! harness holds what runs them), and it does not wrap `cargo fmt` or `clippy` (plain cargo
//! commands); `cargo xtask test` adds only provisioning before a plain `cargo test`.
//! Printing is this crate's job, so the print lints are allowed here once, for the whole crate.
//!
//! Start reading at [`flags`] (the command line), then [`codegen::generate`] and
//! [`protocol_diff::classify`].
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "xtask is a command-line tool: reporting to the terminal is its job"
)]
#![allow(
    clippy::format_push_string,
    reason = "the generators and reports build text; `write!` into a String needs an ignored Result"
)]

pub mod codegen;
pub mod dist;
pub mod flags;
pub mod fuzz;
pub mod protocol_diff;
pub mod test;
pub mod tidy;

use std::path::PathBuf;
use std::process::ExitCode;

/// Runs one command and turns its outcome into the process exit code
/// (`termsprawl_test_support::exit_code`: 0 on success, 1 when a check failed or an error
/// occurred, the error printed to stderr).
pub fn run(xtask: flags::Xtask) -> ExitCode {
    termsprawl_test_support::exit_code(xtask.exec(&project_root()))
}

/// The repository root (`termsprawl_test_support::workspace_root`, the one owner).
pub fn project_root() -> PathBuf {
    termsprawl_test_support::workspace_root()
}
