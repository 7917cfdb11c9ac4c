//! Entry point of `termsprawl-conformance`: parse the command line, run the rules, print the
//! report, exit 0 only when no rule failed.
//!
//! ```text
//! termsprawl-conformance --session FILE [--session FILE2] [--mutating] [--json]
//!     [--level protocol|strict] [--only RULE_PREFIX]... [--skip RULE_PREFIX]... [--stall-limit SECONDS]
//! termsprawl-conformance --list
//! ```
//!
//! Exit status: 0 every rule passed or was skipped, 1 a rule failed, 2 usage error.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser;
use termsprawl_conformance::cli::Cli;
use termsprawl_conformance::{Options, levels, run};

fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.list {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(levels::listing().as_bytes());
        return ExitCode::SUCCESS;
    }
    if cli.session.len() > 2 {
        let _ = writeln!(
            std::io::stderr(),
            "termsprawl-conformance: error: at most two --session files"
        );
        return ExitCode::from(2);
    }
    match exec(&cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "termsprawl-conformance: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn exec(cli: &Cli) -> anyhow::Result<bool> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the I/O runtime")?;
    let mut options = Options::new(cli.session[0].clone());
    options.sessions.clone_from(&cli.session);
    options.mutating = cli.mutating;
    options.level = cli.level;
    options.only.clone_from(&cli.only);
    options.skip.clone_from(&cli.skip);
    if let Some(seconds) = cli.stall_limit {
        options.stall_limit = std::time::Duration::from_secs(seconds);
    }
    let report = runtime.block_on(run(&options));
    let text = if cli.json {
        let mut text = report.to_json().to_string();
        text.push('\n');
        text
    } else {
        report.to_text()
    };
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
            return Err(error).context("cannot write the report");
        }
        _ => {}
    }
    Ok(report.ok())
}
