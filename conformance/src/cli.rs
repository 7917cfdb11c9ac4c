//! The command line of `termsprawl-conformance`, in the library so that the release's man page
//! and shell completions (`cargo xtask dist`) are generated from the same definition the binary
//! parses with.

use std::path::PathBuf;

use clap::{CommandFactory as _, Parser};

/// Checks a running termsprawl tool server against the protocol, from the outside.
#[derive(Debug, Parser)]
#[command(name = "termsprawl-conformance", version)]
pub struct Cli {
    /// A session file (`D/sessions/<nodeId>.json`); a second one adds the isolation rules.
    #[arg(long, value_name = "FILE", required = true, num_args = 1)]
    pub session: Vec<PathBuf>,
    /// Also call mutating operations (on a terminal the run opens and closes again).
    #[arg(long)]
    pub mutating: bool,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// The command tree of [`Cli`], for the man page and completion generators.
pub fn command() -> clap::Command {
    Cli::command()
}
