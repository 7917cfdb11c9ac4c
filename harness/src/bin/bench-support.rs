//! `bench-support`: the helper processes of `cargo xtask bench`, built in release by it.
//!
//! - `bench-support serve DIR`: the tool server (prints the session file, serves until stdin ends);
//! - `bench-support client --session FILE --tasks N --calls N [--warmup N]`: the in-process client
//!   run, printing one JSON line;
//! - `bench-support terminals --session FILE --fifo PATH --waits N --reads N [...]`: part 4's
//!   measuring side against termsprawl-headless, printing one JSON line;
//! - `bench-support stamp FIFO`: part 4's printing side, the program of its run node;
//! - `bench-support crowd --sessions FILE --fifos DIR --ready FILE --ctl PATH --rounds N`: part
//!   5's measuring side (many agents), printing one JSON line;
//! - `bench-support ticker FIFO`: part 5's run-node program;
//! - `bench-support termsprawlctl ARGS…`: termsprawlctl's own code, so that the harness test can
//!   measure a debug build without building the `termsprawl-cli` package's binary.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The helper processes of `cargo xtask bench`.
#[derive(Debug, Parser)]
#[command(name = "bench-support")]
struct Cli {
    #[command(subcommand)]
    command: Helper,
}

#[derive(Debug, Subcommand)]
enum Helper {
    /// Serve the agent-tools directory DIR until stdin ends.
    Serve { dir: PathBuf },
    /// Measure the in-process client against a running server.
    Client {
        #[arg(long)]
        session: PathBuf,
        #[arg(long)]
        tasks: usize,
        #[arg(long)]
        calls: usize,
        #[arg(long, default_value_t = 0)]
        warmup: usize,
    },
    /// Measure `terminal_wait` reactions and `terminal_read` against termsprawl-headless.
    Terminals {
        #[arg(long)]
        session: PathBuf,
        /// The FIFO to create for the printing side.
        #[arg(long)]
        fifo: PathBuf,
        #[arg(long)]
        waits: usize,
        #[arg(long, default_value_t = 0)]
        warmup_waits: usize,
        #[arg(long)]
        reads: usize,
        #[arg(long, default_value_t = 0)]
        warmup_reads: usize,
    },
    /// Print a `CLOCK_MONOTONIC` stamp and a mark for every line of the FIFO.
    Stamp { fifo: PathBuf },
    /// Measure many agents' waits at once against termsprawl-headless.
    Crowd {
        /// A file with one session file per line.
        #[arg(long)]
        sessions: PathBuf,
        /// Where to create the tickers' FIFOs.
        #[arg(long)]
        fifos: PathBuf,
        /// Touched once every ticker runs.
        #[arg(long)]
        ready: PathBuf,
        /// The termsprawlctl of the one-shot and MCP traffic.
        #[arg(long)]
        ctl: PathBuf,
        #[arg(long)]
        rounds: usize,
        #[arg(long, default_value_t = 0)]
        warmup_rounds: usize,
    },
    /// Print a line every 50 ms and a stamp and a mark for every line of the FIFO.
    Ticker { fifo: PathBuf },
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|word| word == "termsprawlctl") {
        return termsprawlctl(&args[2..]);
    }
    let outcome = match Cli::parse().command {
        Helper::Serve { dir } => harness::bench::server::serve(&dir),
        Helper::Client { session, tasks, calls, warmup } => {
            harness::bench::client::run_and_print(&session, tasks, calls, warmup)
        }
        Helper::Terminals { session, fifo, waits, warmup_waits, reads, warmup_reads } => {
            let settings =
                harness::bench::terminals::Settings { waits, warmup_waits, reads, warmup_reads };
            harness::bench::terminals::run_and_print(&session, &fifo, &settings)
        }
        Helper::Stamp { fifo } => harness::bench::terminals::stamp(&fifo),
        Helper::Crowd { sessions, fifos, ready, ctl, rounds, warmup_rounds } => {
            // The agents are the sessions of the list.
            let settings = harness::bench::crowd::Settings { agents: 0, rounds, warmup_rounds };
            harness::bench::crowd::run_and_print(&sessions, &fifos, &ready, &ctl, &settings)
        }
        Helper::Ticker { fifo } => harness::bench::crowd::ticker(&fifo),
    };
    termsprawl_test_support::exit_code(outcome.map(|()| true))
}

fn termsprawlctl(args: &[OsString]) -> ExitCode {
    let session_env = std::env::var_os(termsprawl_cli::SESSION_ENV);
    let (mut stdin, mut stdout, mut stderr) =
        (std::io::stdin(), std::io::stdout(), std::io::stderr());
    let mut streams = termsprawl_cli::Streams {
        stdin: &mut stdin,
        stdout: &mut stdout,
        stderr: &mut stderr,
        stderr_is_terminal: false,
    };
    termsprawl_cli::run(args, session_env.as_deref(), &mut streams)
}
