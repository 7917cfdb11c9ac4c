//! The command line of `termsprawl-conformance`, in the library so that the release's man page
//! and shell completions (`cargo xtask dist`) are generated from the same definition the binary
//! parses with.

use std::path::PathBuf;

use clap::{CommandFactory as _, Parser};

use crate::Level;

/// Checks a running termsprawl tool server against the protocol, from the outside.
#[derive(Debug, Parser)]
#[command(name = "termsprawl-conformance", version)]
pub struct Cli {
    /// A session file (`D/sessions/<nodeId>.json`); a second one adds the isolation rules.
    #[arg(long, value_name = "FILE", required_unless_present = "list", num_args = 1)]
    pub session: Vec<PathBuf>,
    /// Also call mutating operations (on a terminal the run opens and closes again).
    #[arg(long)]
    pub mutating: bool,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// The conformance level checked (spec/protocol.md §10): `protocol`, what every server must
    /// do, or `strict`, that and the rules only our servers must meet.
    #[arg(long, value_enum, default_value = "protocol")]
    pub level: Level,
    /// Only the rules whose id starts with this (repeatable).
    #[arg(long, value_name = "RULE_PREFIX")]
    pub only: Vec<String>,
    /// Not the rules whose id starts with this (repeatable).
    #[arg(long, value_name = "RULE_PREFIX")]
    pub skip: Vec<String>,
    /// How long the stalled-body probe waits for the 408, in seconds (default 100: the 90 s
    /// bound of spec/protocol.md §6.3 and a margin).
    #[arg(long, value_name = "SECONDS")]
    pub stall_limit: Option<u64>,
    /// Print every rule group with its level, and exit.
    #[arg(long)]
    pub list: bool,
}

/// The command tree of [`Cli`], for the man page and completion generators.
pub fn command() -> clap::Command {
    Cli::command()
}
