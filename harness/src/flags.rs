//! The command line of the harness (`cargo xtask bench|soak|demo` runs it as
//! `cargo run -p harness --locked -- COMMAND`), one options struct per command, each with an
//! `exec` method.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};
use termsprawl_protocol::shell::shell_word;

use crate::bench::command::Template;
use crate::{bench, demo, soak};

/// The workspace's programs run for real: measured, soaked and shown.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask")]
pub struct Harness {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands of the harness.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure termsprawlctl's speed and memory against the floor program and curl, and write
    /// docs/performance.md (the long-wait part alone takes about 45 s: its waits cross the
    /// server's 30 s turn).
    Bench(Bench),
    /// Start the headless server on a temporary data directory and show an agent using it.
    Demo,
    /// Run the headless server and termsprawlctl under load while killing and restarting the
    /// server, check that no call is lost or run twice, and write docs/reliability.md.
    Soak(Soak),
}

/// Options of `cargo xtask bench`.
#[derive(Debug, Args)]
pub struct Bench {
    /// Measured one-shot runs of each program.
    #[arg(long, default_value_t = 300, value_parser = at_least_one)]
    pub runs: usize,
    /// Unmeasured one-shot runs of each program before those.
    #[arg(long, default_value_t = 20)]
    pub warmup: usize,
    /// Measured calls of each MCP bridge run and each in-process client run (a tenth as many
    /// are made first, unmeasured).
    #[arg(long, default_value_t = 5000, value_parser = at_least_one)]
    pub calls: usize,
    /// Measured `terminal_wait` reactions on termsprawl-headless (a tenth as many are made
    /// first, unmeasured).
    #[arg(long, default_value_t = 100, value_parser = at_least_fifty)]
    pub waits: usize,
    /// Measured calls of `guide_read` and of each `terminal_read` on termsprawl-headless (a
    /// tenth as many rounds are made first, unmeasured).
    #[arg(long, default_value_t = 1000, value_parser = at_least_one)]
    pub reads: usize,
    /// Measured rounds of part 5 (many agents; each round is 64 x 4 waits pending at once; one
    /// unmeasured round is made first).
    #[arg(long, default_value_t = 5, value_parser = at_least_one)]
    pub crowd_rounds: usize,
    /// Also measure this termsprawlctl-compatible command, side by side (repeatable). Its
    /// arguments are appended, or replace a word that is exactly `{}`; see docs/performance.md.
    #[arg(long, value_name = "COMMAND")]
    pub vs: Vec<String>,
    /// Fail when termsprawlctl's median one-shot time is over 2x the floor program's, or a
    /// one-shot call of it peaks above 10 MiB RSS, or a goal of issue 26 this machine reached is
    /// missed (one-shot within 1.1x the floor and 3.0 MiB; the MCP bridge within 4.0 MiB with 32
    /// calls in flight; `terminal_read` within 2x and 1.5x
    /// `guide_read`; `terminal_wait` reaction within 2 ms median and 4 ms p95; with 256 waits of
    /// 64 agents pending, within 20 ms p50 and 100 ms p99; a chained 10-minute wait through the
    /// MCP bridge, 64 at once, within 5 ms p50 of a single wait's; `terminal_list` of 256 live
    /// terminals, 254 of them idle shells, within 5 ms p50 and 10 ms p95).
    #[arg(long)]
    pub check: bool,
    /// Print the tables only; leave docs/performance.md as it is.
    #[arg(long)]
    pub no_write: bool,
}

/// A count of at least 50: a p95 of fewer samples says little.
fn at_least_fifty(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(count) if count < 50 => {
            Err("must be at least 50, so that the p95 means something".to_owned())
        }
        Ok(count) => Ok(count),
        Err(error) => Err(error.to_string()),
    }
}

fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(count) => Ok(count),
        Err(error) => Err(error.to_string()),
    }
}

/// Options of `cargo xtask soak`.
#[derive(Debug, Args)]
pub struct Soak {
    /// Minutes of load and faults.
    #[arg(long, default_value_t = soak::DEFAULT_MINUTES, value_parser = at_least_one_u64)]
    pub minutes: u64,
    /// Seconds instead of minutes (short runs for tests).
    #[arg(long, hide = true, conflicts_with = "minutes", value_parser = at_least_one_u64)]
    pub seconds: Option<u64>,
    /// The seed of every random choice (operations, fault times, fault kinds).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Build and run the release binaries (default: debug, as the tests build them).
    #[arg(long)]
    pub release: bool,
    /// Print the summary only; leave docs/reliability.md as it is.
    #[arg(long)]
    pub no_write: bool,
    /// Use this termsprawlctl instead of building one (tests).
    #[arg(long, hide = true, requires = "headless", value_name = "PATH")]
    pub ctl: Option<PathBuf>,
    /// Use this termsprawl-headless instead of building one (tests).
    #[arg(long, hide = true, requires = "ctl", value_name = "PATH")]
    pub headless: Option<PathBuf>,
}

fn at_least_one_u64(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(count) => Ok(count),
        Err(error) => Err(error.to_string()),
    }
}

impl Harness {
    /// Runs the command in the repository at `root`; `Ok(false)` means a check failed.
    pub fn exec(self, root: &Path) -> anyhow::Result<bool> {
        match self.command {
            Command::Bench(bench) => bench.exec(root),
            Command::Demo => demo::run(root).map(|()| true),
            Command::Soak(soak) => soak.exec(root),
        }
    }
}

impl Bench {
    /// The measurement plan of these options; an error when a `--vs` command cannot be split.
    pub fn plan(&self) -> anyhow::Result<bench::Plan> {
        let mut vs = Vec::with_capacity(self.vs.len());
        for text in &self.vs {
            let template =
                Template::parse(text).with_context(|| format!("--vs {}", shell_word(text)))?;
            vs.push((text.clone(), template));
        }
        Ok(bench::Plan {
            runs: self.runs,
            warmup: self.warmup,
            calls: self.calls,
            warmup_calls: self.calls.div_ceil(10),
            vs,
            terminals: bench::terminals::Settings {
                waits: self.waits,
                warmup_waits: self.waits.div_ceil(10),
                reads: self.reads,
                warmup_reads: self.reads.div_ceil(10),
            },
            crowd: bench::crowd::Settings {
                agents: bench::crowd::AGENTS,
                rounds: self.crowd_rounds,
                warmup_rounds: 1,
            },
            chain: bench::chain::Settings { agents: bench::chain::AGENTS },
        })
    }

    /// Builds, measures, prints, writes the document and checks.
    pub fn exec(self, root: &Path) -> anyhow::Result<bool> {
        let plan = self.plan()?;
        // The command as typed after `cargo xtask`, for the document.
        let typed: Vec<String> = std::env::args_os()
            .skip(1)
            .map(|argument| shell_word(&argument.to_string_lossy()))
            .collect();
        let command = format!("cargo xtask {}", typed.join(" "));
        bench::run(root, &plan, command, self.check, !self.no_write)
    }
}

impl Soak {
    /// The settings of these options.
    pub fn settings(&self) -> soak::Settings {
        let seconds = self.seconds.unwrap_or(self.minutes.saturating_mul(60));
        let typed: Vec<String> = std::env::args_os()
            .skip(1)
            .map(|argument| shell_word(&argument.to_string_lossy()))
            .collect();
        soak::Settings {
            duration: std::time::Duration::from_secs(seconds),
            seed: self.seed,
            release: self.release,
            write: !self.no_write,
            command: format!("cargo xtask {}", typed.join(" ")),
            binaries: match (&self.ctl, &self.headless) {
                (Some(ctl), Some(headless)) => Some(crate::base::binaries::Binaries {
                    ctl: ctl.clone(),
                    headless: headless.clone(),
                }),
                _ => None,
            },
        }
    }

    /// Builds the binaries and runs the soak.
    pub fn exec(self, root: &Path) -> anyhow::Result<bool> {
        let settings = self.settings();
        soak::check_settings(&settings)?;
        soak::run(root, &settings)
    }
}

#[cfg(test)]
mod tests;
