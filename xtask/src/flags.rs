//! The command line of `cargo xtask`, one options struct per command, each with an `exec` method;
//! `bench`, `soak` and `demo` are handed over to the harness crate ([`Harness`]).

/// The package that runs `cargo xtask bench|soak|demo`.
pub const HARNESS: &str = "harness";

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};

use crate::{codegen, dist, fuzz, protocol_diff, test};

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
    /// Measure termsprawlctl's speed and memory against the floor program and curl, and write
    /// docs/performance.md (run by the harness crate).
    Bench(Harness),
    /// Start the headless server on a temporary data directory and show an agent using it (run
    /// by the harness crate).
    Demo(Harness),
    /// Build the release archive target/dist/termsprawl-agent-tools-<version>-<target>.tar.gz
    /// and its SHA256SUMS, then verify them and run the shipped binaries for real.
    Dist,
    /// Build the cargo-fuzz targets of fuzz/ and run each for a while.
    Fuzz(Fuzz),
    /// Run the headless server and termsprawlctl under load while killing and restarting the
    /// server, check that no call is lost or run twice, and write docs/reliability.md (run by
    /// the harness crate).
    Soak(Harness),
    /// Install the system packages and provision the pinned peers the tests need (into
    /// target/peers/, reused while their pins are unchanged), then run
    /// `cargo test --workspace --locked [ARGS]`.
    Test(Test),
}

/// Options of `cargo xtask test`.
#[derive(Debug, Args)]
pub struct Test {
    /// Passed on to `cargo test` (for example `-p termsprawl-cli --test it mcp`, or `-- NAME`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
    pub args: Vec<std::ffi::OsString>,
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

/// The arguments of a command that the harness runs (`cargo xtask bench|soak|demo`), handed
/// over as typed: `cargo run -p harness --locked -- COMMAND ARGS` (its `--help` included).
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub struct Harness {
    /// Passed on to the harness (`cargo xtask bench --help` lists them).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
    pub args: Vec<std::ffi::OsString>,
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
            Command::Bench(args) => args.exec(root, "bench"),
            Command::Demo(args) => args.exec(root, "demo"),
            Command::Dist => dist::run(root).map(|_| true),
            Command::Fuzz(fuzz) => fuzz.exec(root),
            Command::Soak(args) => args.exec(root, "soak"),
            Command::Test(test) => test::run(root, &test.args),
        }
    }
}

impl Codegen {
    /// Writes (or with `--check`, compares) the generated files.
    pub fn exec(self, root: &Path) -> anyhow::Result<bool> {
        let files = codegen::generate()?;
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

impl Harness {
    /// Runs `cargo run -p harness --locked --quiet -- COMMAND ARGS` in the repository at `root`
    /// (cargo from `CARGO`, else `cargo`); `Ok(false)` when it exits unsuccessfully (it has said
    /// why on stderr).
    pub fn exec(self, root: &Path, command: &str) -> anyhow::Result<bool> {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = std::process::Command::new(cargo)
            .current_dir(root)
            .args(["run", "-p", HARNESS, "--locked", "--quiet", "--", command])
            .args(&self.args)
            .status()
            .context("cannot run cargo run -p harness")?;
        Ok(status.success())
    }
}

#[cfg(test)]
mod tests;
