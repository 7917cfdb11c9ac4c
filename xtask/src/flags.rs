//! The command line of `cargo xtask`, one options struct per command, each with an `exec` method.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};

use crate::{codegen, fuzz, protocol_diff};

/// Project automation for the termsprawl workspace.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask")]
pub struct Xtask {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands of `cargo xtask`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Regenerate docs/reference/ from the protocol crate.
    Codegen(Codegen),
    /// Classify the protocol changes since a git revision and check the version bump.
    ProtocolDiff(ProtocolDiff),
    /// Build the cargo-fuzz targets of fuzz/ and run each for a while.
    Fuzz(Fuzz),
}

/// Options of `cargo xtask codegen`.
#[derive(Debug, Args)]
pub struct Codegen {
    /// Change nothing; fail with a diff when a generated file is stale, missing or extra.
    #[arg(long)]
    pub check: bool,
}

/// Options of `cargo xtask protocol-diff`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("baseline").required(true).args(["git_ref", "against_file"]))]
pub struct ProtocolDiff {
    /// The git revision whose `docs/reference/catalog.json` and `PROTOCOL_VERSION` are the
    /// baseline, for example `main` or `v1.2.0`.
    pub git_ref: Option<String>,
    /// Compare with this catalog file instead of a git revision.
    #[arg(long, value_name = "CATALOG_JSON")]
    pub against_file: Option<PathBuf>,
    /// The protocol version of `--against-file`; the current version when omitted (no bump).
    #[arg(long, value_name = "SEMVER", requires = "against_file", conflicts_with = "git_ref")]
    pub against_version: Option<String>,
}

/// Options of `cargo xtask fuzz`.
#[derive(Debug, Args)]
pub struct Fuzz {
    /// Seconds to fuzz each target.
    #[arg(long, value_name = "SECONDS", default_value_t = fuzz::DEFAULT_SECONDS)]
    pub time: u64,
    /// The sanitizer to build with: none (default, fastest) or address.
    #[arg(long, default_value = "none", value_parser = clap::builder::PossibleValuesParser::new(fuzz::SANITIZERS))]
    pub sanitizer: String,
    /// The targets to run (default: all, in a fixed order).
    #[arg(value_name = "TARGET")]
    pub targets: Vec<String>,
}

impl Xtask {
    /// Runs the command in the repository at `root`; `Ok(false)` means a check failed.
    pub fn exec(self, root: &Path) -> anyhow::Result<bool> {
        match self.command {
            Command::Codegen(codegen) => codegen.exec(root),
            Command::ProtocolDiff(protocol_diff) => protocol_diff.exec(root),
            Command::Fuzz(fuzz) => fuzz.exec(root),
        }
    }
}

impl Codegen {
    /// Writes (or with `--check`, compares) the generated files.
    pub fn exec(self, root: &Path) -> anyhow::Result<bool> {
        let files = codegen::generate();
        if self.check {
            let drifts = codegen::check(root, &files)?;
            if drifts.is_empty() {
                eprintln!("{} generated files are up to date", files.len());
                return Ok(true);
            }
            eprint!("{}", codegen::render_drifts(&drifts));
            return Ok(false);
        }
        let written = codegen::write(root, &files)?;
        for (path, action) in &written {
            eprintln!("{action} {}", path.display());
        }
        if written.is_empty() {
            eprintln!("{} generated files are up to date", files.len());
        }
        Ok(true)
    }
}

impl ProtocolDiff {
    /// Compares the baseline catalog with the crate's and prints the classified changes.
    pub fn exec(self, root: &Path) -> anyhow::Result<bool> {
        let baseline = match (&self.git_ref, &self.against_file) {
            (Some(git_ref), _) => protocol_diff::baseline_at_ref(root, git_ref)?,
            (None, Some(path)) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                let catalog = serde_json::from_str(&text)
                    .with_context(|| format!("{} is not JSON", path.display()))?;
                let version = self
                    .against_version
                    .clone()
                    .unwrap_or_else(|| termsprawl_protocol::PROTOCOL_VERSION.to_owned());
                protocol_diff::Baseline { catalog, version }
            }
            (None, None) => unreachable!("clap requires a git ref or --against-file"),
        };
        let report = protocol_diff::Report::new(
            &baseline,
            &termsprawl_protocol::catalog_json(),
            termsprawl_protocol::PROTOCOL_VERSION,
        )?;
        print!("{}", report.changes_text());
        eprint!("{}", report.summary_text());
        Ok(report.passes())
    }
}

impl Fuzz {
    /// Builds the fuzz targets and runs the selected ones, reporting executions per target.
    pub fn exec(self, root: &Path) -> anyhow::Result<bool> {
        let settings =
            fuzz::Settings { seconds: self.time, targets: self.targets, sanitizer: self.sanitizer };
        fuzz::run(root, &settings)
    }
}

#[cfg(test)]
mod tests;
